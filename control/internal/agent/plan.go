package agent

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"

	"github.com/e3fabric/e3fabric/control/internal/dpconfig"
)

// Kind is an object kind of the datapath, in dependency order (generated
// from the schema: dpconfig.Kind).
type Kind = dpconfig.Kind

// Action is what an Op does to one object.
type Action int

const (
	Add     Action = iota // the object is new
	Replace               // the object exists with other params: atomic replace
	Delete                // the object is not desired
)

func (a Action) String() string { return [...]string{"add", "replace", "delete"}[a] }

// Op is one datapath call. Obj is the dpconfig value: the desired one for
// Add and Replace, the current one for Delete.
type Op struct {
	Action Action
	Kind   Kind
	Key    string // name or id, as the datapath knows the object
	Obj    any
}

func (o Op) String() string {
	if o.Kind == dpconfig.KindSettings {
		return "set settings"
	}
	return fmt.Sprintf("%s %s %s", o.Action, o.Kind, o.Key)
}

// Diff returns the calls that turn the datapath state actual into desired,
// in make-before-break order:
//
//  0. a service that changes type (breakRetyped): the old one must go
//     before the new one can be made;
//  1. settings, if they differ;
//  2. kind by kind in dependency order (dpconfig.Kind, the schema's order
//     of the objects): first the new objects of that kind, then the
//     replacements (atomic re-points). An object refers only to objects of
//     earlier kinds, so whatever a new or re-pointed object refers to is in
//     place before it, and the old objects are still there too. The
//     circuits whose port and VLAN goes to another circuit id
//     (breakTaken) are deleted just before the circuits are added, when
//     everything the new ones need is in place;
//  3. deletions, in reverse dependency order (labels first, ports last),
//     when nothing refers to the old objects any more.
//
// Within one kind, objects go in key order so a plan is deterministic.
// Objects are compared in normalised form (dpconfig.Normalize), so equal
// configs give an empty plan, whatever their list order, nil or empty
// slices, MAC case or spelled-out defaults. A port whose desired MAC is
// empty takes the device's, so its current MAC is not a difference.
func Diff(desired, actual dpconfig.Config) []Op {
	d, a := desired.Normalize(), actual.Normalize()
	plan := breakRetyped(d, &a)
	taken := breakTaken(d, &a)
	var dels []Op
	if d.Settings != a.Settings {
		plan = append(plan, Op{Action: Replace, Kind: dpconfig.KindSettings, Obj: d.Settings})
	}
	diffKinds(&plan, &dels, d, a)
	at := slices.IndexFunc(plan, func(op Op) bool { return op.Action != Delete && op.Kind >= dpconfig.KindCircuit })
	if at < 0 {
		at = len(plan)
	}
	plan = slices.Insert(plan, at, taken...)

	// An nhlfe that changes form is added (a replace) under its new kind:
	// its old kind must not delete it afterwards.
	wanted := make(map[string]bool, len(d.NHLFEs))
	for _, n := range d.NHLFEs {
		wanted[n.Key()] = true
	}
	dels = slices.DeleteFunc(dels, func(op Op) bool {
		return (op.Kind == dpconfig.KindNHLFE || op.Kind == dpconfig.KindProtected) && wanted[op.Key]
	})
	// dels were appended kind by kind in dependency order: reverse the kinds.
	slices.SortStableFunc(dels, func(x, y Op) int { return cmp.Compare(y.Kind, x.Kind) })
	return append(plan, dels...)
}

