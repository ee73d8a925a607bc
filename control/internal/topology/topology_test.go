package topology

import (
	"fmt"
	"strings"
	"testing"

	"github.com/e3fabric/e3fabric/control/internal/dpconfig"
	"github.com/e3fabric/e3fabric/control/internal/testutil"
)

const base = `
nodes: [{name: a}, {name: b}, {name: c}]
links:
  - {a: {node: b, port: p1}, b: {node: a, port: p1}}
  - {a: {node: b, port: p2}, b: {node: c, port: p1}, cost: 5}
hosts: [{name: h1, node: a, port: c1}, {name: h2, node: a, port: c1}]
`

func TestParse(t *testing.T) {
	topo, _, err := Parse([]byte(base))
	if err != nil {
		t.Fatal(err)
	}
	if l := topo.Links[0]; l.A.Node != "a" || l.ID != 1 || l.Cost != 1 || l.CapacityMbps != DefaultCapacityMbps {
		t.Fatalf("link 0 = %+v: want canonical a-b, id 1, defaults", l)
	}
	if len(topo.CustomerPorts) != 1 {
		t.Fatalf("two hosts on one port = one customer port, got %v", topo.CustomerPorts)
	}
	// Link ids survive a re-import with a new link listed first.
	next, _, err := Parse([]byte(strings.Replace(base, "links:\n", "links:\n  - {a: {node: a, port: p9}, b: {node: c, port: p9}}\n", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if err := next.Normalize(topo); err != nil {
		t.Fatal(err)
	}
	for _, l := range next.Links {
		want := map[string]int{"a:p1-b:p1": 1, "b:p2-c:p1": 2, "a:p9-c:p9": 3}[l.Name()]
		if l.ID != want {
			t.Fatalf("link %s id %d, want %d", l.Name(), l.ID, want)
		}
	}
	// A drained node stays drained across an import (the operator's state,
	// not the file's); a file cannot drain one.
	next.Nodes[1].Drained = true
	again, _, err := Parse([]byte(base + "\n# drained: true\n"))
	if err != nil {
		t.Fatal(err)
	}
	if again.Nodes[1].Drained || again.Normalize(next) != nil || !again.Nodes[1].Drained || again.Nodes[0].Drained {
		t.Fatalf("drained after import: %+v", again.Nodes)
	}
	if PortMAC("a", "p1") == PortMAC("b", "p1") || !strings.HasPrefix(PortMAC("a", "p1"), "02:e3:") {
		t.Fatal("port MACs")
	}
}

func TestParseRefuses(t *testing.T) {
	tests := []struct{ name, yaml, msg string }{
		{"bad node name", "nodes: [{name: Leaf_1}]", "node name"},
		{"duplicate node", "nodes: [{name: a}, {name: a}]", "twice"},
		{"unknown node", "nodes: [{name: a}]\nlinks: [{a: {node: a, port: p}, b: {node: z, port: p}}]", "unknown node"},
		{"self link", "nodes: [{name: a}]\nlinks: [{a: {node: a, port: p}, b: {node: a, port: q}}]", "itself"},
		{"port twice", "nodes: [{name: a}, {name: b}]\nlinks: [{a: {node: a, port: p}, b: {node: b, port: p}}]\nhosts: [{name: h, node: a, port: p}]", "used twice"},
		{"negative cost", "nodes: [{name: a}, {name: b}]\nlinks: [{a: {node: a, port: p}, b: {node: b, port: p}, cost: -1}]", "cost"},
		{"not yaml", "nodes: [", "topology"},
		{"pcap devargs", "nodes: [{name: a}]\nhosts: [{name: h, node: a, port: p, devargs: 'net_pcap_x,tx_pcap=/any/path'}]", "device net_pcap_x is not allowed"},
		{"unknown devargs key", "nodes: [{name: a}, {name: b}]\nlinks: [{a: {node: a, port: p, devargs: 'net_af_packet_p,iface=p,evil=1'}, b: {node: b, port: p}}]", "key evil"},
		{"memif path", "nodes: [{name: a}]\ncustomer_ports: [{node: a, port: p, devargs: 'net_memif0,socket=/run/e3/../etc/x,socket-abstract=no'}]", "key socket"},
		{"bfd key not hex", "nodes: [{name: a}]\nfabric: {bfd: {auth_key: nothex, auth_key_id: 1}}", "auth_key"},
		{"bfd key too long", "nodes: [{name: a}, {name: b}]\nlinks: [{a: {node: a, port: p}, b: {node: b, port: p}, bfd: {auth_key: '" + strings.Repeat("ab", 21) + "'}}]", "auth_key"},
		{"too many ports", portsYAML(dpconfig.MaxPorts + 1), fmt.Sprintf("node a has %d ports (%d fabric, 1 customer): a node's datapath takes at most %d", dpconfig.MaxPorts+1, dpconfig.MaxPorts, dpconfig.MaxPorts)},
		{"abstract memif", "nodes: [{name: a}]\ncustomer_ports: [{node: a, port: p, devargs: 'net_memif0,socket=/run/e3/a/m.sock'}]", "socket-abstract=no"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := Parse([]byte(tc.yaml)); err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("err %v, want ~%q", err, tc.msg)
			}
		})
	}
}

// A link's BFD key overrides the fabric's; a reader without the admin
// token sees neither.
func TestBFDKeys(t *testing.T) {
	topo, _, err := Parse([]byte("nodes: [{name: a}, {name: b}, {name: c}]\n" +
		"fabric: {bfd: {auth_key: 0a0b0c, auth_key_id: 1}}\n" +
		"links: [{a: {node: a, port: p}, b: {node: b, port: p}, bfd: {auth_key: E3E3E3E3, auth_key_id: 9}},\n" +
		"        {a: {node: a, port: q}, b: {node: c, port: p}}]"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]BFD{}
	for _, l := range topo.Links {
		got[l.B.Node] = topo.LinkBFD(l)
	}
	if got["b"].AuthKey != "E3E3E3E3" || got["b"].AuthKeyID != 9 || got["c"].AuthKey != "0a0b0c" || got["c"].AuthKeyID != 1 {
		t.Fatalf("link keys %+v", got)
	}
	r := topo.Redacted()
	if r.Fabric.BFD.AuthKey != RedactedKey || r.Links[0].BFD.AuthKey != RedactedKey || topo.Links[0].BFD.AuthKey != "E3E3E3E3" {
		t.Fatalf("redacted %+v %+v; the original must keep its keys", r.Fabric.BFD, r.Links[0].BFD)
	}
}

func TestSegments(t *testing.T) {
	const base = `
name: seg
nodes: [{name: leaf1, role: leaf}, {name: leaf2, role: leaf}, {name: spine1, role: spine}]
links:
  - {a: {node: leaf1, port: fab1}, b: {node: spine1, port: fab1}}
  - {a: {node: leaf2, port: fab1}, b: {node: spine1, port: fab2}}
customer_ports:
  - {node: leaf1, port: cust1}
  - {node: leaf1, port: cust2}
  - {node: leaf2, port: cust1}
`
	tests := []struct {
		name, segments, err string
	}{
		{"two leaves", `[{name: site1, ports: [{node: leaf2, port: cust1}, {node: leaf1, port: cust1}]}]`, ""},
		{"one port", `[{name: site1, ports: [{node: leaf1, port: cust1}]}]`, "a segment is on two leaves or more"},
		{"two ports of a leaf", `[{name: site1, ports: [{node: leaf1, port: cust1}, {node: leaf1, port: cust2}]}]`, "two ports on leaf1"},
		{"fabric port", `[{name: site1, ports: [{node: leaf1, port: fab1}, {node: leaf2, port: cust1}]}]`, "not a customer port"},
		{"unknown port", `[{name: site1, ports: [{node: leaf1, port: cust9}, {node: leaf2, port: cust1}]}]`, "not a customer port"},
		{"port on two segments", `[{name: a, ports: [{node: leaf1, port: cust1}, {node: leaf2, port: cust1}]},
			{name: b, ports: [{node: leaf1, port: cust1}, {node: leaf2, port: cust1}]}]`, "on segment a already"},
		{"bad name", `[{name: Site, ports: [{node: leaf1, port: cust1}, {node: leaf2, port: cust1}]}]`, "segment name"},
		{"listed twice", `[{name: a, ports: [{node: leaf1, port: cust1}, {node: leaf2, port: cust1}]},
			{name: a, ports: [{node: leaf1, port: cust2}]}]`, "listed twice"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			topo, _, err := Parse([]byte(base + "segments: " + tc.segments + "\n"))
			if testutil.WantErr(t, err, tc.err) {
				return
			}
			sg := topo.Segment("site1")
			if sg == nil || len(sg.Ports) != 2 || sg.Ports[0].Node != "leaf1" {
				t.Fatalf("segment %+v: want its two ports, leaf1 first", sg)
			}
		})
	}
}

// A file service's storm control, for the service and for one circuit.
func TestParseStorm(t *testing.T) {
	_, svcs, err := Parse([]byte(base + `
services:
  - name: green
    type: elan
    storm: {broadcast_pps: 100, unknown_pps: 10}
    circuits:
      - {node: a, port: c1, vlan: 5, storm: {multicast_pps: 7}}
      - {node: b, port: c1, vlan: 5}
`))
	if err != nil {
		t.Fatal(err)
	}
	s := svcs[0]
	if s.Storm == nil || s.Storm.BroadcastPPS != 100 || s.Storm.UnknownPPS != 10 || s.Storm.MulticastPPS != 0 {
		t.Fatalf("service storm %+v", s.Storm)
	}
	if c := s.Circuits[0].Storm; c == nil || c.MulticastPPS != 7 || s.Circuits[1].Storm != nil {
		t.Fatalf("circuit storms %+v, %+v", c, s.Circuits[1].Storm)
	}
}

// portsYAML is a topology whose node a has n ports: n-1 links and a host.
func portsYAML(n int) string {
	var b strings.Builder
	b.WriteString("nodes: [{name: a}")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, ", {name: b%d}", i)
	}
	b.WriteString("]\nlinks: [")
	for i := 1; i < n; i++ {
		if i > 1 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "{a: {node: a, port: f%d}, b: {node: b%d, port: f}}", i, i)
	}
	b.WriteString("]\nhosts: [{name: h, node: a, port: c}]\n")
	return b.String()
}

// A node may have as many ports as its datapath takes, not one more.
func TestPortsPerNode(t *testing.T) {
	if _, _, err := Parse([]byte(portsYAML(dpconfig.MaxPorts))); err != nil {
		t.Fatalf("%d ports: %v", dpconfig.MaxPorts, err)
	}
	if _, _, err := Parse([]byte(portsYAML(dpconfig.MaxPorts + 1))); err == nil {
		t.Fatalf("%d ports: accepted", dpconfig.MaxPorts+1)
	}
}
