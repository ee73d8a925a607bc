// Package cli is e3ctl: a command line over the controller's API. Tables for
// humans by default, the API's JSON with --json.
package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/e3fabric/e3fabric/control/internal/apiclient"
	"github.com/e3fabric/e3fabric/control/internal/dpconfig"
	"github.com/e3fabric/e3fabric/control/internal/model"
	"github.com/e3fabric/e3fabric/control/internal/secrets"
)

// Usage is e3ctl's help.
const Usage = `usage: e3ctl [--server URL] [--token-file FILE] [--ca FILE | --fingerprint SHA256] [--json] COMMAND

  status                                   fabric summary
  node list                                nodes (forwarding, per OAM), agents, label use
  node credentials NODE                    new etcd credentials for NODE's agent (JSON for e3-agent --etcd-credentials)
  node drain NODE [--wait SECONDS]         maintenance: move every path, tree and site role off NODE
                                           (make-before-break); waits until only NODE's own customers use it
  node undrain NODE [--wait SECONDS]       bring NODE back into use; waits until the fabric is programmed
  apply -f FILE [--prune] [--dry-run]      make the fabric what FILE declares (topology and services), in one
                                           change; prints the plan; --prune deletes the services FILE lacks
  diff -f FILE [--prune]                   the plan: what apply would create, update, delete, field by field
  get [-o yaml|json]                       the fabric's intent as a file that apply takes back
  snapshot save FILE                       the fabric's whole intent and allocations, as one versioned document
  snapshot restore FILE                    make the fabric what FILE describes, with the same labels
  link list                                fabric links, cost, state, BFD per end
  events                                   failures, local and global repairs, and what they took
  link set-cost LINK COST                  LINK is an id or a name from link list
  topology import FILE                     import a topology file (idempotent)
  topology show
  service list
  service show NAME                        paths, labels per node, status
  service create eline|elan NAME --circuit NODE:PORT:VLAN ... [--mac-limit N] [--circuit-mac-limit N] [--bandwidth-mbps N] [--ecmp]
                 [--storm broadcast=N,multicast=N,unknown=N] [--tenant T] [--avoid-node N]... [--avoid-link L]...
                 [--disjoint-from SERVICE [--node-disjoint]] [--prefer-node N]
  service add-circuit NAME --circuit NODE:PORT:VLAN ...
  service remove-circuit NAME --circuit NODE:PORT:VLAN ...
  service move NAME --circuit NODE:PORT:VLAN --to NODE:PORT:VLAN [--window SECONDS]
                                           live migration of an E-Line's end: both circuits deliver for the
                                           window (30 s), then the new one replaces the old one
  service delete NAME
  service ping NAME [--count N]            MPLS echo in the pseudowire, from one end to each other end
  service trace NAME                       each hop of the pseudowire: node, label in and out, time
  tenant list                              tenants: quota, usage, tokens (their ids)
  tenant show NAME
  tenant set NAME [--port NODE:PORT[:VLANS]]... [--max-services N] [--max-circuits N] [--max-macs N]
                  [--max-bandwidth-mbps N]     create or replace a tenant (VLANS: 100-199,300,untagged)
  tenant delete NAME                       a tenant without services, and its tokens
  tenant token NAME [--read-only]          a new token of the tenant: shown once, keep it
  tenant revoke NAME ID                    revoke a token (ID from tenant show)

VLAN is 1..4094 or "untagged" (NODE:PORT alone is untagged). An E-LAN's
circuit on a multi-homed site is @SEGMENT:VLAN (a segment of the topology):
one circuit on each of the segment's ports. --ecmp spreads the service's
flows over its equal-cost paths (each flow on one), rather than keeping the
backup idle. --storm limits, in frames per second, what an E-LAN floods from
each of its circuits (a circuit's own limits: the API or the topology file).
A tenant's token (docs/tenants.md) reaches only its tenant's services.
--server defaults to $E3_SERVER or https://127.0.0.1:8080. The token (the
admin one, or the read-only one for reads) is read from --token-file
($E3_TOKEN_FILE, e.g. the controller's <data-dir>/token) or taken from
$E3_TOKEN; never from the command line, where other users would see it. The controller's TLS
certificate is checked against --ca ($E3_CA, e.g. the controller's
<data-dir>/api.crt) or pinned by its SHA-256 --fingerprint ($E3_FINGERPRINT);
with neither, against the system's CAs.
`

