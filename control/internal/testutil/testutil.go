// Package testutil holds what the packages' table-driven tests share.
package testutil

import (
	"strings"
	"testing"
)

// WantErr checks err against want, a part of the message a case expects
// ("" when it expects none), failing the test on a mismatch. It says
// whether the case expected an error and so ends here.
func WantErr(t testing.TB, err error, want string) bool {
	t.Helper()
	if want != "" {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("err %v, want %q", err, want)
		}
		return true
	}
	if err != nil {
		t.Fatal(err)
	}
	return false
}
