package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"

	"github.com/e3fabric/e3fabric/control/internal/controller"
	"github.com/e3fabric/e3fabric/control/internal/etcdauth"
	"github.com/e3fabric/e3fabric/control/internal/memlimit"
	"github.com/e3fabric/e3fabric/control/internal/secrets"
	"github.com/e3fabric/e3fabric/control/internal/store"
	"github.com/e3fabric/e3fabric/control/internal/topology"
)

// loadToken reads a token from file, or from def, creating def with a
// random token if it does not exist (so the API is never open by accident).
func loadToken(file, def string, log *slog.Logger) (string, error) {
	if file == "" {
		file = def
	}
	tok, created, err := secrets.Token(file)
	if created {
		log.Info("created API token", "file", file)
	}
	return tok, err
}

// apiCert returns the API's certificate and key files: those given, or a
// self-signed pair for the listen address made in dataDir on first start.
func apiCert(cert, key, dataDir, listen string, log *slog.Logger) (string, string, error) {
	if cert != "" || key != "" {
		if cert == "" || key == "" {
			return "", "", errors.New("--tls-cert and --tls-key go together")
		}
		return cert, key, nil
	}
	cert, key = dataDir+"/api.crt", dataDir+"/api.key"
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return "", "", fmt.Errorf("--listen %s: %w", listen, err)
	}
	hosts := []string{"localhost", "127.0.0.1", "::1"}
	if host != "" && host != "0.0.0.0" && host != "::" {
		hosts = append(hosts, host)
	} else if name, err := os.Hostname(); err == nil {
		hosts = append(hosts, name)
	}
	created, err := secrets.SelfSigned(cert, key, hosts)
	if err != nil {
		return "", "", fmt.Errorf("API certificate: %w", err)
	}
	fp, err := secrets.FileFingerprint(cert)
	if err != nil {
		return "", "", err
	}
	if created {
		log.Info("created a self-signed API certificate", "file", cert, "sha256", fp)
	}
	return cert, key, nil
}

// etcdParties are the credentials the controller holds to its etcd: its
// own, root's (to manage users; empty if not given) and the CA that issues
// nodes' certificates (nil if not given).
type etcdParties struct {
	ctrl, root etcdauth.Credentials
	pki        *etcdauth.PKI
}

// embeddedQuota is the embedded etcd's backend quota: etcd's suggested
// largest, four times its default (a fabric's database grows by 18-27 KiB
// per 8-circuit E-LAN; docs/control-plane.md, "Sizing").
const embeddedQuota = 8 << 30

// quotaOf reads --etcd-quota.
func quotaOf(opt string, embedded bool) (int64, error) {
	switch {
	case opt != "auto":
		q, err := memlimit.ParseSize(opt)
		if err != nil || q == 0 {
			return 0, fmt.Errorf("--etcd-quota %q: want a size such as 8GiB, or auto", opt)
		}
		return q, nil
	case embedded:
		return embeddedQuota, nil
	}
	return controller.DefaultEtcdQuota, nil
}

// embeddedEtcd starts the embedded etcd secured (docs/security.md): mutual
// TLS on its client and peer ports with a CA made in dataDir, and, on first
// start, authentication with root and the controller's user, whose
// credentials files it keeps in dataDir.
func embeddedEtcd(ctx context.Context, dataDir, listen, peer string, maxReq uint, quota int64, log *slog.Logger) (*embed.Etcd, etcdParties, error) {
	var p etcdParties
	hosts := []string{"localhost", "127.0.0.1", "::1"}
	for flag, raw := range map[string]string{"--etcd-listen": listen, "--etcd-peer-listen": peer} {
		u, err := url.Parse(raw)
		if err != nil || u.Scheme != "https" {
			return nil, p, fmt.Errorf("%s %s: the embedded etcd serves only https, with client certificates (docs/security.md)", flag, raw)
		}
		hosts = append(hosts, u.Hostname())
	}
	pki, err := etcdauth.OpenPKI(dataDir)
	if err != nil {
		return nil, p, err
	}
	o := store.EmbedOptions{DataDir: dataDir + "/etcd", ClientURL: listen, PeerURL: peer, MaxRequest: maxReq, Quota: quota,
		CertFile: dataDir + "/etcd-member.crt", KeyFile: dataDir + "/etcd-member.key",
		CAFile: pki.CAPath(), CRLFile: pki.CRLPath()}
	if err := pki.ServerFiles(o.CertFile, o.KeyFile, "e3-controller-etcd", hosts); err != nil {
		return nil, p, err
	}
	e, err := store.StartEmbedded(o)
	if err != nil {
		return nil, p, err
	}
	p.pki = pki
	if p.root, err = credentialsFile(dataDir+"/etcd-root.json", pki, etcdauth.RootUser, listen); err == nil {
		p.ctrl, err = credentialsFile(dataDir+"/etcd-controller.json", pki, etcdauth.ControllerUser, listen)
	}
	if err == nil {
		err = bootstrap(ctx, p.root)
	}
	if err != nil {
		e.Close()
		return nil, p, err
	}
	log.Info("embedded etcd ready", "client_url", listen, "peer_url", peer, "data_dir", dataDir, "mtls", true, "auth", true)
	return e, p, nil
}

