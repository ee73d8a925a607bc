package controller

import (
	"testing"

	"github.com/e3fabric/e3fabric/control/internal/model"
)

// oamPlan: an E-Line from its first circuit's node to the other end, on
// its active path; an E-LAN from its first member to every other, each
// with its source id and unicast path; a hairpin has nothing to ping.
func TestOAMPlan(t *testing.T) {
	hop := func(link int, from, to string) model.Hop { return model.Hop{Link: link, From: from, To: to} }
	primary := model.Path{hop(1, "leaf1", "spine1"), hop(3, "spine1", "leaf2")}
	backup := model.Path{hop(2, "leaf1", "spine2"), hop(4, "spine2", "leaf2")}
	for _, tc := range []struct {
		name    string
		rec     model.ServiceRecord
		from    string
		targets []oamTarget
		bad     bool
	}{
		{name: "eline on its backup", from: "leaf2",
			rec: model.ServiceRecord{Spec: model.ServiceSpec{Type: model.ELine, Circuits: []model.Circuit{
				{Node: "leaf2", Port: "c", VLAN: 1}, {Node: "leaf1", Port: "c", VLAN: 1}}},
				Route: model.Route{Primary: primary, Backup: backup, Active: "backup"}},
			targets: []oamTarget{{node: "leaf1", path: backup}}},
		{name: "hairpin", bad: true,
			rec: model.ServiceRecord{Spec: model.ServiceSpec{Type: model.ELine, Circuits: []model.Circuit{
				{Node: "leaf1", Port: "c", VLAN: 1}, {Node: "leaf1", Port: "c", VLAN: 2}}}}},
		{name: "elan", from: "leaf1",
			rec: model.ServiceRecord{Spec: model.ServiceSpec{Type: model.ELAN, Circuits: []model.Circuit{
				{Node: "leaf3", Port: "c", VLAN: 1}, {Node: "leaf1", Port: "c", VLAN: 1}, {Node: "leaf2", Port: "c", VLAN: 1}}},
				Route: model.Route{Sources: map[string]uint16{"leaf1": 1, "leaf2": 2, "leaf3": 3},
					Unicast: []model.UnicastPath{{From: "leaf1", To: "leaf2", Path: primary}, {From: "leaf2", To: "leaf1", Path: backup}}}},
			targets: []oamTarget{{node: "leaf2", source: 2, path: primary}, {node: "leaf3", source: 3}}},
		{name: "unreachable member", bad: true,
			rec: model.ServiceRecord{Spec: model.ServiceSpec{Type: model.ELAN, Circuits: []model.Circuit{
				{Node: "leaf1", Port: "c", VLAN: 1}, {Node: "leaf2", Port: "c", VLAN: 1}}},
				Route: model.Route{Unreachable: []string{"leaf2"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			from, targets, err := oamPlan(&tc.rec)
			if (err != nil) != tc.bad {
				t.Fatalf("err %v", err)
			}
			if tc.bad {
				return
			}
			if from != tc.from || len(targets) != len(tc.targets) {
				t.Fatalf("from %s targets %+v", from, targets)
			}
			for i, want := range tc.targets {
				got := targets[i]
				if got.node != want.node || got.source != want.source || len(got.path) != len(want.path) ||
					(len(want.path) > 0 && got.path[0].Link != want.path[0].Link) {
					t.Errorf("target %d = %+v, want %+v", i, got, want)
				}
			}
		})
	}
}
