package controller

import (
	"context"
	"slices"
	"sort"
	"time"

	"github.com/e3fabric/e3fabric/control/internal/model"
	"github.com/e3fabric/e3fabric/control/internal/topology"
)

// SetDrained puts node in maintenance (drained) or takes it out. Every
// service is routed again as if the node's links cost paths.DrainCost more
// (so paths and flood trees leave it wherever another way exists) and a
// drained leaf of a multi-homed site is neither its DF nor aliased to; the
// agents apply the change make-before-break, as any other. The state is the
// topology's (topology.Node.Drained), so it survives a controller restart
// and an import of the topology file.
func (c *Controller) SetDrained(ctx context.Context, node string, drained bool) error {
	return c.withLeader(func(st *state) error {
		t := cloneTopo(st.topo)
		i := slices.IndexFunc(t.Nodes, func(n topology.Node) bool { return n.Name == node })
		if i < 0 {
			return errorf(KindNotFound, "node %q not found", node)
		}
		if t.Nodes[i].Drained == drained {
			return nil
		}
		t.Nodes[i].Drained = drained
		ch := newChange()
		ch.topo = t
		if err := c.recomputeTopo(ctx, st, ch); err != nil {
			return err
		}
		c.record(model.Event{Time: time.Now(), Kind: map[bool]string{true: "node-drained", false: "node-undrained"}[drained],
			Object: node})
		return nil
	})
}

// Drained says whether node is in maintenance.
func (s *Snapshot) Drained(node string) bool {
	i := slices.IndexFunc(s.Topology.Nodes, func(n topology.Node) bool { return n.Name == node })
	return i >= 0 && s.Topology.Nodes[i].Drained
}

// Carrying lists the services whose traffic still crosses node other than
// through its own single-homed circuits (which nothing can move): a
// transit path or flood tree, an ECMP leg, or a multi-homed site it serves.
// Empty for a drained node: nothing but its own customers is lost when it
// stops.
func (s *Snapshot) Carrying(node string) []string {
	var out []string
	for name, rec := range s.Services {
		own := slices.ContainsFunc(rec.Spec.Circuits, func(c model.Circuit) bool { return c.Node == node && c.Segment == "" })
		if !own && (usesNode(&rec.Spec, &rec.Route, node) || s.standbyInUse(rec, node)) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// standbyInUse: a protected path of rec's moved off node, but the check of
// the path it moved to is not yet up and usable at both ends, so the
// datapaths still send on the standby through node (a new path check
// starts unusable: docs/ha.md).
func (s *Snapshot) standbyInUse(rec *model.ServiceRecord, node string) bool {
	checks := s.Checks(rec)
	crossed := slices.ContainsFunc(checks, func(c model.CheckView) bool {
		return len(c.Path) > 2 && slices.Contains(c.Path[1:len(c.Path)-1], node)
	})
	if !crossed {
		return false
	}
	for _, c := range checks {
		if len(c.Path) > 2 && slices.Contains(c.Path[1:len(c.Path)-1], node) {
			continue
		}
		if len(c.State) == 0 {
			return true
		}
		for _, st := range c.State {
			if st != "up" {
				return true
			}
		}
	}
	return false
}

// usesNode: node is inside one of the route's active paths (not an end),
// on its flood tree without being a member, or a leaf serving a site.
func usesNode(spec *model.ServiceSpec, r *model.Route, node string) bool {
	ps := pointPaths(r, true)
	for _, p := range ps {
		for i, h := range p {
			if i > 0 && h.From == node {
				return true
			}
		}
	}
	if !slices.Contains(spec.Members(), node) {
		for _, h := range r.Tree {
			if h.From == node || h.To == node {
				return true
			}
		}
	}
	for _, sr := range r.Sites {
		if slices.Contains(sr.Leaves, node) {
			return true
		}
	}
	return false
}
