package desired

import (
	"fmt"
	"slices"
	"testing"

	"github.com/e3fabric/e3fabric/control/internal/dpconfig"
	"github.com/e3fabric/e3fabric/control/internal/labels"
	"github.com/e3fabric/e3fabric/control/internal/model"
	"github.com/e3fabric/e3fabric/control/internal/paths"
)

// Each case: what is down, and the leaves that reach the site then.
func TestSites(t *testing.T) {
	if announceValue([]string{"leaf1", "leaf2"}) == announceValue([]string{"leaf2"}) {
		t.Fatal("announce values: one for two different sets of leaves")
	}
	topo := load(t)
	tests := []struct {
		name   string
		down   paths.Options
		leaves []string
	}{
		{"all up", paths.Options{}, []string{"leaf1", "leaf2"}},
		{"leaf1 down", paths.Options{DownNodes: map[string]bool{"leaf1": true}}, []string{"leaf2"}},
		{"leaf1's site port down", paths.Options{DownPorts: map[string]bool{"leaf1:cust1": true}}, []string{"leaf2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := &model.ServiceRecord{Spec: model.ServiceSpec{Name: "blue", Type: model.ELAN, Circuits: []model.Circuit{
				{Node: "leaf1", Port: "cust1", VLAN: 10, Segment: "site1"},
				{Node: "leaf2", Port: "cust1", VLAN: 10, Segment: "site1"},
				{Node: "leaf3", Port: "cust1", VLAN: 10},
			}}}
			f := build(t, topo, []*model.ServiceRecord{rec}, tc.down)
			sr := rec.Route.Sites["site1"]
			if sr == nil || !slices.Equal(sr.Leaves, tc.leaves) {
				t.Fatalf("site route %+v, want leaves %v", sr, tc.leaves)
			}
			for n, id := range rec.Route.Sources {
				if id == sr.Source {
					t.Fatalf("the site's source %d is %s's too", id, n)
				}
			}
			df := DesignatedForwarder("blue", "site1", tc.leaves)
			var label uint32
			for _, n := range []string{"leaf1", "leaf2", "leaf3"} {
				if tc.down.DownNodes[n] {
					continue
				}
				// The segment label: one value, on every member, the site's source.
				var seg []dpconfig.Label
				for _, l := range f.cfg[n].Labels {
					if l.Label >= labels.SegmentLabelMin {
						seg = append(seg, l)
					}
				}
				if len(seg) != 1 || seg[0].Type != dpconfig.LabelELAN || *seg[0].Source != sr.Source ||
					(label != 0 && seg[0].Label != label) {
					t.Fatalf("%s: segment labels %+v", n, seg)
				}
				label = seg[0].Label
				c := f.cfg[n].Circuits[0]
				if n == "leaf3" {
					if c.NonDF || c.Peers != nil || c.SegmentLabel != 0 || c.SegmentSource != 0 {
						t.Errorf("single-homed circuit %+v", c)
					}
				} else {
					other := map[string]string{"leaf1": "leaf2", "leaf2": "leaf1"}[n]
					reaches := slices.Contains(tc.leaves, n)
					announce := map[bool]uint32{true: announceValue(tc.leaves)}[reaches]
					if c.NonDF != (n != df) || !slices.Equal(c.Peers, []uint16{rec.Route.Sources[other]}) ||
						c.SegmentLabel != label || (c.SegmentSource == sr.Source) != reaches || c.Announce != announce {
						t.Errorf("%s: circuit %+v (DF %s, label %d, source %d)", n, c, df, label, sr.Source)
					}
					// While its link to the site is down, it sends the site's
					// frames to the other leaf's circuit entry.
					if tc.down.DownNodes[other] {
						if c.Redirect != 0 {
							t.Errorf("%s: a redirect toward %s, which is down", n, other)
						}
					} else {
						at, e, _ := f.unicast(n, c.Redirect)
						if at != other || e.Type != dpconfig.LabelCircuit || *e.Circuit != f.cfg[other].Circuits[0].ID {
							t.Errorf("%s: redirect ends at %s in %+v", n, at, e)
						}
					}
				}
				// A member that does not reach the site itself reaches it
				// through each leaf that does: one flow each.
				if slices.Contains(tc.leaves, n) {
					continue
				}
				var nh uint32
				for _, r := range f.service(n, rec.ID).Remotes {
					if r.Source == sr.Source {
						nh = r.NHLFE
					}
				}
				members := []uint32{nh}
				if len(tc.leaves) > 1 {
					members = f.ecmpGroup(n, nh).Members
				}
				var at []string
				for _, m := range members {
					to, _, _ := f.unicast(n, m)
					at = append(at, to)
				}
				slices.Sort(at)
				if !slices.Equal(at, tc.leaves) {
					t.Errorf("%s: the site's source reaches %v, want %v", n, at, tc.leaves)
				}
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
