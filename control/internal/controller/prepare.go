package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/e3fabric/e3fabric/control/internal/dpconfig"
	"github.com/e3fabric/e3fabric/control/internal/nodestate"
	"github.com/e3fabric/e3fabric/control/internal/store"
	"github.com/e3fabric/e3fabric/control/internal/topology"
)

// Make-before-break across nodes (docs/control-plane.md, "Two steps"). Each
// agent applies its node's part of a change as it sees it, so a head end
// could point at a new path before a transit node has its label, or still
// point at an old one after the transit node removed it. A change that
// re-points or removes anything is therefore written in up to three
// transactions. The first only adds, under keys of their own
// (nodestate.PrepareKey), what the change creates on each node and nothing
// forwards to yet: labels, plain NHLFEs and services new to the node. Once
// the agents of those nodes report it applied (or PrepareWait has passed),
// the second writes the change itself and replaces those keys by what the
// change removes that another node may still send to: labels and the plain
// NHLFEs they use. Once the agents report the second applied (or
// PrepareWait has passed), the third deletes them. The objects a node's own
// re-point needs beside these (its protected NHLFEs, its circuits) come
// with that re-point, which its agent orders.

// DefaultPrepareWait bounds how long a change waits for the agents to
// apply its first step: they take milliseconds, and one that has not
// reported by then does not hold the fabric's changes back.
const DefaultPrepareWait = time.Second

// preparing is what a change writes beside itself: its first step (the
// prepare keys' values) and what its second keeps until the third.
type preparing struct {
	vals   map[string]keyValue // first step
	nodes  map[string]bool     // the nodes of vals
	retire map[string]keyValue // kept by the second step, deleted by the third
}

// prepare returns what the change whose writes are w (made before st takes
// the change in) writes beside itself, or nil when it needs nothing: it
// re-points or removes nothing of a service that stays. gone names the
// services the change deletes, links the links it keeps (keptLinks): what
// it removes is kept for a third step only where its next hops stay.
func (c *Controller) prepare(ctx context.Context, w *keyWrites, gone map[string]bool, links map[uint32]bool) (*preparing, error) {
	var breaks bool
	var staying, stored []string // changed keys of services that stay; those with a stored value
	for k, v := range w.vals {
		name, ok := serviceOf(k, v.node)
		if !ok {
			continue
		}
		if v.b == nil {
			breaks = true // a service leaves a node
		}
		if gone[name] || w.st.services[name] == nil {
			continue // deleted, or new in this change: carries no traffic yet
		}
		staying = append(staying, k)
		if ok, _ := w.st.written.same(v.node, k, nil); ok {
			stored = append(stored, k)
		}
	}
	if len(stored) == 0 {
		return nil, nil // only new keys and deleted services: nothing is re-pointed
	}
	old, err := getValues(ctx, c.opt.Etcd, stored)
	if err != nil {
		return nil, err
	}
	p := &preparing{vals: map[string]keyValue{}, nodes: map[string]bool{}, retire: map[string]keyValue{}}
	for _, k := range staying {
		v := w.vals[k]
		name, _ := serviceOf(k, v.node)
		cur, was := &dpconfig.Fragment{}, &dpconfig.Fragment{}
		if v.b != nil {
			if cur, err = dpconfig.DecodeFragment(v.b); err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
		}
		if b, ok := old[k]; ok {
			if was, err = dpconfig.DecodeFragment(b); err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
		}
		if r := retirements(was, cur, links); r != nil {
			b, err := dpconfig.EncodeFragment(r)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			p.retire[nodestate.PrepareKey(v.node, name)] = keyValue{v.node, b}
		}
		if v.b == nil {
			continue
		}
		add, broke := additions(was, cur)
		breaks = breaks || broke
		if add == nil {
			continue
		}
		b, err := dpconfig.EncodeFragment(add)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		p.vals[nodestate.PrepareKey(v.node, name)] = keyValue{v.node, b}
		p.nodes[v.node] = true
	}
	if !breaks {
		clear(p.vals) // nothing is re-pointed: what is new needs no first step
	}
	if len(p.vals) == 0 && len(p.retire) == 0 {
		return nil, nil
	}
	return p, nil
}

// serviceOf names the service whose fragment on node key is, if it is one.
func serviceOf(key, node string) (string, bool) {
	return strings.CutPrefix(key, nodestate.DesiredNode(node)+nodestate.ServiceInfix)
}

