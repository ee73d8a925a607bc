package agent

import "github.com/e3fabric/e3fabric/control/internal/dpconfig"

// objects is a set of datapath objects, each kind by its key: what the
// agent knows the datapath holds (its realised state), or the keys that a
// change touches.
type objects struct {
	settings *dpconfig.Settings
	ports    map[string]dpconfig.Port
	nexthops map[uint32]dpconfig.Nexthop
	bfd      map[uint32]dpconfig.BFD
	nhlfes   map[uint32]dpconfig.NHLFE
	ecmps    map[uint32]dpconfig.ECMP
	services map[uint32]dpconfig.Service
	circuits map[uint32]dpconfig.Circuit
	labels   map[uint32]dpconfig.Label
}

func newObjects() *objects {
	return &objects{ports: map[string]dpconfig.Port{}, nexthops: map[uint32]dpconfig.Nexthop{},
		bfd: map[uint32]dpconfig.BFD{}, nhlfes: map[uint32]dpconfig.NHLFE{}, ecmps: map[uint32]dpconfig.ECMP{}, services: map[uint32]dpconfig.Service{},
		circuits: map[uint32]dpconfig.Circuit{}, labels: map[uint32]dpconfig.Label{}}
}

func portKey(p dpconfig.Port) string       { return p.Name }
func nexthopKey(n dpconfig.Nexthop) uint32 { return n.ID }
func bfdKey(b dpconfig.BFD) uint32         { return b.ID }
func nhlfeKey(n dpconfig.NHLFE) uint32     { return n.ID }
func ecmpKey(e dpconfig.ECMP) uint32       { return e.ID }
func serviceKey(s dpconfig.Service) uint32 { return s.ID }
func circuitKey(c dpconfig.Circuit) uint32 { return c.ID }
func labelKey(l dpconfig.Label) uint32     { return l.Label }
func putAll[K comparable, V any](m map[K]V, xs []V, key func(V) K) {
	for _, x := range xs {
		m[key(x)] = x
	}
}

// add puts f's objects into o, replacing those with the same keys.
func (o *objects) add(f *dpconfig.Fragment) {
	if f == nil {
		return
	}
	if f.Settings != nil {
		s := *f.Settings
		o.settings = &s
	}
	putAll(o.ports, f.Ports, portKey)
	putAll(o.nexthops, f.Nexthops, nexthopKey)
	putAll(o.bfd, f.BFD, bfdKey)
	putAll(o.nhlfes, f.NHLFEs, nhlfeKey)
	putAll(o.ecmps, f.ECMPs, ecmpKey)
	putAll(o.services, f.Services, serviceKey)
	putAll(o.circuits, f.Circuits, circuitKey)
	putAll(o.labels, f.Labels, labelKey)
}

func dropKeys[K comparable, V, W any](m map[K]V, ks map[K]W) {
	for k := range ks {
		delete(m, k)
	}
}

// remove deletes from o the objects whose keys ks has (settings stay).
func (o *objects) remove(ks *objects) {
	dropKeys(o.ports, ks.ports)
	dropKeys(o.nexthops, ks.nexthops)
	dropKeys(o.bfd, ks.bfd)
	dropKeys(o.nhlfes, ks.nhlfes)
	dropKeys(o.ecmps, ks.ecmps)
	dropKeys(o.services, ks.services)
	dropKeys(o.circuits, ks.circuits)
	dropKeys(o.labels, ks.labels)
}

func pickKeys[K comparable, V, W any](m map[K]V, ks map[K]W) []V {
	var out []V
	for k := range ks {
		if v, ok := m[k]; ok {
			out = append(out, v)
		}
	}
	return out
}

// pick returns o's objects whose keys ks has, with o's settings.
func (o *objects) pick(ks *objects) dpconfig.Config {
	c := dpconfig.Config{Ports: pickKeys(o.ports, ks.ports), Nexthops: pickKeys(o.nexthops, ks.nexthops),
		BFD: pickKeys(o.bfd, ks.bfd), NHLFEs: pickKeys(o.nhlfes, ks.nhlfes),
		ECMPs: pickKeys(o.ecmps, ks.ecmps), Services: pickKeys(o.services, ks.services),
		Circuits: pickKeys(o.circuits, ks.circuits), Labels: pickKeys(o.labels, ks.labels)}
	if o.settings != nil {
		c.Settings = *o.settings
	}
	return c
}
