// Package controller is e3-controller's logic: it owns the topology and the
// services, computes routes, allocates labels and writes every node's desired
// config to etcd, one transaction per change. Replicas elect a leader through
// etcd; only the leader computes and writes, and every write is fenced on its
// leadership, so a deposed leader cannot write. The leader's in-memory state
// is a cache of etcd: a new leader loads it and carries on with the same labels.
package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/e3fabric/e3fabric/control/internal/desired"
	"github.com/e3fabric/e3fabric/control/internal/labels"
	"github.com/e3fabric/e3fabric/control/internal/linkload"
	"github.com/e3fabric/e3fabric/control/internal/model"
	"github.com/e3fabric/e3fabric/control/internal/nodestate"
	"github.com/e3fabric/e3fabric/control/internal/store"
	"github.com/e3fabric/e3fabric/control/internal/topology"
)

// Link cost modes.
const (
	CostHops = "hops"
	CostLoad = "load"
)

// Options configure a Controller.
type Options struct {
	Etcd     *clientv3.Client
	LinkCost string // CostHops (default) or CostLoad
	// The load cost's measurements and re-optimisation (load.go): the
	// averaging window of measured rates (default 30s), how often the
	// routes are re-optimised (default 30s), the gain a move must bring
	// (default 0.2: a fifth of the path's cost) and how long a moved
	// service stays (default 5 minutes).
	LoadWindow     time.Duration
	Reoptimize     time.Duration
	ReoptimizeGain float64
	ReoptimizeHold time.Duration
	// Spaces overrides the identifier spaces (tests shrink them).
	Spaces map[string]labels.Space
	// IgnoreStatus treats every node and link as up whatever the agents
	// report (benchmarks, or bring-up without agents).
	IgnoreStatus bool
	// Advertise is this replica's API URL, stored as the election value so
	// followers can name the leader.
	Advertise string
	// SessionTTL is the leadership lease in seconds (default 5).
	SessionTTL int
	// Grace is how long a new leader collects agents' reports before it
	// acts on them (default 5s): after a restart or a takeover the agents
	// may not have reported yet, and a missing report is no failure.
	Grace time.Duration
	// RepairHold is the longest a global repair waits while the fabric
	// keeps changing (default 500ms; negative: never, each change at once).
	RepairHold time.Duration
	// FullPass is how often the leader recomputes every service, besides
	// the services each change affects (default 10 minutes).
	FullPass time.Duration
	// PrepareWait is the longest a change written in two steps waits for
	// the agents to apply its first (prepare.go; default
	// DefaultPrepareWait).
	PrepareWait time.Duration
	// EtcdQuota is etcd's backend quota in bytes (default
	// DefaultEtcdQuota, etcd's own): new services are refused near it
	// (room.go).
	EtcdQuota int64
	Log       *slog.Logger
}

// Controller is one replica.
type Controller struct {
	opt Options
	log *slog.Logger

	mu     sync.Mutex
	leader *state // nil unless this replica leads
	ready  chan struct{}
	events []model.Event
	// failedAt: when the first report of a change not yet repaired came in.
	failedAt time.Time
	metrics  *metrics
	room     storeRoom // etcd's database against its quota
}

type svcState struct {
	rec *model.ServiceRecord
	// frags are its per-node fragments from its build until they are
	// committed (or, loaded, until a store upgrade has written them):
	// etcd holds them, and a change builds the service anew. nodes are
	// the nodes it has a fragment on, which is what stays.
	frags  map[string]*desired.Fragment
	nodes  []string
	checks []string // keys of the path checks its protected entries watch
	deps   []string // the nodes and links its route depends on (change.go, deps)
}

