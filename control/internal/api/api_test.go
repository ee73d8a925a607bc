package api

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/e3fabric/e3fabric/control/internal/controller"
	"github.com/e3fabric/e3fabric/control/internal/model"
	"github.com/e3fabric/e3fabric/control/internal/store/storetest"
)

const token, readToken = "t0k", "r34d"

func setup(t *testing.T) (*httptest.Server, *clientv3.Client) {
	t.Helper()
	return setupWith(t, Config{})
}

// setupWith serves the API with cfg's bounds and the test's tokens.
func setupWith(t *testing.T, cfg Config) (*httptest.Server, *clientv3.Client) {
	t.Helper()
	cli := storetest.Start(t, 23796)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	c := controller.New(controller.Options{Etcd: cli, IgnoreStatus: true, Log: log})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	wctx, wc := context.WithTimeout(ctx, 20*time.Second)
	defer wc()
	if err := c.WaitLeader(wctx); err != nil {
		t.Fatal(err)
	}
	cfg.Tokens = Tokens{Admin: token, Read: readToken}
	srv := httptest.NewServer(New(c, cfg, log))
	t.Cleanup(srv.Close)
	topo, err := os.ReadFile("../testdata/fabric.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if code, body := call(t, srv, "PUT", "/v1/topology", token, string(topo)); code != 200 {
		t.Fatalf("import: %d %s", code, body)
	}
	return srv, cli
}

