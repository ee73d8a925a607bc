package desired

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/e3fabric/e3fabric/control/internal/dpconfig"
	"github.com/e3fabric/e3fabric/control/internal/labels"
	"github.com/e3fabric/e3fabric/control/internal/model"
	"github.com/e3fabric/e3fabric/control/internal/paths"
	"github.com/e3fabric/e3fabric/control/internal/topology"
)

// fabric is the configs of every node, with a tiny forwarding simulator that
// follows labels the way DESIGN.md says the datapath does.
type fabric struct {
	t       *testing.T
	topo    *topology.Topology
	cfg     map[string]dpconfig.Config
	used    map[string]map[uint32]bool // labels a simulation went through
	arrived map[string]map[string]bool // "label port" pairs it went through
}

func build(t *testing.T, topo *topology.Topology, recs []*model.ServiceRecord, down paths.Options) *fabric {
	t.Helper()
	a := labels.New(nil)
	full := paths.New(topo, paths.Options{})
	live := paths.New(topo, down)
	frags := map[string][]*Fragment{}
	checks := &checkSet{t: t, a: a, topo: topo, sessions: map[string]map[string]uint32{}}
	for i, rec := range recs {
		r, err := Route(&rec.Spec, full, live, nil)
		if err != nil {
			t.Fatal(err)
		}
		rec.Route, rec.ID = r, uint32(i+1)
		fs, err := Build(rec, a.NewAssigner(nil), checks.watch)
		if err != nil {
			t.Fatal(err)
		}
		for n, f := range fs {
			frags[n] = append(frags[n], f)
		}
	}
	for n, fs := range checks.frags {
		frags[n] = append(frags[n], fs...)
	}
	f := &fabric{t: t, topo: topo, cfg: map[string]dpconfig.Config{}, used: map[string]map[uint32]bool{},
		arrived: map[string]map[string]bool{}}
	for _, n := range topo.Nodes {
		c := Assemble(topo, n.Name, frags[n.Name])
		if err := c.Validate(); err != nil {
			t.Fatalf("node %s: config invalid: %v", n.Name, err)
		}
		f.cfg[n.Name] = c
		f.used[n.Name] = map[uint32]bool{}
		f.arrived[n.Name] = map[string]bool{}
	}
	for n, c := range f.cfg {
		for _, b := range c.BFD {
			if b.Label != 0 {
				f.check(n, b.ID) // every path check goes there and back
			}
		}
	}
	return f
}

// checkSet builds each path check once, as the controller does.
type checkSet struct {
	t        *testing.T
	a        *labels.Allocator
	topo     *topology.Topology
	sessions map[string]map[string]uint32 // key -> end -> session
	frags    map[string][]*Fragment
}

func (c *checkSet) watch(node, from, to string, p model.Path) (uint32, error) {
	k := CheckOf(from, to, p)
	if c.sessions[k.Key()] == nil {
		as := c.a.NewAssignerFor(nil, k.Roles())
		fs, err := BuildCheck(k, as, c.topo.Fabric.BFD)
		if err != nil {
			return 0, err
		}
		if n := len(as.Allocs()); n != k.Roles() { // the size the controller gives its maps
			c.t.Errorf("check %s: %d roles, Roles says %d", k.Key(), n, k.Roles())
		}
		c.sessions[k.Key()] = map[string]uint32{}
		for _, end := range []string{k.A, k.Z} {
			c.sessions[k.Key()][end], _ = CheckSession(as, end)
		}
		if c.frags == nil {
			c.frags = map[string][]*Fragment{}
		}
		for n, f := range fs {
			c.frags[n] = append(c.frags[n], f)
		}
	}
	return c.sessions[k.Key()][node], nil
}

// byID is node's object of kind what with id in xs.
func byID[T any](f *fabric, node, what string, id uint32, xs []T, idOf func(T) uint32) T {
	for _, x := range xs {
		if idOf(x) == id {
			return x
		}
	}
	f.t.Fatalf("node %s: no %s %d", node, what, id)
	var zero T
	return zero
}

func (f *fabric) bfd(node string, id uint32) dpconfig.BFD {
	return byID(f, node, "bfd session", id, f.cfg[node].BFD, func(b dpconfig.BFD) uint32 { return b.ID })
}

