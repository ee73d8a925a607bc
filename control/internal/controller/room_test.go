package controller

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/e3fabric/e3fabric/control/internal/dpconfig"
	"github.com/e3fabric/e3fabric/control/internal/store/storetest"
)

// TestStoreRoom: near etcd's quota new services are refused and the
// services there can still be changed and removed; at the quota etcd's
// refusal is a full store (507), not an internal error.
func TestStoreRoom(t *testing.T) {
	// The sizes read lag the writes by up to the backend's commit interval
	// (100 ms of creates here): the 10% left must hold more than that.
	const quota = 8 << 20
	cli := storetest.StartQuota(t, 23824, quota)
	ctx := context.Background()
	c, _ := start(t, cli, Options{IgnoreStatus: true, EtcdQuota: quota})
	importTopo(t, c)
	create := func(n int) error {
		c.room.read(ctx, cli)
		return c.CreateService(ctx, elan(fmt.Sprint("s", n), dpconfig.VLAN(n+1)))
	}
	n := 0
	var err error
	for ; n < 4000 && err == nil; n++ {
		err = create(n)
	}
	if KindOf(err) != KindExhausted || !strings.Contains(err.Error(), "new services are refused") {
		t.Fatalf("after %d services: %v, want new services refused near the quota", n, err)
	}
	if c.room.size.Load() < quota*9/10 {
		t.Fatalf("refused at %d bytes of a %d quota", c.room.size.Load(), quota)
	}
	if got := testutil.ToFloat64(c.metrics.storeFull); got != 1 {
		t.Errorf("e3_controller_etcd_full_total %v, want 1", got)
	}
	// What is there still goes.
	if err := c.DeleteService(ctx, "s1"); err != nil {
		t.Fatalf("delete near the quota: %v", err)
	}

	// Past the guard, etcd itself refuses: a full store too.
	c.room.quota = 1 << 40
	for err = nil; n < 4000 && err == nil; n++ {
		err = create(n)
	}
	if KindOf(err) != KindExhausted || !strings.Contains(err.Error(), "at its quota") {
		t.Fatalf("after %d services: %v, want etcd's NOSPACE as exhausted", n, err)
	}
}
