// Package labels allocates the per-node number spaces the controller hands
// out: MPLS labels (allocated by the node that receives them), NHLFE ids and
// circuit ids, plus the fabric-wide service ids. Values are bound to a role
// (a string naming their meaning), so a recomputation that keeps a role keeps
// its value, and a moved path, whose roles are new, gets new values while the
// old ones stay reserved until the change commits (make-before-break).
package labels

import (
	"cmp"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"github.com/e3fabric/e3fabric/control/internal/dpconfig"
	"github.com/e3fabric/e3fabric/control/internal/model"
	"github.com/e3fabric/e3fabric/control/internal/topology"
)

// KindService is the fabric-wide service id space (node "").
const KindService = "service"

// SegmentLabelMin is the first of the labels kept for segment labels (the
// top quarter of the label space): each node allocates its own labels
// below it.
const SegmentLabelMin = dpconfig.LabelSpace - dpconfig.LabelSpace/4

// Space is an inclusive range of values.
type Space struct{ Min, Max uint32 }

// DefaultSpaces are the datapath's limits (datapath/api/schema.yaml).
func DefaultSpaces() map[string]Space {
	return map[string]Space{
		model.KindLabel: {dpconfig.LabelMin, SegmentLabelMin - 1},
		// A range of its own, so that a value is free on every node.
		model.KindSegmentLabel: {SegmentLabelMin, dpconfig.LabelSpace - 1},
		model.KindNHLFE:        {1, dpconfig.MaxNHLFEs - 1},
		model.KindCircuit:      {1, dpconfig.MaxCircuits - 1},
		// Above every link id (topology.MaxLinkID), which is its link
		// session's id.
		model.KindSession: {topology.MaxLinkID + 1, dpconfig.MaxSessions - 1},
		KindService:       {1, dpconfig.MaxServices - 1},
	}
}

// ErrExhausted is returned (wrapped) when a space has no free value.
var ErrExhausted = errors.New("space exhausted")

type spaceKey struct{ node, kind string }

type bitmap struct {
	of    spaceKey
	space Space
	words []uint64
	used  int
	next  uint32 // next-fit cursor: freed values are not reused right away
}

// Allocator tracks which values are in use. Not safe for concurrent use: the
// leader controller is its only user.
type Allocator struct {
	spaces map[string]Space
	// Each (node, kind) has a bitmap, found by its index: an Assigner's
	// roles name their bitmap by index, half the size of two strings.
	ids  map[spaceKey]int32
	maps []*bitmap
	// roles is the most roles one Assigner has had, the size new ones
	// start with: services of a fabric are alike, and growing a map
	// costs more than sizing it.
	roles int
}

// New returns an allocator over spaces (DefaultSpaces if nil).
func New(spaces map[string]Space) *Allocator {
	if spaces == nil {
		spaces = DefaultSpaces()
	}
	return &Allocator{spaces: spaces, ids: map[spaceKey]int32{}}
}

// space returns the index of (node, kind)'s bitmap, creating it if new.
func (a *Allocator) space(node, kind string) (int32, error) {
	k := spaceKey{node, kind}
	if i, ok := a.ids[k]; ok {
		return i, nil
	}
	sp, ok := a.spaces[kind]
	if !ok {
		return 0, fmt.Errorf("labels: unknown kind %q", kind)
	}
	i := int32(len(a.maps))
	a.ids[k] = i
	a.maps = append(a.maps, &bitmap{of: k, space: sp, words: make([]uint64, sp.Max/64+1), next: sp.Min})
	return i, nil
}

// Reserve marks v in use (loading existing allocations). Reserving a value
// twice is an error: two owners for one value.
func (a *Allocator) Reserve(node, kind string, v uint32) error {
	i, err := a.space(node, kind)
	if err != nil {
		return err
	}
	b := a.maps[i]
	if v < b.space.Min || v > b.space.Max {
		return fmt.Errorf("labels: %s %d on %q outside %d..%d", kind, v, node, b.space.Min, b.space.Max)
	}
	if b.words[v/64]&(1<<(v%64)) != 0 {
		return fmt.Errorf("labels: %s %d on %q reserved twice", kind, v, node)
	}
	b.words[v/64] |= 1 << (v % 64)
	b.used++
	return nil
}

