package controller

import (
	"time"

	"github.com/e3fabric/e3fabric/control/internal/model"
	"github.com/e3fabric/e3fabric/control/internal/paths"
	"github.com/e3fabric/e3fabric/control/internal/topology"
)

// serviceGraphs are the full and live graphs as spec's service sees them:
// costed by the load (load cost) and its preferred node, without the
// links its path constraints rule out (docs/tenants.md).
func (c *Controller) serviceGraphs(st *state, ch *change, topo *topology.Topology, spec *model.ServiceSpec, old *svcState) (full, live *paths.Graph) {
	var cost func(topology.Link) int64
	if c.opt.LinkCost == CostLoad {
		cost = c.loadCost(st, spec, old, time.Now(), true)
	}
	p := spec.Paths
	if p != nil && p.PreferNode != "" {
		base := cost
		cost = func(l topology.Link) int64 {
			x := int64(l.Cost)
			if base != nil {
				x = base(l)
			}
			if l.A.Node != p.PreferNode && l.B.Node != p.PreferNode {
				x *= 4
			}
			return x
		}
	}
	full = paths.New(topo, paths.Options{Cost: cost})
	live = paths.New(topo, paths.Options{Cost: cost, DownNodes: st.down.nodes, DownLinks: st.down.links,
		DownPorts: st.down.ports, Restoring: st.down.restoring})
	if ex := excluded(st, ch, topo, spec); len(ex) > 0 {
		full, live = full.Without(ex), live.Without(ex)
	}
	return full, live
}

// excluded is the links spec's path constraints rule out: those avoided,
// those of avoided nodes, and those the service it is disjoint from uses
// (its links, or every link of its transit nodes), as ch would leave it.
func excluded(st *state, ch *change, topo *topology.Topology, spec *model.ServiceSpec) map[int]bool {
	p := spec.Paths
	if p == nil {
		return nil
	}
	out := map[int]bool{}
	members := map[string]bool{}
	for _, m := range spec.Members() {
		members[m] = true
	}
	node := func(n string) {
		if members[n] {
			return // its own circuits' node: a path must end there
		}
		for _, l := range topo.NodeLinks(n) {
			out[l.ID] = true
		}
	}
	for _, n := range p.AvoidNodes {
		node(n)
	}
	for _, name := range p.AvoidLinks {
		for _, l := range topo.Links {
			if l.Name() == name {
				out[l.ID] = true
			}
		}
	}
	if p.DisjointFrom == "" {
		return out
	}
	other := ch.put[p.DisjointFrom]
	if other == nil {
		other = st.services[p.DisjointFrom]
	}
	if other == nil {
		return out // deleted meanwhile: nothing to keep apart from
	}
	ends := map[string]bool{}
	for _, m := range other.rec.Spec.Members() {
		ends[m] = true
	}
	for _, path := range activePaths(&other.rec.Route) {
		for _, h := range path {
			if p.Disjoint == "node" {
				for _, n := range []string{h.From, h.To} {
					if !ends[n] {
						node(n)
					}
				}
			} else {
				out[h.Link] = true
			}
		}
	}
	return out
}
