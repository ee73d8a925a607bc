package controller

import (
	"context"
	"encoding/json"
	"sort"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/e3fabric/e3fabric/control/internal/desired"
	"github.com/e3fabric/e3fabric/control/internal/labels"
	"github.com/e3fabric/e3fabric/control/internal/model"
	"github.com/e3fabric/e3fabric/control/internal/store"
)

// FabricSnapshotVersion is the format of model.FabricSnapshot this
// controller writes and reads.
const FabricSnapshotVersion = 1

// SaveSnapshot returns the whole intent of the fabric, with what was
// allocated for it: the topology, every service (spec, route, allocations)
// and every path check. Restoring it rebuilds the same datapath state.
func (c *Controller) SaveSnapshot(ctx context.Context) (*model.FabricSnapshot, error) {
	c.mu.Lock()
	st := c.leader
	if st == nil {
		c.mu.Unlock()
		var err error
		if st, err = load(ctx, c.opt, clientv3.Compare(clientv3.Version(store.SchemaKey), ">", 0)); err != nil {
			return nil, errorf(KindInternal, "%v", err)
		}
	} else {
		defer c.mu.Unlock()
	}
	s := &model.FabricSnapshot{Version: FabricSnapshotVersion, Topology: cloneTopo(st.topo)}
	for _, name := range keys(st.services) {
		rec := *st.services[name].rec
		var err error
		if rec.Allocs, err = allocsOf(st.alloc, &rec); err != nil {
			return nil, errorf(KindInternal, "%v", err)
		}
		s.Services = append(s.Services, rec)
	}
	for _, key := range keys(st.checks) {
		s.Checks = append(s.Checks, *st.checks[key].rec)
	}
	// A deep copy: the records stay the controller's.
	b, err := json.Marshal(s)
	if err != nil {
		return nil, errorf(KindInternal, "%v", err)
	}
	out := &model.FabricSnapshot{}
	if err := json.Unmarshal(b, out); err != nil {
		return nil, errorf(KindInternal, "%v", err)
	}
	for i := range out.Services {
		labels.SortAllocs(out.Services[i].Allocs)
	}
	for i := range out.Checks {
		labels.SortAllocs(out.Checks[i].Allocs)
	}
	return out, nil
}

// RestoreSnapshot makes the fabric what s describes, with s's labels and
// ids: its topology is imported, services that s does not have are
// deleted, and s's services are created (or rewritten) with their stored
// routes and allocations. A service already as in s is left alone.
func (c *Controller) RestoreSnapshot(ctx context.Context, s *model.FabricSnapshot) error {
	if s.Version != FabricSnapshotVersion {
		return errorf(KindInvalid, "snapshot version %d: this controller reads version %d", s.Version, FabricSnapshotVersion)
	}
	if s.Topology == nil {
		return errorf(KindInvalid, "snapshot has no topology")
	}
	for i := range s.Services {
		if err := s.Services[i].Spec.ValidateShape(); err != nil {
			return errorf(KindInvalid, "snapshot: %v", err)
		}
	}
	if err := c.ImportTopology(ctx, cloneTopo(s.Topology), nil); err != nil {
		return err
	}
	return c.withLeader(func(st *state) error { return c.restore(ctx, st, s) })
}

// restore makes the services s's, on a topology already s's.
func (c *Controller) restore(ctx context.Context, st *state, s *model.FabricSnapshot) error {
	want := map[string]*model.ServiceRecord{}
	for i := range s.Services {
		want[s.Services[i].Spec.Name] = &s.Services[i]
	}
	// Out of the way first, in a change of its own: every service that s
	// does not have as it is, so that their values are free for s's.
	del := newChange()
	for name, sv := range st.services {
		if w := want[name]; w == nil || !sameIntent(st.alloc, sv.rec, w) {
			del.del[name] = true
			del.assigners = append(del.assigners, release(st.alloc, sv.rec))
		}
	}
	if len(del.del) > 0 {
		if err := c.commit(ctx, st, del); err != nil {
			return err
		}
	}
	// s's checks, then its services with their own values. Whatever
	// fails gives back every value taken for s.
	ch := newChange()
	own := labels.New(nil)
	var held []model.Alloc
	fail := func(err error) error {
		ch.abort()
		for _, a := range held {
			st.alloc.Free(a.Node, a.Kind, a.Value)
		}
		return err
	}
	take := func(what string, allocs []model.Alloc) error {
		for _, a := range allocs {
			if err := own.Reserve(a.Node, a.Kind, a.Value); err != nil {
				return errorf(KindInvalid, "snapshot: %s: %v", what, err)
			}
			if err := st.alloc.Reserve(a.Node, a.Kind, a.Value); err != nil {
				return errorf(KindConflict, "snapshot: %s: %v", what, err)
			}
			held = append(held, a)
		}
		return nil
	}
	for i := range s.Checks {
		r := s.Checks[i]
		k := desired.Check{A: r.A, Z: r.Z, Path: r.Path}
		if st.checks[k.Key()] != nil {
			continue
		}
		if err := take("check "+k.Key(), r.Allocs); err != nil {
			return fail(err)
		}
		cs, as, err := buildCheck(st, k, r.Allocs, st.topo)
		if err != nil {
			return fail(errorf(KindInvalid, "snapshot: check %s: %v", k.Key(), err))
		}
		ch.assigners = append(ch.assigners, as)
		ch.newChecks[k.Key()] = cs
	}
	names := make([]string, 0, len(want))
	for name := range want {
		if st.services[name] == nil {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	full, live := c.graphs(st, st.topo)
	for _, name := range names {
		rec := want[name]
		if err := validate(st, &rec.Spec); err != nil {
			return fail(err)
		}
		if t := rec.Spec.Tenant; t != "" && st.tenants[t] == nil {
			return fail(errorf(KindNotFound, "service %s: tenant %s not found: create it before restoring", name, t))
		}
		if err := take("service "+name, rec.Allocs); err != nil {
			return fail(err)
		}
		if err := c.plan(st, ch, st.topo, full, live, rec.Spec, &svcState{rec: rec}, false); err != nil {
			return fail(err)
		}
	}
	if len(ch.put) == 0 && len(ch.newChecks) == 0 {
		return nil
	}
	if err := c.commit(ctx, st, ch); err != nil {
		for _, a := range held { // commit aborted the change's own values
			st.alloc.Free(a.Node, a.Kind, a.Value)
		}
		return err
	}
	return nil
}

// sameIntent: a service already as the snapshot has it.
func sameIntent(al *labels.Allocator, a, b *model.ServiceRecord) bool {
	allocs, err := allocsOf(al, a)
	if err != nil {
		return false
	}
	x, _ := json.Marshal(struct {
		S model.ServiceSpec
		A []model.Alloc
	}{a.Spec, labels.Sorted(allocs)})
	y, _ := json.Marshal(struct {
		S model.ServiceSpec
		A []model.Alloc
	}{b.Spec, labels.Sorted(b.Allocs)})
	return string(x) == string(y)
}