// Alloc returns a free value, searching from after the last one handed out.
func (a *Allocator) Alloc(node, kind string) (uint32, error) {
	i, err := a.space(node, kind)
	if err != nil {
		return 0, err
	}
	return a.alloc(i)
}

func (a *Allocator) alloc(i int32) (uint32, error) {
	b, sp := a.maps[i], a.maps[i].space
	if b.used >= int(sp.Max-sp.Min+1) {
		return 0, fmt.Errorf("node %s: %s %w (%d..%d all in use; the fabric's sizing rules: docs/control-plane.md, Sizing)",
			b.of.node, b.of.kind, ErrExhausted, sp.Min, sp.Max)
	}
	v, ok := b.findFree(b.next, sp.Max)
	if !ok {
		v, ok = b.findFree(sp.Min, sp.Max)
	}
	if !ok {
		return 0, fmt.Errorf("node %s: %s %w", b.of.node, b.of.kind, ErrExhausted)
	}
	b.words[v/64] |= 1 << (v % 64)
	b.used++
	b.next = v + 1
	if b.next > sp.Max {
		b.next = sp.Min
	}
	return v, nil
}

func (b *bitmap) findFree(from, max uint32) (uint32, bool) {
	for w := from / 64; w <= max/64; w++ {
		free := ^b.words[w]
		if w == from/64 {
			free &= ^uint64(0) << (from % 64)
		}
		if free != 0 {
			v := w*64 + uint32(bits.TrailingZeros64(free))
			return v, v <= max
		}
	}
	return 0, false
}

// Free releases v.
func (a *Allocator) Free(node, kind string, v uint32) {
	if i, ok := a.ids[spaceKey{node, kind}]; ok {
		a.free(i, v)
	}
}

func (a *Allocator) free(i int32, v uint32) {
	b := a.maps[i]
	if v/64 >= uint32(len(b.words)) || b.words[v/64]&(1<<(v%64)) == 0 {
		return
	}
	b.words[v/64] &^= 1 << (v % 64)
	b.used--
}

// InUse returns how many values of kind are in use on node.
func (a *Allocator) InUse(node, kind string) int {
	if i, ok := a.ids[spaceKey{node, kind}]; ok {
		return a.maps[i].used
	}
	return 0
}

// Usage lists (node, in use) for kind, sorted by node.
func (a *Allocator) Usage(kind string) map[string]int {
	out := map[string]int{}
	for _, b := range a.maps {
		if b.of.kind == kind {
			out[b.of.node] = b.used
		}
	}
	return out
}

// roleKey is a role on one (node, kind): its Allocator's bitmap index.
type roleKey struct {
	space int32
	role  string
}

// Assigner binds values to roles for one service during one change. Values of
// roles the service had before are kept; new roles get new values; old roles
// not asked for again are freed by Commit, not before, so the old and new
// configurations never share a value with two meanings.
type Assigner struct {
	a      *Allocator
	old    map[roleKey]uint32
	got    map[roleKey]uint32
	order  []roleKey // roles in the order first asked for
	vals   []uint32  // their values, in the same order
	digest uint64    // of the roles in that order (Sequence)
	// replay, when set, holds stored values per (node, kind) in the order
	// the build that stored them asked for their roles (NewReplay). Keyed
	// by names, not space ids: a replay's Get then makes one lookup in a
	// map of the service's own spaces instead of one in the allocator's.
	replay    map[spaceKey]*replayRun
	runs      []replayRun // replay's values
	replayErr error
	// release holds values Commit frees (NewRelease).
	release model.AllocValues
}

// replayRun is one space's stored values still to give back.
type replayRun struct {
	space  int32
	values []uint32
}

// NewAssigner starts a change for a service whose current allocations are old
// (already reserved in a).
func (a *Allocator) NewAssigner(old []model.Alloc) *Assigner {
	return a.NewAssignerFor(old, min(a.roles, 4096))
}

