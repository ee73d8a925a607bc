// Package api is the controller's northbound HTTP/JSON API, described by the
// OpenAPI 3 document openapi.json (served at /openapi.json; a copy is kept in
// docs/api/). Every request but /healthz and /openapi.json needs a bearer
// token: reads the read-only or the admin one, changes the admin one.
// Reads work on every replica; changes are done by the leader.
package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"

	"github.com/e3fabric/e3fabric/control/internal/controller"
	"github.com/e3fabric/e3fabric/control/internal/desired"
	"github.com/e3fabric/e3fabric/control/internal/etcdauth"
	"github.com/e3fabric/e3fabric/control/internal/httpguard"
	"github.com/e3fabric/e3fabric/control/internal/model"
	"github.com/e3fabric/e3fabric/control/internal/nodestate"
	"github.com/e3fabric/e3fabric/control/internal/topology"
	"github.com/e3fabric/e3fabric/control/internal/web"
)

// maxBody bounds a request body (a topology file is the largest), but for
// a fabric snapshot's restore (maxSnapshotBody), which holds every
// service's allocations.
const maxBody = 8 << 20

// Tokens are the bearer tokens of the two roles.
type Tokens struct {
	Admin string // reads and changes
	Read  string // reads only
}

// Roles a request may need.
type role int

const (
	roleRead role = iota
	roleAdmin
)

// Config is what the API needs besides the controller.
type Config struct {
	Tokens Tokens
	Guard  *httpguard.ConnGuard // the connection guard whose counters status shows; nil: none
	// Credentials issues a node's etcd credentials (nil: not offered).
	Credentials func(ctx context.Context, node string) (etcdauth.Credentials, error)
	// Metrics serves GET /metrics to the read-only role (nil: not offered).
	Metrics http.Handler
	// Bounds on what one client can hold (0: the defaults below).
	MaxBusyPerClient   int           // requests in progress per client address
	MaxStreamsPerToken int           // GET /v1/stream per token
	MinBodyRate        float64       // bytes/s a request body must arrive at, after BodyGrace
	BodyGrace          time.Duration // before MinBodyRate applies
}

// Defaults of Config's bounds. A page follows one stream; automation a few.
const (
	DefaultMaxBusyPerClient   = 64
	DefaultMaxStreamsPerToken = 32
	DefaultMinBodyRate        = 64 << 10
	DefaultBodyGrace          = 10 * time.Second
)

// Server serves the API for one controller replica.
type Server struct {
	Config
	c   *controller.Controller
	log *slog.Logger
	mux *http.ServeMux
	hub *hub
	// Requests refused for their token (401, 403), for a client's busy
	// requests (429) and for a body that came too slowly (408).
	unauthorized, forbidden, busyClient, slowBody atomic.Uint64
	// Requests answered with an error of the API's (400-507), by its code.
	errs       *prometheus.CounterVec
	busyMu     sync.Mutex
	busy       map[string]int                // requests in progress by client address
	ops        []op                          // what handle registered: the document's source
	openapi    []byte                        // the document (GET /openapi.json)
	validators map[string]*jsonschema.Schema // each body's schema, by pattern
}

// OpenAPI is the server's OpenAPI document.
func (s *Server) OpenAPI() []byte { return s.openapi }

