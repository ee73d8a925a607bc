package controller

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/e3fabric/e3fabric/control/internal/desired"
	"github.com/e3fabric/e3fabric/control/internal/linkload"
	"github.com/e3fabric/e3fabric/control/internal/model"
	"github.com/e3fabric/e3fabric/control/internal/paths"
	"github.com/e3fabric/e3fabric/control/internal/topology"
)

// Bandwidth reservations, admission and the load cost
// (docs/control-plane.md, "Link cost" and "Bandwidth").
//
// A service's bandwidth_mbps is reserved on every link its route crosses:
// primary, backup, fallback, unicast paths and their backups, flood tree.
// A service asking for one is routed only over links with that much
// capacity left, and refused (naming the tightest link) where its route
// would lose a path or a backup for want of capacity.
//
// With the load cost, each service is routed on costs as it sees them:
// every link's smoothed measured load plus its reservations, with the
// service's own traffic and reservation taken off the links it uses and
// put on every link, as if it used it. A service's current links cost
// Gain less (all of them, after a load move, for Hold), so a path moves
// only for a real gain, and a service never chases its own traffic.

// routeLinks is every link r's paths, backups and tree cross (and, during
// a move, its route to the new place's).
func routeLinks(r *model.Route) map[int]bool {
	out := map[int]bool{}
	eachPath(r, func(p []model.Hop) {
		for _, h := range p {
			out[h.Link] = true
		}
	})
	return out
}

// activeLinks is the links r's traffic takes now: its active paths and
// its tree.
func activeLinks(r *model.Route) map[int]bool {
	out := map[int]bool{}
	for _, p := range activePaths(r) {
		for _, h := range p {
			out[h.Link] = true
		}
	}
	return out
}

// reserve adds s's reservation to st.reserved (sign 1) or takes it off (-1).
func (st *state) reserve(s *svcState, sign int64) { addReservation(st.reserved, s, sign) }

// addReservation adds s's bandwidth to res on every link of its route
// (sign 1), or takes it off (-1).
func addReservation(res map[int]int64, s *svcState, sign int64) {
	bw := int64(s.rec.Spec.BandwidthMbps)
	if bw == 0 {
		return
	}
	for l := range routeLinks(&s.rec.Route) {
		res[l] += sign * bw
	}
}

// headroom is what each link of topo has left for service name: its
// capacity less the reservations of every other service, as ch would
// leave them.
func (st *state) headroom(ch *change, topo *topology.Topology, name string) map[int]int64 {
	res := maps.Clone(st.reserved)
	add := func(s *svcState, sign int64) { addReservation(res, s, sign) }
	if old := st.services[name]; old != nil {
		add(old, -1)
	}
	for n := range ch.del {
		if o := st.services[n]; o != nil && n != name {
			add(o, -1)
		}
	}
	for n, s := range ch.put {
		if n == name {
			continue
		}
		if o := st.services[n]; o != nil {
			add(o, -1)
		}
		add(s, 1)
	}
	left := make(map[int]int64, len(topo.Links))
	for _, l := range topo.Links {
		left[l.ID] = int64(l.CapacityMbps) - res[l.ID]
	}
	return left
}

