package dpmetrics

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// fakeDP answers each method with canned JSON, or fails the ones in fail.
type fakeDP struct {
	answers map[string]string
	fail    map[string]bool
}

func (f fakeDP) Call(_ context.Context, method string, _, result any) error {
	if f.fail[method] {
		return errors.New("datapath gone")
	}
	return json.Unmarshal([]byte(f.answers[method]), result)
}

var answers = map[string]string{
	"port_list": `[{"name": "fab1", "kind": "fabric", "port_id": 0, "link": "up",
		"stats": {"rx_pkts": 10, "rx_bytes": 1000, "tx_pkts": 7, "tx_bytes": 700, "drops": {"not_for_us": 3, "ttl_expired": 0}}}]`,
	"service_list": `[{"id": 4, "type": "elan", "name": "green", "macs": 2,
		"stats": {"rx_pkts": 5, "tx_pkts": 6, "flooded": 1}}]`,
	"circuit_list": `[{"id": 9, "port": "cust1", "vlan": 3000, "service": 4,
		"stats": {"rx_pkts": 5, "rx_bytes": 500, "tx_pkts": 6, "tx_bytes": 600}}]`,
	"bfd_list": `[{"id": 1, "nexthop": 1, "port": "fab1", "state": "up", "usable": true, "tx_pkts": 40, "rx_pkts": 39, "downs": 2}]`,
	"runtime_get": `{"tsc_hz": 2000000000, "workers": [{"index": 0, "busy_cycles": 100, "idle_cycles": 900,
		"clock": {"core_cycles": 8192, "tsc_cycles": 4096},
		"stalls": {"over_100us": 5, "over_1ms": 2, "over_10ms": 0, "cycles": 9000000},
		"stages": [{"stage": "customer_in", "calls": 2, "frames": 5, "cycles": 250}],
		"ports": [{"port": "fab1", "rx": {"calls": 1, "frames": 10, "cycles": 30}, "tx": {"calls": 1, "frames": 7, "cycles": 20}}]}]}`,
	"label_list": `[{"label": 17, "pkts": 12}]`,
}

func TestCollect(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, tc := range []struct {
		name   string
		labels bool
		fail   string
		want   string // the metrics checked, in the text format
		names  []string
	}{
		{name: "counters", want: `
# HELP e3_datapath_up 1 if the datapath answered this scrape; without it, no other e3_ metric is exported.
# TYPE e3_datapath_up gauge
e3_datapath_up{node="leaf1"} 1
# HELP e3_port_drops_total Frames dropped, counted on the port they came in on (or the one they failed to leave by), by reason.
# TYPE e3_port_drops_total counter
e3_port_drops_total{node="leaf1",port="fab1",reason="not_for_us"} 3
e3_port_drops_total{node="leaf1",port="fab1",reason="ttl_expired"} 0
# HELP e3_service_flooded_packets_total E-LAN frames flooded (broadcast, unknown unicast, multicast).
# TYPE e3_service_flooded_packets_total counter
e3_service_flooded_packets_total{id="4",node="leaf1",service="green"} 1
# HELP e3_circuit_tx_packets_total Frames sent out of the circuit.
# TYPE e3_circuit_tx_packets_total counter
e3_circuit_tx_packets_total{circuit="9",node="leaf1",port="cust1",service="green",vlan="3000"} 6
# HELP e3_bfd_session_downs_total Times the session left Up.
# TYPE e3_bfd_session_downs_total counter
e3_bfd_session_downs_total{label="0",node="leaf1",port="fab1",session="1"} 2
# HELP e3_stage_cycles_total TSC cycles of the stage (sampled, scaled to all calls).
# TYPE e3_stage_cycles_total counter
e3_stage_cycles_total{node="leaf1",stage="customer_in",worker="0"} 250
# HELP e3_worker_clock_probe_core_cycles_total Core cycles of the worker's clock probes: over e3_worker_clock_probe_tsc_cycles_total, the core's clock against the TSC's.
# TYPE e3_worker_clock_probe_core_cycles_total counter
e3_worker_clock_probe_core_cycles_total{node="leaf1",worker="0"} 8192
# HELP e3_worker_clock_probe_tsc_cycles_total TSC cycles the worker's clock probes took.
# TYPE e3_worker_clock_probe_tsc_cycles_total counter
e3_worker_clock_probe_tsc_cycles_total{node="leaf1",worker="0"} 4096
# HELP e3_worker_stalls_total Turns of the worker's poll loop longer than over (100us, 1ms, 10ms): it was away from its queues that long (its CPU taken, or held up).
# TYPE e3_worker_stalls_total counter
e3_worker_stalls_total{node="leaf1",over="100us",worker="0"} 5
e3_worker_stalls_total{node="leaf1",over="10ms",worker="0"} 0
e3_worker_stalls_total{node="leaf1",over="1ms",worker="0"} 2
# HELP e3_worker_stall_cycles_total TSC cycles of the worker's turns longer than 100us.
# TYPE e3_worker_stall_cycles_total counter
e3_worker_stall_cycles_total{node="leaf1",worker="0"} 9e+06
`, names: []string{"e3_datapath_up", "e3_port_drops_total", "e3_service_flooded_packets_total",
			"e3_circuit_tx_packets_total", "e3_bfd_session_downs_total", "e3_stage_cycles_total", "e3_label_packets_total",
			"e3_worker_clock_probe_core_cycles_total", "e3_worker_clock_probe_tsc_cycles_total",
			"e3_worker_stalls_total", "e3_worker_stall_cycles_total"}},
		{name: "per-label series when asked", labels: true, want: `
# HELP e3_label_packets_total Frames looked up on the label entry.
# TYPE e3_label_packets_total counter
e3_label_packets_total{label="17",node="leaf1"} 12
`, names: []string{"e3_label_packets_total"}},
		{name: "a datapath that does not answer is down, with nothing else", fail: "bfd_list", want: `
# HELP e3_datapath_up 1 if the datapath answered this scrape; without it, no other e3_ metric is exported.
# TYPE e3_datapath_up gauge
e3_datapath_up{node="leaf1"} 0
`, names: []string{"e3_datapath_up", "e3_port_rx_packets_total", "e3_service_macs"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := New("leaf1", fakeDP{answers: answers, fail: map[string]bool{tc.fail: true}}, tc.labels, time.Second, log)
			reg := prometheus.NewPedanticRegistry()
			reg.MustRegister(c)
			if err := testutil.GatherAndCompare(reg, strings.NewReader(tc.want), tc.names...); err != nil {
				t.Error(err)
			}
		})
	}
}
