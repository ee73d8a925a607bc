package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/e3fabric/e3fabric/control/internal/desired"
	"github.com/e3fabric/e3fabric/control/internal/dpconfig"
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
	start     time.Time // when its computation began (metrics)
	// Encoded ahead of the commit (precoder): fragments, and records
	// but for their generations.
	encoded map[*desired.Fragment]encoded
	records map[*svcState]*model.StoredService
}

func newChange() *change {
	return &change{put: map[string]*svcState{}, del: map[string]bool{}, newChecks: map[string]*checkState{},
		start: time.Now()}
}

func (ch *change) abort() {
	for _, a := range ch.assigners {
		a.Abort()
	}
}

// build allocates the service id (fabric-wide) and the service's fragments.
func build(rec *model.ServiceRecord, as *labels.Assigner, watch desired.Watcher) (map[string]*desired.Fragment, error) {
	if err := assignID(rec, as); err != nil {
		return nil, err
	}
	return desired.Build(rec, as, watch)
}

func assignID(rec *model.ServiceRecord, as *labels.Assigner) error {
	id, err := as.Get("", labels.KindService, "id")
	if err != nil {
		return err
	}
	rec.ID = id
	return nil
}

func (st *state) put(s *svcState) {
	if s.nodes == nil {
		s.nodes = keys(s.frags)
	}
	st.services[s.rec.Spec.Name] = s
	for i, e := range s.deps {
		s.deps[i] = st.elem(e)
	}
	st.reserve(s, 1)
	st.commitMACs(&s.rec.Spec, 1)
	if p := s.rec.Spec.Paths; p != nil && p.DisjointFrom != "" {
		if st.disjointBy[p.DisjointFrom] == nil {
			st.disjointBy[p.DisjointFrom] = map[string]bool{}
		}
		st.disjointBy[p.DisjointFrom][s.rec.Spec.Name] = true
	}
	for _, e := range s.deps {
		if st.deps[e] == nil {
			st.deps[e] = map[string]struct{}{}
		}
		st.deps[e][s.rec.Spec.Name] = struct{}{}
	}
	for _, ci := range s.rec.Spec.Circuits {
		st.circuits[ci.Key()] = s.rec.Spec.Name
	}
	if mv := s.rec.Move; mv != nil {
		st.circuits[mv.To.Key()] = s.rec.Spec.Name
		st.moves[s.rec.Spec.Name] = true
	}
}

func (st *state) remove(name string) {
	s := st.services[name]
	if s == nil {
		return
	}
	st.reserve(s, -1)
	st.commitMACs(&s.rec.Spec, -1)
	if p := s.rec.Spec.Paths; p != nil && p.DisjointFrom != "" {
		delete(st.disjointBy[p.DisjointFrom], name)
	}
	for _, e := range s.deps {
		delete(st.deps[e], name)
	}
	for _, ci := range s.rec.Spec.Circuits {
		if st.circuits[ci.Key()] == name {
			delete(st.circuits, ci.Key())
		}
	}
	if mv := s.rec.Move; mv != nil && st.circuits[mv.To.Key()] == name {
		delete(st.circuits, mv.To.Key())
	}
	delete(st.moves, name)
	delete(st.services, name)
}

// graphs returns the full fabric and the live one (without what is down),
// costed for a new service. (With the load cost, route costs each
// existing service's graphs as it sees them.)
func (c *Controller) graphs(st *state, topo *topology.Topology) (full, live *paths.Graph) {
	if c.opt.LinkCost == CostLoad {
		return c.serviceGraphs(st, nil, topo, &model.ServiceSpec{}, nil)
	}
	g := &st.graphs
	if g.full == nil || g.topo != topo || !g.down.equal(st.down) {
		*g = graphCache{topo: topo, down: st.down, full: paths.New(topo, paths.Options{}),
			live: paths.New(topo, paths.Options{DownNodes: st.down.nodes, DownLinks: st.down.links,
				DownPorts: st.down.ports, Restoring: st.down.restoring})}
	}
	return g.full, g.live
}

// linksOf indexes topo's links by id, as model.LinksOf, keeping the index
// of the last topology asked for: a topology is replaced, never modified,
// and indexing every link of 8 x 128 twice was half a change's CPU.
func (st *state) linksOf(topo *topology.Topology) model.Links {
	if st.links.topo != topo {
		st.links = linkIndex{topo: topo, links: model.LinksOf(topo)}
	}
	return st.links.links
}