// check follows path session id from node along its LSP to the OAM entry
// at the far end, and that end's session back; it returns the far end and
// the links the way out took.
func (f *fabric) check(node string, id uint32) (far string, links []int) {
	out := func(from string, id uint32) (string, uint32, []int) {
		b := f.bfd(from, id)
		if b.Label == 0 {
			f.t.Fatalf("node %s: bfd %d is a link session, not a path check", from, id)
		}
		at, nexthop, label := from, b.Nexthop, b.Label
		var links []int
		for hops := 0; hops < 20; hops++ {
			links = append(links, int(nexthop))
			to, port, l := f.sendOn(at, nexthop, label)
			e := f.label(to, port, l)
			switch e.Type {
			case dpconfig.LabelOAM:
				return to, *e.Session, links
			case dpconfig.LabelSwap:
				n := f.nhlfe(to, *e.NHLFE)
				at, nexthop, label = to, n.Nexthop, n.Label
			default:
				f.t.Fatalf("node %s: check of bfd %d reaches a %s entry", from, id, e.Type)
			}
		}
		f.t.Fatal("label loop")
		return "", 0, nil
	}
	far, peer, links := out(node, id)
	back, mine, _ := out(far, peer)
	if back != node || mine != id {
		f.t.Fatalf("node %s: check %d's far end %s answers to %s session %d", node, id, far, back, mine)
	}
	return far, links
}

func (f *fabric) nhlfe(node string, id uint32) dpconfig.NHLFE {
	return byID(f, node, "nhlfe", id, f.cfg[node].NHLFEs, func(n dpconfig.NHLFE) uint32 { return n.ID })
}

// label is node's entry for l, which a frame reached on port: the entry
// must take frames from that port, and from no port no frame reaches it on.
func (f *fabric) label(node, port string, l uint32) dpconfig.Label {
	for _, e := range f.cfg[node].Labels {
		if e.Label == l {
			if !slices.Contains(e.InPorts, port) {
				f.t.Fatalf("node %s: label %d reached on %s, takes only %v", node, l, port, e.InPorts)
			}
			f.used[node][l] = true
			f.arrived[node][fmt.Sprint(l, port)] = true
			return e
		}
	}
	f.t.Fatalf("node %s: no label %d", node, l)
	return dpconfig.Label{}
}

func (f *fabric) service(node string, id uint32) dpconfig.Service {
	return byID(f, node, "service", id, f.cfg[node].Services, func(s dpconfig.Service) uint32 { return s.ID })
}

// send follows an NHLFE: the node at the other end of its nexthop's link
// receives the label on that link's port there. A protected NHLFE sends on
// its primary, as the datapath does while the watched session is usable.
func (f *fabric) send(node string, nh uint32) (to, port string, label uint32) {
	n := f.nhlfe(node, nh)
	if n.Protect != nil {
		n = f.nhlfe(node, n.Protect.Primary)
	}
	return f.sendOn(node, n.Nexthop, n.Label)
}

// sendOn sends label on nexthop (a link id) from node.
func (f *fabric) sendOn(node string, nexthop, label uint32) (to, port string, _ uint32) {
	l, ok := f.topo.LinkByID(int(nexthop))
	if !ok {
		f.t.Fatalf("node %s: nexthop %d is no link", node, nexthop)
	}
	local, remote := l.End(node)
	if local.Node != node {
		f.t.Fatalf("node %s: nexthop %d uses link %s that is not ours", node, nexthop, l.Name())
	}
	for _, x := range f.cfg[node].Nexthops {
		if x.ID == nexthop && x.MAC != topology.PortMAC(remote.Node, remote.Port) {
			f.t.Fatalf("node %s: nexthop %d MAC %s is not %s:%s's", node, x.ID, x.MAC, remote.Node, remote.Port)
		}
	}
	return remote.Node, remote.Port, label
}

// unicast follows SWAPs from an ingress NHLFE to the terminating entry. A
// protected NHLFE is followed both ways: primary and backup must end at the
// same entry, the session it watches must check the primary's very links to
// that same node (and be answered from there), and the backup must not
// leave over the primary's first link.
func (f *fabric) unicast(node string, nh uint32) (at string, e dpconfig.Label, hops int) {
	if p := f.nhlfe(node, nh).Protect; p != nil {
		var links []int
		at, e, hops, links = f.walk(node, p.Primary)
		bat, be, _, _ := f.walk(node, p.Backup)
		if bat != at || be.Label != e.Label {
			f.t.Fatalf("node %s: nhlfe %d: backup ends at %s label %d, primary at %s label %d",
				node, nh, bat, be.Label, at, e.Label)
		}
		far, checked := f.check(node, p.Watch)
		if far != at || fmt.Sprint(checked) != fmt.Sprint(links) {
			f.t.Fatalf("node %s: nhlfe %d watches a check of links %v to %s; primary takes %v to %s",
				node, nh, checked, far, links, at)
		}
		// (A path without a backup may be watched alone: primary = backup.)
		if p.Backup != p.Primary && f.nhlfe(node, p.Backup).Nexthop == f.nhlfe(node, p.Primary).Nexthop {
			f.t.Fatalf("node %s: nhlfe %d: backup leaves on the primary's link", node, nh)
		}
		return at, e, hops
	}
	at, e, hops, _ = f.walk(node, nh)
	return at, e, hops
}

