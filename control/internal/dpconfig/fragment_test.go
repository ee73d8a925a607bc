package dpconfig

import (
	"bytes"
	"encoding/json"
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

// The generated encoders (objects_gen.go) write what encoding/json writes
// from the same struct tags, and what they write decodes to the same value.
func TestGeneratedEncoders(t *testing.T) {
	u32 := func(v uint32) *uint32 { return &v }
	u16 := func(v uint16) *uint16 { return &v }
	zero := 0
	f := Fragment{
		Settings: &Settings{TTL: 64, ControlWord: false, MACAgingS: 0, MACLimit: 10, MACMoveLimit: 5, MACMoveWindowS: 180},
		Ports: []Port{{Name: "fab0", Devargs: `net_ring0,x="y"`, Kind: KindFabric, MTU: 2000, MAC: "02:00:00:00:00:01", RxQueues: 2, Workers: []int16{-1, 1}},
			{Name: "cust0", Devargs: "net_ring1", Kind: KindCustomer}},
		Nexthops: []Nexthop{{ID: 0, Port: "fab0", MAC: "02:00:00:00:00:02"}},
		BFD:      []BFD{{ID: 1, Nexthop: 0}, {ID: 2, Nexthop: 0, Label: 99, TxMS: 20, RxMS: 20, Multiplier: 5, WTRS: &zero}},
		NHLFEs:   []NHLFE{{ID: 0, Nexthop: 0, Label: 16}, {ID: 7, Protect: &Protection{Primary: 0, Backup: 1, Watch: 2}}},
		Services: []Service{{ID: 0, Type: ServiceELine, NHLFE: u32(0)}, {ID: 3, Type: ServiceELAN, Name: "blue\u00e9",
			MACLimit: 9, Remotes: []Remote{{Source: 0, NHLFE: 7}, {Source: 2, NHLFE: 8}}, Branches: []uint32{1, 2}}},
		Circuits: []Circuit{{ID: 1, Port: "cust0", VLAN: 10, Service: 3}, {ID: 2, Port: "cust0", VLAN: Untagged, Service: 0, MACLimit: 3}},
		Labels: []Label{{Label: 16, Type: LabelSwap, NHLFE: u32(0), InPorts: []string{"fab0"}},
			{Label: 17, Type: LabelELAN, Service: u32(3), Source: u16(0)},
			{Label: 18, Type: LabelReplicate, RPFPort: "fab0", Branches: []uint32{1}, Service: u32(3), Source: u16(1)},
			{Label: 19, Type: LabelOAM, Session: u32(0)}},
	}
	for _, c := range []struct {
		name string
		v    any
	}{
		{"fragment", f}, {"empty fragment", Fragment{}}, {"config", Assemble([]*Fragment{&f})}, {"empty config", Assemble(nil)},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, err := json.Marshal(c.v)
			if err != nil {
				t.Fatal(err)
			}
			back := reflect.New(reflect.TypeOf(c.v))
			if err := json.Unmarshal(b, back.Interface()); err != nil {
				t.Fatalf("%s: %v", b, err)
			}
			if !reflect.DeepEqual(back.Elem().Interface(), c.v) {
				t.Fatalf("round trip:\n got %+v\nwant %+v\n(%s)", back.Elem().Interface(), c.v, b)
			}
		})
	}
	// Against encoding/json's reflection, through types without the methods.
	type (
		settings Settings
		port     Port
		bfd      BFD
		service  Service
		label    Label
	)
	same := func(t *testing.T, gen func() ([]byte, error), refl any) {
		t.Helper()
		g, err := gen()
		if err != nil {
			t.Fatal(err)
		}
		r, err := json.Marshal(refl)
		if err != nil {
			t.Fatal(err)
		}
		if string(g) != string(r) {
			t.Fatalf("generated %s\nreflected %s", g, r)
		}
	}
	same(t, f.Settings.MarshalJSON, settings(*f.Settings))
	for _, x := range f.Ports {
		same(t, x.MarshalJSON, port(x))
	}
	for _, x := range f.BFD {
		same(t, x.MarshalJSON, bfd(x))
	}
	for _, x := range f.Services {
		same(t, x.MarshalJSON, service(x))
	}
	for _, x := range f.Labels {
		same(t, x.MarshalJSON, label(x))
	}
}

func TestEncodeRefusesInvalidVLAN(t *testing.T) {
	if _, err := EncodeFragment(&Fragment{Circuits: []Circuit{{ID: 1, Port: "p", Service: 1}}}); err == nil {
		t.Fatal("a circuit without a VLAN was encoded")
	}
}
