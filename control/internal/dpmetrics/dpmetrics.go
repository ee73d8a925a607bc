// Package dpmetrics exports one datapath's counters as Prometheus metrics,
// read from e3-vswitchd at each scrape (the exporter pattern: the values
// are the datapath's own, never a copy that could lag). Every metric is
// labelled by node; docs/operations.md lists them.
package dpmetrics

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/e3fabric/e3fabric/control/internal/dprpc"
)

// Caller is the part of dprpc.Client the collector uses.
type Caller interface {
	Call(ctx context.Context, method string, params, result any) error
}

// Collector reads a datapath at each scrape.
type Collector struct {
	node    string
	dp      Caller
	labels  bool // export a series per label entry (there may be 10^5 of them)
	timeout time.Duration
	log     *slog.Logger
}

// New returns the collector of node's datapath dp. With labels, every
// label entry's packet counter is exported too.
func New(node string, dp Caller, labels bool, timeout time.Duration, log *slog.Logger) *Collector {
	return &Collector{node: node, dp: dp, labels: labels, timeout: timeout, log: log}
}

// desc is one metric's description; node is always its first label.
func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, append([]string{"node"}, labels...), nil)
}

var (
	dUp = desc("e3_datapath_up", "1 if the datapath answered this scrape; without it, no other e3_ metric is exported.")

	dPortRxPkts  = desc("e3_port_rx_packets_total", "Frames received on the port.", "port")
	dPortRxBytes = desc("e3_port_rx_bytes_total", "Bytes received on the port.", "port")
	dPortTxPkts  = desc("e3_port_tx_packets_total", "Frames sent on the port.", "port")
	dPortTxBytes = desc("e3_port_tx_bytes_total", "Bytes sent on the port.", "port")
	dPortTxRetry = desc("e3_port_tx_retries_total", "TX bursts retried after the port took only part of one (a VM's ring: vhost-user).", "port")
	dPortDrops   = desc("e3_port_drops_total", "Frames dropped, counted on the port they came in on (or the one they failed to leave by), by reason.", "port", "reason")
	dPortLink    = desc("e3_port_link_up", "1 if the port has carrier.", "port")

	dSvcMACs = desc("e3_service_macs", "MACs the E-LAN's table holds.", "service", "id")

	dCircRxPkts  = desc("e3_circuit_rx_packets_total", "Frames received on the circuit.", "circuit", "port", "vlan", "service")
	dCircRxBytes = desc("e3_circuit_rx_bytes_total", "Bytes received on the circuit.", "circuit", "port", "vlan", "service")
	dCircTxPkts  = desc("e3_circuit_tx_packets_total", "Frames sent out of the circuit.", "circuit", "port", "vlan", "service")
	dCircTxBytes = desc("e3_circuit_tx_bytes_total", "Bytes sent out of the circuit.", "circuit", "port", "vlan", "service")

	dLabelPkts = desc("e3_label_packets_total", "Frames looked up on the label entry.", "label")

	dBFDUp     = desc("e3_bfd_session_up", "1 if the BFD session is Up.", "session", "port", "label")
	dBFDUsable = desc("e3_bfd_session_usable", "1 if the session's protection uses its path: up for at least its wait-to-restore time.", "session", "port", "label")
	dBFDTx     = desc("e3_bfd_tx_packets_total", "BFD control packets sent.", "session", "port", "label")
	dBFDRx     = desc("e3_bfd_rx_packets_total", "BFD control packets accepted.", "session", "port", "label")
	dBFDDowns  = desc("e3_bfd_session_downs_total", "Times the session left Up.", "session", "port", "label")
	dBFDPauses = desc("e3_bfd_session_pauses_total", "Times the neighbour paused (slowed its interval while Up), moving the paths over it to their backups.", "session", "port", "label")

	dBusy        = desc("e3_worker_busy_cycles_total", "TSC cycles of the worker's polls that received frames.", "worker")
	dIdle        = desc("e3_worker_idle_cycles_total", "TSC cycles of the worker's polls that received nothing (sleep excluded).", "worker")
	dClockCore   = desc("e3_worker_clock_probe_core_cycles_total", "Core cycles of the worker's clock probes: over e3_worker_clock_probe_tsc_cycles_total, the core's clock against the TSC's.", "worker")
	dClockTSC    = desc("e3_worker_clock_probe_tsc_cycles_total", "TSC cycles the worker's clock probes took.", "worker")
	dStalls      = desc("e3_worker_stalls_total", "Turns of the worker's poll loop longer than over (100us, 1ms, 10ms): it was away from its queues that long (its CPU taken, or held up).", "worker", "over")
	dStallCycles = desc("e3_worker_stall_cycles_total", "TSC cycles of the worker's turns longer than 100us.", "worker")
	dStageCalls  = desc("e3_stage_calls_total", "Calls of the stage that had frames for it.", "worker", "stage")
	dStageFrames = desc("e3_stage_frames_total", "Frames the stage took.", "worker", "stage")
	dStageCycles = desc("e3_stage_cycles_total", "TSC cycles of the stage (sampled, scaled to all calls).", "worker", "stage")
	dIOFrames    = desc("e3_port_io_frames_total", "Frames a worker received (rx) or sent (tx) on the port.", "worker", "port", "direction")
	dIOCycles    = desc("e3_port_io_cycles_total", "TSC cycles a worker spent receiving (rx) or sending (tx) on the port (sampled).", "worker", "port", "direction")
	dTSC         = desc("e3_datapath_tsc_hz", "TSC frequency: cycles per second, to turn cycles into time.")
)