// walk follows a plain NHLFE's SWAPs to the terminating entry, listing the
// links taken.
func (f *fabric) walk(node string, nh uint32) (at string, e dpconfig.Label, hops int, links []int) {
	for hops = 1; hops < 20; hops++ {
		links = append(links, int(f.nhlfe(node, nh).Nexthop))
		to, port, l := f.send(node, nh)
		e = f.label(to, port, l)
		if e.Type != dpconfig.LabelSwap {
			return to, e, hops, links
		}
		node, nh = to, *e.NHLFE
	}
	f.t.Fatal("label loop")
	return
}

// flood follows a source's branches through REPLICATE entries and returns
// how often each node delivered locally (with which source).
func (f *fabric) flood(src string, svc uint32) map[string][]uint16 {
	got := map[string][]uint16{}
	type pkt struct {
		node string
		nh   uint32
	}
	var q []pkt
	for _, b := range f.service(src, svc).Branches {
		q = append(q, pkt{src, b})
	}
	for steps := 0; len(q) > 0; steps++ {
		if steps > 100 {
			f.t.Fatal("flood loop")
		}
		p := q[0]
		q = q[1:]
		to, port, l := f.send(p.node, p.nh)
		e := f.label(to, port, l)
		if e.Type != dpconfig.LabelReplicate {
			f.t.Fatalf("flood from %s reaches %s label %d of type %s", src, to, l, e.Type)
		}
		if e.RPFPort != port {
			f.t.Fatalf("flood from %s arrives at %s on %s, RPF port is %s", src, to, port, e.RPFPort)
		}
		if e.Service != nil {
			if *e.Service != svc {
				f.t.Fatalf("%s: replicate delivers to service %d", to, *e.Service)
			}
			got[to] = append(got[to], *e.Source)
		}
		for _, b := range e.Branches {
			q = append(q, pkt{to, b})
		}
	}
	return got
}

func (f *fabric) checkAllLabelsUsed() {
	for n, c := range f.cfg {
		for _, e := range c.Labels {
			if !f.used[n][e.Label] {
				f.t.Errorf("node %s: label %d (%s) reached by no simulated frame", n, e.Label, e.Type)
			}
			if len(e.InPorts) == 0 {
				f.t.Errorf("node %s: label %d (%s) takes frames from any port", n, e.Label, e.Type)
			}
			for _, p := range e.InPorts {
				if !f.arrived[n][fmt.Sprint(e.Label, p)] {
					f.t.Errorf("node %s: label %d takes frames from %s, where none arrives", n, e.Label, p)
				}
			}
		}
	}
}

func load(t *testing.T) *topology.Topology {
	topo, _, err := topology.Load("../testdata/fabric.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

func TestELine(t *testing.T) {
	topo := load(t)
	tests := []struct {
		name     string
		down     paths.Options
		active   string
		wantHops int
	}{
		{"all up", paths.Options{}, "primary", 2},
		{"spine down", paths.Options{}, "", 2}, // filled below: the primary's spine down
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := &model.ServiceRecord{Spec: model.ServiceSpec{Name: "red", Type: model.ELine, Circuits: []model.Circuit{
				{Node: "leaf1", Port: "cust1", VLAN: 1000}, {Node: "leaf3", Port: "cust1", VLAN: 2000}}}}
			down := tc.down
			if i == 1 {
				r, _ := Route(&rec.Spec, paths.New(topo, paths.Options{}), paths.New(topo, paths.Options{}), nil)
				down = paths.Options{DownNodes: map[string]bool{r.Primary[0].To: true}}
				tc.active = "backup"
			}
			f := build(t, topo, []*model.ServiceRecord{rec}, down)
			if rec.Route.Active != tc.active {
				t.Fatalf("active = %q, want %q", rec.Route.Active, tc.active)
			}
			if len(rec.Route.Backup) == 0 {
				t.Fatal("no backup path in a two-spine fabric")
			}
			for _, d := range [][2]string{{"leaf1", "leaf3"}, {"leaf3", "leaf1"}} {
				s := f.service(d[0], rec.ID)
				if s.Type != dpconfig.ServiceELine || s.NHLFE == nil {
					t.Fatalf("%s: service %+v", d[0], s)
				}
				at, e, hops := f.unicast(d[0], *s.NHLFE)
				if at != d[1] || e.Type != dpconfig.LabelELine || *e.Service != rec.ID || hops != tc.wantHops {
					t.Fatalf("%s -> ends at %s with %+v after %d hops", d[0], at, e, hops)
				}
				// The path actually taken avoids what is down.
				first, _, _ := f.send(d[0], *s.NHLFE)
				if down.DownNodes[first] {
					t.Fatalf("%s sends to %s, which is down", d[0], first)
				}
			}
			// The standby path is installed too: walk it from the spine
			// the active path does not use.
			var standby model.Path
			if tc.active == "primary" {
				standby = rec.Route.Backup
			} else {
				standby = rec.Route.Primary
			}
			sp := standby[0].To
			for _, e := range f.cfg[sp].Labels {
				if f.used[sp][e.Label] {
					continue // walked already, e.g. a path check's
				}
				at, end, _ := f.unicast(sp, *e.NHLFE)
				if end.Type != dpconfig.LabelELine || (at != "leaf1" && at != "leaf3") {
					t.Fatalf("standby label at %s ends at %s %+v", sp, at, end)
				}
				f.used[sp][e.Label] = true
			}
			f.checkAllLabelsUsed()
			for _, n := range []string{"leaf1", "leaf3"} {
				if len(f.cfg[n].Circuits) != 1 || f.cfg[n].Circuits[0].Service != rec.ID {
					t.Fatalf("%s circuits %+v", n, f.cfg[n].Circuits)
				}
			}
		})
	}
}

