package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/e3fabric/e3fabric/control/internal/model"
	"github.com/e3fabric/e3fabric/control/internal/topology"
)

// Apply makes the fabric what req declares, in one change (one etcd
// transaction, one generation): the topology is replaced (links keep their
// ids, drained nodes stay drained), the listed services are created or
// updated (an updated service keeps its labels) and, with req.Prune, the
// others are deleted. A dry run, or an intent the fabric already is, changes
// nothing. A refused intent changes nothing either; its error names the
// request field at fault (FieldOf).
func (c *Controller) Apply(ctx context.Context, req *model.ApplyRequest) (*model.ApplyResult, error) {
	var res *model.ApplyResult
	err := c.withLeader(func(st *state) error {
		var err error
		res, err = c.apply(ctx, st, req)
		return err
	})
	return res, err
}

func (c *Controller) apply(ctx context.Context, st *state, req *model.ApplyRequest) (*model.ApplyResult, error) {
	if req.Topology == nil {
		return nil, &Error{Kind: KindInvalid, Msg: "the intent has no topology", Field: "topology"}
	}
	if req.Generation != 0 && req.Generation != st.gen {
		return nil, errorf(KindConflict, "the fabric is at generation %d, not %d: it changed since the plan was made",
			st.gen, req.Generation)
	}
	topo := cloneTopo(req.Topology)
	if err := topo.Normalize(st.topo); err != nil {
		field := "topology"
		if fe := (*topology.FieldError)(nil); errors.As(err, &fe) {
			field += "." + fe.Field
		}
		return nil, &Error{Kind: KindInvalid, Msg: err.Error(), Field: field}
	}
	if topoEqual(topo, st.topo) {
		topo = st.topo
	}
	want, err := intended(st, topo, req)
	if err != nil {
		return nil, err
	}
	res := &model.ApplyResult{Plan: planOf(st, topo, want, req.Prune), Generation: st.gen}
	if req.DryRun || len(res.Plan) == 0 {
		return res, nil
	}
	if err := c.commitIntent(ctx, st, topo, want, req.Prune); err != nil {
		return nil, err
	}
	res.Applied, res.Generation = true, st.gen
	return res, nil
}

// intended validates the services of req against topo and returns them
// normalised (segments expanded, an E-LAN's circuits sorted), in req's
// order: what the controller would store.
func intended(st *state, topo *topology.Topology, req *model.ApplyRequest) ([]model.ServiceSpec, error) {
	listed := map[string]int{}
	for i, s := range req.Services {
		if j, dup := listed[s.Name]; dup {
			return nil, &Error{Kind: KindInvalid, Field: fmt.Sprintf("services[%d].name", i),
				Msg: fmt.Sprintf("service %s listed twice (services[%d] and [%d])", s.Name, j, i)}
		}
		listed[s.Name] = i
	}
	// The services that stay as they are must still fit the new topology.
	circuits := map[model.CircuitKey]string{}
	for _, name := range keys(st.services) {
		if _, ok := listed[name]; ok || req.Prune {
			continue
		}
		spec := &st.services[name].rec.Spec
		if err := fits(topo, name, spec); err != nil {
			return nil, atField("topology", err)
		}
		for _, ci := range spec.Circuits {
			circuits[ci.Key()] = name
		}
	}
	want := make([]model.ServiceSpec, len(req.Services))
	for i, spec := range req.Services {
		spec.Circuits = slices.Clone(spec.Circuits)
		if spec.Type == model.ELAN {
			model.SortCircuits(spec.Circuits)
		}
		if err := validateOn(topo, circuits, &spec); err != nil {
			if KindOf(err) == KindNotFound { // of the intent's, not of the URL's
				err = &Error{Kind: KindInvalid, Msg: err.Error()}
			}
			return nil, atField(fmt.Sprintf("services[%d]", i), err)
		}
		for _, ci := range spec.Circuits {
			circuits[ci.Key()] = spec.Name
		}
		want[i] = spec
	}
	return want, nil
}

