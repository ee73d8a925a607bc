package controller

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/e3fabric/e3fabric/control/internal/desired"
	"github.com/e3fabric/e3fabric/control/internal/model"
	"github.com/e3fabric/e3fabric/control/internal/topology"
)

// withLeader runs fn on the leader's state. Every leader operation (API
// changes, reactions to the agents' reports) goes through here, one at a
// time, so fn sees and leaves a consistent state.
func (c *Controller) withLeader(fn func(st *state) error) error {
	c.mu.Lock()
	st := c.leader
	if st != nil {
		defer c.mu.Unlock()
		return fn(st)
	}
	c.mu.Unlock()
	return errorf(KindNotLeader, "this controller replica is not the leader; send changes to the leader (%s)", c.leaderHint())
}

func (c *Controller) leaderHint() string {
	ctx, cancel := context.WithTimeout(context.Background(), 2e9)
	defer cancel()
	if url, err := LeaderURL(ctx, c.opt.Etcd); err == nil && url != "" {
		return url
	}
	return "unknown"
}

// validate checks spec against the topology and the other services.
func validate(st *state, spec *model.ServiceSpec) error {
	return validateOn(st.topo, st.circuits, spec)
}

// validateOn checks spec against topo and the circuits other services use
// (circuit -> service).
func validateOn(topo *topology.Topology, circuits map[model.CircuitKey]string, spec *model.ServiceSpec) error {
	if err := expandSegments(topo, spec); err != nil {
		return err
	}
	if err := spec.ValidateShape(); err != nil {
		return errorf(KindInvalid, "%v", err)
	}
	for _, ci := range spec.Circuits {
		if !topo.HasNode(ci.Node) {
			return errorf(KindNotFound, "circuit %s: unknown node %q", ci, ci.Node)
		}
		if _, ok := topo.CustomerPort(ci.Node, ci.Port); !ok {
			if topo.IsFabricPort(ci.Node, ci.Port) {
				return errorf(KindInvalid, "circuit %s: port %s:%s is a fabric port, not a customer port", ci, ci.Node, ci.Port)
			}
			return errorf(KindNotFound, "circuit %s: unknown port %q on node %s", ci, ci.Port, ci.Node)
		}
		if other, ok := circuits[ci.Key()]; ok && other != spec.Name {
			return errorf(KindConflict, "circuit %s: vlan %s on %s:%s is already used by service %s", ci, ci.VLAN, ci.Node, ci.Port, other)
		}
	}
	return nil
}

// expandSegments replaces each circuit given as a segment and a VLAN by a
// circuit on each of the segment's ports, and checks that a circuit naming
// a segment and a port is on it. An E-LAN's circuits stay sorted.
func expandSegments(t *topology.Topology, spec *model.ServiceSpec) error {
	var out []model.Circuit
	expanded := false
	for _, ci := range spec.Circuits {
		if ci.Segment == "" {
			out = append(out, ci)
			continue
		}
		sg := t.Segment(ci.Segment)
		if sg == nil {
			return errorf(KindNotFound, "circuit %s: unknown segment %q", ci, ci.Segment)
		}
		if ci.Node != "" {
			if !slices.ContainsFunc(sg.Ports, func(p topology.Endpoint) bool { return p.Node == ci.Node && p.Port == ci.Port }) {
				return errorf(KindInvalid, "circuit %s: %s:%s is not a port of segment %s", ci, ci.Node, ci.Port, ci.Segment)
			}
			out = append(out, ci)
			continue
		}
		expanded = true
		for _, p := range sg.Ports {
			out = append(out, model.Circuit{Node: p.Node, Port: p.Port, VLAN: ci.VLAN, Segment: sg.Name, Storm: ci.Storm})
		}
	}
	spec.Circuits = out
	if expanded && spec.Type == model.ELAN {
		model.SortCircuits(spec.Circuits)
	}
	return nil
}

// CreateServices adds services in one change (the API adds one at a time;
// the benchmark adds batches).
func (c *Controller) CreateServices(ctx context.Context, specs []model.ServiceSpec) error {
	return c.withLeader(func(st *state) error { return c.createServices(ctx, st, specs) })
}