// bootstrap turns on etcd's authentication through root, once.
func bootstrap(ctx context.Context, root etcdauth.Credentials) error {
	admin, err := root.Client()
	if err != nil {
		return err
	}
	defer admin.Close()
	return etcdauth.Bootstrap(ctx, admin)
}

// upgradeNodeRoles brings agents' etcd roles to this build's key layout,
// when this replica holds the root credentials.
func upgradeNodeRoles(ctx context.Context, root etcdauth.Credentials) error {
	if root.User == "" {
		return nil
	}
	cli, err := root.Client()
	if err != nil {
		return err
	}
	defer cli.Close()
	return etcdauth.UpgradeNodeRoles(ctx, cli)
}

// credentialsFile returns the credentials of user in file, issuing a
// certificate from pki into file (mode 0600) if it holds none. The
// endpoints are always those given.
func credentialsFile(file string, pki *etcdauth.PKI, user, endpoints string) (etcdauth.Credentials, error) {
	c, err := etcdauth.Load(file)
	if errors.Is(err, os.ErrNotExist) || (err == nil && c.Cert == "") {
		c, err = pki.Issue(user)
	}
	if err != nil {
		return c, err
	}
	c.Endpoints = endpoints
	return c, c.Save(file)
}

// externalEtcd returns the credentials of an external cluster: the
// controller's file (or none), root's and the CA directory if given. With
// root's, it turns the cluster's authentication on if it is not yet.
func externalEtcd(ctx context.Context, endpoints, ctrlFile, rootFile, caDir string) (p etcdParties, err error) {
	p.ctrl = etcdauth.Credentials{Endpoints: endpoints}
	if ctrlFile != "" {
		if p.ctrl, err = etcdauth.Load(ctrlFile); err != nil {
			return
		}
	}
	if caDir != "" {
		if p.pki, err = etcdauth.OpenPKI(caDir); err != nil {
			return
		}
	}
	if rootFile != "" {
		if p.root, err = etcdauth.Load(rootFile); err != nil {
			return
		}
		err = bootstrap(ctx, p.root)
	}
	return
}

// issueNode gives node's agent new etcd credentials through root and the
// CA, or refuses when this controller lacks either.
func issueNode(ctx context.Context, p etcdParties, node string) (etcdauth.Credentials, error) {
	if p.root.User == "" || p.pki == nil {
		return etcdauth.Credentials{}, errors.New("this controller cannot issue etcd credentials: its etcd is external and --etcd-root-credentials or --etcd-ca-dir is missing")
	}
	cli, err := p.root.Client()
	if err != nil {
		return etcdauth.Credentials{}, err
	}
	defer cli.Close()
	c, err := etcdauth.IssueNode(ctx, cli, p.pki, node)
	if err != nil {
		return etcdauth.Credentials{}, err
	}
	c.Endpoints = p.root.Endpoints
	return c, nil
}

// raiseFileLimit lifts the soft descriptor limit to the hard one: the API's
// connections are capped (--max-conns) well below it, so the embedded
// etcd always has descriptors left.
// It returns the limit in force (0 if unknown).
func raiseFileLimit(log *slog.Logger) uint64 {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) != nil {
		return 0
	}
	if l.Cur < l.Max {
		l.Cur = l.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
			log.Warn("cannot raise the file descriptor limit", "err", err)
			syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l)
		}
	}
	return l.Cur
}

// importWhenLeader imports the topology file each time this replica becomes
// leader (the import is idempotent).
func importWhenLeader(ctx context.Context, c *controller.Controller, file string, log *slog.Logger) {
	wasLeader := false
	for ctx.Err() == nil {
		leader := c.IsLeader()
		if leader && !wasLeader {
			t, services, err := topology.Load(file)
			if err == nil {
				err = c.ImportTopology(ctx, t, services)
			}
			if err != nil {
				log.Error("topology import", "file", file, "err", err)
			} else {
				log.Info("topology imported", "file", file, "nodes", len(t.Nodes), "links", len(t.Links))
			}
		}
		wasLeader = leader
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}
