// Package paths computes the fabric's paths and flood trees on gonum graphs:
// shortest paths (gonum's Dijkstra, all equal-cost paths), a link-disjoint
// backup and a Steiner tree spanning a set of member nodes (Takahashi-
// Matsuyama heuristic over those shortest paths). Every result is
// deterministic: ties between equal-cost
// choices are broken by a hash of the caller's salt (the service name) and
// the node names, which spreads services over equal-cost paths the way ECMP
// would, then by the names themselves.
package paths

import (
	"fmt"
	"hash/fnv"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/gonum/graph"
	"gonum.org/v1/gonum/graph/path"
	"gonum.org/v1/gonum/graph/simple"

	"github.com/e3fabric/e3fabric/control/internal/model"
	"github.com/e3fabric/e3fabric/control/internal/topology"
)

// Graph is the usable fabric: live nodes and links, with integer costs.
// Parallel links between two nodes collapse to the cheapest (then lowest id).
type Graph struct {
	topo  *topology.Topology
	ids   map[string]int64
	names []string
	g     *simple.WeightedUndirectedGraph
	edge  map[[2]int64]topology.Link // (min id, max id) -> chosen link
	cost  map[int]int64              // link id -> cost
	spf   map[int64]path.ShortestAlts
}

// Options select what the graph contains.
type Options struct {
	// Down holds node names and link ids not to use.
	DownNodes map[string]bool
	DownLinks map[int]bool
	// Cost gives a link's cost; nil = the link's declared cost.
	Cost func(topology.Link) int64
}

// New builds the graph of t without the down nodes and links.
func New(t *topology.Topology, o Options) *Graph {
	g := &Graph{
		topo: t,
		ids:  map[string]int64{},
		g:    simple.NewWeightedUndirectedGraph(0, math.Inf(1)),
		edge: map[[2]int64]topology.Link{},
		cost: map[int]int64{},
		spf:  map[int64]path.ShortestAlts{},
	}
	for _, n := range t.Nodes {
		id := int64(len(g.names))
		g.ids[n.Name] = id
		g.names = append(g.names, n.Name)
		if !o.DownNodes[n.Name] {
			g.g.AddNode(simple.Node(id))
		}
	}
	for _, l := range t.Links {
		if o.DownLinks[l.ID] || o.DownNodes[l.A.Node] || o.DownNodes[l.B.Node] {
			continue
		}
		c := int64(l.Cost)
		if o.Cost != nil {
			c = o.Cost(l)
		}
		if c < 1 {
			c = 1
		}
		g.cost[l.ID] = c
		k := pairKey(g.ids[l.A.Node], g.ids[l.B.Node])
		if old, ok := g.edge[k]; ok && (g.cost[old.ID] < c || (g.cost[old.ID] == c && old.ID < l.ID)) {
			continue
		}
		g.edge[k] = l
		g.g.SetWeightedEdge(g.g.NewWeightedEdge(simple.Node(k[0]), simple.Node(k[1]), float64(c)))
	}
	return g
}

// Without returns a copy of g without the given links (same costs).
func (g *Graph) Without(links map[int]bool) *Graph {
	h := &Graph{topo: g.topo, ids: g.ids, names: g.names, g: simple.NewWeightedUndirectedGraph(0, math.Inf(1)),
		edge: map[[2]int64]topology.Link{}, cost: g.cost, spf: map[int64]path.ShortestAlts{}}
	for it := g.g.Nodes(); it.Next(); {
		h.g.AddNode(it.Node())
	}
	for k, l := range g.edge {
		if links[l.ID] {
			continue
		}
		h.edge[k] = l
		h.g.SetWeightedEdge(h.g.NewWeightedEdge(simple.Node(k[0]), simple.Node(k[1]), float64(g.cost[l.ID])))
	}
	return h
}

func pairKey(a, b int64) [2]int64 {
	if a > b {
		a, b = b, a
	}
	return [2]int64{a, b}
}

// Has reports whether node is in the graph (known and up).
func (g *Graph) Has(node string) bool {
	id, ok := g.ids[node]
	return ok && g.g.Node(id) != nil
}

// Cost is the sum of the path's link costs in g.
func (g *Graph) Cost(p model.Path) int64 {
	var c int64
	for _, h := range p {
		c += g.cost[h.Link]
	}
	return c
}

