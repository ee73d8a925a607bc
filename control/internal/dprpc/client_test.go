package dprpc

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/e3fabric/e3fabric/control/internal/dpconfig"
)

// fakeServer speaks the datapath's framing on a Unix socket: one request
// object in, one response object and "\n" out. handle returns the result
// or an error object; returning hang=true leaves the request unanswered;
// closeConn closes the connection instead of answering.
type fakeServer struct {
	t      *testing.T
	ln     net.Listener
	path   string
	mu     sync.Mutex
	conns  []net.Conn
	reqs   []map[string]any
	handle func(method string, params json.RawMessage) (result any, rpcErr *Error, hang, closeConn bool)
}

func newFakeServer(t *testing.T) *fakeServer {
	path := filepath.Join(t.TempDir(), "cpD-dp.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	s := &fakeServer{t: t, ln: ln, path: path}
	t.Cleanup(s.close)
	go s.serve()
	return s
}

func (s *fakeServer) close() {
	s.ln.Close()
	s.dropConns()
}

// dropConns closes every open connection, as a restarting datapath does.
func (s *fakeServer) dropConns() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		c.Close()
	}
	s.conns = nil
}

func (s *fakeServer) serve() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns = append(s.conns, c)
		s.mu.Unlock()
		go s.serveConn(c)
	}
}

func (s *fakeServer) serveConn(c net.Conn) {
	dec := json.NewDecoder(c)
	for {
		var req struct {
			JSONRPC string          `json:"jsonrpc"`
			Method  string          `json:"method"`
			Params  json.RawMessage `json:"params"`
			ID      json.RawMessage `json:"id"`
		}
		if err := dec.Decode(&req); err != nil {
			return
		}
		s.mu.Lock()
		s.reqs = append(s.reqs, map[string]any{"jsonrpc": req.JSONRPC, "method": req.Method, "params": string(req.Params)})
		handle := s.handle
		s.mu.Unlock()
		result, rpcErr, hang, closeConn := handle(req.Method, req.Params)
		if closeConn {
			c.Close()
			return
		}
		if hang {
			continue
		}
		resp := map[string]any{"jsonrpc": "2.0", "id": req.ID}
		if rpcErr != nil {
			resp["error"] = map[string]any{"code": rpcErr.Code, "message": rpcErr.Message}
		} else {
			resp["result"] = result
		}
		b, _ := json.Marshal(resp)
		if _, err := c.Write(append(b, '\n')); err != nil {
			return
		}
	}
}

func (s *fakeServer) setHandler(h func(string, json.RawMessage) (any, *Error, bool, bool)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handle = h
}

func answer(result any) func(string, json.RawMessage) (any, *Error, bool, bool) {
	return func(string, json.RawMessage) (any, *Error, bool, bool) { return result, nil, false, false }
}

