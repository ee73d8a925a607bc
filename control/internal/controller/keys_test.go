package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/e3fabric/e3fabric/control/internal/model"
	"github.com/e3fabric/e3fabric/control/internal/nodestate"
	"github.com/e3fabric/e3fabric/control/internal/store"
	"github.com/e3fabric/e3fabric/control/internal/store/storetest"
)

// changedSince lists the keys under /e3/v1/ that a revision after rev
// wrote or deleted, from etcd's history.
func changedSince(t *testing.T, cli *clientv3.Client, rev int64) []string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cur, err := cli.Get(ctx, "/e3/v1/generation")
	if err != nil {
		t.Fatal(err)
	}
	set := map[string]bool{}
	wch := cli.Watch(ctx, nodestate.Prefix, clientv3.WithPrefix(), clientv3.WithRev(rev+1))
	for seen := rev; seen < cur.Header.Revision; {
		wr := <-wch
		if err := wr.Err(); err != nil {
			t.Fatal(err)
		}
		for _, ev := range wr.Events {
			if !strings.HasPrefix(string(ev.Kv.Key), store.ElectionPrefix) {
				set[string(ev.Kv.Key)] = true
			}
			seen = max(seen, ev.Kv.ModRevision)
		}
	}
	return keys(set)
}

// One service created or deleted writes its own keys only: its record, its
// fragment on each of its nodes, those nodes' generations and the fabric's.
func TestChangeTouchesOnlyItsKeys(t *testing.T) {
	ctx := context.Background()
	cli := storetest.Start(t, 23806)
	c, _ := start(t, cli, Options{IgnoreStatus: true})
	importTopo(t, c)
	for _, s := range []model.ServiceSpec{eline("red", 100), elan("green", 300)} {
		if err := c.CreateService(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	// blue's keys: red's nodes, since it has red's ends and paths.
	red, err := c.Service(ctx, "red")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{store.GenerationKey, store.ServiceKey("blue")}
	for n := range red.NodeGenerations {
		want = append(want, nodestate.ServiceKey(n, "blue"), nodestate.GenerationKey(n))
	}
	slices.Sort(want)
	for _, tc := range []struct {
		what string
		do   func() error
	}{
		// blue takes red's paths: the path checks exist already.
		{"create", func() error { return c.CreateService(ctx, eline("blue", 200)) }},
		{"delete", func() error { return c.DeleteService(ctx, "blue") }},
	} {
		r, err := cli.Get(ctx, store.GenerationKey)
		if err != nil {
			t.Fatal(err)
		}
		if err := tc.do(); err != nil {
			t.Fatal(err)
		}
		if got := changedSince(t, cli, r.Header.Revision); !slices.Equal(got, want) {
			t.Errorf("%s blue changed keys\n%q\nwant\n%q", tc.what, got, want)
		}
	}
	// The same intent again writes nothing.
	r, _ := cli.Get(ctx, store.GenerationKey)
	if err := c.UpdateService(ctx, "green", nil, nil); err != nil {
		t.Fatal(err)
	}
	if got := changedSince(t, cli, r.Header.Revision); len(got) > 2 { // the fabric's generation, green's record
		t.Errorf("an update that changes nothing wrote %q", got)
	}
}

// A store of schema 1 (one desired document per node) is upgraded when a
// leader starts: the same config on every node, as per-object keys, with
// the same labels; the old documents are gone.
func TestMigrateFromSchema1(t *testing.T) {
	ctx := context.Background()
	cli := storetest.Start(t, 23808)
	c1, stop := start(t, cli, Options{IgnoreStatus: true})
	importTopo(t, c1)
	for _, s := range []model.ServiceSpec{eline("red", 100), elan("green", 300)} {
		if err := c1.CreateService(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]string{}
	for _, n := range topoNodes(t) {
		want[n] = mustJSON(t, nodeConfig(t, cli, n))
	}
	before, err := c1.SaveSnapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stop()

	// Rewrite the store as schema 1 wrote it.
	if _, err := cli.Delete(ctx, nodestate.DesiredPrefix, clientv3.WithPrefix()); err != nil {
		t.Fatal(err)
	}
	ops := []clientv3.Op{clientv3.OpPut(store.SchemaKey, store.SchemaV1)}
	for n, cfg := range want {
		ops = append(ops, clientv3.OpPut(nodestate.DesiredPrefix+n, fmt.Sprintf(`{"generation":3,"config":%s}`, cfg)))
	}
	for _, rec := range before.Services {
		b, _ := json.Marshal(rec) // hops and roles spelled out
		ops = append(ops, clientv3.OpPut(store.ServiceKey(rec.Spec.Name), string(b)))
	}
	if _, err := cli.Txn(ctx).Then(ops...).Commit(); err != nil {
		t.Fatal(err)
	}

	c2, _ := start(t, cli, Options{IgnoreStatus: true})
	for _, n := range topoNodes(t) {
		if got := mustJSON(t, nodeConfig(t, cli, n)); got != want[n] {
			t.Errorf("%s after the upgrade:\n%s\nwant\n%s", n, got, want[n])
		}
		r, err := cli.Get(ctx, nodestate.DesiredPrefix+n)
		if err != nil || len(r.Kvs) != 0 {
			t.Errorf("%s: the schema 1 document is still there (%v)", n, err)
		}
		if g := desiredGen(t, cli, n); g == 0 {
			t.Errorf("%s has no generation key", n)
		}
	}
	if v, _ := store.Schema(ctx, cli); v != store.SchemaVersion {
		t.Errorf("schema %q after the upgrade, want %q", v, store.SchemaVersion)
	}
	after, err := c2.SaveSnapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := mustJSON(t, after.Services), mustJSON(t, before.Services); a != b {
		t.Errorf("services changed by the upgrade:\n%s\nwant\n%s", a, b)
	}
}