// NewAssignerFor is NewAssigner for a build that asks for about roles
// roles: a path check's few, where NewAssigner sizes for the largest
// service so far.
func (a *Allocator) NewAssignerFor(old []model.Alloc, roles int) *Assigner {
	n := max(len(old), roles)
	s := &Assigner{a: a, old: make(map[roleKey]uint32, len(old)), got: make(map[roleKey]uint32, n),
		order: make([]roleKey, 0, n), vals: make([]uint32, 0, n), digest: fnvOffset}
	for _, x := range old {
		// A kind without a space was never reserved: nothing to keep.
		if i, err := a.space(x.Node, x.Kind); err == nil {
			s.old[roleKey{i, x.Role}] = x.Value
		}
	}
	return s
}

// NewReplay starts the rebuild of a stored service whose values (already
// reserved in a) were stored as a Sequence: each role asked for takes the
// next stored value of its node and kind. The same build over the same
// route asks for the same roles in the same order; Check tells whether it
// did. Replays whose values are all reserved in a may run side by side:
// they only read a.
func (a *Allocator) NewReplay(values model.AllocValues) *Assigner {
	return a.ReplayIn(nil, values)
}

// ReplayIn is NewReplay in s, a replay that is done (nil: a new one): its
// maps and slices are cleared and reused. A loading leader replays every
// service, and fresh maps sized for each (growing them cost more than the
// build) cost it a tenth of its load in page faults and GC.
func (a *Allocator) ReplayIn(s *Assigner, values model.AllocValues) *Assigner {
	n := 0
	for _, r := range values {
		n += len(r.Values)
	}
	if s == nil || s.replay == nil {
		s = &Assigner{old: map[roleKey]uint32{}, got: make(map[roleKey]uint32, n), order: make([]roleKey, 0, n),
			vals: make([]uint32, 0, n), replay: make(map[spaceKey]*replayRun, len(values))}
	} else {
		clear(s.got)
		clear(s.replay)
		clear(s.order) // lets go of the role strings
		s.order, s.vals = s.order[:0], s.vals[:0]
	}
	s.a, s.digest, s.replayErr, s.release = a, fnvOffset, nil, nil
	s.runs = slices.Grow(s.runs[:0], len(values))[:len(values)]
	clear(s.runs)
	for j, r := range values {
		i, err := a.space(r.Node, r.Kind)
		if err != nil {
			s.replayErr = fmt.Errorf("%w: %v", ErrReplay, err)
			continue
		}
		s.runs[j] = replayRun{space: i, values: r.Values}
		s.replay[spaceKey{r.Node, r.Kind}] = &s.runs[j]
	}
	return s
}

// NewRelease starts a change that drops a service whose values are v: its
// Commit frees them all.
func (a *Allocator) NewRelease(v model.AllocValues) *Assigner {
	return &Assigner{a: a, old: map[roleKey]uint32{}, got: map[roleKey]uint32{}, release: v, digest: fnvOffset}
}

// Get returns the value of (node, kind, role), allocating it if new.
func (s *Assigner) Get(node, kind, role string) (uint32, error) {
	var i int32
	var run *replayRun
	if s.replay != nil {
		// Only looked up: replays run side by side, and a space with no
		// stored value cannot give one back anyway.
		if run = s.replay[spaceKey{node, kind}]; run == nil {
			return 0, fmt.Errorf("%w: no stored %s on %q for %s", ErrReplay, kind, node, role)
		}
		i = run.space
	} else {
		var err error
		if i, err = s.a.space(node, kind); err != nil {
			return 0, err
		}
	}
	k := roleKey{i, role}
	if v, ok := s.got[k]; ok {
		return v, nil
	}
	v, ok := s.old[k]
	switch {
	case run != nil:
		if len(run.values) == 0 {
			return 0, fmt.Errorf("%w: no stored %s on %q for %s", ErrReplay, kind, node, role)
		}
		run.values, v = run.values[1:], run.values[0]
	case !ok:
		var err error
		if v, err = s.a.alloc(i); err != nil {
			return 0, err
		}
	}
	s.got[k] = v
	s.order, s.vals = append(s.order, k), append(s.vals, v)
	s.digest = fnv1a(fnv1a(fnv1a(s.digest, node), kind), role)
	return v, nil
}

// ErrReplay says a rebuild asked for other roles than the build that stored
// the values: the store was written by a build with other roles.
var ErrReplay = errors.New("stored allocations do not match this build's roles")

