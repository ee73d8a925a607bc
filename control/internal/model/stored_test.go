package model

import (
	"encoding/json"
	"reflect"
	"testing"
)

// The hand-written encoders write what encoding/json would, and read back.
func TestStoredEncoding(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want string
	}{
		{StoredUnicast{From: 1, To: 2, Path: []int{3, -4}, Backup: []int{5, 6}}, `[1,2,[3,-4],[5,6]]`},
		{StoredUnicast{From: 7, To: 0, Path: []int{1}, Backup: nil, ECMP: true}, `[7,0,[1],null,true]`},
		{StoredUnicast{Path: []int{}}, `[0,0,[],null]`},
		{Deltas{16, 17, 18, 40, 20}, `[16,1,1,22,-20]`},
		{Deltas{}, `[]`},
		{Deltas(nil), `[]`},
		{NodeGenerations{"leaf1": 7, "spine-2": 1 << 40}, `{"leaf1":7,"spine-2":1099511627776}`},
		{NodeGenerations{}, `{}`},
		{StoredValues{"leaf1": {"label": {16, 17}, "nhlfe": {}}, "spine1": {"label": {20}}},
			`{"leaf1":{"label":[16,1],"nhlfe":[]},"spine1":{"label":[20]}}`},
		{StoredValues{}, `{}`},
	} {
		b, err := json.Marshal(tc.v)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tc.want {
			t.Errorf("%+v: %s, want %s", tc.v, b, tc.want)
		}
		back := reflect.New(reflect.TypeOf(tc.v))
		if err := json.Unmarshal(b, back.Interface()); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if want := reflect.ValueOf(tc.v); want.Kind() == reflect.Slice && want.IsNil() {
			continue // read back empty
		}
		if !reflect.DeepEqual(back.Elem().Interface(), tc.v) {
			t.Errorf("%s read back as %+v, want %+v", b, back.Elem().Interface(), tc.v)
		}
	}
}

// Malformed stored arrays are refused, never read as something else.
func TestStoredDecodingRefuses(t *testing.T) {
	for _, tc := range []struct {
		v  any
		in string
	}{
		{&StoredUnicast{}, `[1,2]`},
		{&StoredUnicast{}, `[1,2,[3],null,true,1]`},
		{&StoredUnicast{}, `[70000,2,[3],null]`},
		{&StoredUnicast{}, `[-1,2,[3],null]`},
		{&StoredUnicast{}, `["1",2,[3],null]`},
		{&StoredUnicast{}, `[1,2,[3.5],null]`},
		{&StoredUnicast{}, `[1,2,[3,],null]`},
		{&StoredUnicast{}, `[1,2,[3],null,1]`},
		{&StoredUnicast{}, `{"from":1}`},
		{new(Deltas), `[1,"2"]`},
		{new(Deltas), `[1,-2]`},
		{new(Deltas), `[1e3]`},
		{new(NodeGenerations), `{"leaf1":1.5}`},
		{new(NodeGenerations), `{"leaf1":1,}`},
		{new(NodeGenerations), `{"leaf1" 1}`},
		{new(NodeGenerations), `[1]`},
		{new(StoredValues), `{"leaf1":{"label":[1,"2"]}}`},
		{new(StoredValues), `{"leaf1":[1]}`},
		{new(StoredValues), `{"leaf1":{"label":[1]}} x`},
	} {
		if err := json.Unmarshal([]byte(tc.in), tc.v); err == nil {
			t.Errorf("%s: read as %+v, want an error", tc.in, tc.v)
		}
	}
	// Names with escapes are JSON too, read the slow way; so is null.
	var g NodeGenerations
	if err := json.Unmarshal([]byte(`{"le\u0061f1": 3}`), &g); err != nil || !reflect.DeepEqual(g, NodeGenerations{"leaf1": 3}) {
		t.Errorf("escaped name: %+v, %v", g, err)
	}
	if err := json.Unmarshal([]byte(`null`), &g); err != nil || g != nil {
		t.Errorf("null: %+v, %v", g, err)
	}
	var v StoredValues
	if err := json.Unmarshal([]byte(` { "leaf1" : { "label" : [ 16 , 1 ] } } `), &v); err != nil ||
		!reflect.DeepEqual(v, StoredValues{"leaf1": {"label": {16, 17}}}) {
		t.Errorf("with spaces: %+v, %v", v, err)
	}
	// White space between the elements is JSON too.
	var u StoredUnicast
	if err := json.Unmarshal([]byte(` [ 1 , 2 , [ 3 , -4 ] , null , true ] `), &u); err != nil ||
		!reflect.DeepEqual(u, StoredUnicast{From: 1, To: 2, Path: []int{3, -4}, ECMP: true}) {
		t.Errorf("with spaces: %+v, %v", u, err)
	}
}
