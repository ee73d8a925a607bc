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
