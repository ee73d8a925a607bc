package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/e3fabric/e3fabric/control/internal/model"
)

// streamInterval is how often GET /v1/stream sends the fabric's state.
const streamInterval = time.Second

// stream sends the fabric's state (model.FabricView) as a Server-Sent
// Events stream, one `fabric` event every streamInterval, until the client
// goes. The fabric page follows it.
func (s *Server) stream(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	tick := time.NewTicker(streamInterval)
	defer tick.Stop()
	for {
		if snap, err := s.c.Snapshot(r.Context()); err == nil {
			view := model.FabricView{Time: time.Now().UTC(), Generation: snap.Generation,
				Nodes: nodeViews(snap), Links: linkViews(snap)}
			b, err := json.Marshal(view)
			if err != nil {
				return
			}
			// The server's write timeout is for requests; this one lasts.
			rc.SetWriteDeadline(time.Now().Add(30 * time.Second))
			if _, err := fmt.Fprintf(w, "event: fabric\ndata: %s\n\n", b); err != nil {
				return
			}
			if err := rc.Flush(); err != nil {
				return
			}
		}
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
		}
	}
}