func TestELAN(t *testing.T) {
	topo := load(t)
	tests := []struct {
		name    string
		members []string
		down    paths.Options
		reach   []string
	}{
		{"three leaves", []string{"leaf1", "leaf2", "leaf3"}, paths.Options{}, []string{"leaf1", "leaf2", "leaf3"}},
		{"two leaves", []string{"leaf1", "leaf3"}, paths.Options{}, []string{"leaf1", "leaf3"}},
		{"spine1 down", []string{"leaf1", "leaf2", "leaf3"}, paths.Options{DownNodes: map[string]bool{"spine1": true}}, []string{"leaf1", "leaf2", "leaf3"}},
		{"member down", []string{"leaf1", "leaf2", "leaf3"}, paths.Options{DownNodes: map[string]bool{"leaf2": true}}, []string{"leaf1", "leaf3"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := &model.ServiceRecord{Spec: model.ServiceSpec{Name: "blue", Type: model.ELAN}}
			for i, m := range tc.members {
				rec.Spec.Circuits = append(rec.Spec.Circuits, model.Circuit{Node: m, Port: "cust1", VLAN: dpconfig.VLAN(10 + i)})
			}
			other := &model.ServiceRecord{Spec: model.ServiceSpec{Name: "green", Type: model.ELAN, Circuits: []model.Circuit{
				{Node: "leaf1", Port: "cust1", VLAN: 99}, {Node: "leaf2", Port: "cust1", VLAN: 99}}}}
			f := build(t, topo, []*model.ServiceRecord{rec, other}, tc.down)
			src := rec.Route.Sources
			for _, from := range tc.reach {
				s := f.service(from, rec.ID)
				if len(s.Remotes) != len(tc.reach)-1 {
					t.Fatalf("%s: %d remotes, want %d", from, len(s.Remotes), len(tc.reach)-1)
				}
				// Known unicast: remote source(to) reaches `to`, where the
				// label says "service, source = from".
				for _, r := range s.Remotes {
					at, e, _ := f.unicast(from, r.NHLFE)
					if src[at] != r.Source {
						t.Fatalf("%s: remote source %d ends at %s (source %d)", from, r.Source, at, src[at])
					}
					if e.Type != dpconfig.LabelELAN || *e.Service != rec.ID || *e.Source != src[from] {
						t.Fatalf("%s -> %s ends in %+v, want elan(%d, %d)", from, at, e, rec.ID, src[from])
					}
				}
				// Flooding: every other reachable member gets exactly one
				// copy, tagged with from's source id; from gets none.
				got := f.flood(from, rec.ID)
				for _, to := range tc.reach {
					want := 1
					if to == from {
						want = 0
					}
					if len(got[to]) != want || (want == 1 && got[to][0] != src[from]) {
						t.Fatalf("flood from %s: %s got %v", from, to, got[to])
					}
				}
				for n := range got {
					if tc.down.DownNodes[n] {
						t.Fatalf("flood from %s reaches down node %s", from, n)
					}
				}
			}
			for _, n := range []string{"leaf1", "leaf2"} {
				if tc.down.DownNodes[n] {
					continue
				}
				for _, r := range f.service(n, other.ID).Remotes {
					f.unicast(n, r.NHLFE)
				}
				f.flood(n, other.ID)
			}
			f.checkAllLabelsUsed()
			// Unique labels per node hold across both services: Validate
			// (run by build) refuses duplicates; check sources are distinct.
			seen := map[uint16]string{}
			for n, id := range src {
				if o, dup := seen[id]; dup {
					t.Fatalf("source id %d for %s and %s", id, n, o)
				}
				seen[id] = n
			}
		})
	}
}

