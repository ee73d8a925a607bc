package paths

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"testing"

	"github.com/e3fabric/e3fabric/control/internal/model"
	"github.com/e3fabric/e3fabric/control/internal/topology"
)

func mustLoad(t *testing.T) *topology.Topology {
	t.Helper()
	topo, _, err := topology.Load("../testdata/fabric.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

// ring returns n nodes r0..r(n-1) in a ring plus chords given as pairs.
func ring(t *testing.T, n int, chords ...[2]int) *topology.Topology {
	t.Helper()
	topo := &topology.Topology{}
	for i := 0; i < n; i++ {
		topo.Nodes = append(topo.Nodes, topology.Node{Name: fmt.Sprintf("r%d", i)})
	}
	port := map[int]int{}
	link := func(a, b int) {
		port[a]++
		port[b]++
		topo.Links = append(topo.Links, topology.Link{
			A: topology.Endpoint{Node: fmt.Sprintf("r%d", a), Port: fmt.Sprintf("p%d", port[a])},
			B: topology.Endpoint{Node: fmt.Sprintf("r%d", b), Port: fmt.Sprintf("p%d", port[b])}})
	}
	for i := 0; i < n; i++ {
		link(i, (i+1)%n)
	}
	for _, c := range chords {
		link(c[0], c[1])
	}
	if err := topo.Normalize(nil); err != nil {
		t.Fatal(err)
	}
	return topo
}

func checkPath(t *testing.T, p model.Path, src, dst string) {
	t.Helper()
	seen := map[string]bool{src: true}
	at := src
	for _, h := range p {
		if h.From != at {
			t.Fatalf("path %v: hop from %s, expected %s", p, h.From, at)
		}
		if seen[h.To] {
			t.Fatalf("path %v: loop at %s", p, h.To)
		}
		seen[h.To] = true
		at = h.To
	}
	if at != dst {
		t.Fatalf("path %v ends at %s, want %s", p, at, dst)
	}
}

func TestShortestAndBackup(t *testing.T) {
	tests := []struct {
		name     string
		topo     *topology.Topology
		src, dst string
		hops     int
		backup   bool
	}{
		{"leaf-spine", mustLoad(t), "leaf1", "leaf3", 2, true},
		{"ring", ring(t, 6), "r0", "r2", 2, true},
		{"ring far side", ring(t, 6), "r0", "r3", 3, true},
		{"chain has no backup", func() *topology.Topology {
			tp := ring(t, 4)
			tp.Links = tp.Links[:3] // r0-r1, r1-r2, r2-r3 after sorting? drop one link: a chain
			return tp
		}(), "r1", "r2", 1, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := New(tc.topo, Options{})
			p, ok := g.Shortest(tc.src, tc.dst, "svc")
			if !ok {
				t.Fatal("no path")
			}
			checkPath(t, p, tc.src, tc.dst)
			if len(p) != tc.hops {
				t.Fatalf("path %v: %d hops, want %d", p.Nodes(tc.src), len(p), tc.hops)
			}
			b, ok := g.Disjoint(p, tc.src, tc.dst, "svc")
			if ok != tc.backup {
				t.Fatalf("backup found=%v, want %v (%v)", ok, tc.backup, b)
			}
			if ok {
				checkPath(t, b, tc.src, tc.dst)
				for _, h := range b {
					for _, q := range p {
						if h.Link == q.Link {
							t.Fatalf("backup %v shares link %d with primary %v", b, h.Link, p)
						}
					}
				}
			}
			// Deterministic: a fresh graph gives the same answer.
			p2, _ := New(tc.topo, Options{}).Shortest(tc.src, tc.dst, "svc")
			if !reflect.DeepEqual(p, p2) {
				t.Fatalf("not deterministic: %v vs %v", p, p2)
			}
		})
	}
}

func TestAvoidsDown(t *testing.T) {
	topo := mustLoad(t)
	g := New(topo, Options{DownNodes: map[string]bool{"spine1": true}})
	p, ok := g.Shortest("leaf1", "leaf2", "x")
	if !ok || p.Nodes("leaf1")[1] != "spine2" {
		t.Fatalf("path %v avoids spine1? ok=%v", p, ok)
	}
	g = New(topo, Options{DownNodes: map[string]bool{"spine1": true, "spine2": true}})
	if _, ok := g.Shortest("leaf1", "leaf2", "x"); ok {
		t.Fatal("path found with every spine down")
	}
}

// TestAvoidsDrained: paths and trees leave a drained spine while the other
// one connects everything, and still cross it when nothing else does; the
// drained node stays usable as its own customers' end.
func TestAvoidsDrained(t *testing.T) {
	topo := mustLoad(t)
	drain := func(names ...string) *Graph {
		t.Helper()
		d := *topo
		d.Nodes = append([]topology.Node(nil), topo.Nodes...)
		for i := range d.Nodes {
			for _, n := range names {
				if d.Nodes[i].Name == n {
					d.Nodes[i].Drained = true
				}
			}
		}
		return New(&d, Options{})
	}
	for _, spine := range []string{"spine1", "spine2"} {
		g := drain(spine)
		if !g.Drained(spine) {
			t.Fatalf("%s not drained", spine)
		}
		p, ok := g.Shortest("leaf1", "leaf2", "x")
		if !ok || p.Nodes("leaf1")[1] == spine {
			t.Fatalf("%s drained: path %v (ok %v)", spine, p, ok)
		}
		tree, err := g.Tree([]string{"leaf1", "leaf2", "leaf3"}, "x")
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range tree {
			if h.From == spine || h.To == spine {
				t.Fatalf("%s drained: tree %v crosses it", spine, tree)
			}
		}
	}
	g := drain("spine1", "spine2")
	if _, ok := g.Shortest("leaf1", "leaf2", "x"); !ok {
		t.Fatal("every spine drained: no path, want one through a drained spine")
	}
	if p, ok := drain("leaf1").Shortest("leaf1", "leaf2", "x"); !ok || len(p) != 2 {
		t.Fatalf("leaf1 drained: its own path %v (ok %v)", p, ok)
	}
}

// TestRestoring: a link within its wait-to-restore is avoided while
// another path connects its ends, and used when none does (every link of
// leaf1 restoring after a flap must not cut leaf1 off).
func TestRestoring(t *testing.T) {
	topo := mustLoad(t)
	of := func(node string) map[int]bool {
		m := map[int]bool{}
		for _, l := range topo.Links {
			if l.A.Node == node || l.B.Node == node {
				m[l.ID] = true
			}
		}
		return m
	}
	spine1 := of("spine1")
	leaf1 := map[int]bool{}
	for id := range of("leaf1") {
		if spine1[id] {
			leaf1[id] = true // leaf1's link to spine1
		}
	}
	p, ok := New(topo, Options{Restoring: leaf1}).Shortest("leaf1", "leaf2", "x")
	if !ok || p.Nodes("leaf1")[1] != "spine2" {
		t.Fatalf("leaf1-spine1 restoring: path %v (ok %v), want one through spine2", p, ok)
	}
	if _, ok := New(topo, Options{Restoring: of("leaf1")}).Shortest("leaf1", "leaf2", "x"); !ok {
		t.Fatal("every link of leaf1 restoring: no path, want one over them")
	}
}

// TestTree checks the Steiner tree: it is a tree (edges = nodes - 1,
// connected), spans every member, and has no non-member leaf.
func TestTree(t *testing.T) {
	tests := []struct {
		name    string
		topo    *topology.Topology
		members []string
	}{
		{"leaf-spine 3 leaves", mustLoad(t), []string{"leaf1", "leaf2", "leaf3"}},
		{"leaf-spine 2 leaves", mustLoad(t), []string{"leaf3", "leaf1"}},
		{"ring", ring(t, 8), []string{"r0", "r3", "r5"}},
		{"ring with chords", ring(t, 10, [2]int{0, 5}, [2]int{2, 7}), []string{"r1", "r4", "r6", "r9"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := New(tc.topo, Options{})
			tree, err := g.Tree(tc.members, "svc")
			if err != nil {
				t.Fatal(err)
			}
			deg := map[string]int{}
			adj := map[string][]string{}
			for _, h := range tree {
				deg[h.From]++
				deg[h.To]++
				adj[h.From] = append(adj[h.From], h.To)
				adj[h.To] = append(adj[h.To], h.From)
			}
			if len(tree) != len(deg)-1 {
				t.Fatalf("%d edges on %d nodes: not a tree: %v", len(tree), len(deg), tree)
			}
			member := map[string]bool{}
			for _, m := range tc.members {
				member[m] = true
				if deg[m] == 0 {
					t.Fatalf("member %s not in tree %v", m, tree)
				}
			}
			for n, d := range deg {
				if d == 1 && !member[n] {
					t.Fatalf("non-member leaf %s in tree %v", n, tree)
				}
			}
			seen := map[string]bool{tc.members[0]: true}
			stack := []string{tc.members[0]}
			for len(stack) > 0 {
				n := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				for _, m := range adj[n] {
					if !seen[m] {
						seen[m] = true
						stack = append(stack, m)
					}
				}
			}
			if len(seen) != len(deg) {
				t.Fatalf("tree not connected: %v", tree)
			}
			members := append([]string(nil), tc.members...)
			sort.Sort(sort.Reverse(sort.StringSlice(members)))
			tree2, _ := New(tc.topo, Options{}).Tree(members, "svc")
			if !reflect.DeepEqual(tree, tree2) {
				t.Fatalf("not deterministic: %v vs %v", tree, tree2)
			}
		})
	}
}

// One Graph serves a change's routes from several goroutines: what they get
// is what one caller alone gets (go test -race checks the caches' lock).
func TestConcurrentUse(t *testing.T) {
	topo := ring(t, 12, [2]int{0, 6}, [2]int{3, 9}, [2]int{1, 7})
	type result struct {
		p, b model.Path
		tree []model.Hop
	}
	routes := func(g *Graph, salt string) []result {
		var out []result
		for _, a := range topo.Nodes {
			for _, z := range topo.Nodes {
				p, _ := g.Shortest(a.Name, z.Name, salt)
				b, _ := g.Disjoint(p, a.Name, z.Name, salt)
				tree, err := g.Tree([]string{a.Name, z.Name, "r5"}, salt)
				if err != nil {
					t.Error(err)
				}
				out = append(out, result{p, b, tree})
			}
		}
		return out
	}
	salts := []string{"s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7"}
	alone := map[string][]result{}
	for _, s := range salts {
		alone[s] = routes(New(topo, Options{}), s)
	}
	g := New(topo, Options{})
	got := make([][]result, len(salts))
	done := make(chan int)
	for i, s := range salts {
		go func() { got[i] = routes(g, s); done <- i }()
	}
	for range salts {
		<-done
	}
	for i, s := range salts {
		if !reflect.DeepEqual(got[i], alone[s]) {
			t.Errorf("salt %s: concurrent routes differ from a lone caller's", s)
		}
	}
}

// leafSpine is a full bipartite fabric of s spines and l leaves.
func leafSpine(t testing.TB, s, l int) *topology.Topology {
	t.Helper()
	topo := &topology.Topology{}
	for i := range s {
		topo.Nodes = append(topo.Nodes, topology.Node{Name: fmt.Sprintf("spine%d", i+1)})
	}
	for j := range l {
		topo.Nodes = append(topo.Nodes, topology.Node{Name: fmt.Sprintf("leaf%d", j+1)})
	}
	for i := range s {
		for j := range l {
			topo.Links = append(topo.Links, topology.Link{
				A: topology.Endpoint{Node: fmt.Sprintf("spine%d", i+1), Port: fmt.Sprintf("p%d", j+1)},
				B: topology.Endpoint{Node: fmt.Sprintf("leaf%d", j+1), Port: fmt.Sprintf("up%d", i+1)}})
		}
	}
	if err := topo.Normalize(nil); err != nil {
		t.Fatal(err)
	}
	return topo
}

// expectedTree is what dijkstra must return, stated without a queue: the
// nodes are settled by distance (Bellman-Ford's), then id, up to stop; a
// node has the least distance through the settled nodes, and as its
// predecessors the settled neighbours that give it, in settling order.
func expectedTree(g *Graph, src, stop int, skip []int) ([]int64, [][]int) {
	n := len(g.names)
	usable := func(a arc) bool { return g.up[a.to] && !slices.Contains(skip, a.link) }
	final := slices.Repeat([]int64{-1}, n)
	final[src] = 0
	for changed := true; changed; {
		changed = false
		for u := range n {
			for _, a := range g.adj[u] {
				if final[u] >= 0 && usable(a) && (final[a.to] < 0 || final[u]+a.cost < final[a.to]) {
					final[a.to], changed = final[u]+a.cost, true
				}
			}
		}
	}
	var order []int
	for v := range n {
		if final[v] >= 0 {
			order = append(order, v)
		}
	}
	slices.SortFunc(order, func(a, b int) int {
		if final[a] != final[b] {
			return int(final[a] - final[b])
		}
		return a - b
	})
	if i := slices.Index(order, stop); i >= 0 {
		order = order[:i]
	}
	dist, preds := slices.Repeat([]int64{-1}, n), make([][]int, n)
	dist[src] = 0
	for _, u := range order {
		for _, a := range g.adj[u] {
			if !usable(a) {
				continue
			}
			switch d := final[u] + a.cost; {
			case dist[a.to] < 0 || d < dist[a.to]:
				dist[a.to], preds[a.to] = d, []int{u}
			case d == dist[a.to]:
				preds[a.to] = append(preds[a.to], u)
			}
		}
	}
	return dist, preds
}

func TestDijkstraSettlesByDistanceThenID(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cases := []struct {
		name string
		topo *topology.Topology
		cost func(topology.Link) int64
	}{
		{"ring with chords, hop count", ring(t, 12, [2]int{0, 6}, [2]int{3, 9}, [2]int{1, 7}), nil},
		{"ring with chords, costs 1-3", ring(t, 16, [2]int{0, 8}, [2]int{2, 11}, [2]int{5, 13}, [2]int{1, 9}),
			func(l topology.Link) int64 { return int64(1 + l.ID%3) }},
		{"leaf/spine 4 x 16", leafSpine(t, 4, 16), nil},
		{"leaf/spine 3 x 10, costs 1-2", leafSpine(t, 3, 10), func(l topology.Link) int64 { return int64(1 + l.ID*7%2) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			down := map[string]bool{c.topo.Nodes[len(c.topo.Nodes)/2].Name: true}
			g := New(c.topo, Options{Cost: c.cost, DownNodes: down})
			n := len(g.names)
			for src := range n {
				for range 8 {
					stop := rng.IntN(n+1) - 1 // -1: the whole tree
					var skip []int
					for range rng.IntN(3) {
						skip = append(skip, c.topo.Links[rng.IntN(len(c.topo.Links))].ID)
					}
					got := g.dijkstra(src, stop, skip)
					dist, preds := expectedTree(g, src, stop, skip)
					if !slices.Equal(got.dist, dist) {
						t.Fatalf("from %d to %d without %v: distances %v, want %v", src, stop, skip, got.dist, dist)
					}
					for v := range n {
						if !slices.Equal(got.preds[v], preds[v]) {
							t.Fatalf("from %d to %d without %v: node %d's predecessors %v, want %v",
								src, stop, skip, v, got.preds[v], preds[v])
						}
					}
				}
			}
		})
	}
}

// BenchmarkDisjointSearch is the search Disjoint falls back to where no
// shortest path avoids the primary's links, on a fabric of 8 x 128.
func BenchmarkDisjointSearch(b *testing.B) {
	g := New(leafSpine(b, 8, 128), Options{})
	src, dst := g.ids["leaf1"], g.ids["leaf77"]
	p, _ := g.Shortest("leaf1", "leaf77", "x")
	skip := []int{p[0].Link, p[1].Link}
	b.ReportAllocs()
	for b.Loop() {
		enumerate(g.dijkstra(src, dst, skip), src, dst)
	}
}

// BenchmarkDisjoint is a backup path between two leaves of 8 x 128, through
// another spine than the primary's: found without a search.
func BenchmarkDisjoint(b *testing.B) {
	g := New(leafSpine(b, 8, 128), Options{})
	p, _ := g.Shortest("leaf1", "leaf77", "x")
	b.ReportAllocs()
	for b.Loop() {
		g.Disjoint(p, "leaf1", "leaf77", "x")
	}
}

// Disjoint takes the shortest paths that avoid p's links where there are
// some: what a search without them finds, path for path.
func TestDisjointAsASearchWithoutTheLinks(t *testing.T) {
	for _, topo := range []*topology.Topology{
		ring(t, 12, [2]int{0, 6}, [2]int{3, 9}, [2]int{1, 7}),
		leafSpine(t, 4, 12),
	} {
		g := New(topo, Options{Cost: func(l topology.Link) int64 { return int64(1 + l.ID%2) }})
		searched := func(p model.Path, src, dst, salt string) (model.Path, bool) {
			var skip []int
			for _, h := range p {
				skip = append(skip, h.Link)
			}
			s, d := g.ids[src], g.ids[dst]
			cands := enumerate(g.dijkstra(s, d, skip), s, d)
			if cands == nil {
				return nil, false
			}
			return g.path(g.pick(salt, cands, nil)), true
		}
		fast := 0
		for _, a := range topo.Nodes {
			for _, z := range topo.Nodes {
				if a.Name == z.Name {
					continue
				}
				for _, salt := range []string{"s0", "s1", "s2"} {
					p, _ := g.Shortest(a.Name, z.Name, salt)
					b, _ := g.Disjoint(p, a.Name, z.Name, salt)
					// p, then its backup as a primary that is not a
					// shortest path where costs differ.
					for _, q := range []model.Path{p, b} {
						if len(q) == 0 {
							continue
						}
						got, ok := g.Disjoint(q, a.Name, z.Name, salt)
						want, wok := searched(q, a.Name, z.Name, salt)
						if ok != wok || !reflect.DeepEqual(got, want) {
							t.Fatalf("%s -> %s without %v: %v %v, searched %v %v", a.Name, z.Name, q, got, ok, want, wok)
						}
						if g.pick(salt, g.all(g.spt(g.ids[a.Name]), g.ids[a.Name], g.ids[z.Name]), links(q)) != nil {
							fast++
						}
					}
				}
			}
		}
		if fast == 0 {
			t.Fatal("no backup was found without a search")
		}
	}
}

func links(p model.Path) []int {
	var out []int
	for _, h := range p {
		out = append(out, h.Link)
	}
	return out
}
