package controller

import (
	"encoding/json"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/e3fabric/e3fabric/control/internal/desired"
	"github.com/e3fabric/e3fabric/control/internal/labels"
	"github.com/e3fabric/e3fabric/control/internal/model"
	"github.com/e3fabric/e3fabric/control/internal/nodestate"
	"github.com/e3fabric/e3fabric/control/internal/store"
	"github.com/e3fabric/e3fabric/control/internal/topology"
)

// checkState is one path check (desired.Check): its record, its fragments,
// and its BFD session id at each end. It lives while some service's
// protected entry watches it (state.checkRefs).
type checkState struct {
	key   string // desired.Check's Key
	rec   *model.CheckRecord
	nodes []string // where it has a fragment
	// Its fragments until they are written (dropFrags): etcd holds them,
	// and a change that needs them again rebuilds the check.
	frags    map[string]*desired.Fragment
	sessions []checkSession // one per end
	dirty    bool           // created on load: its record is to be written
}

// checkSession is a check's BFD session at one end. A check has two, so a
// list beats a map: a loading leader looks one up per protected entry.
type checkSession struct {
	node string
	id   uint32
}

// session returns the id of the check's session at node.
func (cs *checkState) session(node string) (uint32, bool) {
	for _, s := range cs.sessions {
		if s.node == node {
			return s.id, true
		}
	}
	return 0, false
}

func newCheckState(rec *model.CheckRecord, frags map[string]*desired.Fragment) *checkState {
	cs := &checkState{key: desired.Check{A: rec.A, Z: rec.Z, Path: rec.Path}.Key(), rec: rec, nodes: keys(frags),
		frags: frags}
	for _, a := range rec.Allocs {
		if a.Kind == model.KindSession {
			cs.sessions = append(cs.sessions, checkSession{a.Node, a.Value})
		}
	}
	return cs
}

// buildCheck allocates k's identifiers (keeping those of old allocs) and
// returns its state; the assigner is for the caller to commit or abort.
func buildCheck(st *state, k desired.Check, old []model.Alloc, topo *topology.Topology) (*checkState, *labels.Assigner, error) {
	as := st.alloc.NewAssignerFor(old, k.Roles())
	frags, err := desired.BuildCheck(k, as, topo.Fabric.BFD)
	if err != nil {
		as.Abort()
		return nil, nil, err
	}
	rec := &model.CheckRecord{A: k.A, Z: k.Z, Path: k.Path, Allocs: as.Allocs()}
	return newCheckState(rec, frags), as, nil
}

// watcher resolves the checks a service's protected entries watch: a check
// the fabric has, or one this change creates (ch nil: while loading, where
// a missing check is created at once and written by the next commit). The
// keys used are appended to used.
func (st *state) watcher(ch *change, topo *topology.Topology, used *[]string) desired.Watcher {
	return func(node, from, to string, p model.Path) (uint32, error) {
		// Most checks exist: looked up by their key's bytes, which
		// allocates nothing.
		var buf [128]byte
		kb := desired.AppendCheckKey(buf[:0], from, to, p)
		cs := st.checks[string(kb)]
		if cs == nil && ch != nil {
			cs = ch.newChecks[string(kb)]
		}
		if cs == nil {
			var as *labels.Assigner
			var err error
			if cs, as, err = buildCheck(st, desired.CheckOf(from, to, p), nil, topo); err != nil {
				return 0, err
			}
			if ch != nil {
				ch.assigners = append(ch.assigners, as)
				ch.newChecks[cs.key] = cs
			} else {
				as.Commit()
				cs.dirty = true
				st.checks[cs.key] = cs
			}
		}
		*used = append(*used, cs.key)
		id, ok := cs.session(node)
		if !ok {
			return 0, fmt.Errorf("check %s: no session at %s", cs.key, node)
		}
		return id, nil
	}
}

// dropFrags lets go of cs's fragments once written, unless the first
// change after a load is still to write them (dirty).
func (cs *checkState) dropFrags() {
	if !cs.dirty {
		cs.frags = nil
	}
}

func (st *state) removeCheck(key string) {
	cs := st.checks[key]
	if cs == nil {
		return
	}
	for _, a := range cs.rec.Allocs {
		st.alloc.Free(a.Node, a.Kind, a.Value)
	}
	delete(st.checks, key)
}

// checkPlan is what a commit does to the checks: new counts of users, the
// checks it writes and the ones it deletes, and every check's fragments
// as the committed state will hold them.
type checkPlan struct {
	refs  map[string]int
	put   map[string]*checkState
	del   map[string]bool
	frags map[string]*checkState // rebuilt for a new topology's timers
}

