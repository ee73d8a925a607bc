// Command e3-agent keeps one e3-vswitchd programmed with its node's desired
// config from etcd and reports the node's status. See docs/agent.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/e3fabric/e3fabric/control/internal/agent"
	"github.com/e3fabric/e3fabric/control/internal/dprpc"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "e3-agent:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		node      = flag.String("node", "", "this node's name (keys /e3/v1/desired/NAME, /e3/v1/status/NAME)")
		endpoints = flag.String("etcd-endpoints", "http://127.0.0.1:2379", "etcd endpoints, comma-separated")
		socket    = flag.String("dp-socket", "", "e3-vswitchd control socket (default /run/e3/NODE.sock)")
		statusInt = flag.Duration("status-interval", 2*time.Second, "write the status at least this often")
		pollInt   = flag.Duration("poll-interval", 100*time.Millisecond, "poll the datapath's ports and BFD sessions this often")
		resyncInt = flag.Duration("resync-interval", 30*time.Second, "reconcile at least this often (safety net)")
		rpcTO     = flag.Duration("dp-timeout", dprpc.DefaultTimeout, "timeout of one datapath call")
		debug     = flag.Bool("debug", false, "log every planned datapath call")
	)
	flag.Parse()
	if *node == "" {
		return errors.New("--node is required")
	}
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %v", flag.Args())
	}
	if *socket == "" {
		*socket = "/run/e3/" + *node + ".sock"
	}
	level := slog.LevelInfo
	if *debug {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	// The client connects lazily and keeps retrying, so the agent starts
	// (and leaves the datapath alone) while etcd is down.
	etcd, err := clientv3.New(clientv3.Config{
		Endpoints:   strings.Split(*endpoints, ","),
		DialTimeout: 5 * time.Second,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		return fmt.Errorf("etcd client: %w", err)
	}
	defer etcd.Close()
	dp := dprpc.New(*socket, *rpcTO)
	defer dp.Close()

	a, err := agent.New(agent.Config{
		Node: *node, Etcd: etcd, DP: dp,
		StatusInterval: *statusInt, PollInterval: *pollInt, ResyncInterval: *resyncInt, Log: log,
	})
	if err != nil {
		return err
	}
	log.Info("e3-agent starting", "node", *node, "etcd", *endpoints, "dp_socket", *socket)
	err = a.Run(ctx)
	log.Info("e3-agent stopped")
	return err
}
