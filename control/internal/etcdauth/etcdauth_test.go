package etcdauth

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"go.etcd.io/etcd/api/v3/authpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/e3fabric/e3fabric/control/internal/nodestate"
	"github.com/e3fabric/e3fabric/control/internal/secrets"
	"github.com/e3fabric/e3fabric/control/internal/store"
)

// An agent's user reads only its node's desired state and writes only its
// node's status; nobody without a user reads or writes anything; the
// controller's user does its job but cannot manage users.
func TestLeastPrivilege(t *testing.T) {
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "etcd.crt"), filepath.Join(dir, "etcd.key")
	if _, err := secrets.SelfSigned(cert, key, []string{"127.0.0.1"}); err != nil {
		t.Fatal(err)
	}
	// Ports of this package alone: go test runs packages side by side,
	// and the agent's integration test holds 23800-23801.
	const url = "https://127.0.0.1:23776"
	e, err := store.StartEmbedded(store.EmbedOptions{DataDir: filepath.Join(dir, "etcd"), ClientURL: url,
		PeerURL: "http://127.0.0.1:23777", CertFile: cert, KeyFile: key})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	pem, _ := os.ReadFile(cert)
	as := func(user, pass string) Credentials {
		return Credentials{Endpoints: url, User: user, Password: pass, CA: string(pem)}
	}
	client := func(c Credentials) *clientv3.Client {
		cli, err := c.Client()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cli.Close() })
		return cli
	}
	ctx := context.Background()
	anon := client(as("", ""))
	rootPass, ctrlPass := Password(), Password()
	if err := Bootstrap(ctx, anon, rootPass, ctrlPass); err != nil {
		t.Fatal(err)
	}
	if err := Bootstrap(ctx, anon, "other", "other"); err != nil { // enabled already: a no-op
		t.Fatal(err)
	}
	root := client(as(RootUser, rootPass))
	ctrl := client(as(ControllerUser, ctrlPass))
	for _, n := range []string{"leaf1", "leaf2", "leaf10"} {
		if _, err := ctrl.Put(ctx, nodestate.BaseKey(n), "desired of "+n); err != nil {
			t.Fatalf("controller writes desired: %v", err)
		}
	}
	pass1, err := IssueNode(ctx, root, "leaf1")
	if err != nil {
		t.Fatal(err)
	}
	leaf1 := client(as(NodeUser("leaf1"), pass1))

	denied := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, rpctypes.ErrPermissionDenied) && !errors.Is(err, rpctypes.ErrUserEmpty) &&
			!errors.Is(err, rpctypes.ErrInvalidAuthToken) && !errors.Is(err, rpctypes.ErrAuthFailed) {
			t.Errorf("%s: want permission denied, got %v", what, err)
		}
	}
	allowed := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
	r, err := leaf1.Get(ctx, nodestate.DesiredNode("leaf1"), clientv3.WithPrefix())
	allowed("leaf1 reads its desired state", err)
	if err == nil && (len(r.Kvs) != 1 || string(r.Kvs[0].Value) != "desired of leaf1") {
		t.Errorf("leaf1 reads %d keys under its prefix, want its one", len(r.Kvs))
	}
	_, err = leaf1.Get(ctx, nodestate.DesiredNode("leaf10"), clientv3.WithPrefix())
	denied("leaf1 reads leaf10's desired state", err)
	_, err = leaf1.Put(ctx, nodestate.StatusKey("leaf1"), "{}")
	allowed("leaf1 writes its status", err)
	_, err = leaf1.Get(ctx, nodestate.BaseKey("leaf2"))
	denied("leaf1 reads leaf2's desired state", err)
	_, err = leaf1.Put(ctx, nodestate.BaseKey("leaf2"), "evil")
	denied("leaf1 writes leaf2's desired state", err)
	_, err = leaf1.Put(ctx, nodestate.BaseKey("leaf1"), "evil")
	denied("leaf1 writes its own desired state", err)
	_, err = leaf1.Put(ctx, nodestate.StatusKey("leaf2"), "{}")
	denied("leaf1 writes leaf2's status", err)
	_, err = leaf1.Get(ctx, nodestate.Prefix, clientv3.WithPrefix())
	denied("leaf1 lists the store", err)
	_, err = anon.Put(ctx, nodestate.BaseKey("leaf1"), "evil")
	denied("no user writes", err)
	_, err = anon.Get(ctx, nodestate.BaseKey("leaf1"))
	denied("no user reads", err)
	_, err = ctrl.UserAdd(ctx, "mallory", "x")
	denied("the controller adds a user", err)
	_, err = as(NodeUser("leaf1"), "guess").Client()
	denied("a wrong password", err)
	// Issuing again rotates the password: the old one stops working.
	if _, err := IssueNode(ctx, root, "leaf1"); err != nil {
		t.Fatal(err)
	}
	_, err = as(NodeUser("leaf1"), pass1).Client()
	denied("the old password after a new one was issued", err)
	if r, _ := ctrl.Get(ctx, nodestate.BaseKey("leaf2")); len(r.Kvs) != 1 || string(r.Kvs[0].Value) != "desired of leaf2" {
		t.Fatal("leaf2's desired state changed")
	}

	// A role issued under the older layout (one desired key per node)
	// reads the per-object keys once the roles are upgraded.
	pass2, err := IssueNode(ctx, root, "leaf2")
	if err != nil {
		t.Fatal(err)
	}
	p := nodestate.DesiredNode("leaf2")
	if _, err := root.RoleRevokePermission(ctx, NodeUser("leaf2"), p, clientv3.GetPrefixRangeEnd(p)); err != nil {
		t.Fatal(err)
	}
	if _, err := root.RoleGrantPermission(ctx, NodeUser("leaf2"), nodestate.DesiredPrefix+"leaf2", "", clientv3.PermissionType(authpb.READ)); err != nil {
		t.Fatal(err)
	}
	leaf2 := client(as(NodeUser("leaf2"), pass2))
	_, err = leaf2.Get(ctx, p, clientv3.WithPrefix())
	denied("an old-layout role reads the new keys", err)
	if err := UpgradeNodeRoles(ctx, root); err != nil {
		t.Fatal(err)
	}
	_, err = leaf2.Get(ctx, p, clientv3.WithPrefix())
	allowed("an upgraded role reads the new keys", err)
}