// New returns the API handler.
func New(c *controller.Controller, cfg Config, log *slog.Logger) *Server {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&cfg.MaxBusyPerClient, DefaultMaxBusyPerClient)
	def(&cfg.MaxStreamsPerToken, DefaultMaxStreamsPerToken)
	if cfg.MinBodyRate <= 0 {
		cfg.MinBodyRate = DefaultMinBodyRate
	}
	if cfg.BodyGrace <= 0 {
		cfg.BodyGrace = DefaultBodyGrace
	}
	s := &Server{Config: cfg, c: c, log: log, mux: http.NewServeMux(), busy: map[string]int{},
		errs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "e3_controller_api_errors_total",
			Help: "API requests answered with an error, by its code (invalid, not_found, conflict, no_path, " +
				"no_bandwidth, quota, exhausted, not_leader, timeout, internal, ...): each refused change is counted."},
			[]string{"code"})}
	for _, code := range []string{"invalid", "not_found", "conflict", "no_path", "no_bandwidth", "quota", "exhausted",
		"not_leader", "timeout", "internal"} {
		s.errs.WithLabelValues(code) // exported from the start, at 0
	}
	s.hub = newHub(s, cfg.MaxStreamsPerToken)
	admin, read := roleAdmin, roleRead
	nodeParam := map[string]string{"node": "pattern=^[a-z0-9-]{1,15}$"}
	svcParam := map[string]string{"name": "pattern=^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$"}
	s.handle(op{pattern: "GET /v1/status", id: "getStatus", summary: "fabric summary", role: read,
		status: 200, resp: model.StatusView{}}, s.status)
	s.handle(op{pattern: "GET /v1/nodes", id: "listNodes", role: read, status: 200, resp: []model.NodeView{},
		summary: "nodes: forwarding (per OAM), agent, desired and applied generation, labels used, ports"}, s.nodes)
	s.handle(op{pattern: "GET /v1/links", id: "listLinks", role: read, status: 200, resp: []model.LinkView{},
		summary: "fabric links: cost, state, each end's BFD state and counters"}, s.links)
	s.handle(op{pattern: "POST /v1/nodes/{node}/credentials", id: "nodeCredentials", role: admin, params: nodeParam,
		summary: "new etcd credentials for the node's agent (docs/security.md); the node's older certificates are revoked",
		status:  200, resp: etcdauth.Credentials{}, errs: []int{404, 501}}, s.nodeCredentials)
	s.handle(op{pattern: "PUT /v1/links/{link}/cost", id: "setLinkCost", role: admin, body: model.LinkCost{},
		params:  map[string]string{"link": "description=the link's id or name (leaf1:fab1-spine1:fab1)"},
		summary: "set a link's cost; paths are recomputed", status: 200, resp: []model.LinkView{}, errs: []int{404}}, s.setCost)
	s.handle(op{pattern: "POST /v1/nodes/{node}/drain", id: "drainNode", role: admin, params: nodeParam, status: 200,
		resp: model.NodeView{}, errs: []int{404, 422},
		summary: "maintenance: paths, trees and site roles leave the node make-before-break (docs/ha.md)"},
		func(r *http.Request) (int, any, error) { return s.drain(r, true) })
	s.handle(op{pattern: "POST /v1/nodes/{node}/undrain", id: "undrainNode", role: admin, params: nodeParam, status: 200,
		resp: model.NodeView{}, errs: []int{404, 422}, summary: "bring a drained node back into use"},
		func(r *http.Request) (int, any, error) { return s.drain(r, false) })
	s.handle(op{pattern: "GET /v1/events", id: "listEvents", role: read, status: 200, resp: []model.Event{},
		summary: "the event log: failures, local and global repairs, what they took"},
		func(r *http.Request) (int, any, error) {
			ev := s.c.Events()
			if ev == nil {
				ev = []model.Event{}
			}
			return 200, ev, nil
		})
	s.handle(op{pattern: "GET /v1/snapshot", id: "saveSnapshot", role: read, status: 200, resp: model.FabricSnapshot{},
		summary: "the fabric's whole intent and what was allocated for it"},
		func(r *http.Request) (int, any, error) {
			snap, err := s.c.SaveSnapshot(r.Context())
			if err == nil && snap.Topology != nil {
				snap.Topology = s.topologyFor(r, snap.Topology)
			}
			return 200, snap, err
		})
	s.handle(op{pattern: "PUT /v1/snapshot", id: "restoreSnapshot", role: admin, body: model.FabricSnapshot{},
		status: 200, resp: model.StatusView{}, errs: []int{404, 409, 422, 507},
		summary: "make the fabric what the snapshot describes, with its labels (docs/control-plane.md)"},
		func(r *http.Request) (int, any, error) {
			var snap model.FabricSnapshot
			if err := decodeSnapshot(r, &snap, s.checkPart); err != nil {
				return 0, nil, err
			}
			if err := s.c.RestoreSnapshot(r.Context(), &snap); err != nil {
				return 0, nil, err
			}
			return s.status(r)
		})
	s.handle(op{pattern: "GET /v1/intent", id: "getIntent", role: read, status: 200, resp: model.Intent{},
		summary: "the whole declared fabric: the topology and every service, as e3ctl get writes it (BFD keys need the admin token)"},
		func(r *http.Request) (int, any, error) {
			snap, err := s.c.Snapshot(r.Context())
			if err != nil {
				return 0, nil, err
			}
			in := model.Intent{Topology: s.topologyFor(r, snap.Topology), Services: []model.ServiceSpec{}}
			for _, n := range snap.ServiceNames() {
				in.Services = append(in.Services, snap.Services[n].Spec)
			}
			return 200, in, nil
		})
	s.handle(op{pattern: "POST /v1/apply", id: "apply", role: admin, body: model.ApplyRequest{}, status: 200,
		resp: model.ApplyResult{}, errs: []int{409, 422, 507},
		summary: "make the fabric what the intent declares, in one change (docs/control-plane.md); a refused intent changes nothing"},
		func(r *http.Request) (int, any, error) {
			var req model.ApplyRequest
			if err := decode(r, &req); err != nil {
				return 0, nil, err
			}
			res, err := s.c.Apply(r.Context(), &req)
			return 200, res, err
		})
	s.handle(op{pattern: "GET /v1/topology", id: "getTopology", role: read, status: 200, resp: topology.Topology{},
		summary: "the topology as stored (hosts become customer ports, links get ids)"}, s.getTopology)
	s.handle(op{pattern: "PUT /v1/topology", id: "importTopology", role: admin, body: topology.File{}, yaml: true,
		status: 200, resp: topology.Topology{}, errs: []int{404, 409, 422, 507},
		summary: "import a topology file (docs/topology.md; YAML or JSON): it replaces the topology, and creates its services that do not exist"},
		s.putTopology)
	// A tenant's token reaches the services of its tenant, and no other
	// exists for it (404).
	s.handle(op{pattern: "GET /v1/services", id: "listServices", role: read, tenant: true, status: 200,
		resp: []model.ServiceView{}, summary: "every service (of the token's tenant) with its status"}, s.listServices)
	s.handle(op{pattern: "POST /v1/services", id: "createService", role: admin, tenant: true, body: model.ServiceSpec{},
		status: 201, resp: model.ServiceView{}, errs: []int{404, 409, 422, 507},
		summary: "create a service (a tenant's token: of its tenant, within its ports and quota)"}, s.createService)
	s.handle(op{pattern: "GET /v1/services/{name}", id: "getService", role: read, tenant: true, params: svcParam,
		status: 200, resp: model.ServiceView{}, errs: []int{404}, summary: "a service: paths, labels per node, status"},
		s.getService)
	s.handle(op{pattern: "PATCH /v1/services/{name}", id: "updateService", role: admin, tenant: true, params: svcParam,
		body: model.ServiceUpdate{}, status: 200, resp: model.ServiceView{}, errs: []int{404, 409, 422, 507},
		summary: "add and remove circuits"}, s.updateService)
	s.handle(op{pattern: "DELETE /v1/services/{name}", id: "deleteService", role: admin, tenant: true, params: svcParam,
		status: 204, errs: []int{404, 409}, summary: "delete a service and free its labels"}, s.deleteService)
	// Ping and trace change no state, but send frames into the fabric.
	s.handle(op{pattern: "POST /v1/services/{name}/ping", id: "pingService", role: admin, tenant: true, params: svcParam,
		body: model.PingRequest{}, optional: true, status: 200, resp: model.PingResult{}, errs: []int{404, 422, 504},
		summary: "MPLS echo in the pseudowire, from one end to each other end (docs/operations.md)"},
		func(r *http.Request) (int, any, error) {
			if err := s.owns(r, r.PathValue("name")); err != nil {
				return 0, nil, err
			}
			req := model.PingRequest{Count: 3}
			if r.ContentLength != 0 {
				if err := decode(r, &req); err != nil {
					return 0, nil, err
				}
			}
			v, err := s.c.Ping(r.Context(), r.PathValue("name"), req.Count)
			return 200, v, err
		})
	s.handle(op{pattern: "POST /v1/services/{name}/trace", id: "traceService", role: admin, tenant: true,
		params: svcParam, status: 200, resp: []model.TraceResult{}, errs: []int{404, 422, 504},
		summary: "each hop of the pseudowire: node, label in and out, time"},
		func(r *http.Request) (int, any, error) {
			if err := s.owns(r, r.PathValue("name")); err != nil {
				return 0, nil, err
			}
			v, err := s.c.Trace(r.Context(), r.PathValue("name"))
			return 200, v, err
		})
	s.handle(op{pattern: "POST /v1/services/{name}/move", id: "moveCircuit", role: admin, tenant: true,
		params: svcParam, body: model.MoveRequest{}, status: 200, resp: model.ServiceView{}, errs: []int{404, 409, 422, 507},
		summary: "live migration: move one end of an E-Line to another circuit, make-before-break: both deliver for the window, then the old one is removed (docs/operations.md)"},
		func(r *http.Request) (int, any, error) {
			var req model.MoveRequest
			if err := decode(r, &req); err != nil {
				return 0, nil, err
			}
			name := r.PathValue("name")
			if err := s.owns(r, name); err != nil {
				return 0, nil, err
			}
			if err := s.c.MoveCircuit(r.Context(), name, req.From, req.To, time.Duration(req.WindowS)*time.Second); err != nil {
				return 0, nil, err
			}
			return s.service(r, name, 200)
		})
	s.tenantOps()
	s.handle(op{pattern: "GET /healthz", id: "health", role: roleNone, status: 200, resp: map[string]bool{},
		summary: "liveness"}, func(r *http.Request) (int, any, error) { return 200, map[string]bool{"ok": true}, nil })
	s.handle(op{pattern: "GET /openapi.json", id: "openapi", role: roleNone, status: 200, content: "application/json",
		summary: "this document"}, nil)
	s.handle(op{pattern: "GET /v1/stream", id: "stream", role: read, tenant: true, status: 200, content: "text/event-stream",
		summary: "every second, as Server-Sent Events: the fabric's state (a fabric event: the fabric page), or to a tenant's token its services (a services event)"}, nil)
	if cfg.Metrics != nil {
		s.handle(op{pattern: "GET /metrics", id: "metrics", role: read, tenant: true, status: 200, content: "text/plain",
			summary: "Prometheus metrics (docs/operations.md); to a tenant's token its services' state and its usage (docs/tenants.md)"}, nil)
	}
	s.handle(op{pattern: "GET /ui/", id: "page", role: roleNone, status: 200, content: "text/html",
		summary: "the live fabric page (its files need no token; what it reads does)"}, nil)
	doc, validators, err := document(s.ops, map[string]any{"title": "e3fabric controller API", "version": "1",
		"description": "Northbound API of e3-controller (docs/control-plane.md, docs/security.md), generated from the " +
			"handlers' registrations and the Go types they take and answer (control/internal/api/openapi.go)."})
	if err != nil {
		panic(err) // a registration or a type's tag is wrong: a test catches it
	}
	s.openapi, s.validators = doc, validators
	s.mux.HandleFunc("GET /openapi.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(s.openapi)
	})
	// The fabric page: its files need no token (they hold no data), what
	// it reads does.
	s.mux.Handle("GET /ui/", web.Handler())
	s.mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/ui/", http.StatusFound)
	})
	s.mux.HandleFunc("GET /v1/stream", func(w http.ResponseWriter, r *http.Request) {
		if who, ok := s.authorized(w, r, roleRead, true); ok {
			s.stream(w, r, who)
		}
	})
	if cfg.Metrics != nil {
		s.mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
			switch who, ok := s.authorized(w, r, roleRead, true); {
			case !ok:
			case who.tenant != "":
				s.tenantMetrics(w, r, who.tenant)
			default:
				cfg.Metrics.ServeHTTP(w, r)
			}
		})
	}
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if allow := s.allowed(r); len(allow) > 0 {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			s.errs.WithLabelValues("method_not_allowed").Inc()
			writeError(w, http.StatusMethodNotAllowed, "method_not_allowed",
				fmt.Sprintf("%s %s: this endpoint takes %s", r.Method, r.URL.Path, strings.Join(allow, ", ")))
			return
		}
		s.errs.WithLabelValues("not_found").Inc()
		writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("no such endpoint: %s %s", r.Method, r.URL.Path))
	})
	return s
}

