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
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/e3fabric/e3fabric/control/internal/api"
	"github.com/e3fabric/e3fabric/control/internal/controller"
	"github.com/e3fabric/e3fabric/control/internal/etcdauth"
	"github.com/e3fabric/e3fabric/control/internal/flagfile"
	"github.com/e3fabric/e3fabric/control/internal/httpguard"
	"github.com/e3fabric/e3fabric/control/internal/memlimit"
	"github.com/e3fabric/e3fabric/control/internal/metrics"
)

func main() {
	run := run
	if len(os.Args) > 1 && os.Args[1] == "certs" {
		run = func() error { return runCerts(os.Args[2:]) }
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "e3-controller:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		conf       = flagfile.Flag(flag.CommandLine, "/etc/e3/controller.conf")
		dataDir    = flag.String("data-dir", "/var/lib/e3/controller", "directory of the embedded etcd (persistent)")
		etcdListen = flag.String("etcd-listen", "https://127.0.0.1:2379", "client URL of the embedded etcd (https: TLS with a certificate made in the data dir)")
		etcdPeer   = flag.String("etcd-peer-listen", "https://127.0.0.1:2380", "peer URL of the embedded etcd (https: mutual TLS with the data dir's CA)")
		endpoints  = flag.String("etcd-endpoints", "", "use this external etcd cluster (comma-separated URLs) instead of the embedded one")
		etcdCreds  = flag.String("etcd-credentials", "", "external etcd: the controller's credentials file (JSON: endpoints, user, ca, cert, key)")
		etcdRoot   = flag.String("etcd-root-credentials", "", "external etcd: root's credentials file, to turn authentication on and issue nodes' credentials")
		etcdCADir  = flag.String("etcd-ca-dir", "", "external etcd: the directory of the CA that signs its clients' certificates (e3-controller certs)")
		maxReq     = flag.Uint("etcd-max-request-bytes", 64<<20, "embedded etcd: largest transaction (desired configs of big fabrics are large)")
		etcdQuota  = flag.String("etcd-quota", "auto", "etcd's backend quota, a size (e.g. 8GiB): the embedded etcd's, or an external cluster's --quota-backend-bytes; new services are refused past 90% of it. auto: 8GiB for the embedded etcd, etcd's default 2GiB for a cluster")
		listen     = flag.String("listen", "127.0.0.1:8080", "northbound API address")
		advertise  = flag.String("advertise", "", "this replica's API URL, shown to clients of followers (default http://<listen>)")
		tokenFile  = flag.String("token-file", "", "file holding the API's admin bearer token (default: <data-dir>/token, created if missing)")
		readToken  = flag.String("read-token-file", "", "file holding the API's read-only bearer token (default: <data-dir>/token.read, created if missing)")
		tlsCert    = flag.String("tls-cert", "", "API certificate, PEM (default: <data-dir>/api.crt, self-signed and created if missing)")
		tlsKey     = flag.String("tls-key", "", "API private key, PEM (default: <data-dir>/api.key)")
		plainHTTP  = flag.Bool("insecure-http", false, "serve the API without TLS (only behind a TLS-terminating proxy)")
		maxConns   = flag.Int("max-conns", 1024, "most open API connections; idle ones are closed to make room")
		maxBusy    = flag.Int("max-busy-per-client", api.DefaultMaxBusyPerClient, "most API requests in progress per client address")
		maxStreams = flag.Int("max-streams-per-token", api.DefaultMaxStreamsPerToken, "most GET /v1/stream per token")
		topoFile   = flag.String("topology", "", "topology file to import when this replica leads (idempotent)")
		linkCost   = flag.String("link-cost", controller.CostHops, "path cost: hops (declared link costs) or load (declared cost x measured and reserved utilisation)")
		loadWindow = flag.Duration("load-window", 30*time.Second, "load cost: averaging window of the measured rates")
		reopt      = flag.Duration("reoptimize-interval", 30*time.Second, "load cost: how often routes are re-optimised for load")
		reoptGain  = flag.Float64("reoptimize-gain", 0.2, "load cost: the fraction of its cost a path must gain to move (0 < gain < 1)")
		reoptHold  = flag.Duration("reoptimize-hold", 5*time.Minute, "load cost: how long a service moved for load stays where it is")
		ignore     = flag.Bool("ignore-status", false, "treat every node and link as up, whatever agents report (bring-up without agents)")
		grace      = flag.Duration("grace", 5*time.Second, "on taking leadership, wait this long for agents' reports before acting on them")
		hold       = flag.Duration("repair-hold", 500*time.Millisecond, "longest a global repair waits while the fabric keeps changing (negative: none)")
		memLimit   = flag.String("memory-limit", "auto", "soft limit of the controller's memory (with the embedded etcd): a size (e.g. 4GiB), 0 for none, or auto: 90% of the smallest memory limit on its cgroup and that cgroup's parents, if any (GOMEMLIMIT wins over auto)")
	)
	if err := flagfile.Parse(flag.CommandLine, os.Args[1:], conf); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	memNote, err := memlimit.Apply(*memLimit)
	if err != nil {
		return err
	}
	if *linkCost != controller.CostHops && *linkCost != controller.CostLoad {
		return fmt.Errorf("--link-cost %q: want hops or load", *linkCost)
	}
	if *reoptGain <= 0 || *reoptGain >= 1 || *loadWindow <= 0 || *reopt <= 0 || *reoptHold <= 0 {
		return fmt.Errorf("--reoptimize-gain wants 0 < gain < 1; --load-window, --reoptimize-interval and --reoptimize-hold must be positive")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if err := os.MkdirAll(*dataDir, 0o700); err != nil {
		return err
	}
	if lim := raiseFileLimit(log); lim > 0 && uint64(*maxConns)+512 > lim {
		*maxConns = max(int(lim)-512, 16)
		log.Warn("--max-conns lowered to leave descriptors to etcd", "max_conns", *maxConns, "nofile", lim)
	}
	quota, err := quotaOf(*etcdQuota, *endpoints == "")
	if err != nil {
		return err
	}
	var parties etcdParties
	if *endpoints == "" {
		e, p, err := embeddedEtcd(ctx, *dataDir, *etcdListen, *etcdPeer, *maxReq, quota, log)
		if err != nil {
			return err
		}
		defer e.Close()
		parties = p
	} else if parties, err = externalEtcd(ctx, *endpoints, *etcdCreds, *etcdRoot, *etcdCADir); err != nil {
		return err
	}
	etcdLatency := metrics.NewGRPCLatency("e3_controller_etcd_request_seconds",
		"Latency of the controller's etcd requests, by gRPC method (Range, Txn, Put, ...).")
	cli, err := parties.ctrl.Client(etcdLatency.DialOption())
	if err != nil {
		return err
	}
	defer cli.Close()
	if err := upgradeNodeRoles(ctx, parties.root); err != nil {
		return err
	}

	var tokens api.Tokens
	if tokens.Admin, err = loadToken(*tokenFile, *dataDir+"/token", log); err != nil {
		return err
	}
	if tokens.Read, err = loadToken(*readToken, *dataDir+"/token.read", log); err != nil {
		return err
	}
	scheme := "https"
	if *plainHTTP {
		scheme = "http"
	} else if *tlsCert, *tlsKey, err = apiCert(*tlsCert, *tlsKey, *dataDir, *listen, log); err != nil {
		return err
	}
	if *advertise == "" {
		*advertise = scheme + "://" + *listen
	}
	c := controller.New(controller.Options{Etcd: cli, LinkCost: *linkCost, IgnoreStatus: *ignore, Advertise: *advertise,
		Grace: *grace, RepairHold: *hold, LoadWindow: *loadWindow, Reoptimize: *reopt, ReoptimizeGain: *reoptGain,
		ReoptimizeHold: *reoptHold, EtcdQuota: quota, Log: log})

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("api: %w", err)
	}
	guard := httpguard.NewConnGuard(*maxConns)
	issue := func(ctx context.Context, node string) (etcdauth.Credentials, error) {
		return issueNode(ctx, parties, node)
	}
	reg := metrics.NewRegistry(etcdLatency)
	reg.MustRegister(c.Collectors()...)
	handler := api.New(c, api.Config{Tokens: tokens, Guard: guard, Credentials: issue, Metrics: metrics.Handler(reg),
		MaxBusyPerClient: *maxBusy, MaxStreamsPerToken: *maxStreams}, log)
	reg.MustRegister(handler.Collectors()...)
	srv := &http.Server{Handler: handler,
		ConnState:         guard.ConnState,
		ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, WriteTimeout: 2 * time.Minute,
		IdleTimeout: time.Minute, MaxHeaderBytes: 64 << 10,
		// One HTTP/2 connection carries at most this many requests at once:
		// --max-conns then bounds work, not only sockets.
		HTTP2:    &http.HTTP2Config{MaxConcurrentStreams: 16},
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug)}
	errc := make(chan error, 2)
	go func() {
		var err error
		if *plainHTTP {
			err = srv.Serve(guard.Listener(ln))
		} else {
			err = srv.ServeTLS(guard.Listener(ln), *tlsCert, *tlsKey)
		}
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			errc <- fmt.Errorf("api: %w", err)
		}
	}()
	go func() { errc <- c.Run(ctx) }()
	if *topoFile != "" {
		go importWhenLeader(ctx, c, *topoFile, log)
	}
	log.Info("e3-controller started", "api", *advertise, "memory", memNote)
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