// serviceCounters are the service counters of service_list, by metric name.
var serviceCounters = []struct{ field, name, help string }{
	{"rx_pkts", "e3_service_rx_packets_total", "Frames the service received (from circuits and the fabric)."},
	{"rx_bytes", "e3_service_rx_bytes_total", "Bytes the service received."},
	{"tx_pkts", "e3_service_tx_packets_total", "Frames the service sent."},
	{"tx_bytes", "e3_service_tx_bytes_total", "Bytes the service sent."},
	{"flooded", "e3_service_flooded_packets_total", "E-LAN frames flooded (broadcast, unknown unicast, multicast)."},
	{"learned", "e3_service_macs_learned_total", "MACs learned."},
	{"moves", "e3_service_mac_moves_total", "MAC moves."},
	{"limit_hits", "e3_service_mac_limit_hits_total", "New MACs refused at the service's limit."},
	{"table_full", "e3_service_mac_table_full_total", "New MACs refused because the node's table was full."},
	{"moves_refused", "e3_service_mac_moves_refused_total", "Moves refused for a frozen MAC (move damping)."},
	{"learn_lost", "e3_service_learn_lost_total", "Learn events lost: a worker's queue was full."},
	{"bum_filtered", "e3_service_bum_filtered_total", "BUM copies not sent into a multi-homed segment."},
	{"redirected", "e3_service_redirected_packets_total", "Frames for a site's circuit whose port is down, sent to another leaf."},
}

var serviceDescs = func() map[string]*prometheus.Desc {
	m := map[string]*prometheus.Desc{}
	for _, c := range serviceCounters {
		m[c.field] = desc(c.name, c.help, "service", "id")
	}
	return m
}()

// Describe sends nothing: the collector is unchecked, since what it
// exports depends on what the datapath holds.
func (c *Collector) Describe(chan<- *prometheus.Desc) {}

// Collect reads the datapath.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	m := emitter{ch: ch, node: c.node}
	if err := c.collect(ctx, &m); err != nil {
		c.log.Warn("metrics: datapath not read", "err", err)
		m.gauge(dUp, 0)
		return
	}
	m.gauge(dUp, 1)
}

type emitter struct {
	ch   chan<- prometheus.Metric
	node string
}

