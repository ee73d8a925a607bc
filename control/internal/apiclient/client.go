// Package apiclient is a Go client of the controller's northbound API.
package apiclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/e3fabric/e3fabric/control/internal/etcdauth"
	"github.com/e3fabric/e3fabric/control/internal/model"
	"github.com/e3fabric/e3fabric/control/internal/secrets"
	"github.com/e3fabric/e3fabric/control/internal/topology"
)

// Client talks to one controller.
type Client struct {
	Server string // e.g. http://127.0.0.1:8080
	Token  string
	HTTP   *http.Client
}

// New returns a client.
func New(server, token string) *Client {
	return &Client{Server: strings.TrimRight(server, "/"), Token: token, HTTP: &http.Client{Timeout: 60 * time.Second}}
}

// NewTLS returns a client that checks the controller's certificate against
// caFile, or pins it by its SHA-256 fingerprint (secrets.ClientTLS).
func NewTLS(server, token, caFile, pin string) (*Client, error) {
	c := New(server, token)
	cfg, err := secrets.ClientTLS(caFile, pin)
	if err != nil {
		return nil, err
	}
	if cfg != nil {
		c.HTTP.Transport = &http.Transport{TLSClientConfig: cfg, Proxy: http.ProxyFromEnvironment}
	}
	return c, nil
}

// Error is an error the API returned.
type Error struct {
	Status  int
	Code    string
	Message string
	Field   string // the request field at fault, if the API named one
}

func (e *Error) Error() string { return e.Message }

func (c *Client) do(ctx context.Context, method, path, ctype string, body io.Reader, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, c.Server+path, body)
	if err != nil {
		return err
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return fmt.Errorf("controller %s: %w", c.Server, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("controller %s: %w", c.Server, err)
	}
	if resp.StatusCode >= 300 {
		var e model.APIError
		if json.Unmarshal(data, &e) == nil && e.Error.Message != "" {
			return &Error{Status: resp.StatusCode, Code: e.Error.Code, Message: e.Error.Message, Field: e.Error.Field}
		}
		return &Error{Status: resp.StatusCode, Code: "http", Message: fmt.Sprintf("%s %s: %s", method, path, resp.Status)}
	}
	if out == nil || len(data) == 0 {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("controller %s: bad response to %s %s: %w", c.Server, method, path, err)
	}
	return nil
}

func (c *Client) doJSON(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	return c.do(ctx, method, path, "application/json", body, out)
}

// Status returns the fabric summary.
func (c *Client) Status(ctx context.Context) (v model.StatusView, err error) {
	return v, c.doJSON(ctx, "GET", "/v1/status", nil, &v)
}

// Nodes lists the nodes.
func (c *Client) Nodes(ctx context.Context) (v []model.NodeView, err error) {
	return v, c.doJSON(ctx, "GET", "/v1/nodes", nil, &v)
}

// SaveSnapshot returns the fabric's snapshot as the API sends it (JSON).
func (c *Client) SaveSnapshot(ctx context.Context) (json.RawMessage, error) {
	var v json.RawMessage
	return v, c.doJSON(ctx, "GET", "/v1/snapshot", nil, &v)
}

// RestoreSnapshot makes the fabric what the snapshot (JSON) describes.
func (c *Client) RestoreSnapshot(ctx context.Context, snap json.RawMessage) (v model.StatusView, err error) {
	return v, c.doJSON(ctx, "PUT", "/v1/snapshot", snap, &v)
}

// NodeCredentials issues node's agent new etcd credentials.
func (c *Client) NodeCredentials(ctx context.Context, node string) (v etcdauth.Credentials, err error) {
	return v, c.doJSON(ctx, "POST", "/v1/nodes/"+url.PathEscape(node)+"/credentials", nil, &v)
}

// Drain puts node in maintenance (drained true) or takes it out.
func (c *Client) Drain(ctx context.Context, node string, drained bool) (v model.NodeView, err error) {
	action := map[bool]string{true: "drain", false: "undrain"}[drained]
	return v, c.doJSON(ctx, "POST", "/v1/nodes/"+url.PathEscape(node)+"/"+action, nil, &v)
}

// Links lists the fabric links.
func (c *Client) Links(ctx context.Context) (v []model.LinkView, err error) {
	return v, c.doJSON(ctx, "GET", "/v1/links", nil, &v)
}

// Events returns the controller's event log, oldest first.
func (c *Client) Events(ctx context.Context) (v []model.Event, err error) {
	return v, c.doJSON(ctx, "GET", "/v1/events", nil, &v)
}

// SetLinkCost changes a link's cost; link is its id or name.
func (c *Client) SetLinkCost(ctx context.Context, link string, cost int) (v []model.LinkView, err error) {
	return v, c.doJSON(ctx, "PUT", "/v1/links/"+url.PathEscape(link)+"/cost", model.LinkCost{Cost: cost}, &v)
}

