package controller

import (
	"context"
	"strings"
	"testing"

	"github.com/e3fabric/e3fabric/control/internal/model"
	"github.com/e3fabric/e3fabric/control/internal/store/storetest"
)

func withPaths(s model.ServiceSpec, p model.PathConstraints) model.ServiceSpec {
	s.Paths = &p
	return s
}

// Path constraints: what a service avoids it never crosses, a disjoint
// one keeps off the other's links or transit nodes, a preferred node is
// taken; a service they disconnect is refused with them named.
func TestPathConstraints(t *testing.T) {
	cli := storetest.Start(t, 23818)
	ctx := context.Background()
	c, _ := start(t, cli, Options{IgnoreStatus: true})
	importTopo(t, c)
	uses := func(name string) (spines []string) {
		r, err := c.Service(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range activePaths(&r.Route) {
			for _, h := range p {
				if strings.HasPrefix(h.To, "spine") {
					spines = append(spines, h.To)
				}
			}
		}
		return spines
	}
	for _, tc := range []struct {
		spec model.ServiceSpec
		want string // the only spine its paths cross
	}{
		{withPaths(eline("a", 100), model.PathConstraints{AvoidNodes: []string{"spine1"}}), "spine2"},
		{withPaths(eline("b", 101), model.PathConstraints{AvoidLinks: []string{"leaf1:fab2-spine2:fab1"}}), "spine1"},
		{withPaths(eline("c", 102), model.PathConstraints{PreferNode: "spine2"}), "spine2"},
		{withPaths(eline("d", 103), model.PathConstraints{DisjointFrom: "b"}), "spine2"},
		{withPaths(eline("e", 104), model.PathConstraints{DisjointFrom: "a", Disjoint: "node"}), "spine1"},
		{withPaths(elan("f", 105), model.PathConstraints{AvoidNodes: []string{"spine2"}}), "spine1"},
	} {
		if err := c.CreateService(ctx, tc.spec); err != nil {
			t.Fatalf("%s: %v", tc.spec.Name, err)
		}
		for _, s := range uses(tc.spec.Name) {
			if s != tc.want {
				t.Fatalf("%s (%s) crosses %s", tc.spec.Name, tc.spec.Paths, s)
			}
		}
	}
	r, _ := c.Service(ctx, "a")
	if len(r.Route.Backup) != 0 {
		t.Fatalf("a's backup crosses what it avoids: %v", r.Route.Backup)
	}
	for _, tc := range []struct {
		spec model.ServiceSpec
		kind Kind
		msg  string
	}{
		{withPaths(eline("x", 110), model.PathConstraints{AvoidNodes: []string{"spine1", "spine2"}}), KindUnroutable, "within its path constraints: avoid nodes spine1,spine2"},
		{withPaths(eline("x", 110), model.PathConstraints{AvoidNodes: []string{"spine9"}}), KindNotFound, "unknown node"},
		{withPaths(eline("x", 110), model.PathConstraints{DisjointFrom: "nope"}), KindNotFound, "no service nope of the same tenant"},
		{withPaths(eline("x", 110), model.PathConstraints{DisjointFrom: "x"}), KindInvalid, "disjoint from itself"},
	} {
		if err := c.CreateService(ctx, tc.spec); KindOf(err) != tc.kind || !strings.Contains(err.Error(), tc.msg) {
			t.Fatalf("%s: %v, want %s ~%q", tc.spec.Paths, err, tc.kind, tc.msg)
		}
	}
	if err := c.DeleteService(ctx, "b"); KindOf(err) != KindConflict {
		t.Fatalf("deleting a service another keeps disjoint from: %v", err)
	}
}
