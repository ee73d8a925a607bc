package controller

import (
	"errors"
	"fmt"
)

// Kind classifies an error for the API (which maps it to an HTTP status).
type Kind string

// Error kinds.
const (
	KindInvalid     Kind = "invalid"      // bad input
	KindNotFound    Kind = "not_found"    // no such service, node, link
	KindConflict    Kind = "conflict"     // already exists, VLAN in use
	KindUnroutable  Kind = "no_path"      // circuits not connected
	KindExhausted   Kind = "exhausted"    // a node's label (or other id) space is full
	KindNoBandwidth Kind = "no_bandwidth" // a reservation does not fit
	KindQuota       Kind = "quota"        // outside its tenant's ports or quota
	KindNotLeader   Kind = "not_leader"   // this replica does not write
	KindInternal    Kind = "internal"     // etcd or a bug
)

// Error is an error with a kind, and the field of the request it is about
// (a path such as services[2].circuits[0], or "").
type Error struct {
	Kind  Kind
	Msg   string
	Field string
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

// FieldOf returns the request field err is about ("" if none).
func FieldOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Field
	}
	return ""
}

// atField is err (its kind kept, invalid if it has none) about field.
func atField(field string, err error) error {
	var e *Error
	if errors.As(err, &e) {
		return &Error{Kind: e.Kind, Msg: e.Msg, Field: field}
	}
	return &Error{Kind: KindInvalid, Msg: err.Error(), Field: field}
}
