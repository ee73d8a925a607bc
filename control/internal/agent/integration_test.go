package agent_test

// Integration test: a real etcd (Debian's /usr/bin/etcd) and a real
// e3-vswitchd (build/bin/e3-vswitchd, ports on net_ring vdevs), with the
// agent in between. Skipped, with the reason, when either binary is
// missing. Every process started here is killed by PID in t.Cleanup.

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/e3fabric/e3fabric/control/internal/agent"
	"github.com/e3fabric/e3fabric/control/internal/dpconfig"
	"github.com/e3fabric/e3fabric/control/internal/dprpc"
	"github.com/e3fabric/e3fabric/control/internal/nodestate"
)

// Loopback ports of this test's etcd, used by no other package's tests: go
// test runs packages side by side.
const (
	etcdClientURL = "http://127.0.0.1:23800"
	etcdPeerURL   = "http://127.0.0.1:23801"
)

// waitLimit is a safety net for waits on things that happen within a
// second or two; the test never asserts on time.
const waitLimit = 30 * time.Second

func repoRoot(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := dir; d != "/"; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "control", "go.mod")); err == nil {
			return d
		}
	}
	t.Fatalf("no repository root above %s", dir)
	return ""
}

// proc is a process of the test, killed by PID at cleanup.
type proc struct {
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

func start(t *testing.T, name string, args ...string) *proc {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), filepath.Base(name)+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		t.Fatalf("start %s: %v", name, err)
	}
	p := &proc{cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() { cmd.Wait(); logf.Close(); close(p.done) }()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("--- %s (pid %d) log:\n%s", filepath.Base(name), cmd.Process.Pid, tail(b, 3000))
		}
	})
	return p
}

func (p *proc) kill() {
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

func startEtcd(t *testing.T, dataDir string) *proc {
	t.Helper()
	// A leftover etcd on our ports would serve someone else's keys.
	for _, u := range []string{etcdClientURL, etcdPeerURL} {
		addr := strings.TrimPrefix(u, "http://")
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("%s is taken (a leftover etcd?): %v", addr, err)
		}
		ln.Close()
	}
	return start(t, "etcd", "--name", "cpD", "--data-dir", dataDir,
		"--listen-client-urls", etcdClientURL, "--advertise-client-urls", etcdClientURL,
		"--listen-peer-urls", etcdPeerURL, "--initial-advertise-peer-urls", etcdPeerURL,
		"--initial-cluster", "cpD="+etcdPeerURL, "--log-level", "warn")
}

func etcdClient(t *testing.T) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{etcdClientURL},
		DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	eventually(t, "etcd answers", func() error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := cli.Get(ctx, "/e3/v1/")
		return err
	})
	return cli
}

// datapath runs one e3-vswitchd on the socket, with a unique file prefix.
type datapath struct {
	t         *testing.T // the top-level test: a datapath outlives subtests
	bin, sock string
	n         int
	p         *proc
}

func (d *datapath) start() {
	d.t.Helper()
	d.n++
	os.Remove(d.sock)
	prefix := fmt.Sprintf("cpD-%d-%d", os.Getpid(), d.n)
	d.t.Cleanup(func() { os.RemoveAll("/var/run/dpdk/" + prefix) })
	d.p = start(d.t, d.bin, "--no-pci", "--no-huge", "-m", "256",
		"--file-prefix", prefix, "-l", "0,1", "--",
		"--poll-mode", "adaptive", "--rpc-socket", d.sock, "--mac-table-size", "4096")
}

