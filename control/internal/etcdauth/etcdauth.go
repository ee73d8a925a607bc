// Package etcdauth is the least-privilege layout of the fabric's etcd
// (docs/security.md): mutual TLS for every client and peer, with
// certificates from the fabric's own CA (pki.go), and etcd's RBAC with one
// user per party, named by the common name of its certificate. The users
// have no password: a certificate is the only way in.
//
//   - root: made at bootstrap; used only to manage users (the bootstrap and
//     issuing a node's credentials) and for etcd's maintenance RPCs, never
//     for the fabric's own reads and writes.
//   - e3-controller: read and write everything under /e3/.
//   - node-NAME (one per node, for its agent): read /e3/v1/desired/NAME,
//     read and write /e3/v1/status/NAME; nothing else.
package etcdauth

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/authpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/e3fabric/e3fabric/control/internal/nodestate"
	"github.com/e3fabric/e3fabric/control/internal/secrets"
)

// Users and roles.
const (
	RootUser       = "root"
	ControllerUser = "e3-controller"
	controllerRole = "e3-controller"
)

// NodeUser is the etcd user (and role) of node's agent.
func NodeUser(node string) string { return "node-" + node }

// Credentials are what a client needs to reach etcd as one user. An
// agent's credentials file holds them as JSON (mode 0600).
type Credentials struct {
	Endpoints string `json:"endpoints"`      // comma-separated URLs
	User      string `json:"user,omitempty"` // the certificate's common name
	CA        string `json:"ca,omitempty"`   // PEM: the certificate(s) to trust
	Cert      string `json:"cert,omitempty"` // PEM: the client certificate
	Key       string `json:"key,omitempty"`  // PEM: its private key
}

// Save writes c to file, mode 0600: it holds a private key.
func (c Credentials) Save(file string) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(file, b, 0o600); err != nil {
		return fmt.Errorf("etcd credentials: %w", err)
	}
	return nil
}

// Load reads a credentials file.
func Load(file string) (Credentials, error) {
	var c Credentials
	b, err := os.ReadFile(file)
	if err != nil {
		return c, fmt.Errorf("etcd credentials: %w", err)
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("etcd credentials %s: %w", file, err)
	}
	if c.Endpoints == "" {
		return c, fmt.Errorf("etcd credentials %s: no endpoints", file)
	}
	return c, nil
}

// Config is the client configuration of c. The client connects lazily and
// keeps retrying, so a client made while etcd is down works once it is up.
func (c Credentials) Config() (clientv3.Config, error) {
	cfg := clientv3.Config{Endpoints: strings.Split(c.Endpoints, ","), DialTimeout: 5 * time.Second,
		Logger:             zap.NewNop(),
		MaxCallSendMsgSize: 256 << 20, MaxCallRecvMsgSize: 256 << 20,
		// gRPC's reconnect backoff grows to 2 minutes: an agent would
		// stay cut off that long after etcd (the controller) came back.
		DialOptions: []grpc.DialOption{grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second},
			MinConnectTimeout: 5 * time.Second,
		})}}
	if c.CA != "" {
		t, err := secrets.TrustPEM([]byte(c.CA))
		if err != nil {
			return cfg, fmt.Errorf("etcd credentials: ca: %w", err)
		}
		cfg.TLS = t
	} else if strings.HasPrefix(c.Endpoints, "https://") {
		cfg.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	if c.Cert != "" {
		if cfg.TLS == nil {
			return cfg, errors.New("etcd credentials: a client certificate needs https endpoints")
		}
		pair, err := tls.X509KeyPair([]byte(c.Cert), []byte(c.Key))
		if err != nil {
			return cfg, fmt.Errorf("etcd credentials: cert: %w", err)
		}
		cfg.TLS.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// Client opens a client with c, and opts on its connections.
func (c Credentials) Client(opts ...grpc.DialOption) (*clientv3.Client, error) {
	cfg, err := c.Config()
	if err != nil {
		return nil, err
	}
	cfg.DialOptions = append(cfg.DialOptions, opts...)
	cli, err := clientv3.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("etcd %s as %q: %w", c.Endpoints, c.User, err)
	}
	return cli, nil
}

// Bootstrap turns authentication on in a store that has none yet, through
// admin (a client with root's certificate): root, and the controller's user
// and role. A store that already has it is left alone; every step is
// idempotent, so an etcd too old to tell (3.4) gets them all again.
func Bootstrap(ctx context.Context, admin *clientv3.Client) error {
	st, err := admin.AuthStatus(ctx)
	switch {
	case status.Code(err) == codes.Unimplemented:
	case err != nil:
		return fmt.Errorf("etcd auth status: %w", err)
	case st.Enabled:
		return nil
	}
	steps := []func() error{
		func() error { return ensureUser(ctx, admin, RootUser) },
		func() error { _, err := admin.UserGrantRole(ctx, RootUser, "root"); return err },
		func() error { return ensureRole(ctx, admin, controllerRole) },
		func() error {
			_, err := admin.RoleGrantPermission(ctx, controllerRole, nodestate.Prefix,
				clientv3.GetPrefixRangeEnd(nodestate.Prefix), clientv3.PermissionType(authpb.READWRITE))
			return err
		},
		func() error { return ensureUser(ctx, admin, ControllerUser) },
		func() error { _, err := admin.UserGrantRole(ctx, ControllerUser, controllerRole); return err },
		func() error { _, err := admin.AuthEnable(ctx); return err },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return fmt.Errorf("etcd auth bootstrap: %w", err)
		}
	}
	return nil
}

