package dpconfig

import (
	"reflect"
	"testing"
)

// The generated kinds name each object's methods and delete params as the
// datapath takes them, and keep the order that references need.
func TestKinds(t *testing.T) {
	for _, tc := range []struct {
		kind     Kind
		add, del string
		key      string
		params   any
	}{
		{KindSettings, "settings_set", "", "", nil},
		{KindPort, "port_add", "port_del", "fab0", map[string]string{"name": "fab0"}},
		{KindNexthop, "nexthop_add", "nexthop_del", "7", map[string]uint32{"id": 7}},
		{KindProtected, "nhlfe_add", "nhlfe_del", "9", map[string]uint32{"id": 9}},
		{KindECMP, "ecmp_add", "ecmp_del", "12", map[string]uint32{"id": 12}},
		{KindLabel, "label_add", "label_del", "1000", map[string]uint32{"label": 1000}},
	} {
		if got := tc.kind.AddMethod(); got != tc.add {
			t.Errorf("%s: add %q, want %q", tc.kind, got, tc.add)
		}
		if got := tc.kind.DelMethod(); got != tc.del {
			t.Errorf("%s: del %q, want %q", tc.kind, got, tc.del)
		}
		if tc.params != nil && !reflect.DeepEqual(tc.kind.DelParams(tc.key), tc.params) {
			t.Errorf("%s: del params %v, want %v", tc.kind, tc.kind.DelParams(tc.key), tc.params)
		}
	}
	// Each kind after those its objects refer to.
	for _, pair := range [][2]Kind{{KindPort, KindNexthop}, {KindNexthop, KindBFD}, {KindNexthop, KindNHLFE},
		{KindBFD, KindProtected}, {KindNHLFE, KindProtected}, {KindProtected, KindECMP}, {KindECMP, KindService},
		{KindService, KindCircuit}, {KindCircuit, KindLabel}, {KindService, KindLabel}} {
		if pair[0] >= pair[1] {
			t.Errorf("%s is not before %s", pair[0], pair[1])
		}
	}
	// Keys are what the datapath names objects by.
	if k := (Port{Name: "c1"}).Key(); k != "c1" {
		t.Errorf("port key %q", k)
	}
	if k := (Label{Label: 100}).Key(); k != "100" {
		t.Errorf("label key %q", k)
	}
	f := &Fragment{Ports: []Port{{Name: "b"}, {Name: "a"}}, Labels: []Label{{Label: 20}, {Label: 16}}}
	if f.Sort(); f.Ports[0].Name != "a" || f.Labels[0].Label != 16 || f.Len() != 4 {
		t.Errorf("sorted fragment %+v, %d objects", f, f.Len())
	}
}
