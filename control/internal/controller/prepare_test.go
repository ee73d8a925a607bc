package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/e3fabric/e3fabric/control/internal/dpconfig"
	"github.com/e3fabric/e3fabric/control/internal/model"
	"github.com/e3fabric/e3fabric/control/internal/nodestate"
	"github.com/e3fabric/e3fabric/control/internal/store/storetest"
)

var fabricNodes = []string{"leaf1", "leaf2", "leaf3", "spine1", "spine2"}

// reports are the fake agents' reports: the etcd revision of each
// (node, applied generation).
type reports struct {
	mu  sync.Mutex
	rev map[string]int64 // "node generation" -> revision
}

func (r *reports) at(node string, gen int64) (int64, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.rev[fmt.Sprint(node, " ", gen)]
	return v, ok
}

// fakeAgents report, for each node, the generation of its desired keys as
// applied as soon as it is written; a stuck node's agent reports the
// generation it has now, and no later one.
func fakeAgents(t *testing.T, cli *clientv3.Client, stuck ...string) *reports {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	out := &reports{rev: map[string]int64{}}
	report := func(node string, gen int64) {
		b, _ := json.Marshal(nodestate.NodeStatus{Node: node, AppliedGeneration: gen})
		r, err := cli.Put(ctx, nodestate.StatusKey(node), string(b))
		if err != nil {
			if ctx.Err() == nil {
				t.Errorf("status of %s: %v", node, err)
			}
			return
		}
		out.mu.Lock()
		out.rev[fmt.Sprint(node, " ", gen)] = r.Header.Revision
		out.mu.Unlock()
	}
	quiet := map[string]bool{}
	for _, n := range stuck {
		quiet[n] = true
	}
	r, err := cli.Get(ctx, nodestate.DesiredPrefix, clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range r.Kvs {
		if node, ok := generationOf(string(kv.Key)); ok {
			g, _ := strconv.ParseInt(string(kv.Value), 10, 64)
			report(node, g)
		}
	}
	wch := cli.Watch(ctx, nodestate.DesiredPrefix, clientv3.WithPrefix(), clientv3.WithRev(r.Header.Revision+1))
	go func() {
		for wr := range wch {
			for _, ev := range wr.Events {
				if node, ok := generationOf(string(ev.Kv.Key)); ok && !quiet[node] && ev.Type == clientv3.EventTypePut {
					g, _ := strconv.ParseInt(string(ev.Kv.Value), 10, 64)
					report(node, g)
				}
			}
		}
	}()
	return out
}

func generationOf(key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, nodestate.DesiredPrefix)
	node, suffix, _ := strings.Cut(rest, "/")
	return node, ok && suffix == nodestate.GenerationSuffix
}

// step is one transaction's writes of desired keys, by key (nil: deleted).
type step map[string][]byte

// steps returns the transactions on desired keys after revision rev, up
// to and including the first that leaves no prepare key, and their
// revisions.
func steps(t *testing.T, cli *clientv3.Client, rev int64) ([]step, []int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out []step
	var revs []int64
	at := map[int64]int{}
	live := map[string]bool{} // prepare keys
	for wr := range cli.Watch(ctx, nodestate.DesiredPrefix, clientv3.WithPrefix(), clientv3.WithRev(rev+1)) {
		for _, ev := range wr.Events {
			i, ok := at[ev.Kv.ModRevision]
			if !ok {
				out, revs = append(out, step{}), append(revs, ev.Kv.ModRevision)
				i = len(out) - 1
				at[ev.Kv.ModRevision] = i
			}
			k := string(ev.Kv.Key)
			prep := strings.Contains(k, "/"+nodestate.PrepareInfix)
			if ev.Type == clientv3.EventTypeDelete {
				out[i][k] = nil
				delete(live, k)
			} else {
				out[i][k] = ev.Kv.Value
				if prep {
					live[k] = true
				}
			}
		}
		if len(out) > 0 && len(live) == 0 && slices.ContainsFunc(keys(out[len(out)-1]), func(k string) bool {
			return strings.Contains(k, "/"+nodestate.PrepareInfix)
		}) {
			return out, revs
		}
	}
	t.Fatalf("no transaction removed the prepare keys: %d transactions", len(out))
	return nil, nil
}