// linkIndex is the last topology's links by id (read-only once made).
type linkIndex struct {
	topo  *topology.Topology
	links model.Links
}

// graphCache keeps the last graphs built with declared costs. They depend
// only on the topology and what is down, so they serve every change until
// one of those moves, with the shortest-path trees and disjoint-path graphs
// they have cached. (A topology and a down view are replaced, never
// modified.)
type graphCache struct {
	topo       *topology.Topology
	down       downView
	full, live *paths.Graph
}

// activePaths: the route's active paths and its flood tree's edges (the
// load cost's view: ECMP's second legs are not counted).
func activePaths(r *model.Route) []model.Path {
	out := pointPaths(r, false)
	if len(r.Tree) > 0 {
		out = append(out, model.Path(r.Tree))
	}
	return out
}

// pointPaths: the route's active point-to-point paths (its E-Line path and
// each known-unicast path), with ECMP's second legs if ecmp.
func pointPaths(r *model.Route, ecmp bool) []model.Path {
	var out []model.Path
	switch r.Active {
	case "primary":
		out = append(out, r.Primary)
	case "backup":
		out = append(out, r.Backup)
	case "fallback":
		out = append(out, r.Fallback)
	}
	if ecmp && r.ECMP && r.Active != "fallback" {
		out = append(out, r.Backup)
	}
	for _, u := range r.Unicast {
		out = append(out, u.Path)
		if ecmp && u.ECMP {
			out = append(out, u.Backup)
		}
	}
	return out
}

// plan computes spec's route and fragments into ch. old is the service's
// current state or nil. With admit, a reservation that does not fit is
// refused (load.go).
func (c *Controller) plan(st *state, ch *change, topo *topology.Topology, full, live *paths.Graph, spec model.ServiceSpec, old *svcState, admit bool) error {
	route, err := c.route(st, ch, topo, full, live, &spec, old, admit)
	if err != nil {
		return err
	}
	return c.planRouted(st, ch, topo, spec, route, old)
}

// planRouted is plan with the route computed already.
func (c *Controller) planRouted(st *state, ch *change, topo *topology.Topology, spec model.ServiceSpec, route model.Route, old *svcState) error {
	var oldAllocs []model.Alloc
	if old != nil {
		var err error
		if oldAllocs, err = allocsOf(st.alloc, old.rec); err != nil {
			return errorf(KindInternal, "%v", err)
		}
	}
	st.paths.Route(&route)
	rec := &model.ServiceRecord{Spec: spec, Route: route}
	if old != nil {
		// A move in progress and the names of moved ends' labels outlive
		// a recomputation (move.go).
		rec.Peers = old.rec.Peers
		if mv := old.rec.Move; mv != nil && hasCircuit(&spec, mv.From) {
			rec.Move = mv
		}
	}
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
	keepValues(rec, as)
	ch.put[spec.Name] = &svcState{rec: rec, frags: frags, checks: distinct(checks), deps: deps(rec, st.down)}
	return nil
}

// parallel calls f(0) .. f(n-1) on GOMAXPROCS goroutines and returns when
// all have returned.
func parallel(n int, f func(i int)) { parallelOn(runtime.GOMAXPROCS(0), n, f) }

// parallelOn calls f(0) .. f(n-1) on at most workers goroutines: more than
// the CPUs where f waits on etcd.
func parallelOn(workers, n int, f func(i int)) {
	var wg sync.WaitGroup
	next := atomic.Int64{}
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(i)
			}
		}()
	}
	wg.Wait()
}