func TestLabelsStableAcrossRecompute(t *testing.T) {
	topo := load(t)
	a := labels.New(nil)
	spec := model.ServiceSpec{Name: "blue", Type: model.ELAN, Circuits: []model.Circuit{
		{Node: "leaf1", Port: "cust1", VLAN: 1}, {Node: "leaf2", Port: "cust1", VLAN: 1}, {Node: "leaf3", Port: "cust1", VLAN: 1}}}
	full := paths.New(topo, paths.Options{})
	run := func(live *paths.Graph, old []model.Alloc, oldRoute *model.Route) *model.ServiceRecord {
		r, err := Route(&spec, full, live, oldRoute)
		if err != nil {
			t.Fatal(err)
		}
		rec := &model.ServiceRecord{Spec: spec, ID: 1, Route: r}
		as := a.NewAssigner(old)
		checks := &checkSet{t: t, a: labels.New(nil), topo: topo, sessions: map[string]map[string]uint32{}}
		if _, err := Build(rec, as, checks.watch); err != nil {
			t.Fatal(err)
		}
		rec.Allocs = as.Allocs()
		as.Commit()
		return rec
	}
	r1 := run(full, nil, nil)
	r2 := run(paths.New(topo, paths.Options{}), r1.Allocs, &r1.Route)
	if fmt.Sprint(r1.Allocs) != fmt.Sprint(r2.Allocs) {
		t.Fatalf("allocations changed without a path change:\n%v\n%v", r1.Allocs, r2.Allocs)
	}
	// Move everything off the tree's spine: moved paths get new labels,
	// and no value is reused with another meaning in the same change.
	spine := r1.Route.Tree[0].To
	r3 := run(paths.New(topo, paths.Options{DownNodes: map[string]bool{spine: true}}), r2.Allocs, &r2.Route)
	old := map[string]model.Alloc{}
	for _, x := range r2.Allocs {
		old[fmt.Sprint(x.Node, x.Kind, x.Value)] = x
	}
	for _, x := range r3.Allocs {
		if o, ok := old[fmt.Sprint(x.Node, x.Kind, x.Value)]; ok && o.Role != x.Role {
			t.Fatalf("%s %s %d: was %q, now %q in the same change", x.Node, x.Kind, x.Value, o.Role, x.Role)
		}
	}
	if fmt.Sprint(r3.Route.Sources) != fmt.Sprint(r1.Route.Sources) {
		t.Fatalf("source ids changed: %v -> %v", r1.Route.Sources, r3.Route.Sources)
	}
}

// An E-LAN's per-circuit MAC limit reaches every circuit of it; an E-Line
// cannot have one.
func TestCircuitMACLimit(t *testing.T) {
	topo := load(t)
	rec := &model.ServiceRecord{Spec: model.ServiceSpec{Name: "blue", Type: model.ELAN, CircuitMACLimit: 100,
		Circuits: []model.Circuit{{Node: "leaf1", Port: "cust1", VLAN: 5}, {Node: "leaf2", Port: "cust1", VLAN: 5}}}}
	if err := rec.Spec.ValidateShape(); err != nil {
		t.Fatal(err)
	}
	f := build(t, topo, []*model.ServiceRecord{rec}, paths.Options{})
	for _, n := range []string{"leaf1", "leaf2"} {
		if cs := f.cfg[n].Circuits; len(cs) != 1 || cs[0].MACLimit != 100 {
			t.Fatalf("%s circuits %+v", n, cs)
		}
	}
	line := model.ServiceSpec{Name: "red", Type: model.ELine, CircuitMACLimit: 5,
		Circuits: []model.Circuit{{Node: "leaf1", Port: "cust1", VLAN: 6}, {Node: "leaf2", Port: "cust1", VLAN: 6}}}
	if err := line.ValidateShape(); err == nil {
		t.Fatal("an eline with circuit_mac_limit accepted")
	}
}

