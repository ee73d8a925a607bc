package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/e3fabric/e3fabric/control/internal/nodestate"
)

// Pseudowire ping and trace (docs/operations.md): the controller writes a
// request under every node's desired prefix (nodestate.OAMRequest, key
// oam/<handle>, on a short lease), with the probes for the origin alone;
// the origin's agent has the datapath send them once per key revision.
// Every agent reports, in its status, the datapath's PW OAM events of the
// handles asked for, where the controller collects the answers. Events of
// other handles (a neighbour's forged echo) never reach etcd, and what is
// kept is capped: the status stays small whatever arrives from the wire.

// Bounds of what the agent keeps of the log.
const (
	oamMaxEvents  = 256             // reported, newest kept
	oamMaxPending = 64              // of handles not asked for (yet), newest kept
	oamPendingAge = 2 * time.Second // how long one waits for its request key
)

// oamLog is what the agent keeps of the datapath's log; the poll loop owns
// it (under the agent's lock).
type oamLog struct {
	cursor  uint64               // the datapath's last index read
	events  []nodestate.OAMEvent // of handles asked for, the last OAMKeep, at most oamMaxEvents
	pending []nodestate.OAMEvent // of other handles, in case their key comes late
	sent    map[string]int64     // request keys done, by mod revision
	handles map[uint32]string    // handles asked for -> their request key
	dropped uint64               // events of handles never asked for
}

// isOAMKey says whether a desired key (below the node's prefix) is a
// request rather than a fragment.
func isOAMKey(k string) bool { return strings.HasPrefix(k, nodestate.OAMInfix) }

// oamRequest takes request key k: its handle is reported from now on, and
// its probes, if any, sent once per revision; a.mu held.
func (a *Agent) oamRequest(k string, v []byte, mod int64) {
	if a.oam.sent == nil {
		a.oam.sent, a.oam.handles = map[string]int64{}, map[uint32]string{}
	}
	if a.oam.sent[k] == mod {
		return
	}
	a.oam.sent[k] = mod
	var req nodestate.OAMRequest
	if err := json.Unmarshal(v, &req); err != nil {
		a.log.Warn("pw oam request refused", "key", k, "err", err)
		return
	}
	a.oam.handles[req.Handle] = k
	a.oam.adopt()
	if len(req.Probes) == 0 {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), a.cfg.EtcdTimeout)
		defer cancel()
		for _, p := range req.Probes {
			params := map[string]any{"service": req.Service, "handle": req.Handle, "seq": p.Seq, "source": p.Source}
			if p.TTL != 0 {
				params["ttl"] = p.TTL
			}
			if err := a.cfg.DP.Call(ctx, "pw_ping", params, nil); err != nil {
				a.log.Warn("pw ping", "handle", req.Handle, "seq", p.Seq, "err", err)
			}
		}
		poke(a.pollNow) // the log has something to report
	}()
}

// oamForget drops request key k, and its handle's events; a.mu held.
func (a *Agent) oamForget(k string) {
	delete(a.oam.sent, k)
	for h, key := range a.oam.handles {
		if key == k {
			delete(a.oam.handles, h)
		}
	}
	a.oam.events = a.oam.keep(a.oam.events, nodestate.OAMKeep, oamMaxEvents, true)
}

// keep filters events to those younger than age (and, with asked, of
// handles asked for), newest max.
func (l *oamLog) keep(events []nodestate.OAMEvent, age time.Duration, max int, asked bool) []nodestate.OAMEvent {
	old := time.Now().Add(-age).UnixNano()
	out := events[:0:0]
	for _, e := range events {
		if _, ok := l.handles[e.Handle]; e.TimeNS >= old && (ok || !asked) {
			out = append(out, e)
		}
	}
	if len(out) > max {
		out = out[len(out)-max:]
	}
	return out
}

// take files new events: those of handles asked for are reported, the
// others wait a little for their key, then are counted and dropped.
func (l *oamLog) take(events []nodestate.OAMEvent) {
	for _, e := range events {
		if _, asked := l.handles[e.Handle]; asked {
			l.events = append(l.events, e)
		} else {
			l.pending = append(l.pending, e)
		}
	}
	before := len(l.pending)
	l.pending = l.keep(l.pending, oamPendingAge, oamMaxPending, false)
	l.dropped += uint64(before - len(l.pending))
	l.events = l.keep(l.events, nodestate.OAMKeep, oamMaxEvents, true)
}

// adopt moves the pending events of handles now asked for to the reported.
func (l *oamLog) adopt() {
	rest := l.pending[:0:0]
	for _, e := range l.pending {
		if _, asked := l.handles[e.Handle]; asked {
			l.events = append(l.events, e)
		} else {
			rest = append(rest, e)
		}
	}
	l.pending = rest
	l.events = l.keep(l.events, nodestate.OAMKeep, oamMaxEvents, true)
}

// pollOAM reads the datapath's new log entries and files them (take); it
// reports whether anything changed.
func (a *Agent) pollOAM(ctx context.Context, restarted bool) (bool, error) {
	var r struct {
		Last   uint64               `json:"last"`
		Events []nodestate.OAMEvent `json:"events"`
	}
	a.mu.Lock()
	since := a.oam.cursor
	a.mu.Unlock()
	if restarted {
		since = 0
	}
	if err := a.cfg.DP.Call(ctx, "pw_oam_log", map[string]uint64{"since": since}, &r); err != nil {
		return false, fmt.Errorf("pw_oam_log: %w", err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if r.Last < since { // the datapath restarted: its log starts again
		a.oam.cursor = 0
		return false, nil
	}
	a.oam.cursor = r.Last
	n := len(a.oam.events)
	a.oam.take(r.Events)
	return len(a.oam.events) != n || len(r.Events) > 0, nil
}