// ServeHTTP serves r, unless its client has MaxBusyPerClient requests in
// progress already.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	client, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		client = r.RemoteAddr
	}
	s.busyMu.Lock()
	n := s.busy[client]
	if n < s.MaxBusyPerClient {
		s.busy[client] = n + 1
	}
	s.busyMu.Unlock()
	if n >= s.MaxBusyPerClient {
		s.busyClient.Add(1)
		w.Header().Set("Connection", "close")
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusTooManyRequests, "too_many_requests",
			fmt.Sprintf("this client has %d requests in progress already", n))
		return
	}
	defer func() {
		s.busyMu.Lock()
		if s.busy[client]--; s.busy[client] <= 0 {
			delete(s.busy, client)
		}
		s.busyMu.Unlock()
	}()
	s.mux.ServeHTTP(w, r)
}

// allowed lists the methods r's path takes (none: no such path).
func (s *Server) allowed(r *http.Request) []string {
	var out []string
	for _, m := range []string{http.MethodGet, http.MethodPut, http.MethodPost, http.MethodPatch, http.MethodDelete} {
		r2 := r.Clone(r.Context())
		r2.Method = m
		if _, pat := s.mux.Handler(r2); pat != "/" && pat != "" {
			out = append(out, m)
			if m == http.MethodGet {
				out = append(out, http.MethodHead)
			}
		}
	}
	return out
}

