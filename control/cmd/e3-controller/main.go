// Command e3-controller is the fabric controller: topology, services, paths,
// labels and every node's desired config in etcd; the northbound HTTP API.
// See docs/control-plane.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/e3fabric/e3fabric/control/internal/api"
	"github.com/e3fabric/e3fabric/control/internal/controller"
	"github.com/e3fabric/e3fabric/control/internal/store"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "e3-controller:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		dataDir    = flag.String("data-dir", "/var/lib/e3/controller", "directory of the embedded etcd (persistent)")
		etcdListen = flag.String("etcd-listen", "http://127.0.0.1:2379", "client URL of the embedded etcd")
		etcdPeer   = flag.String("etcd-peer-listen", "http://127.0.0.1:2380", "peer URL of the embedded etcd")
		endpoints  = flag.String("etcd-endpoints", "", "use this external etcd cluster (comma-separated URLs) instead of the embedded one")
		maxReq     = flag.Uint("etcd-max-request-bytes", 64<<20, "embedded etcd: largest transaction (desired configs of big fabrics are large)")
		listen     = flag.String("listen", "127.0.0.1:8080", "northbound API address")
		advertise  = flag.String("advertise", "", "this replica's API URL, shown to clients of followers (default http://<listen>)")
		tokenFile  = flag.String("token-file", "", "file holding the API bearer token (default: <data-dir>/token, created if missing)")
		topoFile   = flag.String("topology", "", "topology file to import when this replica leads (idempotent)")
		linkCost   = flag.String("link-cost", controller.CostHops, "path cost: hops (declared link costs) or load (declared cost x utilisation)")
		ignore     = flag.Bool("ignore-status", false, "treat every node and link as up, whatever agents report (bring-up without agents)")
		grace      = flag.Duration("grace", 5*time.Second, "on taking leadership, wait this long for agents' reports before acting on them")
		hold       = flag.Duration("repair-hold", 5*time.Second, "longest a global repair waits while the fabric keeps changing (negative: none)")
	)
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if *linkCost != controller.CostHops && *linkCost != controller.CostLoad {
		return fmt.Errorf("--link-cost %q: want hops or load", *linkCost)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if err := os.MkdirAll(*dataDir, 0o700); err != nil {
		return err
	}
	eps := *endpoints
	if eps == "" {
		e, err := store.StartEmbedded(store.EmbedOptions{DataDir: *dataDir + "/etcd", ClientURL: *etcdListen, PeerURL: *etcdPeer, MaxRequest: *maxReq})
		if err != nil {
			return err
		}
		defer e.Close()
		eps = *etcdListen
		log.Info("embedded etcd ready", "client_url", eps, "data_dir", *dataDir)
	}
	cli, err := store.Connect(eps)
	if err != nil {
		return err
	}
	defer cli.Close()

	token, err := loadToken(*tokenFile, *dataDir+"/token", log)
	if err != nil {
		return err
	}
	if *advertise == "" {
		*advertise = "http://" + *listen
	}
	c := controller.New(controller.Options{Etcd: cli, LinkCost: *linkCost, IgnoreStatus: *ignore, Advertise: *advertise, Grace: *grace, RepairHold: *hold, Log: log})

	srv := &http.Server{Addr: *listen, Handler: api.New(c, token, log), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 2)
	go func() {
		if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errc <- fmt.Errorf("api: %w", err)
		}
	}()
	go func() { errc <- c.Run(ctx) }()
	if *topoFile != "" {
		go importWhenLeader(ctx, c, *topoFile, log)
	}
	log.Info("e3-controller started", "api", *listen)
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	stop()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(sctx)
	return err
}
