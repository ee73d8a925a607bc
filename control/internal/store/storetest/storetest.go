// Package storetest runs a real embedded etcd for tests.
package storetest

import (
	"fmt"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/e3fabric/e3fabric/control/internal/store"
)

// Start runs an embedded etcd in a temporary directory on 127.0.0.1:port
// (client) and port+1 (peer), and returns a client. Both stop at cleanup.
func Start(t testing.TB, port int) *clientv3.Client {
	t.Helper()
	return StartQuota(t, port, 0)
}

// StartQuota is Start with a backend quota of quota bytes (0: etcd's).
func StartQuota(t testing.TB, port int, quota int64) *clientv3.Client {
	t.Helper()
	e, err := store.StartEmbedded(store.EmbedOptions{DataDir: t.TempDir(), Quota: quota,
		ClientURL: fmt.Sprintf("http://127.0.0.1:%d", port), PeerURL: fmt.Sprintf("http://127.0.0.1:%d", port+1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	c, err := store.Connect(fmt.Sprintf("http://127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
