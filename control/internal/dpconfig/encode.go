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
