package dpconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// VLAN is a circuit's service-delimiting VLAN: 1..4094, or Untagged for a
// whole untagged port. On the wire (the datapath's API, etcd, the
// controller's API) it is a JSON number or the string "untagged"
// (docs/control-api.md); the zero value is not a valid VLAN, so a circuit
// whose VLAN was never set is refused rather than taken as untagged. It is
// the one VLAN type of the Go code.
type VLAN uint16

// Untagged is the VLAN of a circuit that is a whole untagged port. Its
// number is the datapath's own (E3_VLAN_UNTAGGED in node.h), outside 1..4094.
const Untagged VLAN = 4096

const untaggedJSON = "untagged"

// Valid reports whether v is 1..4094 or Untagged.
func (v VLAN) Valid() bool { return (v >= 1 && v <= 4094) || v == Untagged }

func (v VLAN) String() string {
	if v == Untagged {
		return untaggedJSON
	}
	return strconv.Itoa(int(v))
}

// MarshalJSON writes a number, or "untagged"; an invalid VLAN is an error.
func (v VLAN) MarshalJSON() ([]byte, error) {
	var e encoder
	e.vlan(v)
	return e.b, e.err
}

// UnmarshalJSON takes a number 1..4094 or the string "untagged".
func (v *VLAN) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return fmt.Errorf("vlan: %w", err)
		}
		if s != untaggedJSON {
			return fmt.Errorf("vlan %q: want 1..4094 or %q", s, untaggedJSON)
		}
		*v = Untagged
		return nil
	}
	var n int64
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("vlan %s: want 1..4094 or %q", b, untaggedJSON)
	}
	if n < 1 || n > 4094 {
		return fmt.Errorf("vlan %d: want 1..4094 or %q", n, untaggedJSON)
	}
	*v = VLAN(n)
	return nil
}

// ParseVLAN reads a VLAN as people write it (the CLI, topology files):
// 1..4094 as a number or decimal string, or "untagged"; nothing (nil or "")
// is untagged.
func ParseVLAN(x any) (VLAN, error) {
	switch t := x.(type) {
	case nil:
		return Untagged, nil
	case float64:
		if t != float64(int(t)) || t < 1 || t > 4094 {
			return 0, fmt.Errorf("vlan %v out of range 1..4094", t)
		}
		return VLAN(t), nil
	case int:
		return ParseVLAN(float64(t))
	case string:
		if t == untaggedJSON || t == "" {
			return Untagged, nil
		}
		n, err := strconv.Atoi(t)
		if err != nil {
			return 0, fmt.Errorf("vlan %q: want 1..4094 or %q", t, untaggedJSON)
		}
		return ParseVLAN(float64(n))
	default:
		return 0, fmt.Errorf("vlan %v: want 1..4094 or %q", x, untaggedJSON)
	}
}

// JSONSchema is a VLAN's JSON Schema (the API's document): 1..4094 or "untagged".
func (VLAN) JSONSchema() map[string]any {
	return map[string]any{"anyOf": []any{
		map[string]any{"type": "integer", "minimum": 1, "maximum": 4094},
		map[string]any{"const": untaggedJSON},
	}}
}