// IssueNode gives node's agent its user and role through root, and a new
// certificate from pki for that user (its older one is revoked).
func IssueNode(ctx context.Context, root *clientv3.Client, pki *PKI, node string) (Credentials, error) {
	user := NodeUser(node)
	steps := []func() error{
		func() error { return ensureRole(ctx, root, user) },
		func() error { return grantDesired(ctx, root, user, node) },
		func() error {
			_, err := root.RoleGrantPermission(ctx, user, nodestate.StatusKey(node), "", clientv3.PermissionType(authpb.READWRITE))
			return err
		},
		func() error { return ensureUser(ctx, root, user) },
		func() error { _, err := root.UserGrantRole(ctx, user, user); return err },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return Credentials{}, fmt.Errorf("etcd credentials of %s: %w", node, err)
		}
	}
	c, err := pki.Issue(user)
	if err != nil {
		return Credentials{}, fmt.Errorf("etcd credentials of %s: %w", node, err)
	}
	return c, nil
}

// grantDesired lets role read node's desired keys (nodestate.DesiredNode).
func grantDesired(ctx context.Context, root *clientv3.Client, role, node string) error {
	p := nodestate.DesiredNode(node)
	_, err := root.RoleGrantPermission(ctx, role, p, clientv3.GetPrefixRangeEnd(p), clientv3.PermissionType(authpb.READ))
	return err
}

// UpgradeNodeRoles gives every node role the read permission of today's
// desired-key layout, so agents issued credentials under the older one (a
// single key per node) read the per-object keys after an upgrade.
func UpgradeNodeRoles(ctx context.Context, root *clientv3.Client) error {
	r, err := root.RoleList(ctx)
	if err != nil {
		return fmt.Errorf("etcd roles: %w", err)
	}
	for _, role := range r.Roles {
		node, ok := strings.CutPrefix(role, NodeUser(""))
		if !ok || node == "" {
			continue
		}
		if err := grantDesired(ctx, root, role, node); err != nil {
			return fmt.Errorf("etcd role %s: %w", role, err)
		}
	}
	return nil
}

// ensureUser adds user without a password (its certificate's common name
// authenticates it), or leaves an existing one as it is.
func ensureUser(ctx context.Context, c *clientv3.Client, user string) error {
	_, err := c.UserAddWithOptions(ctx, user, "", &clientv3.UserAddOptions{NoPassword: true})
	if errors.Is(err, rpctypes.ErrUserAlreadyExist) {
		return nil
	}
	return err
}

func ensureRole(ctx context.Context, c *clientv3.Client, role string) error {
	_, err := c.RoleAdd(ctx, role)
	if errors.Is(err, rpctypes.ErrRoleAlreadyExist) {
		return nil
	}
	return err
}
