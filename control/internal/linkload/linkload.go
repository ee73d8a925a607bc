// Package linkload turns the rates the agents report (each port's, each
// service's ingress on each node) into smoothed loads, and a link's load
// into a path cost (docs/control-plane.md, "Link cost").
package linkload

import (
	"math"
	"time"

	"github.com/e3fabric/e3fabric/control/internal/nodestate"
	"github.com/e3fabric/e3fabric/control/internal/topology"
)

// Scale is the cost of an idle link of declared cost 1: load adds to it in
// steps of a thousandth of Scale x Weight per percent, fine enough to tell
// paths a few percent apart.
const (
	Scale  = 100
	Weight = 10 // a full link costs (1 + Weight) x an idle one
	// MaxUtil bounds the utilisation a cost counts: a link measured or
	// reserved far past its capacity is not worth more than this.
	MaxUtil = 4
)

// Cost is the cost of a link of declared cost declared and capacity
// capacityMbps carrying loadMbps.
func Cost(declared, capacityMbps int, loadMbps float64) int64 {
	u := 0.0
	if capacityMbps > 0 {
		u = min(max(loadMbps, 0)/float64(capacityMbps), MaxUtil)
	}
	return int64(declared) * int64(math.Round(Scale*(1+Weight*u)))
}

// ewma is an exponentially weighted moving average over continuous time:
// a sample taken dt after the last weighs 1 - exp(-dt/window), so the
// average forgets at the same pace whatever the sampling interval.
type ewma struct {
	v  float64
	at time.Time
}

func (e *ewma) add(x float64, at time.Time, window time.Duration) {
	if e.at.IsZero() {
		e.v, e.at = x, at
		return
	}
	dt := at.Sub(e.at)
	if dt <= 0 {
		return // an older or repeated report
	}
	e.v += (1 - math.Exp(-dt.Seconds()/window.Seconds())) * (x - e.v)
	e.at = at
}

type direction struct {
	link int
	from string // the sending node
}

type serviceAt struct{ service, node string }

// Meter keeps the smoothed rates: each link direction's, measured by its
// sending port, and each service's ingress on each node. It is not safe
// for concurrent use.
type Meter struct {
	window   time.Duration
	links    map[direction]*ewma
	services map[serviceAt]*ewma
	// byService lists the nodes each service was measured on.
	byService map[string]map[string]bool
}

// NewMeter returns a meter that averages over window.
func NewMeter(window time.Duration) *Meter {
	return &Meter{window: window, links: map[direction]*ewma{}, services: map[serviceAt]*ewma{},
		byService: map[string]map[string]bool{}}
}

// Observe takes a node's status: its ports' transmit rates (the load of
// each link in the direction away from the node) and its services'
// ingress rates. Rates a status lacks count as zero: a service that
// stopped sending drops out of the reports.
func (m *Meter) Observe(topo *topology.Topology, s nodestate.NodeStatus) {
	at := s.Updated
	if at.IsZero() {
		return
	}
	for _, p := range s.Ports {
		if p.Stats == nil {
			continue
		}
		l, ok := topo.LinkAt(s.Node, p.Name)
		if !ok {
			continue
		}
		sample(m.links, direction{l.ID, s.Node}, p.Stats.TxBPS/1e6, at, m.window)
	}
	for name := range m.byService {
		if _, ok := s.Services[name]; !ok {
			if e := m.services[serviceAt{name, s.Node}]; e != nil {
				e.add(0, at, m.window)
			}
		}
	}
	for name, bps := range s.Services {
		if m.byService[name] == nil {
			m.byService[name] = map[string]bool{}
		}
		m.byService[name][s.Node] = true
		sample(m.services, serviceAt{name, s.Node}, bps/1e6, at, m.window)
	}
}

func sample[K comparable](m map[K]*ewma, k K, x float64, at time.Time, window time.Duration) {
	e := m[k]
	if e == nil {
		e = &ewma{}
		m[k] = e
	}
	e.add(x, at, window)
}

// Link is link l's smoothed load in Mbps: its busier direction's (a
// pseudowire crosses a link both ways).
func (m *Meter) Link(l topology.Link) float64 {
	var a, b float64
	if e := m.links[direction{l.ID, l.A.Node}]; e != nil {
		a = e.v
	}
	if e := m.links[direction{l.ID, l.B.Node}]; e != nil {
		b = e.v
	}
	return max(a, b)
}

// Measured is Link, and whether either direction was measured at all.
func (m *Meter) Measured(l topology.Link) (float64, bool) {
	_, a := m.links[direction{l.ID, l.A.Node}]
	_, b := m.links[direction{l.ID, l.B.Node}]
	return m.Link(l), a || b
}

// Service is a service's smoothed ingress in Mbps on its busiest node:
// what it puts on one direction of a link, exactly for an E-Line (each
// direction carries one end's ingress), at least for an E-LAN.
func (m *Meter) Service(name string) float64 {
	var most float64
	for n := range m.byService[name] {
		most = max(most, m.services[serviceAt{name, n}].v)
	}
	return most
}

// Forget drops what is kept of a service (deleted).
func (m *Meter) Forget(name string) {
	for n := range m.byService[name] {
		delete(m.services, serviceAt{name, n})
	}
	delete(m.byService, name)
}
