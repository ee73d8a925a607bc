package controller

import (
	"context"
	"fmt"
	"strings"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/e3fabric/e3fabric/control/internal/desired"
	"github.com/e3fabric/e3fabric/control/internal/model"
	"github.com/e3fabric/e3fabric/control/internal/store/storetest"
	"github.com/e3fabric/e3fabric/control/internal/topology"
)

// siteFabric is a controller on the test fabric with the segment site1 on
// leaf1:cust2 and leaf2:cust2, every node up.
func siteFabric(t *testing.T, etcdPort int) (*Controller, *clientv3.Client, context.CancelFunc) {
	cli := storetest.Start(t, etcdPort)
	ctx := context.Background()
	c, stop := start(t, cli, Options{})
	topo, _, err := topology.Load("../testdata/fabric.yaml")
	if err != nil {
		t.Fatal(err)
	}
	topo.CustomerPorts = append(topo.CustomerPorts, topology.CustomerPort{Node: "leaf2", Port: "cust2"})
	topo.Segments = []topology.Segment{{Name: "site1", Ports: []topology.Endpoint{
		{Node: "leaf1", Port: "cust2"}, {Node: "leaf2", Port: "cust2"}}}}
	if err := c.ImportTopology(ctx, topo, nil); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"leaf1", "leaf2", "leaf3", "spine1", "spine2"} {
		putStatus(t, cli, n, 0)
	}
	waitAllUp(t, c)
	return c, cli, stop
}

// A service's circuit on a segment stands for one circuit on each of the
// segment's ports; the leaves' circuits get their BUM filters, and a
// segment leaf that goes down hands the DF role to the other.
func TestSegmentCircuits(t *testing.T) {
	ctx := context.Background()
	c, cli, _ := siteFabric(t, 23786)

	site, err := model.ParseCircuit("@site1:100")
	if err != nil {
		t.Fatal(err)
	}
	blue := model.ServiceSpec{Name: "blue", Type: model.ELAN, Circuits: []model.Circuit{
		site, {Node: "leaf3", Port: "cust1", VLAN: 100}}}
	if err := c.CreateService(ctx, blue); err != nil {
		t.Fatal(err)
	}
	rec, err := c.Service(ctx, "blue")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ci := range rec.Spec.Circuits {
		got = append(got, ci.String())
	}
	if want := "leaf1:cust2:100@site1 leaf2:cust2:100@site1 leaf3:cust1:100"; strings.Join(got, " ") != want {
		t.Fatalf("circuits %q, want %q", got, want)
	}
	df := desired.DesignatedForwarder("blue", "site1", []string{"leaf1", "leaf2"})
	other := map[string]string{"leaf1": "leaf2", "leaf2": "leaf1"}[df]
	checkFilter := func(node string, nonDF bool) {
		t.Helper()
		for _, ci := range nodeConfig(t, cli, node).Circuits {
			if ci.Port != "cust2" {
				continue
			}
			if ci.NonDF != nonDF || len(ci.Peers) != 1 || ci.Peers[0] != rec.Route.Sources[map[string]string{"leaf1": "leaf2", "leaf2": "leaf1"}[node]] {
				t.Errorf("%s: circuit %+v, want non_df %v and the other leaf's source as peer", node, ci, nonDF)
			}
			return
		}
		t.Errorf("%s has no circuit on the segment", node)
	}
	checkFilter(df, false)
	checkFilter(other, true)

	// The same VLAN on one of the segment's ports is taken.
	clash := model.ServiceSpec{Name: "green", Type: model.ELAN, Circuits: []model.Circuit{
		{Node: df, Port: "cust2", VLAN: 100}, {Node: "leaf3", Port: "cust1", VLAN: 200}}}
	if err := c.CreateService(ctx, clash); err == nil || !strings.Contains(err.Error(), "already used by service blue") {
		t.Fatalf("circuit of a segment taken again: %v", err)
	}
	for _, tc := range []struct {
		spec model.ServiceSpec
		err  string
	}{
		{model.ServiceSpec{Name: "red", Type: model.ELine, Circuits: []model.Circuit{
			{Segment: "site1", VLAN: 300}, {Node: "leaf1", Port: "cust1", VLAN: 300}}}, "a leaf of site site1: not supported"},
		{model.ServiceSpec{Name: "red", Type: model.ELAN, Circuits: []model.Circuit{
			{Segment: "nowhere", VLAN: 300}, {Node: "leaf3", Port: "cust1", VLAN: 300}}}, "unknown segment"},
		{model.ServiceSpec{Name: "red", Type: model.ELAN, Circuits: []model.Circuit{
			{Node: "leaf3", Port: "cust1", VLAN: 300, Segment: "site1"}, {Node: "leaf1", Port: "cust1", VLAN: 300}}}, "not a port of segment"},
	} {
		if err := c.CreateService(ctx, tc.spec); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%v: err %v, want %q", tc.spec.Circuits, err, tc.err)
		}
	}

	// The DF's leaf goes down: the other takes its segments.
	putStatus(t, cli, "spine1", 0, df)
	putStatus(t, cli, "spine2", 0, df)
	waitFor(t, df+" down", func() bool { s, _ := c.Snapshot(ctx); return s.down.nodes[df] })
	waitFor(t, other+" is the DF", func() bool {
		for _, ci := range nodeConfig(t, cli, other).Circuits {
			if ci.Port == "cust2" {
				return !ci.NonDF
			}
		}
		return false
	})

	// Removing the segment circuit removes it from every leaf.
	if err := c.UpdateService(ctx, "blue", []model.Circuit{{Node: "leaf1", Port: "cust1", VLAN: 100}},
		[]model.Circuit{site}); err != nil {
		t.Fatal(err)
	}
	rec, _ = c.Service(ctx, "blue")
	for _, ci := range rec.Spec.Circuits {
		if ci.Segment != "" {
			t.Errorf("circuit %s left after removing the segment's", ci)
		}
	}
}

// A new leader rebuilds services on multi-homed sites (an E-LAN and an
// E-Line) from their stored routes and allocations, writing nothing.
func TestSiteServicesSurviveARestart(t *testing.T) {
	ctx := context.Background()
	c, cli, stop := siteFabric(t, 23787)
	for _, spec := range []model.ServiceSpec{
		{Name: "blue", Type: model.ELAN, ECMP: true, Circuits: []model.Circuit{{Segment: "site1", VLAN: 100},
			{Node: "leaf3", Port: "cust1", VLAN: 100}}},
		{Name: "teal", Type: model.ELine, Circuits: []model.Circuit{{Segment: "site1", VLAN: 200},
			{Node: "leaf3", Port: "cust1", VLAN: 200}}},
	} {
		if err := c.CreateService(ctx, spec); err != nil {
			t.Fatal(err)
		}
	}
	before, _ := c.Snapshot(ctx)
	stop()
	c2, _ := start(t, cli, Options{})
	after, err := c2.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after.Generation != before.Generation {
		t.Fatalf("the new leader wrote: generation %d -> %d", before.Generation, after.Generation)
	}
	for _, n := range []string{"blue", "teal"} {
		if after.Services[n] == nil || fmt.Sprint(allocsT(t, after.Services[n])) != fmt.Sprint(allocsT(t, before.Services[n])) {
			t.Fatalf("%s not rebuilt as it was", n)
		}
	}
}
