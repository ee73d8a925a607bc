package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/e3fabric/e3fabric/control/internal/controller"
	"github.com/e3fabric/e3fabric/control/internal/topology"
)

// loadToken reads the API token from file, or from def, creating def with a
// random token if it does not exist (so the API is never open by accident).
func loadToken(file, def string, log *slog.Logger) (string, error) {
	if file == "" {
		file = def
		if _, err := os.Stat(file); os.IsNotExist(err) {
			b := make([]byte, 16)
			rand.Read(b)
			if err := os.WriteFile(file, []byte(hex.EncodeToString(b)+"\n"), 0o600); err != nil {
				return "", fmt.Errorf("token: %w", err)
			}
			log.Info("created API token", "file", file)
		}
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("token: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("token file %s is empty", file)
	}
	return tok, nil
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
