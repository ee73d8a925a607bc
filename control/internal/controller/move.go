package controller

import (
	"context"
	"fmt"
	"time"

	"github.com/e3fabric/e3fabric/control/internal/model"
)

// Moving an E-Line's end (docs/operations.md, "Live migration"). For the
// move's window the end that stays sends to both places (the datapath's
// E-Line branch) and takes both places' frames on its one label, and the
// new place is programmed as it will stay; then the old place is removed.
// The label of the end that stays is named after the node its peer was on
// when it was allocated (ServiceRecord.Peers), so no move changes it.

// DefaultMoveWindow is how long both places deliver when a move names no
// window.
const DefaultMoveWindow = 30 * time.Second

// hasCircuit says whether spec has circuit c.
func hasCircuit(spec *model.ServiceSpec, c model.Circuit) bool {
	for _, x := range spec.Circuits {
		if x.Key() == c.Key() {
			return true
		}
	}
	return false
}

// moved is spec with mv's circuit in place of the one it moves from.
func moved(spec *model.ServiceSpec, mv *model.Move) *model.ServiceSpec {
	out := *spec
	out.Circuits = make([]model.Circuit, len(spec.Circuits))
	for i, c := range spec.Circuits {
		if c.Key() == mv.From.Key() {
			c = mv.To
		}
		out.Circuits[i] = c
	}
	return &out
}

// MoveCircuit starts moving E-Line name's end from circuit from to circuit
// to: both receive and send for window, then to replaces from.
func (c *Controller) MoveCircuit(ctx context.Context, name string, from, to model.Circuit, window time.Duration) error {
	return c.withLeader(func(st *state) error {
		old := st.services[name]
		if old == nil {
			return errorf(KindNotFound, "service %s not found", name)
		}
		spec := old.rec.Spec
		switch _, _, site := spec.SiteEnd(); {
		case spec.Type != model.ELine:
			return errorf(KindInvalid, "service %s is an E-LAN: it learns a moved endpoint from its announcement, nothing to move", name)
		case site:
			return errorf(KindInvalid, "service %s has an end on a multi-homed site: not moved", name)
		case old.rec.Move != nil:
			return errorf(KindConflict, "service %s: circuit %s is moving to %s until %s", name, old.rec.Move.From,
				old.rec.Move.To, old.rec.Move.Until.Format(time.RFC3339))
		case !hasCircuit(&spec, from):
			return errorf(KindNotFound, "service %s has no circuit %s", name, from)
		}
		stay := spec.Circuits[0]
		if stay.Key() == from.Key() {
			stay = spec.Circuits[1]
		}
		switch {
		case to.Node == from.Node:
			return errorf(KindInvalid, "circuit %s is on %s already: a move goes to another node", to, from.Node)
		case to.Node == stay.Node:
			return errorf(KindInvalid, "circuit %s is on %s, the other end's node: not a move", to, stay.Node)
		}
		after := moved(&spec, &model.Move{From: from, To: to})
		if err := validate(st, after); err != nil {
			return err
		}
		if err := admitTenants(st, []model.ServiceSpec{*after}, map[string]bool{name: true}); err != nil {
			return err
		}
		if window <= 0 {
			window = DefaultMoveWindow
		}
		rec, err := withRoles(st.alloc, old.rec)
		if err != nil {
			return err
		}
		rec.Move = &model.Move{From: from, To: to, Until: time.Now().Add(window).UTC().Truncate(time.Millisecond)}
		moving := &svcState{rec: rec}
		ch := newChange()
		full, live := c.graphs(st, st.topo)
		if err := c.plan(st, ch, st.topo, full, live, spec, moving, false); err != nil {
			ch.abort()
			return err
		}
		if err := c.commit(ctx, st, ch); err != nil {
			return err
		}
		c.record(model.Event{Time: time.Now(), Kind: "move", Object: name, Detail: fmt.Sprintf(
			"circuit %s moving to %s: both deliver until %s", from, to, rec.Move.Until.Format(time.RFC3339))})
		return nil
	})
}

// finishMoves ends the moves whose window has passed: the new place
// replaces the old one, which is removed; the end that stays keeps its
// label. One transaction for all.
func (c *Controller) finishMoves(ctx context.Context, now time.Time) {
	_ = c.withLeader(func(st *state) error {
		ch := newChange()
		var events []model.Event
		full, live := c.graphs(st, st.topo)
		for _, name := range keys(st.moves) {
			old := st.services[name]
			mv := old.rec.Move
			if mv == nil || now.Before(mv.Until) {
				continue
			}
			spec := moved(&old.rec.Spec, mv)
			stay := spec.Circuits[0].Node
			if stay == mv.To.Node {
				stay = spec.Circuits[1].Node
			}
			rec, err := withRoles(st.alloc, old.rec)
			if err != nil {
				c.log.Error("finishing a move", "service", name, "err", err)
				continue
			}
			rec.Move = nil
			peer := mv.From.Node
			if p, ok := old.rec.Peers[stay]; ok {
				peer = p
			}
			rec.Peers = map[string]string{stay: peer}
			if err := c.plan(st, ch, st.topo, full, live, *spec, &svcState{rec: rec}, false); err != nil {
				c.log.Error("finishing a move", "service", name, "err", err)
				continue
			}
			events = append(events, model.Event{Time: now, Kind: "move", Object: name,
				Detail: fmt.Sprintf("circuit %s moved to %s; %s removed", mv.From, mv.To, mv.From)})
		}
		if len(ch.put) == 0 {
			return nil
		}
		if err := c.commit(ctx, st, ch); err != nil {
			c.log.Error("finishing moves", "err", err)
			return err
		}
		c.record(events...)
		return nil
	})
}
