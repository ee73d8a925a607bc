// Package agent is e3-agent's logic: keep one e3-vswitchd programmed with
// the node's desired config from etcd, and report the node's status back.
//
// The node's desired state is a set of etcd keys, one per fragment
// (nodestate.DesiredNode). The agent follows them with a watch and
// reconciles per key: a changed key is compared with what the agent knows
// the datapath holds (its realised state) and only the difference is
// applied. It stays level-triggered: a pass compares states, not events, so
// it does not matter which event (or how many) caused it. A full pass
// (config_dump and a diff of everything) runs when the datapath restarts
// or reconnects, when etcd comes back, after a failed pass, and every
// ResyncInterval. See docs/agent.md.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/e3fabric/e3fabric/control/internal/dpconfig"
	"github.com/e3fabric/e3fabric/control/internal/dprpc"
	"github.com/e3fabric/e3fabric/control/internal/nodestate"
)

// Report describes one reconcile pass, for logs and tests.
type Report struct {
	Generation int64  // of the desired config it worked toward
	Full       bool   // a full pass: the datapath dumped and diffed whole
	BootID     string // of the datapath it programmed (full passes)
	Plan       []Op   // what differed
	Calls      int    // datapath calls made to apply the plan
	Err        error
}

// Config configures an Agent. Node, Etcd and DP are required.
type Config struct {
	Node string
	Etcd *clientv3.Client
	DP   *dprpc.Client

	StatusInterval time.Duration // status written at least this often; default 2s
	// StatusMinInterval spaces the status writes: changes that come
	// faster are coalesced into one write. Default 250ms (4 a second).
	StatusMinInterval time.Duration
	PollInterval      time.Duration // datapath polled (ports, BFD) this often; default 100ms
	LeaseTTL          time.Duration // status lease; default 5s
	ResyncInterval    time.Duration // re-read of the desired keys; default 30s
	// FullPassInterval is the anti-entropy pass: dump the datapath and diff
	// it whole. It finds what changed behind the agent's back (e3-dpctl);
	// everything else is incremental, so it need not be frequent, and on a
	// spine of 300,000 labels it is seconds of CPU. Default 5 min.
	FullPassInterval time.Duration
	RetryMin         time.Duration // first retry after a failed reconcile; default 200ms
	RetryMax         time.Duration // longest retry backoff; default 10s
	EtcdTimeout      time.Duration // one etcd request; default 3s

	Log *slog.Logger
	// OnReconcile, if set, is called after every reconcile pass.
	OnReconcile func(Report)
}

// Agent runs the reconcile and status loops of one node.
type Agent struct {
	cfg       Config
	log       *slog.Logger
	prefix    string // the node's desired keys
	statusKey string

	reconcileNow chan struct{} // cap 1: a reconcile is wanted
	pollNow      chan struct{} // cap 1: poll the datapath now
	statusNow    chan struct{} // cap 1: status changed, write it now
	etcdBack     chan struct{} // cap 1: etcd became reachable again

	mu       sync.Mutex
	keys     *desiredKeys    // the node's desired keys, as last read
	dirty    map[string]bool // keys changed since the last pass took them
	full     bool            // the next pass is a full one
	applied  int64           // generation of the last complete, successful reconcile
	reconErr error           // error of the last reconcile
	dpErr    error           // error of the last datapath poll
	bootID   string
	macTable int64
	ports    []nodestate.PortStatus
	rates    portRates // the ports' counters a second ago, for their rates
	svcRates serviceRates
	svcBPS   map[string]float64 // the busiest services' ingress rates
	bfd      []nodestate.BFDStatus
	oam      oamLog // PW OAM: requests sent, the datapath's log (oam.go)

	// Owned by the reconcile loop: what the datapath holds as of the last
	// successful pass (nil: unknown), and the fragments that pass realised.
	realised  *objects
	realFrags map[string]*dpconfig.Fragment
}