// Usable reports whether every link of p is in g.
func (g *Graph) Usable(p model.Path) bool {
	for _, h := range p {
		e, ok := g.edge[pairKey(g.ids[h.From], g.ids[h.To])]
		if !ok || e.ID != h.Link {
			return false
		}
	}
	return true
}

// Shortest returns the least-cost path from src to dst, ties broken by salt.
func (g *Graph) Shortest(src, dst, salt string) (model.Path, bool) {
	if !g.Has(src) || !g.Has(dst) {
		return nil, false
	}
	if src == dst {
		return model.Path{}, true
	}
	s, ok := g.spf[g.ids[src]]
	if !ok {
		s = path.DijkstraAllFrom(simple.Node(g.ids[src]), g.g)
		g.spf[g.ids[src]] = s
	}
	var best []string
	var bestKey uint64
	s.AllToFunc(g.ids[dst], func(p []graph.Node) {
		names := make([]string, len(p))
		for i, n := range p {
			names[i] = g.names[n.ID()]
		}
		k := tieKey(salt, names)
		if best == nil || k < bestKey || (k == bestKey && strings.Join(names, ",") < strings.Join(best, ",")) {
			best, bestKey = names, k
		}
	})
	if best == nil {
		return nil, false
	}
	return g.hops(best), true
}

// tieKey hashes salt and the path's names; the splitmix64 finalizer spreads
// FNV's weakly mixed output so that paths differing in one name compare
// independently from one salt to the next.
func tieKey(salt string, names []string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(salt))
	for _, n := range names {
		h.Write([]byte{0})
		h.Write([]byte(n))
	}
	z := h.Sum64()
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func (g *Graph) hops(names []string) model.Path {
	p := make(model.Path, 0, len(names)-1)
	for i := 0; i+1 < len(names); i++ {
		p = append(p, g.hop(names[i], names[i+1]))
	}
	return p
}

func (g *Graph) hop(from, to string) model.Hop {
	l := g.edge[pairKey(g.ids[from], g.ids[to])]
	a, b := l.End(from)
	return model.Hop{Link: l.ID, From: from, FromPort: a.Port, To: to, ToPort: b.Port}
}

// Disjoint returns the shortest path from src to dst that shares no link with
// p (and no parallel link between the same two nodes), if there is one.
func (g *Graph) Disjoint(p model.Path, src, dst, salt string) (model.Path, bool) {
	if len(p) == 0 {
		return nil, false
	}
	used := map[int]bool{}
	for _, h := range p {
		used[h.Link] = true
	}
	return g.Without(used).Shortest(src, dst, salt)
}

// Tree returns the edges of a tree of g spanning members: the
// Takahashi-Matsuyama Steiner heuristic (a 2-approximation, like KMB's MST
// over the metric closure, but it reuses nodes already in the tree, so on a
// leaf/spine fabric all members hang off one spine). Starting from the first
// member, it repeatedly joins the member closest to the tree by its shortest
// path from the tree. It fails if the members are not all connected.
func (g *Graph) Tree(members []string, salt string) ([]model.Hop, error) {
	ms := append([]string(nil), members...)
	sort.Strings(ms)
	if len(ms) < 2 {
		return nil, nil
	}
	in := map[string]bool{ms[0]: true}
	order := []string{ms[0]} // tree nodes in joining order, for determinism
	var out []model.Hop
	left := ms[1:]
	for len(left) > 0 {
		bestI := -1
		var best model.Path
		var bestCost int64
		for i, m := range left {
			if in[m] {
				bestI, best = i, nil
				break
			}
			for _, u := range order {
				p, ok := g.Shortest(u, m, salt)
				if !ok {
					continue
				}
				if c := g.Cost(p); bestI < 0 || c < bestCost {
					bestI, best, bestCost = i, p, c
				}
			}
		}
		if bestI < 0 {
			return nil, fmt.Errorf("no path between %s and %s", ms[0], left[0])
		}
		// Join by the part of the path after its last tree node.
		k := 0
		for i, h := range best {
			if in[h.From] {
				k = i
			}
		}
		for _, h := range best[k:] {
			out = append(out, h)
			in[h.To] = true
			order = append(order, h.To)
		}
		left = append(left[:bestI:bestI], left[bestI+1:]...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Link < out[j].Link })
	return out, nil
}