// handler returns the status and body of a success, or an error.
type handler func(r *http.Request) (int, any, error)

// httpError is an error the API itself raises (bad JSON, bad path).
type httpError struct {
	status int
	code   string
	msg    string
}

// fieldError is a body the schema does not allow (400), at one field.
type fieldError struct{ field, msg string }

func (e *fieldError) Error() string { return e.msg }

// fieldOf is the request field err is about ("": none).
func fieldOf(err error) string {
	var fe *fieldError
	if errors.As(err, &fe) {
		return fe.field
	}
	return controller.FieldOf(err)
}

func (e *httpError) Error() string { return e.msg }

func badRequest(format string, a ...any) error {
	return &httpError{http.StatusBadRequest, "invalid", fmt.Sprintf(format, a...)}
}

func (s *Server) handle(o op, h handler) {
	s.ops = append(s.ops, o)
	if h == nil {
		return // served by a handler of its own
	}
	mutation := o.role == roleAdmin
	s.mux.HandleFunc(o.pattern, func(w http.ResponseWriter, r *http.Request) {
		if o.role != roleNone {
			who, ok := s.authorized(w, r, o.role, o.tenant)
			if !ok {
				return
			}
			r = r.WithContext(context.WithValue(r.Context(), principalKey{}, who))
		}
		limit := int64(maxBody)
		if o.pattern == "PUT /v1/snapshot" {
			limit = maxSnapshotBody
		}
		r.Body = minRate(w, http.MaxBytesReader(w, r.Body, limit), s.MinBodyRate, s.BodyGrace, &s.slowBody)
		status, body, err := 0, any(nil), s.checkBody(r, o)
		if err == nil {
			status, body, err = h(r)
		}
		if err != nil {
			st, code := errorStatus(err)
			if st >= 500 {
				s.log.Error("api", "method", r.Method, "path", r.URL.Path, "err", err)
			}
			s.errs.WithLabelValues(code).Inc()
			writeFieldError(w, st, code, err.Error(), fieldOf(err))
			return
		}
		if mutation {
			s.log.Info("api change", "method", r.Method, "path", r.URL.Path, "status", status)
		}
		if body == nil {
			w.WriteHeader(status)
			return
		}
		writeJSON(w, status, body)
	})
}

