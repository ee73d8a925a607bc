package intent

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	in, _, err := Load("../../../examples/demo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Services) == 0 || len(in.Topology.CustomerPorts) == 0 {
		t.Fatal("demo.yaml: no services or customer ports")
	}
	out, err := Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Parse("get", out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	a, _ := json.Marshal(in)
	b, _ := json.Marshal(again)
	if string(a) != string(b) {
		t.Fatalf("round trip differs:\n%s\n%s", a, b)
	}
}

const good = `name: t
nodes:
  - {name: leaf1}
  - {name: leaf2}
links:
  - {a: {node: leaf1, port: fab1}, b: {node: leaf2, port: fab1}}
customer_ports:
  - {node: leaf1, port: cust1}
  - {node: leaf2, port: cust1}
services:
  - name: red
    type: eline
    circuits:
      - {node: leaf1, port: cust1, vlan: 10}
      - {node: leaf2, port: cust1, vlan: 10}
`

func TestErrorsHaveLines(t *testing.T) {
	if _, err := Parse("f", []byte(good)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, from, to string
		want           string
	}{
		{"unknown key", "  - {name: leaf2}", "  - {name: leaf2, rol: spine}", "f:4: "},
		{"bad node name", "  - {name: leaf2}", "  - {name: LEAF2}", "f:4: nodes[1].name: "},
		{"link to an unknown node", "b: {node: leaf2, port: fab1}", "b: {node: leaf3, port: fab1}", "f:6: links[0].b: "},
		{"bad vlan", "port: cust1, vlan: 10}\n      - {node: leaf2", "port: cust1, vlan: 5000}\n      - {node: leaf2",
			"f:14: services[0].circuits[0].vlan: "},
		{"bad type", "type: eline", "type: elin", "f:11: services[0]: "},
		{"not YAML", "name: t", "name: [t", "f:1: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := strings.Replace(good, tc.from, tc.to, 1)
			if bad == good {
				t.Fatal("replacement did not apply")
			}
			_, err := Parse("f", []byte(bad))
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("%v, want %q...", err, tc.want)
			}
		})
	}
}

func TestFromAPI(t *testing.T) {
	for field, want := range map[string]string{
		"services[0].circuits[1]": "f:15: services[0].circuits[1]: x",
		"services[0]":             "f:11: services[0]: x",
		"topology.links[0].a":     "f:5: links: x", // the sent topology was sorted: the list, not the index
		"topology":                "f: x",
	} {
		if got := FromAPI("f", []byte(good), field, "x").Error(); got != want {
			t.Errorf("%s: %q, want %q", field, got, want)
		}
	}
}