// opts are the parsed command line.
type opts struct {
	server, token string
	tokenFile     string
	ca, pin       string
	json          bool
	circuits      []string
	macLimit      int
	circMACLimit  int
	bandwidth     int
	ecmp          bool
	storm         *dpconfig.Storm
	count         int
	wait          int // seconds; -1: the default
	file          string
	output        string
	prune, dryRun bool
	tenant        string
	paths         model.PathConstraints
	ports         []string
	quota         model.TenantQuota
	readOnly      bool
	to            string
	window        int
	args          []string
}

func parse(args []string, getenv func(string) string) (*opts, error) {
	o := &opts{wait: -1, server: getenv("E3_SERVER"), token: getenv("E3_TOKEN"), tokenFile: getenv("E3_TOKEN_FILE"),
		ca: getenv("E3_CA"), pin: getenv("E3_FINGERPRINT")}
	if o.server == "" {
		o.server = "https://127.0.0.1:8080"
	}
	flags := map[string]*bool{"--json": &o.json, "--prune": &o.prune, "--dry-run": &o.dryRun, "--ecmp": &o.ecmp,
		"--read-only": &o.readOnly}
	strs := map[string]*string{"--server": &o.server, "--token-file": &o.tokenFile, "--ca": &o.ca,
		"--fingerprint": &o.pin, "-f": &o.file, "--file": &o.file, "-o": &o.output, "--output": &o.output,
		"--tenant": &o.tenant, "--to": &o.to, "--disjoint-from": &o.paths.DisjointFrom,
		"--prefer-node": &o.paths.PreferNode}
	lists := map[string]*[]string{"--avoid-node": &o.paths.AvoidNodes, "--avoid-link": &o.paths.AvoidLinks,
		"--port": &o.ports, "--circuit": &o.circuits}
	ints := map[string]*int{"--mac-limit": &o.macLimit, "--circuit-mac-limit": &o.circMACLimit,
		"--bandwidth-mbps": &o.bandwidth, "--count": &o.count, "--wait": &o.wait, "--window": &o.window,
		"--max-services": &o.quota.Services, "--max-circuits": &o.quota.Circuits, "--max-macs": &o.quota.MACs,
		"--max-bandwidth-mbps": &o.quota.BandwidthMbps}
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(a, "=")
		value := func() (string, error) {
			if hasVal {
				return val, nil
			}
			if i+1 >= len(args) {
				return "", fmt.Errorf("%s needs a value", name)
			}
			i++
			return args[i], nil
		}
		if p, ok := flags[name]; ok {
			*p = true
			continue
		}
		switch name {
		case "--token":
			return nil, usageError("--token would show the token to every user (ps): use --token-file FILE or $E3_TOKEN")
		case "--node-disjoint":
			o.paths.Disjoint = "node"
		case "-h", "--help":
			return nil, errHelp
		case "--storm":
			v, err := value()
			if err != nil {
				return nil, err
			}
			s, err := dpconfig.ParseStorm(v)
			if err != nil {
				return nil, err
			}
			o.storm = &s
		default:
			p, isStr := strs[name]
			l, isList := lists[name]
			n, isInt := ints[name]
			if !isStr && !isList && !isInt {
				if strings.HasPrefix(a, "--") {
					return nil, fmt.Errorf("unknown option %s", name)
				}
				o.args = append(o.args, a)
				continue
			}
			v, err := value()
			if err != nil {
				return nil, err
			}
			switch {
			case isStr:
				*p = v
			case isList:
				*l = append(*l, v)
			default:
				if *n, err = strconv.Atoi(v); err != nil || *n < 0 {
					return nil, fmt.Errorf("%s %q: want a number >= 0", name, v)
				}
			}
		}
	}
	return o, nil
}

var errHelp = fmt.Errorf("help")

// Run runs one e3ctl command and returns the exit code.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	o, err := parse(args, getenv)
	if err == errHelp {
		fmt.Fprint(stdout, Usage)
		return 0
	}
	if err == nil && len(o.args) == 0 {
		err = fmt.Errorf("no command")
	}
	var c *apiclient.Client
	if err == nil && o.tokenFile != "" {
		o.token, err = secrets.ReadToken(o.tokenFile)
	}
	if err == nil {
		c, err = apiclient.NewTLS(o.server, o.token, o.ca, o.pin)
	}
	if err == nil {
		err = run(ctx, o, c, stdout)
	}
	if err != nil {
		fmt.Fprintln(stderr, "e3ctl:", err)
		if _, usage := err.(usageError); usage || o == nil || len(o.args) == 0 {
			fmt.Fprint(stderr, Usage)
			return 2
		}
		return 1
	}
	return 0
}

