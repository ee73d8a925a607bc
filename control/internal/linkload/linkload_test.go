package linkload

import (
	"math"
	"testing"
	"time"

	"github.com/e3fabric/e3fabric/control/internal/nodestate"
	"github.com/e3fabric/e3fabric/control/internal/topology"
)

func TestCost(t *testing.T) {
	for _, tc := range []struct {
		declared, capacity int
		load               float64
		want               int64
	}{
		{1, 1000, 0, 100},
		{1, 1000, 500, 600},
		{2, 1000, 1000, 2200},
		{1, 1000, 1e9, 100 * (1 + Weight*MaxUtil)}, // bounded
		{1, 1000, -5, 100},                         // a negative estimate is idle
	} {
		if got := Cost(tc.declared, tc.capacity, tc.load); got != tc.want {
			t.Errorf("Cost(%d, %d, %g) = %d, want %d", tc.declared, tc.capacity, tc.load, got, tc.want)
		}
	}
}

// The average forgets at the pace of its window whatever the sampling:
// after one window of a step it has come 1 - 1/e of the way.
func TestEWMA(t *testing.T) {
	for _, step := range []time.Duration{100 * time.Millisecond, time.Second, 5 * time.Second} {
		var e ewma
		t0 := time.Unix(1000, 0)
		e.add(0, t0, 10*time.Second)
		for at := step; at <= 10*time.Second; at += step {
			e.add(100, t0.Add(at), 10*time.Second)
		}
		if want := 100 * (1 - 1/math.E); math.Abs(e.v-want) > 0.5 {
			t.Errorf("sampled every %s: %.2f after one window, want %.2f", step, e.v, want)
		}
		e.add(0, t0, 10*time.Second) // an older report changes nothing
		if e.at != t0.Add(10*time.Second) {
			t.Errorf("an older sample moved the average")
		}
	}
}

// Observe reads each link direction from its sender's transmit rate and
// each service's ingress from every node that reports it.
func TestMeter(t *testing.T) {
	topo := &topology.Topology{Links: []topology.Link{
		{ID: 1, A: topology.Endpoint{Node: "leaf1", Port: "fab1"}, B: topology.Endpoint{Node: "spine1", Port: "fab1"}, Cost: 1}}}
	m := NewMeter(time.Second)
	at := time.Unix(1000, 0)
	status := func(node, port string, txBPS float64, svcs map[string]float64) nodestate.NodeStatus {
		return nodestate.NodeStatus{Node: node, Updated: at, Services: svcs, Ports: []nodestate.PortStatus{
			{Name: port, LinkUp: true, Stats: &nodestate.PortStats{TxBPS: txBPS}}, {Name: "cust1", LinkUp: true, Stats: &nodestate.PortStats{TxBPS: 9e9}}}}
	}
	m.Observe(topo, status("leaf1", "fab1", 300e6, map[string]float64{"red": 200e6}))
	m.Observe(topo, status("spine1", "fab1", 700e6, nil))
	m.Observe(topo, nodestate.NodeStatus{Node: "leaf2", Updated: at, Services: map[string]float64{"red": 50e6}})
	if got := m.Link(topo.Links[0]); got != 700 {
		t.Errorf("link load %g Mbps, want the busier direction's 700", got)
	}
	if got := m.Service("red"); got != 200 {
		t.Errorf("red %g Mbps, want its busiest node's 200", got)
	}
	// red stops on leaf1: a status without it counts as zero.
	at = at.Add(time.Hour)
	m.Observe(topo, status("leaf1", "fab1", 0, nil))
	if got := m.Service("red"); math.Abs(got-50) > 1e-6 {
		t.Errorf("red %g Mbps after leaf1 stopped reporting it, want 50", got)
	}
	m.Forget("red")
	if got := m.Service("red"); got != 0 {
		t.Errorf("red %g Mbps after Forget", got)
	}
}