// state is the leader's cache of etcd plus what it derives from it.
type state struct {
	fence      clientv3.Cmp
	topo       *topology.Topology
	services   map[string]*svcState
	alloc      *labels.Allocator
	gen        int64
	nodeGen    map[string]int64
	written    digests                    // of every desired key's stored value (digests.go)
	prepared   map[string]string          // prepare keys stored (prepare.go) -> their node
	committed  time.Time                  // when the last change was stored (before its third step)
	macs       map[string]int64           // node -> MACs its E-LANs may learn (macadmit.go)
	disjointBy map[string]map[string]bool // service -> those whose paths keep disjoint from it
	elems      map[string]string          // element keys (deps), one copy each
	// loadedChecks: no change committed since the load, whose leftover
	// checks (unused, or made by the load) the next change settles.
	loadedChecks bool
	paths        model.PathTable // the routes' paths, shared
	legacy       []string        // whole-node desired keys of schema 1 (migrate.go)
	status       map[string]nodestate.NodeStatus
	statusRev    int64
	down         downView
	circuits     map[model.CircuitKey]string    // circuit -> service using it
	rebuilt      map[string]bool                // services loaded with other roles than stored: to rewrite
	checks       map[string]*checkState         // path checks by key (checks.go)
	checkRefs    map[string]int                 // check key -> how many watches of services use it
	deps         map[string]map[string]struct{} // node or link element -> services whose route depends on it
	graphs       graphCache
	links        linkIndex // st.linksOf
	// fullPass: no reaction has run since taking over (reactLocked).
	fullPass bool
	// Load (load.go): reservations (link -> Mbps), measured rates, when
	// re-optimisation last moved each service, when its measurements
	// will show the last moves, and the moves of a pass not yet measured.
	reserved    map[int]int64
	moves       map[string]bool // services with a move in progress (move.go)
	tenants     map[string]*model.Tenant
	meter       *linkload.Meter
	movedAt     map[string]time.Time
	settleUntil time.Time
	shift       map[int]float64
	// What the load took (the "leading" log line): reading etcd's few
	// other keys, reading and decoding the records (side by side),
	// replaying the services and indexing them; and the desired keys'
	// read, which overlaps the records'.
	loadTimes   [4]time.Duration
	loadDesired time.Duration
}

type downView struct {
	nodes map[string]bool
	links map[int]bool
	// Links Up again but within their wait-to-restore: not down, but
	// avoided (paths.RestoreCost).
	restoring map[int]bool
	ports     map[string]bool // segment ports ("node:port") without carrier
}

// equal compares what is down (a nil map and an empty one say the same).
func (v downView) equal(o downView) bool {
	return slices.Equal(keys(v.nodes), keys(o.nodes)) && slices.Equal(intKeys(v.links), intKeys(o.links)) &&
		slices.Equal(intKeys(v.restoring), intKeys(o.restoring)) && slices.Equal(keys(v.ports), keys(o.ports))
}

