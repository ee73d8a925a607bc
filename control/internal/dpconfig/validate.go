package dpconfig

import (
	"errors"
	"fmt"
	"net"
)

// Validate checks that c is a config one datapath can hold: known kinds
// and types, unique keys, in-range values and every reference resolving
// inside c. It reports every problem it finds, joined, so a bad desired
// config is refused whole before anything is sent to the datapath.
//
// Each object's params are checked against the schema by its generated
// checkParams (checks_gen.go); what follows here is what the schema does
// not say: keys listed twice, references, and each form's rules.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	check := func(what string, x interface{ checkParams(func(string, ...any)) }) {
		x.checkParams(func(format string, a ...any) { bad(what+": "+format, a...) })
	}
	// listed names object kind id and adds id to set: an id met before
	// is listed twice.
	listed := func(set map[uint32]bool, kind string, id uint32) string {
		what := fmt.Sprintf("%s %d", kind, id)
		if set[id] {
			bad("%s: listed twice", what)
		}
		set[id] = true
		return what
	}

	if c.Version != 0 && c.Version != Version {
		bad("version %d: this agent understands %d", c.Version, Version)
	}
	s := c.Settings.Normalize()
	check("settings", &s)

	ports := map[string]Port{}
	for _, p := range c.Ports {
		check("port "+p.Name, &p)
		if _, dup := ports[p.Name]; dup {
			bad("port %s: listed twice", p.Name)
		}
		ports[p.Name] = p
	}
	fabricPort := func(what, name string) {
		if p, ok := ports[name]; !ok {
			bad("%s: port %q does not exist", what, name)
		} else if p.Kind != KindFabric {
			bad("%s: port %q is not a fabric port", what, name)
		}
	}

	nexthops := map[uint32]bool{}
	for _, n := range c.Nexthops {
		what := listed(nexthops, "nexthop", n.ID)
		check(what, &n)
		fabricPort(what, n.Port)
	}

	sessions := map[uint32]bool{}
	sessionPort := map[string]uint32{}
	for _, b := range c.BFD {
		what := listed(sessions, "bfd", b.ID)
		check(what, &b)
		if !nexthops[b.Nexthop] {
			bad("%s: nexthop %d does not exist", what, b.Nexthop)
		}
		for _, nh := range c.Nexthops {
			if b.Label != 0 || nh.ID != b.Nexthop { // path sessions share ports
				continue
			}
			if other, dup := sessionPort[nh.Port]; dup {
				bad("%s: port %s already has bfd %d", what, nh.Port, other)
			}
			sessionPort[nh.Port] = b.ID
		}
	}

	nhlfes := map[uint32]bool{}
	plain := map[uint32]bool{}
	for _, n := range c.NHLFEs {
		what := listed(nhlfes, "nhlfe", n.ID)
		check(what, &n)
		if n.Protect == nil {
			plain[n.ID] = true
		}
	}
	for _, n := range c.NHLFEs {
		what := fmt.Sprintf("nhlfe %d", n.ID)
		if p := n.Protect; p != nil {
			for _, x := range []struct {
				role string
				id   uint32
			}{{"primary", p.Primary}, {"backup", p.Backup}} {
				if !plain[x.id] || x.id == n.ID {
					bad("%s: %s %d is not a plain nhlfe of this config", what, x.role, x.id)
				}
			}
			continue
		}
		if !nexthops[n.Nexthop] {
			bad("%s: nexthop %d does not exist", what, n.Nexthop)
		}
	}
	groups := map[uint32]bool{}
	for _, e := range c.ECMPs {
		what := fmt.Sprintf("ecmp %d", e.ID)
		if nhlfes[e.ID] || groups[e.ID] {
			bad("%s: its id is listed twice", what)
		}
		groups[e.ID] = true
		check(what, &e)
		for _, m := range e.Members {
			if !nhlfes[m] {
				bad("%s: member %d is not a plain or protected nhlfe of this config", what, m)
			}
		}
	}
	for id := range groups {
		nhlfes[id] = true
	}
	nhlfeRef := func(what string, id uint32) {
		if !nhlfes[id] {
			bad("%s: nhlfe %d does not exist", what, id)
		}
	}

	services := map[uint32]bool{}
	for _, s := range c.Services {
		what := listed(services, "service", s.ID)
		check(what, &s)
		switch s.Type {
		case ServiceELine:
			if s.NHLFE != nil {
				nhlfeRef(what, *s.NHLFE)
			}
			for _, b := range s.Branches {
				nhlfeRef(what+" branch", b)
			}
		case ServiceELAN:
			for _, r := range s.Remotes {
				nhlfeRef(fmt.Sprintf("%s remote %d", what, r.Source), r.NHLFE)
			}
			for _, b := range s.Branches {
				nhlfeRef(what+" branch", b)
			}
		}
	}
	serviceRef := func(what string, id *uint32) {
		if id == nil {
			bad("%s: no service", what)
		} else if !services[*id] {
			bad("%s: service %d does not exist", what, *id)
		}
	}

	circuits := map[uint32]bool{}
	type attach struct {
		port string
		vlan VLAN
	}
	attached := map[attach]uint32{}
	for _, ci := range c.Circuits {
		what := listed(circuits, "circuit", ci.ID)
		check(what, &ci)
		if p, ok := ports[ci.Port]; !ok {
			bad("%s: port %q does not exist", what, ci.Port)
		} else if p.Kind != KindCustomer {
			bad("%s: port %q is not a customer port", what, ci.Port)
		}
		if other, dup := attached[attach{ci.Port, ci.VLAN}]; dup {
			bad("%s: port %s vlan %s already used by circuit %d", what, ci.Port, ci.VLAN, other)
		}
		attached[attach{ci.Port, ci.VLAN}] = ci.ID
		serviceRef(what, &ci.Service)
		if ci.Redirect != 0 {
			nhlfeRef(what+" redirect", ci.Redirect)
		}
	}

	labels := map[uint32]bool{}
	for _, l := range c.Labels {
		what := listed(labels, "label", l.Label)
		check(what, &l)
		for _, p := range l.InPorts {
			fabricPort(what+" in_ports", p)
		}
		switch l.Type {
		case LabelSwap:
			if l.NHLFE == nil {
				bad("%s: swap without nhlfe", what)
			} else {
				nhlfeRef(what, *l.NHLFE)
			}
		case LabelELine:
			serviceRef(what, l.Service)
		case LabelELAN:
			serviceRef(what, l.Service)
			if l.Source == nil {
				bad("%s: elan without source", what)
			}
		case LabelReplicate:
			fabricPort(what, l.RPFPort)
			for _, b := range l.Branches {
				nhlfeRef(what+" branch", b)
			}
			if (l.Service == nil) != (l.Source == nil) {
				bad("%s: local delivery needs both service and source", what)
			} else if l.Service != nil {
				serviceRef(what, l.Service)
			}
		case LabelOAM:
			if l.Session == nil {
				bad("%s: oam without session", what)
			}
		case LabelCircuit:
			if l.Circuit == nil || !circuits[*l.Circuit] {
				bad("%s: circuit entry without a circuit of this config", what)
			}
		}
	}
	return errors.Join(errs...)
}