// checkBody checks r's body against o's schema, and leaves it for the
// handler to decode. A body that is not a JSON (or YAML) object is left to
// the handler's decoder, which says what it is instead; a snapshot, which
// may be a gigabyte, is checked by its streaming decoder alone.
func (s *Server) checkBody(r *http.Request, o op) error {
	v := s.validators[o.pattern]
	if v == nil || o.pattern == "PUT /v1/snapshot" {
		return nil
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		var he *httpError
		switch {
		case errors.As(err, &mbe):
			return &httpError{http.StatusRequestEntityTooLarge, "invalid", fmt.Sprintf("request body larger than %d bytes", mbe.Limit)}
		case errors.As(err, &he):
			return he // too slow
		}
		return badRequest("reading body: %v", err)
	}
	r.Body = io.NopCloser(bytes.NewReader(raw))
	var doc any
	if o.yaml && !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) {
		var y any
		if yaml.Unmarshal(raw, &y) != nil {
			return nil
		}
		if _, ok := y.(map[string]any); !ok {
			return badRequest("the body is not a mapping (a topology file's name, fabric, nodes, ...)")
		}
		j, err := json.Marshal(y)
		if err != nil {
			return nil
		}
		raw = j
	}
	if !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) {
		return nil
	}
	if doc, err = jsonschema.UnmarshalJSON(bytes.NewReader(raw)); err != nil {
		return nil
	}
	b, err := checked(v, doc, "")
	if err != nil {
		return err
	}
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
	return nil
}

// checkPart checks part of a snapshot (a property of FabricSnapshot, or
// services/items) against its schema; field names it in errors.
func (s *Server) checkPart(part, field string, raw json.RawMessage) ([]byte, error) {
	v := s.validators["snapshot/"+part]
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if v == nil || err != nil {
		return raw, nil // the decoder says what is wrong
	}
	return checked(v, doc, field)
}

// checked is doc if v takes it (errors name fields below prefix), as the
// handler decodes it: JSON Schema's integers include 7.0, Go's decoder
// does not, so integral numbers are written as integers.
func checked(v *jsonschema.Schema, doc any, prefix string) ([]byte, error) {
	if err := validate(v, doc, prefix); err != nil {
		return nil, err
	}
	return json.Marshal(integral(doc))
}

// integral is doc with every integral number (7.0, 7e2) written as an
// integer.
func integral(doc any) any {
	switch x := doc.(type) {
	case map[string]any:
		for k, v := range x {
			x[k] = integral(v)
		}
	case []any:
		for i, v := range x {
			x[i] = integral(v)
		}
	case json.Number:
		if f, err := x.Float64(); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 &&
			strings.ContainsAny(string(x), ".eE") {
			return json.Number(strconv.FormatInt(int64(f), 10))
		}
	}
	return doc
}

// authorized says whether r's token has the role need, and answers (401,
// 403) when it has not.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request, need role, tenantOK bool) (principal, bool) {
	who, ok := s.principal(r)
	switch {
	case !ok:
		s.unauthorized.Add(1)
		// Answered at once and closed: a body it announced is never waited for.
		w.Header().Set("Connection", "close")
		w.Header().Set("WWW-Authenticate", `Bearer realm="e3-controller"`)
		msg := "this request needs the header Authorization: Bearer <token> (the read-only or the admin token, or a tenant's)"
		if _, given := httpguard.BearerToken(r); given {
			msg = "the token is not one of ours, or was revoked (Authorization: Bearer <token>)"
		}
		writeError(w, http.StatusUnauthorized, "unauthorized", msg)
		return who, false
	case who.role < need:
		s.forbidden.Add(1)
		w.Header().Set("Connection", "close")
		writeError(w, http.StatusForbidden, "forbidden", "this request changes state: it needs an admin token, not a read-only one")
		return who, false
	case who.tenant != "" && !tenantOK:
		s.forbidden.Add(1)
		w.Header().Set("Connection", "close")
		writeError(w, http.StatusForbidden, "forbidden", "this request is about the whole fabric: a tenant's token reaches only its own services")
		return who, false
	}
	return who, true
}

// Collectors returns the API's counters of refused requests, for a registry.
func (s *Server) Collectors() []prometheus.Collector {
	refused := func(reason string, n *atomic.Uint64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "e3_controller_api_refused_total",
			Help: "API requests refused: unauthorized (401), forbidden (403), busy_client (429: the client's " +
				"requests in progress at their cap), too_many_streams (429: the token's streams at their cap), " +
				"slow_body (408: a body under the minimum rate).",
			ConstLabels: prometheus.Labels{"reason": reason}}, func() float64 { return float64(n.Load()) })
	}
	return []prometheus.Collector{refused("unauthorized", &s.unauthorized), refused("forbidden", &s.forbidden),
		refused("busy_client", &s.busyClient), refused("too_many_streams", &s.hub.refused),
		refused("slow_body", &s.slowBody), s.errs}
}

