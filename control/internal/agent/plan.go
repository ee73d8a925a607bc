package agent

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strconv"

	"github.com/e3fabric/e3fabric/control/internal/dpconfig"
)

// Kind is an object type of the datapath, declared in dependency order: an
// object refers only to objects of earlier kinds.
type Kind int

const (
	KindSettings Kind = iota
	KindPort
	KindNexthop
	KindBFD
	KindNHLFE
	KindProtected // protected NHLFEs: they refer to plain ones
	KindECMP      // ECMP groups: they refer to plain and protected NHLFEs
	KindService
	KindCircuit
	KindLabel
)

var kindNames = [...]string{"settings", "port", "nexthop", "bfd", "nhlfe", "protected nhlfe", "ecmp",
	"service", "circuit", "label"}

func (k Kind) String() string { return kindNames[k] }

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
	if o.Kind == KindSettings {
		return "set settings"
	}
	return fmt.Sprintf("%s %s %s", o.Action, o.Kind, o.Key)
}

// Diff returns the calls that turn the datapath state actual into desired,
// in make-before-break order:
//
//  1. settings, if they differ;
//  2. kind by kind in dependency order (ports, nexthops, BFD sessions,
//     plain nhlfes, protected nhlfes, ECMP groups, services, circuits, labels): first the new objects of that kind, then the
//     replacements (atomic re-points). An object refers only to objects of
//     earlier kinds, so whatever a new or re-pointed object refers to is in
//     place before it, and the old objects are still there too;
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
	var dels []Op
	if d.Settings != a.Settings {
		plan = append(plan, Op{Action: Replace, Kind: KindSettings, Obj: d.Settings})
	}
	diffKind(&plan, &dels, KindPort, d.Ports, a.Ports,
		func(p dpconfig.Port) string { return p.Name },
		func(want, have dpconfig.Port) bool {
			// No MAC in the desired config means "the device's own", and
			// config_dump reports the MAC in use whichever it is. It never
			// reports the workers: they are where the queues run, not what
			// the port is.
			if want.MAC == "" {
				want.MAC = have.MAC
			}
			want.Workers, have.Workers = nil, nil
			return reflect.DeepEqual(want, have)
		})
	diffKind(&plan, &dels, KindNexthop, d.Nexthops, a.Nexthops,
		func(n dpconfig.Nexthop) string { return idKey(n.ID) }, dpconfig.Nexthop.Equal)
	diffKind(&plan, &dels, KindBFD, d.BFD, a.BFD,
		func(b dpconfig.BFD) string { return idKey(b.ID) }, dpconfig.BFD.Equal)
	dPlain, dProt := splitProtected(d.NHLFEs)
	aPlain, aProt := splitProtected(a.NHLFEs)
	nhlfeKey := func(n dpconfig.NHLFE) string { return idKey(n.ID) }
	diffKind(&plan, &dels, KindNHLFE, dPlain, aPlain, nhlfeKey, dpconfig.NHLFE.Equal)
	diffKind(&plan, &dels, KindProtected, dProt, aProt, nhlfeKey, dpconfig.NHLFE.Equal)
	diffKind(&plan, &dels, KindECMP, d.ECMPs, a.ECMPs,
		func(e dpconfig.ECMP) string { return idKey(e.ID) }, dpconfig.ECMP.Equal)
	diffKind(&plan, &dels, KindService, d.Services, a.Services,
		func(s dpconfig.Service) string { return idKey(s.ID) }, dpconfig.Service.Equal)
	diffKind(&plan, &dels, KindCircuit, d.Circuits, a.Circuits,
		func(c dpconfig.Circuit) string { return idKey(c.ID) }, dpconfig.Circuit.Equal)
	diffKind(&plan, &dels, KindLabel, d.Labels, a.Labels,
		func(l dpconfig.Label) string { return idKey(l.Label) }, dpconfig.Label.Equal)

	// An nhlfe that changes form is added (a replace) under its new kind:
	// its old kind must not delete it afterwards.
	wanted := make(map[string]bool, len(d.NHLFEs))
	for _, n := range d.NHLFEs {
		wanted[idKey(n.ID)] = true
	}
	dels = slices.DeleteFunc(dels, func(op Op) bool {
		return (op.Kind == KindNHLFE || op.Kind == KindProtected) && wanted[op.Key]
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
			ops = append(ops, Op{Action: Delete, Kind: KindLabel, Key: idKey(l.Label), Obj: l})
		}
		return gone
	})
	a.Circuits = slices.DeleteFunc(slices.Clone(a.Circuits), func(c dpconfig.Circuit) bool {
		gone := retyped[c.Service]
		if gone {
			ops = append(ops, Op{Action: Delete, Kind: KindCircuit, Key: idKey(c.ID), Obj: c})
		}
		return gone
	})
	a.Services = slices.DeleteFunc(slices.Clone(a.Services), func(s dpconfig.Service) bool {
		if retyped[s.ID] {
			ops = append(ops, Op{Action: Delete, Kind: KindService, Key: idKey(s.ID), Obj: s})
		}
		return retyped[s.ID]
	})
	return ops
}

// diffKind compares one kind's normalised, key-sorted lists, appending its
// additions then its replacements to plan, and its deletions to dels.
func diffKind[T any](plan, dels *[]Op, kind Kind, want, have []T,
	key func(T) string, equal func(want, have T) bool) {
	haveBy := make(map[string]T, len(have))
	for _, h := range have {
		haveBy[key(h)] = h
	}
	wantKeys := make(map[string]bool, len(want))
	var repls []Op
	for _, w := range want {
		k := key(w)
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
		if k := key(h); !wantKeys[k] {
			*dels = append(*dels, Op{Action: Delete, Kind: kind, Key: k, Obj: h})
		}
	}
}

// splitProtected separates plain and protected NHLFEs. An id that changes
// form shows as a delete of one kind and an add of the other; the datapath
// takes that add as a replace, and the delete then finds nothing to do.
func splitProtected(ns []dpconfig.NHLFE) (plain, prot []dpconfig.NHLFE) {
	for _, n := range ns {
		if n.Protect != nil {
			prot = append(prot, n)
		} else {
			plain = append(plain, n)
		}
	}
	return plain, prot
}

func idKey(id uint32) string { return strconv.FormatUint(uint64(id), 10) }
