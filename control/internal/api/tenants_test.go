package api

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"

	"github.com/e3fabric/e3fabric/control/internal/model"
)

func mustCall(t *testing.T, srv *httptest.Server, method, path, tok, body string, want int) []byte {
	t.Helper()
	code, b := call(t, srv, method, path, tok, body)
	if code != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, code, b, want)
	}
	return b
}

func newToken(t *testing.T, srv *httptest.Server, tenant, role string) string {
	t.Helper()
	var tok model.NewToken
	json.Unmarshal(mustCall(t, srv, "POST", "/v1/tenants/"+tenant+"/tokens", token, `{"role":"`+role+`"}`, 201), &tok)
	return tok.Token
}

func eline(name, a, b string) string {
	ep := func(s string) string {
		p := strings.Split(s, ":")
		vlan := p[2]
		if vlan != "untagged" {
			return fmt.Sprintf(`{"node":%q,"port":%q,"vlan":%s}`, p[0], p[1], vlan)
		}
		return fmt.Sprintf(`{"node":%q,"port":%q,"vlan":"untagged"}`, p[0], p[1])
	}
	return fmt.Sprintf(`{"name":%q,"type":"eline","circuits":[%s,%s]}`, name, ep(a), ep(b))
}

func serviceNames(t *testing.T, srv *httptest.Server, tok string) []string {
	var v []model.ServiceView
	json.Unmarshal(mustCall(t, srv, "GET", "/v1/services", tok, "", 200), &v)
	var out []string
	for _, s := range v {
		out = append(out, s.Name)
	}
	return out
}