// reported waits until the controller has every reporting agent's status
// at its node's generation.
func reported(t *testing.T, c *Controller, n int) {
	t.Helper()
	waitFor(t, "the agents' reports", func() bool {
		snap, err := c.Snapshot(context.Background())
		if err != nil || len(snap.Status) != n {
			return false
		}
		for node, s := range snap.Status {
			if s.AppliedGeneration < snap.NodeGen[node] {
				return false
			}
		}
		return true
	})
}

// twoMemberLAN imports the topology and creates E-LAN blue on leaf1 and
// leaf2; it returns the circuit on leaf3 that the tests add.
func twoMemberLAN(t *testing.T, c *Controller) model.Circuit {
	t.Helper()
	importTopo(t, c)
	blue := elan("blue", 200)
	third := blue.Circuits[2]
	blue.Circuits = blue.Circuits[:2]
	if err := c.CreateService(context.Background(), blue); err != nil {
		t.Fatal(err)
	}
	return third
}

// An E-LAN gains a member on leaf3 in three steps. The first only adds,
// under prepare keys: leaf3's service and labels (no circuit), the
// spines' new labels, the others' new NHLFEs; no service key changes. The
// second, written once every agent has reported the first applied,
// points the other members at leaf3 and at the new flood tree, gives
// leaf3 its circuit, and replaces the prepare keys by what the change
// removed that another node may still send to: the old tree's labels. The
// third, written once every agent has reported the second applied,
// removes those.
func TestTwoSteps(t *testing.T) {
	cli := storetest.Start(t, etcdPort)
	ctx := context.Background()
	c, _ := start(t, cli, Options{IgnoreStatus: true, PrepareWait: 10 * time.Second})
	third := twoMemberLAN(t, c)
	agents := fakeAgents(t, cli)
	reported(t, c, len(fabricNodes))
	r, err := cli.Get(ctx, "/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	before := map[string][]byte{}
	for _, kv := range r.Kvs {
		before[string(kv.Key)] = kv.Value
	}
	if err := c.UpdateService(ctx, "blue", []model.Circuit{third}, nil); err != nil {
		t.Fatal(err)
	}
	got, revs := steps(t, cli, r.Header.Revision)
	if len(got) != 3 {
		t.Fatalf("%d transactions, want 3: %v", len(got), keysOf(got))
	}
	first, second, last := got[0], got[1], got[2]
	isPrepare := func(k string) bool { return strings.Contains(k, "/"+nodestate.PrepareInfix) }
	decode := func(k string, v []byte) *dpconfig.Fragment {
		t.Helper()
		f, err := dpconfig.DecodeFragment(v)
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		return f
	}
	onlyLabelsAndPlain := func(k string, f *dpconfig.Fragment) {
		t.Helper()
		if len(f.Circuits)+len(f.ECMPs)+len(f.BFD) > 0 || slices.ContainsFunc(f.NHLFEs, func(n dpconfig.NHLFE) bool { return n.Protect != nil }) {
			t.Errorf("%s: %+v", k, f)
		}
	}
	// generations returns the nodes whose generation step s writes, and it.
	generations := func(s step) ([]string, int64) {
		var nodes []string
		var gen int64
		for k, v := range s {
			if node, ok := generationOf(k); ok {
				gen, _ = strconv.ParseInt(string(v), 10, 64)
				nodes = append(nodes, node)
			}
		}
		return nodes, gen
	}
	for k, v := range first {
		if _, isGen := generationOf(k); !isGen && !isPrepare(k) {
			t.Errorf("the first step writes %s", k)
		} else if !isGen {
			onlyLabelsAndPlain(k, decode(k, v))
		}
	}
	if f := decode("leaf3", first[nodestate.PrepareKey("leaf3", "blue")]); len(f.Services) != 1 || len(f.Labels) == 0 {
		t.Fatalf("leaf3's first step: %+v: want its service and labels", f)
	}
	nodes, gen := generations(first)
	for _, n := range nodes {
		if rev, ok := agents.at(n, gen); !ok || rev > revs[1] {
			t.Errorf("%s reported generation %d at revision %d (%v), after the second step (%d)", n, gen, rev, ok, revs[1])
		}
	}
	for k := range first {
		if _, ok := second[k]; isPrepare(k) && !ok {
			t.Errorf("the second step leaves %s as the first wrote it", k)
		}
	}
	for _, n := range []string{"leaf1", "leaf2", "leaf3"} {
		if _, ok := second[nodestate.ServiceKey(n, "blue")]; !ok {
			t.Errorf("the second step does not write %s's service", n)
		}
	}
	var held int
	for k, v := range second {
		if !isPrepare(k) || v == nil {
			continue
		}
		held++
		node := strings.Split(strings.TrimPrefix(k, nodestate.DesiredPrefix), "/")[0]
		f, svc := decode(k, v), nodestate.ServiceKey(node, "blue")
		onlyLabelsAndPlain(k, f)
		was, now := decode(svc, before[svc]), decode(svc, second[svc])
		for _, l := range f.Labels {
			if !slices.ContainsFunc(was.Labels, func(x dpconfig.Label) bool { return x.Equal(l) }) ||
				slices.ContainsFunc(now.Labels, func(x dpconfig.Label) bool { return x.Label == l.Label }) {
				t.Errorf("%s keeps label %d: not one the change removed from %s", k, l.Label, svc)
			}
		}
		if v, ok := last[k]; !ok || v != nil {
			t.Errorf("the third step does not remove %s", k)
		}
	}
	if held == 0 {
		t.Errorf("the second step keeps nothing of the old flood tree: %v", keys(second))
	}
	for k, v := range last {
		if _, isGen := generationOf(k); !isGen && (!isPrepare(k) || v != nil) {
			t.Errorf("the third step writes %s", k)
		}
	}
	nodes, gen = generations(second)
	for _, n := range nodes {
		if rev, ok := agents.at(n, gen); !ok || rev > revs[2] {
			t.Errorf("%s reported generation %d at revision %d (%v), after the third step (%d)", n, gen, rev, ok, revs[2])
		}
	}
	if n := testutil.ToFloat64(c.metrics.steps.WithLabelValues("applied")); n != 1 {
		t.Errorf("two-step changes applied in time: %v, want 1", n)
	}
	if n := testutil.ToFloat64(c.metrics.held.WithLabelValues("applied")); n != 1 {
		t.Errorf("changes whose removals were held: %v, want 1", n)
	}
}

func keysOf(steps []step) [][]string {
	out := make([][]string, len(steps))
	for i, s := range steps {
		out[i] = keys(s)
	}
	return out
}

// An agent that reports but does not apply the first step holds the
// change back no longer than PrepareWait, once: the third step does not
// wait for it again. A prepare key left by a leader that stopped between
// the steps is removed by the next one.
func TestTwoStepsLateAndLeftOver(t *testing.T) {
	cli := storetest.Start(t, etcdPort)
	ctx := context.Background()
	// Long enough for the agents that keep up to answer on a loaded
	// machine (the race detector, other packages' tests): only leaf3 is
	// to be late, and waiting for it costs the test this much once.
	c, stop := start(t, cli, Options{IgnoreStatus: true, PrepareWait: 2 * time.Second})
	third := twoMemberLAN(t, c)
	fakeAgents(t, cli, "leaf3")
	reported(t, c, len(fabricNodes))
	if err := c.UpdateService(ctx, "blue", []model.Circuit{third}, nil); err != nil {
		t.Fatal(err)
	}
	if n := testutil.ToFloat64(c.metrics.steps.WithLabelValues("late")); n != 1 {
		t.Errorf("two-step changes late: %v, want 1", n)
	}
	// The agent late for the first step is not waited for again.
	if n := testutil.ToFloat64(c.metrics.held.WithLabelValues("applied")); n != 1 {
		t.Errorf("changes whose removals were held, applied in time: %v, want 1", n)
	}
	stop()
	left := nodestate.PrepareKey("leaf1", "blue")
	if _, err := cli.Put(ctx, left, `{"labels":[{"label":999,"type":"elan","service":1,"source":9}]}`); err != nil {
		t.Fatal(err)
	}
	c, _ = start(t, cli, Options{IgnoreStatus: true})
	waitFor(t, "leadership", c.IsLeader)
	r, err := cli.Get(ctx, nodestate.DesiredPrefix, clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range r.Kvs {
		if strings.Contains(string(kv.Key), "/"+nodestate.PrepareInfix) {
			t.Errorf("%s left by a former leader", kv.Key)
		}
	}
}

// serviceOf takes only a service's fragment, whatever the node is named.
func TestServiceOf(t *testing.T) {
	for _, tc := range []struct {
		key, node, name string
		ok              bool
	}{
		{nodestate.ServiceKey("leaf1", "red"), "leaf1", "red", true},
		{nodestate.BaseKey("service"), "service", "", false},
		{nodestate.CheckKey("leaf1", "service"), "leaf1", "", false},
		{nodestate.PrepareKey("leaf1", "red"), "leaf1", "", false},
	} {
		if name, ok := serviceOf(tc.key, tc.node); ok != tc.ok || ok && name != tc.name {
			t.Errorf("serviceOf(%q, %q) = %q, %v; want %q, %v", tc.key, tc.node, name, ok, tc.name, tc.ok)
		}
	}
}

// A change keeps, for its third step, the labels it removes that another
// node may still send to, with the plain NHLFEs they use; not what
// delivers to a circuit or a session, nor a label whose service leaves the
// node, nor one whose next hop goes with a link the change removes.
func TestRetirements(t *testing.T) {
	id := func(v uint32) *uint32 { return &v }
	swap := func(l, nh uint32) dpconfig.Label { return dpconfig.Label{Label: l, Type: "swap", NHLFE: id(nh)} }
	nhlfe := func(i, link uint32) dpconfig.NHLFE { return dpconfig.NHLFE{ID: i, Nexthop: link, Label: 100 + i} }
	svc := []dpconfig.Service{{ID: 7, Type: "elan"}}
	links := map[uint32]bool{1: true, 2: true}
	for _, tc := range []struct {
		name     string
		was, cur dpconfig.Fragment
		labels   []uint32
		nhlfes   []uint32
	}{
		{"an old transit entry stays with its NHLFE",
			dpconfig.Fragment{Labels: []dpconfig.Label{swap(20, 1)}, NHLFEs: []dpconfig.NHLFE{nhlfe(1, 1)}},
			dpconfig.Fragment{Labels: []dpconfig.Label{swap(21, 2)}, NHLFEs: []dpconfig.NHLFE{nhlfe(2, 2)}},
			[]uint32{20}, []uint32{1}},
		{"an old tree's branches stay",
			dpconfig.Fragment{Labels: []dpconfig.Label{{Label: 30, Type: "replicate", RPFPort: "fab1", Branches: []uint32{1, 2}}},
				NHLFEs: []dpconfig.NHLFE{nhlfe(1, 1), nhlfe(2, 2)}},
			dpconfig.Fragment{NHLFEs: []dpconfig.NHLFE{nhlfe(2, 2)}},
			[]uint32{30}, []uint32{1}},
		{"a label the change keeps is no removal",
			dpconfig.Fragment{Labels: []dpconfig.Label{swap(20, 1)}, NHLFEs: []dpconfig.NHLFE{nhlfe(1, 1)}},
			dpconfig.Fragment{Labels: []dpconfig.Label{swap(20, 2)}, NHLFEs: []dpconfig.NHLFE{nhlfe(2, 2)}},
			nil, nil},
		{"a next hop whose link goes",
			dpconfig.Fragment{Labels: []dpconfig.Label{swap(20, 3)}, NHLFEs: []dpconfig.NHLFE{nhlfe(3, 9)}},
			dpconfig.Fragment{},
			nil, nil},
		{"an E-LAN label stays while its service does",
			dpconfig.Fragment{Labels: []dpconfig.Label{{Label: 40, Type: "elan", Service: id(7), Source: new(uint16)}}, Services: svc},
			dpconfig.Fragment{Services: svc},
			[]uint32{40}, nil},
		{"not once its service leaves the node",
			dpconfig.Fragment{Labels: []dpconfig.Label{{Label: 40, Type: "elan", Service: id(7), Source: new(uint16)}}, Services: svc},
			dpconfig.Fragment{},
			nil, nil},
		{"nor what delivers to a circuit or a session",
			dpconfig.Fragment{Labels: []dpconfig.Label{{Label: 50, Type: "circuit", Circuit: id(3)}, {Label: 51, Type: "oam", Session: id(2048)}}},
			dpconfig.Fragment{},
			nil, nil},
	} {
		r := retirements(&tc.was, &tc.cur, links)
		var labels, nhlfes []uint32
		if r != nil {
			for _, l := range r.Labels {
				labels = append(labels, l.Label)
			}
			for _, n := range r.NHLFEs {
				nhlfes = append(nhlfes, n.ID)
			}
		}
		if !slices.Equal(labels, tc.labels) || !slices.Equal(nhlfes, tc.nhlfes) {
			t.Errorf("%s: labels %v, NHLFEs %v; want %v, %v", tc.name, labels, nhlfes, tc.labels, tc.nhlfes)
		}
	}
}

// Draining a leaf moves green's flood tree to the other spine; the old
// tree's labels stay until every agent has moved off them.
func TestDrainHoldsTheOldTree(t *testing.T) {
	cli := storetest.Start(t, etcdPort)
	ctx := context.Background()
	c, _ := start(t, cli, Options{IgnoreStatus: true, PrepareWait: 10 * time.Second})
	importTopo(t, c)
	if err := c.CreateService(ctx, elan("green", 300)); err != nil {
		t.Fatal(err)
	}
	agents := fakeAgents(t, cli)
	reported(t, c, len(fabricNodes))
	for _, drained := range []bool{true, false} {
		r, err := cli.Get(ctx, "/")
		if err != nil {
			t.Fatal(err)
		}
		if err := c.SetDrained(ctx, "leaf2", drained); err != nil {
			t.Fatal(err)
		}
		got, revs := steps(t, cli, r.Header.Revision)
		if len(got) != 3 {
			t.Fatalf("drained %v: %d transactions, want 3: %v", drained, len(got), keysOf(got))
		}
		var trees int
		for k, v := range got[1] {
			if !strings.Contains(k, "/"+nodestate.PrepareInfix) || v == nil {
				continue
			}
			f, err := dpconfig.DecodeFragment(v)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range f.Labels {
				if l.Type == dpconfig.LabelReplicate {
					trees++
				}
			}
		}
		if trees == 0 {
			t.Errorf("drained %v: the second step keeps no label of the old tree: %v", drained, keysOf(got))
		}
		for k, v := range got[1] {
			if node, ok := generationOf(k); ok {
				gen, _ := strconv.ParseInt(string(v), 10, 64)
				if rev, ok := agents.at(node, gen); !ok || rev > revs[2] {
					t.Errorf("drained %v: %s applied the change at revision %d (%v), after the third step (%d)",
						drained, node, rev, ok, revs[2])
				}
			}
		}
		reported(t, c, len(fabricNodes))
	}
}
