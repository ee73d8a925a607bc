package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"sort"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/e3fabric/e3fabric/control/internal/desired"
	"github.com/e3fabric/e3fabric/control/internal/labels"
	"github.com/e3fabric/e3fabric/control/internal/model"
	"github.com/e3fabric/e3fabric/control/internal/nodestate"
	"github.com/e3fabric/e3fabric/control/internal/store"
	"github.com/e3fabric/e3fabric/control/internal/topology"
)

// Snapshot is a consistent read-only view for the API: the leader's memory,
// or on a follower what etcd holds.
type Snapshot struct {
	Leader     bool
	Topology   *topology.Topology
	Services   map[string]*model.ServiceRecord
	Status     map[string]nodestate.NodeStatus
	NodeGen    map[string]int64
	Generation int64
	down       downView
	ignore     bool
	checks     map[string]*checkState // path checks by key
	// Reserved is each link's reserved bandwidth, Load its smoothed
	// measured load (the leader's only), in Mbps, by link id.
	Reserved map[int]int64
	Load     map[int]float64
	Tenants  map[string]*model.Tenant
	spaces   map[string]labels.Space
}

// Allocs returns rec's allocations with their roles, sorted: a replay of
// its build (allocsOf). The records were replayed when loaded, so it
// fails only on a broken invariant; it then returns none.
func (s *Snapshot) Allocs(rec *model.ServiceRecord) []model.Alloc {
	allocs, err := allocsOf(labels.New(s.spaces), rec)
	if err != nil {
		return nil
	}
	return labels.Sorted(allocs)
}

func copyChecks(st *state) map[string]*checkState {
	out := make(map[string]*checkState, len(st.checks))
	for k, cs := range st.checks {
		out[k] = cs // replaced, never changed in place, but for its dirty flag
	}
	return out
}

// Snapshot returns the current state.
func (c *Controller) Snapshot(ctx context.Context) (*Snapshot, error) {
	c.mu.Lock()
	if st := c.leader; st != nil {
		defer c.mu.Unlock()
		s := &Snapshot{Leader: true, Topology: st.topo, Services: map[string]*model.ServiceRecord{},
			Status: map[string]nodestate.NodeStatus{}, NodeGen: map[string]int64{}, Generation: st.gen, ignore: c.opt.IgnoreStatus,
			spaces: c.opt.Spaces}
		for n, sv := range st.services {
			s.Services[n] = sv.rec // records are replaced, never changed in place
		}
		for n, v := range st.status {
			s.Status[n] = v
		}
		for n, g := range st.nodeGen {
			s.NodeGen[n] = g
		}
		s.down = c.view(st)
		s.checks = copyChecks(st)
		s.Reserved, s.Load, s.Tenants = maps.Clone(st.reserved), map[int]float64{}, maps.Clone(st.tenants)
		for _, l := range st.topo.Links {
			if m, ok := st.meter.Measured(l); ok {
				s.Load[l.ID] = m
			}
		}
		return s, nil
	}
	c.mu.Unlock()
	st, err := load(ctx, c.opt, clientv3.Compare(clientv3.Version(store.SchemaKey), ">", 0))
	if err != nil {
		return nil, errorf(KindInternal, "%v", err)
	}
	s := &Snapshot{Topology: st.topo, Services: map[string]*model.ServiceRecord{}, Status: st.status,
		NodeGen: st.nodeGen, Generation: st.gen, down: c.view(st), ignore: c.opt.IgnoreStatus,
		checks: copyChecks(st), Reserved: st.reserved, Tenants: st.tenants, spaces: c.opt.Spaces}
	for n, sv := range st.services {
		s.Services[n] = sv.rec
	}
	return s, nil
}

// Service returns one service's record.
func (c *Controller) Service(ctx context.Context, name string) (*model.ServiceRecord, error) {
	s, err := c.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	rec, ok := s.Services[name]
	if !ok {
		return nil, errorf(KindNotFound, "service %s not found", name)
	}
	return rec, nil
}

// NodeUp reports whether node forwards, as the OAM of its neighbours and its
// own agent tell (Controller.view).
func (s *Snapshot) NodeUp(node string) bool { return !s.down.nodes[node] }

// AgentUp reports whether node's agent reports.
func (s *Snapshot) AgentUp(node string) bool { _, ok := s.Status[node]; return ok }