// deps lists the inputs of a service's route, as element keys (nodeElem,
// linkElem): its members, every node and link its paths and tree use, and
// what was down when the route was computed, since the route avoided it and
// may want it back. When none of these changes, recomputing the route
// gives the same route.
func deps(rec *model.ServiceRecord, down downView) []string {
	// Nodes and links first, their element keys once each: a route's
	// paths cross the same few dozen of them hundreds of times.
	nodes, links := map[string]bool{}, map[int]bool{}
	var ports []string
	for _, c := range rec.Spec.Circuits {
		nodes[c.Node] = true
		if c.Segment != "" {
			ports = append(ports, c.Node+":"+c.Port)
		}
	}
	r := &rec.Route
	hops := func(p []model.Hop) {
		for _, h := range p {
			links[h.Link], nodes[h.From], nodes[h.To] = true, true, true
		}
	}
	eachPath(r, hops)
	if mv := rec.Move; mv != nil {
		nodes[mv.To.Node] = true
	}
	for n := range down.nodes {
		nodes[n] = true
	}
	for l := range down.links {
		links[l] = true
	}
	for l := range down.restoring {
		links[l] = true
	}
	out := make([]string, 0, len(nodes)+len(links)+len(ports))
	for n := range nodes {
		out = append(out, nodeElem(n))
	}
	for l := range links {
		out = append(out, linkElem(l))
	}
	for _, p := range ports {
		out = append(out, portElem(p))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// eachPath calls fn with every path of r: its primary, backup and fallback,
// its tree's edges, its unicast paths and their backups, and those of a
// move's route to the new place.
func eachPath(r *model.Route, fn func(p []model.Hop)) {
	for ; r != nil; r = r.Move {
		fn(r.Primary)
		fn(r.Backup)
		fn(r.Fallback)
		fn(r.Tree)
		for _, u := range r.Unicast {
			fn(u.Path)
			fn(u.Backup)
		}
	}
}

// elem returns the state's copy of element key e: services share them.
func (st *state) elem(e string) string {
	if x, ok := st.elems[e]; ok {
		return x
	}
	st.elems[e] = e
	return e
}

// distinct sorts keys and drops repeats (a service's LSPs share checks).
func distinct(keys []string) []string {
	slices.Sort(keys)
	return slices.Clip(slices.Compact(keys))
}

func nodeElem(n string) string { return "node " + n }
func linkElem(l int) string    { return "link " + strconv.Itoa(l) }
func portElem(p string) string { return "port " + p }

// changed lists the elements whose state differs between two views.
func (v downView) changed(o downView) []string {
	var out []string
	for _, n := range symDiff(v.nodes, o.nodes) {
		out = append(out, nodeElem(n))
	}
	for _, l := range symDiff(v.links, o.links) {
		out = append(out, linkElem(l))
	}
	for _, l := range symDiff(v.restoring, o.restoring) {
		out = append(out, linkElem(l))
	}
	for _, p := range symDiff(v.ports, o.ports) {
		out = append(out, portElem(p))
	}
	return out
}

func symDiff[K comparable](a, b map[K]bool) []K {
	var out []K
	for k := range a {
		if !b[k] {
			out = append(out, k)
		}
	}
	for k := range b {
		if !a[k] {
			out = append(out, k)
		}
	}
	return out
}

// affected lists the services that depend on any of elems, and those
// loaded to be rewritten.
func (st *state) affected(elems []string) []string {
	set := map[string]bool{}
	for _, e := range elems {
		for n := range st.deps[e] {
			set[n] = true
		}
	}
	for n := range st.rebuilt {
		set[n] = true
	}
	return keys(set)
}

// recomputeAll recomputes every service (after a topology change, at the
// start of leadership, and in the periodic full pass) and commits those
// whose route changed. With ch non-nil (a topology change), the change is
// committed even if no route moved.
func (c *Controller) recomputeAll(ctx context.Context, st *state, ch *change) error {
	return c.recompute(ctx, st, ch, keys(st.services))
}

// recompute recomputes the named services and commits those whose route
// changed (all of them with a topology change, ch.topo).
func (c *Controller) recompute(ctx context.Context, st *state, ch *change, names []string) error {
	topo := st.topo
	force := ch != nil
	if ch == nil {
		ch = newChange()
	} else if ch.topo != nil {
		topo = ch.topo
	}
	full, live := c.graphs(st, topo)
	for _, name := range names {
		old := st.services[name]
		if old == nil {
			continue
		}
		route, err := c.route(st, ch, topo, full, live, &old.rec.Spec, old, false)
		if err != nil {
			// The topology no longer connects it: keep the service, down.
			c.log.Warn("service unroutable", "service", name, "err", err)
			continue
		}
		if reflect.DeepEqual(route, old.rec.Route) && ch.topo == nil && !st.rebuilt[name] {
			continue
		}
		if err := c.planRouted(st, ch, topo, old.rec.Spec, route, old); err != nil {
			ch.abort()
			return err
		}
	}
	if !force && len(ch.put) == 0 {
		return nil
	}
	return c.commit(ctx, st, ch)
}

// commit writes ch in one etcd transaction, fenced on leadership: the
// service and check records it changes, the desired keys whose value
// changes and the generation of every node that has one, the generation
// counter and the topology. Nothing else is written.
func (c *Controller) commit(ctx context.Context, st *state, ch *change) error {
	begin := time.Now()
	c.metrics.compute.Observe(begin.Sub(ch.start).Seconds())
	if err := c.admitRoom(st, ch); err != nil {
		ch.abort()
		return err
	}
	topo := st.topo
	if ch.topo != nil {
		topo = ch.topo
	}
	cp, err := c.planChecks(st, ch, topo)
	if err != nil {
		ch.abort()
		return errorf(KindInternal, "%v", err)
	}
	w := newKeyWrites(st)
	w.pre = ch.encoded
	for name := range ch.del {
		w.service(name, st.services[name].nodes, nil)
	}
	for name, s := range ch.put {
		var old []string
		if o := st.services[name]; o != nil {
			old = o.nodes
		}
		w.service(name, old, s.frags)
	}
	cp.writes(st, w)
	var gone []string // nodes the new topology no longer has
	if ch.topo != nil {
		for _, n := range topo.Nodes {
			w.set(n.Name, nodestate.BaseKey(n.Name), desired.Base(topo, n.Name))
		}
		for _, n := range st.topo.Nodes {
			if !topo.HasNode(n.Name) {
				gone = append(gone, n.Name)
			}
		}
	}
	if err := w.encode(); err != nil {
		ch.abort()
		return errorf(KindInternal, "%v", err)
	}
	step, err := c.prepare(ctx, w, ch.del, keptLinks(st.topo, ch.topo))
	if err != nil {
		ch.abort()
		return err
	}
	up := map[string]bool{} // the agents a third step waits for: those keeping up
	if step != nil && len(step.retire) > 0 {
		for n := range w.nodes {
			if st.keepingUp(n) {
				up[n] = true
			}
		}
	}
	if step != nil && len(step.vals) > 0 {
		late, err := c.writePrepared(ctx, st, step)
		if err != nil {
			ch.abort()
			return err
		}
		for _, n := range late {
			delete(up, n)
		}
	}
	for k, n := range st.prepared { // removed with the change they prepared
		w.vals[k], w.nodes[n] = keyValue{n, nil}, true
	}
	if step != nil {
		for k, v := range step.retire {
			w.vals[k], w.nodes[v.node] = v, true
		}
	}
	gen := st.gen + 1
	ops, err := cp.ops()
	if err != nil {
		ch.abort()
		return errorf(KindInternal, "%v", err)
	}
	ops = append(ops, w.ops(gen, gone)...)
	for name := range ch.del {
		ops = append(ops, clientv3.OpDelete(store.ServiceKey(name)))
	}
	puts := make([]*svcState, 0, len(ch.put))
	for _, s := range ch.put {
		s.rec.Generation = gen
		s.rec.NodeGenerations = map[string]int64{}
		for n := range s.frags {
			if w.nodes[n] {
				s.rec.NodeGenerations[n] = gen
			} else {
				s.rec.NodeGenerations[n] = st.nodeGen[n]
			}
		}
		puts = append(puts, s)
	}
	recs := make([][]byte, len(puts))
	errs := make([]error, len(puts))
	links := st.linksOf(topo)
	parallel(len(puts), func(i int) {
		out := ch.records[puts[i]]
		if out == nil {
			out = storedForm(puts[i], links)
		}
		recs[i], errs[i] = encodeRecord(puts[i], out)
	})
	if err := errors.Join(errs...); err != nil {
		ch.abort()
		return errorf(KindInternal, "%v", err)
	}
	for i, s := range puts {
		ops = append(ops, clientv3.OpPut(store.ServiceKey(s.rec.Spec.Name), string(recs[i])))
	}
	if ch.topo != nil {
		b, _ := json.Marshal(ch.topo)
		ops = append(ops, clientv3.OpPut(store.TopologyKey, string(b)))
	}
	ops = append(ops, clientv3.OpPut(store.GenerationKey, fmt.Sprint(gen)))
	r, err := c.opt.Etcd.Txn(ctx).If(st.fence).Then(ops...).Commit()
	if err != nil {
		ch.abort()
		return c.etcdFailed(err)
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
		st.meter.Forget(name)
		delete(st.movedAt, name)
	}
	for name, s := range ch.put {
		st.remove(name)
		st.put(s)
		s.frags = nil // written: etcd holds them
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
	w.apply(gen, gone)
	clear(st.prepared)
	if ch.topo != nil {
		st.topo = ch.topo
	}
	st.gen = gen
	st.committed = time.Now()
	c.metrics.commit.Observe(st.committed.Sub(begin).Seconds())
	c.log.Info("committed", "generation", gen, "services", len(ch.put), "deleted", len(ch.del),
		"nodes", len(w.nodes), "keys", len(w.vals))
	if step != nil && len(step.retire) > 0 {
		for k, v := range step.retire {
			st.prepared[k] = v.node
		}
		// The change is stored: its caller leaving does not stop the rest.
		c.release(context.WithoutCancel(ctx), st, keys(up), r.Header.Revision)
	}
	return nil
}

// keyWrites collects a commit's writes of desired keys: only the keys whose
// value changes (st.written holds a digest of every stored value), and the
// nodes they belong to, whose generation the commit moves on.
type keyWrites struct {
	st      *state
	pending map[string]pendingKey // set, not yet encoded
	vals    map[string]keyValue   // key -> new value
	nodes   map[string]bool
	pre     map[*desired.Fragment]encoded // encodings made already
}

type keyValue struct {
	node string
	b    []byte // nil deletes
}

type pendingKey struct {
	node string
	f    *desired.Fragment // nil: delete
}

func newKeyWrites(st *state) *keyWrites {
	return &keyWrites{st: st, pending: map[string]pendingKey{}, vals: map[string]keyValue{}, nodes: map[string]bool{}}
}

// set makes key (of node) hold f, or not exist when f is nil; the last set
// of a key wins. It takes effect at encode.
func (w *keyWrites) set(node, key string, f *desired.Fragment) {
	w.pending[key] = pendingKey{node, f}
}

// encode encodes the keys set, on every CPU (a batch of services has
// thousands), and keeps those whose stored value changes.
func (w *keyWrites) encode() error {
	type job struct {
		key string
		p   pendingKey
		b   []byte
		err error
	}
	jobs := make([]job, 0, len(w.pending))
	for k, p := range w.pending {
		jobs = append(jobs, job{key: k, p: p})
	}
	parallel(len(jobs), func(i int) {
		f := jobs[i].p.f
		if f == nil {
			return // a delete
		}
		e, ok := w.pre[f]
		if !ok {
			e.b, e.err = dpconfig.EncodeFragment(f)
		}
		jobs[i].b, jobs[i].err = e.b, e.err
	})
	var errs []error
	for _, j := range jobs {
		stored, same := w.st.written.same(j.p.node, j.key, j.b)
		switch {
		case j.err != nil:
			errs = append(errs, fmt.Errorf("%s: %w", j.key, j.err))
		case j.p.f == nil:
			if stored {
				w.vals[j.key], w.nodes[j.p.node] = keyValue{j.p.node, nil}, true
			}
		case !same:
			w.vals[j.key], w.nodes[j.p.node] = keyValue{j.p.node, j.b}, true
		}
	}
	w.pending = map[string]pendingKey{}
	return errors.Join(errs...)
}

// service writes a service's fragments: old as stored, cur as they become.
func (w *keyWrites) service(name string, old []string, cur map[string]*desired.Fragment) {
	for _, n := range old {
		if _, ok := cur[n]; !ok {
			w.set(n, nodestate.ServiceKey(n, name), nil)
		}
	}
	for n, f := range cur {
		w.set(n, nodestate.ServiceKey(n, name), f)
	}
}

// ops returns the etcd operations: the keys, each changed node's
// generation, and the removal of every key of the nodes gone.
func (w *keyWrites) ops(gen int64, gone []string) []clientv3.Op {
	ops := make([]clientv3.Op, 0, len(w.vals)+len(w.nodes)+len(gone))
	for k, v := range w.vals {
		if v.b == nil {
			ops = append(ops, clientv3.OpDelete(k))
		} else {
			ops = append(ops, clientv3.OpPut(k, string(v.b)))
		}
	}
	for n := range w.nodes {
		if !slices.Contains(gone, n) {
			ops = append(ops, clientv3.OpPut(nodestate.GenerationKey(n), fmt.Sprint(gen)))
		}
	}
	for _, n := range gone {
		ops = append(ops, clientv3.OpDelete(nodestate.DesiredNode(n), clientv3.WithPrefix()))
	}
	return ops
}

// apply records what the committed transaction stored.
func (w *keyWrites) apply(gen int64, gone []string) {
	st := w.st
	for k, v := range w.vals {
		st.written.put(v.node, k, v.b)
	}
	for n := range w.nodes {
		st.nodeGen[n] = gen
	}
	for _, n := range gone {
		delete(st.nodeGen, n)
		st.written.dropNode(n)
	}
}
