package controller

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/e3fabric/e3fabric/control/internal/model"
	"github.com/e3fabric/e3fabric/control/internal/nodestate"
	"github.com/e3fabric/e3fabric/control/internal/store/storetest"
)

// E-LANs are admitted against the MAC tables of their members: one whose
// limit would over-commit a table is refused, naming the node, and changes
// nothing; a service changed in place counts once.
func TestMACLimitsAdmittedAgainstTheTable(t *testing.T) {
	cli := storetest.Start(t, 23784)
	ctx := context.Background()
	c, _ := start(t, cli, Options{IgnoreStatus: true})
	importTopo(t, c)
	b, _ := json.Marshal(nodestate.NodeStatus{Node: "leaf2", BootID: "b", Updated: time.Now(), MACTable: 20000})
	if _, err := cli.Put(ctx, nodestate.StatusKey("leaf2"), string(b)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "leaf2's status", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.leader != nil && c.leader.status["leaf2"].MACTable == 20000
	})
	// Two at the default limit (8192 each) fit in 20000; a third does not.
	for _, s := range []model.ServiceSpec{elan("a", 10), elan("b", 20)} {
		if err := c.CreateService(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	gen := desiredGen(t, cli, "leaf2")
	err := c.CreateService(ctx, elan("c", 30))
	if KindOf(err) != KindExhausted || !strings.Contains(err.Error(), "node leaf2") {
		t.Fatalf("a third E-LAN: %v, want leaf2's MAC table exhausted", err)
	}
	if desiredGen(t, cli, "leaf2") != gen {
		t.Fatal("a refused service changed leaf2's desired state")
	}
	small := elan("c", 30)
	small.MACLimit = 3000
	if err := c.CreateService(ctx, small); err != nil {
		t.Fatalf("an E-LAN whose limit fits: %v", err)
	}
	// Changing an admitted service's circuits counts its limit once.
	if err := c.UpdateService(ctx, "a", []model.Circuit{{Node: "leaf2", Port: "cust1", VLAN: 11}}, nil); err != nil {
		t.Fatalf("adding a circuit to an admitted E-LAN: %v", err)
	}
}
