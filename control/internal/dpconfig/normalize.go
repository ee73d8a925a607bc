package dpconfig

import (
	"cmp"
	"net"
	"reflect"
	"slices"
	"strings"
)

// The datapath's defaults (schema_gen.go) are what Normalize fills in, so
// that a desired config that leaves a field out compares equal to the
// datapath's dump, which always reports the value in force.

// DefaultSettings are the settings of a freshly started datapath.
func DefaultSettings() Settings {
	return Settings{TTL: DefaultTTL, ControlWord: DefaultControlWord,
		MACAgingS: DefaultMACAgingS, MACLimit: DefaultMACLimit,
		MACMoveLimit: DefaultMACMoves, MACMoveWindowS: DefaultMACMoveWinS}
}

// Normalize returns the canonical form of s. The all-zero Settings (a
// config that does not mention settings) means the datapath defaults; in
// a non-zero Settings only TTL, MACLimit and MACMoveWindowS have a zero
// that means "default", since mac_aging_s 0 (never age), mac_move_limit 0
// (no damping) and control_word false are real choices.
func (s Settings) Normalize() Settings {
	if s == (Settings{}) {
		return DefaultSettings()
	}
	if s.TTL == 0 {
		s.TTL = DefaultTTL
	}
	if s.MACLimit == 0 {
		s.MACLimit = DefaultMACLimit
	}
	if s.MACMoveWindowS == 0 {
		s.MACMoveWindowS = DefaultMACMoveWinS
	}
	return s
}

// Normalize fills the per-kind MTU and the queue count defaults and writes
// the MAC in lower case. An empty MAC stays empty: it means "the device's
// own", which only the datapath knows (config_dump reports the MAC in use).
func (p Port) Normalize() Port {
	if p.MTU == 0 {
		switch p.Kind {
		case KindCustomer:
			p.MTU = DefaultMTUCustomer
		case KindFabric:
			p.MTU = DefaultMTUFabric
		}
	}
	if p.RxQueues == 0 {
		p.RxQueues = DefaultRxQueues
	}
	p.MAC = normMAC(p.MAC)
	return p
}

// Normalize writes the MAC in lower case.
func (n Nexthop) Normalize() Nexthop {
	n.MAC = normMAC(n.MAC)
	return n
}

// Normalize keeps only the fields of n's form; the result shares no memory with n.
func (n NHLFE) Normalize() NHLFE {
	if n.Protect != nil {
		p := *n.Protect
		return NHLFE{ID: n.ID, Protect: &p}
	}
	return n
}

// Normalize keeps the members' order: a flow's member is picked by index.
func (e ECMP) Normalize() ECMP {
	return ECMP{ID: e.ID, Members: slices.Clone(e.Members)}
}

// Normalize fills the datapath's timer defaults.
func (b BFD) Normalize() BFD {
	if b.TxMS == 0 {
		b.TxMS = DefaultBFDTxMS
	}
	if b.RxMS == 0 {
		b.RxMS = DefaultBFDRxMS
	}
	if b.Multiplier == 0 {
		b.Multiplier = DefaultBFDMult
	}
	w := DefaultBFDWTRS
	if b.WTRS != nil {
		w = *b.WTRS
	}
	b.WTRS = &w
	return b
}

// Normalize keeps only the fields the service's type uses, and sorts
// remotes and branches: they are sets, and the datapath may list them in
// any order. The result shares no memory with s.
func (s Service) Normalize() Service {
	switch s.Type {
	case ServiceELine:
		s.MACLimit, s.Remotes = 0, nil
		s.NHLFE = clonePtr(s.NHLFE)
		s.Branches = sortedClone(s.Branches, cmp.Compare[uint32])
	case ServiceELAN:
		s.NHLFE = nil
		s.Remotes = sortedClone(s.Remotes, func(a, b Remote) int {
			return cmp.Or(cmp.Compare(a.Source, b.Source), cmp.Compare(a.NHLFE, b.NHLFE))
		})
		s.Branches = sortedClone(s.Branches, cmp.Compare[uint32])
	default: // unknown type: leave for validation to reject, but copy
		s.NHLFE = clonePtr(s.NHLFE)
		s.Remotes = slices.Clone(s.Remotes)
		s.Branches = slices.Clone(s.Branches)
	}
	return s
}

// Normalize returns c; see NHLFE.Normalize.
// Normalize makes an empty peer list nil (the datapath dumps none as none).
func (c Circuit) Normalize() Circuit {
	if len(c.Peers) == 0 {
		c.Peers = nil
	}
	return c
}

// Normalize keeps only the fields the entry's type uses and sorts the
// branches of a REPLICATE entry. The result shares no memory with l.
func (l Label) Normalize() Label {
	out := Label{Label: l.Label, Type: l.Type, InPorts: sortedClone(l.InPorts, strings.Compare)}
	switch l.Type {
	case LabelSwap:
		out.NHLFE = clonePtr(l.NHLFE)
	case LabelELine:
		out.Service = clonePtr(l.Service)
	case LabelELAN:
		out.Service, out.Source = clonePtr(l.Service), clonePtr(l.Source)
	case LabelReplicate:
		out.Service, out.Source = clonePtr(l.Service), clonePtr(l.Source)
		out.RPFPort = l.RPFPort
		out.Branches = sortedClone(l.Branches, cmp.Compare[uint32])
	case LabelOAM:
		out.Session = clonePtr(l.Session)
	default:
		out = l
		out.NHLFE, out.Service, out.Source = clonePtr(l.NHLFE), clonePtr(l.Service), clonePtr(l.Source)
		out.Session = clonePtr(l.Session)
		out.Branches = slices.Clone(l.Branches)
	}
	return out
}

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

// Equal reports whether two objects are the same once normalised.
func (s Settings) Equal(o Settings) bool { return s.Normalize() == o.Normalize() }
func (p Port) Equal(o Port) bool         { return reflect.DeepEqual(p.Normalize(), o.Normalize()) }
func (n Nexthop) Equal(o Nexthop) bool   { return n.Normalize() == o.Normalize() }
func (n NHLFE) Equal(o NHLFE) bool       { return reflect.DeepEqual(n.Normalize(), o.Normalize()) }
func (e ECMP) Equal(o ECMP) bool         { return slices.Equal(e.Members, o.Members) && e.ID == o.ID }
func (b BFD) Equal(o BFD) bool           { return reflect.DeepEqual(b.Normalize(), o.Normalize()) }
func (c Circuit) Equal(o Circuit) bool   { return reflect.DeepEqual(c.Normalize(), o.Normalize()) }
func (s Service) Equal(o Service) bool {
	return reflect.DeepEqual(s.Normalize(), o.Normalize())
}
func (l Label) Equal(o Label) bool { return reflect.DeepEqual(l.Normalize(), o.Normalize()) }

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