// Storm control: the service's limits reach each circuit without its own,
// a circuit's own replace them; an E-Line or a limit out of range is refused.
func TestStormControl(t *testing.T) {
	topo := load(t)
	own := &dpconfig.Storm{UnknownPPS: 5}
	rec := &model.ServiceRecord{Spec: model.ServiceSpec{Name: "blue", Type: model.ELAN,
		Storm:    &dpconfig.Storm{BroadcastPPS: 100, MulticastPPS: 50},
		Circuits: []model.Circuit{{Node: "leaf1", Port: "cust1", VLAN: 5}, {Node: "leaf2", Port: "cust1", VLAN: 5, Storm: own}}}}
	if err := rec.Spec.ValidateShape(); err != nil {
		t.Fatal(err)
	}
	f := build(t, topo, []*model.ServiceRecord{rec}, paths.Options{})
	for _, tc := range []struct {
		node       string
		bc, mc, uu int
	}{{"leaf1", 100, 50, 0}, {"leaf2", 0, 0, 5}} {
		cs := f.cfg[tc.node].Circuits
		if len(cs) != 1 || cs[0].StormBroadcastPPS != tc.bc || cs[0].StormMulticastPPS != tc.mc || cs[0].StormUnknownPPS != tc.uu {
			t.Fatalf("%s circuits %+v", tc.node, cs)
		}
	}
	for _, bad := range []model.ServiceSpec{
		{Name: "red", Type: model.ELine, Storm: &dpconfig.Storm{BroadcastPPS: 1},
			Circuits: []model.Circuit{{Node: "leaf1", Port: "cust1", VLAN: 6}, {Node: "leaf2", Port: "cust1", VLAN: 6}}},
		{Name: "big", Type: model.ELAN, Storm: &dpconfig.Storm{BroadcastPPS: dpconfig.StormPPSMax + 1},
			Circuits: []model.Circuit{{Node: "leaf1", Port: "cust1", VLAN: 6}, {Node: "leaf2", Port: "cust1", VLAN: 6}}},
		{Name: "neg", Type: model.ELAN,
			Circuits: []model.Circuit{{Node: "leaf1", Port: "cust1", VLAN: 6, Storm: &dpconfig.Storm{MulticastPPS: -1}}, {Node: "leaf2", Port: "cust1", VLAN: 6}}},
	} {
		if err := bad.ValidateShape(); err == nil {
			t.Errorf("%s: storm control %v accepted", bad.Name, bad.Storm)
		}
	}
}

func TestParseStorm(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want dpconfig.Storm
		ok   bool
	}{
		{"broadcast=100", dpconfig.Storm{BroadcastPPS: 100}, true},
		{"broadcast=1,multicast=2,unknown=3", dpconfig.Storm{BroadcastPPS: 1, MulticastPPS: 2, UnknownPPS: 3}, true},
		{"bum=1", dpconfig.Storm{}, false},
		{"broadcast", dpconfig.Storm{}, false},
		{"unknown=100000001", dpconfig.Storm{}, false},
	} {
		got, err := dpconfig.ParseStorm(tc.in)
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("ParseStorm(%q) = %+v, %v", tc.in, got, err)
		}
	}
}

// ecmpGroup is node's ECMP group id, or fails.
func (f *fabric) ecmpGroup(node string, id uint32) dpconfig.ECMP {
	return byID(f, node, "ecmp group", id, f.cfg[node].ECMPs, func(e dpconfig.ECMP) uint32 { return e.ID })
}

// With ECMP, every ingress (both E-Line ends, every E-LAN remote) is a
// group of two protected members, one per spine, each ending where the
// other does; a spine down leaves the group as it is (the datapath leaves
// the failed member out); without ECMP there is no group.
func TestECMP(t *testing.T) {
	topo := load(t)
	twoSpines := func(f *fabric, node string, nh uint32, wantAt string) {
		t.Helper()
		g := f.ecmpGroup(node, nh)
		if len(g.Members) != 2 {
			t.Fatalf("%s: group %d has %v", node, nh, g.Members)
		}
		spines := map[string]bool{}
		for _, m := range g.Members {
			if f.nhlfe(node, m).Protect == nil {
				t.Fatalf("%s: member %d is not protected", node, m)
			}
			at, _, hops := f.unicast(node, m)
			if at != wantAt || hops != 2 {
				t.Fatalf("%s: member %d ends at %s after %d hops, want %s", node, m, at, hops, wantAt)
			}
			first, _, _ := f.send(node, m)
			spines[first] = true
		}
		if len(spines) != 2 {
			t.Fatalf("%s: both members go through %v", node, spines)
		}
	}
	for _, down := range []paths.Options{{}, {DownNodes: map[string]bool{"spine1": true}}} {
		red := &model.ServiceRecord{Spec: model.ServiceSpec{Name: "red", Type: model.ELine, ECMP: true, Circuits: []model.Circuit{
			{Node: "leaf1", Port: "cust1", VLAN: 1000}, {Node: "leaf3", Port: "cust1", VLAN: 2000}}}}
		blue := &model.ServiceRecord{Spec: model.ServiceSpec{Name: "blue", Type: model.ELAN, ECMP: true, Circuits: []model.Circuit{
			{Node: "leaf1", Port: "cust1", VLAN: 10}, {Node: "leaf2", Port: "cust1", VLAN: 10}}}}
		plain := &model.ServiceRecord{Spec: model.ServiceSpec{Name: "green", Type: model.ELine, Circuits: []model.Circuit{
			{Node: "leaf1", Port: "cust1", VLAN: 1001}, {Node: "leaf3", Port: "cust1", VLAN: 2001}}}}
		f := build(t, topo, []*model.ServiceRecord{red, blue, plain}, down)
		if !red.Route.ECMP {
			t.Fatalf("red's route is not ECMP: %+v", red.Route)
		}
		twoSpines(f, "leaf1", *f.service("leaf1", red.ID).NHLFE, "leaf3")
		twoSpines(f, "leaf3", *f.service("leaf3", red.ID).NHLFE, "leaf1")
		for _, n := range [][2]string{{"leaf1", "leaf2"}, {"leaf2", "leaf1"}} {
			rs := f.service(n[0], blue.ID).Remotes
			if len(rs) != 1 {
				t.Fatalf("%s: remotes %+v", n[0], rs)
			}
			if len(down.DownNodes) == 0 { // else routed on the live fabric: one path, no group
				twoSpines(f, n[0], rs[0].NHLFE, n[1])
			}
		}
		if plain.Route.ECMP {
			t.Fatal("green did not ask for ECMP")
		}
		for _, e := range f.cfg["leaf1"].ECMPs {
			if e.ID == *f.service("leaf1", plain.ID).NHLFE {
				t.Fatal("green's ingress is a group")
			}
		}
	}
}

