package flagfile

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/e3fabric/e3fabric/control/internal/testutil"
)

func TestLoad(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		args       []string
		wantNode   string
		wantEvery  time.Duration
		wantErr    string
	}{
		{name: "file sets", file: "# agent\nnode = leaf1\nevery = 3s\n", wantNode: "leaf1", wantEvery: 3 * time.Second},
		{name: "command line wins", file: "node = leaf1\n", args: []string{"-node", "leaf2"}, wantNode: "leaf2", wantEvery: time.Second},
		{name: "quotes kept off", file: "node = \" a b \"\n", wantNode: " a b ", wantEvery: time.Second},
		{name: "unknown option", file: "nod = leaf1\n", wantErr: `:1: unknown option "nod"`},
		{name: "no equals", file: "\n\nnode leaf1\n", wantErr: ":3: want name = value"},
		{name: "bad value", file: "every = soon\n", wantErr: ":1: every"},
		{name: "twice", file: "node = a\nnode = b\n", wantErr: ":2: node already set on line 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.conf")
			if err := os.WriteFile(path, []byte(tc.file), 0o644); err != nil {
				t.Fatal(err)
			}
			fs := flag.NewFlagSet("x", flag.ContinueOnError)
			conf := fs.String("conf", "", "")
			node := fs.String("node", "", "")
			every := fs.Duration("every", time.Second, "")
			err := Parse(fs, append([]string{"-conf", path}, tc.args...), conf)
			if testutil.WantErr(t, err, tc.wantErr) {
				return
			}
			if *node != tc.wantNode || *every != tc.wantEvery {
				t.Errorf("node %q every %v, want %q %v", *node, *every, tc.wantNode, tc.wantEvery)
			}
		})
	}
	if err := Load(flag.NewFlagSet("x", flag.ContinueOnError), "/nonexistent/x.conf"); err == nil {
		t.Error("a missing file loaded")
	}
}
