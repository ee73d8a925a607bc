package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/e3fabric/e3fabric/control/internal/desired"
	"github.com/e3fabric/e3fabric/control/internal/labels"
	"github.com/e3fabric/e3fabric/control/internal/model"
	"github.com/e3fabric/e3fabric/control/internal/nodestate"
	"github.com/e3fabric/e3fabric/control/internal/paths"
	"github.com/e3fabric/e3fabric/control/internal/store"
	"github.com/e3fabric/e3fabric/control/internal/topology"
)

// change is one transaction's worth of new state.
type change struct {
	topo      *topology.Topology   // new topology, or nil
	put       map[string]*svcState // new or changed services
	del       map[string]bool      // deleted services
	newChecks map[string]*checkState
	assigners []*labels.Assigner
}

func newChange() *change {
	return &change{put: map[string]*svcState{}, del: map[string]bool{}, newChecks: map[string]*checkState{}}
}

func (ch *change) abort() {
	for _, a := range ch.assigners {
		a.Abort()
	}
}

// build allocates the service id (fabric-wide) and the service's fragments.
func build(rec *model.ServiceRecord, as *labels.Assigner, watch desired.Watcher) (map[string]*desired.Fragment, error) {
	id, err := as.Get("", labels.KindService, "id")
	if err != nil {
		return nil, err
	}
	rec.ID = id
	return desired.Build(rec, as, watch)
}

func (st *state) put(s *svcState) {
	st.services[s.rec.Spec.Name] = s
	for n := range s.frags {
		if st.byNode[n] == nil {
			st.byNode[n] = map[string]bool{}
		}
		st.byNode[n][s.rec.Spec.Name] = true
	}
	for _, ci := range s.rec.Spec.Circuits {
		st.circuits[ci] = s.rec.Spec.Name
	}
}

func (st *state) remove(name string) {
	s := st.services[name]
	if s == nil {
		return
	}
	for n := range s.frags {
		delete(st.byNode[n], name)
	}
	for _, ci := range s.rec.Spec.Circuits {
		if st.circuits[ci] == name {
			delete(st.circuits, ci)
		}
	}
	delete(st.services, name)
}

// graphs returns the full fabric and the live one (without what is down).
func (c *Controller) graphs(st *state, topo *topology.Topology, skip map[string]bool) (full, live *paths.Graph) {
	cost := c.costFunc(st, topo, skip)
	full = paths.New(topo, paths.Options{Cost: cost})
	live = paths.New(topo, paths.Options{Cost: cost, DownNodes: st.down.nodes, DownLinks: st.down.links})
	return full, live
}

// costFunc is nil for hop count (declared costs), or the load cost: the
// declared cost times 1 + 10 x utilisation, where utilisation is the declared
// bandwidth of the services whose paths use the link (other than skip)
// over its capacity.
func (c *Controller) costFunc(st *state, topo *topology.Topology, skip map[string]bool) func(topology.Link) int64 {
	if c.opt.LinkCost != CostLoad {
		return nil
	}
	used := map[int]int64{}
	for name, s := range st.services {
		if skip[name] {
			continue
		}
		bw := int64(s.rec.Spec.BandwidthMbps)
		if bw == 0 {
			bw = DefaultBandwidthMbps
		}
		for _, p := range activePaths(&s.rec.Route) {
			for _, h := range p {
				used[h.Link] += bw
			}
		}
	}
	return func(l topology.Link) int64 {
		return int64(l.Cost) * (1 + 10*used[l.ID]/int64(l.CapacityMbps))
	}
}

func activePaths(r *model.Route) []model.Path {
	var out []model.Path
	switch r.Active {
	case "primary":
		out = append(out, r.Primary)
	case "backup":
		out = append(out, r.Backup)
	case "fallback":
		out = append(out, r.Fallback)
	}
	for _, u := range r.Unicast {
		out = append(out, u.Path)
	}
	if len(r.Tree) > 0 {
		out = append(out, model.Path(r.Tree))
	}
	return out
}

