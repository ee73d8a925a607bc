// Command e3-bench-agent measures e3-agent against a real e3-vswitchd and an
// embedded etcd: how fast it programs a leaf holding N E-LAN memberships
// from empty (entries per second), what one service key changed on that
// loaded node costs, and how long a restarted datapath takes to be
// programmed again. See bench/controller/README.md.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/e3fabric/e3fabric/control/internal/agent"
	"github.com/e3fabric/e3fabric/control/internal/dpconfig"
	"github.com/e3fabric/e3fabric/control/internal/dprpc"
	"github.com/e3fabric/e3fabric/control/internal/nodestate"
	"github.com/e3fabric/e3fabric/control/internal/store"
)

const node = "bench-leaf"

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "e3-bench-agent:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		services = flag.Int("services", 2500, "E-LAN memberships on the node (14 labels each: 2,500 = 35,000 labels; at most 8,188, a VLAN each on two ports); with --role spine, the E-LANs crossing it")
		role     = flag.String("role", "leaf", "leaf (memberships) or spine (each E-LAN's transit labels and a flood branch point)")
		transit  = flag.Int("transit", 14, "spine: transit (swap) labels per E-LAN, each with its NHLFE (15.5 labels per 8-circuit E-LAN on 8 spines, with the tree's)")
		members  = flag.Int("members", 8, "members per E-LAN (remotes = members - 1)")
		vswitchd = flag.String("vswitchd", "../build/bin/e3-vswitchd", "the datapath binary")
		port     = flag.Int("etcd-port", 23840, "embedded etcd client port (peer = port+1)")
	)
	flag.Parse()
	dir, err := os.MkdirTemp("", "e3-bench-agent-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	url := fmt.Sprintf("http://127.0.0.1:%d", *port)
	e, err := store.StartEmbedded(store.EmbedOptions{DataDir: dir + "/etcd", ClientURL: url,
		PeerURL: fmt.Sprintf("http://127.0.0.1:%d", *port+1), MaxRequest: 256 << 20})
	if err != nil {
		return err
	}
	defer e.Close()
	cli, err := store.Connect(url)
	if err != nil {
		return err
	}
	defer cli.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	build := func(n int) map[string]*dpconfig.Fragment { return leaf(n, *members) }
	what := fmt.Sprintf("%d E-LAN memberships of %d members", *services, *members)
	if *role == "spine" {
		build = func(n int) map[string]*dpconfig.Fragment { return spine(n, *transit) }
		what = fmt.Sprintf("a spine crossed by %d E-LANs, %d transit labels and a flood branch point each", *services, *transit)
	}
	frags := build(*services)
	entries, labels := 0, 0
	for _, f := range frags {
		entries += f.Len()
		labels += len(f.Labels)
	}
	fmt.Printf("node: %s: %d keys, %d datapath entries (%d labels)\n", what, len(frags), entries, labels)
	if err := put(ctx, cli, 1, frags); err != nil {
		return err
	}

	dp := &datapath{bin: *vswitchd, sock: dir + "/dp.sock", prefix: fmt.Sprintf("e3-bench-agent-%d", os.Getpid())}
	defer dp.stop()
	if err := dp.start(ctx); err != nil {
		return err
	}
	reports := make(chan agent.Report, 100)
	rpc := dprpc.New(dp.sock, time.Minute)
	defer rpc.Close()
	a, err := agent.New(agent.Config{Node: node, Etcd: cli, DP: rpc, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		ResyncInterval: time.Hour, OnReconcile: func(r agent.Report) { reports <- r }})
	if err != nil {
		return err
	}
	t0 := time.Now()
	go a.Run(ctx)
	r, err := wait(reports, func(r agent.Report) bool { return r.Generation == 1 })
	if err != nil {
		return err
	}
	d := time.Since(t0)
	fmt.Printf("program from empty: %d calls in %.2f s: %.0f entries/s\n", r.Calls, d.Seconds(), float64(r.Calls)/d.Seconds())

	extra := build(*services + 1)
	one := map[string]*dpconfig.Fragment{}
	for k, f := range extra {
		if _, ok := frags[k]; !ok {
			one[k] = f
		}
	}
	t0 = time.Now()
	if err := put(ctx, cli, 2, one); err != nil {
		return err
	}
	if r, err = wait(reports, func(r agent.Report) bool { return r.Generation == 2 }); err != nil {
		return err
	}
	fmt.Printf("one service key added on the loaded node: %d calls in %.1f ms (full pass: %v)\n",
		r.Calls, float64(time.Since(t0).Microseconds())/1000, r.Full)

	dp.stop()
	t0 = time.Now()
	if err := dp.start(ctx); err != nil {
		return err
	}
	up := time.Since(t0)
	if r, err = wait(reports, func(r agent.Report) bool { return r.Full && r.Calls > 0 }); err != nil {
		return err
	}
	d = time.Since(t0)
	fmt.Printf("datapath restarted: answering after %.2f s, programmed again after %.2f s (%d calls, %.0f entries/s)\n",
		up.Seconds(), d.Seconds(), r.Calls, float64(r.Calls)/(d-up).Seconds())
	return nil
}

