package dpconfig

import (
	"bytes"
	"reflect"
	"testing"
)

// Small fragments are stored as plain JSON, large ones gzipped; both read
// back the same.
func TestFragmentEncoding(t *testing.T) {
	small := &Fragment{Labels: []Label{{Label: 16, Type: LabelELine, Service: ptr(uint32(1))}}}
	large := &Fragment{}
	for i := uint32(0); i < 100; i++ {
		large.NHLFEs = append(large.NHLFEs, NHLFE{ID: i + 1, Nexthop: 1 + i%4, Label: 1000 + i})
	}
	for _, tc := range []struct {
		name    string
		f       *Fragment
		gzipped bool
	}{{"small", small, false}, {"large", large, true}} {
		b, err := EncodeFragment(tc.f)
		if err != nil {
			t.Fatal(err)
		}
		if got := bytes.HasPrefix(b, []byte{0x1f, 0x8b}); got != tc.gzipped {
			t.Errorf("%s: gzipped %v, want %v", tc.name, got, tc.gzipped)
		}
		back, err := DecodeFragment(b)
		if err != nil || !reflect.DeepEqual(back, tc.f) {
			t.Errorf("%s: read back %+v, %v", tc.name, back, err)
		}
	}
	if _, err := DecodeFragment([]byte{0x1f, 0x8b, 0, 0}); err == nil {
		t.Error("a broken gzip stream decodes")
	}
}

func ptr[T any](v T) *T { return &v }