// commitIntent plans every service of the new fabric and commits it all at
// once: created and updated services and, with a new topology, every other
// one (its paths may move); with prune, the unlisted ones are deleted.
func (c *Controller) commitIntent(ctx context.Context, st *state, topo *topology.Topology, want []model.ServiceSpec, prune bool) (err error) {
	ch := newChange()
	if topo != st.topo {
		ch.topo = topo
		old := st.down
		st.down = c.viewOf(st, topo)
		defer func() {
			if err != nil {
				st.down = old
			}
		}()
	}
	listed := map[string]bool{}
	changed := map[string]bool{}   // listed and created or updated
	replacing := map[string]bool{} // existing, and updated or deleted
	var admit []model.ServiceSpec
	for _, spec := range want {
		listed[spec.Name] = true
		if old := st.services[spec.Name]; old == nil || !specEqual(&old.rec.Spec, &spec) {
			admit = append(admit, spec)
			changed[spec.Name], replacing[spec.Name] = true, old != nil
		}
	}
	var kept []string
	for _, name := range keys(st.services) {
		switch {
		case listed[name]:
		case prune:
			ch.del[name], replacing[name] = true, true
			ch.assigners = append(ch.assigners, release(st.alloc, st.services[name].rec)) // frees all on commit
		default:
			kept = append(kept, name)
		}
	}
	if err := admitMACs(st, admit, replacing); err != nil {
		ch.abort()
		return err
	}
	if err := admitTenants(st, admit, replacing); err != nil {
		ch.abort()
		return err
	}
	full, live := c.graphs(st, topo)
	for i, spec := range want {
		old := st.services[spec.Name]
		if !changed[spec.Name] && ch.topo == nil {
			continue
		}
		if err := c.plan(st, ch, topo, full, live, spec, old, true); err != nil {
			ch.abort()
			return atField(fmt.Sprintf("services[%d]", i), err)
		}
	}
	if ch.topo != nil {
		for _, name := range kept {
			old := st.services[name]
			if _, err := full.Tree(old.rec.Spec.Members(), name); err != nil {
				ch.abort()
				return &Error{Kind: KindConflict, Field: "topology",
					Msg: fmt.Sprintf("the topology would disconnect service %s: %v", name, err)}
			}
			if err := c.plan(st, ch, topo, full, live, old.rec.Spec, old, false); err != nil && KindOf(err) != KindUnroutable {
				ch.abort()
				return err
			}
		}
	}
	return c.commit(ctx, st, ch)
}

func specEqual(a, b *model.ServiceSpec) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// planOf lists what applying (topo, want) changes: the topology's objects,
// then the services, each by name.
func planOf(st *state, topo *topology.Topology, want []model.ServiceSpec, prune bool) []model.PlanItem {
	var plan []model.PlanItem
	if topo != st.topo {
		plan = append(plan, topoPlan(st.topo, topo)...)
	}
	before, after := map[string]any{}, map[string]any{}
	for name, s := range st.services {
		before[name] = specFields(&s.rec.Spec)
	}
	for i := range want {
		after[want[i].Name] = specFields(&want[i])
	}
	if !prune {
		for name, v := range before {
			if _, ok := after[name]; !ok {
				after[name] = v
			}
		}
	}
	return append(plan, diffObjects("service", before, after)...)
}

