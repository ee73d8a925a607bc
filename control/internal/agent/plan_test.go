package agent

import (
	"slices"
	"testing"

	"github.com/e3fabric/e3fabric/control/internal/dpconfig"
)

func u32(v uint32) *uint32 { return &v }
func u16(v uint16) *uint16 { return &v }

// base is a leaf with one E-Line (service 1) and one E-LAN (service 2).
func base() dpconfig.Config {
	return dpconfig.Config{
		Version:  1,
		Settings: dpconfig.DefaultSettings(),
		Ports: []dpconfig.Port{
			{Name: "cust0", Devargs: "net_null0", Kind: dpconfig.KindCustomer},
			{Name: "fab0", Devargs: "net_null1", Kind: dpconfig.KindFabric},
		},
		Nexthops: []dpconfig.Nexthop{{ID: 1, Port: "fab0", MAC: "02:00:00:00:01:01"}},
		NHLFEs:   []dpconfig.NHLFE{{ID: 10, Nexthop: 1, Label: 1000}, {ID: 11, Nexthop: 1, Label: 1001}},
		Services: []dpconfig.Service{
			{ID: 1, Type: dpconfig.ServiceELine, NHLFE: u32(10)},
			{ID: 2, Type: dpconfig.ServiceELAN, Remotes: []dpconfig.Remote{{Source: 1, NHLFE: 11}}, Branches: []uint32{11}},
		},
		Circuits: []dpconfig.Circuit{{ID: 1, Port: "cust0", VLAN: 100, Service: 1}, {ID: 2, Port: "cust0", VLAN: 200, Service: 2}},
		Labels: []dpconfig.Label{
			{Label: 500, Type: dpconfig.LabelELine, Service: u32(1)},
			{Label: 501, Type: dpconfig.LabelELAN, Service: u32(2), Source: u16(1)},
		},
	}
}

func edit(mut func(*dpconfig.Config)) dpconfig.Config {
	c := base()
	mut(&c)
	return c
}

func opStrings(ops []Op) []string {
	out := make([]string, 0, len(ops))
	for _, op := range ops {
		out = append(out, op.String())
	}
	return out
}

