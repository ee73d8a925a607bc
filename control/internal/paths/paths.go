// Package paths computes the fabric's paths and flood trees: shortest paths
// (Dijkstra, keeping every equal-cost path), a link-disjoint backup and a
// Steiner tree spanning a set of member nodes (Takahashi-Matsuyama heuristic
// over those shortest paths). Every result is deterministic: ties between
// equal-cost choices are broken by a hash of the caller's salt (the service
// name) and the node names, which spreads services over equal-cost paths the
// way ECMP would, then by the names themselves.
//
// A Graph caches what it computes (shortest-path trees per source, a
// bounded number of Disjoint's answers), so one Graph should serve all the
// routes of one change. Its methods are safe for concurrent use: the caches are
// filled under a lock, and what they hold is never changed after.
package paths

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/e3fabric/e3fabric/control/internal/model"
	"github.com/e3fabric/e3fabric/control/internal/topology"
)

// Graph is the usable fabric: live nodes and links, with integer costs.
// Parallel links between two nodes collapse to the cheapest (then lowest id).
type Graph struct {
	topo  *topology.Topology
	ids   map[string]int
	names []string
	up    []bool  // node is in the graph
	adj   [][]arc // node -> its edges, one per neighbour
	arcs  int     // in adj, all together
	// edge points into the topology's links, which are never changed:
	// Without's copies of the graph share them.
	edge map[[2]int]*topology.Link // (min id, max id) -> chosen link
	cost map[int]int64             // link id -> cost

	mu  sync.Mutex    // guards the caches below, and every tree's paths
	spf map[int]*tree // source -> its shortest-path tree
	// disjoint caches Disjoint's candidates by ends and links left out,
	// where no shortest path avoids those links (else the source's tree
	// has them). Bounded (maxDisjoint), since their number grows with the
	// square of the nodes.
	disjoint  map[string][][]int
	downPorts map[string]bool
	drained   map[string]bool // nodes in maintenance (topology.Node.Drained)
}

type arc struct {
	to   int
	link int // the link's id
	cost int64
}

// tree is a shortest-path tree from one source with every equal-cost
// predecessor kept, so all shortest paths can be listed.
type tree struct {
	dist  []int64 // -1: unreachable
	preds [][]int
	paths map[int][][]int // dst -> every shortest path's nodes, source first (all)
}

// maxDisjoint bounds Disjoint's cache: about 25 MiB on a leaf/spine fabric.
const maxDisjoint = 1 << 16

// Options select what the graph contains.
type Options struct {
	// Down holds node names and link ids not to use.
	DownNodes map[string]bool
	DownLinks map[int]bool
	// Cost gives a link's cost; nil = the link's declared cost.
	Cost func(topology.Link) int64
	// DownPorts holds customer ports ("node:port") without carrier: a
	// multi-homed site is not reached through them.
	DownPorts map[string]bool
	// Restoring holds link ids that work again but are within their
	// wait-to-restore: they cost RestoreCost more.
	Restoring map[int]bool
}

// DrainCost is added to the cost of every link of a drained node: more
// than any path of undrained links costs, so a path crosses a drained node
// only where nothing else connects its ends (its own customers).
const DrainCost = 1 << 32

// RestoreCost is added to the cost of a link within its wait-to-restore:
// a path avoids it while anything else connects its ends, and uses it
// rather than nothing (a flap of every link of a node must not cut the
// node off for the wait).
const RestoreCost = 1 << 32

// New builds the graph of t without the down nodes and links.
func New(t *topology.Topology, o Options) *Graph {
	g := empty(t, len(t.Nodes))
	g.downPorts = o.DownPorts
	g.drained = map[string]bool{}
	for _, n := range t.Nodes {
		id := len(g.names)
		g.ids[n.Name] = id
		g.names = append(g.names, n.Name)
		g.up[id] = !o.DownNodes[n.Name]
		if n.Drained {
			g.drained[n.Name] = true
		}
	}
	for i := range t.Links {
		l := &t.Links[i]
		if o.DownLinks[l.ID] || o.DownNodes[l.A.Node] || o.DownNodes[l.B.Node] {
			continue
		}
		c := int64(l.Cost)
		if o.Cost != nil {
			c = o.Cost(*l)
		}
		c = max(c, 1)
		if g.drained[l.A.Node] || g.drained[l.B.Node] {
			c += DrainCost
		}
		if o.Restoring[l.ID] {
			c += RestoreCost
		}
		g.cost[l.ID] = c
		k := pairKey(g.ids[l.A.Node], g.ids[l.B.Node])
		if old, ok := g.edge[k]; ok && (g.cost[old.ID] < g.cost[l.ID] || (g.cost[old.ID] == g.cost[l.ID] && old.ID < l.ID)) {
			continue
		}
		g.edge[k] = l
	}
	g.link()
	return g
}

