package controller

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/e3fabric/e3fabric/control/internal/model"
	"github.com/e3fabric/e3fabric/control/internal/nodestate"
	"github.com/e3fabric/e3fabric/control/internal/store/storetest"
	"github.com/e3fabric/e3fabric/control/internal/topology"
)

// importCapacity imports the test fabric with every link's capacity set.
func importCapacity(t *testing.T, c *Controller, mbps int) *topology.Topology {
	t.Helper()
	topo, _, err := topology.Load("../testdata/fabric.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for i := range topo.Links {
		topo.Links[i].CapacityMbps = mbps
	}
	if err := c.ImportTopology(context.Background(), topo, nil); err != nil {
		t.Fatal(err)
	}
	return topo
}

func withBandwidth(s model.ServiceSpec, mbps int) model.ServiceSpec {
	s.BandwidthMbps = mbps
	return s
}

// A reservation is admitted only where every link of its paths, primary
// and backup, has room; a refusal names the tightest link and changes
// nothing; a deleted service's reservation is free again.
func TestBandwidthAdmission(t *testing.T) {
	cli := storetest.Start(t, 23814)
	ctx := context.Background()
	c, _ := start(t, cli, Options{IgnoreStatus: true})
	importCapacity(t, c, 1000)
	if err := c.CreateService(ctx, withBandwidth(eline("red", 100), 600)); err != nil {
		t.Fatal(err)
	}
	red, _ := c.Service(ctx, "red")
	if len(red.Route.Backup) == 0 {
		t.Fatal("red has no backup to reserve")
	}
	gen := desiredGen(t, cli, "leaf1")
	for _, tc := range []struct {
		specs []model.ServiceSpec
		link  string
	}{
		// Every leaf1-leaf3 path has 400 left.
		{[]model.ServiceSpec{withBandwidth(eline("blue", 101), 600)}, "has 400 of its 1000 Mbps left"},
		// Each fits alone, not both: the batch is refused whole.
		{[]model.ServiceSpec{withBandwidth(eline("green", 102), 300), withBandwidth(eline("blue", 101), 300)}, "has 100 of its 1000 Mbps left"},
	} {
		err := c.CreateServices(ctx, tc.specs)
		if KindOf(err) != KindNoBandwidth || !strings.Contains(err.Error(), tc.link) || !strings.Contains(err.Error(), "link leaf") {
			t.Fatalf("%d services: got %v, want no_bandwidth naming a link that %s", len(tc.specs), err, tc.link)
		}
	}
	if g := desiredGen(t, cli, "leaf1"); g != gen {
		t.Fatalf("a refused reservation wrote leaf1 (%d -> %d)", gen, g)
	}
	if _, err := c.Service(ctx, "green"); KindOf(err) != KindNotFound {
		t.Fatalf("green of a refused batch: %v", err)
	}
	// Exactly what is left fits; then leaf1's links are full, even for an
	// E-Line to another leaf.
	if err := c.CreateService(ctx, withBandwidth(eline("green", 102), 400)); err != nil {
		t.Fatal(err)
	}
	other := withBandwidth(eline("brown", 103), 1)
	other.Circuits[1].Node = "leaf2"
	if err := c.CreateService(ctx, other); KindOf(err) != KindNoBandwidth {
		t.Fatalf("over full links: %v", err)
	}
	// A service without a reservation is not refused: it reserves nothing.
	other.BandwidthMbps = 0
	if err := c.CreateService(ctx, other); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteService(ctx, "red"); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateService(ctx, withBandwidth(eline("blue", 101), 600)); err != nil {
		t.Fatalf("after red's reservation was freed: %v", err)
	}
}

// world is a fabric carrying traffic: each service sends at its rate both
// ways along its active path. It writes what the agents would report.
type world struct {
	rates map[string]float64 // service -> Mbps each way
}