// wait returns the first successful report that matches.
func wait(reports <-chan agent.Report, match func(agent.Report) bool) (agent.Report, error) {
	limit := time.After(10 * time.Minute)
	for {
		select {
		case r := <-reports:
			if r.Err == nil && match(r) {
				return r, nil
			}
		case <-limit:
			return agent.Report{}, errors.New("the agent did not converge within 10 minutes")
		}
	}
}

// leaf is a leaf's desired keys: its own fragment and n E-LAN memberships,
// each as a leaf holds one (docs/control-plane.md): the service with a
// remote per other member, its circuit, an ELAN and a REPLICATE label per
// other member, and an NHLFE per remote and flood branch.
func leaf(n, members int) map[string]*dpconfig.Fragment {
	s := dpconfig.DefaultSettings()
	out := map[string]*dpconfig.Fragment{nodestate.BaseKey(node): {Settings: &s,
		Ports: []dpconfig.Port{{Name: "fab1", Devargs: "net_ring0", Kind: dpconfig.KindFabric},
			{Name: "fab2", Devargs: "net_ring1", Kind: dpconfig.KindFabric},
			{Name: "cust1", Devargs: "net_ring2", Kind: dpconfig.KindCustomer},
			{Name: "cust2", Devargs: "net_ring3", Kind: dpconfig.KindCustomer}},
		Nexthops: []dpconfig.Nexthop{{ID: 1, Port: "fab1", MAC: "02:00:00:00:01:01"}, {ID: 2, Port: "fab2", MAC: "02:00:00:00:02:02"}}}}
	label, nhlfe := uint32(16), uint32(1)
	for i := 0; i < n; i++ {
		id := uint32(i + 1)
		f := &dpconfig.Fragment{}
		svc := dpconfig.Service{ID: id, Type: dpconfig.ServiceELAN, Name: fmt.Sprintf("elan%05d", i)}
		for m := 1; m < members; m++ {
			f.NHLFEs = append(f.NHLFEs, dpconfig.NHLFE{ID: nhlfe, Nexthop: uint32(1 + m%2), Label: 100000 + label})
			svc.Remotes = append(svc.Remotes, dpconfig.Remote{Source: uint16(m + 1), NHLFE: nhlfe})
			nhlfe++
			src := uint16(m + 1)
			f.Labels = append(f.Labels,
				dpconfig.Label{Label: label, Type: dpconfig.LabelELAN, Service: &id, Source: &src, InPorts: []string{"fab1", "fab2"}},
				dpconfig.Label{Label: label + 1, Type: dpconfig.LabelReplicate, Service: &id, Source: &src, RPFPort: "fab1", InPorts: []string{"fab1"}})
			label += 2
		}
		f.NHLFEs = append(f.NHLFEs, dpconfig.NHLFE{ID: nhlfe, Nexthop: 1, Label: 200000 + id})
		svc.Branches = []uint32{nhlfe}
		nhlfe++
		f.Services = []dpconfig.Service{svc}
		f.Circuits = []dpconfig.Circuit{{ID: id, Port: fmt.Sprintf("cust%d", 1+i/4094), VLAN: dpconfig.VLAN(1 + i%4094), Service: id}}
		out[nodestate.ServiceKey(node, svc.Name)] = f
	}
	return out
}