// The order in which a build asks for its roles is part of the stored
// format: a restarted controller gets a service's values back from that
// order alone (labels.NewReplay). A build that asks in another order
// cannot load the services stored before it.
func TestRoleOrderIsStable(t *testing.T) {
	topo := load(t)
	full := paths.New(topo, paths.Options{})
	for _, tc := range []struct {
		spec model.ServiceSpec
		want string
	}{
		{model.ServiceSpec{Name: "eline", Type: model.ELine, Circuits: []model.Circuit{
			{Node: "leaf1", Port: "cust1", VLAN: 1}, {Node: "leaf3", Port: "cust1", VLAN: 1}}}, "8ca47df8144e107b"},
		{model.ServiceSpec{Name: "eline-ecmp", Type: model.ELine, ECMP: true, Circuits: []model.Circuit{
			{Node: "leaf1", Port: "cust1", VLAN: 2}, {Node: "leaf3", Port: "cust1", VLAN: 2}}}, "ad7c72ae197a178d"},
		{model.ServiceSpec{Name: "elan", Type: model.ELAN, Circuits: []model.Circuit{
			{Node: "leaf1", Port: "cust1", VLAN: 3}, {Node: "leaf2", Port: "cust1", VLAN: 3}, {Node: "leaf3", Port: "cust1", VLAN: 3}}}, "268f58d7ebf9f33f"},
		{model.ServiceSpec{Name: "elan-site", Type: model.ELAN, ECMP: true, Circuits: []model.Circuit{
			{Node: "leaf1", Port: "cust1", VLAN: 4, Segment: "site1"}, {Node: "leaf2", Port: "cust1", VLAN: 4, Segment: "site1"},
			{Node: "leaf3", Port: "cust1", VLAN: 4}}}, "b49230c383a8da20"},
	} {
		r, err := Route(&tc.spec, full, full, nil)
		if err != nil {
			t.Fatal(err)
		}
		rec := &model.ServiceRecord{Spec: tc.spec, ID: 1, Route: r}
		a := labels.New(nil)
		as := a.NewAssigner(nil)
		checks := &checkSet{t: t, a: a, topo: topo, sessions: map[string]map[string]uint32{}}
		if _, err := Build(rec, as, checks.watch); err != nil {
			t.Fatal(err)
		}
		if _, got := as.Sequence(); got != tc.want {
			t.Errorf("%s: role digest %s, want %s", tc.spec.Name, got, tc.want)
		}
	}
}

