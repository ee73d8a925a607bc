package etcdauth

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/authpb"
	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/e3fabric/e3fabric/control/internal/nodestate"
	"github.com/e3fabric/e3fabric/control/internal/store"
)

// An agent's user reads only its node's desired state and writes only its
// node's status; nobody without a certificate of the fabric's CA gets past
// the handshake; the controller's user does its job but cannot manage
// users; a node's user reaches no maintenance or cluster RPC.
func TestLeastPrivilege(t *testing.T) {
	dir := t.TempDir()
	pki, err := OpenPKI(dir)
	if err != nil {
		t.Fatal(err)
	}
	cert, key := filepath.Join(dir, "etcd.crt"), filepath.Join(dir, "etcd.key")
	if err := pki.ServerFiles(cert, key, "member", []string{"127.0.0.1"}); err != nil {
		t.Fatal(err)
	}
	// Ports of this package alone: go test runs packages side by side,
	// and the agent's integration test holds 23800-23801.
	const url = "https://127.0.0.1:23776"
	e, err := store.StartEmbedded(store.EmbedOptions{DataDir: filepath.Join(dir, "etcd"), ClientURL: url,
		PeerURL: "https://127.0.0.1:23777", CertFile: cert, KeyFile: key, CAFile: pki.CAPath(), CRLFile: pki.CRLPath()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	issue := func(user string) Credentials {
		c, err := pki.Issue(user)
		if err != nil {
			t.Fatal(err)
		}
		c.Endpoints = url
		return c
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
	root := client(issue(RootUser))
	if err := Bootstrap(ctx, root); err != nil {
		t.Fatal(err)
	}
	if err := Bootstrap(ctx, root); err != nil { // enabled already: a no-op
		t.Fatal(err)
	}
	ctrl := client(issue(ControllerUser))
	for _, n := range []string{"leaf1", "leaf2", "leaf10"} {
		if _, err := ctrl.Put(ctx, nodestate.BaseKey(n), "desired of "+n); err != nil {
			t.Fatalf("controller writes desired: %v", err)
		}
	}
	creds1, err := IssueNode(ctx, root, pki, "leaf1")
	if err != nil {
		t.Fatal(err)
	}
	creds1.Endpoints = url
	leaf1 := client(creds1)

	denied := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, rpctypes.ErrPermissionDenied) && !errors.Is(err, rpctypes.ErrUserEmpty) &&
			!errors.Is(err, rpctypes.ErrInvalidAuthToken) && !errors.Is(err, rpctypes.ErrAuthFailed) &&
			!errors.Is(err, rpctypes.ErrUserNotFound) {
			t.Errorf("%s: want permission denied, got %v", what, err)
		}
	}
	// refused: the handshake fails, so no RPC is answered at all.
	refused := func(what string, c Credentials) {
		t.Helper()
		cli := client(c)
		tctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		if _, err := cli.Get(tctx, nodestate.BaseKey("leaf1")); err == nil {
			t.Errorf("%s: a read was answered", what)
		}
		if _, err := cli.AlarmList(tctx); err == nil {
			t.Errorf("%s: an alarm list was answered", what)
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
	_, err = ctrl.UserAdd(ctx, "mallory", "x")
	denied("the controller adds a user", err)

	// Maintenance and cluster RPCs are root's (etcd 3.6).
	_, err = leaf1.AlarmDisarm(ctx, &clientv3.AlarmMember{MemberID: uint64(e.Server.MemberID()), Alarm: etcdserverpb.AlarmType_NOSPACE})
	denied("leaf1 disarms an alarm", err)
	_, err = leaf1.Maintenance.(interface {
		Downgrade(context.Context, clientv3.DowngradeAction, string) (*clientv3.DowngradeResponse, error)
	}).Downgrade(ctx, clientv3.DowngradeEnable, "3.5.0")
	denied("leaf1 enables a downgrade", err)
	_, err = leaf1.MemberAdd(ctx, []string{"https://127.0.0.1:23799"})
	denied("leaf1 adds a member", err)
	_, err = leaf1.Defragment(ctx, url)
	denied("leaf1 defragments", err)
	_, err = leaf1.MoveLeader(ctx, 1)
	denied("leaf1 moves the leader", err)

	// Without a certificate, or with one of another CA, nothing is answered.
	anon := Credentials{Endpoints: url, CA: pki.CA()}
	refused("no certificate", anon)
	other, err := OpenPKI(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	forged, err := other.Issue(RootUser)
	if err != nil {
		t.Fatal(err)
	}
	forged.Endpoints, forged.CA = url, pki.CA()
	refused("a certificate of another CA", forged)

	// Issuing again rotates the certificate: the old one is refused at its
	// next handshake.
	if _, err := IssueNode(ctx, root, pki, "leaf1"); err != nil {
		t.Fatal(err)
	}
	refused("the old certificate after a new one was issued", creds1)
	if r, _ := ctrl.Get(ctx, nodestate.BaseKey("leaf2")); len(r.Kvs) != 1 || string(r.Kvs[0].Value) != "desired of leaf2" {
		t.Fatal("leaf2's desired state changed")
	}

	// A role issued under the older layout (one desired key per node)
	// reads the per-object keys once the roles are upgraded.
	creds2, err := IssueNode(ctx, root, pki, "leaf2")
	if err != nil {
		t.Fatal(err)
	}
	creds2.Endpoints = url
	p := nodestate.DesiredNode("leaf2")
	if _, err := root.RoleRevokePermission(ctx, NodeUser("leaf2"), p, clientv3.GetPrefixRangeEnd(p)); err != nil {
		t.Fatal(err)
	}
	if _, err := root.RoleGrantPermission(ctx, NodeUser("leaf2"), nodestate.DesiredPrefix+"leaf2", "", clientv3.PermissionType(authpb.READ)); err != nil {
		t.Fatal(err)
	}
	leaf2 := client(creds2)
	_, err = leaf2.Get(ctx, p, clientv3.WithPrefix())
	denied("an old-layout role reads the new keys", err)
	if err := UpgradeNodeRoles(ctx, root); err != nil {
		t.Fatal(err)
	}
	_, err = leaf2.Get(ctx, p, clientv3.WithPrefix())
	allowed("an upgraded role reads the new keys", err)
}