func TestCallResultAndRequestShape(t *testing.T) {
	s := newFakeServer(t)
	s.setHandler(func(method string, params json.RawMessage) (any, *Error, bool, bool) {
		if method == "system_info" {
			return map[string]any{"version": "0.1", "boot_id": "b-1", "workers": 1, "poll_mode": "adaptive",
				"uptime_s": 1.5, "limits": map[string]int{"ports": 64}}, nil, false, false
		}
		return map[string]any{"changed": true}, nil, false, false
	})
	c := New(s.path, time.Second)
	defer c.Close()
	ctx := context.Background()

	info, err := c.SystemInfo(ctx)
	if err != nil || info.BootID != "b-1" || info.Limits["ports"] != 64 {
		t.Fatalf("SystemInfo = %+v, %v", info, err)
	}
	changed, err := c.CircuitAdd(ctx, dpconfig.Circuit{ID: 3, Port: "c0", VLAN: dpconfig.Untagged, Service: 9})
	if err != nil || !changed {
		t.Fatalf("CircuitAdd = %v, %v", changed, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.reqs) != 2 {
		t.Fatalf("server saw %d requests", len(s.reqs))
	}
	r := s.reqs[1]
	if r["jsonrpc"] != "2.0" || r["method"] != "circuit_add" ||
		r["params"] != `{"id":3,"port":"c0","vlan":"untagged","service":9}` {
		t.Errorf("request %v", r)
	}
	if p := s.reqs[0]["params"]; p != "" {
		t.Errorf("system_info sent params %q, want none", p)
	}
}

func TestCallTypedError(t *testing.T) {
	s := newFakeServer(t)
	s.setHandler(func(method string, _ json.RawMessage) (any, *Error, bool, bool) {
		return nil, &Error{Code: CodeBusy, Message: "nexthop 1 is used by nhlfe 4"}, false, false
	})
	c := New(s.path, time.Second)
	defer c.Close()
	err := c.NexthopDel(context.Background(), 1)
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeBusy || e.Method != "nexthop_del" || e.Message != "nexthop 1 is used by nhlfe 4" {
		t.Fatalf("err = %#v", err)
	}
	if !HasCode(err, CodeBusy) || IsNotFound(err) {
		t.Errorf("HasCode/IsNotFound wrong for %v", err)
	}
	// An answered error keeps the connection.
	if _, err := c.SystemInfo(context.Background()); err == nil || c.Connections() != 1 {
		t.Errorf("second call: err %v, connections %d, want an rpc error on 1 connection", err, c.Connections())
	}
}

func TestDeleteMissingIsSuccess(t *testing.T) {
	s := newFakeServer(t)
	s.setHandler(func(string, json.RawMessage) (any, *Error, bool, bool) {
		return nil, &Error{Code: CodeNotFound, Message: "no label 17"}, false, false
	})
	c := New(s.path, time.Second)
	defer c.Close()
	if err := c.LabelDel(context.Background(), 17); err != nil {
		t.Errorf("LabelDel of a missing label: %v", err)
	}
	if _, err := c.LabelAdd(context.Background(), dpconfig.Label{Label: 17, Type: dpconfig.LabelSwap}); !IsNotFound(err) {
		t.Errorf("LabelAdd not-found: %v", err)
	}
}

func TestTimeoutDropsConnection(t *testing.T) {
	s := newFakeServer(t)
	s.setHandler(func(method string, _ json.RawMessage) (any, *Error, bool, bool) {
		return nil, nil, method == "config_dump", false
	})
	// The hung call waits this out; the next call must be answered within
	// it, on a machine loaded with the race detector and other tests.
	c := New(s.path, time.Second)
	defer c.Close()
	if _, err := c.ConfigDump(context.Background()); err == nil {
		t.Fatal("hung call returned no error")
	}
	// The late answer must not be read as the next call's: a fresh
	// connection is used.
	s.setHandler(answer(map[string]any{"boot_id": "b-2"}))
	info, err := c.SystemInfo(context.Background())
	if err != nil || info.BootID != "b-2" || c.Connections() != 2 {
		t.Fatalf("after timeout: %+v, %v, connections %d", info, err, c.Connections())
	}
}

func TestContextCancelInterrupts(t *testing.T) {
	s := newFakeServer(t)
	s.setHandler(func(string, json.RawMessage) (any, *Error, bool, bool) { return nil, nil, true, false })
	c := New(s.path, time.Minute)
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := c.ConfigDump(ctx); done <- err }()
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second): // safety net only
		t.Fatal("cancel did not interrupt the call")
	}
}

