// Command e3-bench-controller measures the controller: it creates N E-LAN
// services of C circuits on an S-spine/L-leaf fabric against an embedded
// etcd or an etcd cluster of its own, in batches (one transaction each),
// and reports the time, etcd's database size, the labels used per node,
// the memory held, and how long a restarted controller takes to be ready.
// See bench/controller/README.md.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/rand"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/e3fabric/e3fabric/control/internal/controller"
	"github.com/e3fabric/e3fabric/control/internal/dpconfig"
	"github.com/e3fabric/e3fabric/control/internal/memlimit"
	"github.com/e3fabric/e3fabric/control/internal/model"
	"github.com/e3fabric/e3fabric/control/internal/nodestate"
	"github.com/e3fabric/e3fabric/control/internal/store"
	"github.com/e3fabric/e3fabric/control/internal/topology"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "e3-bench-controller:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		services = flag.Int("services", 10000, "E-LAN services to create")
		circuits = flag.Int("circuits", 8, "circuits (on distinct leaves) per service")
		spines   = flag.Int("spines", 4, "spine nodes (with --pods: each pod's)")
		leaves   = flag.Int("leaves", 32, "leaf nodes")
		pods     = flag.Int("pods", 0, "three tiers: the leaves in this many pods, each with --spines spines of its own, joined by --supers super spines (0: two tiers)")
		supers   = flag.Int("supers", 0, "with --pods: super spines, each linked to every pod's spines")
		batch    = flag.Int("batch", 500, "services per transaction")
		port     = flag.Int("etcd-port", 23798, "embedded etcd client port (peer = port+1); a cluster's members use port+2i and port+2i+1")
		members  = flag.Int("etcd-cluster", 0, "run against an etcd cluster of this many member processes (mutual TLS, authentication on) instead of an embedded etcd")
		etcdBin  = flag.String("etcd-bin", "/usr/bin/etcd", "the etcd binary of --etcd-cluster")
		restart  = flag.Bool("restart", true, "measure a new controller taking over the loaded fabric")
		loadprof = flag.String("loadprofile", "", "write a CPU profile of the new controller's load (--restart) to this file")
		chprof   = flag.String("changeprofile", "", "write a CPU profile of the single-service changes (--changes) to this file")
		dir      = flag.String("data-dir", "", "etcd data directory (default: a temporary one, removed)")
		changes  = flag.Int("changes", 9, "single-service creates and deletes timed on the full fabric")
		profile  = flag.String("cpuprofile", "", "write a CPU profile of the service creation to this file")
		memprof  = flag.String("memprofile", "", "write a profile of what the service creation allocated to this file")
		heapprof = flag.String("heapprofile", "", "write a profile of what the loaded fabric holds (in use, after a GC) to this file")
		snapshot = flag.Bool("snapshot", true, "measure the fabric snapshot (it holds the whole fabric in memory once more)")
		memLimit = flag.String("memory-limit", "0", "the Go runtime's soft memory limit, as e3-controller's --memory-limit (a size, 0 for none, auto)")
	)
	flag.Parse()
	memNote, err := memlimit.Apply(*memLimit)
	if err != nil {
		return err
	}
	if *circuits > *leaves {
		return fmt.Errorf("--circuits %d > --leaves %d", *circuits, *leaves)
	}
	if *dir == "" {
		d, err := os.MkdirTemp("", "e3-bench-controller-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		*dir = d
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		url     string                           // an etcd member's client URL, for its status
		connect func() (*clientv3.Client, error) // a controller's client
		where   = "embedded etcd"
		cluster *etcdCluster
	)
	if *members > 0 {
		var err error
		if cluster, err = startCluster(ctx, *etcdBin, *dir, *members, *port); err != nil {
			return err
		}
		defer cluster.close()
		url, where = cluster.endpoints[0], fmt.Sprintf("etcd cluster of %d members (mutual TLS, authentication)", *members)
		connect = func() (*clientv3.Client, error) { return cluster.client("e3-controller") }
	} else {
		url = fmt.Sprintf("http://127.0.0.1:%d", *port)
		e, err := store.StartEmbedded(store.EmbedOptions{DataDir: *dir, ClientURL: url, PeerURL: fmt.Sprintf("http://127.0.0.1:%d", *port+1),
			MaxRequest: 1 << 30, Quota: 8 << 30})
		if err != nil {
			return err
		}
		defer e.Close()
		connect = func() (*clientv3.Client, error) { return store.Connect(url) }
	}
	cli, err := connect()
	if err != nil {
		return err
	}
	defer cli.Close()
	admin := cli // reads all of etcd, compacts, defragments
	if cluster != nil {
		if admin, err = cluster.client("root"); err != nil {
			return err
		}
		defer admin.Close()
	}
	cctx, stop := context.WithCancel(ctx)
	defer stop()
	ran := make(chan struct{})
	c := controller.New(controller.Options{Etcd: cli, IgnoreStatus: true, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	go func() { c.Run(cctx); close(ran) }()
	if err := c.WaitLeader(ctx); err != nil {
		return err
	}
	specs := workload(*services, *circuits, *leaves)
	var topo *topology.Topology
	shape, reading := fmt.Sprintf("%d x %d", *spines, *leaves), "spines x leaves"
	if *pods == 0 {
		topo = fabric(*spines, *leaves, customerPorts(specs))
	} else {
		if *leaves%*pods != 0 || *supers < 1 {
			return fmt.Errorf("--pods %d: want --leaves a multiple of it and --supers > 0", *pods)
		}
		topo = clos(*pods, *spines, *supers, *leaves, customerPorts(specs))
		shape = fmt.Sprintf("%d pods x (%d x %d) + %d", *pods, *spines, *leaves / *pods, *supers)
		reading = "pods x (spines x leaves) + super spines"
	}
	if err := c.ImportTopology(ctx, topo, nil); err != nil {
		return err
	}
	fmt.Printf("fabric: %s (%s); %d E-LAN services x %d circuits, %d per transaction; %s; %s\n",
		shape, reading, *services, *circuits, *batch, where, memNote)
	if *memprof != "" {
		runtime.MemProfileRate = 64 << 10
	}
	stopProfile, err := cpuProfile(*profile)
	if err != nil {
		return err
	}
	start, createCPU := time.Now(), startCPU(cluster)
	var slowest time.Duration
	for i := 0; i < len(specs); i += *batch {
		j := min(i+*batch, len(specs))
		t0 := time.Now()
		if err := c.CreateServices(ctx, specs[i:j]); err != nil {
			return fmt.Errorf("services %d..%d: %w", i, j-1, err)
		}
		d := time.Since(t0)
		slowest = max(slowest, d)
		fmt.Printf("  %6d services  batch %8.2fs  total %8.2fs\n", j, d.Seconds(), time.Since(start).Seconds())
	}
	total := time.Since(start)
	stopProfile()
	if *memprof != "" {
		if err := writeProfile("allocs", *memprof); err != nil {
			return err
		}
	}
	st, err := admin.Status(ctx, url)
	if err != nil {
		return err
	}
	fmt.Printf("total: %.1fs (%.2f ms/service), slowest transaction %.2fs\n", total.Seconds(), float64(total.Milliseconds())/float64(len(specs)), slowest.Seconds())
	fmt.Printf("creation %s\n", createCPU.String(len(specs)))
	fmt.Printf("etcd db size: %.1f MiB (in use %.1f MiB), revision %d\n", float64(st.DbSize)/(1<<20), float64(st.DbSizeInUse)/(1<<20), st.Header.Revision)
	if *snapshot {
		saved, err := c.SaveSnapshot(ctx)
		if err != nil {
			return err
		}
		doc, err := json.Marshal(saved)
		if err != nil {
			return err
		}
		fmt.Printf("fabric snapshot (PUT /v1/snapshot): %.1f MiB, %.0f bytes/service\n", float64(len(doc))/(1<<20), float64(len(doc))/float64(len(specs)))
	}
	snap, err := c.Snapshot(ctx)
	if err != nil {
		return err
	}
	use := snap.LabelUse()
	var leafUse, spineUse []int
	for _, n := range topo.Nodes {
		if n.Role == "spine" {
			spineUse = append(spineUse, use[n.Name])
		} else {
			leafUse = append(leafUse, use[n.Name])
		}
	}
	fmt.Printf("labels per leaf:  %s\n", stats(leafUse))
	fmt.Printf("labels per spine: %s\n", stats(spineUse))
	biggest, biggestKey, desiredKeys, desiredBytes, err := scanValues(ctx, admin, topo)
	if err != nil {
		return err
	}
	fmt.Printf("largest etcd value: %s, %.1f KiB\n", biggestKey, float64(biggest)/1024)
	fmt.Printf("desired keys: %d, %.1f MiB of values\n", desiredKeys, float64(desiredBytes)/(1<<20))
	var recBytes int
	if _, err := store.ListJSON(ctx, cli, store.ServicePrefix, func(_ string, v []byte) error { recBytes += len(v); return nil }); err != nil {
		return err
	}
	fmt.Printf("service records: %.1f MiB (%.1f KiB per service)\n", float64(recBytes)/(1<<20), float64(recBytes)/1024/float64(len(specs)))
	stopChprof, err := cpuProfile(*chprof)
	if err != nil {
		return err
	}
	change, written, err := oneChange(ctx, c, admin, *circuits, *leaves, *changes)
	if err != nil {
		return err
	}
	stopChprof()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	n := float64(len(specs))
	held, returned := rssOf("self"), int64(0)
	if cluster == nil {
		fmt.Printf("resident memory: %.0f MiB (controller and embedded etcd in one process), Go heap in use %.0f MiB\n",
			float64(rssOf("self"))/(1<<20), float64(ms.HeapInuse)/(1<<20))
	} else {
		debug.FreeOSMemory() // what the Go runtime keeps from the batches' peaks goes back
		returned = rssOf("self")
		fmt.Printf("controller resident memory: %.0f MiB (%.1f KiB per service), %.0f MiB once freed memory is returned (%.1f KiB per service); Go heap in use %.0f MiB (%.1f KiB per service)\n",
			float64(held)/(1<<20), float64(held)/1024/n, float64(rssOf("self"))/(1<<20), float64(rssOf("self"))/1024/n,
			float64(ms.HeapInuse)/(1<<20), float64(ms.HeapInuse)/1024/n)
		var mib []string
		for _, r := range cluster.rss() {
			mib = append(mib, fmt.Sprintf("%.0f", float64(r)/(1<<20)))
		}
		fmt.Printf("etcd members' resident memory: %s MiB\n", strings.Join(mib, ", "))
	}
	if *heapprof != "" {
		if err := writeProfile("heap", *heapprof); err != nil {
			return err
		}
	}
	readyCell := "-"
	if *restart {
		// The leader stops (its session is revoked) and a new controller
		// loads the fabric: ready once it leads with every service rebuilt.
		if snap, err = c.Snapshot(ctx); err != nil {
			return err
		}
		use, gen := snap.LabelUse(), snap.Generation
		stop()
		<-ran
		// The new controller loads as a fresh process would: nothing of
		// the old one's left for its collector to mark.
		snap = nil
		runtime.GC()
		debug.FreeOSMemory()
		cli2, err := connect()
		if err != nil {
			return err
		}
		defer cli2.Close()
		// Its "leading" line says where the load's time went.
		c2 := controller.New(controller.Options{Etcd: cli2, IgnoreStatus: true, Log: slog.New(slog.NewTextHandler(os.Stdout, nil))})
		stopLoadprof, err := cpuProfile(*loadprof)
		if err != nil {
			return err
		}
		t0, loadCPU := time.Now(), startCPU(cluster)
		go c2.Run(ctx)
		if err := c2.WaitLeader(ctx); err != nil {
			return err
		}
		ready, loadUse := time.Since(t0), loadCPU.String(len(specs))
		stopLoadprof()
		after, err := c2.Snapshot(ctx)
		if err != nil {
			return err
		}
		relabelled := "relabelled nothing"
		if after.Generation != gen || !maps.Equal(after.LabelUse(), use) {
			relabelled = fmt.Sprintf("WROTE: generation %d -> %d", gen, after.Generation)
		}
		fmt.Printf("a new controller loaded the fabric and was ready in %.1fs; %s\n", ready.Seconds(), relabelled)
		fmt.Printf("load %s\n", loadUse)
		readyCell = fmt.Sprintf("%.1f s, %s", ready.Seconds(), relabelled)
	}
	// Old revisions of the desired configs are history: compact and
	// defragment (root's business) to see what the live data takes.
	eps := []string{url}
	if cluster != nil {
		eps = cluster.endpoints
	}
	if _, err := admin.Compact(ctx, st.Header.Revision, clientv3.WithCompactPhysical()); err != nil {
		return err
	}
	for _, m := range eps {
		if _, err := admin.Defragment(ctx, m); err != nil {
			return err
		}
	}
	if st, err = admin.Status(ctx, url); err != nil {
		return err
	}
	fmt.Printf("etcd db size after compaction and defragmentation: %.1f MiB\n", float64(st.DbSize)/(1<<20))
	// One row of bench/controller/README.md's table (scale.sh).
	rssCell := fmt.Sprintf("%.0f KiB, with the embedded etcd", float64(held)/1024/n)
	if cluster != nil {
		rssCell = fmt.Sprintf("%.0f / %.0f KiB", float64(held)/1024/n, float64(returned)/1024/n)
	}
	fmt.Printf("row: | %d | %s | %.1f s (%.2f ms/service) | %.1f ms, %.1f KiB | %s | %.0f KiB | %s | %.0f MiB | %.1f KiB |\n",
		len(specs), shape, total.Seconds(), float64(total.Microseconds())/1000/n,
		float64(change.Microseconds())/1000, float64(written)/1024, rssCell, float64(ms.HeapInuse)/1024/n,
		readyCell, float64(st.DbSize)/(1<<20), float64(biggest)/1024)
	return nil
}

// oneChange times n single-service changes on the loaded fabric, as the
// API makes them (one service created, then deleted, each in its own
// transaction), and the bytes each wrote to etcd, from etcd's history.
// It returns the median commit time and bytes written.
func oneChange(ctx context.Context, c *controller.Controller, cli *clientv3.Client, circuits, leaves, n int) (time.Duration, int, error) {
	if n == 0 {
		return 0, 0, nil
	}
	var times []time.Duration
	var written []int
	var used time.Duration // the controller's CPU in the changes
	for i := 0; i < n; i++ {
		spec := workload(1, circuits, leaves)[0]
		spec.Name = fmt.Sprintf("change%02d", i)
		for j := range spec.Circuits {
			spec.Circuits[j].Port, spec.Circuits[j].VLAN = changesPort, dpconfig.VLAN(1+i)
		}
		for _, op := range []func() error{
			func() error { return c.CreateService(ctx, spec) },
			func() error { return c.DeleteService(ctx, spec.Name) },
		} {
			r, err := cli.Get(ctx, store.GenerationKey)
			if err != nil {
				return 0, 0, err
			}
			t0, c0 := time.Now(), selfCPU()
			if err := op(); err != nil {
				return 0, 0, fmt.Errorf("one change: %w", err)
			}
			times = append(times, time.Since(t0))
			used += selfCPU() - c0
			b, err := bytesSince(ctx, cli, r.Header.Revision)
			if err != nil {
				return 0, 0, err
			}
			written = append(written, b)
		}
	}
	slices.Sort(times)
	slices.Sort(written)
	fmt.Printf("one service created or deleted (%d changes): commit min %.1f ms, median %.1f ms, max %.1f ms; etcd written min %.1f KiB, median %.1f KiB, max %.1f KiB\n",
		len(times), ms(times[0]), ms(times[len(times)/2]), ms(times[len(times)-1]),
		float64(written[0])/1024, float64(written[len(written)/2])/1024, float64(written[len(written)-1])/1024)
	fmt.Printf("one change's CPU in the controller (this process: the embedded etcd's too, if any): %.2f ms on average\n",
		ms(used)/float64(len(times)))
	return times[len(times)/2], written[len(written)/2], nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// bytesSince sums the keys and values that revisions after rev wrote.
func bytesSince(ctx context.Context, cli *clientv3.Client, rev int64) (int, error) {
	cur, err := cli.Get(ctx, store.GenerationKey)
	if err != nil {
		return 0, err
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	total := 0
	wch := cli.Watch(wctx, "/", clientv3.WithPrefix(), clientv3.WithRev(rev+1))
	for seen := rev; seen < cur.Header.Revision; {
		wr := <-wch
		if err := wr.Err(); err != nil {
			return 0, err
		}
		for _, ev := range wr.Events {
			total += len(ev.Kv.Key) + len(ev.Kv.Value)
			seen = max(seen, ev.Kv.ModRevision)
		}
	}
	return total, nil
}

// scanValues finds the largest value in the store, and counts the desired
// keys and their bytes. It reads the desired keys node by node and the
// rest around them: etcd counts the whole rest of a range for every page.
func scanValues(ctx context.Context, cli *clientv3.Client, topo *topology.Topology) (size int, key string, desired, desiredBytes int, err error) {
	see := func(k string, v []byte) {
		if len(v) > size {
			size, key = len(v), k
		}
		if strings.HasPrefix(k, nodestate.DesiredPrefix) {
			desired, desiredBytes = desired+1, desiredBytes+len(v)
		}
	}
	ranges := [][2]string{{"\x00", nodestate.DesiredPrefix}, {clientv3.GetPrefixRangeEnd(nodestate.DesiredPrefix), "\x00"}}
	for _, n := range topo.Nodes {
		p := nodestate.DesiredNode(n.Name)
		ranges = append(ranges, [2]string{p, clientv3.GetPrefixRangeEnd(p)})
	}
	for _, r := range ranges {
		for from := r[0]; ; {
			resp, err := cli.Get(ctx, from, clientv3.WithRange(r[1]), clientv3.WithLimit(2000))
			if err != nil {
				return 0, "", 0, 0, err
			}
			for _, kv := range resp.Kvs {
				see(string(kv.Key), kv.Value)
			}
			if !resp.More || len(resp.Kvs) == 0 {
				break
			}
			from = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
		}
	}
	return size, key, desired, desiredBytes, nil
}

// cpuProfile starts a CPU profile into path ("": none) and returns what
// stops it.
func cpuProfile(path string) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// selfCPU is the CPU time this process has used so far, to the
// microsecond (getrusage; /proc counts in ticks of 10 ms).
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuOf is the CPU time (user and system) process pid has used so far, in
// ticks (an etcd member's; this process's is selfCPU).
func cpuOf(pid string) time.Duration {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0
	}
	// The command name (field 2) may hold spaces: count from its ')'.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / userHZ
}

// userHZ is the unit of /proc's CPU times: USER_HZ, 100 on every Linux
// architecture that e3fabric builds for.
const userHZ = 100

// cpuMeter splits the CPU a phase took between this process (the
// controller) and the etcd members.
type cpuMeter struct {
	cluster       *etcdCluster
	self, members time.Duration
}

func (c *etcdCluster) cpu() time.Duration {
	var sum time.Duration
	if c != nil {
		for _, p := range c.procs {
			sum += cpuOf(strconv.Itoa(p.Process.Pid))
		}
	}
	return sum
}

func startCPU(c *etcdCluster) cpuMeter {
	return cpuMeter{cluster: c, self: selfCPU(), members: c.cpu()}
}

// String says what the phase took since start, per service over n.
func (m cpuMeter) String(n int) string {
	self := selfCPU() - m.self
	if m.cluster == nil {
		return fmt.Sprintf("CPU %.1f s (%.2f ms/service; controller and embedded etcd in one process)",
			self.Seconds(), ms(self)/float64(n))
	}
	members := m.cluster.cpu() - m.members
	return fmt.Sprintf("CPU: controller %.1f s (%.2f ms/service), etcd members %.1f s (%.2f ms/service)",
		self.Seconds(), ms(self)/float64(n), members.Seconds(), ms(members)/float64(n))
}

// rssOf is process pid's resident set ("self": this one), in bytes.
func rssOf(pid string) int64 {
	b, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

func stats(xs []int) string {
	sort.Ints(xs)
	sum := 0
	for _, x := range xs {
		sum += x
	}
	return fmt.Sprintf("min %d  mean %d  max %d  (of 1048560)", xs[0], sum/len(xs), xs[len(xs)-1])
}

// changesPort is every leaf's customer port for the single changes timed on
// the full fabric, apart from the workload's.
const changesPort = "changes"

// fabric is a full bipartite leaf/spine fabric with custPorts customer ports
// per leaf (cust1..) and changesPort.
func fabric(spines, leaves, custPorts int) *topology.Topology {
	t := &topology.Topology{Name: "bench"}
	for s := 1; s <= spines; s++ {
		t.Nodes = append(t.Nodes, topology.Node{Name: fmt.Sprintf("spine%d", s), Role: "spine"})
	}
	for l := 1; l <= leaves; l++ {
		leaf := fmt.Sprintf("leaf%d", l)
		t.Nodes = append(t.Nodes, topology.Node{Name: leaf, Role: "leaf"})
		for k := 1; k <= custPorts; k++ {
			t.CustomerPorts = append(t.CustomerPorts, topology.CustomerPort{Node: leaf, Port: fmt.Sprintf("cust%d", k)})
		}
		t.CustomerPorts = append(t.CustomerPorts, topology.CustomerPort{Node: leaf, Port: changesPort})
		for s := 1; s <= spines; s++ {
			t.Links = append(t.Links, topology.Link{
				A: topology.Endpoint{Node: leaf, Port: fmt.Sprintf("fab%d", s)},
				B: topology.Endpoint{Node: fmt.Sprintf("spine%d", s), Port: fmt.Sprintf("fab%d", l)}})
		}
	}
	return t
}

// clos is a three-tier fabric: pods of leaves/pods leaves, each leaf linked
// to its pod's spines, each pod spine to every super spine.
func clos(pods, spines, supers, leaves, custPorts int) *topology.Topology {
	t := fabric(0, leaves, custPorts)
	per := leaves / pods
	for k := 1; k <= supers; k++ {
		t.Nodes = append(t.Nodes, topology.Node{Name: fmt.Sprintf("super%d", k), Role: "spine"})
	}
	for p := 1; p <= pods; p++ {
		for s := 1; s <= spines; s++ {
			spine := fmt.Sprintf("p%ds%d", p, s)
			t.Nodes = append(t.Nodes, topology.Node{Name: spine, Role: "spine"})
			for l := (p-1)*per + 1; l <= p*per; l++ {
				t.Links = append(t.Links, topology.Link{
					A: topology.Endpoint{Node: fmt.Sprintf("leaf%d", l), Port: fmt.Sprintf("fab%d", s)},
					B: topology.Endpoint{Node: spine, Port: fmt.Sprintf("down%d", l-(p-1)*per)}})
			}
			for k := 1; k <= supers; k++ {
				t.Links = append(t.Links, topology.Link{
					A: topology.Endpoint{Node: spine, Port: fmt.Sprintf("up%d", k)},
					B: topology.Endpoint{Node: fmt.Sprintf("super%d", k), Port: fmt.Sprintf("p%ds%d", p, s)}})
			}
		}
	}
	return t
}

// customerPorts is the number of customer ports the busiest leaf of specs
// uses (workload's cust1..), at least one.
func customerPorts(specs []model.ServiceSpec) int {
	used := map[string]int{}
	most := 1
	for _, s := range specs {
		for _, c := range s.Circuits {
			var k int
			if _, err := fmt.Sscanf(c.Port, "cust%d", &k); err == nil && k > used[c.Node] {
				used[c.Node] = k
				most = max(most, k)
			}
		}
	}
	return most
}

// workload spreads n services over random distinct leaves (fixed seed), each
// circuit on the next free (port, VLAN) of its leaf.
func workload(n, circuits, leaves int) []model.ServiceSpec {
	rng := rand.New(rand.NewSource(1))
	next := make([]int, leaves)
	specs := make([]model.ServiceSpec, n)
	for i := range specs {
		s := model.ServiceSpec{Name: fmt.Sprintf("elan%05d", i), Type: model.ELAN}
		for _, l := range rng.Perm(leaves)[:circuits] {
			k := next[l]
			next[l]++
			s.Circuits = append(s.Circuits, model.Circuit{Node: fmt.Sprintf("leaf%d", l+1),
				Port: fmt.Sprintf("cust%d", 1+k/4094), VLAN: dpconfig.VLAN(1 + k%4094)})
		}
		specs[i] = s
	}
	return specs
}

// writeAllocs writes the allocations sampled so far (pprof's allocs profile).
// writeProfile writes the runtime profile name ("allocs", "heap") to path.
func writeProfile(name, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup(name).WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