func eventually(t *testing.T, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still failing after %s: %v", what, waitLimit, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func u32(v uint32) *uint32 { return &v }
func u16(v uint16) *uint16 { return &v }

// gen1 is a leaf with an E-Line (service 1) and an E-LAN (service 2) and
// one label entry of each type.
func gen1() dpconfig.Config {
	return dpconfig.Config{
		Version:  1,
		Settings: dpconfig.Settings{TTL: 32, ControlWord: true, MACAgingS: 120, MACLimit: 1000},
		Ports: []dpconfig.Port{
			{Name: "fab0", Devargs: "net_ring0", Kind: dpconfig.KindFabric},
			{Name: "fab1", Devargs: "net_ring1", Kind: dpconfig.KindFabric, MAC: "02:00:00:00:aa:01"},
			{Name: "cust0", Devargs: "net_ring2", Kind: dpconfig.KindCustomer, MTU: 1600},
		},
		Nexthops: []dpconfig.Nexthop{{ID: 1, Port: "fab0", MAC: "02:00:00:00:01:01"}},
		NHLFEs:   []dpconfig.NHLFE{{ID: 10, Nexthop: 1, Label: 1000}, {ID: 11, Nexthop: 1, Label: 1001}},
		Services: []dpconfig.Service{
			{ID: 1, Type: dpconfig.ServiceELine, Name: "eline-1", NHLFE: u32(10)},
			{ID: 2, Type: dpconfig.ServiceELAN, Name: "elan-2", Remotes: []dpconfig.Remote{{Source: 1, NHLFE: 11}}, Branches: []uint32{11}},
		},
		Circuits: []dpconfig.Circuit{
			{ID: 1, Port: "cust0", VLAN: 100, Service: 1},
			{ID: 2, Port: "cust0", VLAN: dpconfig.Untagged, Service: 2, MACLimit: 64},
		},
		Labels: []dpconfig.Label{
			{Label: 500, Type: dpconfig.LabelELine, Service: u32(1)},
			{Label: 501, Type: dpconfig.LabelELAN, Service: u32(2), Source: u16(1), InPorts: []string{"fab1", "fab0"}},
			{Label: 502, Type: dpconfig.LabelSwap, NHLFE: u32(10)},
			{Label: 503, Type: dpconfig.LabelReplicate, RPFPort: "fab0", Branches: []uint32{11}, Service: u32(2), Source: u16(1)},
			// The end of a path check's LSP (docs/ha.md); its session may come later.
			{Label: 504, Type: dpconfig.LabelOAM, Session: u32(2048), InPorts: []string{"fab0"}},
		},
	}
}

// gen2 moves every path from nexthop 1 (fab0) to a new nexthop 2 (fab1):
// a new nhlfe for the E-Line and the swap, nhlfe 11 re-pointed in place.
func gen2() dpconfig.Config {
	c := gen1()
	c.Nexthops = []dpconfig.Nexthop{{ID: 2, Port: "fab1", MAC: "02:00:00:00:02:02"}}
	c.NHLFEs = []dpconfig.NHLFE{{ID: 11, Nexthop: 2, Label: 1001}, {ID: 12, Nexthop: 2, Label: 2000}}
	c.Services[0].NHLFE = u32(12)
	c.Labels[2].NHLFE = u32(12)
	return c
}

// putDesired writes cfg as the node's own fragment, and the generation,
// in one transaction.
func putDesired(t *testing.T, cli *clientv3.Client, node string, gen int64, cfg dpconfig.Config) {
	t.Helper()
	putKeys(t, cli, node, gen, map[string]*dpconfig.Fragment{nodestate.BaseKey(node): cfg.Fragment()})
}

// putKeys writes (or, for nil, deletes) desired keys and sets the
// generation, in one transaction.
func putKeys(t *testing.T, cli *clientv3.Client, node string, gen int64, keys map[string]*dpconfig.Fragment) {
	t.Helper()
	ops := []clientv3.Op{clientv3.OpPut(nodestate.GenerationKey(node), fmt.Sprint(gen))}
	for k, f := range keys {
		if f == nil {
			ops = append(ops, clientv3.OpDelete(k))
			continue
		}
		b, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		ops = append(ops, clientv3.OpPut(k, string(b)))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := cli.Txn(ctx).Then(ops...).Commit(); err != nil {
		t.Fatal(err)
	}
}

// nextReport waits for the next reconcile report that matches.
func nextReport(t *testing.T, reports <-chan agent.Report, what string, match func(agent.Report) bool) agent.Report {
	t.Helper()
	limit := time.After(waitLimit)
	for {
		select {
		case r := <-reports:
			if match(r) {
				return r
			}
			t.Logf("%s: passing report gen %d boot %s calls %d err %v", what, r.Generation, r.BootID, r.Calls, r.Err)
		case <-limit:
			t.Fatalf("%s: no such reconcile within %s", what, waitLimit)
		}
	}
}

func opStrings(ops []agent.Op) []string {
	var s []string
	for _, op := range ops {
		s = append(s, op.String())
	}
	return s
}

func dump(t *testing.T, dp *dprpc.Client) dpconfig.Config {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := dp.ConfigDump(ctx)
	if err != nil {
		t.Fatalf("config_dump: %v", err)
	}
	return c
}

func readStatus(t *testing.T, cli *clientv3.Client, node string) (*nodestate.NodeStatus, clientv3.LeaseID) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := cli.Get(ctx, nodestate.StatusKey(node))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) == 0 {
		return nil, 0
	}
	var st nodestate.NodeStatus
	if err := json.Unmarshal(resp.Kvs[0].Value, &st); err != nil {
		t.Fatalf("status %s: %v", resp.Kvs[0].Value, err)
	}
	return &st, clientv3.LeaseID(resp.Kvs[0].Lease)
}

