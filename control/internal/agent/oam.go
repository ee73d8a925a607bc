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
// request under the node's desired prefix (nodestate.OAMRequest, key
// oam/<handle>, on a short lease); the agent has the datapath send it once
// per key revision, and reports the datapath's PW OAM log in its status,
// where the controller collects the answers from every node.

// oamLog is what the agent keeps of the datapath's log; the poll loop owns
// it (under the agent's lock).
type oamLog struct {
	cursor uint64               // the datapath's last index read
	events []nodestate.OAMEvent // the last OAMKeep of them
	sent   map[string]int64     // request keys done, by mod revision
}

// isOAMKey says whether a desired key (below the node's prefix) is a
// request rather than a fragment.
func isOAMKey(k string) bool { return strings.HasPrefix(k, nodestate.OAMInfix) }

// oamRequest sends request key k's probes, once per revision; a.mu held.
func (a *Agent) oamRequest(k string, v []byte, mod int64) {
	if a.oam.sent == nil {
		a.oam.sent = map[string]int64{}
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

// oamForget drops request key k; a.mu held.
func (a *Agent) oamForget(k string) { delete(a.oam.sent, k) }

// pollOAM reads the datapath's new log entries and keeps the last
// OAMKeep of them; it reports whether anything changed.
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
	old := time.Now().Add(-nodestate.OAMKeep).UnixNano()
	kept := a.oam.events[:0:0]
	for _, e := range a.oam.events {
		if e.TimeNS >= old {
			kept = append(kept, e)
		}
	}
	changed := len(kept) != len(a.oam.events) || len(r.Events) > 0
	a.oam.events = append(kept, r.Events...)
	return changed, nil
}