func empty(t *topology.Topology, n int) *Graph {
	return &Graph{topo: t, ids: map[string]int{}, up: make([]bool, n), adj: make([][]arc, n),
		edge: map[[2]int]*topology.Link{}, cost: map[int]int64{}, spf: map[int]*tree{},
		disjoint: map[string][][]int{}}
}

// link builds the adjacency from the chosen edges, neighbours in id order.
func (g *Graph) link() {
	for k, l := range g.edge {
		c := g.cost[l.ID]
		g.adj[k[0]] = append(g.adj[k[0]], arc{k[1], l.ID, c})
		g.adj[k[1]] = append(g.adj[k[1]], arc{k[0], l.ID, c})
	}
	for _, a := range g.adj {
		slices.SortFunc(a, func(x, y arc) int { return x.to - y.to })
	}
	g.arcs = 2 * len(g.edge)
}

// Without returns a copy of g without the given links (same costs).
func (g *Graph) Without(links map[int]bool) *Graph {
	h := empty(g.topo, len(g.names))
	h.ids, h.names, h.cost = g.ids, g.names, g.cost
	h.drained = g.drained
	copy(h.up, g.up)
	for k, l := range g.edge {
		if !links[l.ID] {
			h.edge[k] = l
		}
	}
	h.link()
	return h
}

func pairKey(a, b int) [2]int {
	if a > b {
		a, b = b, a
	}
	return [2]int{a, b}
}

// spt returns the shortest-path tree from src (cached).
func (g *Graph) spt(src int) *tree {
	g.mu.Lock()
	t, ok := g.spf[src]
	g.mu.Unlock()
	if ok {
		return t
	}
	t = g.dijkstra(src, -1, nil)
	g.mu.Lock()
	defer g.mu.Unlock()
	if first, ok := g.spf[src]; ok { // computed meanwhile by another caller
		return first
	}
	g.spf[src] = t
	return t
}

// dijkstra computes the shortest-path tree from src over g without the
// links in skip. With stop >= 0 it ends once stop is reached: stop's paths
// are complete then, since every node on them is nearer (costs are >= 1).
// Nodes are settled by distance, then by id, and a node's equal-cost
// predecessors are kept in the order they were settled, so equal-cost
// paths always come out in the same order.
func (g *Graph) dijkstra(src, stop int, skip []int) *tree {
	n := len(g.names)
	t := &tree{dist: make([]int64, n), preds: make([][]int, n), paths: map[int][][]int{}}
	for i := range t.dist {
		t.dist[i] = -1
	}
	done := make([]bool, n)
	// A node's predecessors are among its neighbours: each node reached
	// gets room for as many in one shared array, so that appending them
	// allocates nothing (on a leaf/spine fabric every leaf has a
	// predecessor per spine).
	slab := make([]int, g.arcs)
	q := frontier{{0, src}}
	t.dist[src] = 0
	for len(q) > 0 {
		u := q.pop().node
		if done[u] { // an entry from before an improvement
			continue
		}
		if u == stop {
			break
		}
		done[u] = true
		for _, a := range g.adj[u] {
			if !g.up[a.to] || done[a.to] || slices.Contains(skip, a.link) {
				continue
			}
			switch d := t.dist[u] + a.cost; {
			case t.dist[a.to] < 0 || d < t.dist[a.to]:
				if t.preds[a.to] == nil {
					deg := len(g.adj[a.to])
					t.preds[a.to], slab = slab[:0:deg], slab[deg:]
				}
				t.dist[a.to], t.preds[a.to] = d, append(t.preds[a.to][:0], u)
				q.push(item{d, a.to})
			case d == t.dist[a.to]:
				t.preds[a.to] = append(t.preds[a.to], u)
			}
		}
	}
	return t
}

