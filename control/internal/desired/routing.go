package desired

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/e3fabric/e3fabric/control/internal/model"
	"github.com/e3fabric/e3fabric/control/internal/paths"
)

// MaxSource bounds E-LAN source ids (the datapath's E3_MAX_REMOTES).
const MaxSource = 1023

// Route computes a service's route. full is the whole fabric (planned paths),
// live the fabric without what is down. old is the service's previous route
// (for stable E-LAN source ids), or nil. Route fails only if the members are
// not connected even in the full fabric, which makes the service invalid;
// what is down only makes members unreachable.
func Route(spec *model.ServiceSpec, full, live *paths.Graph, old *model.Route) (model.Route, error) {
	if spec.Type == model.ELine {
		return routeELine(spec, full, live)
	}
	return routeELAN(spec, full, live, old)
}

func routeELine(spec *model.ServiceSpec, full, live *paths.Graph) (model.Route, error) {
	if _, _, ok := spec.SiteEnd(); ok {
		return routeELineSite(spec, full, live)
	}
	var r model.Route
	a, b := spec.Circuits[0].Node, spec.Circuits[1].Node
	if a == b {
		if !live.Has(a) {
			r.Unreachable = []string{a}
		}
		return r, nil
	}
	p, ok := full.Shortest(a, b, spec.Name)
	if !ok {
		return r, fmt.Errorf("service %s: no path between %s and %s", spec.Name, a, b)
	}
	r.Primary = p
	r.Backup, _ = full.Disjoint(p, a, b, spec.Name)
	r.ECMP = spec.ECMP && r.Backup != nil && full.Cost(r.Backup) == full.Cost(r.Primary)
	up := live.Has(a) && live.Has(b)
	switch {
	case up && live.Usable(r.Primary):
		r.Active = "primary"
	case up && r.Backup != nil && live.Usable(r.Backup):
		r.Active = "backup"
	default:
		if f, ok := live.Shortest(a, b, spec.Name); ok {
			r.Fallback, r.Active = f, "fallback"
			break
		}
		// An end is down or the fabric is split: nothing works, so change
		// nothing: the planned primary stays installed and carries traffic
		// again, with the same labels, as soon as it is back.
		r.Active = "primary"
		for _, n := range []string{a, b} {
			if !live.Has(n) {
				r.Unreachable = append(r.Unreachable, n)
			}
		}
		if r.Unreachable == nil {
			r.Unreachable = []string{b}
		}
	}
	return r, nil
}

// routeELineSite routes an E-Line to a multi-homed site: from its
// single-homed end, a leg (a path and a link-disjoint backup) to each leaf
// of the site it can reach, as E-LAN unicast paths are (the end and the
// leaves get source ids, which only name the legs' ends in the stored
// route), and the leaves that reach the site now.
func routeELineSite(spec *model.ServiceSpec, full, live *paths.Graph) (model.Route, error) {
	end, seg, _ := spec.SiteEnd()
	r := model.Route{Sources: map[string]uint16{end.Node: 1}, Sites: map[string]*model.SiteRoute{seg: {}}}
	sr := r.Sites[seg]
	if s := full.Topology().Segment(seg); s != nil {
		sr.Floods = !s.LAG
	}
	var leaves []model.Circuit
	for _, c := range spec.Circuits {
		if c.Segment != "" {
			leaves = append(leaves, c)
		}
	}
	slices.SortFunc(leaves, func(x, y model.Circuit) int { return strings.Compare(x.Node, y.Node) })
	for i, c := range leaves {
		if c.Node == end.Node {
			return r, fmt.Errorf("service %s: circuit %s is on %s, a leaf of site %s: not supported", spec.Name, end, c.Node, seg)
		}
		r.Sources[c.Node] = uint16(i + 2)
		if _, ok := full.Shortest(end.Node, c.Node, spec.Name); !ok {
			return r, fmt.Errorf("service %s: no path between %s and %s", spec.Name, end.Node, c.Node)
		}
		p, ok := live.Shortest(end.Node, c.Node, spec.Name)
		if !ok || !live.Has(end.Node) {
			continue
		}
		u := model.UnicastPath{From: end.Node, To: c.Node, Path: p}
		if b, ok := full.Disjoint(p, end.Node, c.Node, spec.Name); ok && live.Usable(b) {
			u.Backup = b
		}
		r.Unicast = append(r.Unicast, u)
		if live.PortUp(c.Node, c.Port) {
			sr.Leaves = append(sr.Leaves, c.Node)
		}
	}
	if !live.Has(end.Node) {
		r.Unreachable = append(r.Unreachable, end.Node)
	}
	sr.Leaves = undrained(sr.Leaves, live)
	if len(sr.Leaves) == 0 {
		for _, c := range leaves {
			if !live.Has(c.Node) {
				r.Unreachable = append(r.Unreachable, c.Node)
			}
		}
		if len(r.Unreachable) == 0 {
			r.Unreachable = []string{seg}
		}
	}
	return r, nil
}