// Topology returns the topology.
func (c *Client) Topology(ctx context.Context) (v topology.Topology, err error) {
	return v, c.doJSON(ctx, "GET", "/v1/topology", nil, &v)
}

// ImportTopology sends a topology file (YAML).
func (c *Client) ImportTopology(ctx context.Context, file []byte) (v topology.Topology, err error) {
	return v, c.do(ctx, "PUT", "/v1/topology", "application/yaml", bytes.NewReader(file), &v)
}

// Services lists the services.
func (c *Client) Services(ctx context.Context) (v []model.ServiceView, err error) {
	return v, c.doJSON(ctx, "GET", "/v1/services", nil, &v)
}

// Service shows one service.
func (c *Client) Service(ctx context.Context, name string) (v model.ServiceView, err error) {
	return v, c.doJSON(ctx, "GET", "/v1/services/"+url.PathEscape(name), nil, &v)
}

// CreateService creates a service.
func (c *Client) CreateService(ctx context.Context, spec model.ServiceSpec) (v model.ServiceView, err error) {
	return v, c.doJSON(ctx, "POST", "/v1/services", spec, &v)
}

// UpdateService adds and removes circuits.
func (c *Client) UpdateService(ctx context.Context, name string, u model.ServiceUpdate) (v model.ServiceView, err error) {
	return v, c.doJSON(ctx, "PATCH", "/v1/services/"+url.PathEscape(name), u, &v)
}

// Ping pings a service's pseudowire from one end to each other end.
func (c *Client) Ping(ctx context.Context, name string, count int) (v model.PingResult, err error) {
	return v, c.doJSON(ctx, "POST", "/v1/services/"+url.PathEscape(name)+"/ping", model.PingRequest{Count: count}, &v)
}

// Trace traces a service's pseudowire from one end to each other end.
func (c *Client) Trace(ctx context.Context, name string) (v []model.TraceResult, err error) {
	return v, c.doJSON(ctx, "POST", "/v1/services/"+url.PathEscape(name)+"/trace", nil, &v)
}

// DeleteService deletes a service.
func (c *Client) DeleteService(ctx context.Context, name string) error {
	return c.doJSON(ctx, "DELETE", "/v1/services/"+url.PathEscape(name), nil, nil)
}

func (c *Client) Intent(ctx context.Context) (v model.Intent, err error) {
	err = c.doJSON(ctx, "GET", "/v1/intent", nil, &v)
	return
}

func (c *Client) Apply(ctx context.Context, req model.ApplyRequest) (v model.ApplyResult, err error) {
	err = c.doJSON(ctx, "POST", "/v1/apply", req, &v)
	return
}

// Tenants lists the tenants.
func (c *Client) Tenants(ctx context.Context) (v []model.TenantView, err error) {
	return v, c.doJSON(ctx, "GET", "/v1/tenants", nil, &v)
}

// Tenant returns one tenant.
func (c *Client) Tenant(ctx context.Context, name string) (v model.TenantView, err error) {
	return v, c.doJSON(ctx, "GET", "/v1/tenants/"+url.PathEscape(name), nil, &v)
}

// PutTenant creates or replaces a tenant.
func (c *Client) PutTenant(ctx context.Context, t model.Tenant) (v model.TenantView, err error) {
	return v, c.doJSON(ctx, "PUT", "/v1/tenants/"+url.PathEscape(t.Name), t, &v)
}

// DeleteTenant deletes a tenant without services, and its tokens.
func (c *Client) DeleteTenant(ctx context.Context, name string) error {
	return c.doJSON(ctx, "DELETE", "/v1/tenants/"+url.PathEscape(name), nil, nil)
}

// CreateToken makes a token of the tenant with role (admin or read).
func (c *Client) CreateToken(ctx context.Context, tenant, role string) (v model.NewToken, err error) {
	return v, c.doJSON(ctx, "POST", "/v1/tenants/"+url.PathEscape(tenant)+"/tokens", model.TokenRequest{Role: role}, &v)
}

// RevokeToken revokes the tenant's token with id.
func (c *Client) RevokeToken(ctx context.Context, tenant, id string) error {
	return c.doJSON(ctx, "DELETE", "/v1/tenants/"+url.PathEscape(tenant)+"/tokens/"+url.PathEscape(id), nil, nil)
}

// MoveCircuit starts moving one end of an E-Line (live migration).
func (c *Client) MoveCircuit(ctx context.Context, name string, req model.MoveRequest) (v model.ServiceView, err error) {
	return v, c.doJSON(ctx, "POST", "/v1/services/"+url.PathEscape(name)+"/move", req, &v)
}