func TestAgentIntegration(t *testing.T) {
	root := repoRoot(t)
	vswitchd := filepath.Join(root, "build", "bin", "e3-vswitchd")
	if _, err := os.Stat(vswitchd); err != nil {
		t.Skipf("integration test needs the datapath: %s missing (run `make datapath`)", vswitchd)
	}
	if _, err := exec.LookPath("etcd"); err != nil {
		t.Skip("integration test needs an etcd binary on PATH (Debian package etcd-server, installed by scripts/deps.sh)")
	}
	if testing.Short() {
		t.Skip("integration test skipped in -short mode")
	}
	const node = "cpD-leaf1"

	top := t
	etcdDir := filepath.Join(t.TempDir(), "etcd")
	etcdProc := startEtcd(t, etcdDir)
	cli := etcdClient(t)

	dpd := &datapath{t: t, bin: vswitchd, sock: fmt.Sprintf("/tmp/cpD-%d.sock", os.Getpid())}
	t.Cleanup(func() { os.Remove(dpd.sock) })
	// The test's own view of the datapath, separate from the agent's.
	probe := dprpc.New(dpd.sock, 10*time.Second)
	t.Cleanup(func() { probe.Close() })

	putDesired(t, cli, node, 1, gen1())

	reports := make(chan agent.Report, 1000)
	agentCli, err := clientv3.New(clientv3.Config{Endpoints: []string{etcdClientURL},
		DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer agentCli.Close()
	agentDP := dprpc.New(dpd.sock, 10*time.Second)
	defer agentDP.Close()
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	a, err := agent.New(agent.Config{
		Node: node, Etcd: agentCli, DP: agentDP, Log: log,
		StatusInterval: 500 * time.Millisecond, // quicker heartbeats for the test
		RetryMin:       100 * time.Millisecond, RetryMax: time.Second,
		OnReconcile: func(r agent.Report) {
			select {
			case reports <- r:
			default:
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	runDone := make(chan error, 1)
	go func() { runDone <- a.Run(ctx) }()
	var stopOnce sync.Once
	stopAgent := func() {
		stopOnce.Do(func() {
			stop()
			select {
			case <-runDone:
			case <-time.After(waitLimit):
				t.Error("agent did not stop")
			}
		})
	}
	defer stopAgent()

	// The agent starts first, as it may when a node boots: it reports the
	// missing datapath and programs it once it is up.
	var boot1 string
	t.Run("waits for the datapath", func(t *testing.T) {
		eventually(t, "status names the missing datapath", func() error {
			st, _ := readStatus(t, cli, node)
			if st == nil || !strings.Contains(st.Error, "datapath") || st.BootID != "" || st.AppliedGeneration != 0 {
				return fmt.Errorf("status %+v", st)
			}
			return nil
		})
		dpd.start()
		eventually(t, "datapath answers", func() error {
			info, err := probe.SystemInfo(context.Background())
			boot1 = info.BootID
			return err
		})
	})

	t.Run("converges", func(t *testing.T) {
		r := nextReport(t, reports, "first apply", func(r agent.Report) bool {
			return r.Generation == 1 && r.Err == nil && r.Calls > 0
		})
		if r.BootID != boot1 {
			t.Errorf("programmed boot id %s, want %s", r.BootID, boot1)
		}
		// Settings, then 3 ports, 1 nexthop, 2 nhlfes, 2 services, 2 circuits, 5 labels.
		if r.Calls != 16 {
			t.Errorf("first apply made %d calls (%q), want 16", r.Calls, opStrings(r.Plan))
		}
		got := dump(t, probe)
		if !gen1().Equal(withoutDeviceMACs(got, gen1())) {
			t.Fatalf("datapath did not converge:\n got  %+v\n want %+v", got.Normalize(), gen1().Normalize())
		}
		if plan := agent.Diff(gen1(), got); len(plan) != 0 {
			t.Errorf("diff after convergence: %q", opStrings(plan))
		}
	})

	t.Run("same config again makes no calls", func(t *testing.T) {
		putDesired(t, cli, node, 1, gen1()) // a watch event: a real reconcile trigger
		r := nextReport(t, reports, "re-apply", func(r agent.Report) bool { return r.Generation == 1 })
		if r.Err != nil || r.Calls != 0 || len(r.Plan) != 0 || r.Full {
			t.Errorf("re-apply: full %v calls %d plan %q err %v, want an incremental pass with nothing to do",
				r.Full, r.Calls, opStrings(r.Plan), r.Err)
		}
	})

	t.Run("a single key's change makes only its calls", func(t *testing.T) {
		svc := nodestate.ServiceKey(node, "blue")
		blue := &dpconfig.Fragment{
			Services: []dpconfig.Service{{ID: 3, Type: dpconfig.ServiceELine, Name: "blue", NHLFE: u32(10)}},
			Circuits: []dpconfig.Circuit{{ID: 3, Port: "cust0", VLAN: 300, Service: 3}},
			Labels:   []dpconfig.Label{{Label: 600, Type: dpconfig.LabelELine, Service: u32(3)}},
		}
		putKeys(t, cli, node, 2, map[string]*dpconfig.Fragment{svc: blue})
		r := nextReport(t, reports, "blue added", func(r agent.Report) bool { return r.Generation == 2 })
		want := []string{"add service 3", "add circuit 3", "add label 600"}
		if got := opStrings(r.Plan); r.Err != nil || r.Full || !slices.Equal(got, want) || r.Calls != len(want) {
			t.Errorf("add key: full %v plan %q calls %d err %v, want %q", r.Full, got, r.Calls, r.Err, want)
		}
		putKeys(t, cli, node, 3, map[string]*dpconfig.Fragment{svc: nil})
		r = nextReport(t, reports, "blue deleted", func(r agent.Report) bool { return r.Generation == 3 })
		want = []string{"delete label 600", "delete circuit 3", "delete service 3"}
		if got := opStrings(r.Plan); r.Err != nil || r.Full || !slices.Equal(got, want) {
			t.Errorf("delete key: full %v plan %q err %v, want %q", r.Full, got, r.Err, want)
		}
		if got := dump(t, probe); !gen1().Equal(withoutDeviceMACs(got, gen1())) {
			t.Errorf("datapath not back at gen 1: %+v", got.Normalize())
		}
	})

	t.Run("re-point is make-before-break", func(t *testing.T) {
		putDesired(t, cli, node, 4, gen2())
		r := nextReport(t, reports, "gen 4", func(r agent.Report) bool { return r.Generation == 4 })
		if r.Err != nil {
			t.Fatalf("gen 4: %v", r.Err)
		}
		want := []string{
			"add nexthop 2",
			"add nhlfe 12", "replace nhlfe 11",
			"replace service 1",
			"replace label 502",
			"delete nhlfe 10", "delete nexthop 1",
		}
		if got := opStrings(r.Plan); !slices.Equal(got, want) {
			t.Errorf("plan %q, want %q", got, want)
		}
		// Every call succeeded first time: nothing was deleted while in use
		// (the datapath refuses that with "busy") and nothing pointed at a
		// missing object.
		if r.Calls != len(want) {
			t.Errorf("%d calls for %d ops: some were retried", r.Calls, len(want))
		}
		if got := dump(t, probe); !gen2().Equal(withoutDeviceMACs(got, gen2())) {
			t.Errorf("datapath not at gen 2:\n got  %+v", got.Normalize())
		}
	})

	t.Run("status under a lease", func(t *testing.T) {
		var st *nodestate.NodeStatus
		var lease clientv3.LeaseID
		wantPorts := []nodestate.PortStatus{{Name: "cust0", LinkUp: true}, {Name: "fab0", LinkUp: true}, {Name: "fab1", LinkUp: true}}
		eventually(t, "status at generation 2 with the ports up", func() error {
			st, lease = readStatus(t, cli, node)
			if st == nil || st.AppliedGeneration != 4 {
				return fmt.Errorf("status %+v", st)
			}
			for _, p := range st.Ports {
				if p.Stats == nil {
					return fmt.Errorf("port %s: no stats", p.Name)
				}
			}
			ports := nodestate.WithoutStats(st.Ports)
			slices.SortFunc(ports, func(a, b nodestate.PortStatus) int { return strings.Compare(a.Name, b.Name) })
			if !slices.Equal(ports, wantPorts) {
				return fmt.Errorf("status ports %+v, want %+v", ports, wantPorts)
			}
			return nil
		})
		if st.Node != node || st.BootID != boot1 || st.Error != "" || st.Updated.IsZero() {
			t.Errorf("status %+v", st)
		}
		if lease == 0 {
			t.Fatal("status key has no lease")
		}
		ttl, err := cli.TimeToLive(context.Background(), lease)
		if err != nil || ttl.TTL <= 0 || ttl.GrantedTTL != 5 {
			t.Errorf("lease %x: ttl %+v, %v; want a live 5 s lease", lease, ttl, err)
		}
		// The heartbeat rewrites it: "updated" moves on.
		first := st.Updated
		eventually(t, "status refreshed", func() error {
			if st, _ := readStatus(t, cli, node); st == nil || !st.Updated.After(first) {
				return fmt.Errorf("updated still %v", first)
			}
			return nil
		})
	})

	t.Run("datapath restart is re-programmed", func(t *testing.T) {
		dpd.p.kill()
		dpd.start()
		var boot2 string
		eventually(t, "restarted datapath answers", func() error {
			info, err := probe.SystemInfo(context.Background())
			boot2 = info.BootID
			return err
		})
		if boot2 == boot1 {
			t.Fatalf("boot id did not change: %s", boot2)
		}
		r := nextReport(t, reports, "re-program", func(r agent.Report) bool {
			return r.BootID == boot2 && r.Err == nil && r.Calls > 0
		})
		if r.Generation != 4 || !r.Full {
			t.Errorf("re-programmed generation %d in a full pass %v, want 4 in a full pass (dump and diff)", r.Generation, r.Full)
		}
		eventually(t, "datapath at gen 2 again", func() error {
			if got := dump(t, probe); !gen2().Equal(withoutDeviceMACs(got, gen2())) {
				return fmt.Errorf("dump %+v", got.Normalize())
			}
			return nil
		})
		eventually(t, "status shows the new boot id", func() error {
			if st, _ := readStatus(t, cli, node); st == nil || st.BootID != boot2 || st.AppliedGeneration != 4 {
				return fmt.Errorf("status %+v", st)
			}
			return nil
		})
	})

	t.Run("bad desired config leaves the datapath alone", func(t *testing.T) {
		bad := gen2()
		bad.Services[0].NHLFE = u32(99) // no such nhlfe
		putDesired(t, cli, node, 5, bad)
		r := nextReport(t, reports, "bad gen 5", func(r agent.Report) bool { return r.Err != nil })
		if !strings.Contains(r.Err.Error(), "nhlfe 99") {
			t.Errorf("error %v, want it to name nhlfe 99", r.Err)
		}
		eventually(t, "status reports the error", func() error {
			st, _ := readStatus(t, cli, node)
			if st == nil || !strings.Contains(st.Error, "nhlfe 99") || st.AppliedGeneration != 4 {
				return fmt.Errorf("status %+v", st)
			}
			return nil
		})
		if got := dump(t, probe); !gen2().Equal(withoutDeviceMACs(got, gen2())) {
			t.Errorf("datapath changed by a refused config: %+v", got.Normalize())
		}
		putDesired(t, cli, node, 6, gen2())
		nextReport(t, reports, "good gen 6", func(r agent.Report) bool { return r.Generation == 6 && r.Err == nil })
	})

	t.Run("etcd outage: datapath kept, restarted datapath re-programmed", func(t *testing.T) {
		etcdProc.kill()
		// A datapath restart while etcd is down: the agent re-programs it
		// from the last desired config it read.
		dpd.p.kill()
		dpd.start()
		var boot3 string
		eventually(t, "restarted datapath answers", func() error {
			info, err := probe.SystemInfo(context.Background())
			boot3 = info.BootID
			return err
		})
		r := nextReport(t, reports, "re-program without etcd", func(r agent.Report) bool {
			return r.BootID == boot3 && r.Err == nil && r.Calls > 0
		})
		if r.Generation != 6 {
			t.Errorf("re-programmed generation %d, want 6", r.Generation)
		}
		if got := dump(t, probe); !gen2().Equal(withoutDeviceMACs(got, gen2())) {
			t.Errorf("datapath not at the last desired config: %+v", got.Normalize())
		}
		// etcd back (same data): the agent writes its status again.
		etcdProc = startEtcd(top, etcdDir) // outlives this subtest
		eventually(t, "status after etcd is back", func() error {
			st, _ := readStatus(t, cli, node)
			if st == nil || st.BootID != boot3 || st.AppliedGeneration != 6 || st.Error != "" {
				return fmt.Errorf("status %+v", st)
			}
			return nil
		})
	})

	t.Run("a full pass over an unchanged datapath makes no calls", func(t *testing.T) {
		// Its dump decodes to the objects the agent programmed.
		a.Resync()
		r := nextReport(t, reports, "full pass", func(r agent.Report) bool { return r.Full })
		if r.Err != nil || r.Calls != 0 {
			t.Errorf("full pass: calls %d plan %q err %v, want nothing to do", r.Calls, opStrings(r.Plan), r.Err)
		}
	})

	t.Run("status disappears when the agent stops", func(t *testing.T) {
		if st, _ := readStatus(t, cli, node); st == nil {
			t.Fatal("no status before stop")
		}
		stopAgent()
		if st, _ := readStatus(t, cli, node); st != nil {
			t.Errorf("status still there after stop: %+v", st)
		}
		// The datapath keeps its config when the agent is gone.
		if got := dump(t, probe); !gen2().Equal(withoutDeviceMACs(got, gen2())) {
			t.Errorf("datapath changed after agent stop")
		}
	})

	t.Run("a newly applied generation's status is written at once", func(t *testing.T) {
		// Heartbeat and spacing an hour apart: only the rule that an
		// applied generation goes at once can write these statuses.
		a2, err := agent.New(agent.Config{Node: node, Etcd: agentCli, DP: agentDP, Log: log,
			StatusInterval: time.Hour, StatusMinInterval: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		ctx2, stop2 := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- a2.Run(ctx2) }()
		defer func() { stop2(); <-done }()
		for _, gen := range []int64{6, 7} {
			if gen == 7 {
				putDesired(t, cli, node, 7, gen1())
			}
			eventually(t, fmt.Sprintf("status at generation %d", gen), func() error {
				if st, _ := readStatus(t, cli, node); st == nil || st.AppliedGeneration != gen {
					return fmt.Errorf("status %+v", st)
				}
				return nil
			})
		}
	})
}

// withoutDeviceMACs clears the MACs of the ports whose desired MAC is
// empty: config_dump reports the device's own MAC there.
func withoutDeviceMACs(got, want dpconfig.Config) dpconfig.Config {
	open := map[string]bool{}
	for _, p := range want.Ports {
		open[p.Name] = p.MAC == ""
	}
	got.Ports = slices.Clone(got.Ports)
	for i := range got.Ports {
		if open[got.Ports[i].Name] {
			got.Ports[i].MAC = ""
		}
	}
	return got
}

// testWriter sends the agent's log to the test's log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
