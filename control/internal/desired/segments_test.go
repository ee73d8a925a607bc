package desired

import (
	"fmt"
	"slices"
	"testing"

	"github.com/e3fabric/e3fabric/control/internal/dpconfig"
	"github.com/e3fabric/e3fabric/control/internal/labels"
	"github.com/e3fabric/e3fabric/control/internal/model"
	"github.com/e3fabric/e3fabric/control/internal/paths"
	"github.com/e3fabric/e3fabric/control/internal/topology"
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
		{"spine2 down: no backups", paths.Options{DownNodes: map[string]bool{"spine2": true}}, []string{"leaf1", "leaf2"}},
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
				if tc.down.DownNodes[n] || tc.down.DownNodes["spine2"] && n != "leaf3" {
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
				// It takes frames only from the ports that the labels it
				// sits below (the site's leaves' sources) take them from.
				var below []string
				for _, l := range f.cfg[n].Labels {
					for _, leaf := range tc.leaves {
						if l.Source != nil && *l.Source == rec.Route.Sources[leaf] && leaf != n {
							below = append(below, l.InPorts...)
						}
					}
				}
				if len(seg[0].InPorts) == 0 && len(below) > 0 {
					t.Errorf("%s: segment label takes frames from any port", n)
				}
				for _, p := range seg[0].InPorts {
					if !slices.Contains(below, p) {
						t.Errorf("%s: segment label takes frames from %s, where no site leaf's label does", n, p)
					}
				}
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
					// Each member leaves the group when its path's check fails.
					for _, m := range members {
						if f.nhlfe(n, m).Protect == nil {
							t.Errorf("%s: group member %d watches no check", n, m)
						}
					}
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

// An E-Line to a multi-homed site: active-standby when the site floods
// (the DF's leg, protected by the other leaf's; only the DF takes frames
// from the site), active-active with a LAG (a group over both legs).
func TestELineToSite(t *testing.T) {
	for _, tc := range []struct {
		name string
		lag  bool
		down paths.Options
	}{
		{"active-standby", false, paths.Options{}},
		{"active-active", true, paths.Options{}},
		{"active-standby, leaf1 down", false, paths.Options{DownNodes: map[string]bool{"leaf1": true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			topo := load(t)
			topo.Segments = []topology.Segment{{Name: "site1", LAG: tc.lag, Ports: []topology.Endpoint{
				{Node: "leaf1", Port: "cust1"}, {Node: "leaf2", Port: "cust1"}}}}
			rec := &model.ServiceRecord{Spec: model.ServiceSpec{Name: "teal", Type: model.ELine, Circuits: []model.Circuit{
				{Node: "leaf3", Port: "cust1", VLAN: 5},
				{Node: "leaf1", Port: "cust1", VLAN: 5, Segment: "site1"}, {Node: "leaf2", Port: "cust1", VLAN: 5, Segment: "site1"}}}}
			f := build(t, topo, []*model.ServiceRecord{rec}, tc.down)
			var leaves []string
			for _, l := range []string{"leaf1", "leaf2"} {
				if !tc.down.DownNodes[l] {
					leaves = append(leaves, l)
				}
			}
			if got := rec.Route.Sites["site1"].Leaves; !slices.Equal(got, leaves) {
				t.Fatalf("leaves %v, want %v", got, leaves)
			}
			df := DesignatedForwarder("teal", "site1", leaves)
			in := *f.service("leaf3", rec.ID).NHLFE
			var reached []string
			switch {
			case len(leaves) == 1:
				at, _, _ := f.unicast("leaf3", in)
				reached = []string{at}
			case tc.lag:
				for _, m := range f.ecmpGroup("leaf3", in).Members {
					at, _, _ := f.unicast("leaf3", m)
					reached = append(reached, at)
				}
			default:
				p := f.nhlfe("leaf3", in).Protect
				primary, _, _, _ := f.walk("leaf3", p.Primary)
				backup, _, _, _ := f.walk("leaf3", p.Backup)
				if primary != df || backup == df {
					t.Fatalf("leaf3 goes to %s, else %s; the DF is %s", primary, backup, df)
				}
				if far, _ := f.check("leaf3", p.Watch); far != df {
					t.Fatalf("leaf3 watches a check toward %s, not the DF %s", far, df)
				}
				reached = []string{primary, backup}
			}
			slices.Sort(reached)
			if !slices.Equal(reached, leaves) {
				t.Fatalf("leaf3 reaches %v, want %v", reached, leaves)
			}
			for _, l := range leaves {
				at, e, _ := f.unicast(l, *f.service(l, rec.ID).NHLFE)
				if at != "leaf3" || e.Type != dpconfig.LabelELine || *e.Service != rec.ID {
					t.Fatalf("%s's way back ends at %s in %+v", l, at, e)
				}
				c := f.cfg[l].Circuits[0]
				wantNonDF := !tc.lag && len(leaves) > 1 && l != df
				if c.NonDF != wantNonDF || c.SiteFloods != !tc.lag {
					t.Errorf("%s: circuit %+v (DF %s)", l, c, df)
				}
			}
		})
	}
}
