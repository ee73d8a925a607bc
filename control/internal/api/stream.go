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

// hub computes each audience's view once per tick, while anyone follows
// it, and hands the same bytes to every subscriber of that audience: a
// thousand pages cost one read of the controller's state a second, not a
// thousand. The fabric's tokens see the fabric (a `fabric` event); a
// tenant's tokens see the tenant's services (a `services` event).
// Subscribers are capped per token.
type hub struct {
	s        *Server
	perToken int
	mu       sync.Mutex
	subs     map[chan []byte]principal
	byToken  map[principal]int
	running  bool
	refused  atomic.Uint64
}

func newHub(s *Server, perToken int) *hub {
	return &hub{s: s, perToken: perToken, subs: map[chan []byte]principal{}, byToken: map[principal]int{}}
}

// subscribe adds a subscriber for who, or returns nil when that token has
// its streams already.
func (h *hub) subscribe(who principal) chan []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.byToken[who] >= h.perToken {
		h.refused.Add(1)
		return nil
	}
	h.byToken[who]++
	ch := make(chan []byte, 1)
	h.subs[ch] = who
	if !h.running {
		h.running = true
		go h.run()
	}
	return ch
}

func (h *hub) unsubscribe(who principal, ch chan []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.subs, ch)
	h.byToken[who]--
}

// run ticks while there are subscribers.
func (h *hub) run() {
	tick := time.NewTicker(streamInterval)
	defer tick.Stop()
	for {
		h.mu.Lock()
		audiences := map[string]bool{}
		for _, who := range h.subs {
			audiences[who.tenant] = true
		}
		h.mu.Unlock()
		views := h.views(audiences)
		h.mu.Lock()
		if len(h.subs) == 0 {
			h.running = false
			h.mu.Unlock()
			return
		}
		for ch, who := range h.subs {
			select { // a slow subscriber gets the newest view, never a queue
			case <-ch:
			default:
			}
			if b := views[who.tenant]; b != nil {
				ch <- b
			}
		}
		h.mu.Unlock()
		<-tick.C
	}
}

// views computes the view of each audience ("": the fabric's; else a
// tenant's) from one snapshot.
func (h *hub) views(audiences map[string]bool) map[string][]byte {
	ctx, cancel := context.WithTimeout(context.Background(), streamInterval)
	defer cancel()
	snap, err := h.s.c.Snapshot(ctx)
	if err != nil {
		return nil
	}
	now := time.Now().UTC()
	out := map[string][]byte{}
	for a := range audiences {
		event, v := "fabric", any(model.FabricView{Time: now, Generation: snap.Generation,
			Nodes: nodeViews(snap), Links: linkViews(snap)})
		if a != "" {
			svcs := []model.ServiceView{}
			for _, n := range snap.ServiceNames() {
				if rec := snap.Services[n]; rec.Spec.Tenant == a {
					svcs = append(svcs, h.s.view(snap, rec, false))
				}
			}
			event, v = "services", model.TenantStreamView{Time: now, Tenant: a, Services: svcs}
		}
		if b, err := json.Marshal(v); err == nil {
			out[a] = fmt.Appendf(nil, "event: %s\ndata: %s\n\n", event, b)
		}
	}
	return out
}

// stream sends the fabric's state (model.FabricView) as a Server-Sent
// Events stream, one `fabric` event every streamInterval, until the client
// goes. The fabric page follows it.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, tok principal) {
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
