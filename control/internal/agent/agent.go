// Package agent is e3-agent's logic: keep one e3-vswitchd programmed with
// the node's desired config from etcd, and report the node's status back.
//
// It is level-triggered: every reconcile reads the whole desired config
// and the datapath's whole config_dump and applies the difference, so it
// does not matter which event (or how many) caused it. See docs/agent.md.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/e3fabric/e3fabric/control/internal/dprpc"
	"github.com/e3fabric/e3fabric/control/internal/nodestate"
)

// Report describes one reconcile pass, for logs and tests.
type Report struct {
	Generation int64  // of the desired config it worked toward
	BootID     string // of the datapath it programmed
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
	PollInterval   time.Duration // datapath polled (ports, BFD) this often; default 100ms
	LeaseTTL       time.Duration // status lease; default 5s
	ResyncInterval time.Duration // safety-net reconcile and re-read of desired; default 30s
	RetryMin       time.Duration // first retry after a failed reconcile; default 200ms
	RetryMax       time.Duration // longest retry backoff; default 10s
	EtcdTimeout    time.Duration // one etcd request; default 3s

	Log *slog.Logger
	// OnReconcile, if set, is called after every reconcile pass.
	OnReconcile func(Report)
}

// Agent runs the reconcile and status loops of one node.
type Agent struct {
	cfg        Config
	log        *slog.Logger
	desiredKey string
	statusKey  string

	reconcileNow chan struct{} // cap 1: a reconcile is wanted
	pollNow      chan struct{} // cap 1: poll the datapath now
	statusNow    chan struct{} // cap 1: status changed, write it now
	etcdBack     chan struct{} // cap 1: etcd became reachable again

	mu         sync.Mutex
	desired    *nodestate.Desired // last desired config read; nil: none yet or key absent
	desiredErr error              // the desired value could not be used
	applied    int64              // generation of the last complete, successful reconcile
	reconErr   error              // error of the last reconcile
	dpErr      error              // error of the last datapath poll
	bootID     string
	ports      []nodestate.PortStatus
	bfd        []nodestate.BFDStatus
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
	def(&cfg.PollInterval, 100*time.Millisecond)
	def(&cfg.LeaseTTL, 5*time.Second)
	def(&cfg.ResyncInterval, 30*time.Second)
	def(&cfg.RetryMin, 200*time.Millisecond)
	def(&cfg.RetryMax, 10*time.Second)
	def(&cfg.EtcdTimeout, 3*time.Second)
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	return &Agent{
		cfg:          cfg,
		log:          cfg.Log.With("node", cfg.Node),
		desiredKey:   nodestate.DesiredKey(cfg.Node),
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

// ---- desired config: read, then watch from the revision read -------------

// ErrDesiredInvalid marks a desired config that does not decode or
// validate: nothing is applied, and only a new desired config can help.
var ErrDesiredInvalid = errors.New("desired config refused")

// watchLoop keeps a.desired current. It reads the key, watches it from the
// next revision, and starts over (a fresh read) when the watch fails, when
// etcd comes back after an outage, and every ResyncInterval, so a missed
// event cannot leave it stale for long.
func (a *Agent) watchLoop(ctx context.Context) {
	backoff := newBackoff(a.cfg.RetryMin, a.cfg.RetryMax)
	lastMod := int64(-1) // mod revision of the value last read; 0: no key
	for ctx.Err() == nil {
		rev, mod, err := a.readDesired(ctx)
		if err != nil {
			a.log.Warn("read desired config", "key", a.desiredKey, "err", err)
			sleep(ctx, backoff.next())
			continue
		}
		backoff.reset()
		if mod != lastMod {
			// New to us (first read, or changed while not watched). The
			// periodic re-read of an unchanged key needs no reconcile:
			// reconcileLoop has its own safety-net timer.
			lastMod = mod
			poke(a.reconcileNow)
		}
		lastMod = a.watch(ctx, rev, lastMod)
	}
}

// readDesired reads the key: the store's revision, and the value's mod
// revision (0 when the key does not exist).
func (a *Agent) readDesired(ctx context.Context) (rev, mod int64, err error) {
	rctx, cancel := context.WithTimeout(ctx, a.cfg.EtcdTimeout)
	defer cancel()
	resp, err := a.cfg.Etcd.Get(rctx, a.desiredKey)
	if err != nil {
		return 0, 0, err
	}
	if len(resp.Kvs) == 0 {
		a.setDesired(nil)
	} else {
		a.setDesired(resp.Kvs[0].Value)
		mod = resp.Kvs[0].ModRevision
	}
	return resp.Header.Revision, mod, nil
}

// watch follows the key from rev+1 until the watch ends or a restart is
// due; it returns the mod revision of the last value seen.
func (a *Agent) watch(ctx context.Context, rev, mod int64) int64 {
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	resync := time.NewTimer(a.cfg.ResyncInterval)
	defer resync.Stop()
	wch := a.cfg.Etcd.Watch(wctx, a.desiredKey, clientv3.WithRev(rev+1))
	for {
		select {
		case <-ctx.Done():
			return mod
		case <-resync.C:
			return mod
		case <-a.etcdBack:
			a.log.Info("etcd reachable again: re-reading desired config")
			return mod
		case wr, ok := <-wch:
			if !ok {
				return mod
			}
			if err := wr.Err(); err != nil {
				a.log.Warn("watch desired config", "err", err)
				return mod
			}
			for _, ev := range wr.Events {
				if ev.Type == clientv3.EventTypeDelete {
					a.setDesired(nil)
					mod = 0
				} else {
					a.setDesired(ev.Kv.Value)
					mod = ev.Kv.ModRevision
				}
			}
			poke(a.reconcileNow)
		}
	}
}

// setDesired stores a desired value (nil: the key does not exist). A value
// that does not decode or validate is kept as an error: the datapath keeps
// its state, and the status says why.
func (a *Agent) setDesired(raw []byte) {
	var d *nodestate.Desired
	var err error
	if raw != nil {
		d = new(nodestate.Desired)
		if err = json.Unmarshal(raw, d); err != nil {
			d, err = nil, fmt.Errorf("%w: %s: %w", ErrDesiredInvalid, a.desiredKey, err)
		} else if err = d.Config.Validate(); err != nil {
			d, err = nil, fmt.Errorf("%w: generation %d: %w", ErrDesiredInvalid, d.Generation, err)
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if err != nil {
		a.desiredErr = err // keep the last good desired config for a restarted datapath
		return
	}
	a.desired, a.desiredErr = d, nil
}

// ---- reconcile ----------------------------------------------------------

// reconcileLoop runs a reconcile whenever one is wanted, every
// ResyncInterval, and after a failure with exponential backoff.
func (a *Agent) reconcileLoop(ctx context.Context) {
	backoff := newBackoff(a.cfg.RetryMin, a.cfg.RetryMax)
	resync := time.NewTicker(a.cfg.ResyncInterval)
	defer resync.Stop()
	retry := time.NewTimer(0)
	<-retry.C
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.reconcileNow:
		case <-resync.C:
		case <-retry.C:
		}
		rep := a.reconcile(ctx)
		if ctx.Err() != nil {
			return
		}
		switch {
		case errors.Is(rep.Err, ErrDesiredInvalid):
			// Retrying cannot help; the next desired value triggers a pass.
			a.log.Warn("reconcile skipped", "err", rep.Err)
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

// reconcile makes one pass: dump the datapath, diff against the desired
// config, apply the plan.
func (a *Agent) reconcile(ctx context.Context) Report {
	a.mu.Lock()
	d, derr := a.desired, a.desiredErr
	a.mu.Unlock()
	rep := a.reconcileWith(ctx, d, derr)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.reconErr = rep.Err
	if rep.Err == nil && d != nil {
		a.applied = d.Generation
	}
	return rep
}

// reconcileWith makes the datapath equal to d, the last good desired
// config. When the latest value was refused (derr), d is the one before it:
// a converged datapath then gets no calls, and a restarted one is
// re-programmed rather than left empty; the refusal is still reported.
func (a *Agent) reconcileWith(ctx context.Context, d *nodestate.Desired, derr error) (rep Report) {
	if d == nil {
		// No desired config (not yet read, or the key is absent): leave
		// the datapath as it is rather than empty a forwarding node.
		return Report{Err: derr}
	}
	defer func() {
		if rep.Err == nil {
			rep.Err = derr
		}
	}()
	rep.Generation = d.Generation
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
	rep.Plan = Diff(d.Config, actual)
	if len(rep.Plan) == 0 {
		return rep
	}
	a.log.Info("applying desired config", "generation", d.Generation, "boot_id", info.BootID, "calls", len(rep.Plan))
	for _, op := range rep.Plan {
		a.log.Debug("plan", "op", op.String())
	}
	res, err := Apply(ctx, a.cfg.DP, rep.Plan)
	rep.Calls = res.Calls
	for _, op := range res.Unchanged {
		// Every pass would repeat this call: the dump and the desired
		// config differ in a way that changes nothing in the datapath.
		a.log.Warn("datapath reports no change for a planned call", "op", op.String())
	}
	if err != nil {
		rep.Err = fmt.Errorf("apply generation %d: %w", d.Generation, err)
	}
	return rep
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
			poke(a.reconcileNow)
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
// every StatusInterval, under a lease; on stop it revokes the lease so the
// status disappears at once.
func (a *Agent) statusLoop(ctx context.Context) {
	w := &statusWriter{a: a}
	defer w.revoke()
	tick := time.NewTicker(a.cfg.StatusInterval)
	defer tick.Stop()
	for {
		if err := w.put(ctx, a.status()); err != nil {
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
	n := a.cfg.DP.Connections()
	if n != *conns {
		restarted = *conns != 0 // the first connection is not a restart
		*conns = n
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
	a.ports = make([]nodestate.PortStatus, 0, len(ports))
	for _, p := range ports {
		a.ports = append(a.ports, nodestate.PortStatus{Name: p.Name, LinkUp: bool(p.Link)})
	}
	a.bfd = make([]nodestate.BFDStatus, 0, len(sessions))
	for _, b := range sessions {
		a.bfd = append(a.bfd, nodestate.BFDStatus{ID: b.ID, Label: b.Label, Port: b.Port, State: b.State,
			Diag: b.Diag, Usable: b.Usable, Downs: b.Downs})
	}
	return restarted
}

func (a *Agent) status() nodestate.NodeStatus {
	a.mu.Lock()
	defer a.mu.Unlock()
	st := nodestate.NodeStatus{Node: a.cfg.Node, BootID: a.bootID, AppliedGeneration: a.applied,
		Ports: append([]nodestate.PortStatus{}, a.ports...), BFD: append([]nodestate.BFDStatus(nil), a.bfd...),
		Updated: time.Now().UTC().Truncate(time.Second)}
	switch {
	case a.dpErr != nil:
		st.Error = a.dpErr.Error()
	case a.desiredErr != nil:
		st.Error = a.desiredErr.Error()
	case a.reconErr != nil:
		st.Error = a.reconErr.Error()
	}
	return st
}

// sameStatus compares all but the time stamp.
func sameStatus(x, y nodestate.NodeStatus) bool {
	x.Updated, y.Updated = time.Time{}, time.Time{}
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