// spine is a spine's desired keys: its own fragment and, per E-LAN
// crossing it, transit SWAP labels with their NHLFEs (unicast paths and
// backups) and a REPLICATE label (its flood tree).
func spine(n, transit int) map[string]*dpconfig.Fragment {
	out := leaf(0, 0)
	label, nhlfe := uint32(16), uint32(1)
	for i := 0; i < n; i++ {
		f := &dpconfig.Fragment{}
		for t := 0; t < transit; t++ {
			id := nhlfe
			f.NHLFEs = append(f.NHLFEs, dpconfig.NHLFE{ID: id, Nexthop: uint32(1 + t%2), Label: 100000 + label})
			in := fmt.Sprintf("fab%d", 2-t%2)
			f.Labels = append(f.Labels, dpconfig.Label{Label: label, Type: dpconfig.LabelSwap, NHLFE: &id, InPorts: []string{in}})
			label, nhlfe = label+1, nhlfe+1
		}
		f.NHLFEs = append(f.NHLFEs, dpconfig.NHLFE{ID: nhlfe, Nexthop: 2, Label: 200000 + label})
		f.Labels = append(f.Labels, dpconfig.Label{Label: label, Type: dpconfig.LabelReplicate, RPFPort: "fab1",
			Branches: []uint32{nhlfe}, InPorts: []string{"fab1"}})
		label, nhlfe = label+1, nhlfe+1
		out[nodestate.ServiceKey(node, fmt.Sprintf("elan%05d", i))] = f
	}
	return out
}

// put writes keys and the node's generation, in transactions of at most
// 1,000 keys, the generation last.
func put(ctx context.Context, cli *clientv3.Client, gen int64, keys map[string]*dpconfig.Fragment) error {
	var ops []clientv3.Op
	flush := func() error {
		if len(ops) == 0 {
			return nil
		}
		_, err := cli.Txn(ctx).Then(ops...).Commit()
		ops = ops[:0]
		return err
	}
	for k, f := range keys {
		b, err := json.Marshal(f)
		if err != nil {
			return err
		}
		if ops = append(ops, clientv3.OpPut(k, string(b))); len(ops) == 1000 {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	ops = append(ops, clientv3.OpPut(nodestate.GenerationKey(node), fmt.Sprint(gen)))
	return flush()
}

// datapath is the e3-vswitchd under test, killed by PID.
type datapath struct {
	bin, sock, prefix string
	cmd               *exec.Cmd
}

func (d *datapath) start(ctx context.Context) error {
	os.Remove(d.sock)
	d.cmd = exec.Command(d.bin, "--no-pci", "--no-huge", "-m", "1024", "--file-prefix", d.prefix, "-l", "0,1", "--",
		"--poll-mode", "adaptive", "--rpc-socket", d.sock, "--mac-table-size", "4096")
	d.cmd.Stdout, d.cmd.Stderr = io.Discard, io.Discard
	if err := d.cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", d.bin, err)
	}
	probe := dprpc.New(d.sock, time.Second)
	defer probe.Close()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if _, err := probe.SystemInfo(ctx); err == nil {
			return nil
		} else if time.Now().After(deadline) {
			return fmt.Errorf("%s does not answer: %w", d.bin, err)
		}
	}
}

func (d *datapath) stop() {
	if d.cmd == nil || d.cmd.Process == nil {
		return
	}
	d.cmd.Process.Signal(syscall.SIGKILL)
	d.cmd.Wait()
	d.cmd = nil
	os.RemoveAll("/var/run/dpdk/" + d.prefix)
}
