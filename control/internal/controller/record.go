package controller

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/e3fabric/e3fabric/control/internal/labels"
	"github.com/e3fabric/e3fabric/control/internal/model"
)

// storedRecord is a service record read from etcd: the stored form
// (model.StoredService), or the form of schema 1, which spelled out the
// route's hops and every allocation with its role.
type storedRecord struct {
	rec    *model.ServiceRecord
	values model.AllocValues // stored form: values to replay
	roles  string            // stored form: digest of their roles
}

// decodeRecord reads a record in either form: the stored one (with
// "values"), tried first, or schema 1's.
func decodeRecord(b []byte, links model.Links) (*storedRecord, error) {
	var s model.StoredService
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		var probe struct {
			Values json.RawMessage `json:"values"`
		}
		if json.Unmarshal(b, &probe) != nil || probe.Values != nil {
			return nil, err
		}
		r := &model.ServiceRecord{}
		if err := json.Unmarshal(b, r); err != nil {
			return nil, err
		}
		return &storedRecord{rec: r}, nil
	}
	route, err := model.LoadRoute(&s.Route, links)
	if err != nil {
		return nil, err
	}
	out := &storedRecord{rec: &model.ServiceRecord{Spec: s.Spec, ID: s.ID, Generation: s.Generation,
		NodeGenerations: s.NodeGenerations, Route: route, Move: s.Move, Peers: s.Peers}, values: model.AllocValues{}, roles: s.Roles}
	for node, kinds := range s.Values {
		for kind, vs := range kinds {
			out.values = append(out.values, model.ValueRun{Node: node, Kind: kind, Values: vs})
		}
	}
	return out, nil
}

// reserve marks the record's values in use.
func (r *storedRecord) reserve(a *labels.Allocator) error {
	if r.values == nil {
		for _, x := range r.rec.Allocs {
			if err := a.Reserve(x.Node, x.Kind, x.Value); err != nil {
				return err
			}
		}
		return nil
	}
	for _, run := range r.values {
		for _, v := range run.Values {
			if err := a.Reserve(run.Node, run.Kind, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// assigner returns the assigner that rebuilds the record with its values:
// a replay of the stored form, or the roles of schema 1.
func (r *storedRecord) assigner(a *labels.Allocator) *labels.Assigner {
	if r.values == nil {
		return a.NewAssigner(r.rec.Allocs)
	}
	return a.NewReplay(r.values)
}

// storedForm returns s's record in the stored form but for its
// generations; links are the topology's (model.LinksOf). The record holds
// its values (keepValues), as every record of a state does.
func storedForm(s *svcState, links model.Links) *model.StoredService {
	out := &model.StoredService{Spec: s.rec.Spec, ID: s.rec.ID, Route: model.StoreRoute(&s.rec.Route, links),
		Values: map[string]map[string]model.Deltas{}, Roles: s.rec.Roles, Move: s.rec.Move, Peers: s.rec.Peers}
	for _, r := range s.rec.Values {
		if out.Values[r.Node] == nil {
			out.Values[r.Node] = map[string]model.Deltas{}
		}
		out.Values[r.Node][r.Kind] = r.Values
	}
	return out
}

// encodeRecord writes s's record: out (storedForm) with s's generations.
func encodeRecord(s *svcState, out *model.StoredService) ([]byte, error) {
	out.Generation, out.NodeGenerations = s.rec.Generation, s.rec.NodeGenerations
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("service %s: %w", s.rec.Spec.Name, err)
	}
	return b, nil
}

// allocsOf returns rec's allocations with their roles: those it holds, or
// a replay of its build over its values on a (an allocator of the same
// spaces; the replay reserves and frees nothing).
func allocsOf(a *labels.Allocator, rec *model.ServiceRecord) ([]model.Alloc, error) {
	if rec.Values == nil {
		return rec.Allocs, nil
	}
	as := a.NewReplay(rec.Values)
	r := *rec // build sets the id: the record is shared
	if _, err := build(&r, as, func(string, string, string, model.Path) (uint32, error) { return 0, nil }); err != nil {
		return nil, fmt.Errorf("service %s: %w", rec.Spec.Name, err)
	}
	if err := as.Check(rec.Roles); err != nil {
		return nil, fmt.Errorf("service %s: %w", rec.Spec.Name, err)
	}
	return as.Allocs(), nil
}

// release returns the assigner that frees all of rec's values on commit.
func release(a *labels.Allocator, rec *model.ServiceRecord) *labels.Assigner {
	if rec.Values == nil {
		return a.NewAssigner(rec.Allocs)
	}
	return a.NewRelease(rec.Values)
}

// keepValues makes rec hold as's allocations as values, not roles.
func keepValues(rec *model.ServiceRecord, as *labels.Assigner) {
	rec.Values, rec.Roles = as.Sequence()
	rec.Allocs = nil
}

// withRoles returns a copy of rec that holds its allocations with their
// roles: a change may then edit what shapes the build (a move, its
// peers) and still keep the values of the roles it keeps, which a replay
// of the edited record could not give back.
func withRoles(a *labels.Allocator, rec *model.ServiceRecord) (*model.ServiceRecord, error) {
	allocs, err := allocsOf(a, rec)
	if err != nil {
		return nil, errorf(KindInternal, "%v", err)
	}
	out := *rec
	out.Allocs, out.Values, out.Roles = allocs, nil, ""
	return &out, nil
}