// route computes spec's route: on full and live, or with the load cost on
// graphs costed as the service sees them. With admit, a service that
// reserves bandwidth is routed over the links with room for it, or
// refused.
func (c *Controller) route(st *state, ch *change, topo *topology.Topology, full, live *paths.Graph, spec *model.ServiceSpec, old *svcState, admit bool) (model.Route, error) {
	var oldRoute *model.Route
	if old != nil {
		oldRoute = &old.rec.Route
	}
	if c.opt.LinkCost == CostLoad || spec.Paths != nil {
		full, live = c.serviceGraphs(st, ch, topo, spec, old)
	}
	route, err := desired.Route(spec, full, live, oldRoute)
	if err == nil && old != nil && old.rec.Move != nil && hasCircuit(spec, old.rec.Move.From) {
		// A move in progress: the route to the new place, computed as
		// it will be once the move is done (move.go).
		leg, lerr := desired.Route(moved(spec, old.rec.Move), full, live, nil)
		if lerr != nil {
			return route, errorf(KindUnroutable, "%v", lerr)
		}
		route.Move = &leg
	}
	if err != nil {
		if spec.Paths != nil {
			return route, errorf(KindUnroutable, "%v (within its path constraints: %s)", err, spec.Paths)
		}
		return route, errorf(KindUnroutable, "%v", err)
	}
	bw := int64(spec.BandwidthMbps)
	if bw == 0 {
		return route, nil
	}
	left := st.headroom(ch, topo, spec.Name)
	tight := map[int]bool{}
	for id, l := range left {
		if l < bw {
			tight[id] = true
		}
	}
	if len(tight) == 0 {
		return route, nil
	}
	fit, err := desired.Route(spec, full.Without(tight), live.Without(tight), oldRoute)
	if err == nil && covers(&fit, &route) {
		return fit, nil
	}
	if !admit {
		return route, nil // already admitted: over-subscribed rather than down
	}
	ids := slices.Sorted(maps.Keys(routeLinks(&route)))
	worst := ids[0]
	for _, id := range ids {
		if left[id] < left[worst] {
			worst = id
		}
	}
	l, _ := topo.LinkByID(worst)
	return route, errorf(KindNoBandwidth, "service %s: bandwidth_mbps %d does not fit: link %s has %d of its %d Mbps left",
		spec.Name, bw, l.Name(), max(left[worst], 0), l.CapacityMbps)
}

// covers says whether fit keeps every path and backup that route has.
func covers(fit, route *model.Route) bool {
	backups := func(r *model.Route) (n int) {
		for _, u := range r.Unicast {
			if len(u.Backup) > 0 {
				n++
			}
		}
		return n
	}
	return len(fit.Unreachable) <= len(route.Unreachable) &&
		(len(fit.Backup) > 0 || len(route.Backup) == 0) &&
		len(fit.Unicast) >= len(route.Unicast) && backups(fit) >= backups(route)
}

// loadCost is each link's load cost as spec's service sees it: others'
// measured traffic and reservations, plus its own, on every link. If
// sticky, the links its traffic takes now (active paths, tree) cost Gain
// less, or as if idle within Hold of a load move.
func (c *Controller) loadCost(st *state, spec *model.ServiceSpec, old *svcState, now time.Time, sticky bool) func(topology.Link) int64 {
	need := float64(spec.BandwidthMbps)
	var own, ownBW float64
	var active, reservedOn map[int]bool
	if old != nil {
		own = st.meter.Service(spec.Name)
		ownBW = float64(old.rec.Spec.BandwidthMbps)
		active, reservedOn = activeLinks(&old.rec.Route), routeLinks(&old.rec.Route)
	}
	held := sticky && now.Sub(st.movedAt[spec.Name]) < c.opt.ReoptimizeHold
	gain := c.opt.ReoptimizeGain
	return func(l topology.Link) int64 {
		load, others := st.meter.Link(l)+st.shift[l.ID], float64(st.reserved[l.ID])
		if reservedOn[l.ID] {
			others -= ownBW
		}
		if !active[l.ID] {
			return linkload.Cost(l.Cost, l.CapacityMbps, load+others+own+need)
		}
		if held {
			return linkload.Cost(l.Cost, l.CapacityMbps, 0)
		}
		cost := linkload.Cost(l.Cost, l.CapacityMbps, max(load-own, 0)+others+own+need)
		if sticky {
			cost -= int64(float64(cost) * gain)
		}
		return cost
	}
}

// Reoptimize runs one pass of the load cost's re-optimisation now and
// commits its moves; it returns how many services moved.
func (c *Controller) Reoptimize(ctx context.Context) (moved int, err error) {
	return c.reoptimizeAt(ctx, time.Now())
}