func (e *emitter) emit(d *prometheus.Desc, t prometheus.ValueType, v float64, labels ...string) {
	e.ch <- prometheus.MustNewConstMetric(d, t, v, append([]string{e.node}, labels...)...)
}
func (e *emitter) gauge(d *prometheus.Desc, v float64, l ...string) {
	e.emit(d, prometheus.GaugeValue, v, l...)
}
func (e *emitter) counter(d *prometheus.Desc, v uint64, l ...string) {
	e.emit(d, prometheus.CounterValue, float64(v), l...)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

type rtCounter struct {
	Calls  uint64 `json:"calls"`
	Frames uint64 `json:"frames"`
	Cycles uint64 `json:"cycles"`
}

type runtime struct {
	TSCHz   uint64 `json:"tsc_hz"`
	Workers []struct {
		Index      int    `json:"index"`
		BusyCycles uint64 `json:"busy_cycles"`
		IdleCycles uint64 `json:"idle_cycles"`
		Clock      struct {
			CoreCycles uint64 `json:"core_cycles"`
			TSCCycles  uint64 `json:"tsc_cycles"`
		} `json:"clock"`
		Stalls struct {
			Over100us uint64 `json:"over_100us"`
			Over1ms   uint64 `json:"over_1ms"`
			Over10ms  uint64 `json:"over_10ms"`
			Cycles    uint64 `json:"cycles"`
		} `json:"stalls"`
		Stages []struct {
			rtCounter
			Stage string `json:"stage"`
		} `json:"stages"`
		Ports []struct {
			Port string    `json:"port"`
			Rx   rtCounter `json:"rx"`
			Tx   rtCounter `json:"tx"`
		} `json:"ports"`
	} `json:"workers"`
}

type service struct {
	ID    uint32            `json:"id"`
	Name  string            `json:"name"`
	MACs  uint64            `json:"macs"`
	Stats map[string]uint64 `json:"stats"`
}

type circuit struct {
	ID      uint32 `json:"id"`
	Port    string `json:"port"`
	VLAN    any    `json:"vlan"` // a number or "untagged"
	Service uint32 `json:"service"`
	Stats   struct {
		RxPkts  uint64 `json:"rx_pkts"`
		RxBytes uint64 `json:"rx_bytes"`
		TxPkts  uint64 `json:"tx_pkts"`
		TxBytes uint64 `json:"tx_bytes"`
	} `json:"stats"`
}

type label struct {
	Label uint32 `json:"label"`
	Pkts  uint64 `json:"pkts"`
}

// collect reads everything first, so a failure exports nothing but up 0.
func (c *Collector) collect(ctx context.Context, m *emitter) error {
	var (
		ports    []dprpc.PortInfo
		services []service
		circuits []circuit
		sessions []dprpc.BFDInfo
		rt       runtime
		labels   []label
	)
	type call struct {
		method string
		out    any
	}
	calls := []call{{"port_list", &ports}, {"service_list", &services}, {"circuit_list", &circuits},
		{"bfd_list", &sessions}, {"runtime_get", &rt}}
	if c.labels {
		calls = append(calls, call{"label_list", &labels})
	}
	for _, k := range calls {
		if err := c.dp.Call(ctx, k.method, nil, k.out); err != nil {
			return fmt.Errorf("%s: %w", k.method, err)
		}
	}
	for _, p := range ports {
		m.counter(dPortRxPkts, p.Stats.RxPkts, p.Name)
		m.counter(dPortRxBytes, p.Stats.RxBytes, p.Name)
		m.counter(dPortTxPkts, p.Stats.TxPkts, p.Name)
		m.counter(dPortTxBytes, p.Stats.TxBytes, p.Name)
		m.counter(dPortTxRetry, p.Stats.TxRetries, p.Name)
		m.gauge(dPortLink, b2f(bool(p.Link)), p.Name)
		for reason, n := range p.Stats.Drops {
			m.counter(dPortDrops, n, p.Name, reason)
		}
	}
	svcName := map[uint32]string{}
	for _, s := range services {
		svcName[s.ID] = s.Name
		id := strconv.FormatUint(uint64(s.ID), 10)
		m.gauge(dSvcMACs, float64(s.MACs), s.Name, id)
		for _, k := range serviceCounters {
			m.counter(serviceDescs[k.field], s.Stats[k.field], s.Name, id)
		}
	}
	for _, ci := range circuits {
		l := []string{strconv.FormatUint(uint64(ci.ID), 10), ci.Port, fmt.Sprint(ci.VLAN), svcName[ci.Service]}
		m.counter(dCircRxPkts, ci.Stats.RxPkts, l...)
		m.counter(dCircRxBytes, ci.Stats.RxBytes, l...)
		m.counter(dCircTxPkts, ci.Stats.TxPkts, l...)
		m.counter(dCircTxBytes, ci.Stats.TxBytes, l...)
	}
	for _, l := range labels {
		m.counter(dLabelPkts, l.Pkts, strconv.FormatUint(uint64(l.Label), 10))
	}
	for _, s := range sessions {
		l := []string{strconv.FormatUint(uint64(s.ID), 10), s.Port, strconv.FormatUint(uint64(s.Label), 10)}
		m.gauge(dBFDUp, b2f(s.State == "up"), l...)
		m.gauge(dBFDUsable, b2f(s.Usable), l...)
		m.counter(dBFDTx, s.TxPkts, l...)
		m.counter(dBFDRx, s.RxPkts, l...)
		m.counter(dBFDDowns, s.Downs, l...)
		m.counter(dBFDPauses, s.Pauses, l...)
	}
	m.gauge(dTSC, float64(rt.TSCHz))
	for _, w := range rt.Workers {
		wi := strconv.Itoa(w.Index)
		m.counter(dBusy, w.BusyCycles, wi)
		m.counter(dIdle, w.IdleCycles, wi)
		m.counter(dClockCore, w.Clock.CoreCycles, wi)
		m.counter(dClockTSC, w.Clock.TSCCycles, wi)
		m.counter(dStalls, w.Stalls.Over100us, wi, "100us")
		m.counter(dStalls, w.Stalls.Over1ms, wi, "1ms")
		m.counter(dStalls, w.Stalls.Over10ms, wi, "10ms")
		m.counter(dStallCycles, w.Stalls.Cycles, wi)
		for _, s := range w.Stages {
			m.counter(dStageCalls, s.Calls, wi, s.Stage)
			m.counter(dStageFrames, s.Frames, wi, s.Stage)
			m.counter(dStageCycles, s.Cycles, wi, s.Stage)
		}
		for _, p := range w.Ports {
			m.counter(dIOFrames, p.Rx.Frames, wi, p.Port, "rx")
			m.counter(dIOCycles, p.Rx.Cycles, wi, p.Port, "rx")
			m.counter(dIOFrames, p.Tx.Frames, wi, p.Port, "tx")
			m.counter(dIOCycles, p.Tx.Cycles, wi, p.Port, "tx")
		}
	}
	return nil
}