// frontier is dijkstra's queue: a binary heap of the nodes reached, least
// distance first, then least id (a node improved is pushed again; its old
// entry comes out after the node is settled, and is skipped).
type frontier []item

type item struct {
	dist int64
	node int
}

func (a item) before(b item) bool { return a.dist < b.dist || a.dist == b.dist && a.node < b.node }

func (q *frontier) push(x item) {
	h := append(*q, x)
	for i := len(h) - 1; i > 0; {
		up := (i - 1) / 2
		if !h[i].before(h[up]) {
			break
		}
		h[i], h[up] = h[up], h[i]
		i = up
	}
	*q = h
}

func (q *frontier) pop() item {
	h := *q
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	for i := 0; ; {
		c := 2*i + 1
		if c >= len(h) {
			break
		}
		if c+1 < len(h) && h[c+1].before(h[c]) {
			c++
		}
		if !h[c].before(h[i]) {
			break
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
	*q = h
	return top
}

// Has reports whether node is in the graph (known and up).
func (g *Graph) Has(node string) bool {
	id, ok := g.ids[node]
	return ok && g.up[id]
}

// Topology is the topology g was built from.
func (g *Graph) Topology() *topology.Topology { return g.topo }

// PortUp tells whether node's customer port has carrier, as far as g knows.
func (g *Graph) PortUp(node, port string) bool { return !g.downPorts[node+":"+port] }

// Drained says whether node is in maintenance.
func (g *Graph) Drained(node string) bool { return g.drained[node] }

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

	t := g.spt(g.ids[src])
	cands := g.all(t, g.ids[src], g.ids[dst])
	if cands == nil {
		return nil, false
	}
	return g.path(g.pick(salt, cands, nil)), true
}

// pick chooses one of equal-cost candidates by their salted weight, among
// those that use no link in skip (nil if none is left).
func (g *Graph) pick(salt string, cands [][]int, skip []int) []int {
	var best []int
	var bestKey uint64
	for _, c := range cands {
		if skip != nil && g.crosses(c, skip) {
			continue
		}
		k := g.tieKey(salt, c)
		if best == nil || k < bestKey || (k == bestKey && g.joined(c) < g.joined(best)) {
			best, bestKey = c, k
		}
	}
	return best
}

// all lists every shortest path from src to dst (nil if there is none),
// cached in src's tree: the salt only picks one of them.
func (g *Graph) all(t *tree, src, dst int) [][]int {
	if t.dist[dst] < 0 {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if c, ok := t.paths[dst]; ok {
		return c
	}
	out := enumerate(t, src, dst)
	t.paths[dst] = out
	return out
}

// enumerate lists the nodes of every shortest path of t from src to dst.
func enumerate(t *tree, src, dst int) [][]int {
	if t.dist[dst] < 0 {
		return nil
	}
	var out [][]int
	rev := []int{dst} // the current path, backwards
	var walk func(at int)
	walk = func(at int) {
		if at == src {
			ids := slices.Clone(rev)
			slices.Reverse(ids)
			out = append(out, ids)
			return
		}
		for _, p := range t.preds[at] {
			rev = append(rev, p)
			walk(p)
			rev = rev[:len(rev)-1]
		}
	}
	walk(dst)
	return out
}

// Connected reports whether a path joins src and dst.
func (g *Graph) Connected(src, dst string) bool {
	return g.Has(src) && g.Has(dst) && g.spt(g.ids[src]).dist[g.ids[dst]] >= 0
}

// tieKey is the Weight of the path's node names, salted.
func (g *Graph) tieKey(salt string, ids []int) uint64 {
	z := fnv(fnvOffset, salt)
	for _, id := range ids {
		z = fnv(z*fnvPrime, g.names[id]) // 0-separated
	}
	return splitmix(z)
}

// Weight is FNV-1a of salt and names, 0-separated, finished by the
// splitmix64 finalizer, which spreads FNV's weakly mixed output so that
// names differing in one character weigh independently from one salt to
// the next. It breaks ties between equal-cost paths, and ranks nodes for
// highest-random-weight elections.
func Weight(salt string, names ...string) uint64 {
	z := fnv(fnvOffset, salt)
	for _, n := range names {
		z = fnv(z*fnvPrime, n)
	}
	return splitmix(z)
}

const fnvOffset, fnvPrime = 14695981039346656037, 1099511628211

func fnv(z uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		z = (z ^ uint64(s[i])) * fnvPrime
	}
	return z
}

func splitmix(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// joined is the path's names, comma-separated: the last tie-break.
func (g *Graph) joined(ids []int) string {
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(g.names[id])
	}
	return b.String()
}

// path is the hops along the nodes ids.
func (g *Graph) path(ids []int) model.Path {
	p := make(model.Path, 0, len(ids)-1)
	for i := 0; i+1 < len(ids); i++ {
		from, to := g.names[ids[i]], g.names[ids[i+1]]
		l := g.edge[pairKey(ids[i], ids[i+1])]
		a, b := l.End(from)
		p = append(p, model.Hop{Link: l.ID, From: from, FromPort: a.Port, To: to, ToPort: b.Port})
	}
	return p
}

// Disjoint returns the shortest path from src to dst that shares no link with
// p (and no parallel link between the same two nodes), if there is one.
func (g *Graph) Disjoint(p model.Path, src, dst, salt string) (model.Path, bool) {
	if len(p) == 0 || !g.Has(src) || !g.Has(dst) {
		return nil, false
	}
	if src == dst {
		return model.Path{}, true
	}
	s, d := g.ids[src], g.ids[dst]
	skip := make([]int, 0, len(p))
	for _, h := range p {
		skip = append(skip, h.Link)
	}
	slices.Sort(skip)
	// Where some shortest path of g shares no link with p, the shortest
	// paths without p's links are exactly those: no search needed (on a
	// leaf/spine fabric, the paths through the other spines).
	if ids := g.pick(salt, g.all(g.spt(s), s, d), skip); ids != nil {
		return g.path(ids), true
	}
	kb := strconv.AppendInt(nil, int64(s), 10)
	kb = strconv.AppendInt(append(kb, '>'), int64(d), 10)
	for _, id := range skip {
		kb = strconv.AppendInt(append(kb, ','), int64(id), 10)
	}
	key := string(kb)
	g.mu.Lock()
	cands, ok := g.disjoint[key]
	g.mu.Unlock()
	if !ok {
		cands = enumerate(g.dijkstra(s, d, skip), s, d)
		g.mu.Lock()
		if len(g.disjoint) >= maxDisjoint {
			for k := range g.disjoint { // any one: map order is random
				delete(g.disjoint, k)
				break
			}
		}
		g.disjoint[key] = cands
		g.mu.Unlock()
	}
	if cands == nil {
		return nil, false
	}
	return g.path(g.pick(salt, cands, nil)), true
}

// crosses tells whether the path along the nodes ids uses a link in skip.
func (g *Graph) crosses(ids []int, skip []int) bool {
	for i := 0; i+1 < len(ids); i++ {
		if slices.Contains(skip, g.edge[pairKey(ids[i], ids[i+1])].ID) {
			return true
		}
	}
	return false
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
		var bestFrom string // the tree node the chosen path starts from
		var bestCost int64
		for i, m := range left {
			if in[m] {
				bestI, bestFrom = i, "" // joined already, on another's path
				break
			}
			for _, u := range order {
				// Compare by distance; only the chosen path is built.
				c := g.spt(g.ids[u]).dist[g.ids[m]]
				if !g.Has(m) || c < 0 {
					continue
				}
				if bestI < 0 || c < bestCost {
					bestI, bestFrom, bestCost = i, u, c
				}
			}
		}
		if bestI < 0 {
			return nil, fmt.Errorf("no path between %s and %s", ms[0], left[0])
		}
		if bestFrom != "" {
			best, _ = g.Shortest(bestFrom, left[bestI], salt)
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
