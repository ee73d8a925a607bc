// Command e3-agent keeps one e3-vswitchd programmed with its node's desired
// config from etcd and reports the node's status. See docs/agent.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/e3fabric/e3fabric/control/internal/agent"
	"github.com/e3fabric/e3fabric/control/internal/dpmetrics"
	"github.com/e3fabric/e3fabric/control/internal/dprpc"
	"github.com/e3fabric/e3fabric/control/internal/etcdauth"
	"github.com/e3fabric/e3fabric/control/internal/flagfile"
	"github.com/e3fabric/e3fabric/control/internal/httpguard"
	"github.com/e3fabric/e3fabric/control/internal/metrics"
	"github.com/e3fabric/e3fabric/control/internal/secrets"
	"github.com/e3fabric/e3fabric/control/internal/sflow"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "sync" {
		os.Exit(runSync(os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "e3-agent:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		conf      = flagfile.Flag(flag.CommandLine, "/etc/e3/agent/NODE.conf")
		node      = flag.String("node", "", "this node's name (keys /e3/v1/desired/NAME, /e3/v1/status/NAME)")
		endpoints = flag.String("etcd-endpoints", "http://127.0.0.1:2379", "etcd endpoints, comma-separated (an etcd without authentication)")
		credsFile = flag.String("etcd-credentials", "", "this node's etcd credentials file, from e3ctl node credentials NODE (endpoints, user, CA, certificate, key)")
		socket    = flag.String("dp-socket", "", "e3-vswitchd control socket (default /run/e3/NODE.sock)")
		statusInt = flag.Duration("status-interval", 2*time.Second, "write the status at least this often")
		pollInt   = flag.Duration("poll-interval", 100*time.Millisecond, "poll the datapath's ports and BFD sessions this often")
		resyncInt = flag.Duration("resync-interval", 30*time.Second, "re-read the desired keys at least this often (safety net)")
		fullInt   = flag.Duration("full-pass-interval", 5*time.Minute, "dump and diff the whole datapath this often (anti-entropy; also on SIGHUP)")
		rpcTO     = flag.Duration("dp-timeout", dprpc.DefaultTimeout, "timeout of one datapath call")
		debug     = flag.Bool("debug", false, "log every planned datapath call")
		metricsAt = flag.String("metrics-listen", "", "serve the datapath's counters at http://ADDR/metrics (e.g. 127.0.0.1:9301), or on a Unix socket only root reaches (unix:PATH); empty: off")
		metricsTk = flag.String("metrics-token-file", "", "file holding the bearer token /metrics asks for (the controller's read-only token); needed on TCP")
		perLabel  = flag.Bool("metrics-labels", false, "also export a series per label entry (large fabrics have 10^5 of them)")
		sfColl    = flag.String("sflow-collectors", "", "send sFlow v5 to these collectors (host:port, comma-separated; the standard port is 6343); empty: off")
		sfRate    = flag.Uint("sflow-sampling", 1000, "sFlow: sample 1 in N of the frames each port receives")
		sfPorts   = flag.String("sflow-port-sampling", "", "sFlow: ports with a rate of their own, PORT=N,... (N 0: the port is not sampled)")
		sfPoll    = flag.Duration("sflow-polling", 20*time.Second, "sFlow: send each port's counters this often")
		sfAgent   = flag.String("sflow-agent-address", "", "sFlow: the agent address in the datagrams (default: this host's address toward the first collector)")
	)
	if err := flagfile.Parse(flag.CommandLine, os.Args[1:], conf); err != nil {
		return err
	}
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
	creds := etcdauth.Credentials{Endpoints: *endpoints}
	if *credsFile != "" {
		var err error
		if creds, err = etcdauth.Load(*credsFile); err != nil {
			return err
		}
	}
	etcd, err := dialEtcd(ctx, creds, log)
	if err != nil {
		return err
	}
	defer etcd.Close()
	dp := dprpc.New(*socket, *rpcTO)
	defer dp.Close()

	a, err := agent.New(agent.Config{
		Node: *node, Etcd: etcd, DP: dp,
		StatusInterval: *statusInt, PollInterval: *pollInt, ResyncInterval: *resyncInt,
		FullPassInterval: *fullInt, Log: log,
	})
	if err != nil {
		return err
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				log.Info("SIGHUP: full pass")
				a.Resync()
			}
		}
	}()
	if *metricsAt != "" {
		if err := serveMetrics(ctx, *metricsAt, *metricsTk, *node, *socket, *rpcTO, *perLabel, log); err != nil {
			return err
		}
	}
	if *sfColl != "" {
		if err := exportSFlow(ctx, strings.Split(*sfColl, ","), *sfRate, *sfPorts, *sfPoll, *sfAgent, *socket, *rpcTO, log); err != nil {
			return err
		}
	}
	log.Info("e3-agent starting", "node", *node, "etcd", *endpoints, "dp_socket", *socket)
	err = a.Run(ctx)
	log.Info("e3-agent stopped")
	return err
}