func (c *Controller) createServices(ctx context.Context, st *state, specs []model.ServiceSpec) error {
	ch := newChange()
	inBatch := map[model.CircuitKey]string{}
	names := map[string]bool{}
	valid := make([]model.ServiceSpec, len(specs))
	for i := range specs {
		spec := specs[i]
		spec.Circuits = append([]model.Circuit(nil), spec.Circuits...)
		if spec.Type == model.ELAN { // an eline keeps its order: circuit 0 is "a"
			model.SortCircuits(spec.Circuits)
		}
		if _, ok := st.services[spec.Name]; ok || names[spec.Name] {
			return errorf(KindConflict, "service %s already exists", spec.Name)
		}
		names[spec.Name] = true
		if err := validate(st, &spec); err != nil {
			return err
		}
		for _, ci := range spec.Circuits {
			if other, ok := inBatch[ci.Key()]; ok {
				return errorf(KindConflict, "circuit %s: used by both %s and %s", ci, other, spec.Name)
			}
			inBatch[ci.Key()] = spec.Name
		}
		valid[i] = spec
	}
	if len(valid) == 0 {
		return c.commit(ctx, st, ch)
	}
	if err := admitMACs(st, valid, nil); err != nil {
		return err
	}
	if err := admitTenants(st, valid, nil); err != nil {
		return err
	}
	// New services carry no load yet: one pair of graphs serves the
	// batch, their shortest-path trees are shared, and each route depends
	// on its spec alone, so the routes are computed side by side.
	full, live := c.graphs(st, st.topo)
	routes := make([]model.Route, len(valid))
	errs := make([]error, len(valid))
	parallel(len(valid), func(i int) {
		if valid[i].BandwidthMbps == 0 && valid[i].Paths == nil {
			routes[i], errs[i] = desired.Route(&valid[i], full, live, nil)
		}
	})
	pre := newPrecoder(st.linksOf(st.topo))
	for i, spec := range valid {
		if spec.BandwidthMbps > 0 || spec.Paths != nil {
			// One by one: each takes capacity from the next, and may
			// have to keep off the paths of one before.
			routes[i], errs[i] = c.route(st, ch, st.topo, full, live, &spec, nil, true)
		}
		if errs[i] != nil {
			pre.wait(ch)
			ch.abort()
			if KindOf(errs[i]) != KindInternal {
				return errs[i]
			}
			return errorf(KindUnroutable, "%v", errs[i])
		}
		if err := c.planRouted(st, ch, st.topo, spec, routes[i], nil); err != nil {
			pre.wait(ch)
			ch.abort()
			return err
		}
		pre.add(ch.put[spec.Name])
	}
	pre.wait(ch)
	return c.commit(ctx, st, ch)
}

// CreateService adds one service.
func (c *Controller) CreateService(ctx context.Context, spec model.ServiceSpec) error {
	return c.CreateServices(ctx, []model.ServiceSpec{spec})
}

// UpdateService adds and removes circuits of a service.
func (c *Controller) UpdateService(ctx context.Context, name string, add, remove []model.Circuit) error {
	return c.withLeader(func(st *state) error { return c.updateService(ctx, st, name, add, remove) })
}

func (c *Controller) updateService(ctx context.Context, st *state, name string, add, remove []model.Circuit) error {
	old := st.services[name]
	if old == nil {
		return errorf(KindNotFound, "service %s not found", name)
	}
	if mv := old.rec.Move; mv != nil {
		return errorf(KindConflict, "service %s: circuit %s is moving to %s until %s: change it after", name,
			mv.From, mv.To, mv.Until.Format(time.RFC3339))
	}
	spec := old.rec.Spec
	spec.Circuits = nil
	rm := model.ServiceSpec{Type: spec.Type, Circuits: remove}
	if err := expandSegments(st.topo, &rm); err != nil {
		return err
	}
	drop := map[model.CircuitKey]model.Circuit{}
	for _, ci := range rm.Circuits {
		drop[ci.Key()] = ci
	}
	for _, ci := range old.rec.Spec.Circuits {
		if _, ok := drop[ci.Key()]; ok {
			delete(drop, ci.Key())
			continue
		}
		spec.Circuits = append(spec.Circuits, ci)
	}
	for _, ci := range rm.Circuits {
		if _, ok := drop[ci.Key()]; ok {
			return errorf(KindNotFound, "service %s has no circuit %s", name, ci)
		}
	}
	spec.Circuits = append(spec.Circuits, add...)
	if spec.Type == model.ELAN {
		model.SortCircuits(spec.Circuits)
	}
	if err := validate(st, &spec); err != nil {
		return err
	}
	if err := admitMACs(st, []model.ServiceSpec{spec}, map[string]bool{name: true}); err != nil {
		return err
	}
	if err := admitTenants(st, []model.ServiceSpec{spec}, map[string]bool{name: true}); err != nil {
		return err
	}
	ch := newChange()
	full, live := c.graphs(st, st.topo)
	if err := c.plan(st, ch, st.topo, full, live, spec, old, true); err != nil {
		ch.abort()
		return err
	}
	return c.commit(ctx, st, ch)
}

