package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/e3fabric/e3fabric/control/internal/testutil"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		server  string
		token   string
		json    bool
		circ    []string
		rest    []string
		wantErr string
	}{
		{name: "defaults", args: []string{"status"}, server: "https://127.0.0.1:8080", rest: []string{"status"}},
		{name: "env", args: []string{"node", "list"}, env: map[string]string{"E3_SERVER": "http://x:1", "E3_TOKEN": "t"},
			server: "http://x:1", token: "t", rest: []string{"node", "list"}},
		{name: "flags win and go anywhere", args: []string{"service", "--json", "list", "--server=http://y:2"},
			env: map[string]string{"E3_SERVER": "http://x:1", "E3_TOKEN": "u"}, server: "http://y:2", token: "u", json: true, rest: []string{"service", "list"}},
		{name: "no token on the command line", args: []string{"status", "--token", "secret"}, wantErr: "--token-file"},
		{name: "circuits", args: []string{"service", "create", "eline", "red", "--circuit", "leaf1:cust1:1000", "--circuit=leaf3:cust1"},
			server: "https://127.0.0.1:8080", circ: []string{"leaf1:cust1:1000", "leaf3:cust1"}, rest: []string{"service", "create", "eline", "red"}},
		{name: "missing value", args: []string{"status", "--server"}, wantErr: "needs a value"},
		{name: "unknown option", args: []string{"status", "--frobnicate"}, wantErr: "unknown option"},
		{name: "bad mac limit", args: []string{"status", "--mac-limit", "x"}, wantErr: "want a number"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parse(tc.args, env(tc.env))
			if testutil.WantErr(t, err, tc.wantErr) {
				return
			}
			if o.server != tc.server || o.token != tc.token || o.json != tc.json ||
				strings.Join(o.circuits, " ") != strings.Join(tc.circ, " ") || strings.Join(o.args, " ") != strings.Join(tc.rest, " ") {
				t.Fatalf("got %+v", o)
			}
		})
	}
}

// Errors found before any request: usage (exit 2) and bad circuits (exit 1).
func TestRunRefusesBadInput(t *testing.T) {
	tests := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{}, 2, "no command"},
		{[]string{"service", "create", "vpls", "x"}, 2, "eline|elan"},
		{[]string{"service", "create", "eline", "x", "--circuit", "leaf1"}, 1, "NODE:PORT:VLAN"},
		{[]string{"service", "create", "eline", "x", "--circuit", "leaf1:cust1:5000"}, 1, "out of range"},
		{[]string{"link", "set-cost", "1"}, 2, "set-cost LINK COST"},
		{[]string{"frobnicate"}, 2, "unknown command"},
	}
	for _, tc := range tests {
		var out, errb bytes.Buffer
		// An unroutable server: these must fail before any request.
		code := Run(context.Background(), append(tc.args, "--server", "http://127.0.0.1:1"), &out, &errb, env(nil))
		if code != tc.code || !strings.Contains(errb.String(), tc.msg) {
			t.Errorf("%v: exit %d, stderr %q; want %d ~%q", tc.args, code, errb.String(), tc.code, tc.msg)
		}
	}
}