// Check reports whether a replay used every stored value and asked for the
// roles whose digest was stored.
func (s *Assigner) Check(digest string) error {
	if s.replayErr != nil {
		return s.replayErr
	}
	for k, run := range s.replay {
		if len(run.values) > 0 {
			return fmt.Errorf("%w: %d %s on %q left over", ErrReplay, len(run.values), k.kind, k.node)
		}
	}
	if d := strconv.FormatUint(s.digest, 16); d != digest {
		return fmt.Errorf("%w: role digest %s, stored %s", ErrReplay, d, digest)
	}
	return nil
}

// Sequence returns the values per node and kind in the order their roles
// were first asked for, and a digest of that order of roles (FNV-1a of
// node, kind and role, each ended by a 0): a rebuild by NewReplay gets
// every value back from the values alone.
func (s *Assigner) Sequence() (model.AllocValues, string) {
	run := make(map[int32]int, 64)
	var spaces []int32
	for _, k := range s.order {
		if _, ok := run[k.space]; !ok {
			run[k.space] = len(spaces)
			spaces = append(spaces, k.space)
		}
	}
	out := make(model.AllocValues, len(spaces)) // kept for the service's life: no spare room
	for i, sp := range spaces {
		of := s.a.maps[sp].of
		out[i] = model.ValueRun{Node: of.node, Kind: of.kind}
	}
	// One array for all runs, each run's values in the order asked for.
	count := make([]int, len(out))
	for _, k := range s.order {
		count[run[k.space]]++
	}
	all, at := make([]uint32, len(s.vals)), 0
	for i := range out {
		out[i].Values = all[at : at : at+count[i]]
		at += count[i]
	}
	for i, k := range s.order {
		r := &out[run[k.space]]
		r.Values = append(r.Values, s.vals[i])
	}
	return out, strconv.FormatUint(s.digest, 16)
}

// FNV-1a (64 bits) of the digest: each part followed by a 0 byte.
const fnvOffset, fnvPrime = 14695981039346656037, 1099511628211

func fnv1a(h uint64, part string) uint64 {
	for i := 0; i < len(part); i++ {
		h = (h ^ uint64(part[i])) * fnvPrime
	}
	return h * fnvPrime // ^ 0
}

// Commit frees the old values no longer used, once the change is stored.
func (s *Assigner) Commit() {
	s.a.roles = max(s.a.roles, len(s.got))
	for k, v := range s.old {
		if _, ok := s.got[k]; !ok {
			s.a.free(k.space, v)
		}
	}
	for _, r := range s.release {
		for _, v := range r.Values {
			s.a.Free(r.Node, r.Kind, v)
		}
	}
}

// Allocs returns the service's allocations after this change, in the order
// their roles were first asked for: a build's own order, deterministic.
// What shows them to people sorts them (Sorted); sorting every service's
// here would cost more than its build.
func (s *Assigner) Allocs() []model.Alloc {
	out := make([]model.Alloc, len(s.order))
	for i, k := range s.order {
		sk := s.a.maps[k.space].of
		out[i] = model.Alloc{Node: sk.node, Kind: sk.kind, Role: k.role, Value: s.vals[i]}
	}
	return out
}

// Abort frees what this change allocated (neither kept from before nor
// replayed); the old allocations stay.
func (s *Assigner) Abort() {
	if s.replay == nil {
		for i, k := range s.order {
			if _, kept := s.old[k]; !kept {
				s.a.free(k.space, s.vals[i])
			}
		}
	}
	s.got, s.order, s.vals, s.digest = map[roleKey]uint32{}, nil, nil, fnvOffset
}

// Sorted returns a copy of x ordered by node, kind, role.
func Sorted(x []model.Alloc) []model.Alloc {
	out := slices.Clone(x)
	SortAllocs(out)
	return out
}

// SortAllocs orders allocations by node, kind, role.
func SortAllocs(x []model.Alloc) {
	slices.SortFunc(x, func(a, b model.Alloc) int {
		return cmp.Or(strings.Compare(a.Node, b.Node), strings.Compare(a.Kind, b.Kind),
			strings.Compare(a.Role, b.Role))
	})
}