func call(t *testing.T, srv *httptest.Server, method, path, tok, body string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// storeDump is every key and value under /e3/v1/ except agents' and the
// election's: what a refused request must not change.
func storeDump(t *testing.T, cli *clientv3.Client) string {
	r, err := cli.Get(context.Background(), "/e3/v1/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, kv := range r.Kvs {
		if !strings.HasPrefix(string(kv.Key), "/e3/v1/leader") {
			b.Write(kv.Key)
			b.Write(kv.Value)
		}
	}
	return b.String()
}

func TestRefusedRequestsChangeNothing(t *testing.T) {
	srv, cli := setup(t)
	red := `{"name":"red","type":"eline","circuits":[{"node":"leaf1","port":"cust1","vlan":1000},{"node":"leaf3","port":"cust1","vlan":2000}]}`
	if code, body := call(t, srv, "POST", "/v1/services", token, red); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	tests := []struct {
		name, method, path, tok, body string
		status                        int
		code, msg                     string
	}{
		{"no token", "POST", "/v1/services", "", red, 401, "unauthorized", "Bearer"},
		{"read without token", "GET", "/v1/services", "", "", 401, "unauthorized", "read-only"},
		{"read with a wrong token", "GET", "/v1/topology", "nope", "", 401, "unauthorized", "Bearer"},
		{"change with the read-only token", "POST", "/v1/services", readToken, red, 403, "forbidden", "admin token"},
		{"delete with the read-only token", "DELETE", "/v1/services/red", readToken, "", 403, "forbidden", "admin token"},
		{"wrong token", "DELETE", "/v1/services/red", "nope", "", 401, "unauthorized", "Bearer"},
		{"malformed json", "POST", "/v1/services", token, `{"name": "x", `, 400, "invalid", "malformed JSON"},
		{"unknown field", "POST", "/v1/services", token, `{"name":"x","type":"eline","circutis":[]}`, 400, "invalid", "circutis"},
		{"empty body", "POST", "/v1/services", token, ``, 400, "invalid", "empty"},
		{"null body", "POST", "/v1/services", token, `null`, 400, "invalid", "is null: want a JSON object"},
		{"null ping", "POST", "/v1/services/red/ping", token, `null`, 400, "invalid", "is null"},
		{"list body", "PATCH", "/v1/services/red", token, `[]`, 400, "invalid", "is a list"},
		{"bad type", "POST", "/v1/services", token, `{"name":"x","type":"vpls","circuits":[]}`, 400, "invalid", "type"},
		{"eline with 3 circuits", "POST", "/v1/services", token, `{"name":"x","type":"eline","circuits":[{"node":"leaf1","port":"cust1","vlan":1},{"node":"leaf2","port":"cust1","vlan":1},{"node":"leaf3","port":"cust1","vlan":1}]}`, 422, "invalid", "exactly 2"},
		{"vlan out of range", "POST", "/v1/services", token, `{"name":"x","type":"eline","circuits":[{"node":"leaf1","port":"cust1","vlan":4095},{"node":"leaf2","port":"cust1","vlan":1}]}`, 400, "invalid", "4094"},
		{"unknown node", "POST", "/v1/services", token, `{"name":"x","type":"eline","circuits":[{"node":"leaf9","port":"cust1","vlan":1},{"node":"leaf2","port":"cust1","vlan":1}]}`, 404, "not_found", "unknown node"},
		{"unknown port", "POST", "/v1/services", token, `{"name":"x","type":"eline","circuits":[{"node":"leaf1","port":"cust7","vlan":1},{"node":"leaf2","port":"cust1","vlan":1}]}`, 404, "not_found", "unknown port"},
		{"fabric port", "POST", "/v1/services", token, `{"name":"x","type":"eline","circuits":[{"node":"leaf1","port":"fab1","vlan":1},{"node":"leaf2","port":"cust1","vlan":1}]}`, 422, "invalid", "not a customer port"},
		{"vlan in use", "POST", "/v1/services", token, `{"name":"x","type":"elan","circuits":[{"node":"leaf1","port":"cust1","vlan":1000},{"node":"leaf2","port":"cust1","vlan":1}]}`, 409, "conflict", "already used by service red"},
		{"exists", "POST", "/v1/services", token, red, 409, "conflict", "already exists"},
		{"remove unknown circuit", "PATCH", "/v1/services/red", token, `{"remove_circuits":[{"node":"leaf2","port":"cust1","vlan":7}]}`, 404, "not_found", "no circuit"},
		{"eline add third", "PATCH", "/v1/services/red", token, `{"add_circuits":[{"node":"leaf2","port":"cust1","vlan":7}]}`, 422, "invalid", "exactly 2"},
		{"update missing", "PATCH", "/v1/services/nope", token, `{}`, 404, "not_found", "not found"},
		{"delete missing", "DELETE", "/v1/services/nope", token, ``, 404, "not_found", "not found"},
		{"bad cost", "PUT", "/v1/links/1/cost", token, `{"cost":0}`, 400, "invalid", "cost"},
		{"unknown link", "PUT", "/v1/links/99/cost", token, `{"cost":3}`, 404, "not_found", "link"},
		{"bad topology", "PUT", "/v1/topology", token, "nodes: [{name: Leaf_1}]", 400, "invalid", "pattern"},
		{"null topology", "PUT", "/v1/topology", token, "null", 400, "invalid", "not a mapping"},
		{"empty topology body", "PUT", "/v1/topology", token, "", 400, "invalid", "not a mapping"},
		{"topology drops a used port", "PUT", "/v1/topology", token, "nodes: [{name: leaf1}]", 409, "conflict", "leaf1:cust1"},
		{"unknown endpoint", "GET", "/v1/nope", "", "", 404, "not_found", "no such endpoint"},
		{"undeclared method", "TRACE", "/v1/status", token, "", 405, "method_not_allowed", "takes GET, HEAD"},
		{"undeclared method on a service", "PUT", "/v1/services/red", token, "{}", 405, "method_not_allowed", "GET, HEAD, PATCH, DELETE"},
		{"pcap port in a topology", "PUT", "/v1/topology", token, "nodes: [{name: leaf1}]\ncustomer_ports: [{node: leaf1, port: cust1, devargs: 'net_pcap_x,tx_pcap=/any/path'}]", 422, "invalid", "not allowed"},
		{"snapshot with an unknown field", "PUT", "/v1/snapshot", token, `{"version":1,"services":[{"evil":1}]}`, 400, "invalid", "'evil' not allowed"},
		{"snapshot cut short", "PUT", "/v1/snapshot", token, `{"version":1,"services":[`, 400, "invalid", "cut short"},
	}
	api := srv.Config.Handler.(*Server)
	// Every refusal is counted: for its token, or by its error's code.
	counted := func(code string) float64 {
		switch code {
		case "unauthorized":
			return float64(api.unauthorized.Load())
		case "forbidden":
			return float64(api.forbidden.Load())
		}
		return testutil.ToFloat64(api.errs.WithLabelValues(code))
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before, n := storeDump(t, cli), counted(tc.code)
			code, body := call(t, srv, tc.method, tc.path, tc.tok, tc.body)
			if got := counted(tc.code); got != n+1 {
				t.Errorf("%s counted %v times, want once", tc.code, got-n)
			}
			var e model.APIError
			if err := json.Unmarshal(body, &e); err != nil {
				t.Fatalf("error body not JSON: %s", body)
			}
			if code != tc.status || e.Error.Code != tc.code || !strings.Contains(e.Error.Message, tc.msg) {
				t.Fatalf("got %d %s %q, want %d %s ~%q", code, e.Error.Code, e.Error.Message, tc.status, tc.code, tc.msg)
			}
			if after := storeDump(t, cli); after != before {
				t.Fatal("a refused request changed etcd")
			}
		})
	}
}