// role is what the request's bearer token allows, if it is one of ours.
// principal is who a request comes from: its token's role, and its
// tenant ("" for the fabric's own tokens).
type principal struct {
	role   role
	tenant string
}

type principalKey struct{}

// caller is the principal of a request its handler serves.
func caller(r *http.Request) principal {
	p, _ := r.Context().Value(principalKey{}).(principal)
	return p
}

// principal finds r's token: one of the fabric's, or a tenant's (a read
// of etcd, so a revoked token stops at once on every replica).
func (s *Server) principal(r *http.Request) (principal, bool) {
	tok, ok := httpguard.BearerToken(r)
	match := func(want string) bool { return ok && httpguard.Equal(tok, want) }
	switch {
	case match(s.Tokens.Admin):
		return principal{role: roleAdmin}, true
	case match(s.Tokens.Read):
		return principal{role: roleRead}, true
	case !ok:
		return principal{}, false
	}
	tenant, rl, found, err := s.c.LookupToken(r.Context(), tok)
	if err != nil || !found {
		return principal{}, false
	}
	p := principal{role: roleRead, tenant: tenant}
	if rl == model.RoleAdmin {
		p.role = roleAdmin
	}
	return p, true
}

func errorStatus(err error) (int, string) {
	var he *httpError
	if errors.As(err, &he) {
		return he.status, he.code
	}
	if fe := (*fieldError)(nil); errors.As(err, &fe) {
		return http.StatusBadRequest, "invalid"
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return http.StatusGatewayTimeout, "timeout"
	}
	k := controller.KindOf(err)
	switch k {
	case controller.KindInvalid:
		// Well-formed (the schema took it) but not what the fabric
		// can take: a rule across fields, a name that is not there.
		return http.StatusUnprocessableEntity, string(k)
	case controller.KindNotFound:
		return http.StatusNotFound, string(k)
	case controller.KindConflict, controller.KindNoBandwidth, controller.KindQuota:
		return http.StatusConflict, string(k)
	case controller.KindUnroutable:
		return http.StatusUnprocessableEntity, string(k)
	case controller.KindExhausted:
		return http.StatusInsufficientStorage, string(k)
	case controller.KindNotLeader:
		return http.StatusServiceUnavailable, string(k)
	}
	return http.StatusInternalServerError, string(controller.KindInternal)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeFieldError(w, status, code, msg, "")
}

// writeFieldError is writeError for an error about one field of the request.
func writeFieldError(w http.ResponseWriter, status int, code, msg, field string) {
	var e model.APIError
	e.Error.Code, e.Error.Message, e.Error.Field = code, msg, field
	writeJSON(w, status, e)
}

// decode reads a JSON body strictly: unknown fields and trailing data are errors.
func decode(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	var raw json.RawMessage
	err := dec.Decode(&raw)
	if err == nil && !bytes.HasPrefix(raw, []byte("{")) {
		// Every body is an object: null, a number or a list would decode
		// into the zero value and be taken for one.
		return badRequest("request body is %s: want a JSON object", firstWord(raw))
	}
	if err == nil {
		inner := json.NewDecoder(bytes.NewReader(raw))
		inner.DisallowUnknownFields()
		err = inner.Decode(v)
	}
	if err != nil {
		var he *httpError
		if errors.As(err, &he) {
			return he
		}
		if errors.Is(err, io.EOF) {
			return badRequest("request body is empty: want a JSON object")
		}
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return &httpError{http.StatusRequestEntityTooLarge, "invalid", fmt.Sprintf("request body larger than %d bytes", mbe.Limit)}
		}
		return badRequest("malformed JSON body: %v", err)
	}
	if dec.More() {
		return badRequest("malformed JSON body: data after the object")
	}
	return nil
}

// firstWord names a JSON value's kind for an error message.
func firstWord(raw []byte) string {
	switch {
	case bytes.Equal(raw, []byte("null")):
		return "null"
	case bytes.HasPrefix(raw, []byte("[")):
		return "a list"
	case bytes.HasPrefix(raw, []byte(`"`)):
		return "a string"
	default:
		return "a scalar"
	}
}

func (s *Server) status(r *http.Request) (int, any, error) {
	snap, err := s.c.Snapshot(r.Context())
	if err != nil {
		return 0, nil, err
	}
	v := model.StatusView{Leader: snap.Leader, Generation: snap.Generation, Nodes: len(snap.Topology.Nodes),
		Links: len(snap.Topology.Links), Services: map[string]int{}}
	v.LeaderURL, _ = controller.LeaderURL(r.Context(), s.c.Etcd())
	for _, n := range snap.Topology.Nodes {
		if snap.NodeUp(n.Name) {
			v.NodesUp++
		}
	}
	for _, l := range snap.Topology.Links {
		if snap.LinkUp(l.ID) {
			v.LinksUp++
		}
	}
	for _, rec := range snap.Services {
		v.Services[snap.ServiceStatus(rec).State]++
	}
	v.API = &model.APIStats{}
	if s.Guard != nil {
		v.API = s.Guard.Stats()
	}
	v.API.Unauthorized, v.API.Forbidden = s.unauthorized.Load(), s.forbidden.Load()
	return 200, v, nil
}

