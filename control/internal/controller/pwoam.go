package controller

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"sort"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/e3fabric/e3fabric/control/internal/model"
	"github.com/e3fabric/e3fabric/control/internal/nodestate"
	"github.com/e3fabric/e3fabric/control/internal/store"
	"github.com/e3fabric/e3fabric/control/internal/topology"
)

// Pseudowire ping and trace (docs/operations.md). The controller asks the
// origin node's agent, through a request key under its desired prefix on
// a short lease, to have its datapath send MPLS echo requests into the
// service's pseudowire; every datapath logs what it sees (sent, transit,
// egress, reply) and every agent reports its log in its status, where the
// controller reads the answers. The requests and replies travel in-band;
// only the report comes back through the control plane.

const (
	oamWait     = 3 * time.Second // how long the answers are waited for
	oamPoll     = 100 * time.Millisecond
	oamLeaseTTL = 30 // seconds the request key lives
	maxPings    = 10
)

// oamTarget is another end of the service, as the origin reaches it.
type oamTarget struct {
	node   string
	source uint16     // E-LAN: its source id at the origin
	path   model.Path // the path the requests take (trace)
}

// oamPlan picks the origin and the targets of a service's ping or trace.
func oamPlan(rec *model.ServiceRecord) (string, []oamTarget, error) {
	members := rec.Spec.Members()
	if len(rec.Route.Unreachable) > 0 {
		return "", nil, errorf(KindUnroutable, "service %s: members unreachable: %v", rec.Spec.Name, rec.Route.Unreachable)
	}
	if rec.Spec.Type == model.ELine {
		from := rec.Spec.Circuits[0].Node
		var to string
		for _, m := range members {
			if m != from {
				to = m
			}
		}
		if to == "" {
			return "", nil, errorf(KindInvalid, "service %s: both ends on %s: no pseudowire to ping", rec.Spec.Name, from)
		}
		var path model.Path
		if ps := activePaths(&rec.Route); len(ps) > 0 {
			path = ps[0]
		}
		return from, []oamTarget{{node: to, path: path}}, nil
	}
	from := members[0]
	var out []oamTarget
	for _, m := range members[1:] {
		t := oamTarget{node: m, source: rec.Route.Sources[m]}
		for _, u := range rec.Route.Unicast {
			if u.From == from && u.To == m {
				t.path = u.Path
			}
		}
		out = append(out, t)
	}
	return from, out, nil
}

// probeRun sends a request from node from and collects the events of its
// handle from every status until done says they are all in, or oamWait.
func (c *Controller) probeRun(ctx context.Context, from string, req nodestate.OAMRequest,
	done func(map[string][]nodestate.OAMEvent) bool) (map[string][]nodestate.OAMEvent, error) {
	etcd := c.opt.Etcd
	lease, err := etcd.Grant(ctx, oamLeaseTTL)
	if err != nil {
		return nil, errorf(KindInternal, "etcd lease: %v", err)
	}
	defer etcd.Revoke(context.WithoutCancel(ctx), lease.ID) // the keys go with it
	// The origin gets the probes; every other node the handle alone, so
	// that its agent reports the events of this handle and no other's.
	var topo topology.Topology
	if _, err := store.GetJSON(ctx, etcd, store.TopologyKey, &topo); err != nil {
		return nil, errorf(KindInternal, "%v", err)
	}
	b, _ := json.Marshal(req)
	watch, _ := json.Marshal(nodestate.OAMRequest{Handle: req.Handle, Service: req.Service})
	ops := []clientv3.Op{clientv3.OpPut(nodestate.OAMKey(from, req.Handle), string(b), clientv3.WithLease(lease.ID))}
	for _, n := range topo.Nodes {
		if n.Name != from {
			ops = append(ops, clientv3.OpPut(nodestate.OAMKey(n.Name, req.Handle), string(watch), clientv3.WithLease(lease.ID)))
		}
	}
	if _, err := etcd.Txn(ctx).Then(ops...).Commit(); err != nil {
		return nil, errorf(KindInternal, "etcd: %v", err)
	}
	deadline := time.Now().Add(oamWait)
	var got map[string][]nodestate.OAMEvent
	for {
		sts, _, err := store.Statuses(ctx, etcd)
		if err != nil {
			return nil, errorf(KindInternal, "etcd: %v", err)
		}
		got = map[string][]nodestate.OAMEvent{}
		for node, st := range sts {
			for _, e := range st.OAM {
				if e.Handle == req.Handle {
					got[node] = append(got[node], e)
				}
			}
		}
		if done(got) || time.Now().After(deadline) {
			return got, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(oamPoll):
		}
	}
}

// find is the event of kind and seq that node logged, if any.
func find(got map[string][]nodestate.OAMEvent, node, kind string, seq uint32) (nodestate.OAMEvent, bool) {
	for _, e := range got[node] {
		if e.Kind == kind && e.Seq == seq {
			return e, true
		}
	}
	return nodestate.OAMEvent{}, false
}

