package dpconfig

import (
	"net"
	"reflect"
	"slices"
)

// The canonical forms: each object's Normalize (normalize_gen.go, from
// datapath/api/schema.yaml) fills in the datapath's defaults, drops what
// its form does not have, writes MACs in lower case and sorts sets, so
// that a desired config that leaves a field out compares equal to the
// datapath's dump, which always reports the value in force. The all-zero
// Settings (a config that does not mention settings) means the defaults;
// in other Settings only the fields whose 0 is out of range take theirs
// (mac_aging_s 0 and mac_move_limit 0 are real choices). An empty port
// MAC stays empty: it means "the device's own", which only the datapath
// knows (config_dump reports the MAC in use).

// Normalize returns the canonical form of a whole config: version set,
// every object normalised, every list sorted by its key and never nil (so
// it marshals as [] rather than null). Two configs that program the same
// datapath state have equal canonical forms, except for ports whose MAC is
// left to the device (see Port.Normalize).
func (c Config) Normalize() Config {
	out := Config{Version: c.Version, Settings: c.Settings.Normalize()}
	if out.Version == 0 {
		out.Version = Version
	}
	c.normalizeLists(&out)
	return out
}

// Equal reports whether a and b are the same config once normalised.
func (c Config) Equal(o Config) bool { return reflect.DeepEqual(c.Normalize(), o.Normalize()) }

type normalizer[T any] interface{ Normalize() T }

func normList[T normalizer[T]](in []T, cmpFn func(a, b T) int) []T {
	out := make([]T, 0, len(in))
	for _, x := range in {
		out = append(out, x.Normalize())
	}
	slices.SortStableFunc(out, cmpFn)
	return out
}

// sortedClone returns a sorted copy of in, nil when in is empty (the
// fields it is used for are omitempty, so nil and empty are the same).
func sortedClone[T any](in []T, cmpFn func(a, b T) int) []T {
	if len(in) == 0 {
		return nil
	}
	out := slices.Clone(in)
	slices.SortFunc(out, cmpFn)
	return out
}

// cloneOrNil returns a copy of in, nil when in is empty.
func cloneOrNil[T any](in []T) []T {
	if len(in) == 0 {
		return nil
	}
	return slices.Clone(in)
}

// orDefault returns a copy of *p, or of d when p is nil.
func orDefault[T any](p *T, d T) *T {
	if p != nil {
		d = *p
	}
	return &d
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// normMAC writes a MAC as lower-case colon-separated hex; a string that is
// not a MAC is returned unchanged for validation to report.
func normMAC(s string) string {
	if s == "" {
		return ""
	}
	hw, err := net.ParseMAC(s)
	if err != nil || len(hw) != 6 {
		return s
	}
	return hw.String()
}