// Bounds of the metrics listener: a scraper needs one connection, so a
// handful is plenty, and a connection past them takes an idle one's place.
const (
	metricsMaxConns = 16
	metricsIdle     = 30 * time.Second
)

// serveMetrics serves /metrics on addr until ctx ends: the datapath's
// counters, read through a connection of their own so that a scrape never
// waits behind the reconcile's calls. On TCP every request needs the bearer
// token in tokenFile; a Unix socket is made mode 0600, for root alone.
func serveMetrics(ctx context.Context, addr, tokenFile, node, socket string, timeout time.Duration, perLabel bool, log *slog.Logger) error {
	network := "tcp"
	if path, ok := strings.CutPrefix(addr, "unix:"); ok {
		network, addr = "unix", path
		os.Remove(path)
	}
	var token string
	if tokenFile != "" {
		var err error
		if token, err = secrets.ReadToken(tokenFile); err != nil {
			return fmt.Errorf("metrics: %w", err)
		}
	} else if network == "tcp" {
		return errors.New("metrics: --metrics-listen on TCP needs --metrics-token-file (or listen on unix:PATH)")
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	if network == "unix" {
		if err := os.Chmod(addr, 0o600); err != nil {
			ln.Close()
			return fmt.Errorf("metrics: %w", err)
		}
	}
	dp := dprpc.New(socket, timeout)
	reg := metrics.NewRegistry(dpmetrics.New(node, dp, perLabel, timeout, log))
	scrape := metrics.Handler(reg)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		if token != "" {
			if tok, ok := httpguard.BearerToken(r); !ok || !httpguard.Equal(tok, token) {
				w.Header().Set("Connection", "close")
				w.Header().Set("WWW-Authenticate", `Bearer realm="e3-agent"`)
				http.Error(w, "this endpoint needs Authorization: Bearer <the controller's read-only token>", http.StatusUnauthorized)
				return
			}
		}
		scrape.ServeHTTP(w, r)
	})
	guard := httpguard.NewConnGuard(metricsMaxConns)
	srv := &http.Server{Handler: mux, ConnState: guard.ConnState,
		ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second, WriteTimeout: time.Minute,
		IdleTimeout: metricsIdle, MaxHeaderBytes: 16 << 10,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug)}
	go func() {
		<-ctx.Done()
		srv.Close()
		dp.Close()
	}()
	go func() {
		if err := srv.Serve(guard.Listener(ln)); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics server", "err", err)
		}
	}()
	log.Info("metrics", "listen", network+":"+addr, "token", token != "")
	return nil
}

// exportSFlow sets the datapath's sampling and sends its samples and
// counters to the collectors until ctx ends, through a connection of its
// own (docs/operations.md, "sFlow").
func exportSFlow(ctx context.Context, collectors []string, rate uint, portRates string, polling time.Duration,
	agentAddr, socket string, timeout time.Duration, log *slog.Logger) error {
	if rate < 1 || rate > 1<<24 || polling <= 0 {
		return fmt.Errorf("sflow: --sflow-sampling must be 1..16777216 and --sflow-polling positive")
	}
	ports := map[string]uint32{}
	for _, kv := range strings.Split(portRates, ",") {
		if kv == "" {
			continue
		}
		port, n, ok := strings.Cut(kv, "=")
		v, err := strconv.ParseUint(n, 10, 32)
		if !ok || port == "" || err != nil || v > 1<<24 {
			return fmt.Errorf("sflow: --sflow-port-sampling %q: want PORT=N with N 0..16777216", kv)
		}
		ports[port] = uint32(v)
	}
	var addr netip.Addr
	if agentAddr != "" {
		var err error
		if addr, err = netip.ParseAddr(agentAddr); err != nil {
			return fmt.Errorf("sflow: --sflow-agent-address: %w", err)
		}
	}
	dp := dprpc.New(socket, timeout)
	x, err := sflow.New(sflow.Config{DP: dp, Collectors: collectors, Rate: uint32(rate), PortRates: ports, Polling: polling,
		Agent: addr, Log: log})
	if err != nil {
		dp.Close()
		return err
	}
	go func() {
		defer dp.Close()
		defer x.Close()
		x.Run(ctx)
	}()
	log.Info("sflow", "collectors", collectors, "sampling", rate, "polling", polling)
	return nil
}

// dialEtcd opens the agent's etcd client. With a user, clientv3.New
// authenticates at once, so it is retried until etcd answers: the agent
// starts (and leaves the datapath alone) while etcd is down.
func dialEtcd(ctx context.Context, creds etcdauth.Credentials, log *slog.Logger) (*clientv3.Client, error) {
	for {
		cli, err := creds.Client()
		if err == nil {
			return cli, nil
		}
		if errors.Is(err, rpctypes.ErrAuthFailed) {
			return nil, err // wrong credentials: retrying will not help
		}
		log.Warn("etcd not reachable yet", "err", err)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}