// nodeCredentials issues the node's agent new etcd credentials: its own
// user, which reads only the node's desired state and writes only its
// status (docs/security.md). The previous password stops working.
func (s *Server) nodeCredentials(r *http.Request) (int, any, error) {
	node := r.PathValue("node")
	snap, err := s.c.Snapshot(r.Context())
	if err != nil {
		return 0, nil, err
	}
	if !snap.Topology.HasNode(node) {
		return 0, nil, &httpError{http.StatusNotFound, "not_found", fmt.Sprintf("unknown node %q", node)}
	}
	if s.Credentials == nil {
		return 0, nil, &httpError{http.StatusNotImplemented, "not_configured", "this controller does not issue etcd credentials"}
	}
	cred, err := s.Credentials(r.Context(), node)
	if err != nil {
		return 0, nil, err
	}
	return 200, cred, nil
}

func (s *Server) nodes(r *http.Request) (int, any, error) {
	snap, err := s.c.Snapshot(r.Context())
	if err != nil {
		return 0, nil, err
	}
	return 200, nodeViews(snap), nil
}

func nodeViews(snap *controller.Snapshot) []model.NodeView {
	use := snap.LabelUse()
	out := []model.NodeView{}
	for _, n := range snap.Topology.Nodes {
		st := snap.Status[n.Name]
		v := model.NodeView{Name: n.Name, Role: n.Role, Up: snap.NodeUp(n.Name), AgentUp: snap.AgentUp(n.Name), BootID: st.BootID,
			DesiredGeneration: snap.NodeGen[n.Name], AppliedGeneration: st.AppliedGeneration, Error: st.Error,
			LabelsUsed: use[n.Name], Ports: []model.PortView{}, Drained: n.Drained}
		if n.Drained {
			v.Carrying = snap.Carrying(n.Name)
		}
		reported := map[string]bool{}
		for _, p := range st.Ports {
			reported[p.Name] = p.LinkUp
		}
		linkUp := func(port string) *bool {
			if up, ok := reported[port]; ok {
				return &up
			}
			return nil
		}
		for _, l := range snap.Topology.NodeLinks(n.Name) {
			e, _ := l.End(n.Name)
			v.Ports = append(v.Ports, model.PortView{Name: e.Port, Kind: "fabric", MAC: topology.PortMAC(n.Name, e.Port), LinkUp: linkUp(e.Port)})
		}
		for _, cp := range snap.Topology.CustomerPorts {
			if cp.Node == n.Name {
				v.Ports = append(v.Ports, model.PortView{Name: cp.Port, Kind: "customer", LinkUp: linkUp(cp.Port)})
			}
		}
		out = append(out, v)
	}
	return out
}

// drain puts a node in maintenance or takes it out; the answer is the
// node as GET /v1/nodes shows it.
func (s *Server) drain(r *http.Request, drained bool) (int, any, error) {
	node := r.PathValue("node")
	if err := s.c.SetDrained(r.Context(), node, drained); err != nil {
		return 0, nil, err
	}
	snap, err := s.c.Snapshot(r.Context())
	if err != nil {
		return 0, nil, err
	}
	for _, v := range nodeViews(snap) {
		if v.Name == node {
			return 200, v, nil
		}
	}
	return 0, nil, fmt.Errorf("node %s vanished", node)
}

func (s *Server) links(r *http.Request) (int, any, error) {
	snap, err := s.c.Snapshot(r.Context())
	if err != nil {
		return 0, nil, err
	}
	return 200, linkViews(snap), nil
}

func linkViews(snap *controller.Snapshot) []model.LinkView {
	out := []model.LinkView{}
	for _, l := range snap.Topology.Links {
		v := model.LinkView{ID: l.ID, Name: l.Name(), A: l.A.Node + ":" + l.A.Port, B: l.B.Node + ":" + l.B.Port,
			Cost: l.Cost, CapacityMbps: l.CapacityMbps, ReservedMbps: snap.Reserved[l.ID], Up: snap.LinkUp(l.ID),
			BFD: snap.LinkBFD(l)}
		if m, ok := snap.Load[l.ID]; ok {
			v.LoadMbps = &m
		}
		for _, e := range []topology.Endpoint{l.A, l.B} {
			if st := snap.PortStats(e.Node, e.Port); st != nil {
				if v.Stats == nil {
					v.Stats = map[string]*nodestate.PortStats{}
				}
				v.Stats[e.Node] = st
			}
		}
		out = append(out, v)
	}
	return out
}

func (s *Server) setCost(r *http.Request) (int, any, error) {
	var body model.LinkCost
	if err := decode(r, &body); err != nil {
		return 0, nil, err
	}
	if err := s.c.SetLinkCost(r.Context(), r.PathValue("link"), body.Cost); err != nil {
		return 0, nil, err
	}
	return s.links(r)
}

func (s *Server) getTopology(r *http.Request) (int, any, error) {
	snap, err := s.c.Snapshot(r.Context())
	if err != nil {
		return 0, nil, err
	}
	return 200, s.topologyFor(r, snap.Topology), nil
}

