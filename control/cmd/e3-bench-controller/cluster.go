package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/e3fabric/e3fabric/control/internal/etcdauth"
)

// etcdCluster is etcd as production runs it: n member processes on
// loopback, each with its own data directory, mutual TLS between members
// and to clients (certificates of the fabric's etcd CA), authentication on.
type etcdCluster struct {
	dir       string
	pki       *etcdauth.PKI
	endpoints []string
	procs     []*exec.Cmd
}

// startCluster starts n members of bin in dir, client port base+2i and peer
// port base+2i+1, and turns authentication on.
func startCluster(ctx context.Context, bin, dir string, n, base int) (*etcdCluster, error) {
	c := &etcdCluster{dir: dir}
	pkiDir := filepath.Join(dir, "pki")
	if err := os.MkdirAll(pkiDir, 0o700); err != nil {
		return nil, err
	}
	var err error
	if c.pki, err = etcdauth.OpenPKI(pkiDir); err != nil {
		return nil, err
	}
	var members []string
	for i := range n {
		c.endpoints = append(c.endpoints, fmt.Sprintf("https://127.0.0.1:%d", base+2*i))
		members = append(members, fmt.Sprintf("m%d=https://127.0.0.1:%d", i, base+2*i+1))
	}
	for i := range n {
		crt, key := filepath.Join(pkiDir, fmt.Sprintf("m%d.crt", i)), filepath.Join(pkiDir, fmt.Sprintf("m%d.key", i))
		if err := c.pki.ServerFiles(crt, key, fmt.Sprintf("m%d", i), []string{"127.0.0.1", "localhost"}); err != nil {
			return nil, err
		}
	}
	root, err := c.credentials("root")
	if err != nil {
		return nil, err
	}
	for i := range n {
		crt, key := filepath.Join(pkiDir, fmt.Sprintf("m%d.crt", i)), filepath.Join(pkiDir, fmt.Sprintf("m%d.key", i))
		peer := strings.TrimPrefix(members[i], fmt.Sprintf("m%d=", i))
		cmd := exec.Command(bin, "--name", fmt.Sprintf("m%d", i), "--data-dir", filepath.Join(dir, fmt.Sprintf("m%d", i)),
			"--listen-client-urls", c.endpoints[i], "--advertise-client-urls", c.endpoints[i],
			"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
			"--initial-cluster", strings.Join(members, ","), "--initial-cluster-state", "new",
			"--cert-file", crt, "--key-file", key, "--trusted-ca-file", c.pki.CAPath(), "--client-cert-auth",
			"--client-crl-file", c.pki.CRLPath(),
			"--peer-cert-file", crt, "--peer-key-file", key, "--peer-trusted-ca-file", c.pki.CAPath(),
			"--peer-client-cert-auth", "--peer-crl-file", c.pki.CRLPath(),
			// One controller batch is one transaction (docs/control-plane.md, Limits).
			"--max-txn-ops", "65536", "--max-request-bytes", strconv.Itoa(64<<20),
			"--quota-backend-bytes", strconv.FormatInt(8<<30, 10), "--log-level", "error")
		logf, err := os.Create(filepath.Join(dir, fmt.Sprintf("m%d.log", i)))
		if err != nil {
			c.close()
			return nil, err
		}
		cmd.Stderr = logf
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlive the bench
		if err := cmd.Start(); err != nil {
			c.close()
			return nil, err
		}
		c.procs = append(c.procs, cmd)
	}
	admin, err := root.Client()
	if err != nil {
		c.close()
		return nil, err
	}
	defer admin.Close()
	deadline := time.Now().Add(60 * time.Second)
	for {
		sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := admin.Status(sctx, c.endpoints[0])
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			c.close()
			return nil, fmt.Errorf("etcd cluster not up: %w", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := etcdauth.Bootstrap(ctx, admin); err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}

// credentials issues user's client certificate.
func (c *etcdCluster) credentials(user string) (etcdauth.Credentials, error) {
	cr, err := c.pki.Issue(user)
	cr.Endpoints = strings.Join(c.endpoints, ",")
	return cr, err
}

// client connects as user (the controller's is e3-controller).
func (c *etcdCluster) client(user string) (*clientv3.Client, error) {
	cr, err := c.credentials(user)
	if err != nil {
		return nil, err
	}
	return cr.Client()
}

// rss is the members' resident memory, in bytes.
func (c *etcdCluster) rss() []int64 {
	var out []int64
	for _, p := range c.procs {
		out = append(out, rssOf(strconv.Itoa(p.Process.Pid)))
	}
	return out
}

func (c *etcdCluster) close() {
	for _, p := range c.procs {
		p.Process.Kill()
		p.Wait()
	}
}
