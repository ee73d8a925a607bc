package desired

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/e3fabric/e3fabric/control/internal/model"
	"github.com/e3fabric/e3fabric/control/internal/paths"
)

// A route is stored and loaded back whole: what a restarted controller
// rebuilds from must be what it computed (ECMP flags and sites included).
func TestStoredRouteRoundTrip(t *testing.T) {
	topo := load(t)
	full := paths.New(topo, paths.Options{})
	specs := []model.ServiceSpec{
		{Name: "red", Type: model.ELine, ECMP: true, Circuits: []model.Circuit{
			{Node: "leaf1", Port: "cust1", VLAN: 1}, {Node: "leaf3", Port: "cust1", VLAN: 1}}},
		{Name: "blue", Type: model.ELAN, ECMP: true, Circuits: []model.Circuit{
			{Node: "leaf1", Port: "cust1", VLAN: 2, Segment: "site1"}, {Node: "leaf2", Port: "cust1", VLAN: 2, Segment: "site1"},
			{Node: "leaf3", Port: "cust1", VLAN: 2}}},
	}
	for _, spec := range specs {
		r, err := Route(&spec, full, full, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(model.StoreRoute(&r, model.LinksOf(topo)))
		if err != nil {
			t.Fatal(err)
		}
		var s model.StoredRoute
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		back, err := model.LoadRoute(&s, model.LinksOf(topo))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, r) {
			t.Errorf("%s: stored %s, loaded back %+v, want %+v", spec.Name, b, back, r)
		}
	}
}