// breakRetyped returns the deletions that must come first: a service id
// desired with another type than it has is another service, and the
// datapath will not change a service's type while circuits or labels use
// it. So its circuits and labels, then the old service, are deleted before
// anything else (labels first), and taken out of actual so that the rest
// of the plan adds them back as new. Nothing can be made before this
// break: what goes is the old service's.
func breakRetyped(d dpconfig.Config, a *dpconfig.Config) []Op {
	retyped := map[uint32]bool{}
	want := make(map[uint32]string, len(d.Services))
	for _, s := range d.Services {
		want[s.ID] = s.Type
	}
	for _, s := range a.Services {
		if t, ok := want[s.ID]; ok && t != s.Type {
			retyped[s.ID] = true
		}
	}
	if len(retyped) == 0 {
		return nil
	}
	var ops []Op
	a.Labels = slices.DeleteFunc(slices.Clone(a.Labels), func(l dpconfig.Label) bool {
		gone := l.Service != nil && retyped[*l.Service]
		if gone {
			ops = append(ops, Op{Action: Delete, Kind: dpconfig.KindLabel, Key: l.Key(), Obj: l})
		}
		return gone
	})
	a.Circuits = slices.DeleteFunc(slices.Clone(a.Circuits), func(c dpconfig.Circuit) bool {
		gone := retyped[c.Service]
		if gone {
			ops = append(ops, Op{Action: Delete, Kind: dpconfig.KindCircuit, Key: c.Key(), Obj: c})
		}
		return gone
	})
	a.Services = slices.DeleteFunc(slices.Clone(a.Services), func(s dpconfig.Service) bool {
		if retyped[s.ID] {
			ops = append(ops, Op{Action: Delete, Kind: dpconfig.KindService, Key: s.Key(), Obj: s})
		}
		return retyped[s.ID]
	})
	return ops
}

// breakTaken returns the deletions of the circuits whose port and VLAN
// desired gives to another circuit id: the datapath keeps one circuit per
// port and VLAN, so the old one goes before the new one is added (two
// circuits exchanging their VLANs both go first). They are taken out of
// actual, so that the rest of the plan adds back those desired still has.
func breakTaken(d dpconfig.Config, a *dpconfig.Config) []Op {
	type portVLAN struct {
		port string
		vlan dpconfig.VLAN
	}
	owner := make(map[portVLAN]uint32, len(d.Circuits))
	for _, c := range d.Circuits {
		owner[portVLAN{c.Port, c.VLAN}] = c.ID
	}
	var ops []Op
	a.Circuits = slices.DeleteFunc(slices.Clone(a.Circuits), func(c dpconfig.Circuit) bool {
		id, ok := owner[portVLAN{c.Port, c.VLAN}]
		gone := ok && id != c.ID
		if gone {
			ops = append(ops, Op{Action: Delete, Kind: dpconfig.KindCircuit, Key: c.Key(), Obj: c})
		}
		return gone
	})
	return ops
}

// diffKind compares one kind's normalised, key-sorted lists, appending its
// additions then its replacements to plan, and its deletions to dels.
func diffKind[T interface{ Key() string }](plan, dels *[]Op, kind Kind, want, have []T,
	equal func(want, have T) bool) {
	haveBy := make(map[string]T, len(have))
	for _, h := range have {
		haveBy[h.Key()] = h
	}
	wantKeys := make(map[string]bool, len(want))
	var repls []Op
	for _, w := range want {
		k := w.Key()
		wantKeys[k] = true
		h, ok := haveBy[k]
		switch {
		case !ok:
			*plan = append(*plan, Op{Action: Add, Kind: kind, Key: k, Obj: w})
		case !equal(w, h):
			repls = append(repls, Op{Action: Replace, Kind: kind, Key: k, Obj: w})
		}
	}
	*plan = append(*plan, repls...)
	for _, h := range have {
		if k := h.Key(); !wantKeys[k] {
			*dels = append(*dels, Op{Action: Delete, Kind: kind, Key: k, Obj: h})
		}
	}
}

// portEqual compares a desired port with the datapath's. No MAC in the
// desired config means "the device's own", and config_dump reports the
// MAC in use whichever it is. It never reports the workers: they are where
// the queues run, not what the port is.
func portEqual(want, have dpconfig.Port) bool {
	if want.MAC == "" {
		want.MAC = have.MAC
	}
	want.Workers, have.Workers = nil, nil
	return reflect.DeepEqual(want, have)
}

// splitBy separates a kind's objects of its variant form (the NHLFEs that
// are protected) from the plain ones. An id that changes form shows as a
// delete of one kind and an add of the other; the datapath takes that add
// as a replace, and the delete then finds nothing to do.
func splitBy[T any](xs []T, variant func(T) bool) (plain, vs []T) {
	for _, x := range xs {
		if variant(x) {
			vs = append(vs, x)
		} else {
			plain = append(plain, x)
		}
	}
	return plain, vs
}