func ms(ns int64) *float64 {
	v := float64(ns) / 1e6
	return &v
}

// oamStart plans a ping or trace of service name: the origin, the
// targets, and a request with a new handle and no probes yet.
func (c *Controller) oamStart(ctx context.Context, name string) (string, []oamTarget, nodestate.OAMRequest, error) {
	rec, err := c.Service(ctx, name)
	if err != nil {
		return "", nil, nodestate.OAMRequest{}, err
	}
	from, targets, err := oamPlan(rec)
	return from, targets, nodestate.OAMRequest{Handle: rand.Uint32(), Service: rec.ID}, err
}

// Ping sends count requests from one end of the service to each other end.
func (c *Controller) Ping(ctx context.Context, name string, count int) (*model.PingResult, error) {
	if count < 1 || count > maxPings {
		return nil, errorf(KindInvalid, "count %d: want 1..%d", count, maxPings)
	}
	from, targets, req, err := c.oamStart(ctx, name)
	if err != nil {
		return nil, err
	}
	to := map[uint32]string{} // seq -> target
	for i := 0; i < count; i++ {
		for _, t := range targets {
			seq := uint32(len(req.Probes) + 1)
			req.Probes = append(req.Probes, nodestate.OAMProbe{Source: t.source, Seq: seq})
			to[seq] = t.node
		}
	}
	got, err := c.probeRun(ctx, from, req, func(got map[string][]nodestate.OAMEvent) bool {
		n := 0
		for _, e := range got[from] {
			if e.Kind == "reply" {
				n++
			}
		}
		return n == len(req.Probes)
	})
	if err != nil {
		return nil, err
	}
	out := &model.PingResult{Service: name, From: from, Handle: req.Handle, Sent: len(req.Probes)}
	for _, p := range req.Probes {
		r := model.PingReply{To: to[p.Seq], Seq: p.Seq}
		if e, ok := find(got, from, "reply", p.Seq); ok {
			r.RTTMS = ms(e.RTTNS)
			out.Received++
		}
		out.Replies = append(out.Replies, r)
	}
	return out, nil
}

// Trace sends, from one end of the service to each other end, one request
// per TTL up to the length of the path it takes.
func (c *Controller) Trace(ctx context.Context, name string) ([]model.TraceResult, error) {
	from, targets, req, err := c.oamStart(ctx, name)
	if err != nil {
		return nil, err
	}
	type probe struct {
		target int
		ttl    int
	}
	probes := map[uint32]probe{}
	for i, t := range targets {
		for ttl := 1; ttl <= max(len(t.path), 1); ttl++ {
			seq := uint32(len(req.Probes) + 1)
			req.Probes = append(req.Probes, nodestate.OAMProbe{Source: t.source, TTL: uint8(ttl), Seq: seq})
			probes[seq] = probe{i, ttl}
		}
	}
	// A probe is answered by the node where its TTL ran out, and at the
	// egress also by the reply back at the origin: the two come from
	// different agents' reports, in either order.
	answered := func(got map[string][]nodestate.OAMEvent, seq uint32) bool {
		for _, evs := range got {
			for _, e := range evs {
				if e.Seq == seq && e.Kind == "transit" {
					return true
				}
				if e.Seq == seq && e.Kind == "egress" {
					_, replied := find(got, from, "reply", seq)
					return replied
				}
			}
		}
		return false
	}
	got, err := c.probeRun(ctx, from, req, func(got map[string][]nodestate.OAMEvent) bool {
		for _, p := range req.Probes {
			if !answered(got, p.Seq) {
				return false
			}
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	out := make([]model.TraceResult, len(targets))
	for i, t := range targets {
		out[i] = model.TraceResult{Service: name, From: from, To: t.node}
	}
	nodes := make([]string, 0, len(got))
	for n := range got {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	for _, p := range req.Probes {
		pr := probes[p.Seq]
		hop := model.TraceHop{TTL: pr.ttl}
		sent, hasSent := find(got, from, "sent", p.Seq)
		for _, n := range nodes {
			for _, kind := range []string{"transit", "egress"} {
				if e, ok := find(got, n, kind, p.Seq); ok {
					hop.Node, hop.Kind, hop.LabelIn, hop.LabelOut = n, kind, e.LabelIn, e.LabelOut
					if hasSent {
						hop.TimeMS = ms(e.TimeNS - sent.TimeNS)
					}
				}
			}
		}
		if e, ok := find(got, from, "reply", p.Seq); ok {
			out[pr.target].RTTMS = ms(e.RTTNS)
		}
		out[pr.target].Hops = append(out[pr.target].Hops, hop)
	}
	return out, nil
}
