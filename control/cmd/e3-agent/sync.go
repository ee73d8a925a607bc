package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/e3fabric/e3fabric/control/internal/agent"
	"github.com/e3fabric/e3fabric/control/internal/dpconfig"
	"github.com/e3fabric/e3fabric/control/internal/dprpc"
)

const syncUsage = `usage: e3-agent sync [--dp-socket PATH | --node NAME] [--dry-run] FILE

Make one e3-vswitchd equal to FILE (config_dump's document; - reads stdin),
deletions included, with the planner the agent runs against etcd: dump,
diff, then add, replace and delete in make-before-break order. For a node
run without a controller. A document that does not validate changes
nothing; without "settings" the node's stay as they are. Prints
{"added", "replaced", "removed"}; --dry-run prints the calls it would make
instead of making them.
`

// runSync is `e3-agent sync`; it returns the exit status.
func runSync(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("e3-agent sync", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, syncUsage) }
	node := fs.String("node", "", "the node whose socket is /run/e3/NODE.sock")
	socket := fs.String("dp-socket", "", "e3-vswitchd control socket")
	timeout := fs.Duration("dp-timeout", dprpc.DefaultTimeout, "timeout of one datapath call")
	dry := fs.Bool("dry-run", false, "print the plan; change nothing")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 || (*socket == "") == (*node == "") {
		fs.Usage()
		return 2
	}
	if *socket == "" {
		*socket = "/run/e3/" + *node + ".sock"
	}
	fail := func(err error) int {
		fmt.Fprintln(stderr, "e3-agent sync:", err)
		return 1
	}
	want, keepSettings, err := readDocument(fs.Arg(0), stdin)
	if err != nil {
		return fail(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	dp := dprpc.New(*socket, *timeout)
	defer dp.Close()
	res, err := agent.Sync(ctx, dp, want, keepSettings, *dry)
	if *dry {
		for _, op := range res.Plan {
			fmt.Fprintln(stdout, op)
		}
	}
	if err != nil {
		return fail(err)
	}
	if !*dry {
		out, _ := json.Marshal(res)
		fmt.Fprintln(stdout, string(out))
	}
	return 0
}

// readDocument reads a config_dump document from path (- for r), and
// whether it leaves the settings out.
func readDocument(path string, r io.Reader) (dpconfig.Config, bool, error) {
	var b []byte
	var err error
	if path == "-" {
		b, err = io.ReadAll(r)
	} else {
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return dpconfig.Config{}, false, err
	}
	var doc struct {
		dpconfig.Config
		Settings json.RawMessage `json:"settings"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return dpconfig.Config{}, false, fmt.Errorf("%s: %w", path, err)
	}
	if doc.Version != dpconfig.Version {
		return dpconfig.Config{}, false, fmt.Errorf("%s: version %d, want %d", path, doc.Version, dpconfig.Version)
	}
	c := doc.Config
	if doc.Settings == nil {
		return c, true, nil
	}
	sd := json.NewDecoder(bytes.NewReader(doc.Settings))
	sd.DisallowUnknownFields()
	if err := sd.Decode(&c.Settings); err != nil {
		return dpconfig.Config{}, false, fmt.Errorf("%s: settings: %w", path, err)
	}
	return c, false, nil
}