func routeELAN(spec *model.ServiceSpec, full, live *paths.Graph, old *model.Route) (model.Route, error) {
	members := spec.Members()
	if _, err := full.Tree(members, spec.Name); err != nil {
		return model.Route{}, fmt.Errorf("service %s: %w", spec.Name, err)
	}
	r := model.Route{Sources: map[string]uint16{}}
	// Source ids stay with their member leaf while it stays a member.
	used := map[uint16]bool{}
	if old != nil {
		for _, m := range members {
			if id, ok := old.Sources[m]; ok {
				r.Sources[m] = id
				used[id] = true
			}
		}
	}
	// Sites keep their source ids too, from the same space.
	segs := spec.Segments()
	if len(segs) > 0 {
		r.Sites = map[string]*model.SiteRoute{}
	}
	for _, seg := range segs {
		if old != nil && old.Sites[seg] != nil && !used[old.Sites[seg].Source] {
			r.Sites[seg] = &model.SiteRoute{Source: old.Sites[seg].Source}
			used[old.Sites[seg].Source] = true
		}
	}
	next := uint16(1)
	take := func() (uint16, error) {
		for used[next] {
			next++
		}
		if next > MaxSource {
			return 0, fmt.Errorf("service %s: more than %d member nodes and sites", spec.Name, MaxSource)
		}
		used[next] = true
		return next, nil
	}
	for _, m := range members {
		if _, ok := r.Sources[m]; ok {
			continue
		}
		id, err := take()
		if err != nil {
			return model.Route{}, err
		}
		r.Sources[m] = id
	}
	for _, seg := range segs {
		if r.Sites[seg] == nil {
			id, err := take()
			if err != nil {
				return model.Route{}, err
			}
			r.Sites[seg] = &model.SiteRoute{Source: id}
		}
	}
	reach := reachable(members, live)
	for _, c := range spec.Circuits {
		if c.Segment != "" && contains(reach, c.Node) && live.PortUp(c.Node, c.Port) {
			r.Sites[c.Segment].Leaves = append(r.Sites[c.Segment].Leaves, c.Node)
		}
	}
	for name, s := range r.Sites {
		s.Leaves = undrained(s.Leaves, live)
		sort.Strings(s.Leaves)
		if seg := full.Topology().Segment(name); seg != nil {
			s.Floods = !seg.LAG
		}
	}
	for _, m := range members {
		if !contains(reach, m) {
			r.Unreachable = append(r.Unreachable, m)
		}
	}
	r.Unicast = slices.Grow(r.Unicast, len(reach)*(len(reach)-1)) // kept with the service: sized once
	for _, from := range reach {
		for _, to := range reach {
			if from == to {
				continue
			}
			p, _ := live.Shortest(from, to, spec.Name)
			u := model.UnicastPath{From: from, To: to, Path: p}
			if b, ok := full.Disjoint(p, from, to, spec.Name); ok && live.Usable(b) {
				u.Backup = b
				u.ECMP = spec.ECMP && full.Cost(b) == full.Cost(p)
			}
			r.Unicast = append(r.Unicast, u)
		}
	}
	t, err := live.Tree(reach, spec.Name)
	if err != nil {
		return model.Route{}, fmt.Errorf("service %s: %w", spec.Name, err) // cannot happen: reach is connected
	}
	r.Tree = t
	return r, nil
}

// reachable returns the largest set of live members connected to each other
// (ties: the set holding the first name), sorted.
func reachable(members []string, live *paths.Graph) []string {
	var best []string
	done := map[string]bool{}
	for _, m := range members {
		if done[m] || !live.Has(m) {
			continue
		}
		comp := []string{m}
		done[m] = true
		for _, o := range members {
			if done[o] || !live.Has(o) {
				continue
			}
			if live.Connected(m, o) {
				comp = append(comp, o)
				done[o] = true
			}
		}
		if len(comp) > len(best) {
			best = comp
		}
	}
	sort.Strings(best)
	return best
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// undrained keeps the leaves not in maintenance, if any reaches the site:
// a drained leaf is neither DF nor aliased to while another can serve.
func undrained(leaves []string, g *paths.Graph) []string {
	var out []string
	for _, l := range leaves {
		if !g.Drained(l) {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		return leaves
	}
	return out
}
