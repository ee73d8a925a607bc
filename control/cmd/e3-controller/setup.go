package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"

	"github.com/e3fabric/e3fabric/control/internal/controller"
	"github.com/e3fabric/e3fabric/control/internal/etcdauth"
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

// embeddedEtcd starts the embedded etcd secured (docs/security.md): TLS with
// a certificate made in dataDir when the client URL is https, and, on first
// start, authentication with root and the controller's user, whose
// credentials files it keeps in dataDir. It returns the controller's and
// root's credentials.
func embeddedEtcd(ctx context.Context, dataDir, listen, peer string, maxReq uint, log *slog.Logger) (*embed.Etcd, etcdauth.Credentials, etcdauth.Credentials, error) {
	var ctrl, root etcdauth.Credentials
	o := store.EmbedOptions{DataDir: dataDir + "/etcd", ClientURL: listen, PeerURL: peer, MaxRequest: maxReq}
	var ca string
	if u, err := url.Parse(listen); err == nil && u.Scheme == "https" {
		o.CertFile, o.KeyFile = dataDir+"/etcd.crt", dataDir+"/etcd.key"
		if _, err := secrets.SelfSigned(o.CertFile, o.KeyFile, []string{"localhost", "127.0.0.1", "::1", u.Hostname()}); err != nil {
			return nil, ctrl, root, fmt.Errorf("etcd certificate: %w", err)
		}
		b, err := os.ReadFile(o.CertFile)
		if err != nil {
			return nil, ctrl, root, err
		}
		ca = string(b)
	}
	e, err := store.StartEmbedded(o)
	if err != nil {
		return nil, ctrl, root, err
	}
	anon := etcdauth.Credentials{Endpoints: listen, CA: ca}
	if root, err = credentialsFile(dataDir+"/etcd-root.json", anon, etcdauth.RootUser); err == nil {
		ctrl, err = credentialsFile(dataDir+"/etcd-controller.json", anon, etcdauth.ControllerUser)
	}
	if err == nil {
		var admin *clientv3.Client
		if admin, err = anon.Client(); err == nil {
			err = etcdauth.Bootstrap(ctx, admin, root.Password, ctrl.Password)
			admin.Close()
		}
	}
	if err != nil {
		e.Close()
		return nil, ctrl, root, err
	}
	log.Info("embedded etcd ready", "client_url", listen, "data_dir", dataDir, "tls", ca != "", "auth", true)
	return e, ctrl, root, nil
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

// credentialsFile returns the credentials of user in file, creating file
// (mode 0600) with a new password for that user if it does not exist. The
// endpoints and CA are always base's.
func credentialsFile(file string, base etcdauth.Credentials, user string) (etcdauth.Credentials, error) {
	c, err := etcdauth.Load(file)
	if errors.Is(err, os.ErrNotExist) {
		c = etcdauth.Credentials{User: user, Password: etcdauth.Password()}
	} else if err != nil {
		return c, err
	}
	c.Endpoints, c.CA = base.Endpoints, base.CA
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return c, err
	}
	return c, os.WriteFile(file, b, 0o600)
}

// externalEtcd returns the credentials of an external cluster: the
// controller's file (or none: no authentication), and root's if given.
func externalEtcd(endpoints, ctrlFile, rootFile string) (ctrl, root etcdauth.Credentials, err error) {
	ctrl = etcdauth.Credentials{Endpoints: endpoints}
	if ctrlFile != "" {
		if ctrl, err = etcdauth.Load(ctrlFile); err != nil {
			return
		}
	}
	if rootFile != "" {
		root, err = etcdauth.Load(rootFile)
	}
	return
}

// issueNode gives node's agent new etcd credentials through root, or
// refuses when this controller has no root credentials.
func issueNode(ctx context.Context, root etcdauth.Credentials, node string) (etcdauth.Credentials, error) {
	if root.User == "" {
		return etcdauth.Credentials{}, errors.New("this controller cannot issue etcd credentials: its etcd is external and no --etcd-root-credentials were given")
	}
	cli, err := root.Client()
	if err != nil {
		return etcdauth.Credentials{}, err
	}
	defer cli.Close()
	pass, err := etcdauth.IssueNode(ctx, cli, node)
	if err != nil {
		return etcdauth.Credentials{}, err
	}
	return etcdauth.Credentials{Endpoints: root.Endpoints, User: etcdauth.NodeUser(node), Password: pass, CA: root.CA}, nil
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