func TestDiff(t *testing.T) {
	empty := dpconfig.Config{}
	for _, tc := range []struct {
		name            string
		desired, actual dpconfig.Config
		want            []string
	}{
		{name: "equal", desired: base(), actual: base(), want: nil},
		{name: "both empty, nil vs empty slices", desired: dpconfig.Config{Ports: []dpconfig.Port{}},
			actual: dpconfig.Config{Version: 1, Settings: dpconfig.DefaultSettings()}, want: nil},
		{name: "equal modulo order, case and defaults",
			desired: edit(func(c *dpconfig.Config) { c.Nexthops[0].MAC = "02:00:00:00:0A:0B" }),
			actual: edit(func(c *dpconfig.Config) {
				slices.Reverse(c.Ports)
				slices.Reverse(c.Labels)
				c.Ports[0].MTU, c.Ports[1].MTU = 2000, 1500 // the datapath's defaults, spelled out
				c.Ports[0].RxQueues = 1
				c.Ports[1].MAC = "02:AA:00:00:00:01" // the device's MAC; desired leaves it open
				c.Nexthops[0].MAC = "02:00:00:00:0a:0b"
				c.Settings = dpconfig.Settings{}
			}),
			want: nil},
		{name: "an nhlfe becomes protected: replaced under its new kind, never deleted",
			desired: edit(func(c *dpconfig.Config) {
				c.NHLFEs = append(c.NHLFEs, dpconfig.NHLFE{ID: 12, Nexthop: 1, Label: 1002})
				c.NHLFEs[0] = dpconfig.NHLFE{ID: 10, Protect: &dpconfig.Protection{Primary: 11, Backup: 12, Watch: 1}}
			}),
			actual: base(),
			want:   []string{"add nhlfe 12", "add protected nhlfe 10"}},
		{name: "everything new, in dependency order", desired: base(), actual: empty,
			want: []string{"add port cust0", "add port fab0", "add nexthop 1", "add nhlfe 10", "add nhlfe 11",
				"add service 1", "add service 2", "add circuit 1", "add circuit 2", "add label 500", "add label 501"}},
		{name: "everything gone, in reverse dependency order", desired: empty, actual: base(),
			want: []string{"delete label 500", "delete label 501", "delete circuit 1", "delete circuit 2",
				"delete service 1", "delete service 2", "delete nhlfe 10", "delete nhlfe 11",
				"delete nexthop 1", "delete port cust0", "delete port fab0"}},
		{name: "a service id reused with another type: its old circuits, labels and itself go first",
			desired: edit(func(c *dpconfig.Config) {
				c.Services[0] = dpconfig.Service{ID: 1, Type: dpconfig.ServiceELAN, Remotes: []dpconfig.Remote{{Source: 1, NHLFE: 10}}}
				c.Labels[0] = dpconfig.Label{Label: 502, Type: dpconfig.LabelELAN, Service: u32(1), Source: u16(1)}
			}),
			actual: base(),
			want: []string{"delete label 500", "delete circuit 1", "delete service 1",
				"add service 1", "add circuit 1", "add label 502"}},
		{name: "settings first",
			desired: edit(func(c *dpconfig.Config) {
				c.Settings.ControlWord = false
				c.Ports = append(c.Ports, dpconfig.Port{Name: "cust1", Devargs: "net_null2", Kind: dpconfig.KindCustomer})
			}),
			actual: base(),
			want:   []string{"set settings", "add port cust1"}},
		{name: "re-point an E-Line to a new nhlfe on a new nexthop: make before break",
			desired: edit(func(c *dpconfig.Config) {
				c.Nexthops = []dpconfig.Nexthop{{ID: 2, Port: "fab0", MAC: "02:00:00:00:02:02"}}
				c.NHLFEs = []dpconfig.NHLFE{{ID: 11, Nexthop: 2, Label: 1001}, {ID: 12, Nexthop: 2, Label: 2000}}
				c.Services[0].NHLFE = u32(12)
			}),
			actual: base(),
			want: []string{"add nexthop 2", // new first
				"add nhlfe 12", "replace nhlfe 11", // new first, then re-point
				"replace service 1",
				"delete nhlfe 10", "delete nexthop 1"}}, // then break
		{name: "replace in place: nhlfe label and circuit vlan",
			desired: edit(func(c *dpconfig.Config) {
				c.NHLFEs[0].Label = 1500
				c.Circuits[1].VLAN = dpconfig.Untagged
			}),
			actual: base(),
			want:   []string{"replace nhlfe 10", "replace circuit 2"}},
		{name: "port mac and mtu changes replace the port",
			desired: edit(func(c *dpconfig.Config) {
				c.Ports[1].MAC = "02:00:00:00:0f:0f"
				c.Ports[0].MTU = 9000
			}),
			actual: base(),
			want:   []string{"replace port cust0", "replace port fab0"}},
		{name: "E-LAN gains a remote and a branch",
			desired: edit(func(c *dpconfig.Config) {
				c.NHLFEs = append(c.NHLFEs, dpconfig.NHLFE{ID: 13, Nexthop: 1, Label: 1003})
				c.Services[1].Remotes = append(c.Services[1].Remotes, dpconfig.Remote{Source: 2, NHLFE: 13})
				c.Services[1].Branches = append(c.Services[1].Branches, 13)
				c.Labels = append(c.Labels, dpconfig.Label{Label: 502, Type: dpconfig.LabelELAN, Service: u32(2), Source: u16(2)})
			}),
			actual: base(),
			// per kind: the service gains its remote before the label that names it
			want: []string{"add nhlfe 13", "replace service 2", "add label 502"}},
		{name: "label changes type",
			desired: edit(func(c *dpconfig.Config) {
				c.Labels[0] = dpconfig.Label{Label: 500, Type: dpconfig.LabelSwap, NHLFE: u32(10)}
			}),
			actual: base(),
			want:   []string{"replace label 500"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := opStrings(Diff(tc.desired, tc.actual))
			if !slices.Equal(got, tc.want) {
				t.Errorf("Diff:\n got  %q\n want %q", got, tc.want)
			}
		})
	}
}

// Ops carry the desired object for add/replace and the current one for
// delete, normalised, so Apply sends what the datapath should end up with.
func TestDiffOpObjects(t *testing.T) {
	desired := edit(func(c *dpconfig.Config) { c.NHLFEs[0].Label = 1500 })
	actual := edit(func(c *dpconfig.Config) { c.Labels = c.Labels[:1] })
	actual.Labels = append(actual.Labels, dpconfig.Label{Label: 999, Type: dpconfig.LabelELine, Service: u32(1)})
	plan := Diff(desired, actual)
	want := []Op{
		{Action: Replace, Kind: dpconfig.KindNHLFE, Key: "10", Obj: dpconfig.NHLFE{ID: 10, Nexthop: 1, Label: 1500}},
		{Action: Add, Kind: dpconfig.KindLabel, Key: "501", Obj: desired.Labels[1].Normalize()},
		{Action: Delete, Kind: dpconfig.KindLabel, Key: "999", Obj: dpconfig.Label{Label: 999, Type: dpconfig.LabelELine, Service: u32(1)}},
	}
	if len(plan) != len(want) {
		t.Fatalf("plan %q, want %d ops", opStrings(plan), len(want))
	}
	for i := range want {
		g, w := plan[i], want[i]
		if g.Action != w.Action || g.Kind != w.Kind || g.Key != w.Key {
			t.Errorf("op %d = %s, want %s", i, g, w)
		}
		switch o := g.Obj.(type) {
		case dpconfig.Label:
			if !o.Equal(w.Obj.(dpconfig.Label)) {
				t.Errorf("op %d object %+v, want %+v", i, o, w.Obj)
			}
		case dpconfig.NHLFE:
			if o != w.Obj.(dpconfig.NHLFE) {
				t.Errorf("op %d object %+v, want %+v", i, o, w.Obj)
			}
		default:
			t.Errorf("op %d object of type %T", i, g.Obj)
		}
	}
}