// New checks cfg and fills its defaults.
func New(cfg Config) (*Agent, error) {
	if cfg.Node == "" || cfg.Etcd == nil || cfg.DP == nil {
		return nil, errors.New("agent: node, etcd client and datapath client are required")
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&cfg.StatusInterval, 2*time.Second)
	def(&cfg.StatusMinInterval, 250*time.Millisecond)
	def(&cfg.PollInterval, 100*time.Millisecond)
	def(&cfg.LeaseTTL, 5*time.Second)
	def(&cfg.ResyncInterval, 30*time.Second)
	def(&cfg.FullPassInterval, 5*time.Minute)
	def(&cfg.RetryMin, 200*time.Millisecond)
	def(&cfg.RetryMax, 10*time.Second)
	def(&cfg.EtcdTimeout, 3*time.Second)
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	return &Agent{
		cfg:          cfg,
		log:          cfg.Log.With("node", cfg.Node),
		prefix:       nodestate.DesiredNode(cfg.Node),
		keys:         newDesiredKeys(),
		dirty:        map[string]bool{},
		statusKey:    nodestate.StatusKey(cfg.Node),
		reconcileNow: make(chan struct{}, 1),
		pollNow:      make(chan struct{}, 1),
		statusNow:    make(chan struct{}, 1),
		etcdBack:     make(chan struct{}, 1),
	}, nil
}

// Run runs until ctx is cancelled, then revokes the status lease so the
// status key disappears at once. It never changes the datapath except to
// make it match a desired config it read, so when etcd is unreachable the
// datapath keeps what it has (non-stop forwarding).
func (a *Agent) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	for _, loop := range []func(context.Context){a.watchLoop, a.reconcileLoop, a.pollLoop, a.statusLoop} {
		wg.Add(1)
		go func() { defer wg.Done(); loop(ctx) }()
	}
	wg.Wait()
	return nil
}

func poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// ---- desired keys: read, then watch from the revision read ----------------

// watchLoop keeps a.keys current. It reads the node's keys, watches them
// from the next revision, and starts over (a fresh read) when the watch
// fails, when etcd comes back after an outage, and every ResyncInterval, so
// a missed event cannot leave them stale for long.
func (a *Agent) watchLoop(ctx context.Context) {
	backoff := newBackoff(a.cfg.RetryMin, a.cfg.RetryMax)
	for ctx.Err() == nil {
		rev, err := a.readDesired(ctx)
		if err != nil {
			a.log.Warn("read desired keys", "prefix", a.prefix, "err", err)
			sleep(ctx, backoff.next())
			continue
		}
		backoff.reset()
		a.watch(ctx, rev)
	}
}

// readDesired reads every key of the node, in pages at one revision, and
// takes in those that changed since they were last seen. It returns the
// revision read.
func (a *Agent) readDesired(ctx context.Context) (int64, error) {
	const page = 1000
	seen := map[string]bool{}
	var rev int64
	key, end := a.prefix, clientv3.GetPrefixRangeEnd(a.prefix)
	for {
		rctx, cancel := context.WithTimeout(ctx, a.cfg.EtcdTimeout)
		opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(page)}
		if rev != 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		resp, err := a.cfg.Etcd.Get(rctx, key, opts...)
		cancel()
		if err != nil {
			return 0, err
		}
		if rev == 0 {
			rev = resp.Header.Revision
		}
		a.mu.Lock()
		for _, kv := range resp.Kvs {
			k := strings.TrimPrefix(string(kv.Key), a.prefix)
			seen[k] = true
			if a.keys.mods[k] != kv.ModRevision || isOAMKey(k) {
				a.setKey(k, kv.Value, kv.ModRevision)
			}
		}
		a.mu.Unlock()
		if !resp.More || len(resp.Kvs) == 0 {
			break
		}
		key = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
	a.mu.Lock()
	for k := range a.keys.mods {
		if !seen[k] {
			a.deleteKey(k)
		}
	}
	changed := len(a.dirty) > 0
	a.mu.Unlock()
	if changed {
		poke(a.reconcileNow)
	}
	return rev, nil
}