func TestServiceLifecycle(t *testing.T) {
	srv, _ := setup(t)
	blue := `{"name":"blue","type":"elan","circuits":[{"node":"leaf1","port":"cust1","vlan":10},{"node":"leaf2","port":"cust1","vlan":"untagged"}]}`
	code, body := call(t, srv, "POST", "/v1/services", token, blue)
	if code != 201 {
		t.Fatalf("%d %s", code, body)
	}
	code, body = call(t, srv, "PATCH", "/v1/services/blue", token, `{"add_circuits":[{"node":"leaf3","port":"cust1","vlan":10}]}`)
	var v model.ServiceView
	if json.Unmarshal(body, &v); code != 200 || len(v.Circuits) != 3 || len(v.Route.Sources) != 3 {
		t.Fatalf("add circuit: %d %s", code, body)
	}
	code, body = call(t, srv, "PATCH", "/v1/services/blue", token, `{"remove_circuits":[{"node":"leaf1","port":"cust1","vlan":10}]}`)
	var w model.ServiceView
	if json.Unmarshal(body, &w); code != 200 || len(w.Circuits) != 2 || w.Route.Sources["leaf2"] != v.Route.Sources["leaf2"] {
		t.Fatalf("remove circuit: %d %s", code, body)
	}
	if code, body := call(t, srv, "DELETE", "/v1/services/blue", token, ""); code != 204 {
		t.Fatalf("delete: %d %s", code, body)
	}
	if code, _ := call(t, srv, "GET", "/v1/services/blue", readToken, ""); code != 404 {
		t.Fatalf("deleted service still there: %d", code)
	}
	if code, _ := call(t, srv, "GET", "/v1/services", readToken, ""); code != 200 {
		t.Fatalf("read with the read-only token: %d", code)
	}
	if code, _ := call(t, srv, "GET", "/healthz", "", ""); code != 200 {
		t.Fatalf("healthz needs no token: %d", code)
	}
	code, body = call(t, srv, "GET", "/openapi.json", "", "")
	var doc map[string]any
	if code != 200 || json.Unmarshal(body, &doc) != nil || doc["openapi"] == nil {
		t.Fatalf("openapi: %d", code)
	}
}

var update = flag.Bool("update", false, "write docs/api/openapi.json from the handlers' registrations")

// The committed document is the one the server makes from its handlers'
// registrations: go test ./internal/api -run TestOpenAPIDocument -update
// writes it after a change.
func TestOpenAPIDocument(t *testing.T) {
	const path = "../../../docs/api/openapi.json"
	doc := New(nil, Config{Metrics: http.NotFoundHandler()}, slog.New(slog.NewTextHandler(io.Discard, nil))).OpenAPI()
	if *update {
		if err := os.WriteFile(path, doc, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, doc) {
		t.Fatal("docs/api/openapi.json is not what the server serves: go test ./internal/api -run TestOpenAPIDocument -update")
	}
}