// LinkBFD returns each end's BFD session state on link l, as reported.
func (s *Snapshot) LinkBFD(l topology.Link) map[string]string {
	out := map[string]string{}
	for _, e := range []topology.Endpoint{l.A, l.B} {
		for _, b := range s.Status[e.Node].BFD {
			if b.ID != uint32(l.ID) || b.Label != 0 {
				continue
			}
			out[e.Node] = bfdState(b)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// usable reports whether node's datapath finds the path p (node -> to)
// usable, as the check that its protected entries watch says; else, when
// nothing reports on the check, whether p's first link is up.
func (s *Snapshot) usable(node, to string, p model.Path) bool {
	if cs := s.checks[desired.CheckOf(node, to, p).Key()]; cs != nil {
		id, _ := cs.session(node)
		for _, b := range s.Status[node].BFD {
			if b.ID == id {
				return b.Usable
			}
		}
	}
	return !s.down.links[p[0].Link]
}

// Protection tells whether rec's traffic is protected by backups the
// datapaths switch to by themselves, already on one, or not protected.
func (s *Snapshot) Protection(rec *model.ServiceRecord) string {
	r := &rec.Route
	type ingress struct {
		node, to string
		active   model.Path
		backup   bool
	}
	var ins []ingress
	switch {
	case rec.Spec.Type == model.ELine && len(r.Primary) > 0:
		if r.Active != "primary" {
			return model.OnBackup // the controller moved it off its primary
		}
		a, z := rec.Spec.Circuits[0].Node, rec.Spec.Circuits[1].Node
		hasBackup := len(r.Backup) > 0
		ins = append(ins, ingress{a, z, r.Primary, hasBackup}, ingress{z, a, desired.Reverse(r.Primary), hasBackup})
	case rec.Spec.Type == model.ELAN || len(r.Unicast) > 0: // an E-LAN, or an E-Line's legs to a site
		for _, u := range r.Unicast {
			if len(u.Path) > 0 {
				ins = append(ins, ingress{u.From, u.To, u.Path, len(u.Backup) > 0})
			}
		}
	}
	if len(ins) == 0 {
		return ""
	}
	state := model.Protected
	for _, in := range ins {
		if !s.usable(in.node, in.to, in.active) {
			return model.OnBackup
		}
		if !in.backup {
			state = model.Unprotected
		}
	}
	return state
}

// Checks lists the path checks rec's protected entries watch: its primary
// and backup paths (E-Line) or each unicast path and its backup (E-LAN).
func (s *Snapshot) Checks(rec *model.ServiceRecord) []model.CheckView {
	r := &rec.Route
	var ks []desired.Check
	switch {
	case rec.Spec.Type == model.ELine && len(r.Primary) > 0 && len(r.Backup) > 0:
		a, z := rec.Spec.Circuits[0].Node, rec.Spec.Circuits[1].Node
		ks = append(ks, desired.CheckOf(a, z, r.Primary), desired.CheckOf(a, z, r.Backup))
	case rec.Spec.Type == model.ELAN:
		for _, u := range r.Unicast {
			if len(u.Path) > 0 && len(u.Backup) > 0 {
				ks = append(ks, desired.CheckOf(u.From, u.To, u.Path), desired.CheckOf(u.From, u.To, u.Backup))
			}
		}
	}
	var out []model.CheckView
	seen := map[string]bool{}
	for _, k := range ks {
		key := k.Key()
		cs := s.checks[key]
		if seen[key] || cs == nil {
			continue
		}
		seen[key] = true
		v := model.CheckView{Key: key, Path: k.Path.Nodes(k.A), State: map[string]string{}}
		for _, end := range cs.sessions {
			for _, b := range s.Status[end.node].BFD {
				if b.ID == end.id {
					v.State[end.node] = bfdState(b)
				}
			}
		}
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

func bfdState(b nodestate.BFDStatus) string {
	if b.State == "up" && b.Paused {
		return "up (neighbour pausing)"
	}
	if b.State == "up" && !b.Usable {
		return "up (restoring)"
	}
	return b.State
}

// LinkUp reports whether link is usable.
func (s *Snapshot) LinkUp(id int) bool { return !s.down.links[id] }

// ServiceStatus derives a service's health from its route and the agents'
// status: programmed = every node it needs is up and has applied the
// generation holding the service; pending = all is well but some node has
// not applied that generation yet (just created or changed); degraded = it
// carries traffic but on a backup path, without some E-LAN members, or with
// a node down or in error; down = it cannot carry traffic.
func (s *Snapshot) ServiceStatus(rec *model.ServiceRecord) model.Status {
	r := &rec.Route
	members := rec.Spec.Members()
	if len(r.Unreachable) > 0 {
		reach := len(members) - len(r.Unreachable)
		if rec.Spec.Type == model.ELine || reach < 2 {
			return model.Status{State: model.StateDown, Reason: "unreachable: " + strings.Join(r.Unreachable, ", ")}
		}
		return model.Status{State: model.StateDegraded, Reason: "members unreachable: " + strings.Join(r.Unreachable, ", ")}
	}
	var reasons []string
	switch r.Active {
	case "backup":
		reasons = append(reasons, "primary path down, on the backup path")
	case "fallback":
		reasons = append(reasons, "primary and backup paths down, on a fallback path")
	}
	var pending []string
	if !s.ignore {
		need := map[string]bool{}
		for _, m := range members {
			need[m] = true
		}
		for _, p := range activePaths(r) {
			for _, h := range p {
				need[h.From], need[h.To] = true, true
			}
		}
		for _, n := range keys(need) {
			st, reporting := s.Status[n]
			switch {
			case s.down.nodes[n]:
				reasons = append(reasons, "node "+n+" down")
			case !reporting:
				// Its agent is down but its datapath forwards (its
				// neighbours' BFD says so): nothing to say of the service.
			case st.Error != "":
				reasons = append(reasons, "node "+n+": "+st.Error)
			case st.AppliedGeneration < rec.NodeGenerations[n]:
				pending = append(pending, fmt.Sprintf("node %s has applied generation %d, not yet %d", n, st.AppliedGeneration, rec.NodeGenerations[n]))
			}
		}
	}
	if len(reasons) > 0 {
		return model.Status{State: model.StateDegraded, Reason: strings.Join(append(reasons, pending...), "; ")}
	}
	if len(pending) > 0 {
		return model.Status{State: model.StatePending, Reason: strings.Join(pending, "; ")}
	}
	return model.Status{State: model.StateProgrammed}
}

// LabelUse counts the labels allocated on each node.
func (s *Snapshot) LabelUse() map[string]int {
	out := map[string]int{}
	count := func(allocs []model.Alloc) {
		for _, a := range allocs {
			if a.Kind == model.KindLabel {
				out[a.Node]++
			}
		}
	}
	for _, rec := range s.Services { // records hold values (keepValues)
		for _, r := range rec.Values {
			if r.Kind == model.KindLabel {
				out[r.Node] += len(r.Values)
			}
		}
	}
	for _, cs := range s.checks {
		count(cs.rec.Allocs)
	}
	return out
}

// ServiceNames returns the services' names, sorted.
func (s *Snapshot) ServiceNames() []string {
	out := make([]string, 0, len(s.Services))
	for n := range s.Services {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// LeaderURL returns the leader's advertised API URL ("" if none).
func LeaderURL(ctx context.Context, c *clientv3.Client) (string, error) {
	r, err := c.Get(ctx, store.ElectionPrefix+"/", clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortAscend), clientv3.WithLimit(1))
	if err != nil {
		return "", fmt.Errorf("etcd: %w", err)
	}
	if len(r.Kvs) == 0 {
		return "", nil
	}
	return string(r.Kvs[0].Value), nil
}

// topoEqual compares as stored (JSON), so nil and empty lists are equal.
func topoEqual(a, b *topology.Topology) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func cloneTopo(t *topology.Topology) *topology.Topology {
	var out topology.Topology
	b, _ := json.Marshal(t)
	_ = json.Unmarshal(b, &out)
	return &out
}

// Etcd returns the controller's etcd client.
func (c *Controller) Etcd() *clientv3.Client { return c.opt.Etcd }

// PortStats is a node's port's traffic as its agent last reported it, or nil.
func (s *Snapshot) PortStats(node, port string) *nodestate.PortStats {
	for _, p := range s.Status[node].Ports {
		if p.Name == port {
			return p.Stats
		}
	}
	return nil
}