func (w world) observe(t *testing.T, c *Controller, at time.Time) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.leader
	tx := map[string]map[string]float64{} // node -> port -> Mbps
	svc := map[string]map[string]float64{}
	add := func(node, port string, mbps float64) {
		if tx[node] == nil {
			tx[node] = map[string]float64{}
		}
		tx[node][port] += mbps
	}
	for name, r := range w.rates {
		s := st.services[name]
		for _, p := range pointPaths(&s.rec.Route, false) {
			for _, h := range p {
				add(h.From, h.FromPort, r)
				add(h.To, h.ToPort, r)
			}
		}
		for _, ci := range s.rec.Spec.Circuits {
			if svc[ci.Node] == nil {
				svc[ci.Node] = map[string]float64{}
			}
			svc[ci.Node][name] = r * 1e6
		}
	}
	for _, n := range st.topo.Nodes {
		s := nodestate.NodeStatus{Node: n.Name, Updated: at, Services: svc[n.Name]}
		for _, l := range st.topo.NodeLinks(n.Name) {
			e, _ := l.End(n.Name)
			s.Ports = append(s.Ports, nodestate.PortStatus{Name: e.Port, LinkUp: true,
				Stats: &nodestate.PortStats{TxBPS: tx[n.Name][e.Port] * 1e6}})
		}
		st.meter.Observe(st.topo, s)
	}
}

func spineOf(t *testing.T, c *Controller, name string) string {
	r, err := c.Service(context.Background(), name)
	if err != nil || r.Route.Active != "primary" {
		t.Fatalf("%s: %v, active %q", name, err, r.Route.Active)
	}
	return r.Route.Primary[0].To
}

// Two heavy services share spine1 (placed while spine2's links cost
// more): each alone would be better off on spine2. Re-optimised naively, every
// pass would move both, and back. Damped, one moves, the other stays,
// and nothing moves again, even long after the hold time.
func TestReoptimizeDoesNotOscillate(t *testing.T) {
	// The naive policy: every service takes the path that is cheapest on
	// the last measurement, all at once.
	on := map[string]int{"red": 1, "blue": 1}
	swaps := 0
	for range 10 {
		load := map[int]float64{}
		for _, s := range on {
			load[s] += 6000
		}
		cost := func(s int) float64 { return 1 + 10*load[s]/10000 }
		for name, s := range on {
			if o := 3 - s; cost(o) < cost(s) {
				on[name] = o
				swaps++
			}
		}
	}
	if swaps != 20 {
		t.Fatalf("naive: %d moves in 10 passes; the scenario should swap forever", swaps)
	}

	cli := storetest.Start(t, 23816)
	ctx := context.Background()
	c, _ := start(t, cli, Options{IgnoreStatus: true, LinkCost: CostLoad, LoadWindow: time.Second,
		Reoptimize: time.Hour, ReoptimizeHold: time.Minute})
	importTopo(t, c)
	for _, l := range []string{"leaf1:fab2-spine2:fab1", "leaf3:fab2-spine2:fab3"} {
		if err := c.SetLinkCost(ctx, l, 2); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []model.ServiceSpec{eline("red", 100), eline("blue", 101)} {
		if err := c.CreateService(ctx, s); err != nil {
			t.Fatal(err)
		}
		if sp := spineOf(t, c, s.Name); sp != "spine1" {
			t.Fatalf("%s on %s when idle, want spine1", s.Name, sp)
		}
	}
	for _, l := range []string{"leaf1:fab2-spine2:fab1", "leaf3:fab2-spine2:fab3"} {
		if err := c.SetLinkCost(ctx, l, 1); err != nil {
			t.Fatal(err)
		}
	}
	if spineOf(t, c, "red") != "spine1" || spineOf(t, c, "blue") != "spine1" {
		t.Fatal("an idle service moved for an equally good path")
	}
	w := world{rates: map[string]float64{"red": 6000, "blue": 6000}}
	at := time.Now()
	moves := 0
	where := map[string]string{"red": "spine1", "blue": "spine1"}
	for pass := range 20 { // 200 s: the hold (1 min) runs out three times
		w.observe(t, c, at)
		n, err := c.reoptimizeAt(ctx, at)
		if err != nil {
			t.Fatal(err)
		}
		moves += n
		for name := range where {
			if sp := spineOf(t, c, name); sp != where[name] {
				t.Logf("pass %d: %s %s -> %s", pass, name, where[name], sp)
				where[name] = sp
			}
		}
		at = at.Add(10 * time.Second)
	}
	if moves != 1 || where["red"] == where["blue"] {
		t.Fatalf("%d moves, ending on %v: want one move, apart", moves, where)
	}
	var why string
	for _, e := range c.Events() {
		if e.Kind == "reoptimize" {
			why = e.Detail
		}
	}
	if !strings.Contains(why, "moved for load: leaf1>spine1>leaf3 -> leaf1>spine2>leaf3") || !strings.Contains(why, "at 120%") {
		t.Fatalf("event %q: want the move and the busy link", why)
	}
}
