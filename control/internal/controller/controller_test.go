package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/e3fabric/e3fabric/control/internal/desired"
	"github.com/e3fabric/e3fabric/control/internal/dpconfig"
	"github.com/e3fabric/e3fabric/control/internal/labels"
	"github.com/e3fabric/e3fabric/control/internal/model"
	"github.com/e3fabric/e3fabric/control/internal/nodestate"
	"github.com/e3fabric/e3fabric/control/internal/store"
	"github.com/e3fabric/e3fabric/control/internal/store/storetest"
	"github.com/e3fabric/e3fabric/control/internal/topology"
)

// Ports 23790..23799: one etcd per test.
const etcdPort = 23790

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// start runs a replica until the test ends and waits for it to lead.
func start(t *testing.T, cli *clientv3.Client, o Options) (*Controller, context.CancelFunc) {
	t.Helper()
	o.Etcd, o.Log = cli, quiet
	if o.Grace == 0 {
		o.Grace = time.Millisecond
	}
	if o.RepairHold == 0 {
		o.RepairHold = -1 // these tests check each step's outcome at once
	}
	c := New(o)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	wctx, wcancel := context.WithTimeout(ctx, 20*time.Second)
	defer wcancel()
	if err := c.WaitLeader(wctx); err != nil {
		t.Fatalf("not leader: %v", err)
	}
	return c, func() { cancel(); <-done }
}

func importTopo(t *testing.T, c *Controller) {
	t.Helper()
	topo, svcs, err := topology.Load("../testdata/fabric.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ImportTopology(context.Background(), topo, svcs); err != nil {
		t.Fatal(err)
	}
}

func eline(name string, vlan dpconfig.VLAN) model.ServiceSpec {
	return model.ServiceSpec{Name: name, Type: model.ELine, Circuits: []model.Circuit{
		{Node: "leaf1", Port: "cust1", VLAN: vlan}, {Node: "leaf3", Port: "cust1", VLAN: vlan}}}
}

func elan(name string, vlan dpconfig.VLAN) model.ServiceSpec {
	return model.ServiceSpec{Name: name, Type: model.ELAN, Circuits: []model.Circuit{
		{Node: "leaf1", Port: "cust1", VLAN: vlan}, {Node: "leaf2", Port: "cust1", VLAN: vlan}, {Node: "leaf3", Port: "cust1", VLAN: vlan}}}
}

func desiredGen(t *testing.T, cli *clientv3.Client, node string) int64 {
	var g int64
	if _, err := store.GetJSON(context.Background(), cli, nodestate.GenerationKey(node), &g); err != nil {
		t.Fatal(err)
	}
	return g
}