// topoPlan compares two topologies object by object.
func topoPlan(old, new *topology.Topology) []model.PlanItem {
	type objects = map[string]any
	split := func(t *topology.Topology) (fabric, nodes, links, ports, segments objects) {
		fabric, nodes, links, ports, segments = objects{}, objects{}, objects{}, objects{}, objects{}
		if t == nil {
			return
		}
		t = t.Fingerprinted()
		fabric["fabric"] = struct {
			Name   string          `json:"name"`
			Fabric topology.Fabric `json:"fabric"`
		}{t.Name, t.Fabric}
		for _, n := range t.Nodes {
			nodes[n.Name] = struct {
				Role string `json:"role,omitempty"`
			}{n.Role}
		}
		for _, l := range t.Links {
			l.ID = 0
			links[l.Name()] = struct {
				A            topology.Endpoint `json:"a"`
				B            topology.Endpoint `json:"b"`
				Cost         int               `json:"cost"`
				CapacityMbps int               `json:"capacity_mbps"`
				BFD          *topology.BFD     `json:"bfd,omitempty"`
			}{l.A, l.B, l.Cost, l.CapacityMbps, l.BFD}
		}
		for _, p := range t.CustomerPorts {
			ports[p.Node+":"+p.Port] = p
		}
		for _, s := range t.Segments {
			segments[s.Name] = s
		}
		return
	}
	f0, n0, l0, p0, s0 := split(old)
	f1, n1, l1, p1, s1 := split(new)
	var plan []model.PlanItem
	plan = append(plan, diffObjects("fabric", f0, f1)...)
	plan = append(plan, diffObjects("node", n0, n1)...)
	plan = append(plan, diffObjects("link", l0, l1)...)
	plan = append(plan, diffObjects("customer_port", p0, p1)...)
	return append(plan, diffObjects("segment", s0, s1)...)
}

// specFields is a service as its plan compares it: circuits by name, each
// circuit's storm control apart.
func specFields(s *model.ServiceSpec) any {
	out := struct {
		model.ServiceSpec
		Circuits []string                   `json:"circuits"`
		Storms   map[string]json.RawMessage `json:"circuit_storm,omitempty"`
	}{ServiceSpec: *s}
	for _, ci := range s.Circuits {
		out.Circuits = append(out.Circuits, ci.String())
		if ci.Storm != nil {
			if out.Storms == nil {
				out.Storms = map[string]json.RawMessage{}
			}
			out.Storms[ci.String()], _ = json.Marshal(ci.Storm)
		}
	}
	return out
}

// diffObjects compares two sets of objects of one kind by name: created,
// deleted, and updated with the fields that differ.
func diffObjects(kind string, before, after map[string]any) []model.PlanItem {
	var plan []model.PlanItem
	for _, name := range sortedUnion(before, after) {
		b, inB := before[name]
		a, inA := after[name]
		switch {
		case !inB:
			plan = append(plan, model.PlanItem{Kind: kind, Name: name, Action: model.ActionCreate})
		case !inA:
			plan = append(plan, model.PlanItem{Kind: kind, Name: name, Action: model.ActionDelete})
		default:
			if ch := fieldChanges(flatten(b), flatten(a)); len(ch) > 0 {
				plan = append(plan, model.PlanItem{Kind: kind, Name: name, Action: model.ActionUpdate, Changes: ch})
			}
		}
	}
	return plan
}

func sortedUnion(a, b map[string]any) []string {
	var out []string
	for k := range a {
		out = append(out, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// flatten is v's JSON form as dotted paths to its leaves (a list is a leaf).
func flatten(v any) map[string]any {
	out := map[string]any{}
	b, _ := json.Marshal(v)
	var tree any
	_ = json.Unmarshal(b, &tree)
	var walk func(prefix string, x any)
	walk = func(prefix string, x any) {
		if m, ok := x.(map[string]any); ok {
			for k, y := range m {
				if prefix != "" {
					k = prefix + "." + k
				}
				walk(k, y)
			}
			return
		}
		out[prefix] = x
	}
	walk("", tree)
	return out
}

func fieldChanges(before, after map[string]any) []model.FieldChange {
	var out []model.FieldChange
	for _, f := range sortedUnion(before, after) {
		x, _ := json.Marshal(before[f])
		y, _ := json.Marshal(after[f])
		if string(x) != string(y) {
			out = append(out, model.FieldChange{Field: f, From: before[f], To: after[f]})
		}
	}
	return out
}
