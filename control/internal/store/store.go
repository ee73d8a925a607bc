// Package store is the controller's view of etcd: the key layout (documented
// in docs/control-plane.md, "etcd keys"), JSON values, and the embedded
// single-member etcd server the controller runs by default.
package store

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap/zapcore"

	"github.com/e3fabric/e3fabric/control/internal/nodestate"
)

// Keys. Everything lives under nodestate.Prefix; SchemaKey says which
// layout it is. A node's desired and status keys are in nodestate, the
// contract shared with the agent.
const (
	SchemaKey     = nodestate.Prefix + "schema"
	SchemaVersion = "2"
	// SchemaV1 stored each node's desired config as one document; a leader
	// that finds it upgrades the store (controller/migrate.go).
	SchemaV1       = "1"
	TopologyKey    = nodestate.Prefix + "topology"
	GenerationKey  = nodestate.Prefix + "generation"
	ServicePrefix  = nodestate.Prefix + "services/"
	CheckPrefix    = nodestate.Prefix + "checks/"
	ElectionPrefix = nodestate.Prefix + "leader"
	TenantPrefix   = nodestate.Prefix + "tenants/"
	TokenPrefix    = nodestate.Prefix + "tokens/" // + the token's SHA-256, hex
)

// TenantKey names one tenant's record.
func TenantKey(name string) string { return TenantPrefix + name }

// ServiceKey names one service's record.
func ServiceKey(name string) string { return ServicePrefix + name }

// CheckKey names one path check's record.
func CheckKey(key string) string { return CheckPrefix + key }

// Connect opens a client to endpoints (comma-separated URLs).
func Connect(endpoints string) (*clientv3.Client, error) {
	eps := strings.Split(endpoints, ",")
	c, err := clientv3.New(clientv3.Config{Endpoints: eps, DialTimeout: 5 * time.Second,
		MaxCallSendMsgSize: 256 << 20, MaxCallRecvMsgSize: 256 << 20})
	if err != nil {
		return nil, fmt.Errorf("etcd %s: %w", endpoints, err)
	}
	return c, nil
}

// EmbedOptions configure the embedded etcd.
type EmbedOptions struct {
	DataDir    string
	ClientURL  string // e.g. http://127.0.0.1:2379
	PeerURL    string // e.g. http://127.0.0.1:2380
	MaxRequest uint   // bytes; large desired configs need more than etcd's 1.5 MiB
	Quota      int64  // backend quota bytes; 0 = etcd's default
	// An https ClientURL or PeerURL serves over TLS with this pair; with
	// CAFile, every client and peer must show a certificate signed by that
	// CA and not revoked in CRLFile (mutual TLS).
	CertFile, KeyFile string
	CAFile, CRLFile   string
}

// StartEmbedded starts a single-member etcd and waits until it serves.
func StartEmbedded(o EmbedOptions) (*embed.Etcd, error) {
	cfg := embed.NewConfig()
	cfg.Dir = o.DataDir
	cfg.Name = "e3-controller"
	cu, err := url.Parse(o.ClientURL)
	if err != nil {
		return nil, fmt.Errorf("etcd client url %q: %w", o.ClientURL, err)
	}
	pu, err := url.Parse(o.PeerURL)
	if err != nil {
		return nil, fmt.Errorf("etcd peer url %q: %w", o.PeerURL, err)
	}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*cu}, []url.URL{*cu}
	if cu.Scheme == "https" {
		if cfg.ClientTLSInfo, err = o.tlsInfo(); err != nil {
			return nil, fmt.Errorf("etcd client url %s: %w", o.ClientURL, err)
		}
	}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*pu}, []url.URL{*pu}
	if pu.Scheme == "https" {
		if cfg.PeerTLSInfo, err = o.tlsInfo(); err != nil {
			return nil, fmt.Errorf("etcd peer url %s: %w", o.PeerURL, err)
		}
	}
	cfg.InitialCluster = cfg.Name + "=" + pu.String()
	cfg.LogLevel = zapcore.ErrorLevel.String()
	// One change is one transaction: a failure can move every service.
	cfg.MaxTxnOps = 1 << 20
	// The database is committed every BackendBatchInterval (100 ms), and
	// at once when a transaction brings it past BackendBatchLimit
	// operations: at etcd's 10,000 a batch of services waits for a commit
	// and fsync of the database file before its reply. The WAL already
	// holds the transaction, so let the timer do it.
	cfg.BackendBatchLimit = 1 << 20
	if o.MaxRequest > 0 {
		cfg.MaxRequestBytes = o.MaxRequest
	}
	if o.Quota > 0 {
		cfg.QuotaBackendBytes = o.Quota
	}
	// Old revisions of the (large) desired configs are garbage: keep an hour.
	cfg.AutoCompactionMode, cfg.AutoCompactionRetention = "periodic", "1h"
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("embedded etcd in %s: %w", o.DataDir, err)
	}
	select {
	case <-e.Server.ReadyNotify():
		return e, nil
	case <-time.After(60 * time.Second):
		e.Close()
		return nil, fmt.Errorf("embedded etcd in %s: not ready after 60s", o.DataDir)
	case err := <-e.Err():
		e.Close()
		return nil, fmt.Errorf("embedded etcd in %s: %w", o.DataDir, err)
	}
}