// getValues reads keys, in transactions of at most 128 reads (etcd's
// default limit of operations per transaction).
func getValues(ctx context.Context, cli *clientv3.Client, keys []string) (map[string][]byte, error) {
	out := make(map[string][]byte, len(keys))
	for len(keys) > 0 {
		n := min(len(keys), 128)
		ops := make([]clientv3.Op, n)
		for i, k := range keys[:n] {
			ops[i] = clientv3.OpGet(k)
		}
		r, err := cli.Txn(ctx).Then(ops...).Commit()
		if err != nil {
			return nil, fmt.Errorf("etcd read: %w", err)
		}
		for _, rr := range r.Responses {
			for _, kv := range rr.GetResponseRange().Kvs {
				out[string(kv.Key)] = kv.Value
			}
		}
		keys = keys[n:]
	}
	return out, nil
}

// additions returns what cur creates that was does not have and nothing
// forwards to yet: plain NHLFEs, services (without what is not in place)
// and labels whose references are in place (in was or among them); nil if
// none. broke says
// whether cur changes or drops anything of was.
func additions(was, cur *dpconfig.Fragment) (add *dpconfig.Fragment, broke bool) {
	nhlfes := keyed(was.NHLFEs)
	for _, x := range was.ECMPs {
		nhlfes[x.Key()] = dpconfig.NHLFE{ID: x.ID}
	}
	services, labels := keyed(was.Services), keyed(was.Labels)
	broke = changed(was.NHLFEs, cur.NHLFEs) || changed(was.ECMPs, cur.ECMPs) ||
		changed(was.Services, cur.Services) || changed(was.Circuits, cur.Circuits) ||
		changed(was.Labels, cur.Labels)

	a := &dpconfig.Fragment{}
	have := func(id uint32) bool { _, ok := nhlfes[fmt.Sprint(id)]; return ok }
	for _, x := range cur.NHLFEs {
		if _, ok := nhlfes[x.Key()]; !ok && x.Protect == nil {
			a.NHLFEs = append(a.NHLFEs, x)
		}
	}
	for _, x := range a.NHLFEs {
		nhlfes[x.Key()] = x
	}
	for _, x := range cur.Services {
		if _, ok := services[x.Key()]; ok {
			continue
		}
		// New to the node: its labels need it. Without circuits it sends
		// nothing, so it goes without what is not in place yet (its
		// protected NHLFEs, which come with the second step).
		x.Remotes = slices.DeleteFunc(slices.Clone(x.Remotes), func(r dpconfig.Remote) bool { return !have(r.NHLFE) })
		x.Branches = slices.DeleteFunc(slices.Clone(x.Branches), func(id uint32) bool { return !have(id) })
		if x.NHLFE != nil && !have(*x.NHLFE) {
			x.NHLFE = nil
		}
		a.Services = append(a.Services, x)
		services[x.Key()] = x
	}
	for _, x := range cur.Labels {
		if !standsAlone(x, labels, services, have) {
			continue
		}
		a.Labels = append(a.Labels, x)
	}
	if len(a.NHLFEs)+len(a.Services)+len(a.Labels) == 0 {
		return nil, broke
	}
	return a, broke
}

// keptLinks returns the ids of the links a change keeps as they were (the
// same ends): those of the topology it imports (next; nil: it imports none)
// that the current one has too. A next hop is a link's.
func keptLinks(cur, next *topology.Topology) map[uint32]bool {
	out := map[uint32]bool{}
	if cur == nil {
		return out
	}
	was := map[int]string{}
	for _, l := range cur.Links {
		was[l.ID] = l.Name()
	}
	if next == nil {
		next = cur
	}
	for _, l := range next.Links {
		if was[l.ID] == l.Name() {
			out[uint32(l.ID)] = true
		}
	}
	return out
}

