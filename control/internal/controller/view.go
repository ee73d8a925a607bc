package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

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
}

// Snapshot returns the current state.
func (c *Controller) Snapshot(ctx context.Context) (*Snapshot, error) {
	c.mu.Lock()
	if st := c.leader; st != nil {
		defer c.mu.Unlock()
		s := &Snapshot{Leader: true, Topology: st.topo, Services: map[string]*model.ServiceRecord{},
			Status: map[string]nodestate.NodeStatus{}, NodeGen: map[string]int64{}, Generation: st.gen, ignore: c.opt.IgnoreStatus}
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
		return s, nil
	}
	c.mu.Unlock()
	st, err := load(ctx, c.opt, clientv3.Compare(clientv3.Version(store.SchemaKey), ">", 0))
	if err != nil {
		return nil, errorf(KindInternal, "%v", err)
	}
	s := &Snapshot{Topology: st.topo, Services: map[string]*model.ServiceRecord{}, Status: st.status,
		NodeGen: st.nodeGen, Generation: st.gen, down: c.view(st), ignore: c.opt.IgnoreStatus}
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

// NodeUp reports whether node has an agent reporting.
func (s *Snapshot) NodeUp(node string) bool { return !s.down.nodes[node] }

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
			st, up := s.Status[n]
			switch {
			case !up:
				reasons = append(reasons, "node "+n+" down")
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
	for _, rec := range s.Services {
		for _, a := range rec.Allocs {
			if a.Kind == model.KindLabel {
				out[a.Node]++
			}
		}
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