type usageError string

func (e usageError) Error() string { return string(e) }

func want(args []string, n int, what string) error {
	if len(args) != n {
		return usageError("usage: e3ctl " + what)
	}
	return nil
}

func run(ctx context.Context, o *opts, c *apiclient.Client, w io.Writer) error {
	a := o.args
	cmd := strings.Join(a[:min(2, len(a))], " ")
	switch {
	case a[0] == "status":
		v, err := c.Status(ctx)
		return o.show(w, v, err, func(tw *tabwriter.Writer) {
			role := "follower"
			if v.Leader {
				role = "leader"
			}
			fmt.Fprintf(tw, "replica\t%s (leader %s)\n", role, v.LeaderURL)
			fmt.Fprintf(tw, "generation\t%d\n", v.Generation)
			fmt.Fprintf(tw, "nodes up\t%d/%d\n", v.NodesUp, v.Nodes)
			fmt.Fprintf(tw, "links up\t%d/%d\n", v.LinksUp, v.Links)
			for _, st := range []string{model.StateProgrammed, model.StatePending, model.StateDegraded, model.StateDown} {
				fmt.Fprintf(tw, "services %s\t%d\n", st, v.Services[st])
			}
		})
	case cmd == "node list":
		v, err := c.Nodes(ctx)
		return o.show(w, v, err, func(tw *tabwriter.Writer) {
			fmt.Fprintln(tw, "NODE\tROLE\tSTATE\tAGENT\tDESIRED\tAPPLIED\tLABELS\tPORTS DOWN\tERROR")
			for _, n := range v {
				var down []string
				for _, p := range n.Ports {
					if p.LinkUp != nil && !*p.LinkUp {
						down = append(down, p.Name)
					}
				}
				state := upDown(n.Up)
				if n.Drained {
					state += ",drained"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\n", n.Name, n.Role, state, upDown(n.AgentUp), n.DesiredGeneration,
					n.AppliedGeneration, n.LabelsUsed, dash(strings.Join(down, ",")), dash(n.Error))
			}
		})
	case len(a) >= 2 && a[0] == "node" && a[1] == "credentials":
		if err := want(a, 3, "node credentials NODE"); err != nil {
			return err
		}
		v, err := c.NodeCredentials(ctx, a[2])
		if err != nil {
			return err
		}
		// The agent's --etcd-credentials file, whatever the output format.
		return json.NewEncoder(w).Encode(v)
	case len(a) >= 2 && a[0] == "node" && (a[1] == "drain" || a[1] == "undrain"):
		if err := want(a, 3, "node "+a[1]+" NODE [--wait SECONDS]"); err != nil {
			return err
		}
		v, err := c.Drain(ctx, a[2], a[1] == "drain")
		if err != nil {
			return err
		}
		if o.wait != 0 {
			wait := 120 * time.Second
			if o.wait > 0 {
				wait = time.Duration(o.wait) * time.Second
			}
			if v, err = waitDrain(ctx, c, a[2], wait); err != nil {
				return err
			}
		}
		return o.print(w, v, func(tw *tabwriter.Writer) {
			state := map[bool]string{true: "drained", false: "in service"}[v.Drained]
			if len(v.Carrying) > 0 {
				state = "draining, still carrying " + strings.Join(v.Carrying, ",")
			}
			fmt.Fprintf(tw, "%s\t%s\n", v.Name, state)
		})
	case a[0] == "apply" || a[0] == "diff":
		if err := want(a, 1, a[0]+" -f FILE [--prune]"); err != nil {
			return err
		}
		return o.apply(ctx, c, w, a[0] == "diff" || o.dryRun)
	case a[0] == "get":
		if err := want(a, 1, "get [-o yaml|json]"); err != nil {
			return err
		}
		return o.get(ctx, c, w)
	case cmd == "snapshot save":
		if err := want(a, 3, "snapshot save FILE"); err != nil {
			return err
		}
		v, err := c.SaveSnapshot(ctx)
		if err != nil {
			return err
		}
		if err := os.WriteFile(a[2], append(v, '\n'), 0o600); err != nil {
			return err
		}
		fmt.Fprintf(w, "saved %s\n", a[2])
		return nil
	case cmd == "snapshot restore":
		if err := want(a, 3, "snapshot restore FILE"); err != nil {
			return err
		}
		b, err := os.ReadFile(a[2])
		if err != nil {
			return err
		}
		if !json.Valid(b) {
			return fmt.Errorf("%s: not JSON", a[2])
		}
		v, err := c.RestoreSnapshot(ctx, b)
		return o.show(w, v, err, func(tw *tabwriter.Writer) {
			fmt.Fprintf(tw, "restored\t%s\ngeneration\t%d\n", a[2], v.Generation)
		})
	case cmd == "link list":
		v, err := c.Links(ctx)
		if err != nil {
			return err
		}
		return o.printLinks(w, v)
	case a[0] == "events":
		v, err := c.Events(ctx)
		return o.show(w, v, err, func(tw *tabwriter.Writer) {
			fmt.Fprintln(tw, "TIME\tEVENT\tOBJECT\tTOOK\tDETAIL")
			for _, e := range v {
				took := "-"
				if e.TookMS > 0 {
					took = fmt.Sprintf("%d ms", e.TookMS)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", e.Time.Format("15:04:05.000"), e.Kind, dash(e.Object), took, dash(e.Detail))
			}
		})
	case cmd == "link set-cost":
		if err := want(a, 4, "link set-cost LINK COST"); err != nil {
			return err
		}
		cost, err := strconv.Atoi(a[3])
		if err != nil {
			return fmt.Errorf("cost %q: want a number", a[3])
		}
		v, err := c.SetLinkCost(ctx, a[2], cost)
		if err != nil {
			return err
		}
		return o.printLinks(w, v)
	case cmd == "topology import":
		if err := want(a, 3, "topology import FILE"); err != nil {
			return err
		}
		data, err := os.ReadFile(a[2])
		if err != nil {
			return err
		}
		v, err := c.ImportTopology(ctx, data)
		return o.show(w, v, err, func(tw *tabwriter.Writer) {
			fmt.Fprintf(tw, "imported %s: %d nodes, %d links, %d customer ports\n", a[2], len(v.Nodes), len(v.Links), len(v.CustomerPorts))
		})
	case cmd == "topology show":
		v, err := c.Topology(ctx)
		if err != nil {
			return err
		}
		o.json = true // the topology is best read as JSON
		return o.print(w, v, nil)
	case cmd == "service list":
		v, err := c.Services(ctx)
		return o.show(w, v, err, func(tw *tabwriter.Writer) {
			fmt.Fprintln(tw, "NAME\tTYPE\tID\tCIRCUITS\tSTATUS\tPROTECTION\tREASON")
			for _, s := range v {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\n", s.Name, s.Type, s.ID, circuits(s.Circuits), s.Status.State,
					dash(s.Protection), dash(s.Status.Reason))
			}
		})
	case cmd == "service show":
		if err := want(a, 3, "service show NAME"); err != nil {
			return err
		}
		v, err := c.Service(ctx, a[2])
		return o.show(w, v, err, func(tw *tabwriter.Writer) { showService(tw, &v) })
	case cmd == "service create":
		if len(a) != 4 || (a[2] != model.ELine && a[2] != model.ELAN) {
			return usageError("usage: e3ctl service create eline|elan NAME --circuit NODE:PORT:VLAN ...")
		}
		cs, err := parseCircuits(o.circuits)
		if err != nil {
			return err
		}
		spec := model.ServiceSpec{Name: a[3], Type: a[2], Circuits: cs, MACLimit: o.macLimit,
			CircuitMACLimit: o.circMACLimit, BandwidthMbps: o.bandwidth, ECMP: o.ecmp, Storm: o.storm, Tenant: o.tenant}
		if !reflect.ValueOf(o.paths).IsZero() {
			spec.Paths = &o.paths
		}
		v, err := c.CreateService(ctx, spec)
		return o.show(w, v, err, func(tw *tabwriter.Writer) {
			fmt.Fprintf(tw, "created %s %s (id %d): %s\n", v.Type, v.Name, v.ID, v.Status.State)
		})
	case cmd == "service move":
		if err := want(a, 3, "service move NAME --circuit NODE:PORT:VLAN --to NODE:PORT:VLAN [--window SECONDS]"); err != nil {
			return err
		}
		cs, err := parseCircuits(append(o.circuits, o.to))
		if err != nil || len(cs) != 2 || o.to == "" {
			return usageError("usage: e3ctl service move NAME --circuit NODE:PORT:VLAN --to NODE:PORT:VLAN [--window SECONDS]")
		}
		v, err := c.MoveCircuit(ctx, a[2], model.MoveRequest{From: cs[0], To: cs[1], WindowS: o.window})
		return o.show(w, v, err, func(tw *tabwriter.Writer) {
			fmt.Fprintf(tw, "moving %s to %s: both deliver until %s\n", v.Move.From, v.Move.To, v.Move.Until.Local().Format(time.TimeOnly))
		})
	case a[0] == "tenant":
		return runTenant(ctx, o, c, w, cmd, a)
	case cmd == "service add-circuit", cmd == "service remove-circuit":
		// Circuits may also be given as arguments after the name.
		if len(a) < 3 {
			return usageError("usage: e3ctl " + cmd + " NAME --circuit NODE:PORT:VLAN ...")
		}
		cs, err := parseCircuits(append(o.circuits, a[3:]...))
		if err != nil {
			return err
		}
		if len(cs) == 0 {
			return usageError("usage: e3ctl " + cmd + " NAME --circuit NODE:PORT:VLAN ...")
		}
		u := model.ServiceUpdate{AddCircuits: cs}
		if a[1] == "remove-circuit" {
			u = model.ServiceUpdate{RemoveCircuits: cs}
		}
		v, err := c.UpdateService(ctx, a[2], u)
		return o.show(w, v, err, func(tw *tabwriter.Writer) {
			fmt.Fprintf(tw, "updated %s: %s: %s\n", v.Name, circuits(v.Circuits), v.Status.State)
		})
	case cmd == "service ping":
		if err := want(a, 3, "service ping NAME [--count N]"); err != nil {
			return err
		}
		count := o.count
		if count == 0 {
			count = 3
		}
		v, err := c.Ping(ctx, a[2], count)
		return o.show(w, v, err, func(tw *tabwriter.Writer) { showPing(tw, &v) })
	case cmd == "service trace":
		if err := want(a, 3, "service trace NAME"); err != nil {
			return err
		}
		v, err := c.Trace(ctx, a[2])
		return o.show(w, v, err, func(tw *tabwriter.Writer) { showTrace(tw, v) })
	case cmd == "service delete":
		if err := want(a, 3, "service delete NAME"); err != nil {
			return err
		}
		if err := c.DeleteService(ctx, a[2]); err != nil {
			return err
		}
		return o.print(w, map[string]string{"deleted": a[2]}, func(tw *tabwriter.Writer) { fmt.Fprintf(tw, "deleted %s\n", a[2]) })
	}
	return usageError("unknown command: " + strings.Join(a, " "))
}