// retirements returns what was has and cur drops that another node may
// still send to while its agent applies the change: labels whose
// references stay in place (in cur, or among these), with the plain NHLFEs
// of was they need, on next hops of links that stay; nil if none. Labels
// that deliver to a circuit or a session, or to a service cur does not
// have, go with the change.
func retirements(was, cur *dpconfig.Fragment, links map[uint32]bool) *dpconfig.Fragment {
	if len(was.Labels) == 0 {
		return nil
	}
	now := keyed(cur.NHLFEs)
	for _, x := range cur.ECMPs {
		now[x.Key()] = dpconfig.NHLFE{ID: x.ID}
	}
	dropped := map[string]dpconfig.NHLFE{}
	for _, x := range was.NHLFEs {
		if _, ok := now[x.Key()]; !ok && x.Protect == nil && links[x.Nexthop] {
			dropped[x.Key()] = x
		}
	}
	in := func(id uint32) bool {
		k := fmt.Sprint(id)
		_, a := now[k]
		_, b := dropped[k]
		return a || b
	}
	labels, services := keyed(cur.Labels), keyed(cur.Services)
	r := &dpconfig.Fragment{}
	kept := map[uint32]bool{}
	keep := func(id uint32) {
		if x, ok := dropped[fmt.Sprint(id)]; ok && !kept[id] {
			kept[id] = true
			r.NHLFEs = append(r.NHLFEs, x)
		}
	}
	for _, x := range was.Labels {
		if !standsAlone(x, labels, services, in) {
			continue
		}
		r.Labels = append(r.Labels, x)
		if x.NHLFE != nil {
			keep(*x.NHLFE)
		}
		for _, id := range x.Branches {
			keep(id)
		}
	}
	if len(r.Labels) == 0 {
		return nil
	}
	return r
}

// standsAlone says whether label x, which one side of a change has, may be
// on the node in a step of its own (added before the change, or removed
// after it): the other side has no such label, x has no circuit or session
// (those come and go with the change), every NHLFE it uses is there (has)
// and its service, if any, is on the node.
func standsAlone(x dpconfig.Label, other map[string]dpconfig.Label, services map[string]dpconfig.Service, has func(uint32) bool) bool {
	if _, ok := other[x.Key()]; ok || x.Circuit != nil || x.Session != nil || !refsIn(has, x.NHLFE, x.Branches) {
		return false
	}
	if x.Service != nil {
		if _, ok := services[fmt.Sprint(*x.Service)]; !ok {
			return false
		}
	}
	return true
}

// refsIn says whether every NHLFE named (one, and the lists) is had.
func refsIn(had func(uint32) bool, one *uint32, lists ...[]uint32) bool {
	if one != nil && !had(*one) {
		return false
	}
	for _, l := range lists {
		for _, id := range l {
			if !had(id) {
				return false
			}
		}
	}
	return true
}

func keyed[T interface{ Key() string }](xs []T) map[string]T {
	m := make(map[string]T, len(xs))
	for _, x := range xs {
		m[x.Key()] = x
	}
	return m
}

// changed says whether cur changes or drops an object of was.
func changed[T interface {
	Key() string
	Equal(T) bool
}](was, cur []T) bool {
	now := keyed(cur)
	for _, x := range was {
		if y, ok := now[x.Key()]; !ok || !x.Equal(y) {
			return true
		}
	}
	return false
}

// writePrepared commits the first step as the next generation and waits
// until the agents of its nodes that are keeping up have applied it, at
// most PrepareWait; it returns those that did not. Its keys stay in
// st.prepared until a commit removes them: the change's own, or the next
// one.
func (c *Controller) writePrepared(ctx context.Context, st *state, p *preparing) ([]string, error) {
	gen := st.gen + 1
	ops := make([]clientv3.Op, 0, len(p.vals)+len(st.prepared)+len(p.nodes)+1)
	for k, v := range p.vals {
		ops = append(ops, clientv3.OpPut(k, string(v.b)))
	}
	var stale []string // a failed change's first step: its values may be handed out again
	for k, n := range st.prepared {
		if _, ok := p.vals[k]; !ok {
			ops = append(ops, clientv3.OpDelete(k))
			stale, p.nodes[n] = append(stale, k), true
		}
	}
	var wait []string
	for n := range p.nodes {
		ops = append(ops, clientv3.OpPut(nodestate.GenerationKey(n), fmt.Sprint(gen)))
		if st.keepingUp(n) {
			wait = append(wait, n)
		}
	}
	ops = append(ops, clientv3.OpPut(store.GenerationKey, fmt.Sprint(gen)))
	r, err := c.opt.Etcd.Txn(ctx).If(st.fence).Then(ops...).Commit()
	if err != nil {
		return nil, c.etcdFailed(err)
	}
	if !r.Succeeded {
		return nil, errorf(KindNotLeader, "lost leadership before writing")
	}
	for n := range p.nodes {
		st.nodeGen[n] = gen
	}
	for _, k := range stale {
		delete(st.prepared, k)
	}
	for k, v := range p.vals {
		st.prepared[k] = v.node
	}
	st.gen = gen
	late := c.awaitApplied(ctx, wait, gen, r.Header.Revision)
	if len(late) > 0 {
		c.metrics.steps.WithLabelValues("late").Inc()
		c.log.Warn("a change's first step not applied in time: writing the change", "generation", gen, "nodes", late)
		return late, nil
	}
	c.metrics.steps.WithLabelValues("applied").Inc()
	return nil, nil
}

