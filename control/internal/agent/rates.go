package agent

import (
	"cmp"
	"slices"
	"time"

	"github.com/e3fabric/e3fabric/control/internal/dprpc"
	"github.com/e3fabric/e3fabric/control/internal/nodestate"
)

// rateWindow is how far apart the two samples of a rate are, at least.
const rateWindow = time.Second

type portSample struct {
	at    time.Time
	stats dprpc.PortStats
}

// portRates turns each port's counters, polled often, into rates over the
// last rateWindow or more. Only the poll loop uses it (under the agent's
// lock).
type portRates struct {
	base map[string]portSample          // the older sample of each port
	last map[string]nodestate.PortStats // the last rates, kept until the next window closes
}

// update takes a port's counters polled at now and returns its stats.
func (r *portRates) update(port string, c dprpc.PortStats, now time.Time) *nodestate.PortStats {
	if r.base == nil {
		r.base, r.last = map[string]portSample{}, map[string]nodestate.PortStats{}
	}
	out := r.last[port]
	out.RxPkts, out.RxBytes, out.TxPkts, out.TxBytes = c.RxPkts, c.RxBytes, c.TxPkts, c.TxBytes
	b, ok := r.base[port]
	switch dt := now.Sub(b.at).Seconds(); {
	case !ok || c.RxPkts < b.stats.RxPkts || c.TxPkts < b.stats.TxPkts: // new, or cleared
		r.base[port] = portSample{now, c}
	case dt >= rateWindow.Seconds():
		rate := func(x, y uint64) float64 { return float64(x-y) / dt }
		out.RxPPS, out.TxPPS = rate(c.RxPkts, b.stats.RxPkts), rate(c.TxPkts, b.stats.TxPkts)
		out.RxBPS, out.TxBPS = 8*rate(c.RxBytes, b.stats.RxBytes), 8*rate(c.TxBytes, b.stats.TxBytes)
		r.base[port] = portSample{now, c}
	}
	r.last[port] = out
	return &out
}

// serviceRates turns the services' ingress counters, read once per
// rateWindow (service_list is as long as the node's services), into rates
// by service name. Only the poll loop uses it.
type serviceRates struct {
	at    time.Time
	bytes map[uint32]uint64 // rx_bytes by service id at `at`
}

func (r *serviceRates) due(now time.Time) bool { return now.Sub(r.at) >= rateWindow }

// update takes every service's counters read at now and returns the
// busiest services' rates (nil on the first read).
func (r *serviceRates) update(list []dprpc.ServiceInfo, now time.Time) map[string]float64 {
	dt := now.Sub(r.at).Seconds()
	first := r.bytes == nil
	var out map[string]float64
	next := make(map[uint32]uint64, len(list))
	for _, s := range list {
		next[s.ID] = s.Stats.RxBytes
		prev, ok := r.bytes[s.ID]
		if first || !ok || s.Stats.RxBytes <= prev || s.Name == "" {
			continue
		}
		if out == nil {
			out = map[string]float64{}
		}
		out[s.Name] += 8 * float64(s.Stats.RxBytes-prev) / dt
	}
	r.at, r.bytes = now, next
	if len(out) > nodestate.MaxServiceRates {
		names := make([]string, 0, len(out))
		for n := range out {
			names = append(names, n)
		}
		slices.SortFunc(names, func(a, b string) int { return cmp.Compare(out[b], out[a]) })
		for _, n := range names[nodestate.MaxServiceRates:] {
			delete(out, n)
		}
	}
	return out
}