// plan computes spec's route and fragments into ch. old is the service's
// current state or nil.
func (c *Controller) plan(st *state, ch *change, topo *topology.Topology, full, live *paths.Graph, spec model.ServiceSpec, old *svcState) error {
	var oldRoute *model.Route
	var oldAllocs []model.Alloc
	if old != nil {
		oldRoute, oldAllocs = &old.rec.Route, old.rec.Allocs
	}
	route, err := desired.Route(&spec, full, live, oldRoute)
	if err != nil {
		return errorf(KindUnroutable, "%v", err)
	}
	rec := &model.ServiceRecord{Spec: spec, Route: route}
	as := st.alloc.NewAssigner(oldAllocs)
	var checks []string
	frags, err := build(rec, as, st.watcher(ch, topo, &checks))
	if err != nil {
		as.Abort()
		if errors.Is(err, labels.ErrExhausted) {
			return errorf(KindExhausted, "%v", err)
		}
		return errorf(KindInternal, "%v", err)
	}
	ch.assigners = append(ch.assigners, as)
	rec.Allocs = as.Allocs()
	ch.put[spec.Name] = &svcState{rec: rec, frags: frags, checks: checks}
	return nil
}

// recomputeAll recomputes every service (after a topology or status
// change) and commits those whose route changed. With ch non-nil (a
// topology change), the change is committed even if no route moved.
func (c *Controller) recomputeAll(ctx context.Context, st *state, ch *change) error {
	topo := st.topo
	force := ch != nil
	if ch == nil {
		ch = newChange()
	} else if ch.topo != nil {
		topo = ch.topo
	}
	full, live := c.graphs(st, topo, nil)
	names := make([]string, 0, len(st.services))
	for n := range st.services {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		old := st.services[name]
		route, err := desired.Route(&old.rec.Spec, full, live, &old.rec.Route)
		if err == nil && reflect.DeepEqual(route, old.rec.Route) && ch.topo == nil && !st.rebuilt[name] {
			continue
		}
		if err != nil {
			// The topology no longer connects it: keep the service, down.
			c.log.Warn("service unroutable", "service", name, "err", err)
		}
		if err := c.plan(st, ch, topo, full, live, old.rec.Spec, old); err != nil {
			if KindOf(err) == KindUnroutable {
				continue
			}
			ch.abort()
			return err
		}
	}
	if !force && len(ch.put) == 0 {
		return nil
	}
	return c.commit(ctx, st, ch)
}