// keepingUp says whether node's agent reports, without an error, the last
// generation written to it: a change waits only for such agents, so a
// dead or failing one holds nothing back.
func (st *state) keepingUp(node string) bool {
	s, ok := st.status[node]
	return ok && s.Error == "" && s.AppliedGeneration >= st.nodeGen[node]
}

// release is a change's third step: once the agents in wait have applied
// the change (committed at revision rev), or PrepareWait has passed, it
// deletes what the change's second step kept of what it removed (the
// prepare keys in st.prepared). A failure leaves them to the next change,
// which deletes them with its own writes.
func (c *Controller) release(ctx context.Context, st *state, wait []string, rev int64) {
	outcome := "applied"
	if late := c.awaitApplied(ctx, wait, st.gen, rev); len(late) > 0 {
		outcome = "late"
		c.log.Warn("a change not applied in time: removing what it replaced", "generation", st.gen, "nodes", late)
	}
	if err := c.dropPrepared(ctx, st); err != nil {
		c.log.Warn("a change's third step not written: the next change removes what it replaced", "err", err)
		return
	}
	c.metrics.held.WithLabelValues(outcome).Inc()
}

// awaitApplied waits until every node of nodes reports an applied
// generation of at least gen (statuses written after revision rev), at
// most PrepareWait; it returns the nodes that did not.
func (c *Controller) awaitApplied(ctx context.Context, nodes []string, gen, rev int64) []string {
	left := map[string]bool{}
	for _, n := range nodes {
		left[n] = true
	}
	if len(left) == 0 {
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, c.opt.PrepareWait)
	defer cancel()
	for wr := range c.opt.Etcd.Watch(wctx, nodestate.StatusPrefix, clientv3.WithPrefix(), clientv3.WithRev(rev+1)) {
		for _, ev := range wr.Events {
			node := string(ev.Kv.Key[len(nodestate.StatusPrefix):])
			var s nodestate.NodeStatus
			if left[node] && ev.Type == clientv3.EventTypePut && json.Unmarshal(ev.Kv.Value, &s) == nil &&
				s.AppliedGeneration >= gen {
				delete(left, node)
			}
		}
		if len(left) == 0 {
			return nil
		}
	}
	return keys(left)
}

// dropPrepared removes the prepare keys in st.prepared: a change's third
// step, or what a former leader left (it stopped between a change's
// steps). Their values are reserved by no record, so the allocator may
// hand them out again.
func (c *Controller) dropPrepared(ctx context.Context, st *state) error {
	if len(st.prepared) == 0 {
		return nil
	}
	gen := st.gen + 1
	ops := []clientv3.Op{clientv3.OpPut(store.GenerationKey, fmt.Sprint(gen))}
	nodes := map[string]bool{}
	for k, n := range st.prepared {
		ops = append(ops, clientv3.OpDelete(k))
		if !nodes[n] {
			nodes[n] = true
			ops = append(ops, clientv3.OpPut(nodestate.GenerationKey(n), fmt.Sprint(gen)))
		}
	}
	r, err := c.opt.Etcd.Txn(ctx).If(st.fence).Then(ops...).Commit()
	if err != nil {
		return fmt.Errorf("etcd transaction: %w", err)
	}
	if !r.Succeeded {
		return errors.New("lost leadership before removing prepare keys")
	}
	for n := range nodes {
		st.nodeGen[n] = gen
	}
	for k, n := range st.prepared {
		st.written.put(n, k, nil)
	}
	st.gen = gen
	clear(st.prepared)
	return nil
}
