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
	values map[string]map[string][]uint32 // stored form: values to replay
	roles  string                         // stored form: digest of their roles
}

// decodeRecord reads a record in either form.
func decodeRecord(b []byte, links model.Links) (*storedRecord, error) {
	var probe struct {
		Values json.RawMessage `json:"values"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return nil, err
	}
	if probe.Values == nil {
		r := &model.ServiceRecord{}
		if err := json.Unmarshal(b, r); err != nil {
			return nil, err
		}
		return &storedRecord{rec: r}, nil
	}
	var s model.StoredService
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, err
	}
	route, err := model.LoadRoute(&s.Route, links)
	if err != nil {
		return nil, err
	}
	out := &storedRecord{rec: &model.ServiceRecord{Spec: s.Spec, ID: s.ID, Generation: s.Generation,
		NodeGenerations: s.NodeGenerations, Route: route, Move: s.Move, Peers: s.Peers}, values: map[string]map[string][]uint32{}, roles: s.Roles}
	for node, kinds := range s.Values {
		out.values[node] = map[string][]uint32{}
		for kind, vs := range kinds {
			out.values[node][kind] = vs
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
	for node, kinds := range r.values {
		for kind, vs := range kinds {
			for _, v := range vs {
				if err := a.Reserve(node, kind, v); err != nil {
					return err
				}
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
// generations; links are the topology's (model.LinksOf).
func storedForm(s *svcState, links model.Links) *model.StoredService {
	values, roles := labels.Sequence(s.rec.Allocs)
	out := &model.StoredService{Spec: s.rec.Spec, ID: s.rec.ID, Route: model.StoreRoute(&s.rec.Route, links),
		Values: make(map[string]map[string]model.Deltas, len(values)), Roles: roles, Move: s.rec.Move, Peers: s.rec.Peers}
	for node, kinds := range values {
		out.Values[node] = make(map[string]model.Deltas, len(kinds))
		for kind, vs := range kinds {
			out.Values[node][kind] = vs
		}
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
