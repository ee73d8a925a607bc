package controller

import (
	"context"
	"testing"
	"time"

	"github.com/e3fabric/e3fabric/control/internal/dpconfig"
	"github.com/e3fabric/e3fabric/control/internal/labels"
	"github.com/e3fabric/e3fabric/control/internal/model"
	"github.com/e3fabric/e3fabric/control/internal/store/storetest"
)

// allocsAt is node's values of a service by role.
func allocsAt(t *testing.T, rec *model.ServiceRecord, node string) map[string]uint32 {
	out := map[string]uint32{}
	for _, a := range allocsT(t, rec) {
		if a.Node == node {
			out[a.Kind+" "+a.Role] = a.Value
		}
	}
	return out
}

func serviceAt(t *testing.T, cfg dpconfig.Config, id uint32) *dpconfig.Service {
	for i := range cfg.Services {
		if cfg.Services[i].ID == id {
			return &cfg.Services[i]
		}
	}
	return nil
}

// An E-Line's end moves from leaf3 to leaf2 make-before-break: during the
// window leaf1 (the end that stays) sends to both and both to it, on
// leaf1's one label, and leaf2 is programmed as it stays; a new leader
// carries the move on; at its end leaf3 is cleared, leaf1 points at what
// was its copy, and no label of leaf1 or leaf2 changes.
func TestMoveCircuit(t *testing.T) {
	cli := storetest.Start(t, 23820)
	ctx := context.Background()
	c, stop := start(t, cli, Options{IgnoreStatus: true})
	importTopo(t, c)
	if err := c.CreateService(ctx, eline("red", 100)); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateService(ctx, elan("green", 300)); err != nil {
		t.Fatal(err)
	}
	before, _ := c.Service(ctx, "red")
	from := model.Circuit{Node: "leaf3", Port: "cust1", VLAN: 100}
	to := model.Circuit{Node: "leaf2", Port: "cust1", VLAN: 100}
	for _, tc := range []struct {
		name     string
		from, to model.Circuit
		kind     Kind
	}{
		{"green", from, to, KindInvalid},
		{"red", model.Circuit{Node: "leaf3", Port: "cust1", VLAN: 7}, to, KindNotFound},
		{"red", from, model.Circuit{Node: "leaf3", Port: "cust1", VLAN: 101}, KindInvalid},
		{"red", from, model.Circuit{Node: "leaf1", Port: "cust2", VLAN: 5}, KindInvalid},
		{"red", from, model.Circuit{Node: "leaf2", Port: "cust1", VLAN: 300}, KindConflict}, // green's
	} {
		if err := c.MoveCircuit(ctx, tc.name, tc.from, tc.to, time.Minute); KindOf(err) != tc.kind {
			t.Fatalf("move %s %s -> %s: %v, want %s", tc.name, tc.from, tc.to, err, tc.kind)
		}
	}
	if err := c.MoveCircuit(ctx, "red", from, to, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := c.MoveCircuit(ctx, "red", from, to, time.Minute); KindOf(err) != KindConflict {
		t.Fatalf("a second move: %v", err)
	}
	if err := c.UpdateService(ctx, "red", nil, []model.Circuit{from}); KindOf(err) != KindConflict {
		t.Fatalf("a change during the move: %v", err)
	}
	window, _ := c.Service(ctx, "red")
	l1 := nodeConfig(t, cli, "leaf1")
	s1 := serviceAt(t, l1, window.ID)
	if s1 == nil || s1.NHLFE == nil || len(s1.Branches) != 1 {
		t.Fatalf("leaf1 during the move: %+v, want an nhlfe and a branch", s1)
	}
	for _, node := range []string{"leaf2", "leaf3"} {
		cfg := nodeConfig(t, cli, node)
		if s := serviceAt(t, cfg, window.ID); s == nil || s.NHLFE == nil || len(cfg.Circuits) == 0 {
			t.Fatalf("%s during the move: %+v, %d circuits", node, s, len(cfg.Circuits))
		}
	}
	branch := s1.Branches[0]
	term := "label eline-term<leaf3"
	if allocsAt(t, before, "leaf1")[term] == 0 || allocsAt(t, window, "leaf1")[term] != allocsAt(t, before, "leaf1")[term] {
		t.Fatalf("leaf1's label: %v -> %v", allocsAt(t, before, "leaf1"), allocsAt(t, window, "leaf1"))
	}

	// A new leader goes on with the move and ends it.
	stop()
	c, _ = start(t, cli, Options{IgnoreStatus: true})
	if r, _ := c.Service(ctx, "red"); r.Move == nil {
		t.Fatal("the move did not survive a new leader")
	}
	c.finishMoves(ctx, time.Now().Add(2*time.Minute))
	after, _ := c.Service(ctx, "red")
	if after.Move != nil || after.Spec.Circuits[1] != to || after.Spec.Circuits[0].Node != "leaf1" {
		t.Fatalf("after the move: %v, move %v", after.Spec.Circuits, after.Move)
	}
	if s := serviceAt(t, nodeConfig(t, cli, "leaf3"), after.ID); s != nil {
		t.Fatalf("leaf3 still has red: %+v", s)
	}
	s1 = serviceAt(t, nodeConfig(t, cli, "leaf1"), after.ID)
	if s1 == nil || len(s1.Branches) != 0 || *s1.NHLFE != branch {
		t.Fatalf("leaf1 after the move: %+v, want nhlfe %d (its copy's)", s1, branch)
	}
	for _, node := range []string{"leaf1", "leaf2"} {
		w, a := allocsAt(t, window, node), allocsAt(t, after, node)
		for role, v := range a {
			if w[role] != v {
				t.Fatalf("%s's %s changed at the move's end: %d -> %d", node, role, w[role], v)
			}
		}
	}
	if a := allocsAt(t, after, "leaf1")[term]; a != allocsAt(t, before, "leaf1")[term] {
		t.Fatalf("leaf1's label changed: %d -> %d", allocsAt(t, before, "leaf1")[term], a)
	}
}

// allocsT is rec's allocations with their roles (a replay of its build);
// a service always has some.
func allocsT(t *testing.T, rec *model.ServiceRecord) []model.Alloc {
	t.Helper()
	allocs, err := allocsOf(labels.New(nil), rec)
	if err != nil || len(allocs) == 0 {
		t.Fatalf("allocations of %s: %v (%d)", rec.Spec.Name, err, len(allocs))
	}
	return allocs
}
