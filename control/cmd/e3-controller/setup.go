package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/e3fabric/e3fabric/control/internal/controller"
	"github.com/e3fabric/e3fabric/control/internal/secrets"
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
