package controller

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/e3fabric/e3fabric/control/internal/model"
)

// metrics are the controller's own Prometheus metrics (docs/operations.md):
// what its changes cost, and what happened to the fabric. The fabric's
// state is read at each scrape (stateCollector).
type metrics struct {
	compute prometheus.Histogram // a change's routes and fragments, before its commit
	commit  prometheus.Histogram // a change's commit: encoding and the etcd transaction
	repair  prometheus.Histogram // a failure's first report to the global repair's commit
	events  *prometheus.CounterVec
	steps   *prometheus.CounterVec // changes written in two steps (prepare.go), by outcome
	held    *prometheus.CounterVec // changes whose removals waited for a third step (prepare.go), by outcome
	// storeFull counts changes refused for etcd's quota (room.go).
	storeFull prometheus.Counter
}

func newMetrics() *metrics {
	buckets := prometheus.ExponentialBuckets(0.0005, 2, 16) // 0.5 ms .. 16 s
	m := &metrics{
		compute: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "e3_controller_compute_seconds",
			Help: "Time to compute a change (routes, labels, fragments) before its commit.", Buckets: buckets}),
		commit: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "e3_controller_commit_seconds",
			Help: "Time to commit a change: its encoding and one etcd transaction.", Buckets: buckets}),
		repair: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "e3_controller_repair_seconds",
			Help: "Global repair: from the first report of a failure to the commit of the recomputed routes.", Buckets: buckets}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "e3_controller_events_total",
			Help: "Events of the event log, by kind (node-down, link-down, local-repair, repair, restored, ...)."}, []string{"kind"}),
		steps: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "e3_controller_two_step_changes_total",
			Help: "Changes written in two steps, additions first (make-before-break across nodes), by whether every agent applied the first in time (applied) or not (late)."},
			[]string{"outcome"}),
		held: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "e3_controller_held_removals_total",
			Help: "Changes whose removals stayed until the agents had applied them (make-before-break across nodes), by whether every agent applied the change in time (applied) or not (late)."},
			[]string{"outcome"}),
		storeFull: prometheus.NewCounter(prometheus.CounterOpts{Name: "e3_controller_etcd_full_total",
			Help: "Changes refused because etcd's database was near its quota (new services) or at it (any write)."}),
	}
	for _, o := range []string{"applied", "late"} {
		m.steps.WithLabelValues(o) // exported from the start, at 0
		m.held.WithLabelValues(o)
	}
	return m
}

// Collectors returns the controller's metrics, for a registry.
func (c *Controller) Collectors() []prometheus.Collector {
	m := c.metrics
	room := []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "e3_controller_etcd_db_bytes",
			Help: "The largest etcd member's database file, as last read (every 5 s)."},
			func() float64 { return float64(c.room.size.Load()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "e3_controller_etcd_quota_bytes",
			Help: "etcd's backend quota, as the controller knows it (--etcd-quota); new services are refused past 90% of it."},
			func() float64 { return float64(c.room.quota) }),
	}
	return append([]prometheus.Collector{m.compute, m.commit, m.repair, m.events, m.steps, m.held, m.storeFull, stateCollector{c}}, room...)
}

func (m *metrics) observeEvent(e model.Event) {
	m.events.WithLabelValues(e.Kind).Inc()
	if e.Kind == "repair" && e.TookMS > 0 {
		m.repair.Observe(float64(e.TookMS) / 1000)
	}
}

var (
	descLeader = prometheus.NewDesc("e3_controller_leader",
		"1 if this replica leads; the fabric's gauges are the leader's only.", nil, nil)
	descGeneration = prometheus.NewDesc("e3_controller_generation",
		"The fabric's generation: each commit moves it on.", nil, nil)
	descNodes = prometheus.NewDesc("e3_controller_nodes",
		"Nodes by state: forwarding or down, as their neighbours' BFD sessions see them.", []string{"state"}, nil)
	descAgents = prometheus.NewDesc("e3_controller_agents",
		"Agents by state: up (reporting) or down.", []string{"state"}, nil)
	descLinks = prometheus.NewDesc("e3_controller_links",
		"Fabric links by state: up or down.", []string{"state"}, nil)
	descServices = prometheus.NewDesc("e3_controller_services",
		"Services by state: programmed, pending, degraded or down.", []string{"state"}, nil)
	descNodeUp = prometheus.NewDesc("e3_controller_node_up",
		"1 if the node forwards, as its neighbours' BFD sessions see it.", []string{"node"}, nil)
	descNodeDrained = prometheus.NewDesc("e3_controller_node_drained",
		"1 if the node is in maintenance (e3ctl node drain).", []string{"node"}, nil)
	descNodeCarrying = prometheus.NewDesc("e3_controller_node_drain_carrying",
		"Services whose traffic still crosses a drained node other than through its own single-homed circuits.", []string{"node"}, nil)
	descLinkUp = prometheus.NewDesc("e3_controller_link_up",
		"1 if the fabric link is up at both ends.", []string{"link"}, nil)
)

// stateCollector reports the fabric's state from the leader's memory at
// each scrape. A follower reports only that it does not lead: its view
// would be a full read of etcd per scrape.
type stateCollector struct{ c *Controller }

func (s stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descLeader, descGeneration, descNodes, descAgents, descLinks,
		descServices, descNodeUp, descNodeDrained, descNodeCarrying, descLinkUp} {
		ch <- d
	}
}

func (s stateCollector) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	if !s.c.IsLeader() {
		gauge(descLeader, 0)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	snap, err := s.c.Snapshot(ctx)
	if err != nil || !snap.Leader {
		gauge(descLeader, 0)
		return
	}
	gauge(descLeader, 1)
	gauge(descGeneration, float64(snap.Generation))
	nodes := map[string]float64{"forwarding": 0, "down": 0}
	agents := map[string]float64{"up": 0, "down": 0}
	for _, n := range snap.Topology.Nodes {
		up := snap.NodeUp(n.Name)
		nodes[map[bool]string{true: "forwarding", false: "down"}[up]]++
		agents[map[bool]string{true: "up", false: "down"}[snap.AgentUp(n.Name)]]++
		gauge(descNodeUp, b2f(up), n.Name)
		gauge(descNodeDrained, b2f(n.Drained), n.Name)
		if n.Drained {
			gauge(descNodeCarrying, float64(len(snap.Carrying(n.Name))), n.Name)
		}
	}
	links := map[string]float64{"up": 0, "down": 0}
	for _, l := range snap.Topology.Links {
		up := snap.LinkUp(l.ID)
		links[map[bool]string{true: "up", false: "down"}[up]]++
		gauge(descLinkUp, b2f(up), l.Name())
	}
	services := map[string]float64{model.StateProgrammed: 0, model.StatePending: 0, model.StateDegraded: 0, model.StateDown: 0}
	for _, rec := range snap.Services {
		services[snap.ServiceStatus(rec).State]++
	}
	for d, m := range map[*prometheus.Desc]map[string]float64{descNodes: nodes, descAgents: agents, descLinks: links, descServices: services} {
		for state, v := range m {
			gauge(d, v, state)
		}
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