// A tenant's token reaches its own services and nothing else: every other
// tenant's service answers 404 as if it did not exist, every fabric-wide
// operation 403, and nothing it is refused changes etcd. Its services stay
// within its ports and quota; a revoked token stops at once.
func TestTenantScope(t *testing.T) {
	fabricMetrics := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("e3_controller_fabric_secret 1\n"))
	})
	srv, cli := setupWith(t, Config{Metrics: fabricMetrics})
	mustCall(t, srv, "PUT", "/v1/tenants/acme", token, `{"name":"acme","quota":{"services":2,"circuits":4},
		"ports":[{"node":"leaf1","port":"cust1","vlans":"100-199"},{"node":"leaf3","port":"cust1","vlans":"100-199,untagged"}]}`, 200)
	mustCall(t, srv, "PUT", "/v1/tenants/beta", token, `{"name":"beta","quota":{},
		"ports":[{"node":"leaf2","port":"cust1"},{"node":"leaf1","port":"cust2"}]}`, 200)
	acme, acmeRead, beta := newToken(t, srv, "acme", "admin"), newToken(t, srv, "acme", "read"), newToken(t, srv, "beta", "admin")

	mustCall(t, srv, "POST", "/v1/services", token, eline("fab", "leaf1:cust1:10", "leaf2:cust1:10"), 201)
	var a1 model.ServiceView
	json.Unmarshal(mustCall(t, srv, "POST", "/v1/services", acme, eline("a1", "leaf1:cust1:100", "leaf3:cust1:100"), 201), &a1)
	if a1.Tenant != "acme" {
		t.Fatalf("a1 created by acme's token belongs to %q", a1.Tenant)
	}
	mustCall(t, srv, "POST", "/v1/services", beta, eline("b1", "leaf2:cust1:5", "leaf1:cust2:untagged"), 201)

	// Every operation of the document, about beta's service, with acme's
	// admin token.
	var doc struct {
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
			Security    *[]any `json:"security"` // [] where no token is needed
		} `json:"paths"`
	}
	json.Unmarshal(mustCall(t, srv, "GET", "/openapi.json", "", "", 200), &doc)
	tenantOps := []string{"stream", "metrics", "moveCircuit", "listServices", "createService", "getService", "updateService", "deleteService",
		"pingService", "traceService"}
	args := strings.NewReplacer("{name}", "b1", "{node}", "leaf1", "{link}", "1", "{tenant}", "beta", "{id}", "0123456789ab")
	seen := 0
	for path, methods := range doc.Paths {
		for method, o := range methods {
			if o.Security != nil && len(*o.Security) == 0 || o.OperationID == "stream" {
				continue // no token needed; the stream lasts (below)
			}
			seen++
			m, p := strings.ToUpper(method), args.Replace(path)
			before := storeDump(t, cli)
			req := "{}"
			if o.OperationID == "moveCircuit" {
				req = `{"from":{"node":"leaf2","port":"cust1","vlan":5},"to":{"node":"leaf3","port":"cust1","vlan":5}}`
			}
			code, body := call(t, srv, m, p, acme, req)
			switch {
			case !slices.Contains(tenantOps, o.OperationID):
				if code != 403 || !strings.Contains(string(body), "tenant's token reaches only its own services") {
					t.Errorf("%s %s (%s): %d %s, want 403 for a tenant", m, p, o.OperationID, code, body)
				}
			case o.OperationID == "metrics":
				if code != 200 || strings.Contains(string(body), "fabric_secret") || strings.Contains(string(body), `"b1"`) {
					t.Errorf("metrics: %d %s", code, body)
				}
			case o.OperationID == "listServices":
				if code != 200 {
					t.Errorf("list: %d %s", code, body)
				}
			case o.OperationID == "createService":
				if code != 400 { // {} is no service
					t.Errorf("create {}: %d %s", code, body)
				}
			default:
				if code != 404 || !strings.Contains(string(body), "service b1 not found") {
					t.Errorf("%s %s (%s): %d %s, want 404: another tenant's service", m, p, o.OperationID, code, body)
				}
			}
			if after := storeDump(t, cli); after != before {
				t.Errorf("%s %s with a tenant's token changed etcd", m, p)
			}
		}
	}
	if seen < 25 {
		t.Fatalf("only %d operations in the document", seen)
	}

	if got := serviceNames(t, srv, acmeRead); !slices.Equal(got, []string{"a1"}) {
		t.Fatalf("acme sees %v", got)
	}
	// Its stream carries its services, not the fabric.
	ev, data := firstEvent(t, srv, acmeRead)
	var sv model.TenantStreamView
	if err := json.Unmarshal([]byte(data), &sv); err != nil || ev != "services" || sv.Tenant != "acme" ||
		len(sv.Services) != 1 || sv.Services[0].Name != "a1" {
		t.Fatalf("acme's stream: %s %s", ev, data)
	}
	if ev, _ := firstEvent(t, srv, token); ev != "fabric" {
		t.Fatalf("the fabric's stream: %s", ev)
	}
	// Its metrics, judged by Prometheus' text parser: its service and its
	// usage, nothing else.
	var parser expfmt.TextParser
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(mustCall(t, srv, "GET", "/metrics", acmeRead, "", 200)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range fams["e3_tenant_service_state"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "service" {
				names = append(names, l.GetValue())
			}
		}
	}
	if !slices.Equal(names, []string{"a1"}) || len(fams) != 3 {
		t.Fatalf("acme's metrics: services %v, families %v", names, slices.Collect(maps.Keys(fams)))
	}
	if got := serviceNames(t, srv, token); !slices.Equal(got, []string{"a1", "b1", "fab"}) {
		t.Fatalf("the fabric admin sees %v", got)
	}
	before := storeDump(t, cli)
	for _, tc := range []struct {
		what, tok, body string
		status          int
		msg             string
	}{
		{"a read token creates", acmeRead, eline("a2", "leaf1:cust1:101", "leaf3:cust1:101"), 403, "admin token"},
		{"outside its VLANs", acme, eline("a2", "leaf1:cust1:200", "leaf3:cust1:101"), 409, "not on a port and VLAN of tenant acme"},
		{"on another's port", acme, eline("a2", "leaf1:cust1:101", "leaf2:cust1:101"), 409, "not on a port and VLAN"},
		{"for another tenant", acme, `{"name":"a2","type":"eline","tenant":"beta","circuits":[]}`, 404, "tenant beta not found"},
		{"taking another's name", acme, eline("b1", "leaf1:cust1:101", "leaf3:cust1:101"), 409, "already exists"},
	} {
		if code, body := call(t, srv, "POST", "/v1/services", tc.tok, tc.body); code != tc.status || !strings.Contains(string(body), tc.msg) {
			t.Errorf("%s: %d %s, want %d ~%q", tc.what, code, body, tc.status, tc.msg)
		}
	}
	if storeDump(t, cli) != before {
		t.Fatal("a refused request changed etcd")
	}
	// The quota: two services, four circuits.
	mustCall(t, srv, "POST", "/v1/services", acme, eline("a2", "leaf1:cust1:101", "leaf3:cust1:untagged"), 201)
	if code, body := call(t, srv, "POST", "/v1/services", acme, eline("a3", "leaf1:cust1:102", "leaf3:cust1:102")); code != 409 {
		t.Fatalf("over the quota: %d %s", code, body)
	}
	var v model.TenantView
	json.Unmarshal(mustCall(t, srv, "GET", "/v1/tenants/acme", token, "", 200), &v)
	if v.Usage.Services != 2 || v.Usage.Circuits != 4 || len(v.Tokens) != 2 {
		t.Fatalf("acme: %+v", v)
	}
	mustCall(t, srv, "DELETE", "/v1/tenants/acme", token, "", 409) // it owns services
	// Revoked: refused at once.
	var ids []string
	for _, tk := range v.Tokens {
		if tk.Role == "admin" {
			ids = append(ids, tk.ID)
		}
	}
	mustCall(t, srv, "DELETE", "/v1/tenants/acme/tokens/"+ids[0], token, "", 204)
	mustCall(t, srv, "GET", "/v1/services", acme, "", 401)
	mustCall(t, srv, "DELETE", "/v1/services/a1", token, "", 204)
	mustCall(t, srv, "DELETE", "/v1/services/a2", acmeRead, "", 403)
	mustCall(t, srv, "DELETE", "/v1/services/a2", token, "", 204)
	mustCall(t, srv, "DELETE", "/v1/tenants/acme", token, "", 204)
	mustCall(t, srv, "GET", "/v1/services", acmeRead, "", 401) // its tokens went with it
}

// firstEvent reads the first Server-Sent Event of GET /v1/stream.
func firstEvent(t *testing.T, srv *httptest.Server, tok string) (event, data string) {
	t.Helper()
	req, _ := http.NewRequest("GET", srv.URL+"/v1/stream", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("stream: %d", resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "event: "); ok {
			event = v
		}
		if v, ok := strings.CutPrefix(line, "data: "); ok {
			return event, v
		}
	}
	t.Fatalf("stream ended: %v", sc.Err())
	return "", ""
}
