package dpconfig

import "testing"

// benchFragment is shaped like a spine's fragment of one 8-member E-LAN on
// a 4 x 32 fabric: transit swaps and a flood tree.
func benchFragment() *Fragment {
	f := &Fragment{}
	for i := uint32(0); i < 60; i++ {
		f.NHLFEs = append(f.NHLFEs, NHLFE{ID: 1000 + i, Nexthop: i % 32, Label: 5000 + i})
		nh := 1000 + i
		f.Labels = append(f.Labels, Label{Label: 7000 + i, Type: LabelSwap, NHLFE: &nh, InPorts: []string{"fab3"}})
	}
	for i := uint32(0); i < 8; i++ {
		f.Labels = append(f.Labels, Label{Label: 8000 + i, Type: LabelReplicate, RPFPort: "fab7",
			Branches: []uint32{1, 2, 3, 4, 5, 6, 7}, InPorts: []string{"fab7"}})
	}
	return f
}

func BenchmarkEncodeFragment(b *testing.B) {
	f := benchFragment()
	for b.Loop() {
		if _, err := EncodeFragment(f); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeFragment(b *testing.B) {
	v, _ := EncodeFragment(benchFragment())
	for b.Loop() {
		if _, err := DecodeFragment(v); err != nil {
			b.Fatal(err)
		}
	}
}
