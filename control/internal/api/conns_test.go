package api

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// A guard full of idle connections closes the oldest to let a new client
// in; one full of busy ones refuses the newcomer.
func TestConnGuard(t *testing.T) {
	g := NewConnGuard(3)
	release := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			<-release
		}
		io.WriteString(w, "ok")
	}))
	srv.Listener = g.Listener(srv.Listener)
	srv.Config.ConnState = g.ConnState
	srv.Start()
	defer srv.Close()
	addr := srv.Listener.Addr().String()

	var idle []net.Conn
	for i := 0; i < 10; i++ { // connect, never send a request
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		idle = append(idle, c)
	}
	get := func(path string) error {
		cl := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
		resp, err := cl.Get(srv.URL + path)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	if err := get("/"); err != nil {
		t.Fatalf("a request behind 10 idle connections: %v", err)
	}
	st := g.Stats()
	if st.Evicted < 8 || st.Refused != 0 {
		t.Fatalf("stats %+v: want at least 8 idle evicted, none refused", st)
	}
	// Three requests in flight fill it with busy connections.
	errs := make(chan error, 3)
	for i := 0; i < 3; i++ {
		go func() { errs <- get("/slow") }()
	}
	deadline := time.Now().Add(10 * time.Second)
	for busy := 0; busy < 3 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		g.mu.Lock()
		busy = 0
		for _, s := range g.conns {
			if s.busy {
				busy++
			}
		}
		g.mu.Unlock()
	}
	if err := get("/"); err == nil {
		t.Fatal("a fourth connection got in while three were busy")
	}
	if g.Stats().Refused == 0 {
		t.Fatal("refusal not counted")
	}
	close(release)
	for i := 0; i < 3; i++ {
		if err := <-errs; err != nil {
			t.Fatalf("busy request: %v", err)
		}
	}
}