// watch follows the node's keys from rev+1 until the watch ends or a
// re-read is due.
func (a *Agent) watch(ctx context.Context, rev int64) {
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	resync := time.NewTimer(a.cfg.ResyncInterval)
	defer resync.Stop()
	wch := a.cfg.Etcd.Watch(wctx, a.prefix, clientv3.WithPrefix(), clientv3.WithRev(rev+1))
	for {
		select {
		case <-ctx.Done():
			return
		case <-resync.C:
			return
		case <-a.etcdBack:
			// The re-read takes in the keys that changed meanwhile; the
			// datapath is as the agent left it unless its boot id moved
			// (pollLoop), so no dump is needed.
			a.log.Info("etcd reachable again: re-reading desired keys")
			return
		case wr, ok := <-wch:
			if !ok {
				return
			}
			if err := wr.Err(); err != nil {
				a.log.Warn("watch desired keys", "err", err)
				return
			}
			// A transaction's events arrive in one response: the pass
			// that follows sees the change whole.
			a.mu.Lock()
			for _, ev := range wr.Events {
				k := strings.TrimPrefix(string(ev.Kv.Key), a.prefix)
				if ev.Type == clientv3.EventTypeDelete {
					a.deleteKey(k)
				} else {
					a.setKey(k, ev.Kv.Value, ev.Kv.ModRevision)
				}
			}
			a.mu.Unlock()
			poke(a.reconcileNow)
		}
	}
}

// setKey takes in a key's new value; a.mu held.
func (a *Agent) setKey(k string, v []byte, mod int64) {
	if isOAMKey(k) {
		a.oamRequest(k, v, mod)
		return
	}
	if a.keys.set(k, v, mod) {
		a.dirty[k] = true
	}
}

// deleteKey takes in a key's deletion; a.mu held.
func (a *Agent) deleteKey(k string) {
	if isOAMKey(k) {
		a.oamForget(k)
		return
	}
	if a.keys.remove(k) {
		a.dirty[k] = true
	}
}

// Resync makes the agent pass over everything now: dump the datapath, diff
// it with the whole desired state and apply the difference (e3-agent does
// it on SIGHUP).
func (a *Agent) Resync() { a.requestFull() }

// requestFull makes the next pass a full one.
func (a *Agent) requestFull() {
	a.mu.Lock()
	a.full = true
	a.mu.Unlock()
	poke(a.reconcileNow)
}

// ---- reconcile ----------------------------------------------------------

// reconcileLoop runs a pass whenever one is wanted, a full pass every
// FullPassInterval, and after a failure a full pass with exponential backoff.
func (a *Agent) reconcileLoop(ctx context.Context) {
	backoff := newBackoff(a.cfg.RetryMin, a.cfg.RetryMax)
	resync := time.NewTicker(a.cfg.FullPassInterval)
	defer resync.Stop()
	retry := time.NewTimer(0)
	<-retry.C
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.reconcileNow:
		case <-resync.C:
			a.requestFull()
		case <-retry.C:
		}
		rep := a.reconcile(ctx)
		if ctx.Err() != nil {
			return
		}
		switch {
		case errors.Is(rep.Err, ErrDesiredInvalid):
			// Retrying cannot help; the next desired value triggers a pass.
			a.log.Warn("desired state refused", "err", rep.Err)
			retry.Stop()
		case rep.Err != nil:
			d := backoff.next()
			a.log.Warn("reconcile failed", "generation", rep.Generation, "retry_in", d, "err", rep.Err)
			retry.Reset(d)
		default:
			backoff.reset()
			retry.Stop()
		}
		if a.cfg.OnReconcile != nil {
			a.cfg.OnReconcile(rep)
		}
		// Poll before the status is written, so it carries the ports the
		// reconcile added along with the generation it applied.
		poke(a.pollNow)
	}
}

// reconcile makes one pass: a full one when asked for or when the realised
// state is unknown, else over the keys changed since the last pass.
func (a *Agent) reconcile(ctx context.Context) Report {
	a.mu.Lock()
	gen, derr := a.keys.gen, a.keys.err()
	if gen == 0 {
		// No desired state (not yet read, or the node has none): leave the
		// datapath as it is rather than empty a forwarding node.
		a.mu.Unlock()
		return Report{Err: derr}
	}
	full := a.full || a.realised == nil
	frags := map[string]*dpconfig.Fragment{}
	if full {
		maps.Copy(frags, a.keys.frags)
	} else {
		for k := range a.dirty {
			frags[k] = a.keys.frags[k] // nil: deleted
		}
	}
	a.full, a.dirty = false, map[string]bool{}
	a.mu.Unlock()

	var rep Report
	if full {
		rep = a.fullPass(ctx, frags)
	} else {
		rep = a.incremental(ctx, frags)
	}
	rep.Generation, rep.Full = gen, full
	a.mu.Lock()
	defer a.mu.Unlock()
	if rep.Err != nil {
		a.realised, a.full = nil, true // what the datapath holds is unknown now
	}
	if rep.Err == nil {
		rep.Err = derr
	}
	a.reconErr = rep.Err
	if rep.Err == nil {
		a.applied = gen
	}
	return rep
}