func (c *Controller) reoptimizeAt(ctx context.Context, now time.Time) (moved int, err error) {
	err = c.withLeader(func(st *state) error {
		ch, events, err := c.reoptimize(st, now)
		if err != nil || ch == nil || len(ch.put) == 0 {
			return err
		}
		if err := c.commit(ctx, st, ch); err != nil {
			return err
		}
		for name := range ch.put {
			st.movedAt[name] = now
		}
		st.settleUntil = now.Add(3 * c.opt.LoadWindow)
		c.record(events...)
		moved = len(ch.put)
		return nil
	})
	return moved, err
}

// reoptimize is one pass of the load cost's re-optimisation: every
// service not moved within Hold is routed again on the current load, and
// those whose route changes move, make-before-break, in one transaction.
// Each move is accounted in the load the next services see (st.shift)
// until the measurements catch up, which the next pass waits for (three
// averaging windows). It returns the change and an event per move.
func (c *Controller) reoptimize(st *state, now time.Time) (*change, []model.Event, error) {
	if c.opt.LinkCost != CostLoad || now.Before(st.settleUntil) {
		return nil, nil, nil
	}
	ch := newChange()
	st.shift = map[int]float64{}
	defer func() { st.shift = nil }()
	var events []model.Event
	for _, name := range keys(st.services) {
		old := st.services[name]
		if now.Sub(st.movedAt[name]) < c.opt.ReoptimizeHold {
			continue
		}
		spec := &old.rec.Spec
		cost := c.loadCost(st, spec, old, now, false)
		route, err := c.route(st, ch, st.topo, nil, nil, spec, old, false)
		if err != nil || reflect.DeepEqual(route, old.rec.Route) {
			continue
		}
		before, after := pathCost(st.topo, &old.rec.Route, cost), pathCost(st.topo, &route, cost)
		if err := c.planRouted(st, ch, st.topo, *spec, route, old); err != nil {
			ch.abort()
			return nil, nil, err
		}
		own, bw := st.meter.Service(name), float64(spec.BandwidthMbps)
		for l := range activeLinks(&old.rec.Route) {
			st.shift[l] -= own
		}
		for l := range activeLinks(&route) {
			st.shift[l] += own
		}
		for l := range routeLinks(&old.rec.Route) {
			st.shift[l] -= bw
		}
		for l := range routeLinks(&route) {
			st.shift[l] += bw
		}
		events = append(events, model.Event{Time: now, Kind: "reoptimize", Detail: fmt.Sprintf(
			"service %s moved for load: %s -> %s, cost %d -> %d; its busiest link was %s",
			name, describe(&old.rec.Route), describe(&route), before, after, c.busiest(st, &old.rec.Route, name))})
	}
	return ch, events, nil
}

// pathCost is the cost of r's active paths and tree under cost.
func pathCost(topo *topology.Topology, r *model.Route, cost func(topology.Link) int64) int64 {
	var sum int64
	for _, p := range activePaths(r) {
		for _, h := range p {
			if l, ok := topo.LinkByID(h.Link); ok {
				sum += cost(l)
			}
		}
	}
	return sum
}

// describe names r's active paths by their nodes.
func describe(r *model.Route) string {
	var out []string
	for _, p := range pointPaths(r, false) {
		if len(p) > 0 {
			out = append(out, strings.Join(p.Nodes(p[0].From), ">"))
		}
	}
	if len(r.Tree) > 0 {
		out = append(out, fmt.Sprintf("tree of %d links", len(r.Tree)))
	}
	return strings.Join(out, ", ")
}

// busiest names r's most loaded link (others' traffic and reservations
// than name's) and its utilisation.
func (c *Controller) busiest(st *state, r *model.Route, name string) string {
	best, util := "", -1.0
	for id := range routeLinks(r) {
		l, ok := st.topo.LinkByID(id)
		if !ok || l.CapacityMbps == 0 {
			continue
		}
		if u := (st.meter.Link(l) + float64(st.reserved[id])) / float64(l.CapacityMbps); u > util {
			best, util = l.Name(), u
		}
	}
	return fmt.Sprintf("%s at %.0f%%", best, 100*util)
}