// A replay into a scratch that earlier builds of other services used asks
// for the same roles and finds the same nodes as a build of its own.
func TestReplayInScratchMatchesBuild(t *testing.T) {
	topo := load(t)
	full := paths.New(topo, paths.Options{})
	a := labels.New(nil)
	checks := &checkSet{t: t, a: a, topo: topo, sessions: map[string]map[string]uint32{}}
	type built struct {
		rec    *model.ServiceRecord
		values model.AllocValues
		roles  string
		nodes  []string
	}
	var all []built
	for _, spec := range []model.ServiceSpec{
		{Name: "eline", Type: model.ELine, Circuits: []model.Circuit{
			{Node: "leaf1", Port: "cust1", VLAN: 1}, {Node: "leaf3", Port: "cust1", VLAN: 1}}},
		{Name: "elan", Type: model.ELAN, Circuits: []model.Circuit{
			{Node: "leaf1", Port: "cust1", VLAN: 3}, {Node: "leaf2", Port: "cust1", VLAN: 3}, {Node: "leaf3", Port: "cust1", VLAN: 3}}},
		{Name: "eline-ecmp", Type: model.ELine, ECMP: true, Circuits: []model.Circuit{
			{Node: "leaf1", Port: "cust1", VLAN: 2}, {Node: "leaf3", Port: "cust1", VLAN: 2}}},
		{Name: "elan-site", Type: model.ELAN, ECMP: true, Circuits: []model.Circuit{
			{Node: "leaf1", Port: "cust1", VLAN: 4, Segment: "site1"}, {Node: "leaf2", Port: "cust1", VLAN: 4, Segment: "site1"},
			{Node: "leaf3", Port: "cust1", VLAN: 4}}},
	} {
		r, err := Route(&spec, full, full, nil)
		if err != nil {
			t.Fatal(err)
		}
		rec := &model.ServiceRecord{Spec: spec, ID: uint32(len(all) + 1), Route: r}
		as := a.NewAssigner(nil)
		frags, err := Build(rec, as, checks.watch)
		if err != nil {
			t.Fatal(err)
		}
		as.Commit()
		values, roles := as.Sequence()
		nodes := make([]string, 0, len(frags))
		for n := range frags {
			nodes = append(nodes, n)
		}
		slices.Sort(nodes)
		all = append(all, built{rec, values, roles, nodes})
	}
	// One scratch and one assigner for all replays, as a loading leader's
	// goroutines reuse theirs: a replay after a bigger or a smaller one
	// gives back the same.
	sc := NewScratch()
	var as *labels.Assigner
	for pass, order := range [][]int{{0, 1, 2, 3}, {3, 2, 1, 0}} {
		for _, i := range order {
			b := all[i]
			as = a.ReplayIn(as, b.values)
			nodes, err := Replay(b.rec, as, checks.watch, sc)
			if err != nil {
				t.Fatalf("pass %d, %s: %v", pass, b.rec.Spec.Name, err)
			}
			if err := as.Check(b.roles); err != nil {
				t.Errorf("pass %d, %s: %v", pass, b.rec.Spec.Name, err)
			}
			if !slices.Equal(nodes, b.nodes) {
				t.Errorf("pass %d, %s: nodes %v, want %v", pass, b.rec.Spec.Name, nodes, b.nodes)
			}
			if values, roles := as.Sequence(); !reflect.DeepEqual(values, b.values) || roles != b.roles {
				t.Errorf("pass %d, %s: replayed %v %s, stored %v %s", pass, b.rec.Spec.Name, values, roles, b.values, b.roles)
			}
		}
	}
}

// A check's key is the same whichever end names it.
func TestCheckKey(t *testing.T) {
	p := model.Path{{Link: 3, From: "leaf1", To: "spine2"}, {Link: 17, From: "spine2", To: "leaf4"}}
	for _, tc := range []struct {
		from, to string
		p        model.Path
		want     string
	}{
		{"leaf1", "leaf4", p, "leaf1>leaf4:3.17"},
		{"leaf4", "leaf1", Reverse(p), "leaf1>leaf4:3.17"},
		{"leaf1", "leaf4", p[:1], "leaf1>leaf4:3"},
	} {
		if got := CheckKey(tc.from, tc.to, tc.p); got != tc.want {
			t.Errorf("CheckKey(%s, %s, %s) = %s, want %s", tc.from, tc.to, tc.p.Key(), got, tc.want)
		}
		if got := CheckOf(tc.from, tc.to, tc.p).Key(); got != tc.want {
			t.Errorf("CheckOf(%s, %s, %s).Key() = %s, want %s", tc.from, tc.to, tc.p.Key(), got, tc.want)
		}
	}
}

// Both ends of a link get its BFD key (lower-case hex) and key id.
func TestLinkBFDKeys(t *testing.T) {
	topo, _, err := topology.Parse([]byte("nodes: [{name: a}, {name: b}]\n" +
		"links: [{a: {node: a, port: p}, b: {node: b, port: q}, bfd: {auth_key: E3E3, auth_key_id: 9}}]"))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a", "b"} {
		bfd := Base(topo, n).BFD
		if len(bfd) != 1 || bfd[0].AuthKey != "e3e3" || bfd[0].AuthKeyID == nil || *bfd[0].AuthKeyID != 9 {
			t.Fatalf("%s: sessions %+v", n, bfd)
		}
	}
}