func parseCircuits(ss []string) ([]model.Circuit, error) {
	var out []model.Circuit
	for _, s := range ss {
		ci, err := model.ParseCircuit(s)
		if err != nil {
			return nil, err
		}
		out = append(out, ci)
	}
	return out, nil
}

// show prints v as print does, or returns err: what the call that
// fetched v gave with it.
func (o *opts) show(w io.Writer, v any, err error, table func(*tabwriter.Writer)) error {
	if err != nil {
		return err
	}
	return o.print(w, v, table)
}

// print writes v as JSON (--json) or through table.
func (o *opts) print(w io.Writer, v any, table func(*tabwriter.Writer)) error {
	if o.json || table == nil {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	table(tw)
	return tw.Flush()
}

func (o *opts) printLinks(w io.Writer, v []model.LinkView) error {
	return o.print(w, v, func(tw *tabwriter.Writer) {
		fmt.Fprintln(tw, "ID\tA\tB\tCOST\tCAPACITY\tRESERVED\tLOAD\tSTATE\tBFD A\tBFD B")
		for _, l := range v {
			load := "-"
			if l.LoadMbps != nil {
				load = fmt.Sprintf("%.1fM", *l.LoadMbps)
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%dM\t%dM\t%s\t%s\t%s\t%s\n", l.ID, l.A, l.B, l.Cost, l.CapacityMbps,
				l.ReservedMbps, load, upDown(l.Up),
				dash(l.BFD[strings.SplitN(l.A, ":", 2)[0]]), dash(l.BFD[strings.SplitN(l.B, ":", 2)[0]]))
		}
	})
}

func msText(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.3f ms", *v)
}

func showPing(tw *tabwriter.Writer, v *model.PingResult) {
	fmt.Fprintf(tw, "ping %s from %s: %d sent, %d received (handle %#08x)\n", v.Service, v.From, v.Sent, v.Received, v.Handle)
	fmt.Fprintln(tw, "TO\tSEQ\tRTT")
	for _, r := range v.Replies {
		rtt := "no reply"
		if r.RTTMS != nil {
			rtt = msText(r.RTTMS)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\n", r.To, r.Seq, rtt)
	}
}

func showTrace(tw *tabwriter.Writer, v []model.TraceResult) {
	for _, t := range v {
		fmt.Fprintf(tw, "trace %s from %s to %s (round trip %s)\n", t.Service, t.From, t.To, msText(t.RTTMS))
		fmt.Fprintln(tw, "TTL\tNODE\tLABEL IN\tLABEL OUT\tTIME")
		for _, h := range t.Hops {
			if h.Node == "" {
				fmt.Fprintf(tw, "%d\t*\t\t\tno answer\n", h.TTL)
				continue
			}
			out := "-"
			if h.Kind == "transit" {
				out = fmt.Sprint(h.LabelOut)
			} else {
				out = "(egress)"
			}
			fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\n", h.TTL, h.Node, h.LabelIn, out, msText(h.TimeMS))
		}
	}
}

func showService(tw *tabwriter.Writer, v *model.ServiceView) {
	fmt.Fprintf(tw, "name\t%s\ntype\t%s\nid\t%d\n", v.Name, v.Type, v.ID)
	fmt.Fprintf(tw, "status\t%s\t%s\n", v.Status.State, v.Status.Reason)
	fmt.Fprintf(tw, "protection\t%s\n", dash(v.Protection))
	fmt.Fprintf(tw, "ecmp\t%s\n", ecmpState(v))
	if v.Tenant != "" {
		fmt.Fprintf(tw, "tenant\t%s\n", v.Tenant)
	}
	if m := v.Move; m != nil {
		fmt.Fprintf(tw, "moving\t%s to %s, both delivering until %s\n", m.From, m.To, m.Until.Local().Format(time.TimeOnly))
	}
	if v.Paths != nil {
		fmt.Fprintf(tw, "path constraints\t%s\n", v.Paths)
	}
	if v.BandwidthMbps > 0 {
		fmt.Fprintf(tw, "bandwidth\t%d Mbps reserved on every link of its paths\n", v.BandwidthMbps)
	}
	if v.MACLimit > 0 || v.CircuitMACLimit > 0 {
		fmt.Fprintf(tw, "mac limits\tservice %s, per circuit %s\n", limit(v.MACLimit), limit(v.CircuitMACLimit))
	}
	if v.Storm != nil {
		fmt.Fprintf(tw, "storm control\t%s (per circuit, frames/s)\n", v.Storm)
	}
	for _, c := range v.Circuits {
		if c.Storm != nil {
			fmt.Fprintf(tw, "storm control\t%s: %s\n", c, c.Storm)
		}
	}
	fmt.Fprintf(tw, "generation\t%d\n", v.Generation)
	for _, c := range v.Checks {
		var ends []string
		for _, n := range []string{c.Path[0], c.Path[len(c.Path)-1]} {
			ends = append(ends, n+" "+dash(c.State[n]))
		}
		fmt.Fprintf(tw, "path check\t%s\t%s\n", strings.Join(c.Path, " -> "), strings.Join(ends, ", "))
	}
	for _, ci := range v.Circuits {
		df := ""
		if ci.Segment != "" && v.DF[ci.Segment] == ci.Node {
			df = "\tdesignated forwarder"
		}
		fmt.Fprintf(tw, "circuit\t%s%s\n", ci, df)
	}
	if r := v.Route; r != nil {
		src := ""
		if len(v.Circuits) > 0 {
			src = v.Circuits[0].Node
		}
		for _, p := range []struct {
			name string
			p    model.Path
		}{{"primary", r.Primary}, {"backup", r.Backup}, {"fallback", r.Fallback}} {
			if len(p.p) > 0 {
				mark := ""
				switch {
				case r.ECMP && r.Active != "fallback" && p.name != "fallback":
					mark = "  (ecmp: carries flows)"
				case r.Active == p.name:
					mark = "  (active)"
				}
				fmt.Fprintf(tw, "%s path\t%s%s\n", p.name, strings.Join(p.p.Nodes(src), " -> "), mark)
			}
		}
		for _, u := range r.Unicast {
			backup := ""
			switch {
			case u.ECMP:
				backup = "  (ecmp with " + strings.Join(u.Backup.Nodes(u.From), " -> ") + ")"
			case len(u.Backup) > 0:
				backup = "  (backup " + strings.Join(u.Backup.Nodes(u.From), " -> ") + ")"
			}
			fmt.Fprintf(tw, "unicast\t%s%s\n", strings.Join(u.Path.Nodes(u.From), " -> "), backup)
		}
		for _, h := range r.Tree {
			fmt.Fprintf(tw, "tree edge\t%s:%s - %s:%s\n", h.From, h.FromPort, h.To, h.ToPort)
		}
		for _, seg := range slices.Sorted(maps.Keys(r.Sites)) {
			sr := r.Sites[seg]
			how := fmt.Sprintf("source %d", sr.Source)
			if v.Type == model.ELine {
				how = "active-active (the site has a LAG)"
				if sr.Floods {
					how = "active-standby (the site floods): the designated forwarder's leaf forwards"
				}
			}
			fmt.Fprintf(tw, "site\t%s: %s, reached through %s\n", seg, how, dash(strings.Join(sr.Leaves, ", ")))
		}
		if len(r.Sources) > 0 {
			var ss []string
			for n, id := range r.Sources {
				ss = append(ss, fmt.Sprintf("%s=%d", n, id))
			}
			sort.Strings(ss)
			fmt.Fprintf(tw, "source ids\t%s\n", strings.Join(ss, " "))
		}
		if len(r.Unreachable) > 0 {
			fmt.Fprintf(tw, "unreachable\t%s\n", strings.Join(r.Unreachable, ", "))
		}
	}
	fmt.Fprintln(tw, "\nNODE\tKIND\tVALUE\tROLE")
	for _, al := range v.Allocs {
		if al.Node == "" {
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", al.Node, al.Kind, al.Value, al.Role)
	}
}

func circuits(cs []model.Circuit) string {
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = c.String()
	}
	return strings.Join(s, " ")
}

func upDown(up bool) string {
	if up {
		return "up"
	}
	return "down"
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// limit shows a MAC limit, 0 meaning the default.
func limit(n int) string {
	if n == 0 {
		return "default"
	}
	return strconv.Itoa(n)
}

// ecmpState says whether the service spreads its flows, and over what.
func ecmpState(v *model.ServiceView) string {
	if !v.ECMP {
		return "off"
	}
	r := v.Route
	if r != nil && r.ECMP {
		return "on: each flow takes the primary or the backup path"
	}
	if r != nil {
		for _, u := range r.Unicast {
			if u.ECMP {
				return "on: each flow to a member takes one of its equal-cost paths"
			}
		}
	}
	return "asked for, but no two equal-cost paths are up"
}

// waitDrain polls the nodes until node carries nothing but its own
// customers and every agent applied the fabric's generation, or wait ends
// (then the node as it stands, and an error saying what is left).
func waitDrain(ctx context.Context, c *apiclient.Client, node string, wait time.Duration) (model.NodeView, error) {
	deadline := time.Now().Add(wait)
	for {
		nodes, err := c.Nodes(ctx)
		if err != nil {
			return model.NodeView{}, err
		}
		var v model.NodeView
		settled := true
		for _, n := range nodes {
			if n.Name == node {
				v = n
			}
			if n.AgentUp && n.AppliedGeneration < n.DesiredGeneration {
				settled = false
			}
		}
		if settled && len(v.Carrying) == 0 {
			return v, nil
		}
		if time.Now().After(deadline) {
			return v, fmt.Errorf("node %s: after %s still carrying %v (fabric programmed: %v)", node, wait, v.Carrying, settled)
		}
		select {
		case <-ctx.Done():
			return v, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
