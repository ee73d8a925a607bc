package api

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

// rawRequest sends head (and no more) on a new connection and returns the
// status line of the answer and whether the server then closed.
func rawRequest(t *testing.T, addr, head string) (status string, closed bool) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second)) // a safety net, not a timing check
	if _, err := io.WriteString(c, head); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	_, err = br.ReadByte()
	return resp.Status, err == io.EOF
}

// An unauthenticated request is answered at once and its connection
// closed: a body it announced is never waited for. So is one that
// announces a body with the read-only token where the admin one is needed.
func TestUnauthenticatedBodyNotAwaited(t *testing.T) {
	srv, _ := setup(t)
	addr := strings.TrimPrefix(srv.URL, "http://")
	for _, auth := range []string{"", "Authorization: Bearer nope\r\n", "Authorization: Bearer " + readToken + "\r\n"} {
		head := "POST /v1/services HTTP/1.1\r\nHost: x\r\n" + auth + "Content-Type: application/json\r\nContent-Length: 1000000\r\n\r\n"
		status, closed := rawRequest(t, addr, head)
		if !strings.HasPrefix(status, "401") && !strings.HasPrefix(status, "403") || !closed {
			t.Errorf("%q: %s, closed %v; want 401/403 and the connection closed", auth, status, closed)
		}
	}
}

// An admin's body that stops coming is refused (408) once it falls below
// the minimum rate, and nothing changes.
func TestSlowBodyRefused(t *testing.T) {
	srv, cli := setupWith(t, Config{BodyGrace: 200 * time.Millisecond})
	before := storeDump(t, cli)
	addr := strings.TrimPrefix(srv.URL, "http://")
	head := "POST /v1/services HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + token +
		"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"name\":"
	if status, _ := rawRequest(t, addr, head); !strings.HasPrefix(status, "408") {
		t.Fatalf("a stalled body: %s, want 408", status)
	}
	if storeDump(t, cli) != before {
		t.Fatal("a refused request changed etcd")
	}
}

// The scheme of Authorization is case-insensitive (RFC 9110 section 11.1);
// an undeclared method gets 405 with Allow.
func TestAuthSchemeAndAllow(t *testing.T) {
	srv, _ := setup(t)
	for _, scheme := range []string{"Bearer", "bearer", "BEARER"} {
		req, _ := http.NewRequest("GET", srv.URL+"/v1/status", nil)
		req.Header.Set("Authorization", scheme+" "+readToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("scheme %q: %d", scheme, resp.StatusCode)
		}
	}
	req, _ := http.NewRequest("DELETE", srv.URL+"/v1/topology", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 405 || resp.Header.Get("Allow") != "GET, HEAD, PUT" {
		t.Errorf("DELETE /v1/topology: %d, Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
	}
}

// openStream starts GET /v1/stream with tok and returns its response (the
// caller closes it) once the first event came, or the refusal.
func openStream(t *testing.T, srv string, tok string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("GET", srv+"/v1/stream", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	cl := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := cl.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode == 200 {
		line, err := bufio.NewReader(resp.Body).ReadString('\n')
		if err != nil || line != "event: fabric\n" {
			t.Fatalf("first line %q, %v", line, err)
		}
	}
	return resp
}

// Streams are capped per token (429 past the cap, the other token still
// served), and a client's requests in progress per address: past it every
// request of that client gets 429 until one ends.
func TestStreamAndClientCaps(t *testing.T) {
	srv, _ := setupWith(t, Config{MaxStreamsPerToken: 2, MaxBusyPerClient: 4})
	var open []*http.Response
	defer func() {
		for _, r := range open {
			r.Body.Close()
		}
	}()
	for i := 0; i < 2; i++ {
		r := openStream(t, srv.URL, readToken)
		if r.StatusCode != 200 {
			t.Fatalf("stream %d: %d", i, r.StatusCode)
		}
		open = append(open, r)
	}
	r := openStream(t, srv.URL, readToken)
	r.Body.Close()
	if r.StatusCode != 429 {
		t.Fatalf("a third stream on the read-only token: %d, want 429", r.StatusCode)
	}
	for i := 0; i < 2; i++ {
		r := openStream(t, srv.URL, token)
		if r.StatusCode != 200 {
			t.Fatalf("the admin's stream %d: %d", i, r.StatusCode)
		}
		open = append(open, r)
	}
	// Four streams in progress: the client's cap.
	if code, body := call(t, srv, "GET", "/v1/status", token, ""); code != 429 || !strings.Contains(string(body), "in progress") {
		t.Fatalf("a fifth request: %d %s, want 429", code, body)
	}
	open[0].Body.Close()
	open = open[1:]
	ok := false
	for i := 0; i < 100 && !ok; i++ { // the server sees the close on its next write
		code, _ := call(t, srv, "GET", "/v1/status", token, "")
		ok = code == 200
		if !ok {
			time.Sleep(50 * time.Millisecond)
		}
	}
	if !ok {
		t.Fatal("a request after a stream ended: still refused")
	}
}

// BFD keys in the topology are the admin's: the read-only token sees them
// redacted, in the topology and in a snapshot.
func TestBFDKeysAreTheAdmins(t *testing.T) {
	srv, _ := setup(t)
	topo, err := os.ReadFile("../testdata/fabric.yaml")
	if err != nil {
		t.Fatal(err)
	}
	keyed := strings.Replace(string(topo), "fabric:", "fabric:\n  bfd: {auth_key: e3e3e3e3, auth_key_id: 3}", 1)
	if keyed == string(topo) {
		keyed = string(topo) + "\nfabric:\n  bfd: {auth_key: e3e3e3e3, auth_key_id: 3}\n"
	}
	if code, body := call(t, srv, "PUT", "/v1/topology", token, keyed); code != 200 {
		t.Fatalf("import: %d %s", code, body)
	}
	for _, path := range []string{"/v1/topology", "/v1/snapshot"} {
		_, admin := call(t, srv, "GET", path, token, "")
		_, reader := call(t, srv, "GET", path, readToken, "")
		if !strings.Contains(string(admin), "e3e3e3e3") || strings.Contains(string(reader), "e3e3e3e3") ||
			!strings.Contains(string(reader), `"(set)"`) {
			t.Errorf("%s: the admin sees the key: %v; the reader sees it: %v", path,
				strings.Contains(string(admin), "e3e3e3e3"), strings.Contains(string(reader), "e3e3e3e3"))
		}
	}
}

// A stream outlives the server's read timeout (which is for reading
// requests), over HTTP/1.1.
func TestStreamOutlivesReadTimeout(t *testing.T) {
	srv, _ := setup(t)
	s := httptest.NewUnstartedServer(srv.Config.Handler)
	s.Config.ReadTimeout = 300 * time.Millisecond
	s.Start()
	defer s.Close()
	r := openStream(t, s.URL, readToken)
	defer r.Body.Close()
	if r.StatusCode != 200 {
		t.Fatalf("stream: %d", r.StatusCode)
	}
	br := bufio.NewReader(r.Body)
	for events := 0; events < 2; { // the second comes a second after the first: past the timeout
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("the stream ended after %d more events: %v", events, err)
		}
		if line == "event: fabric\n" {
			events++
		}
	}
}
