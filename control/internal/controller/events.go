package controller

import (
	"fmt"
	"time"

	"github.com/e3fabric/e3fabric/control/internal/model"
	"github.com/e3fabric/e3fabric/control/internal/nodestate"
)

// maxEvents bounds the event log (the oldest go first).
const maxEvents = 1000

// record appends events to the log. c.mu held.
func (c *Controller) record(evs ...model.Event) {
	for _, e := range evs {
		c.log.Info("event", "kind", e.Kind, "object", e.Object, "detail", e.Detail, "took_ms", e.TookMS)
		c.metrics.observeEvent(e)
	}
	c.events = append(c.events, evs...)
	if n := len(c.events) - maxEvents; n > 0 {
		c.events = append(c.events[:0:0], c.events[n:]...)
	}
}

// Events returns the event log, oldest first: what this replica saw while
// it led.
func (c *Controller) Events() []model.Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]model.Event(nil), c.events...)
}

// viewEvents describes how the fabric changed from old to new.
func viewEvents(now time.Time, old, new downView, linkName func(int) string) []model.Event {
	var out []model.Event
	for _, n := range keys(union(old.nodes, new.nodes)) {
		if old.nodes[n] != new.nodes[n] {
			out = append(out, model.Event{Time: now, Kind: map[bool]string{true: "node-down", false: "node-up"}[new.nodes[n]], Object: n})
		}
	}
	ids := map[int]bool{}
	for id := range old.links {
		ids[id] = true
	}
	for id := range new.links {
		ids[id] = true
	}
	for _, id := range intKeys(ids) {
		if old.links[id] != new.links[id] {
			out = append(out, model.Event{Time: now, Kind: map[bool]string{true: "link-down", false: "link-up"}[new.links[id]], Object: linkName(id)})
		}
	}
	for _, p := range keys(union(old.ports, new.ports)) {
		if old.ports[p] != new.ports[p] {
			out = append(out, model.Event{Time: now, Kind: map[bool]string{true: "site-port-down", false: "site-port-up"}[new.ports[p]], Object: p})
		}
	}
	return out
}

// statusEvents describes what one agent's new report changes: its agent
// coming or going, and its datapath's BFD sessions leaving Up or becoming
// usable again. A session that fails has already moved the protected
// traffic behind it to its backup, in the datapath (local repair): a link
// session the traffic leaving over that link, a path check the traffic on
// that path.
func statusEvents(now time.Time, node string, old, new *nodestate.NodeStatus, sessionName func(node string, b nodestate.BFDStatus) string) []model.Event {
	var out []model.Event
	switch {
	case old == nil && new != nil:
		out = append(out, model.Event{Time: now, Kind: "agent-up", Object: node})
	case old != nil && new == nil:
		return append(out, model.Event{Time: now, Kind: "agent-down", Object: node, Detail: "its datapath keeps forwarding"})
	}
	if new == nil {
		return out
	}
	was := map[uint32]nodestate.BFDStatus{}
	if old != nil {
		for _, b := range old.BFD {
			was[b.ID] = b
		}
	}
	for _, b := range new.BFD {
		o, ok := was[b.ID]
		switch {
		case ok && o.Usable && !b.Usable:
			out = append(out, model.Event{Time: now, Kind: "local-repair", Object: node + " " + sessionName(node, b),
				Detail: fmt.Sprintf("bfd %s (%s): protected traffic moved to its backups by the datapath", b.State, b.Diag)})
		case ok && !o.Usable && b.Usable:
			out = append(out, model.Event{Time: now, Kind: "restored", Object: node + " " + sessionName(node, b),
				Detail: "bfd up for its wait-to-restore time: traffic back on primaries"})
		}
	}
	return out
}

func union(a, b map[string]bool) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}