// fullPass makes the datapath equal to the whole desired state: dump,
// diff, apply. A desired state that does not validate is reported, and
// applied all the same: the datapath refuses what is wrong in it, call by
// call, and everything else converges.
func (a *Agent) fullPass(ctx context.Context, frags map[string]*dpconfig.Fragment) (rep Report) {
	want := dpconfig.Assemble(slices.Collect(maps.Values(frags)))
	info, err := a.cfg.DP.SystemInfo(ctx)
	if err != nil {
		rep.Err = fmt.Errorf("datapath: %w", err)
		return rep
	}
	rep.BootID = info.BootID
	actual, err := a.cfg.DP.ConfigDump(ctx)
	if err != nil {
		rep.Err = fmt.Errorf("datapath: %w", err)
		return rep
	}
	rep.Plan = Diff(want, actual)
	if rep.Err = a.apply(ctx, rep.Plan, &rep); rep.Err != nil {
		if verr := want.Validate(); verr != nil {
			rep.Err = fmt.Errorf("%w: %w", ErrDesiredInvalid, verr)
		}
		return rep
	}
	a.realised = newObjects()
	a.realised.add(want.Fragment())
	a.realFrags = frags
	return rep
}

// incremental applies the keys that changed: their objects before and
// after are the only ones compared, against the realised state.
func (a *Agent) incremental(ctx context.Context, frags map[string]*dpconfig.Fragment) (rep Report) {
	touched, next := newObjects(), newObjects()
	for k, f := range frags {
		touched.add(a.realFrags[k])
		touched.add(f)
		next.add(f)
	}
	have := a.realised.pick(touched)
	want := next.pick(touched)
	if next.settings == nil {
		want.Settings = have.Settings
	}
	rep.Plan = Diff(want, have)
	if rep.Err = a.apply(ctx, rep.Plan, &rep); rep.Err != nil {
		return rep
	}
	a.realised.remove(touched)
	a.realised.add(want.Fragment())
	for k, f := range frags {
		if f == nil {
			delete(a.realFrags, k)
		} else {
			a.realFrags[k] = f
		}
	}
	return rep
}

// apply runs a plan and counts its calls into rep.
func (a *Agent) apply(ctx context.Context, plan []Op, rep *Report) error {
	if len(plan) == 0 {
		return nil
	}
	a.log.Info("applying desired state", "calls", len(plan), "boot_id", rep.BootID)
	for _, op := range plan {
		a.log.Debug("plan", "op", op.String())
	}
	res, err := Apply(ctx, a.cfg.DP, plan)
	rep.Calls = res.Calls
	for _, op := range res.Unchanged {
		// Every pass would repeat this call: the realised state and the
		// desired one differ in a way that changes nothing in the datapath.
		a.log.Warn("datapath reports no change for a planned call", "op", op.String())
	}
	if err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	return nil
}

// ---- status --------------------------------------------------------------

// pollLoop polls the datapath (boot id, link states) four times per
// StatusInterval and after each reconcile. It asks for a reconcile when
// the datapath restarted and for a status write when something changed.
// It is apart from statusLoop so that an etcd outage, which blocks writes,
// does not delay noticing a restarted datapath.
func (a *Agent) pollLoop(ctx context.Context) {
	// Often: BFD states reach the controller through here (global repair).
	tick := time.NewTicker(a.cfg.PollInterval)
	defer tick.Stop()
	var conns uint64
	last := a.status()
	for {
		if a.pollDatapath(ctx, &conns) {
			a.requestFull()
		}
		if st := a.status(); !sameStatus(st, last) {
			last = st
			poke(a.statusNow)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-a.pollNow:
		}
	}
}

