package dpconfig

import (
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// encoder is where the generated encoders (objects_gen.go) append JSON; err
// keeps the first value that cannot be written.
type encoder struct {
	b   []byte
	err error
}

// str appends s as a JSON string. Names and devargs are plain ASCII, so
// only a string that needs escaping takes encoding/json's path.
func (e *encoder) str(s string) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			q, _ := json.Marshal(s)
			e.b = append(e.b, q...)
			return
		}
	}
	e.b = append(e.b, '"')
	e.b = append(e.b, s...)
	e.b = append(e.b, '"')
}

// vlan appends v as a number or "untagged"; an invalid VLAN is an error so
// that a bad value never reaches the datapath or etcd.
func (e *encoder) vlan(v VLAN) {
	switch {
	case !v.Valid():
		if e.err == nil {
			e.err = fmt.Errorf("vlan %d: want 1..4094 or untagged", uint16(v))
		}
		e.b = append(e.b, "null"...)
	case v == Untagged:
		e.b = append(e.b, `"`+untaggedJSON+`"`...)
	default:
		e.b = strconv.AppendUint(e.b, uint64(v), 10)
	}
}

// encodable is a pointer to an object with a generated encoder.
type encodable[T any] interface {
	*T
	encode(e *encoder)
}

// objects appends xs as a JSON array of their encodings.
func objects[T any, P encodable[T]](e *encoder, xs []T) {
	e.b = append(e.b, '[')
	for i := range xs {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		P(&xs[i]).encode(e)
	}
	e.b = append(e.b, ']')
}

// ints appends xs as a JSON array of numbers.
func ints[T ~uint8 | ~uint16 | ~uint32 | ~int16](e *encoder, xs []T) {
	e.b = append(e.b, '[')
	for i, x := range xs {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.b = strconv.AppendInt(e.b, int64(x), 10)
	}
	e.b = append(e.b, ']')
}

// strs appends xs as a JSON array of strings.
func (e *encoder) strs(xs []string) {
	e.b = append(e.b, '[')
	for i, x := range xs {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.str(x)
	}
	e.b = append(e.b, ']')
}

// marshal is every generated MarshalJSON.
func marshal(x interface{ encode(e *encoder) }) ([]byte, error) {
	var e encoder
	x.encode(&e)
	return e.b, e.err
}