// A datapath restart closes the connection; the next call transparently
// reconnects (calls are idempotent, so resending is safe).
func TestReconnectAfterServerClose(t *testing.T) {
	s := newFakeServer(t)
	s.setHandler(answer(map[string]any{"boot_id": "b-1"}))
	c := New(s.path, time.Second)
	defer c.Close()
	if _, err := c.SystemInfo(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.dropConns()
	s.setHandler(answer(map[string]any{"boot_id": "b-2"}))
	info, err := c.SystemInfo(context.Background())
	if err != nil || info.BootID != "b-2" {
		t.Fatalf("after restart: %+v, %v", info, err)
	}
	if n := c.Connections(); n != 2 {
		t.Errorf("connections %d, want 2", n)
	}

	// A peer that closes while answering a fresh connection is an error,
	// not a loop.
	s.setHandler(func(string, json.RawMessage) (any, *Error, bool, bool) { return nil, nil, false, true })
	if _, err := c.SystemInfo(context.Background()); err == nil {
		t.Error("closed connection gave no error")
	}
}

func TestNoSocket(t *testing.T) {
	c := New(filepath.Join(t.TempDir(), "cpD-none.sock"), time.Second)
	_, err := c.SystemInfo(context.Background())
	if err == nil || c.Connections() != 0 {
		t.Fatalf("err %v, connections %d", err, c.Connections())
	}
	var e *Error
	if errors.As(err, &e) {
		t.Errorf("transport error reported as datapath error: %v", err)
	}
}

func TestConcurrentCallsSerialised(t *testing.T) {
	s := newFakeServer(t)
	s.setHandler(func(_ string, params json.RawMessage) (any, *Error, bool, bool) {
		var p struct{ ID uint32 }
		json.Unmarshal(params, &p)
		return map[string]any{"changed": p.ID%2 == 0}, nil, false, false
	})
	c := New(s.path, 5*time.Second)
	defer c.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			changed, err := c.NHLFEAdd(context.Background(), dpconfig.NHLFE{ID: uint32(i), Nexthop: 1, Label: 100})
			if err != nil || changed != (i%2 == 0) {
				errs <- errors.Join(err, errors.New("wrong answer"))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestLinkState(t *testing.T) {
	for in, want := range map[string]bool{`true`: true, `false`: false, `"up"`: true, `"down"`: false} {
		var l LinkState
		if err := json.Unmarshal([]byte(in), &l); err != nil || bool(l) != want {
			t.Errorf("%s -> %v, %v", in, l, err)
		}
	}
	for _, in := range []string{`"sideways"`, `1`, `null`} {
		var l LinkState
		if err := json.Unmarshal([]byte(in), &l); err == nil {
			t.Errorf("%s accepted", in)
		}
	}
}

// A pipeline's calls reach the server in order on one connection, each gets
// its own reply (results and answered errors alike), and a connection the
// server closes part-way fails only the calls not yet answered.
func TestPipeline(t *testing.T) {
	s := newFakeServer(t)
	var calls atomic.Int64 // the client reconnects: handlers run on two connections' goroutines
	s.handle = func(method string, params json.RawMessage) (any, *Error, bool, bool) {
		n := calls.Add(1)
		switch {
		case method == "label_add" && string(params) == `{"label":17}`:
			return nil, &Error{Code: CodeNotFound, Message: "nhlfe 9 not found"}, false, false
		case method == "close":
			return nil, nil, false, true
		}
		return map[string]any{"changed": true, "n": n}, nil, false, false
	}
	c := New(s.path, time.Second)
	defer c.Close()
	ctx := context.Background()
	var reqs []Request
	for l := 16; l < 16+500; l++ {
		reqs = append(reqs, Request{Method: "label_add", Params: map[string]int{"label": l}})
	}
	replies := c.Pipeline(ctx, reqs)
	for i, r := range replies {
		if i == 1 {
			if !HasCode(r.Err, CodeNotFound) {
				t.Errorf("reply 1: %v, want the answered not-found", r.Err)
			}
			continue
		}
		var got struct{ N int }
		if r.Err != nil || json.Unmarshal(r.Result, &got) != nil || got.N != i+1 {
			t.Fatalf("reply %d: %s %v, want the %dth call's answer", i, r.Result, r.Err, i+1)
		}
	}
	if c.Connections() != 1 {
		t.Errorf("%d connections for one pipeline", c.Connections())
	}
	replies = c.Pipeline(ctx, []Request{{Method: "label_add", Params: map[string]int{"label": 1}},
		{Method: "close"}, {Method: "label_add", Params: map[string]int{"label": 2}}})
	if replies[0].Err != nil || replies[1].Err == nil || replies[2].Err == nil {
		t.Errorf("replies around a closed connection: %v %v %v", replies[0].Err, replies[1].Err, replies[2].Err)
	}
	if _, err := c.SystemInfo(ctx); err != nil {
		t.Errorf("the next call after a broken pipeline: %v", err)
	}
}
