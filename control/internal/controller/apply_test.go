package controller

import (
	"context"
	"fmt"
	"testing"

	"github.com/e3fabric/e3fabric/control/internal/model"
	"github.com/e3fabric/e3fabric/control/internal/store/storetest"
	"github.com/e3fabric/e3fabric/control/internal/topology"
)

func TestApply(t *testing.T) {
	ctx := context.Background()
	cli := storetest.Start(t, 23812)
	c, _ := start(t, cli, Options{IgnoreStatus: true})
	importTopo(t, c)
	if err := c.CreateServices(ctx, []model.ServiceSpec{eline("red", 100), elan("blue", 200)}); err != nil {
		t.Fatal(err)
	}
	file := func(services ...model.ServiceSpec) model.Intent {
		topo, _, err := topology.Load("../testdata/fabric.yaml")
		if err != nil {
			t.Fatal(err)
		}
		return model.Intent{Topology: topo, Services: services}
	}
	blue2 := elan("blue", 200)
	blue2.Circuits = blue2.Circuits[:2]
	blue2.MACLimit = 500
	plan := func(res *model.ApplyResult) string {
		s := ""
		for _, it := range res.Plan {
			s += fmt.Sprintf("%s %s %s %v; ", it.Action, it.Kind, it.Name, it.Changes)
		}
		return s
	}
	snap := func() *Snapshot {
		s, err := c.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	before := snap()

	// A dry run shows the plan and changes nothing.
	res, err := c.Apply(ctx, &model.ApplyRequest{Intent: file(eline("red", 100), blue2, eline("green", 300)), DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	want := "update service blue [{circuits [leaf1:cust1:200 leaf2:cust1:200 leaf3:cust1:200] [leaf1:cust1:200 leaf2:cust1:200]} " +
		"{mac_limit <nil> 500}]; create service green []; "
	if got := plan(res); got != want || res.Applied || res.Generation != before.Generation {
		t.Fatalf("dry run: %s (applied %v, generation %d)\nwant %s", got, res.Applied, res.Generation, want)
	}
	if s := snap(); s.Generation != before.Generation || len(s.Services) != 2 {
		t.Fatal("a dry run changed the fabric")
	}

	// Applied (blue's flood tree moves: in two steps, docs/control-plane.md);
	// the unchanged and updated services keep their labels.
	res, err = c.Apply(ctx, &model.ApplyRequest{Intent: file(eline("red", 100), blue2, eline("green", 300)),
		Generation: before.Generation})
	after := snap()
	if err != nil || !res.Applied || res.Generation <= before.Generation || res.Generation != after.Generation {
		t.Fatalf("apply: %v %+v", err, res)
	}
	if fmt.Sprint(allocsT(t, after.Services["red"])) != fmt.Sprint(allocsT(t, before.Services["red"])) ||
		after.Services["blue"].ID != before.Services["blue"].ID || after.Services["green"] == nil ||
		after.Services["blue"].Spec.MACLimit != 500 {
		t.Fatal("apply did not keep red and blue, or did not make green")
	}

	// Applying it again changes nothing; without prune, an unlisted
	// service stays.
	for _, in := range []model.Intent{file(eline("red", 100), blue2, eline("green", 300)), file(blue2, eline("green", 300))} {
		if res, err := c.Apply(ctx, &model.ApplyRequest{Intent: in}); err != nil || len(res.Plan) != 0 || res.Applied {
			t.Fatalf("again: %v %s", err, plan(res))
		}
	}
	// With prune it goes; a link's cost changes in the same change (the
	// paths it moves: in two steps).
	in := file(blue2, eline("green", 300))
	in.Topology.Links[0].Cost = 50
	res, err = c.Apply(ctx, &model.ApplyRequest{Intent: in, Prune: true})
	if err != nil || !res.Applied || res.Generation <= after.Generation || res.Generation != snap().Generation {
		t.Fatalf("prune: %v %+v", err, res)
	}
	if got := plan(res); got != "update link leaf1:fab1-spine1:fab1 [{cost 1 50}]; delete service red []; " {
		t.Fatalf("prune plan: %s", got)
	}
	if s := snap(); s.Services["red"] != nil || s.Topology.Links[0].Cost != 50 {
		t.Fatal("prune did not delete red or set the cost")
	}

	// Refused intents change nothing and name their field.
	stale := snap()
	bad := []struct {
		name  string
		req   model.ApplyRequest
		kind  Kind
		field string
	}{
		{"unknown node", model.ApplyRequest{Intent: file(blue2, model.ServiceSpec{Name: "x", Type: model.ELine,
			Circuits: []model.Circuit{{Node: "leaf9", Port: "cust1", VLAN: 7}, {Node: "leaf1", Port: "cust1", VLAN: 7}}})},
			KindInvalid, "services[1]"},
		{"circuit of two services", model.ApplyRequest{Intent: file(blue2, elan("green", 200))}, KindConflict, "services[1]"},
		{"listed twice", model.ApplyRequest{Intent: file(blue2, blue2)}, KindInvalid, "services[1].name"},
		{"stale plan", model.ApplyRequest{Intent: file(eline("red", 100)), Generation: stale.Generation - 1}, KindConflict, ""},
		{"no topology", model.ApplyRequest{}, KindInvalid, "topology"},
		{"topology without a used port", func() model.ApplyRequest {
			in := file(blue2)
			in.Topology.CustomerPorts = nil
			return model.ApplyRequest{Intent: in}
		}(), KindConflict, "topology"},
	}
	for _, b := range bad {
		if _, err := c.Apply(ctx, &b.req); KindOf(err) != b.kind || FieldOf(err) != b.field {
			t.Errorf("%s: %v (kind %s, field %q), want %s at %q", b.name, err, KindOf(err), FieldOf(err), b.kind, b.field)
		}
	}
	if s := snap(); s.Generation != stale.Generation || len(s.Services) != len(stale.Services) {
		t.Fatal("a refused intent changed the fabric")
	}
}