func isMAC(s string) bool {
	hw, err := net.ParseMAC(s)
	return err == nil && len(hw) == 6
}

// checkRange reports, through bad, a param whose value v is outside lo..hi
// (the generated checkParams' integer check).
func checkRange[T ~int | ~uint8 | ~uint16 | ~uint32 | ~int16](bad func(format string, a ...any), name string, v T, lo, hi int64) {
	if int64(v) < lo || int64(v) > hi {
		bad("%s %d out of range %d..%d", name, v, lo, hi)
	}
}

// checkSet is checkRange for a param the encoder leaves out when it is zero
// (the datapath's default then applies).
func checkSet[T ~int | ~uint8 | ~uint16 | ~uint32 | ~int16](bad func(format string, a ...any), name string, v T, lo, hi int64) {
	if v != 0 {
		checkRange(bad, name, v, lo, hi)
	}
}

// checkList refuses a list of more than max values, or holding one out of
// lo..hi.
func checkList[T ~uint8 | ~uint16 | ~uint32 | ~int16](bad func(format string, a ...any), name string, v []T, max int, lo, hi int64) {
	if len(v) > max {
		bad("%s: %d of them, want at most %d", name, len(v), max)
	}
	for i, x := range v {
		if int64(x) < lo || int64(x) > hi {
			bad("%s[%d] %d out of range %d..%d", name, i, x, lo, hi)
		}
	}
}
