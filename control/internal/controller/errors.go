package controller

import (
	"errors"
	"fmt"
)

// Kind classifies an error for the API (which maps it to an HTTP status).
type Kind string

// Error kinds.
const (
	KindInvalid    Kind = "invalid"    // bad input
	KindNotFound   Kind = "not_found"  // no such service, node, link
	KindConflict   Kind = "conflict"   // already exists, VLAN in use
	KindUnroutable Kind = "no_path"    // circuits not connected
	KindExhausted  Kind = "exhausted"  // a node's label (or other id) space is full
	KindNotLeader  Kind = "not_leader" // this replica does not write
	KindInternal   Kind = "internal"   // etcd or a bug
)

// Error is an error with a kind.
type Error struct {
	Kind Kind
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

func errorf(k Kind, format string, a ...any) error {
	return &Error{Kind: k, Msg: fmt.Sprintf(format, a...)}
}

// KindOf returns err's kind (internal if it has none).
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindInternal
}
