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
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }

	if c.Version != 0 && c.Version != Version {
		bad("version %d: this agent understands %d", c.Version, Version)
	}
	s := c.Settings.Normalize()
	for _, p := range []param{{"ttl", int64(s.TTL)}, {"mac_aging_s", int64(s.MACAgingS)},
		{"mac_limit", int64(s.MACLimit)}, {"mac_move_limit", int64(s.MACMoveLimit)},
		{"mac_move_window_s", int64(s.MACMoveWindowS)}} {
		if err := p.check("settings"); err != nil {
			bad("settings: %v", err)
		}
	}

	ports := map[string]Port{}
	for _, p := range c.Ports {
		switch {
		case p.Name == "":
			bad("port with empty name")
		case p.Devargs == "":
			bad("port %s: empty devargs", p.Name)
		case p.Kind != KindCustomer && p.Kind != KindFabric:
			bad("port %s: kind %q: want %q or %q", p.Name, p.Kind, KindCustomer, KindFabric)
		case p.MAC != "" && !isMAC(p.MAC):
			bad("port %s: mac %q is not a MAC address", p.Name, p.MAC)
		}
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
		what := fmt.Sprintf("nexthop %d", n.ID)
		if nexthops[n.ID] {
			bad("%s: listed twice", what)
		}
		nexthops[n.ID] = true
		fabricPort(what, n.Port)
		if !isMAC(n.MAC) {
			bad("%s: mac %q is not a MAC address", what, n.MAC)
		}
	}

	sessions := map[uint32]bool{}
	sessionPort := map[string]uint32{}
	for _, b := range c.BFD {
		what := fmt.Sprintf("bfd %d", b.ID)
		if sessions[b.ID] {
			bad("%s: listed twice", what)
		}
		sessions[b.ID] = true
		if b.ID >= MaxSessions {
			bad("%s: id must be < %d", what, MaxSessions)
		}
		if !nexthops[b.Nexthop] {
			bad("%s: nexthop %d does not exist", what, b.Nexthop)
		}
		if b.Label != 0 && (b.Label < LabelMin || b.Label >= LabelSpace) {
			bad("%s: label %d out of range %d..%d", what, b.Label, LabelMin, LabelSpace-1)
		}
		n := b.Normalize()
		for _, p := range []param{{"tx_ms", int64(n.TxMS)}, {"rx_ms", int64(n.RxMS)},
			{"multiplier", int64(n.Multiplier)}, {"wtr_s", int64(*n.WTRS)}} {
			if err := p.check("bfd"); err != nil {
				bad("%s: %v", what, err)
			}
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
		what := fmt.Sprintf("nhlfe %d", n.ID)
		if nhlfes[n.ID] {
			bad("%s: listed twice", what)
		}
		nhlfes[n.ID] = true
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
			if p.Watch >= MaxSessions {
				bad("%s: watch %d must be < %d", what, p.Watch, MaxSessions)
			}
			continue
		}
		if !nexthops[n.Nexthop] {
			bad("%s: nexthop %d does not exist", what, n.Nexthop)
		}
		if n.Label < LabelMin || n.Label >= LabelSpace {
			bad("%s: label %d out of range %d..%d", what, n.Label, LabelMin, LabelSpace-1)
		}
	}
	groups := map[uint32]bool{}
	for _, e := range c.ECMPs {
		what := fmt.Sprintf("ecmp %d", e.ID)
		if nhlfes[e.ID] || groups[e.ID] {
			bad("%s: its id is listed twice", what)
		}
		groups[e.ID] = true
		if len(e.Members) == 0 || len(e.Members) > MaxECMPMembers {
			bad("%s: %d members, want 1..%d", what, len(e.Members), MaxECMPMembers)
		}
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
		what := fmt.Sprintf("service %d", s.ID)
		if services[s.ID] {
			bad("%s: listed twice", what)
		}
		services[s.ID] = true
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
		default:
			bad("%s: type %q: want %q or %q", what, s.Type, ServiceELine, ServiceELAN)
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
		what := fmt.Sprintf("circuit %d", ci.ID)
		if circuits[ci.ID] {
			bad("%s: listed twice", what)
		}
		circuits[ci.ID] = true
		if p, ok := ports[ci.Port]; !ok {
			bad("%s: port %q does not exist", what, ci.Port)
		} else if p.Kind != KindCustomer {
			bad("%s: port %q is not a customer port", what, ci.Port)
		}
		if !ci.VLAN.Valid() {
			bad("%s: vlan %d: want 1..4094 or untagged", what, uint16(ci.VLAN))
		}
		if other, dup := attached[attach{ci.Port, ci.VLAN}]; dup {
			bad("%s: port %s vlan %s already used by circuit %d", what, ci.Port, ci.VLAN, other)
		}
		attached[attach{ci.Port, ci.VLAN}] = ci.ID
		serviceRef(what, &ci.Service)
		if len(ci.Peers) > MaxPeers {
			bad("%s: %d peers, at most %d", what, len(ci.Peers), MaxPeers)
		}
		for _, p := range ci.Peers {
			if p >= MaxRemotes {
				bad("%s: peer %d: want 0..%d", what, p, MaxRemotes-1)
			}
		}
		if ci.Redirect != 0 {
			nhlfeRef(what+" redirect", ci.Redirect)
		}
	}

	labels := map[uint32]bool{}
	for _, l := range c.Labels {
		what := fmt.Sprintf("label %d", l.Label)
		if labels[l.Label] {
			bad("%s: listed twice", what)
		}
		labels[l.Label] = true
		if l.Label < LabelMin || l.Label >= LabelSpace {
			bad("%s: out of range %d..%d", what, LabelMin, LabelSpace-1)
		}
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
			} else if *l.Session >= MaxSessions {
				bad("%s: session %d must be < %d", what, *l.Session, MaxSessions)
			}
		case LabelCircuit:
			if l.Circuit == nil || !circuits[*l.Circuit] {
				bad("%s: circuit entry without a circuit of this config", what)
			}
		default:
			bad("%s: type %q: want swap, eline, elan, replicate, oam or circuit", what, l.Type)
		}
	}
	return errors.Join(errs...)
}

// param is an integer param's name and value, checked against the
// datapath's range for it (paramRanges, from datapath/api/schema.yaml).
type param struct {
	name string
	v    int64
}

func (p param) check(object string) error {
	r, ok := paramRanges[object][p.name]
	if ok && (p.v < r[0] || p.v > r[1]) {
		return fmt.Errorf("%s %d out of range %d..%d", p.name, p.v, r[0], r[1])
	}
	return nil
}

func isMAC(s string) bool {
	hw, err := net.ParseMAC(s)
	return err == nil && len(hw) == 6
}