// commit writes ch in one etcd transaction, fenced on leadership: service
// records, the desired config of every node whose config changed (all with
// the new generation), the generation counter and the topology.
func (c *Controller) commit(ctx context.Context, st *state, ch *change) error {
	topo := st.topo
	if ch.topo != nil {
		topo = ch.topo
	}
	gen := st.gen + 1
	affected := map[string]bool{}
	for name := range ch.del {
		for n := range st.services[name].frags {
			affected[n] = true
		}
	}
	for name, s := range ch.put {
		if old := st.services[name]; old != nil {
			for n := range old.frags {
				affected[n] = true
			}
		}
		for n := range s.frags {
			affected[n] = true
		}
	}
	if ch.topo != nil {
		for _, n := range st.topo.Nodes {
			affected[n.Name] = true
		}
		for _, n := range topo.Nodes {
			affected[n.Name] = true
		}
	}
	cp, err := c.planChecks(st, ch, topo)
	if err != nil {
		ch.abort()
		return errorf(KindInternal, "%v", err)
	}
	cp.nodes(st, affected)
	ops, err := cp.ops()
	if err != nil {
		ch.abort()
		return errorf(KindInternal, "%v", err)
	}
	newGen := map[string]int64{}
	newWritten := map[string][]byte{}
	for node := range affected {
		if !topo.HasNode(node) {
			ops = append(ops, clientv3.OpDelete(nodestate.DesiredKey(node)))
			continue
		}
		cfg := desired.Assemble(topo, node, append(c.fragsAt(st, ch, node), cp.fragsAt(st, node)...))
		b, err := json.Marshal(cfg)
		if err != nil {
			ch.abort()
			return errorf(KindInternal, "node %s config: %v", node, err)
		}
		if string(b) == string(st.written[node]) {
			continue
		}
		d, _ := json.Marshal(struct {
			Generation int64           `json:"generation"`
			Config     json.RawMessage `json:"config"`
		}{gen, b})
		ops = append(ops, clientv3.OpPut(nodestate.DesiredKey(node), string(d)))
		newGen[node], newWritten[node] = gen, b
	}
	for name := range ch.del {
		ops = append(ops, clientv3.OpDelete(store.ServiceKey(name)))
	}
	for name, s := range ch.put {
		s.rec.Generation = gen
		s.rec.NodeGenerations = map[string]int64{}
		for n := range s.frags {
			if g, ok := newGen[n]; ok {
				s.rec.NodeGenerations[n] = g
			} else {
				s.rec.NodeGenerations[n] = st.nodeGen[n]
			}
		}
		b, err := json.Marshal(s.rec)
		if err != nil {
			ch.abort()
			return errorf(KindInternal, "service %s: %v", name, err)
		}
		ops = append(ops, clientv3.OpPut(store.ServiceKey(name), string(b)))
	}
	if ch.topo != nil {
		b, _ := json.Marshal(ch.topo)
		ops = append(ops, clientv3.OpPut(store.TopologyKey, string(b)))
	}
	ops = append(ops, clientv3.OpPut(store.GenerationKey, fmt.Sprint(gen)))
	r, err := c.opt.Etcd.Txn(ctx).If(st.fence).Then(ops...).Commit()
	if err != nil {
		ch.abort()
		return errorf(KindInternal, "etcd transaction: %v", err)
	}
	if !r.Succeeded {
		ch.abort()
		return errorf(KindNotLeader, "lost leadership before writing")
	}
	for _, a := range ch.assigners {
		a.Commit()
	}
	for name := range ch.del {
		st.remove(name)
	}
	for name, s := range ch.put {
		st.remove(name)
		st.put(s)
		delete(st.rebuilt, name)
	}
	cp.apply(st)
	for k, cs := range ch.newChecks {
		if cp.put[k] == nil { // created for a plan this change replaced
			for _, a := range cs.rec.Allocs {
				st.alloc.Free(a.Node, a.Kind, a.Value)
			}
		}
	}
	if ch.topo != nil {
		st.topo = ch.topo
		for node := range affected {
			if !topo.HasNode(node) {
				delete(st.nodeGen, node)
				delete(st.written, node)
			}
		}
	}
	for n, g := range newGen {
		st.nodeGen[n], st.written[n] = g, newWritten[n]
	}
	st.gen = gen
	c.log.Info("committed", "generation", gen, "services", len(ch.put), "deleted", len(ch.del), "nodes", len(newGen))
	return nil
}

// fragsAt lists the fragments node will hold once ch is applied, in service
// name order.
func (c *Controller) fragsAt(st *state, ch *change, node string) []*desired.Fragment {
	names := map[string]bool{}
	for n := range st.byNode[node] {
		if !ch.del[n] && ch.put[n] == nil {
			names[n] = true
		}
	}
	for n, s := range ch.put {
		if _, ok := s.frags[node]; ok {
			names[n] = true
		}
	}
	sorted := keys(names)
	out := make([]*desired.Fragment, 0, len(sorted))
	for _, n := range sorted {
		if s := ch.put[n]; s != nil {
			out = append(out, s.frags[node])
			continue
		}
		out = append(out, st.services[n].frags[node])
	}
	return out
}
