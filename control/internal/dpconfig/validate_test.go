package dpconfig

import (
	"strings"
	"testing"
)

func validConfig() Config {
	return Config{
		Ports: []Port{
			{Name: "fab0", Devargs: "net_null0", Kind: KindFabric},
			{Name: "cust0", Devargs: "net_null1", Kind: KindCustomer},
		},
		Nexthops: []Nexthop{{ID: 1, Port: "fab0", MAC: "02:00:00:00:00:bb"}},
		NHLFEs:   []NHLFE{{ID: 1, Nexthop: 1, Label: 100}},
		Services: []Service{{ID: 1, Type: ServiceELine, NHLFE: u32(1)}, {ID: 2, Type: ServiceELAN, Branches: []uint32{1}}},
		Circuits: []Circuit{{ID: 1, Port: "cust0", VLAN: 10, Service: 1}, {ID: 2, Port: "cust0", VLAN: Untagged, Service: 2}},
		Labels: []Label{{Label: 16, Type: LabelELine, Service: u32(1)},
			{Label: 17, Type: LabelReplicate, RPFPort: "fab0", Branches: []uint32{1}, Service: u32(2), Source: u16(0)}},
	}
}

func TestValidate(t *testing.T) {
	if err := validConfig().Validate(); err != nil {
		t.Fatalf("valid config: %v", err)
	}
	for _, tc := range []struct {
		name string
		mut  func(*Config)
		want string
	}{
		{"bad kind", func(c *Config) { c.Ports[0].Kind = "core" }, `kind "core"`},
		{"duplicate port", func(c *Config) { c.Ports = append(c.Ports, c.Ports[0]) }, "port fab0: listed twice"},
		{"nexthop on customer port", func(c *Config) { c.Nexthops[0].Port = "cust0" }, "not a fabric port"},
		{"bad mac", func(c *Config) { c.Nexthops[0].MAC = "zz" }, "not a MAC"},
		{"nhlfe to missing nexthop", func(c *Config) { c.NHLFEs[0].Nexthop = 9 }, "nexthop 9 does not exist"},
		{"reserved label", func(c *Config) { c.NHLFEs[0].Label = 3 }, "label 3 out of range"},
		{"service to missing nhlfe", func(c *Config) { c.Services[0].NHLFE = u32(5) }, "nhlfe 5 does not exist"},
		{"circuit vlan zero", func(c *Config) { c.Circuits[0].VLAN = 0 }, "vlan 0"},
		{"circuit (port, vlan) twice", func(c *Config) { c.Circuits[1].VLAN = 10 }, "already used by circuit 1"},
		{"circuit to missing service", func(c *Config) { c.Circuits[0].Service = 9 }, "service 9 does not exist"},
		{"swap without nhlfe", func(c *Config) { c.Labels[0] = Label{Label: 16, Type: LabelSwap} }, "swap without nhlfe"},
		{"replicate half local", func(c *Config) { c.Labels[1].Source = nil }, "both service and source"},
		{"version", func(c *Config) { c.Version = 2 }, "version 2"},
		// The params' own limits (checks_gen.go, from the schema).
		{"port name too long", func(c *Config) { c.Ports[1].Name = strings.Repeat("c", 32) }, "want 1..31 bytes"},
		{"worker out of range", func(c *Config) { c.Ports[0].Workers = []int16{0, 16} }, "port fab0: workers[1] 16 out of range -1..15"},
		{"settings mac_limit", func(c *Config) { c.Settings.MACLimit = -1 }, "settings: mac_limit -1 out of range"},
		{"bfd id", func(c *Config) { c.BFD = []BFD{{ID: 4096, Nexthop: 1}} }, "bfd 4096: id 4096 out of range 0..4095"},
		{"ecmp without members", func(c *Config) { c.ECMPs = []ECMP{{ID: 9}} }, "ecmp 9: members: 0 of them, want 1..8"},
		{"remote source", func(c *Config) { c.Services[1].Remotes = []Remote{{Source: 1024, NHLFE: 1}} }, "service 2: remotes[0]: source 1024 out of range"},
		{"label type", func(c *Config) { c.Labels[0].Type = "pop" }, `label 16: type "pop": want swap, eline`},
		{"in_ports name", func(c *Config) { c.Labels[1].InPorts = []string{""} }, `in_ports[0] "": want 1..31 bytes`},
	} {
		c := validConfig()
		tc.mut(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Validate = %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}