// New returns a replica; Run makes it take part in the election.
func New(o Options) *Controller {
	if o.LinkCost == "" {
		o.LinkCost = CostHops
	}
	if o.SessionTTL == 0 {
		o.SessionTTL = 5
	}
	if o.Grace == 0 {
		o.Grace = 5 * time.Second
	}
	if o.RepairHold == 0 {
		o.RepairHold = 500 * time.Millisecond
	}
	if o.FullPass == 0 {
		o.FullPass = 10 * time.Minute
	}
	if o.PrepareWait == 0 {
		o.PrepareWait = DefaultPrepareWait
	}
	if o.LoadWindow == 0 {
		o.LoadWindow = 30 * time.Second
	}
	if o.Reoptimize == 0 {
		o.Reoptimize = 30 * time.Second
	}
	if o.ReoptimizeGain == 0 {
		o.ReoptimizeGain = 0.2
	}
	if o.ReoptimizeHold == 0 {
		o.ReoptimizeHold = 5 * time.Minute
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.EtcdQuota == 0 {
		o.EtcdQuota = DefaultEtcdQuota
	}
	c := &Controller{opt: o, log: o.Log, ready: make(chan struct{}), metrics: newMetrics()}
	c.room.quota = o.EtcdQuota
	return c
}

// Run campaigns for leadership and, while leader, follows agents' status.
// It returns when ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	if err := store.InitSchema(ctx, c.opt.Etcd); err != nil {
		return err
	}
	close(c.ready)
	go c.room.follow(ctx, c.opt.Etcd)
	for ctx.Err() == nil {
		if err := c.lead(ctx); err != nil && ctx.Err() == nil {
			c.log.Error("leadership ended", "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
	return nil
}

// WaitLeader blocks until this replica leads (tests, benchmarks).
func (c *Controller) WaitLeader(ctx context.Context) error {
	for {
		c.mu.Lock()
		ok := c.leader != nil
		c.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// IsLeader reports whether this replica leads.
func (c *Controller) IsLeader() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.leader != nil
}

func (c *Controller) lead(ctx context.Context) error {
	sess, err := concurrency.NewSession(c.opt.Etcd, concurrency.WithTTL(c.opt.SessionTTL))
	if err != nil {
		return fmt.Errorf("etcd session: %w", err)
	}
	defer sess.Close()
	el := concurrency.NewElection(sess, store.ElectionPrefix)
	if err := el.Campaign(ctx, c.opt.Advertise); err != nil {
		return fmt.Errorf("campaign: %w", err)
	}
	st, err := load(ctx, c.opt, clientv3.Compare(clientv3.CreateRevision(el.Key()), "=", el.Rev()))
	if err != nil {
		return err
	}
	schema, err := store.Schema(ctx, c.opt.Etcd)
	if err != nil {
		return err
	}
	if schema != store.SchemaVersion || len(st.legacy) > 0 {
		if err := c.migrate(ctx, st); err != nil {
			return err
		}
		c.log.Info("store upgraded", "from_schema", schema, "to_schema", store.SchemaVersion, "services", len(st.services))
	}
	// etcd holds the fragments (the upgrade above was their last reader).
	for _, s := range st.services {
		s.frags = nil
	}
	for _, cs := range st.checks {
		cs.dropFrags()
	}
	if err := c.dropPrepared(ctx, st); err != nil {
		return err
	}
	c.mu.Lock()
	c.leader = st
	c.record(model.Event{Time: time.Now(), Kind: "leader", Detail: fmt.Sprintf("leading; acting on agents' reports after %s", c.opt.Grace)})
	c.mu.Unlock()
	lt := st.loadTimes
	c.log.Info("leading", "generation", st.gen, "services", len(st.services), "checks", len(st.checks),
		"load_read", lt[0].Round(time.Millisecond), "load_decode", lt[1].Round(time.Millisecond),
		"load_replay", lt[2].Round(time.Millisecond), "load_index", lt[3].Round(time.Millisecond),
		"load_desired", st.loadDesired.Round(time.Millisecond))
	defer func() {
		c.mu.Lock()
		c.leader = nil
		c.mu.Unlock()
		c.log.Info("no longer leading")
	}()

	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Status changes since the load: the watch starts after its revision.
	wch := c.opt.Etcd.Watch(lctx, nodestate.StatusPrefix, clientv3.WithPrefix(), clientv3.WithRev(st.statusRev+1))
	// The view at load time may differ from the one the stored routes were
	// computed with (failures while no leader ran); act on it once the
	// agents have had the grace period to report.
	grace := time.NewTimer(c.opt.Grace)
	defer grace.Stop()
	inGrace := true
	th := newThrottle(c.opt.RepairHold)
	var held <-chan time.Time // a repair waiting for the throttle's hold
	repair := func(why string) {
		if c.react(lctx, why, false) {
			th.ran(time.Now())
		}
	}
	// The periodic full pass: whatever the incremental reactions missed
	// (with load-based costs, a route also depends on the others' routes).
	fullPass := time.NewTicker(c.opt.FullPass)
	defer fullPass.Stop()
	// Moves whose window has passed are finished (move.go).
	moves := time.NewTicker(time.Second)
	defer moves.Stop()
	var reopt <-chan time.Time
	if c.opt.LinkCost == CostLoad {
		t := time.NewTicker(c.opt.Reoptimize)
		defer t.Stop()
		reopt = t.C
	}
	for {
		select {
		case <-lctx.Done():
			return nil
		case <-sess.Done():
			return errors.New("etcd session expired")
		case <-grace.C:
			inGrace = false
			repair("leader start")
		case <-held:
			held = nil
			repair("status change (throttled)")
		case <-fullPass.C:
			if !inGrace {
				c.react(lctx, "periodic full pass", true)
			}
		case now := <-moves.C:
			if !inGrace {
				c.finishMoves(lctx, now)
			}
		case <-reopt:
			if !inGrace && held == nil {
				c.Reoptimize(lctx)
			}
		case wr, ok := <-wch:
			if !ok || wr.Err() != nil {
				return fmt.Errorf("status watch: %v", wr.Err())
			}
			c.mu.Lock()
			now := time.Now()
			for _, ev := range wr.Events {
				node := string(ev.Kv.Key[len(nodestate.StatusPrefix):])
				var old, cur *nodestate.NodeStatus
				if o, ok := c.leader.status[node]; ok {
					old = &o
				}
				if ev.Type == clientv3.EventTypeDelete {
					delete(c.leader.status, node)
				} else {
					var s nodestate.NodeStatus
					if json.Unmarshal(ev.Kv.Value, &s) != nil {
						continue
					}
					c.leader.status[node] = s
					c.leader.meter.Observe(c.leader.topo, s)
					cur = &s
				}
				c.record(statusEvents(now, node, old, cur, c.sessionName)...)
			}
			if c.failedAt.IsZero() {
				c.failedAt = now
			}
			c.mu.Unlock()
			if inGrace || held != nil {
				continue // acted on at the end of the grace period or of the hold
			}
			if d := th.wait(time.Now()); d > 0 {
				held = time.After(d)
				continue
			}
			repair("status change")
		}
	}
}

// react recomputes the services that depend on what changed between the
// view their routes were computed with and the current one (all of them in
// a full pass), and reports whether it did anything.
func (c *Controller) react(ctx context.Context, why string, full bool) (did bool) {
	_ = c.withLeader(func(st *state) error { did = c.reactLocked(ctx, st, why, full); return nil })
	return did
}

func (c *Controller) reactLocked(ctx context.Context, st *state, why string, full bool) bool {
	v := c.view(st)
	if st.fullPass {
		// The first reaction since taking over. The stored routes were
		// computed with a view not stored with them: if what is down now
		// differs from nothing down, every route may have to move. If
		// nothing is down, they stay as they are: a restart never moves
		// (and relabels) a service by itself.
		full = full || !v.equal(st.down)
		st.fullPass = full
	}
	if v.equal(st.down) && len(st.rebuilt) == 0 && !full {
		c.failedAt = time.Time{} // nothing the fabric view did not already hold
		return false
	}
	old := st.down
	names := keys(st.services)
	if !full {
		names = st.affected(v.changed(old))
	}
	c.log.Info("recomputing", "why", why, "full", full, "services", len(names), "down_nodes", keys(v.nodes), "down_links", intKeys(v.links))
	st.down = v
	gen := st.gen
	if err := c.recompute(ctx, st, nil, names); err != nil {
		st.down = old // retried at the next status change
		c.log.Error("recompute", "err", err)
		return true
	}
	st.fullPass = false
	now := time.Now()
	c.record(viewEvents(now, old, v, c.linkName)...)
	if st.gen != gen {
		ev := model.Event{Time: now, Kind: "repair", Detail: fmt.Sprintf("recomputed: generation %d -> %d", gen, st.gen)}
		if !c.failedAt.IsZero() {
			ev.TookMS = st.committed.Sub(c.failedAt).Milliseconds()
		}
		c.record(ev)
	}
	c.failedAt = time.Time{}
	return true
}

// sessionName names what a BFD session of node checks, for events: a
// link, or a path ("path leaf1>leaf2:3.7", the check's key). c.mu held.
func (c *Controller) sessionName(node string, b nodestate.BFDStatus) string {
	if b.Label == 0 {
		return c.linkName(int(b.ID))
	}
	if st := c.leader; st != nil {
		for k, cs := range st.checks {
			if id, ok := cs.session(node); ok && id == b.ID {
				return "path " + k
			}
		}
	}
	return fmt.Sprint("path session ", b.ID)
}

// linkName names link id for events. c.mu held.
func (c *Controller) linkName(id int) string {
	if st := c.leader; st != nil {
		if l, ok := st.topo.LinkByID(id); ok {
			return l.Name()
		}
	}
	return fmt.Sprint("link ", id)
}

// view derives what is down from the datapaths' in-band OAM, as the agents
// report it (docs/ha.md):
//   - a link is down when the BFD session on it at either end is not Up, or
//     either end's port has no carrier; one whose sessions are Up but one
//     came back less than its wait-to-restore ago is restoring: not down,
//     but avoided where anything else connects its ends;
//   - a node is down when every link of it that someone reports on is down,
//     or when nobody reports on it at all: neither its own agent nor a
//     neighbour's.
//
// So a node whose agent died while its datapath forwards stays up: its
// neighbours' sessions to it are up. A hung or dead datapath is down: its
// neighbours' sessions time out.
func (c *Controller) view(st *state) downView { return c.viewOf(st, st.topo) }

func (c *Controller) viewOf(st *state, topo *topology.Topology) downView {
	v := downView{nodes: map[string]bool{}, links: map[int]bool{}, restoring: map[int]bool{}, ports: map[string]bool{}}
	if c.opt.IgnoreStatus {
		return v
	}
	// linkState tells what e's datapath says of link l (carrier, and the
	// BFD session on l where it runs one); known is false when e's agent
	// does not report.
	linkState := func(e topology.Endpoint, l topology.Link) (up, restoring, known bool) {
		ns, ok := st.status[e.Node]
		if !ok {
			return false, false, false
		}
		for _, p := range ns.Ports {
			if p.Name == e.Port && !p.LinkUp {
				return false, false, true
			}
		}
		for _, b := range ns.BFD {
			if b.ID == uint32(l.ID) && b.Label == 0 {
				restoring := b.State == "up" && !b.Usable
				return b.Usable || restoring, restoring, true
			}
		}
		return true, false, true
	}
	reported, upLinks := map[string]bool{}, map[string]bool{}
	for _, l := range topo.Links {
		aUp, aRestoring, aKnown := linkState(l.A, l)
		bUp, bRestoring, bKnown := linkState(l.B, l)
		if (aKnown && !aUp) || (bKnown && !bUp) {
			v.links[l.ID] = true
		} else if aRestoring || bRestoring {
			v.restoring[l.ID] = true
		}
		if aKnown || bKnown {
			reported[l.A.Node], reported[l.B.Node] = true, true
			if !v.links[l.ID] {
				upLinks[l.A.Node], upLinks[l.B.Node] = true, true
			}
		}
	}
	for _, n := range topo.Nodes {
		_, hasStatus := st.status[n.Name]
		if (reported[n.Name] && !upLinks[n.Name]) || (!reported[n.Name] && !hasStatus) {
			v.nodes[n.Name] = true
		}
	}
	for _, l := range topo.Links {
		if v.nodes[l.A.Node] || v.nodes[l.B.Node] {
			v.links[l.ID] = true
		}
	}
	// A multi-homed site is not reached through a port without carrier.
	for _, seg := range topo.Segments {
		for _, e := range seg.Ports {
			for _, p := range st.status[e.Node].Ports {
				if p.Name == e.Port && !p.LinkUp {
					v.ports[e.Node+":"+e.Port] = true
				}
			}
		}
	}
	return v
}

// keys returns m's keys, sorted.
func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func intKeys(m map[int]bool) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}

// load reads everything the leader needs from etcd.
func load(ctx context.Context, o Options, fence clientv3.Cmp) (*state, error) {
	st := &state{
		fence:        fence,
		topo:         &topology.Topology{},
		services:     map[string]*svcState{},
		alloc:        labels.New(o.Spaces),
		nodeGen:      map[string]int64{},
		written:      newDigests(),
		prepared:     map[string]string{},
		circuits:     map[model.CircuitKey]string{},
		rebuilt:      map[string]bool{},
		checks:       map[string]*checkState{},
		checkRefs:    map[string]int{},
		deps:         map[string]map[string]struct{}{},
		fullPass:     true,
		loadedChecks: true,
		reserved:     map[int]int64{},
		macs:         map[string]int64{},
		disjointBy:   map[string]map[string]bool{},
		elems:        map[string]string{},
		moves:        map[string]bool{},
		tenants:      map[string]*model.Tenant{},
		meter:        linkload.NewMeter(o.LoadWindow),
		movedAt:      map[string]time.Time{},
	}
	c := o.Etcd
	t := time.Now()
	phase := func(i int) {
		now := time.Now()
		st.loadTimes[i] += now.Sub(t)
		t = now
	}
	if _, err := store.GetJSON(ctx, c, store.TopologyKey, st.topo); err != nil {
		return nil, err
	}
	if _, err := store.GetJSON(ctx, c, store.GenerationKey, &st.gen); err != nil {
		return nil, err
	}
	phase(0)
	// The desired keys are read while the records are read and decoded.
	desiredRead := make(chan error, 1)
	go func() {
		t := time.Now()
		err := loadDesired(ctx, c, st)
		st.loadDesired = time.Since(t)
		desiredRead <- err
	}()
	checks, svcs, err := loadRecords(ctx, c, model.LinksOf(st.topo))
	if derr := <-desiredRead; err == nil {
		err = derr
	}
	phase(1)
	if err != nil {
		return nil, err
	}
	if _, err := store.ListJSON(ctx, c, store.TenantPrefix, func(name string, v []byte) error {
		t := &model.Tenant{}
		st.tenants[name] = t
		return json.Unmarshal(v, t)
	}); err != nil {
		return nil, err
	}
	// Every stored value is reserved before anything is rebuilt, so that
	// what a rebuild must allocate anew (a check missing from an older
	// layout, a role an older build did not have) cannot take one.
	for key, r := range checks {
		for _, a := range r.Allocs {
			if err := st.alloc.Reserve(a.Node, a.Kind, a.Value); err != nil {
				return nil, fmt.Errorf("check %s: %w", key, err)
			}
		}
	}
	for name, r := range svcs {
		if err := r.reserve(st.alloc); err != nil {
			return nil, fmt.Errorf("service %s: %w", name, err)
		}
	}
	for _, key := range keys(checks) {
		if err := loadCheck(st, key, checks[key]); err != nil {
			return nil, err
		}
	}
	phase(3)
	schema, err := store.Schema(ctx, c)
	if err != nil {
		return nil, err
	}
	phase(0)
	// A store to upgrade is written from the fragments rebuilt here
	// (migrate.go); otherwise etcd holds them, and the rebuild only checks
	// that every role gets its value back and finds each service's nodes
	// and path checks: side by side, as replays only read the allocator.
	upgrade := schema != store.SchemaVersion || len(st.legacy) > 0
	order := keys(svcs)
	fast := make([]*svcState, len(order))
	if !upgrade {
		scratch := sync.Pool{New: func() any { return &replayScratch{frags: desired.NewScratch()} }}
		parallel(len(order), func(i int) {
			sc := scratch.Get().(*replayScratch)
			fast[i] = replayed(st, svcs[order[i]], sc)
			scratch.Put(sc)
		})
	}
	phase(2)
	presize(st, svcs, fast)
	for i, name := range order {
		s := fast[i]
		if s == nil {
			if s, err = rebuild(st, name, svcs[name]); err != nil {
				return nil, err
			}
		} else {
			for _, k := range s.checks {
				st.checkRefs[k]++
			}
		}
		st.paths.Route(&s.rec.Route)
		st.put(s)
	}
	phase(3)
	st.status, st.statusRev, err = store.Statuses(ctx, c)
	if err != nil {
		return nil, err
	}
	phase(0)
	for _, s := range st.status {
		st.meter.Observe(st.topo, s)
	}
	return st, nil
}

// loadRecords lists the stored path checks and services and decodes them
// as their pages come: the two listings wait on etcd, the decoders (one
// per CPU) on the CPUs, and on a large fabric decoding is most of a
// load's CPU.
func loadRecords(ctx context.Context, c *clientv3.Client, links model.Links) (
	map[string]*model.CheckRecord, map[string]*storedRecord, error) {
	type stored struct {
		key   string
		value []byte
		check bool
	}
	type decoded struct {
		checks map[string]*model.CheckRecord
		svcs   map[string]*storedRecord
		err    error
	}
	items := make(chan stored, 4096)
	outs := make([]decoded, runtime.GOMAXPROCS(0))
	var decoders sync.WaitGroup
	for w := range outs {
		o := &outs[w]
		o.checks, o.svcs = map[string]*model.CheckRecord{}, map[string]*storedRecord{}
		decoders.Add(1)
		go func() {
			defer decoders.Done()
			for it := range items {
				if o.err != nil {
					continue // drained, so that no listing waits
				}
				if it.check {
					r := &model.CheckRecord{}
					if err := json.Unmarshal(it.value, r); err != nil {
						o.err = fmt.Errorf("etcd %s%s: %w", store.CheckPrefix, it.key, err)
					}
					o.checks[it.key] = r
					continue
				}
				r, err := decodeRecord(it.value, links)
				if err != nil {
					o.err = fmt.Errorf("etcd %s: %w", store.ServiceKey(it.key), err)
				}
				o.svcs[it.key] = r
			}
		}()
	}
	var listings sync.WaitGroup
	listErrs := make([]error, 2)
	for i, prefix := range []string{store.CheckPrefix, store.ServicePrefix} {
		listings.Add(1)
		go func() {
			defer listings.Done()
			_, listErrs[i] = store.ListJSON(ctx, c, prefix, func(key string, v []byte) error {
				items <- stored{key, v, i == 0}
				return nil
			})
		}()
	}
	listings.Wait()
	close(items)
	decoders.Wait()
	errs := listErrs
	nc, ns := 0, 0
	for _, o := range outs {
		errs = append(errs, o.err)
		nc, ns = nc+len(o.checks), ns+len(o.svcs)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, nil, err
	}
	checks, svcs := make(map[string]*model.CheckRecord, nc), make(map[string]*storedRecord, ns)
	for _, o := range outs {
		maps.Copy(checks, o.checks)
		maps.Copy(svcs, o.svcs)
	}
	return checks, svcs, nil
}

// presize sizes the leader's indexes for the services being loaded, whose
// growth one insert at a time would rehash them again and again on the
// load's one serial path (replayed are those replayed, nil where not).
func presize(st *state, svcs map[string]*storedRecord, replayed []*svcState) {
	circuits, users := 0, map[string]int{}
	for _, r := range svcs {
		circuits += len(r.rec.Spec.Circuits)
	}
	for _, s := range replayed {
		if s != nil {
			for _, e := range s.deps {
				users[e]++
			}
		}
	}
	st.services = make(map[string]*svcState, len(svcs))
	st.circuits = make(map[model.CircuitKey]string, circuits)
	for e, n := range users {
		st.deps[st.elem(e)] = make(map[string]struct{}, n)
	}
}

// replayScratch is what one goroutine's replays reuse: the fragments'
// builder state and the last replay's assigner (what they keep is copied
// out).
type replayScratch struct {
	frags *desired.Scratch
	as    *labels.Assigner
}

// replayed rebuilds a stored service that the current build stored (its
// values and the digest of its roles) without changing st: nil if it
// needs more (a check it watches is missing, or its roles differ), which
// rebuild then does. Its fragments are built in sc and dropped: etcd holds
// them.
func replayed(st *state, r *storedRecord, sc *replayScratch) *svcState {
	if r.values == nil {
		return nil
	}
	rec := *r.rec
	as := st.alloc.ReplayIn(sc.as, r.values)
	sc.as = as
	if assignID(&rec, as) != nil {
		return nil
	}
	var checks []string
	nodes, err := desired.Replay(&rec, as, func(node, from, to string, p model.Path) (uint32, error) {
		var buf [128]byte
		cs := st.checks[string(desired.AppendCheckKey(buf[:0], from, to, p))]
		if cs == nil { // made by rebuild, in order
			return 0, errRebuild
		}
		checks = append(checks, cs.key)
		id, ok := cs.session(node)
		if !ok {
			return 0, errRebuild
		}
		return id, nil
	}, sc.frags)
	if err != nil || as.Check(r.roles) != nil {
		return nil
	}
	keepValues(&rec, as)
	return &svcState{rec: &rec, nodes: nodes, checks: distinct(checks), deps: deps(&rec, downView{})}
}

var errRebuild = errors.New("rebuild in order")

// rebuild rebuilds a stored service with its values, creating the path
// checks it watches that are missing, and keeps its fragments.
func rebuild(st *state, name string, r *storedRecord) (*svcState, error) {
	rec := r.rec
	// Rebuilding the fragments from the stored route and values
	// allocates nothing: every role gets its value back.
	as := r.assigner(st.alloc)
	var checks []string
	frags, err := build(rec, as, st.watcher(nil, st.topo, &checks))
	if err != nil {
		return nil, fmt.Errorf("service %s: %w", name, err)
	}
	checks = distinct(checks)
	if r.values != nil {
		if err := as.Check(r.roles); err != nil {
			return nil, fmt.Errorf("service %s: %w", name, err)
		}
	}
	for _, k := range checks {
		st.checkRefs[k]++
		if st.checks[k].dirty {
			st.rebuilt[name] = true // stored before its check: write both
		}
	}
	if r.values == nil && len(as.Allocs()) != len(rec.Allocs) {
		// Stored by a build that programmed the route with other
		// roles (e.g. before protected NHLFEs): keep what this build
		// needs and write the service again at the first recompute.
		as.Commit()
		st.rebuilt[name] = true
	}
	keepValues(rec, as)
	return &svcState{rec: rec, frags: frags, checks: checks, deps: deps(rec, downView{})}, nil
}

// loadDesired reads what the desired keys hold: each node's generation and
// a digest of every other value, which commits compare against to write
// only what changes. Whole-node keys of schema 1 are noted for migration.
func loadDesired(ctx context.Context, c *clientv3.Client, st *state) error {
	// Node by node: etcd counts the whole range on every page it returns,
	// so one listing of millions of keys would cost their square. A page
	// is a linearizable read, a round trip through etcd's leader and a
	// quorum, so a few nodes are read at once. A node that left the
	// topology took its keys with it.
	nodes := st.topo.Nodes
	read := make([]desiredNode, len(nodes))
	errs := make([]error, len(nodes))
	parallelOn(desiredReaders, len(nodes), func(i int) {
		read[i], errs[i] = readDesired(ctx, c, st.written, nodes[i].Name)
	})
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for i, n := range nodes {
		r := read[i]
		if r.legacy {
			st.legacy = append(st.legacy, nodestate.DesiredPrefix+n.Name)
		}
		if r.hasGen {
			st.nodeGen[n.Name] = r.gen
		}
		for _, k := range r.prepared {
			st.prepared[k] = n.Name // a change's first step whose second was not written
		}
		if len(r.digests) > 0 {
			st.written.putNode(n.Name, r.digests)
		}
	}
	return nil
}

// desiredReaders is how many nodes' desired keys a load reads at once.
const desiredReaders = 8

// desiredNode is what one node's desired keys hold.
type desiredNode struct {
	legacy   bool // a whole-node key of schema 1
	gen      int64
	hasGen   bool
	prepared []string
	digests  map[uint64][16]byte // as digests.of[node]
}

func readDesired(ctx context.Context, c *clientv3.Client, d digests, node string) (desiredNode, error) {
	var out desiredNode
	r, err := c.Get(ctx, nodestate.DesiredPrefix+node)
	if err != nil {
		return out, fmt.Errorf("etcd get %s: %w", nodestate.DesiredPrefix+node, err)
	}
	out.legacy = len(r.Kvs) > 0
	prefix := nodestate.DesiredNode(node)
	_, err = store.ListJSON(ctx, c, prefix, func(obj string, v []byte) error {
		switch {
		case obj == nodestate.GenerationSuffix:
			g, err := strconv.ParseInt(string(v), 10, 64)
			if err != nil {
				return fmt.Errorf("%s: %w", nodestate.GenerationKey(node), err)
			}
			out.gen, out.hasGen = g, true
		case strings.HasPrefix(obj, nodestate.PrepareInfix):
			out.prepared = append(out.prepared, prefix+obj)
		default:
			if out.digests == nil {
				out.digests = map[uint64][16]byte{}
			}
			out.digests[d.keyHash(prefix+obj)] = valueDigest(v)
		}
		return nil
	})
	return out, err
}
