package dpconfig

import (
	"encoding/json"
	"strings"
	"testing"
)

func u32(v uint32) *uint32 { return &v }
func u16(v uint16) *uint16 { return &v }

func TestNormalizeEqual(t *testing.T) {
	base := Config{
		Version:  1,
		Settings: DefaultSettings(),
		Ports: []Port{
			{Name: "fab0", Devargs: "net_null0", Kind: KindFabric, MTU: 2000, MAC: "02:00:00:00:00:aa", RxQueues: 1},
			{Name: "cust0", Devargs: "net_null1", Kind: KindCustomer, MTU: 1500, RxQueues: 1},
		},
		Nexthops: []Nexthop{{ID: 1, Port: "fab0", MAC: "02:00:00:00:00:bb"}},
		NHLFEs:   []NHLFE{{ID: 1, Nexthop: 1, Label: 100}, {ID: 2, Nexthop: 1, Label: 200}},
		Services: []Service{{ID: 7, Type: ServiceELAN, Remotes: []Remote{{Source: 2, NHLFE: 1}, {Source: 1, NHLFE: 2}}, Branches: []uint32{2, 1}}},
		Circuits: []Circuit{{ID: 1, Port: "cust0", VLAN: 10, Service: 7}},
		Labels: []Label{{Label: 300, Type: LabelELAN, Service: u32(7), Source: u16(1)},
			{Label: 301, Type: LabelReplicate, RPFPort: "fab0", Branches: []uint32{2, 1}}},
	}
	same := func(mut func(*Config)) Config {
		b, _ := json.Marshal(base)
		var c Config
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatal(err)
		}
		mut(&c)
		return c
	}
	for _, tc := range []struct {
		name  string
		other Config
		equal bool
	}{
		{"identical", same(func(*Config) {}), true},
		{"version 0 means 1", same(func(c *Config) { c.Version = 0 }), true},
		{"zero settings mean defaults", same(func(c *Config) { c.Settings = Settings{} }), true},
		{"list order", same(func(c *Config) {
			c.Ports[0], c.Ports[1] = c.Ports[1], c.Ports[0]
			c.NHLFEs[0], c.NHLFEs[1] = c.NHLFEs[1], c.NHLFEs[0]
			c.Labels[0], c.Labels[1] = c.Labels[1], c.Labels[0]
		}), true},
		{"set order", same(func(c *Config) {
			c.Services[0].Remotes = []Remote{{Source: 1, NHLFE: 2}, {Source: 2, NHLFE: 1}}
			c.Services[0].Branches = []uint32{1, 2}
			c.Labels[1].Branches = []uint32{1, 2}
		}), true},
		{"mac case", same(func(c *Config) { c.Nexthops[0].MAC = "02:00:00:00:00:BB" }), true},
		{"default mtu and queues", same(func(c *Config) { c.Ports[0].MTU, c.Ports[1].MTU, c.Ports[1].RxQueues = 0, 0, 0 }), true},
		{"circuits and labels removed", same(func(c *Config) { c.Circuits, c.Labels = nil, []Label{} }), false},
		{"fields the type does not use", same(func(c *Config) {
			c.Services[0].NHLFE = u32(1)                         // elan: no nhlfe
			c.Labels[0].RPFPort, c.Labels[0].NHLFE = "x", u32(1) // elan label: service+source only
		}), true},
		{"settings differ", same(func(c *Config) { c.Settings.ControlWord = false }), false},
		{"mtu differs", same(func(c *Config) { c.Ports[1].MTU = 9000 }), false},
		{"nhlfe label differs", same(func(c *Config) { c.NHLFEs[1].Label = 201 }), false},
		{"remote differs", same(func(c *Config) { c.Services[0].Remotes[0].NHLFE = 2 }), false},
		{"vlan differs", same(func(c *Config) { c.Circuits[0].VLAN = Untagged }), false},
		{"label source differs", same(func(c *Config) { c.Labels[0].Source = u16(0) }), false},
	} {
		if got := base.Equal(tc.other); got != tc.equal {
			t.Errorf("%s: Equal = %v, want %v", tc.name, got, tc.equal)
		}
	}
	// nil and empty lists normalise to the same thing.
	a, b := Config{}, Config{Ports: []Port{}, Labels: []Label{}}
	if !a.Equal(b) {
		t.Error("nil and empty lists differ")
	}
	if js, _ := json.Marshal(a.Normalize()); !strings.Contains(string(js), `"ports":[]`) {
		t.Errorf("normalised empty config marshals lists as null: %s", js)
	}
}

func TestNormalizeDoesNotAlias(t *testing.T) {
	s := Service{ID: 1, Type: ServiceELAN, Branches: []uint32{3, 1, 2}}
	n := s.Normalize()
	n.Branches[0] = 99
	if s.Branches[0] != 3 || s.Branches[1] != 1 {
		t.Errorf("Normalize changed its input: %v", s.Branches)
	}
}

func TestSettingsNormalize(t *testing.T) {
	// Only the all-zero Settings means "defaults": aging 0, control word
	// off and no move damping are real choices.
	got := Settings{TTL: 32, MACAgingS: 0, ControlWord: false}.Normalize()
	want := Settings{TTL: 32, MACAgingS: 0, ControlWord: false, MACLimit: DefaultMACLimit,
		MACMoveWindowS: DefaultMACMoveWinS}
	if got != want {
		t.Errorf("Normalize = %+v, want %+v", got, want)
	}
}