// planChecks counts the users ch adds and removes and decides which checks
// come and go. A topology change rebuilds every check (timers may change).
func (c *Controller) planChecks(st *state, ch *change, topo *topology.Topology) (*checkPlan, error) {
	cp := &checkPlan{refs: map[string]int{}, put: map[string]*checkState{}, del: map[string]bool{},
		frags: map[string]*checkState{}}
	touch := func(keys []string, d int) {
		for _, k := range keys {
			if _, ok := cp.refs[k]; !ok {
				cp.refs[k] = st.checkRefs[k]
			}
			cp.refs[k] += d
		}
	}
	for name := range ch.del {
		touch(st.services[name].checks, -1)
	}
	for name, s := range ch.put {
		if old := st.services[name]; old != nil {
			touch(old.checks, -1)
		}
		touch(s.checks, +1)
	}
	if st.loadedChecks {
		// The first change after a load also settles what the load left:
		// checks no service uses, and checks it made (dirty). Later
		// changes only look at the checks their services touch.
		for k := range st.checks {
			if _, ok := cp.refs[k]; !ok && st.checkRefs[k] == 0 {
				cp.refs[k] = 0
			}
		}
	}
	for k, n := range cp.refs {
		switch {
		case n <= 0 && st.checks[k] != nil:
			cp.del[k] = true
		case n > 0 && ch.newChecks[k] != nil:
			cp.put[k] = ch.newChecks[k]
		}
	}
	if st.loadedChecks {
		for k, cs := range st.checks {
			if cs.dirty && !cp.del[k] {
				cp.put[k] = cs
			}
		}
	}
	if ch.topo != nil {
		for k, cs := range st.checks {
			if cp.del[k] {
				continue
			}
			r := cs.rec
			nc, as, err := buildCheck(st, desired.Check{A: r.A, Z: r.Z, Path: r.Path}, r.Allocs, topo)
			if err != nil {
				return nil, err
			}
			ch.assigners = append(ch.assigners, as)
			nc.dirty = cs.dirty
			cp.frags[k] = nc
		}
	}
	return cp, nil
}

// writes sets the desired keys of the checks that change: deleted ones,
// new ones, and those a topology change rebuilt.
func (cp *checkPlan) writes(st *state, w *keyWrites) {
	for k := range cp.del {
		for _, n := range st.checks[k].nodes {
			w.set(n, nodestate.CheckKey(n, k), nil)
		}
	}
	for _, m := range []map[string]*checkState{cp.frags, cp.put} {
		for k, cs := range m {
			if cp.del[k] {
				continue
			}
			for n, f := range cs.frags {
				w.set(n, nodestate.CheckKey(n, k), f)
			}
		}
	}
}

// ops returns the etcd operations that write and delete check records.
func (cp *checkPlan) ops() ([]clientv3.Op, error) {
	var ops []clientv3.Op
	for k, cs := range cp.put {
		b, err := json.Marshal(cs.rec)
		if err != nil {
			return nil, err
		}
		ops = append(ops, clientv3.OpPut(store.CheckKey(k), string(b)))
	}
	for k := range cp.del {
		ops = append(ops, clientv3.OpDelete(store.CheckKey(k)))
	}
	return ops, nil
}

// apply makes the committed plan the state.
func (cp *checkPlan) apply(st *state) {
	st.loadedChecks = false
	for k := range cp.del {
		st.removeCheck(k)
		delete(st.checkRefs, k)
	}
	for k, cs := range cp.frags {
		if st.checks[k] != nil {
			st.checks[k] = cs
		}
		cs.dropFrags()
	}
	for k, cs := range cp.put {
		cs.dirty = false
		if st.checks[k] == nil {
			st.checks[k] = cs
		}
		cs.dropFrags()
	}
	for k, n := range cp.refs {
		if n > 0 {
			st.checkRefs[k] = n
		}
	}
}

// loadCheck rebuilds a stored check's fragments; its identifiers are
// reserved already.
func loadCheck(st *state, key string, rec *model.CheckRecord) error {
	cs, as, err := buildCheck(st, desired.Check{A: rec.A, Z: rec.Z, Path: rec.Path}, rec.Allocs, st.topo)
	if err != nil {
		return fmt.Errorf("check %s: %w", key, err)
	}
	as.Commit()
	st.checks[key] = cs
	return nil
}