func (o EmbedOptions) tlsInfo() (transport.TLSInfo, error) {
	if o.CertFile == "" {
		return transport.TLSInfo{}, fmt.Errorf("https needs a certificate")
	}
	return transport.TLSInfo{CertFile: o.CertFile, KeyFile: o.KeyFile,
		TrustedCAFile: o.CAFile, ClientCertAuth: o.CAFile != "", CRLFile: o.CRLFile}, nil
}

// Schema reads the store's layout version ("" if none).
func Schema(ctx context.Context, c *clientv3.Client) (string, error) {
	r, err := c.Get(ctx, SchemaKey)
	if err != nil {
		return "", fmt.Errorf("etcd schema: %w", err)
	}
	if len(r.Kvs) == 0 {
		return "", nil
	}
	return string(r.Kvs[0].Value), nil
}

// InitSchema writes the schema version if the store is empty, and refuses a
// store written by another layout than this one or the one it upgrades.
func InitSchema(ctx context.Context, c *clientv3.Client) error {
	r, err := c.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(SchemaKey), "=", 0)).
		Then(clientv3.OpPut(SchemaKey, SchemaVersion)).Else(clientv3.OpGet(SchemaKey)).Commit()
	if err != nil {
		return fmt.Errorf("etcd schema: %w", err)
	}
	if !r.Succeeded {
		kvs := r.Responses[0].GetResponseRange().Kvs
		if len(kvs) == 1 && string(kvs[0].Value) != SchemaVersion && string(kvs[0].Value) != SchemaV1 {
			return fmt.Errorf("etcd schema: store has layout %q, this controller writes %q", kvs[0].Value, SchemaVersion)
		}
	}
	return nil
}

// GetJSON reads key into v; found is false if the key does not exist.
func GetJSON(ctx context.Context, c *clientv3.Client, key string, v any) (found bool, err error) {
	r, err := c.Get(ctx, key)
	if err != nil {
		return false, fmt.Errorf("etcd get %s: %w", key, err)
	}
	if len(r.Kvs) == 0 {
		return false, nil
	}
	if err := json.Unmarshal(r.Kvs[0].Value, v); err != nil {
		return true, fmt.Errorf("etcd %s: %w", key, err)
	}
	return true, nil
}

// ListJSON reads every key under prefix, in pages (service records of a big
// fabric exceed a gRPC message), all at one revision; fn gets the key without
// the prefix.
func ListJSON(ctx context.Context, c *clientv3.Client, prefix string, fn func(name string, value []byte) error) (rev int64, err error) {
	// etcd visits the whole rest of the range for every page (to count
	// it): pages are large, and callers split big ranges.
	const page = 2000
	end := clientv3.GetPrefixRangeEnd(prefix)
	key := prefix
	for {
		opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(page)}
		if rev != 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		r, err := c.Get(ctx, key, opts...)
		if err != nil {
			return 0, fmt.Errorf("etcd list %s: %w", prefix, err)
		}
		if rev == 0 {
			rev = r.Header.Revision
		}
		for _, kv := range r.Kvs {
			if err := fn(strings.TrimPrefix(string(kv.Key), prefix), kv.Value); err != nil {
				return 0, fmt.Errorf("etcd %s: %w", kv.Key, err)
			}
		}
		if !r.More || len(r.Kvs) == 0 {
			return rev, nil
		}
		key = string(r.Kvs[len(r.Kvs)-1].Key) + "\x00"
	}
}

// Statuses reads every node status.
func Statuses(ctx context.Context, c *clientv3.Client) (map[string]nodestate.NodeStatus, int64, error) {
	out := map[string]nodestate.NodeStatus{}
	rev, err := ListJSON(ctx, c, nodestate.StatusPrefix, func(name string, v []byte) error {
		var s nodestate.NodeStatus
		if err := json.Unmarshal(v, &s); err != nil {
			return err
		}
		out[name] = s
		return nil
	})
	return out, rev, err
}