// topologyFor is t as r's token may read it: BFD keys are the admin's.
func (s *Server) topologyFor(r *http.Request, t *topology.Topology) *topology.Topology {
	if caller(r).role < roleAdmin {
		return t.Redacted()
	}
	return t
}

// putTopology takes a topology file (YAML, or JSON which is YAML too).
func (s *Server) putTopology(r *http.Request) (int, any, error) {
	data, err := io.ReadAll(r.Body)
	if err != nil {
		return 0, nil, badRequest("reading body: %v", err)
	}
	var t *topology.Topology
	var services []topology.FileService
	if bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) {
		// JSON: read as such (YAML takes most JSON, not all of its escapes).
		var f topology.File
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err = dec.Decode(&f); err == nil {
			t, services, err = f.Parse()
		} else {
			err = fmt.Errorf("topology: %w", err)
		}
	} else {
		t, services, err = topology.Parse(data)
	}
	if err != nil {
		var fe *topology.FieldError
		if errors.As(err, &fe) { // well-formed, but not a topology the fabric takes
			return 0, nil, &controller.Error{Kind: controller.KindInvalid, Msg: err.Error(), Field: fe.Field}
		}
		return 0, nil, badRequest("%v", err)
	}
	if err := s.c.ImportTopology(r.Context(), t, services); err != nil {
		return 0, nil, err
	}
	return s.getTopology(r)
}

func (s *Server) view(snap *controller.Snapshot, rec *model.ServiceRecord, detail bool) model.ServiceView {
	v := model.ServiceView{ServiceSpec: rec.Spec, ID: rec.ID, Status: snap.ServiceStatus(rec),
		Protection: snap.Protection(rec), Generation: rec.Generation}
	if detail {
		route := rec.Route
		v.Route, v.Allocs, v.Checks = &route, snap.Allocs(rec), snap.Checks(rec)
		v.DF = desired.DesignatedForwarders(&rec.Spec, &rec.Route)
	}
	v.Move = rec.Move
	return v
}

func (s *Server) listServices(r *http.Request) (int, any, error) {
	snap, err := s.c.Snapshot(r.Context())
	if err != nil {
		return 0, nil, err
	}
	out := []model.ServiceView{}
	tenant := caller(r).tenant
	for _, n := range snap.ServiceNames() {
		if rec := snap.Services[n]; tenant == "" || rec.Spec.Tenant == tenant {
			out = append(out, s.view(snap, rec, false))
		}
	}
	return 200, out, nil
}

// owns refuses a tenant's request about a service of another tenant as
// if it did not exist.
func (s *Server) owns(r *http.Request, name string) error {
	tenant := caller(r).tenant
	if tenant == "" {
		return nil
	}
	rec, err := s.c.Service(r.Context(), name)
	if err != nil || rec.Spec.Tenant != tenant {
		return &httpError{http.StatusNotFound, "not_found", fmt.Sprintf("service %s not found", name)}
	}
	return nil
}

func (s *Server) service(r *http.Request, name string, status int) (int, any, error) {
	snap, err := s.c.Snapshot(r.Context())
	if err != nil {
		return 0, nil, err
	}
	rec, ok := snap.Services[name]
	if t := caller(r).tenant; !ok || (t != "" && rec.Spec.Tenant != t) {
		return 0, nil, &httpError{http.StatusNotFound, "not_found", fmt.Sprintf("service %s not found", name)}
	}
	return status, s.view(snap, rec, true), nil
}

func (s *Server) getService(r *http.Request) (int, any, error) {
	return s.service(r, r.PathValue("name"), 200)
}

func (s *Server) createService(r *http.Request) (int, any, error) {
	var spec model.ServiceSpec
	if err := decode(r, &spec); err != nil {
		return 0, nil, err
	}
	if t := caller(r).tenant; t != "" {
		if spec.Tenant != "" && spec.Tenant != t {
			return 0, nil, &httpError{http.StatusNotFound, "not_found", fmt.Sprintf("tenant %s not found", spec.Tenant)}
		}
		spec.Tenant = t
	}
	if err := s.c.CreateService(r.Context(), spec); err != nil {
		return 0, nil, err
	}
	return s.service(r, spec.Name, http.StatusCreated)
}

func (s *Server) updateService(r *http.Request) (int, any, error) {
	var u model.ServiceUpdate
	if err := decode(r, &u); err != nil {
		return 0, nil, err
	}
	name := r.PathValue("name")
	if err := s.owns(r, name); err != nil {
		return 0, nil, err
	}
	if err := s.c.UpdateService(r.Context(), name, u.AddCircuits, u.RemoveCircuits); err != nil {
		return 0, nil, err
	}
	return s.service(r, name, 200)
}

func (s *Server) deleteService(r *http.Request) (int, any, error) {
	if err := s.owns(r, r.PathValue("name")); err != nil {
		return 0, nil, err
	}
	if err := s.c.DeleteService(r.Context(), r.PathValue("name")); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}
