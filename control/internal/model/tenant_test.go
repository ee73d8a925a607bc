package model

import (
	"testing"

	"github.com/e3fabric/e3fabric/control/internal/dpconfig"
)

func TestTenantAllows(t *testing.T) {
	tn := Tenant{Name: "acme", Ports: []TenantPort{{Node: "leaf1", Port: "cust1", VLANs: "100-199,300,untagged"},
		{Node: "leaf2", Port: "cust1"}}}
	if err := tn.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		c    Circuit
		want bool
	}{
		{Circuit{Node: "leaf1", Port: "cust1", VLAN: 100}, true},
		{Circuit{Node: "leaf1", Port: "cust1", VLAN: 199}, true},
		{Circuit{Node: "leaf1", Port: "cust1", VLAN: 200}, false},
		{Circuit{Node: "leaf1", Port: "cust1", VLAN: 300}, true},
		{Circuit{Node: "leaf1", Port: "cust1", VLAN: dpconfig.Untagged}, true},
		{Circuit{Node: "leaf1", Port: "cust2", VLAN: 100}, false},
		{Circuit{Node: "leaf2", Port: "cust1", VLAN: 4094}, true}, // no list: every VLAN
		{Circuit{Node: "leaf2", Port: "cust1", VLAN: dpconfig.Untagged}, true},
	} {
		if got := tn.Allows(tc.c); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.c, got, tc.want)
		}
	}
	for _, vlans := range []string{"200-100", "0", "1-4095"} {
		bad := Tenant{Name: "x", Ports: []TenantPort{{Node: "a", Port: "b", VLANs: vlans}}}
		if bad.Validate() == nil {
			t.Errorf("VLANs %q taken", vlans)
		}
	}
	twice := Tenant{Name: "x", Ports: []TenantPort{{Node: "a", Port: "b"}, {Node: "a", Port: "b"}}}
	if twice.Validate() == nil {
		t.Error("a port listed twice taken")
	}
}
