package httpguard

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
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
	closeRelease := sync.OnceFunc(func() { close(release) })
	defer closeRelease() // before srv.Close, which waits for the handlers
	addr := srv.Listener.Addr().String()

	for i := 0; i < 10; i++ { // connect, never send a request
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
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
	// The server may close the first request's connection only after the
	// client has its answer; that connection is busy until then.
	if !waitBusy(g, 0) {
		t.Fatalf("stats %+v: the first request's connection never closed", g.Stats())
	}
	// Three requests in flight fill it with busy connections. They start
	// one at a time: a connection accepted but not yet active counts as
	// idle, so a third newcomer could evict the first before it is busy.
	errs := make(chan error, 3)
	for i := 1; i <= 3; i++ {
		go func() { errs <- get("/slow") }()
		if !waitBusy(g, i) {
			t.Fatalf("stats %+v: never %d busy connections", g.Stats(), i)
		}
	}
	if err := get("/"); err == nil {
		t.Fatal("a fourth connection got in while three were busy")
	}
	if g.Stats().Refused == 0 {
		t.Fatal("refusal not counted")
	}
	closeRelease()
	for i := 0; i < 3; i++ {
		if err := <-errs; err != nil {
			t.Fatalf("busy request: %v", err)
		}
	}
}

// waitBusy waits up to ten seconds for g to hold exactly n busy connections.
func waitBusy(g *ConnGuard, n int) bool {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		g.mu.Lock()
		busy := 0
		for _, s := range g.conns {
			if s.busy {
				busy++
			}
		}
		g.mu.Unlock()
		if busy == n {
			return true
		}
	}
	return false
}
