package desired

import (
	"fmt"
	"slices"
	"testing"

	"github.com/e3fabric/e3fabric/control/internal/dpconfig"
	"github.com/e3fabric/e3fabric/control/internal/model"
	"github.com/e3fabric/e3fabric/control/internal/paths"
)

func TestBUMFilters(t *testing.T) {
	spec := &model.ServiceSpec{Name: "blue", Type: model.ELAN, Circuits: []model.Circuit{
		{Node: "leaf1", Port: "cust1", VLAN: 10, Segment: "site1"},
		{Node: "leaf2", Port: "cust1", VLAN: 10, Segment: "site1"},
		{Node: "leaf3", Port: "cust1", VLAN: 10},
	}}
	route := &model.Route{Sources: map[string]uint16{"leaf1": 1, "leaf2": 2, "leaf3": 3}}
	tests := []struct {
		name  string
		reach []string
	}{
		{"all up", []string{"leaf1", "leaf2", "leaf3"}},
		{"leaf1 down", []string{"leaf2", "leaf3"}},
		{"leaf2 down", []string{"leaf1", "leaf3"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := *route
			for _, m := range spec.Members() {
				if !slices.Contains(tc.reach, m) {
					r.Unreachable = append(r.Unreachable, m)
				}
			}
			f := bumFilters(spec, &r)
			df := DesignatedForwarder(spec.Name, "site1", slices.DeleteFunc(slices.Clone(tc.reach),
				func(n string) bool { return n == "leaf3" }))
			if !slices.Contains(tc.reach, df) {
				t.Fatalf("DF %q is not reachable", df)
			}
			for _, c := range spec.Circuits[:2] {
				got := f[c.Key()]
				if got.nonDF != (c.Node != df) {
					t.Errorf("%s: non_df %v with DF %s", c.Node, got.nonDF, df)
				}
				other := map[string]uint16{"leaf1": 2, "leaf2": 1}[c.Node]
				if !slices.Equal(got.peers, []uint16{other}) {
					t.Errorf("%s: peers %v, want [%d]", c.Node, got.peers, other)
				}
			}
			if got, ok := f[spec.Circuits[2].Key()]; ok {
				t.Errorf("a single-homed circuit has a filter: %+v", got)
			}
		})
	}
}

// The DF spreads a segment's services over its leaves, and a leaf's
// failure moves only the services it was the DF of.
func TestDesignatedForwarderSpreadsAndMovesLittle(t *testing.T) {
	leaves := []string{"leaf1", "leaf2", "leaf3"}
	count := map[string]int{}
	moved := 0
	for i := range 3000 {
		svc := fmt.Sprintf("svc%d", i)
		df := DesignatedForwarder(svc, "site1", leaves)
		count[df]++
		after := DesignatedForwarder(svc, "site1", []string{"leaf1", "leaf3"})
		if df != "leaf2" && after != df {
			moved++
		}
	}
	for _, n := range leaves {
		if count[n] < 800 || count[n] > 1200 {
			t.Errorf("leaf %s is the DF of %d of 3000 services, want about 1000", n, count[n])
		}
	}
	if moved != 0 {
		t.Errorf("%d services moved that leaf2's failure did not concern", moved)
	}
	if DesignatedForwarder("svc", "site1", nil) != "" {
		t.Error("a DF without leaves")
	}
}

// Build gives the circuits on a segment their filter.
func TestBuildSegmentCircuits(t *testing.T) {
	topo := load(t)
	rec := &model.ServiceRecord{Spec: model.ServiceSpec{Name: "blue", Type: model.ELAN, Circuits: []model.Circuit{
		{Node: "leaf1", Port: "cust1", VLAN: 10, Segment: "site1"},
		{Node: "leaf2", Port: "cust1", VLAN: 10, Segment: "site1"},
		{Node: "leaf3", Port: "cust1", VLAN: 10},
	}}}
	f := build(t, topo, []*model.ServiceRecord{rec}, paths.Options{})
	df := DesignatedForwarder("blue", "site1", []string{"leaf1", "leaf2"})
	for _, n := range []string{"leaf1", "leaf2", "leaf3"} {
		cs := f.cfg[n].Circuits
		if len(cs) != 1 {
			t.Fatalf("%s: circuits %+v", n, cs)
		}
		want := dpconfig.Circuit{ID: cs[0].ID, Port: "cust1", VLAN: 10, Service: rec.ID}
		if n != "leaf3" {
			other := map[string]string{"leaf1": "leaf2", "leaf2": "leaf1"}[n]
			want.NonDF, want.Peers = n != df, []uint16{rec.Route.Sources[other]}
		}
		if !cs[0].Equal(want) {
			t.Errorf("%s: circuit %+v, want %+v", n, cs[0], want)
		}
	}
}