// statusLoop writes the status when it changed (a poke on statusNow) and
// every StatusInterval, under a lease; never twice within
// StatusMinInterval but for a newly applied generation. On stop it revokes
// the lease so the status disappears at once.
func (a *Agent) statusLoop(ctx context.Context) {
	w := &statusWriter{a: a}
	defer w.revoke()
	tick := time.NewTicker(a.cfg.StatusInterval)
	defer tick.Stop()
	for {
		next := time.Now().Add(a.cfg.StatusMinInterval)
		st := a.status()
		if err := w.put(ctx, st); err != nil {
			if ctx.Err() != nil {
				return
			}
			a.log.Warn("write status", "key", a.statusKey, "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-a.statusNow:
		case <-w.lost():
			if ctx.Err() != nil {
				return // the keepalive ended because we are stopping: revoke
			}
			// The lease expired (etcd was unreachable for a TTL): write
			// at once under a new one.
			a.log.Warn("status lease lost; taking a new one")
			w.drop()
		}
		// At most one write per StatusMinInterval: a burst of changes
		// (a flood of OAM events, flapping links) is one write. A newly
		// applied generation goes at once: the controller's two-step
		// changes wait for it (and generations come no faster than the
		// controller commits).
		wait := time.NewTimer(time.Until(next))
	spacing:
		for a.appliedGeneration() == st.AppliedGeneration {
			select {
			case <-ctx.Done():
				wait.Stop()
				return
			case <-wait.C:
				break spacing
			case <-a.statusNow: // written when the spacing ends, or now if a generation was applied
			}
		}
		wait.Stop()
	}
}

// pollDatapath refreshes boot id and ports; it returns true when the
// datapath restarted or the socket was reconnected since the last poll.
func (a *Agent) pollDatapath(ctx context.Context, conns *uint64) (restarted bool) {
	info, err := a.cfg.DP.SystemInfo(ctx)
	var ports []dprpc.PortInfo
	var sessions []dprpc.BFDInfo
	if err == nil {
		ports, err = a.cfg.DP.PortList(ctx)
	}
	if err == nil {
		sessions, err = a.cfg.DP.BFDList(ctx)
	}
	var svcs []dprpc.ServiceInfo
	svcNow := time.Now()
	readSvcs := err == nil && a.svcRates.due(svcNow)
	if readSvcs {
		svcs, err = a.cfg.DP.ServiceList(ctx)
	}
	n := a.cfg.DP.Connections()
	if n != *conns {
		restarted = *conns != 0 // the first connection is not a restart
		*conns = n
	}
	if err == nil {
		// The PW OAM log only feeds ping and trace: a datapath that cannot
		// give it is no datapath error.
		if _, oerr := a.pollOAM(ctx, restarted); oerr != nil {
			a.log.Debug("pw oam log", "err", oerr)
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if err != nil {
		a.dpErr = fmt.Errorf("datapath: %w", err)
		a.ports, a.bfd = nil, nil
		return restarted
	}
	a.dpErr = nil
	if info.BootID != a.bootID {
		if a.bootID != "" {
			a.log.Info("datapath restarted", "old_boot_id", a.bootID, "boot_id", info.BootID)
			restarted = true
		}
		a.bootID = info.BootID
	}
	a.macTable = info.Limits["macs"]
	if readSvcs {
		a.svcBPS = a.svcRates.update(svcs, svcNow)
	}
	a.ports = make([]nodestate.PortStatus, 0, len(ports))
	now := time.Now()
	for _, p := range ports {
		a.ports = append(a.ports, nodestate.PortStatus{Name: p.Name, LinkUp: bool(p.Link),
			Stats: a.rates.update(p.Name, p.Stats, now)})
	}
	a.bfd = make([]nodestate.BFDStatus, 0, len(sessions))
	for _, b := range sessions {
		a.bfd = append(a.bfd, nodestate.BFDStatus{ID: b.ID, Label: b.Label, Port: b.Port, State: b.State,
			Diag: b.Diag, Usable: b.Usable, Paused: b.Paused, Downs: b.Downs})
	}
	return restarted
}

func (a *Agent) appliedGeneration() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.applied
}

func (a *Agent) status() nodestate.NodeStatus {
	a.mu.Lock()
	defer a.mu.Unlock()
	st := nodestate.NodeStatus{Node: a.cfg.Node, BootID: a.bootID, AppliedGeneration: a.applied, MACTable: a.macTable,
		Ports: append([]nodestate.PortStatus{}, a.ports...), BFD: append([]nodestate.BFDStatus(nil), a.bfd...),
		OAM:      append([]nodestate.OAMEvent(nil), a.oam.events...),
		Services: maps.Clone(a.svcBPS),
		Updated:  time.Now().UTC().Truncate(time.Millisecond)}
	switch {
	case a.dpErr != nil:
		st.Error = a.dpErr.Error()
	case a.keys.err() != nil:
		st.Error = a.keys.err().Error()
	case a.reconErr != nil:
		st.Error = a.reconErr.Error()
	}
	return st
}

// sameStatus compares all but the time stamp and the traffic.
func sameStatus(x, y nodestate.NodeStatus) bool {
	x.Updated, y.Updated = time.Time{}, time.Time{}
	x.Services, y.Services = nil, nil
	x.Ports, y.Ports = nodestate.WithoutStats(x.Ports), nodestate.WithoutStats(y.Ports)
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xb) == string(yb)
}

// statusWriter writes the status key under a lease it keeps alive, and
// takes a new lease when the old one is lost.
type statusWriter struct {
	a        *Agent
	lease    clientv3.LeaseID   // 0: none
	lostCh   chan struct{}      // closed when the lease's keepalive ends
	kaCancel context.CancelFunc // stops the keepalive
	granted  bool               // a lease was granted before
}

// lost yields when the current lease's keepalive has ended (the lease
// expired, e.g. etcd was away for a TTL); nil, never ready, without a lease.
func (w *statusWriter) lost() <-chan struct{} { return w.lostCh }

func (w *statusWriter) put(ctx context.Context, st nodestate.NodeStatus) error {
	a := w.a
	if w.lease == 0 {
		if err := w.grant(ctx); err != nil {
			return err
		}
	}
	val, err := json.Marshal(st)
	if err != nil {
		return err
	}
	pctx, cancel := context.WithTimeout(ctx, a.cfg.EtcdTimeout)
	defer cancel()
	if _, err := a.cfg.Etcd.Put(pctx, a.statusKey, string(val), clientv3.WithLease(w.lease)); err != nil {
		if errors.Is(err, rpctypes.ErrLeaseNotFound) {
			// It expired while etcd was away: the next write takes a
			// new one.
			w.drop()
		}
		return err
	}
	return nil
}

func (w *statusWriter) grant(ctx context.Context) error {
	a := w.a
	gctx, cancel := context.WithTimeout(ctx, a.cfg.EtcdTimeout)
	defer cancel()
	ttl := int64(a.cfg.LeaseTTL / time.Second)
	if ttl < 1 {
		ttl = 1
	}
	g, err := a.cfg.Etcd.Grant(gctx, ttl)
	if err != nil {
		return fmt.Errorf("grant lease: %w", err)
	}
	kctx, kcancel := context.WithCancel(ctx)
	ka, err := a.cfg.Etcd.KeepAlive(kctx, g.ID)
	if err != nil {
		kcancel()
		return fmt.Errorf("keep lease alive: %w", err)
	}
	lost := make(chan struct{})
	go func() {
		for range ka { // drain the answers so the client never blocks on them
		}
		close(lost)
	}()
	w.lease, w.lostCh, w.kaCancel = g.ID, lost, kcancel
	if w.granted {
		// A new lease after a lost one means etcd is back after an outage:
		// re-read the desired config now rather than trust the watch to
		// have caught up.
		poke(a.etcdBack)
		poke(a.reconcileNow)
	}
	w.granted = true
	return nil
}

func (w *statusWriter) drop() {
	if w.kaCancel != nil {
		w.kaCancel()
	}
	w.lease, w.lostCh, w.kaCancel = 0, nil, nil
}

// revoke deletes the status now (the lease's key goes with it) on stop.
func (w *statusWriter) revoke() {
	if w.lease == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), w.a.cfg.EtcdTimeout)
	defer cancel()
	if _, err := w.a.cfg.Etcd.Revoke(ctx, w.lease); err != nil {
		w.a.log.Warn("revoke status lease", "err", err)
	}
	w.drop()
}
