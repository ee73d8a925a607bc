// Package httpguard holds what every HTTP listener of the control plane
// uses against its clients: a cap on open connections (ConnGuard) and the
// bearer token check.
package httpguard

import (
	"crypto/subtle"
	"net/http"
	"strings"
)

// BearerToken is the token of r's Authorization header, if its scheme is
// Bearer (in any case: RFC 9110 section 11.1).
func BearerToken(r *http.Request) (string, bool) {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimLeft(tok, " "), true
}

// Equal compares a token in constant time; an empty want matches nothing.
func Equal(tok, want string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(want)) == 1
}