// DeleteService removes a service and frees its labels.
func (c *Controller) DeleteService(ctx context.Context, name string) error {
	return c.withLeader(func(st *state) error {
		old := st.services[name]
		if old == nil {
			return errorf(KindNotFound, "service %s not found", name)
		}
		if by := keys(st.disjointBy[name]); len(by) > 0 {
			return errorf(KindConflict, "service %s keeps its paths disjoint from %s: change or delete it first", by[0], name)
		}
		ch := newChange()
		ch.del[name] = true
		ch.assigners = append(ch.assigners, release(st.alloc, old.rec)) // frees all on commit
		return c.commit(ctx, st, ch)
	})
}

// fits says whether service name's circuits are still on ports of t (and
// of their segments): a new topology must keep every service it keeps.
func fits(t *topology.Topology, name string, spec *model.ServiceSpec) error {
	for _, ci := range spec.Circuits {
		if _, ok := t.CustomerPort(ci.Node, ci.Port); !ok {
			return errorf(KindConflict, "the topology has no customer port %s:%s, which service %s uses", ci.Node, ci.Port, name)
		}
		if sg := t.Segment(ci.Segment); ci.Segment != "" && (sg == nil || !slices.Contains(sg.Ports,
			topology.Endpoint{Node: ci.Node, Port: ci.Port})) {
			return errorf(KindConflict, "the topology has no port %s:%s on segment %s, which service %s uses",
				ci.Node, ci.Port, ci.Segment, name)
		}
	}
	return nil
}

// ImportTopology replaces the topology (links keep their ids) and creates
// the file's services that do not exist yet. Importing the same file again
// changes nothing. It refuses a topology that no longer has a node or port a
// service uses, or that disconnects a service.
func (c *Controller) ImportTopology(ctx context.Context, t *topology.Topology, services []topology.FileService) error {
	err := c.withLeader(func(st *state) error {
		if err := t.Normalize(st.topo); err != nil {
			return errorf(KindInvalid, "%v", err)
		}
		for name, s := range st.services {
			if err := fits(t, name, &s.rec.Spec); err != nil {
				return err
			}
		}
		if topoEqual(t, st.topo) {
			return nil
		}
		ch := newChange()
		ch.topo = t
		return c.recomputeTopo(ctx, st, ch)
	})
	if err != nil {
		return err
	}
	var specs []model.ServiceSpec
	for _, fs := range services {
		spec, err := model.SpecFromFile(fs)
		if err != nil {
			return errorf(KindInvalid, "%v", err)
		}
		if _, err := c.Service(ctx, spec.Name); err == nil {
			continue
		}
		specs = append(specs, spec)
	}
	if len(specs) == 0 {
		return nil
	}
	return c.CreateServices(ctx, specs)
}

// recomputeTopo recomputes every service on ch.topo and commits; a service
// the new topology cannot connect makes the change fail.
func (c *Controller) recomputeTopo(ctx context.Context, st *state, ch *change) error {
	// What is down is judged against the new topology's nodes and links.
	old := st.down
	st.down = c.viewOf(st, ch.topo)
	err := c.recomputeTopoView(ctx, st, ch)
	if err != nil {
		st.down = old
	}
	return err
}

func (c *Controller) recomputeTopoView(ctx context.Context, st *state, ch *change) error {
	full, _ := c.graphs(st, ch.topo)
	for name, s := range st.services {
		if _, err := full.Tree(s.rec.Spec.Members(), name); err != nil {
			return errorf(KindConflict, "the topology would disconnect service %s: %v", name, err)
		}
	}
	return c.recomputeAll(ctx, st, ch)
}

// SetLinkCost changes a link's cost (by id or name) and recomputes.
func (c *Controller) SetLinkCost(ctx context.Context, link string, cost int) error {
	return c.withLeader(func(st *state) error { return c.setLinkCost(ctx, st, link, cost) })
}

func (c *Controller) setLinkCost(ctx context.Context, st *state, link string, cost int) error {
	if cost < 1 || cost > 1<<20 {
		return errorf(KindInvalid, "cost %d out of range 1..%d", cost, 1<<20)
	}
	t := cloneTopo(st.topo)
	found := false
	for i := range t.Links {
		if t.Links[i].Name() == link || fmt.Sprint(t.Links[i].ID) == link {
			found = true
			if t.Links[i].Cost == cost {
				return nil
			}
			t.Links[i].Cost = cost
		}
	}
	if !found {
		return errorf(KindNotFound, "link %q not found (give its id or name, see link list)", link)
	}
	ch := newChange()
	ch.topo = t
	return c.recomputeTopo(ctx, st, ch)
}
