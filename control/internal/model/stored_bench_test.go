package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
)

// A stored 8-circuit E-LAN as a fabric of 16 spines holds it: 24 nodes
// with a generation and values each, 56 unicast paths.
func benchRecord() []byte {
	s := StoredService{Spec: ServiceSpec{Name: "elan00001", Type: ELAN}, ID: 1, Generation: 9,
		NodeGenerations: map[string]int64{}, Values: map[string]map[string]Deltas{}, Roles: "0123456789abcdef",
		Route: StoredRoute{Sources: map[string]uint16{}, Tree: []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}}}
	for i := 0; i < 8; i++ {
		leaf := fmt.Sprint("leaf", i*4+1)
		s.Spec.Circuits = append(s.Spec.Circuits, Circuit{Node: leaf, Port: "cust1", VLAN: 100})
		s.NodeGenerations[leaf] = 1234
		s.Values[leaf] = map[string]Deltas{"label": {1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, 1009, 1010, 1011, 1012, 1013},
			"nhlfe": {2000, 2001, 2002, 2003, 2004, 2005, 2006, 2007, 2008, 2009, 2010, 2011, 2012, 2013}, "circuit": {5}}
		s.Route.Sources[leaf] = uint16(i + 1)
		for j := 0; j < 8; j++ {
			if j != i {
				s.Route.Unicast = append(s.Route.Unicast, StoredUnicast{From: uint16(i + 1), To: uint16(j + 1), Path: []int{i*16 + 1, -(j*16 + 1)}, Backup: []int{i*16 + 2, -(j*16 + 2)}})
			}
		}
	}
	for k := 0; k < 16; k++ {
		spine := fmt.Sprint("spine", k+1)
		s.NodeGenerations[spine] = 1234
		s.Values[spine] = map[string]Deltas{"label": {300000, 300001, 300002, 300003, 300004, 300005, 300006},
			"nhlfe": {400000, 400001, 400002, 400003, 400004, 400005, 400006, 400007, 400008, 400009}}
	}
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return b
}

// BenchmarkStoredService decodes a record as a new leader does.
func BenchmarkStoredService(b *testing.B) {
	rec := benchRecord()
	b.SetBytes(int64(len(rec)))
	for b.Loop() {
		var s StoredService
		dec := json.NewDecoder(bytes.NewReader(rec))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&s); err != nil {
			b.Fatal(err)
		}
	}
}