// nodeConfig assembles node's desired config from its keys.
func nodeConfig(t *testing.T, cli *clientv3.Client, node string) dpconfig.Config {
	t.Helper()
	var frags []*dpconfig.Fragment
	if _, err := store.ListJSON(context.Background(), cli, nodestate.DesiredNode(node), func(k string, v []byte) error {
		if k == nodestate.GenerationSuffix {
			return nil
		}
		f, err := dpconfig.DecodeFragment(v)
		frags = append(frags, f)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return dpconfig.Assemble(frags)
}

// putStatus writes node's agent status: every fabric port up with its BFD
// session up, but the ports named in down (carrier lost, session down) and
// the sessions toward the nodes named in down (the neighbour stopped
// answering).
func putStatus(t *testing.T, cli *clientv3.Client, node string, gen int64, down ...string) {
	t.Helper()
	s := nodestate.NodeStatus{Node: node, BootID: "b", AppliedGeneration: gen, Updated: time.Now()}
	for _, l := range topoLinks(t) {
		for _, e := range []topology.Endpoint{l.A, l.B} {
			if e.Node == node {
				_, peer := l.End(node)
				carrier := !slices.Contains(down, e.Port)
				up := carrier && !slices.Contains(down, peer.Node)
				s.Ports = append(s.Ports, nodestate.PortStatus{Name: e.Port, LinkUp: carrier})
				s.BFD = append(s.BFD, nodestate.BFDStatus{ID: uint32(l.ID), Port: e.Port, Usable: up})
			}
		}
	}
	b, _ := json.Marshal(s)
	if _, err := cli.Put(context.Background(), nodestate.StatusKey(node), string(b)); err != nil {
		t.Fatal(err)
	}
}

func topoNodes(t *testing.T) []string {
	topo, _, err := topology.Load("../testdata/fabric.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range topo.Nodes {
		out = append(out, n.Name)
	}
	return out
}

func topoLinks(t *testing.T) []topology.Link {
	topo, _, err := topology.Load("../testdata/fabric.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return topo.Links
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for i := 0; i < 500; i++ {
		if cond() {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

// waitAllUp waits until the leader routes with every node up. Its routing
// view (st.down) follows the statuses through the react loop, later than
// a snapshot's view, which is computed from them on the spot.
func waitAllUp(t *testing.T, c *Controller) {
	t.Helper()
	waitFor(t, "all up", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.leader != nil && len(c.view(c.leader).nodes) == 0 && len(c.leader.down.nodes) == 0
	})
}

// TestRestartKeepsLabels: a new leader on the same etcd loads the labels and
// writes nothing (same generation), and a second replica takes over.
func TestRestartAndTakeover(t *testing.T) {
	cli := storetest.Start(t, etcdPort)
	ctx := context.Background()
	c1, stop1 := start(t, cli, Options{IgnoreStatus: true, Advertise: "http://c1"})
	importTopo(t, c1)
	red, blue := eline("red", 100), elan("blue", 200)
	red.ECMP, blue.ECMP = true, true // stored and rebuilt with their groups
	if err := c1.CreateServices(ctx, []model.ServiceSpec{red, blue}); err != nil {
		t.Fatal(err)
	}
	before, _ := c1.Snapshot(ctx)

	// A follower serves reads from etcd while c1 leads.
	c2 := New(Options{Etcd: cli, IgnoreStatus: true, Advertise: "http://c2", Log: quiet})
	ctx2, cancel2 := context.WithCancel(ctx)
	done2 := make(chan struct{})
	go func() { c2.Run(ctx2); close(done2) }()
	t.Cleanup(func() { cancel2(); <-done2 })
	time.Sleep(300 * time.Millisecond)
	if c2.IsLeader() {
		t.Fatal("two leaders")
	}
	if err := c2.CreateService(ctx, eline("x", 5)); KindOf(err) != KindNotLeader {
		t.Fatalf("follower write: %v", err)
	}
	fs, err := c2.Snapshot(ctx)
	if err != nil || fmt.Sprint(allocsT(t, fs.Services["blue"])) != fmt.Sprint(allocsT(t, before.Services["blue"])) {
		t.Fatalf("follower read differs: %v", err)
	}

	stop1() // leader dies (its session is revoked)
	waitFor(t, "takeover", c2.IsLeader)
	after, _ := c2.Snapshot(ctx)
	if after.Generation != before.Generation {
		t.Fatalf("takeover wrote: generation %d -> %d", before.Generation, after.Generation)
	}
	for _, n := range []string{"red", "blue"} {
		if fmt.Sprint(allocsT(t, after.Services[n])) != fmt.Sprint(allocsT(t, before.Services[n])) {
			t.Fatalf("%s relabelled on takeover", n)
		}
		// Both leaders hold values and their roles' digest, not the roles.
		for _, r := range []*model.ServiceRecord{before.Services[n], after.Services[n]} {
			if r.Allocs != nil || len(r.Values) == 0 || r.Roles == "" {
				t.Fatalf("%s held as %d allocations with roles, %d value runs, digest %q", n, len(r.Allocs), len(r.Values), r.Roles)
			}
		}
	}
	// The new leader allocates around the old labels.
	if err := c2.CreateService(ctx, elan("green", 300)); err != nil {
		t.Fatal(err)
	}
	s, _ := c2.Snapshot(ctx)
	seen := map[string]string{}
	owners := map[string][]model.Alloc{}
	for name, rec := range s.Services {
		owners["service "+name] = allocsT(t, rec)
	}
	for key, cs := range s.checks {
		owners["check "+key] = cs.rec.Allocs
	}
	for name, allocs := range owners {
		for _, a := range allocs {
			k := fmt.Sprint(a.Node, a.Kind, a.Value)
			if o, dup := seen[k]; dup {
				t.Fatalf("%s used by %s and %s", k, o, name)
			}
			seen[k] = name
		}
	}
}

// TestLoadRefusesCorruptKeys: a new leader whose stored records or desired
// keys do not decode refuses to lead, naming the key, rather than lead on
// part of the fabric (and the loads side by side end, whichever fails).
func TestLoadRefusesCorruptKeys(t *testing.T) {
	cli := storetest.Start(t, 23822)
	ctx := context.Background()
	c1, stop1 := start(t, cli, Options{IgnoreStatus: true})
	importTopo(t, c1)
	if err := c1.CreateServices(ctx, []model.ServiceSpec{eline("red", 100), elan("blue", 200)}); err != nil {
		t.Fatal(err)
	}
	stop1()
	r, err := cli.Get(ctx, store.CheckPrefix, clientv3.WithPrefix(), clientv3.WithLimit(1))
	if err != nil || len(r.Kvs) == 0 {
		t.Fatalf("no stored check: %v", err)
	}
	check := string(r.Kvs[0].Key)
	fence := clientv3.Compare(clientv3.CreateRevision("no-such-key"), "=", 0)
	opt := New(Options{Etcd: cli, Log: quiet}).opt
	for _, key := range []string{store.ServiceKey("blue"), check, nodestate.GenerationKey("leaf1")} {
		t.Run(key, func(t *testing.T) {
			r, err := cli.Get(ctx, key)
			if err != nil || len(r.Kvs) == 0 {
				t.Fatalf("%s not stored: %v", key, err)
			}
			good := string(r.Kvs[0].Value)
			if _, err := cli.Put(ctx, key, "{"+good[:len(good)/2]); err != nil {
				t.Fatal(err)
			}
			_, err = load(ctx, opt, fence)
			if _, perr := cli.Put(ctx, key, good); perr != nil {
				t.Fatal(perr)
			}
			if err == nil || !strings.Contains(err.Error(), key) {
				t.Fatalf("load: %v, want an error naming %s", err, key)
			}
		})
	}
	st, err := load(ctx, opt, fence)
	if err != nil || len(st.services) != 2 {
		t.Fatalf("restored: %v, %d services", err, len(st.services))
	}
}

// TestLinkFailure: a fabric port reported down moves the E-Line to its
// backup: only the ingress leaves' configs change, labels stay.
func TestLinkFailure(t *testing.T) {
	cli := storetest.Start(t, etcdPort+2)
	ctx := context.Background()
	c, _ := start(t, cli, Options{})
	importTopo(t, c)
	// No agent has reported: the imported topology's nodes are all down.
	if s, _ := c.Snapshot(ctx); len(s.down.nodes) != 5 {
		t.Fatalf("down after import: %v", s.down.nodes)
	}
	for _, n := range []string{"leaf1", "leaf2", "leaf3", "spine1", "spine2"} {
		putStatus(t, cli, n, 0)
	}
	waitAllUp(t, c)
	if err := c.CreateService(ctx, eline("red", 100)); err != nil {
		t.Fatal(err)
	}
	rec, _ := c.Service(ctx, "red")
	if st, _ := c.Snapshot(ctx); st.ServiceStatus(rec).State != model.StatePending {
		t.Fatalf("status %v before agents applied", st.ServiceStatus(rec))
	}
	for _, n := range []string{"leaf1", "leaf2", "leaf3", "spine1", "spine2"} {
		putStatus(t, cli, n, 100)
	}
	waitFor(t, "programmed", func() bool {
		s, _ := c.Snapshot(ctx)
		return s.ServiceStatus(s.Services["red"]).State == model.StateProgrammed
	})
	spine := rec.Route.Primary[0].To
	spineGen := desiredGen(t, cli, spine)
	// leaf1's port toward the primary spine goes down.
	putStatus(t, cli, "leaf1", 100, rec.Route.Primary[0].FromPort)
	waitFor(t, "switch to backup", func() bool { r, _ := c.Service(ctx, "red"); return r.Route.Active == "backup" })
	moved, _ := c.Service(ctx, "red")
	if fmt.Sprint(allocsT(t, moved)) != fmt.Sprint(allocsT(t, rec)) {
		t.Fatalf("labels changed on switch to the pre-installed backup")
	}
	if g := desiredGen(t, cli, spine); g != spineGen {
		t.Fatalf("spine %s rewritten (%d -> %d): only the ingress should change", spine, spineGen, g)
	}
	if s, _ := c.Snapshot(ctx); s.ServiceStatus(moved).State != model.StateDegraded {
		t.Fatalf("status %v on backup", s.ServiceStatus(moved))
	}
	// Back up: reverts to the primary, same labels.
	putStatus(t, cli, "leaf1", 100)
	waitFor(t, "revert", func() bool { r, _ := c.Service(ctx, "red"); return r.Route.Active == "primary" })
	// leaf3's agent goes away: its datapath still answers its spines' BFD,
	// so leaf3 stays up and nothing is recomputed.
	gen := desiredGen(t, cli, "leaf1")
	cli.Delete(ctx, nodestate.StatusKey("leaf3"))
	waitFor(t, "agent status gone", func() bool { s, _ := c.Snapshot(ctx); _, ok := s.Status["leaf3"]; return !ok })
	if s, _ := c.Snapshot(ctx); !s.NodeUp("leaf3") {
		t.Fatal("leaf3 down because its agent is")
	}
	if g := desiredGen(t, cli, "leaf1"); g != gen {
		t.Fatalf("leaf1 rewritten (%d -> %d) for a dead agent", gen, g)
	}
	// Then leaf3 itself stops: both spines' sessions to it time out.
	putStatus(t, cli, "spine1", 100, "leaf3")
	putStatus(t, cli, "spine2", 100, "leaf3")
	waitFor(t, "down", func() bool {
		s, _ := c.Snapshot(ctx)
		return !s.NodeUp("leaf3") && s.ServiceStatus(s.Services["red"]).State == model.StateDown
	})
}

// TestRestoringLinks: after a flap of every link of leaf3, its sessions are
// Up again but within their wait-to-restore. The links are restoring, not
// down: leaf3 stays up and its E-Line keeps a path rather than being cut
// off for the wait.
func TestRestoringLinks(t *testing.T) {
	cli := storetest.Start(t, 23810)
	ctx := context.Background()
	c, _ := start(t, cli, Options{})
	importTopo(t, c)
	for _, n := range []string{"leaf1", "leaf2", "leaf3", "spine1", "spine2"} {
		putStatus(t, cli, n, 0)
	}
	waitAllUp(t, c)
	if err := c.CreateService(ctx, eline("red", 100)); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"leaf1", "leaf2", "spine1", "spine2"} {
		putStatus(t, cli, n, 100)
	}
	// leaf3's own sessions: Up, not usable (its spines' are usable).
	s := nodestate.NodeStatus{Node: "leaf3", BootID: "b", AppliedGeneration: 100, Updated: time.Now()}
	var links []int
	for _, l := range topoLinks(t) {
		for _, e := range []topology.Endpoint{l.A, l.B} {
			if e.Node == "leaf3" {
				s.Ports = append(s.Ports, nodestate.PortStatus{Name: e.Port, LinkUp: true})
				s.BFD = append(s.BFD, nodestate.BFDStatus{ID: uint32(l.ID), Port: e.Port, State: "up"})
				links = append(links, l.ID)
			}
		}
	}
	b, _ := json.Marshal(s)
	if _, err := cli.Put(ctx, nodestate.StatusKey("leaf3"), string(b)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "leaf3's links restoring", func() bool {
		snap, _ := c.Snapshot(ctx)
		return len(snap.down.restoring) == len(links)
	})
	snap, _ := c.Snapshot(ctx)
	if !snap.NodeUp("leaf3") || len(snap.down.links) != 0 {
		t.Fatalf("restoring links taken for down: nodes %v links %v", snap.down.nodes, snap.down.links)
	}
	if st := snap.ServiceStatus(snap.Services["red"]); st.State == model.StateDown {
		t.Fatalf("red %v: cut off while leaf3's links restore", st)
	}
	if r := snap.Services["red"].Route; len(r.Primary) == 0 {
		t.Fatalf("red has no path over the restoring links: %+v", r)
	}
}

// TestExhaustion: a node out of labels refuses the service cleanly and
// leaves the state as it was.
func TestExhaustion(t *testing.T) {
	cli := storetest.Start(t, etcdPort+4)
	ctx := context.Background()
	sp := labels.DefaultSpaces()
	sp[model.KindLabel] = labels.Space{Min: 16, Max: 48}
	c, _ := start(t, cli, Options{IgnoreStatus: true, Spaces: sp})
	importTopo(t, c)
	var err error
	var before *Snapshot
	n := 0
	for ; n < 40 && err == nil; n++ {
		before, _ = c.Snapshot(ctx)
		err = c.CreateService(ctx, elan(fmt.Sprint("s", n), dpconfig.VLAN(n+1)))
	}
	if KindOf(err) != KindExhausted {
		t.Fatalf("after %d services: err %v, want exhausted", n, err)
	}
	after, _ := c.Snapshot(ctx)
	if after.Generation != before.Generation || len(after.Services) != len(before.Services) {
		t.Fatal("state changed by a refused service")
	}
	// The allocator did not leak: what is in use is what the records hold.
	use := after.LabelUse()
	c.mu.Lock()
	for node, n := range use {
		if got := c.leader.alloc.InUse(node, model.KindLabel); got != n {
			t.Errorf("%s: %d labels in use, records hold %d", node, got, n)
		}
	}
	c.mu.Unlock()
	// Deleting one frees its labels for the next.
	if err := c.DeleteService(ctx, "s0"); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateService(ctx, elan(fmt.Sprint("s", n-1), dpconfig.VLAN(n))); err != nil {
		t.Fatalf("after delete: %v", err)
	}
}

// TestPathChecks: protected services share one check per path, stored as
// its own record; a check lives while a service watches it, and a new
// leader carries the same checks on.
func TestPathChecks(t *testing.T) {
	cli := storetest.Start(t, etcdPort+8)
	ctx := context.Background()
	c, stop := start(t, cli, Options{IgnoreStatus: true})
	importTopo(t, c)
	records := func() map[string]model.CheckRecord {
		out := map[string]model.CheckRecord{}
		if _, err := store.ListJSON(ctx, cli, store.CheckPrefix, func(k string, v []byte) error {
			var r model.CheckRecord
			if err := json.Unmarshal(v, &r); err != nil {
				return err
			}
			out[k] = r
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if err := c.CreateServices(ctx, []model.ServiceSpec{eline("red", 100), eline("red2", 101)}); err != nil {
		t.Fatal(err)
	}
	red, _ := c.Service(ctx, "red")
	want := []string{desired.CheckOf("leaf1", "leaf3", red.Route.Primary).Key(),
		desired.CheckOf("leaf1", "leaf3", red.Route.Backup).Key()}
	sort.Strings(want)
	if got := keys(records()); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("checks %v, want primary and backup %v", got, want)
	}
	// The nodes' desired keys of the checks, which etcd holds once written
	// (the controller keeps only where they are).
	checkKeys := func() []string {
		var out []string
		for _, n := range []string{"leaf1", "leaf3", "spine1", "spine2"} {
			r, err := cli.Get(ctx, nodestate.CheckKey(n, ""), clientv3.WithPrefix(), clientv3.WithKeysOnly())
			if err != nil {
				t.Fatal(err)
			}
			for _, kv := range r.Kvs {
				out = append(out, string(kv.Key))
			}
		}
		return out
	}
	if n := len(checkKeys()); n == 0 {
		t.Fatal("no node has a check's desired key")
	}
	c.mu.Lock()
	for k, cs := range c.leader.checks {
		if cs.frags != nil || len(cs.nodes) == 0 {
			t.Errorf("check %s: fragments kept after they were written, or no nodes (%v)", k, cs.nodes)
		}
	}
	c.mu.Unlock()
	// Both E-Lines take the same two paths: deleting one keeps the checks.
	if err := c.DeleteService(ctx, "red2"); err != nil {
		t.Fatal(err)
	}
	if n := len(records()); n != 2 {
		t.Fatalf("%d checks after deleting one of two users", n)
	}
	// A new leader loads them and writes nothing.
	before, _ := c.Snapshot(ctx)
	stop()
	c2, _ := start(t, cli, Options{IgnoreStatus: true})
	after, _ := c2.Snapshot(ctx)
	if after.Generation != before.Generation || len(after.checks) != 2 {
		t.Fatalf("takeover: generation %d -> %d, %d checks", before.Generation, after.Generation, len(after.checks))
	}
	// The last user goes: so do the checks, and their identifiers.
	if err := c2.DeleteService(ctx, "red"); err != nil {
		t.Fatal(err)
	}
	if n := len(records()); n != 0 {
		t.Fatalf("%d checks without users", n)
	}
	if got := checkKeys(); len(got) != 0 {
		t.Fatalf("desired keys of deleted checks remain: %v", got)
	}
	c2.mu.Lock()
	defer c2.mu.Unlock()
	for _, n := range []string{"leaf1", "leaf3", "spine1", "spine2"} {
		for _, kind := range []string{model.KindLabel, model.KindNHLFE, model.KindSession} {
			if got := c2.leader.alloc.InUse(n, kind); got != 0 {
				t.Errorf("%s: %d %s still allocated", n, got, kind)
			}
		}
	}
}

// TestSnapshotRoundTrip: a fabric saved and restored on a fresh controller
// programs every node exactly as before, labels included; restoring onto a
// controller that already holds it changes nothing; restoring onto one
// that has drifted puts it back.
func TestSnapshotRoundTrip(t *testing.T) {
	ctx := context.Background()
	cliA := storetest.Start(t, 23802)
	c1, _ := start(t, cliA, Options{IgnoreStatus: true})
	importTopo(t, c1)
	// A service made and deleted moves the allocators on: a fresh
	// controller creating the others would pick other values.
	for _, s := range []model.ServiceSpec{elan("tmp", 50), eline("red", 100), elan("green", 300)} {
		if err := c1.CreateService(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := c1.DeleteService(ctx, "tmp"); err != nil {
		t.Fatal(err)
	}
	snap, err := c1.SaveSnapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	desiredOf := func(cli *clientv3.Client) map[string]string {
		out := map[string]string{}
		for _, n := range topoNodes(t) {
			out[n] = mustJSON(t, nodeConfig(t, cli, n))
		}
		return out
	}
	want := desiredOf(cliA)

	cliB := storetest.Start(t, 23804)
	c2, _ := start(t, cliB, Options{IgnoreStatus: true})
	if err := c2.RestoreSnapshot(ctx, snap); err != nil {
		t.Fatal(err)
	}
	if got := desiredOf(cliB); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("restored desired state differs:\n%v\nwant\n%v", got, want)
	}
	again, _ := c2.SaveSnapshot(ctx)
	intent := func(s *model.FabricSnapshot) string { // generations are the store's own
		var out []any
		for _, r := range s.Services {
			out = append(out, []any{r.Spec, r.ID, r.Route, r.Allocs})
		}
		return mustJSON(t, []any{out, s.Checks})
	}
	if a, b := intent(again), intent(snap); a != b {
		t.Fatalf("services after restore differ:\n%s\n%s", a, b)
	}
	// Onto a controller that holds it already: nothing is written.
	before, _ := c2.Snapshot(ctx)
	if err := c2.RestoreSnapshot(ctx, snap); err != nil {
		t.Fatal(err)
	}
	if after, _ := c2.Snapshot(ctx); after.Generation != before.Generation {
		t.Fatalf("restoring the same state wrote generation %d -> %d", before.Generation, after.Generation)
	}
	// Onto one that drifted: the extra service goes, the rest is as saved.
	if err := c1.CreateService(ctx, eline("extra", 700)); err != nil {
		t.Fatal(err)
	}
	if err := c1.RestoreSnapshot(ctx, snap); err != nil {
		t.Fatal(err)
	}
	if got := desiredOf(cliA); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatal("restore onto a drifted controller did not bring it back")
	}
	// A broken snapshot is refused and changes nothing.
	bad := *snap
	bad.Version = 99
	if err := c2.RestoreSnapshot(ctx, &bad); KindOf(err) != KindInvalid {
		t.Fatalf("version 99: %v", err)
	}
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDrain: a drained spine leaves every path and tree; it stays drained
// across a controller restart and an import of the topology file; an
// unknown node is refused; undrain brings it back into use.
func TestDrain(t *testing.T) {
	cli := storetest.Start(t, etcdPort)
	ctx := context.Background()
	c, stop := start(t, cli, Options{IgnoreStatus: true})
	importTopo(t, c)
	if err := c.CreateServices(ctx, []model.ServiceSpec{eline("red", 100), elan("blue", 200)}); err != nil {
		t.Fatal(err)
	}
	snap, _ := c.Snapshot(ctx)
	spine := snap.Services["red"].Route.Primary[0].To
	if err := c.SetDrained(ctx, "nosuch", true); KindOf(err) != KindNotFound {
		t.Fatalf("drain of an unknown node: %v", err)
	}
	if err := c.SetDrained(ctx, spine, true); err != nil {
		t.Fatal(err)
	}
	check := func(c *Controller, drained bool) {
		t.Helper()
		snap, err := c.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if snap.Drained(spine) != drained {
			t.Fatalf("%s drained %v, want %v", spine, snap.Drained(spine), drained)
		}
		for name, rec := range snap.Services {
			if uses := usesNode(&rec.Spec, &rec.Route, spine); uses == drained {
				t.Fatalf("%s drained %v: %s uses it %v (route %+v)", spine, drained, name, uses, rec.Route)
			}
		}
	}
	check(c, true)
	stop()
	c, _ = start(t, cli, Options{IgnoreStatus: true})
	waitFor(t, "leadership", c.IsLeader)
	importTopo(t, c)
	check(c, true)
	if err := c.SetDrained(ctx, spine, false); err != nil {
		t.Fatal(err)
	}
	check(c, false)
}
