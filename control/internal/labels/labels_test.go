package labels

import (
	"errors"
	"hash/fnv"
	"strconv"
	"testing"

	"github.com/e3fabric/e3fabric/control/internal/model"
)

func TestAllocUniquePerNode(t *testing.T) {
	a := New(nil)
	seen := map[uint32]bool{}
	for i := 0; i < 1000; i++ {
		v, err := a.Alloc("n1", model.KindLabel)
		if err != nil {
			t.Fatal(err)
		}
		if v < 16 || seen[v] {
			t.Fatalf("label %d reserved or reused", v)
		}
		seen[v] = true
	}
	// Another node has its own space: it starts at 16 again.
	if v, _ := a.Alloc("n2", model.KindLabel); v != 16 {
		t.Fatalf("n2's first label = %d, want 16", v)
	}
	if a.InUse("n1", model.KindLabel) != 1000 {
		t.Fatalf("in use %d", a.InUse("n1", model.KindLabel))
	}
}

func TestExhaustion(t *testing.T) {
	tests := []struct {
		kind  string
		space Space
	}{
		{model.KindLabel, Space{16, 20}},
		{model.KindNHLFE, Space{1, 1}},
		{model.KindCircuit, Space{1, 64}}, // a whole bitmap word
	}
	for _, tc := range tests {
		t.Run(tc.kind, func(t *testing.T) {
			a := New(map[string]Space{tc.kind: tc.space})
			for i := tc.space.Min; i <= tc.space.Max; i++ {
				if _, err := a.Alloc("n", tc.kind); err != nil {
					t.Fatalf("alloc %d: %v", i, err)
				}
			}
			_, err := a.Alloc("n", tc.kind)
			if !errors.Is(err, ErrExhausted) {
				t.Fatalf("err = %v, want exhausted", err)
			}
			// Freeing one makes it allocatable again.
			a.Free("n", tc.kind, tc.space.Min)
			if v, err := a.Alloc("n", tc.kind); err != nil || v != tc.space.Min {
				t.Fatalf("after free: %d, %v", v, err)
			}
		})
	}
}

func TestAssignerStableAndMakeBeforeBreak(t *testing.T) {
	a := New(map[string]Space{model.KindLabel: {16, 23}})
	s := a.NewAssigner(nil)
	x, _ := s.Get("n", model.KindLabel, "keep")
	y, _ := s.Get("n", model.KindLabel, "moved:path1")
	if again, _ := s.Get("n", model.KindLabel, "keep"); again != x {
		t.Fatal("same role, different value in one change")
	}
	s.Commit()
	old := s.Allocs()

	// Recompute: "keep" stays, the moved path's role is new.
	s2 := a.NewAssigner(old)
	x2, _ := s2.Get("n", model.KindLabel, "keep")
	z, _ := s2.Get("n", model.KindLabel, "moved:path2")
	if x2 != x {
		t.Fatalf("kept role changed value %d -> %d", x, x2)
	}
	if z == y || z == x {
		t.Fatalf("new role got %d, still used by the old config", z)
	}
	s2.Commit()
	if a.InUse("n", model.KindLabel) != 2 {
		t.Fatalf("old value not freed on commit: %d in use", a.InUse("n", model.KindLabel))
	}

	// Abort returns what the change took, and keeps the old.
	s3 := a.NewAssigner(s2.Allocs())
	s3.Get("n", model.KindLabel, "keep")
	s3.Get("n", model.KindLabel, "other")
	s3.Abort()
	if a.InUse("n", model.KindLabel) != 2 {
		t.Fatalf("abort leaked: %d in use", a.InUse("n", model.KindLabel))
	}
}

func TestReserveRefusesDoubleOwner(t *testing.T) {
	a := New(nil)
	if err := a.Reserve("n", model.KindLabel, 100); err != nil {
		t.Fatal(err)
	}
	if err := a.Reserve("n", model.KindLabel, 100); err == nil {
		t.Fatal("reserved twice")
	}
	if err := a.Reserve("n", model.KindLabel, 3); err == nil {
		t.Fatal("reserved label 3")
	}
}

// The role digest is stored with every service record: it must stay
// FNV-1a (64 bits) of node, kind and role, each followed by a 0 byte.
func TestSequenceDigestIsStable(t *testing.T) {
	for _, tc := range []struct {
		roles [][3]string
		want  string
	}{
		{nil, "cbf29ce484222325"},
		{[][3]string{{"leaf1", model.KindLabel, "pw:a"}}, ""},
		{[][3]string{{"leaf1", model.KindLabel, "pw:a"}, {"spine1", model.KindNHLFE, "lsp:x"}, {"leaf2", model.KindLabel, ""}}, ""},
	} {
		a := New(map[string]Space{model.KindLabel: {16, 1000}, model.KindNHLFE: {1, 1000}})
		s := a.NewAssigner(nil)
		h := fnv.New64a()
		for _, r := range tc.roles {
			if _, err := s.Get(r[0], r[1], r[2]); err != nil {
				t.Fatal(err)
			}
			for _, part := range r {
				h.Write(append([]byte(part), 0))
			}
		}
		want := tc.want
		if want == "" {
			want = strconv.FormatUint(h.Sum64(), 16)
		}
		if _, got := s.Sequence(); got != want {
			t.Errorf("%v: digest %s, want %s", tc.roles, got, want)
		}
	}
}
