package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/e3fabric/e3fabric/control/internal/model"
)

// streamInterval is how often GET /v1/stream sends the fabric's state.
const streamInterval = time.Second

// hub computes the fabric's view once per tick, while anyone follows it,
// and hands the same bytes to every subscriber: a thousand pages cost one
// read of the controller's state a second, not a thousand. Subscribers are
// capped per token.
type hub struct {
	s        *Server
	perToken int
	mu       sync.Mutex
	subs     map[chan []byte]struct{}
	byToken  map[role]int
	running  bool
	refused  atomic.Uint64
}

func newHub(s *Server, perToken int) *hub {
	return &hub{s: s, perToken: perToken, subs: map[chan []byte]struct{}{}, byToken: map[role]int{}}
}

// subscribe adds a subscriber for tok's role, or returns nil when that
// token has its streams already.
func (h *hub) subscribe(tok role) chan []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.byToken[tok] >= h.perToken {
		h.refused.Add(1)
		return nil
	}
	h.byToken[tok]++
	ch := make(chan []byte, 1)
	h.subs[ch] = struct{}{}
	if !h.running {
		h.running = true
		go h.run()
	}
	return ch
}

func (h *hub) unsubscribe(tok role, ch chan []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.subs, ch)
	h.byToken[tok]--
}

// run ticks while there are subscribers.
func (h *hub) run() {
	tick := time.NewTicker(streamInterval)
	defer tick.Stop()
	for {
		b := h.view()
		h.mu.Lock()
		if len(h.subs) == 0 {
			h.running = false
			h.mu.Unlock()
			return
		}
		for ch := range h.subs {
			select { // a slow subscriber gets the newest view, never a queue
			case <-ch:
			default:
			}
			if b != nil {
				ch <- b
			}
		}
		h.mu.Unlock()
		<-tick.C
	}
}

func (h *hub) view() []byte {
	ctx, cancel := context.WithTimeout(context.Background(), streamInterval)
	defer cancel()
	snap, err := h.s.c.Snapshot(ctx)
	if err != nil {
		return nil
	}
	view := model.FabricView{Time: time.Now().UTC(), Generation: snap.Generation,
		Nodes: nodeViews(snap), Links: linkViews(snap)}
	b, err := json.Marshal(view)
	if err != nil {
		return nil
	}
	return fmt.Appendf(nil, "event: fabric\ndata: %s\n\n", b)
}

// stream sends the fabric's state (model.FabricView) as a Server-Sent
// Events stream, one `fabric` event every streamInterval, until the client
// goes. The fabric page follows it.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, tok role) {
	ch := s.hub.subscribe(tok)
	if ch == nil {
		w.Header().Set("Retry-After", "10")
		writeError(w, http.StatusTooManyRequests, "too_many_streams",
			fmt.Sprintf("this token follows %d streams already", s.hub.perToken))
		return
	}
	defer s.hub.unsubscribe(tok, ch)
	rc := http.NewResponseController(w)
	// The server's read timeout is for reading requests: a stream reads
	// nothing more, and lasts.
	rc.SetReadDeadline(time.Time{})
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc.Flush()
	for {
		select {
		case <-r.Context().Done():
			return
		case b := <-ch:
			// The server's write timeout is for requests; this one lasts.
			rc.SetWriteDeadline(time.Now().Add(30 * time.Second))
			if _, err := w.Write(b); err != nil {
				return
			}
			if err := rc.Flush(); err != nil {
				return
			}
		}
	}
}
