package agent

import (
	"testing"
	"time"

	"github.com/e3fabric/e3fabric/control/internal/nodestate"
)

// Only the handles asked for reach the status, a late request key still
// gets its events, and however many events arrive, few are kept.
func TestOAMLogKeepsAskedHandlesWithinBounds(t *testing.T) {
	now := time.Now().UnixNano()
	ev := func(h uint32, n int) []nodestate.OAMEvent {
		out := make([]nodestate.OAMEvent, n)
		for i := range out {
			out[i] = nodestate.OAMEvent{Kind: "egress", Handle: h, Seq: uint32(i), TimeNS: now}
		}
		return out
	}
	l := oamLog{handles: map[uint32]string{7: "oam/7"}}
	l.take(ev(7, 3))
	l.take(ev(666, 10_000)) // a neighbour's forged echoes
	if len(l.events) != 3 || len(l.pending) != oamMaxPending || l.dropped != 10_000-oamMaxPending {
		t.Fatalf("events %d pending %d dropped %d", len(l.events), len(l.pending), l.dropped)
	}
	// A key that comes after its events (another node's request): adopted.
	l.take(ev(8, 2))
	l.handles[8] = "oam/8"
	l.adopt()
	if len(l.events) != 5 {
		t.Fatalf("events %d after adopting handle 8, want 5", len(l.events))
	}
	l.take(ev(7, 10_000))
	if len(l.events) != oamMaxEvents {
		t.Fatalf("events %d, want the cap %d", len(l.events), oamMaxEvents)
	}
	old := nodestate.OAMEvent{Kind: "egress", Handle: 7, TimeNS: now - int64(2*nodestate.OAMKeep)}
	l.events = []nodestate.OAMEvent{old}
	l.take(nil)
	if len(l.events) != 0 {
		t.Fatal("an event older than OAMKeep kept")
	}
}
