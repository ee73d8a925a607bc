// Package topology holds the fabric's physical shape: nodes, fabric links and
// customer ports, loaded from the topology YAML (docs/topology.md) or the API.
package topology

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"regexp"
	"sort"

	"gopkg.in/yaml.v3"

	"github.com/e3fabric/e3fabric/control/internal/dpconfig"
)

// Default values of optional fields.
const (
	DefaultCost         = 1
	DefaultCapacityMbps = 10000
	DefaultTTL          = 64
	// MaxLinkID bounds link ids: a link id is also the nexthop id and the
	// link BFD session id on both of its nodes; the datapath's 4096 session
	// ids above it are for path checks.
	MaxLinkID = 2047
)

// Topology is the whole fabric.
type Topology struct {
	Name          string         `json:"name" yaml:"name,omitempty"`
	Fabric        Fabric         `json:"fabric" yaml:"fabric,omitempty"`
	Nodes         []Node         `json:"nodes" yaml:"nodes,omitempty"`
	Links         []Link         `json:"links" yaml:"links,omitempty"`
	CustomerPorts []CustomerPort `json:"customer_ports" yaml:"customer_ports,omitempty"`
	Segments      []Segment      `json:"segments,omitempty" yaml:"segments,omitempty"`
}

// Segment is a multi-homed customer site (an Ethernet segment): one customer
// switch attached to customer ports of two or more leaves. A service's
// circuit on a segment stands for a circuit on each of its ports, with one
// VLAN (docs/multihoming.md).
type Segment struct {
	Name  string     `json:"name" yaml:"name,omitempty" schema:"pattern=^[a-z0-9-]{1,15}$"`
	Ports []Endpoint `json:"ports" yaml:"ports,omitempty"`
	// LAG: the site's switch sends each frame up one of its links (a LAG),
	// so every leaf takes the site's BUM. Without, it floods its BUM up
	// every link and only the designated forwarder takes it.
	LAG bool `json:"lag,omitempty" yaml:"lag,omitempty"`
}

// Segment returns the named segment, or nil.
func (t *Topology) Segment(name string) *Segment {
	for i := range t.Segments {
		if t.Segments[i].Name == name {
			return &t.Segments[i]
		}
	}
	return nil
}

// Fabric holds the fabric-wide datapath settings.
type Fabric struct {
	ControlWord *bool `json:"control_word,omitempty" yaml:"control_word,omitempty"`
	TTL         int   `json:"ttl,omitempty" yaml:"ttl,omitempty" schema:"minimum=0;maximum=255;description=initial MPLS TTL, 0 for 64"`
	BFD         BFD   `json:"bfd,omitempty" yaml:"bfd,omitempty"`
}

// BFD holds the timers of the BFD sessions on fabric links (docs/ha.md):
// fabric-wide, and per link where a link overrides them. Zero means the
// datapath's default (10 ms, 10 ms, 3, 5 s).
type BFD struct {
	TxMS       int  `json:"tx_ms,omitempty" yaml:"tx_ms,omitempty" schema:"minimum=0;maximum=60000"`
	RxMS       int  `json:"rx_ms,omitempty" yaml:"rx_ms,omitempty" schema:"minimum=0;maximum=60000"`
	Multiplier int  `json:"multiplier,omitempty" yaml:"multiplier,omitempty" schema:"minimum=0;maximum=255"`
	WTRS       *int `json:"wtr_s,omitempty" yaml:"wtr_s,omitempty" schema:"minimum=0;maximum=3600"`
	// Keyed SHA1 authentication of the link sessions (RFC 5880 6.7.4):
	// the key, 1..20 bytes in hex, and its id. Both ends use the same.
	AuthKey   string `json:"auth_key,omitempty" yaml:"auth_key,omitempty" schema:"pattern=^(([0-9a-fA-F]{2}){1,20}|\\(set\\))$;description=1..20 bytes in hex, or (set) where redacted"`
	AuthKeyID int    `json:"auth_key_id,omitempty" yaml:"auth_key_id,omitempty" schema:"minimum=0;maximum=255"`
}

var hexKeyRE = regexp.MustCompile(`^([0-9a-fA-F]{2}){1,20}$`)

func (b BFD) validate(what string) error {
	if b.TxMS < 0 || b.TxMS > 60000 || b.RxMS < 0 || b.RxMS > 60000 ||
		b.Multiplier < 0 || b.Multiplier > 255 || (b.WTRS != nil && (*b.WTRS < 0 || *b.WTRS > 3600)) {
		return fmt.Errorf("topology: %s bfd: tx_ms and rx_ms 1..60000, multiplier 1..255, wtr_s 0..3600", what)
	}
	if (b.AuthKey != "" && !hexKeyRE.MatchString(b.AuthKey)) || b.AuthKeyID < 0 || b.AuthKeyID > 255 {
		return fmt.Errorf("topology: %s bfd: auth_key is 1..20 bytes in hex (2..40 digits), auth_key_id 0..255", what)
	}
	return nil
}

// Redacted is t with every BFD key replaced by "(set)": what a reader
// without the admin token sees.
func (t *Topology) Redacted() *Topology {
	return t.replaceKeys(func(string) string { return RedactedKey })
}

// Fingerprinted is t with every BFD key replaced by a digest of it: enough
// to tell that a key changed without showing it.
func (t *Topology) Fingerprinted() *Topology {
	return t.replaceKeys(func(k string) string {
		return fmt.Sprintf("(sha256 %x)", sha256.Sum256([]byte(k)))[:16] + ")"
	})
}

func (t *Topology) replaceKeys(f func(key string) string) *Topology {
	c := *t
	redact := func(b *BFD) {
		if b.AuthKey != "" {
			b.AuthKey = f(b.AuthKey)
		}
	}
	redact(&c.Fabric.BFD)
	c.Links = append([]Link(nil), t.Links...)
	for i := range c.Links {
		if c.Links[i].BFD != nil {
			b := *c.Links[i].BFD
			redact(&b)
			c.Links[i].BFD = &b
		}
	}
	return &c
}

// RedactedKey stands for a BFD key in a redacted topology.
const RedactedKey = "(set)"

// LinkBFD returns the BFD timers of link l: the link's own where it sets
// them, else the fabric's.
func (t *Topology) LinkBFD(l Link) BFD {
	b := t.Fabric.BFD
	if o := l.BFD; o != nil {
		if o.TxMS != 0 {
			b.TxMS = o.TxMS
		}
		if o.RxMS != 0 {
			b.RxMS = o.RxMS
		}
		if o.Multiplier != 0 {
			b.Multiplier = o.Multiplier
		}
		if o.WTRS != nil {
			b.WTRS = o.WTRS
		}
		if o.AuthKey != "" {
			b.AuthKey, b.AuthKeyID = o.AuthKey, o.AuthKeyID
		}
	}
	return b
}

// ControlWordOn reports whether pseudowires carry the control word (default on).
func (f Fabric) ControlWordOn() bool { return f.ControlWord == nil || *f.ControlWord }

// TTLOrDefault is the initial MPLS TTL.
func (f Fabric) TTLOrDefault() int {
	if f.TTL == 0 {
		return DefaultTTL
	}
	return f.TTL
}

// Node is one e3-vswitchd.
type Node struct {
	Name string `json:"name" yaml:"name,omitempty" schema:"pattern=^[a-z0-9-]{1,15}$"`
	Role string `json:"role,omitempty" yaml:"role,omitempty"`
	// Drained: in maintenance (e3ctl node drain): paths and trees avoid
	// it where another way exists. The operator's state, not the file's:
	// Normalize keeps the stored topology's.
	Drained bool `json:"drained,omitempty" yaml:"-"`
}

// Endpoint is one end of a fabric link.
type Endpoint struct {
	Node    string `json:"node" yaml:"node,omitempty" schema:"pattern=^[a-z0-9-]{1,15}$"`
	Port    string `json:"port" yaml:"port,omitempty" schema:"pattern=^[a-z0-9-]{1,15}$"`
	Devargs string `json:"devargs,omitempty" yaml:"devargs,omitempty"`
}

// Link is a fabric link between two node ports. ID is assigned by the
// controller and stays with the link (matched by its endpoints) across imports.
type Link struct {
	ID           int      `json:"id,omitempty" yaml:"-" schema:"minimum=0;description=assigned by the controller: any value sent is ignored"`
	A            Endpoint `json:"a" yaml:"a,omitempty"`
	B            Endpoint `json:"b" yaml:"b,omitempty"`
	Cost         int      `json:"cost,omitempty" yaml:"cost,omitempty" schema:"minimum=0;maximum=1048576;description=0: the default, 1"`
	CapacityMbps int      `json:"capacity_mbps,omitempty" yaml:"capacity_mbps,omitempty" schema:"minimum=0;maximum=100000000;description=0: the default, 10000"`
	BFD          *BFD     `json:"bfd,omitempty" yaml:"bfd,omitempty"`
}

// Name is a stable human name of the link: "leaf1:fab1-spine1:fab1".
func (l Link) Name() string {
	return l.A.Node + ":" + l.A.Port + "-" + l.B.Node + ":" + l.B.Port
}

// End returns the endpoint of l on node, and the other one.
func (l Link) End(node string) (local, remote Endpoint) {
	if l.A.Node == node {
		return l.A, l.B
	}
	return l.B, l.A
}

// CustomerPort is a port where customers' circuits attach.
type CustomerPort struct {
	Node    string `json:"node" yaml:"node,omitempty" schema:"pattern=^[a-z0-9-]{1,15}$"`
	Port    string `json:"port" yaml:"port,omitempty" schema:"pattern=^[a-z0-9-]{1,15}$"`
	Devargs string `json:"devargs,omitempty" yaml:"devargs,omitempty"`
}

// fileFormat is docs/topology.md: customer ports come from hosts (and from the
// controller's own customer_ports list); services are returned separately.
// File is a topology file as written (docs/topology.md): the topology,
// the lab's hosts (whose ports become customer ports) and services.
type File struct {
	Name          string         `json:"name,omitempty" yaml:"name,omitempty"`
	Fabric        Fabric         `json:"fabric,omitempty" yaml:"fabric,omitempty"`
	Nodes         []Node         `json:"nodes,omitempty" yaml:"nodes,omitempty"`
	Links         []Link         `json:"links,omitempty" yaml:"links,omitempty"`
	CustomerPorts []CustomerPort `json:"customer_ports,omitempty" yaml:"customer_ports,omitempty"`
	Segments      []Segment      `json:"segments,omitempty" yaml:"segments,omitempty"`
	Hosts         []Host         `json:"hosts,omitempty" yaml:"hosts,omitempty"`
	Services      []FileService  `json:"services,omitempty" yaml:"services,omitempty"`
}

// Host is a lab host: its port (and a multi-homed one's others) is a
// customer port; the rest is the lab's and the demo's.
type Host struct {
	Name       string          `json:"name,omitempty" yaml:"name,omitempty"`
	Node       string          `json:"node,omitempty" yaml:"node,omitempty"`
	Port       string          `json:"port,omitempty" yaml:"port,omitempty"`
	Devargs    string          `json:"devargs,omitempty" yaml:"devargs,omitempty"`
	Also       []Endpoint      `json:"also,omitempty" yaml:"also,omitempty"`     // a multi-homed host's other uplinks
	Behind     string          `json:"behind,omitempty" yaml:"behind,omitempty"` // a host of a multi-homed site: no port of its own
	Interfaces []HostInterface `json:"interfaces,omitempty" yaml:"interfaces,omitempty"`
}

// HostInterface is a lab host's address on a VLAN (none: untagged).
type HostInterface struct {
	VLAN any    `json:"vlan,omitempty" yaml:"vlan"`
	IP   string `json:"ip,omitempty" yaml:"ip"`
	MAC  string `json:"mac,omitempty" yaml:"mac"`
}

// FileService is a service listed in a topology file.
type FileService struct {
	Name            string           `yaml:"name,omitempty" json:"name" schema:"pattern=^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$"`
	Type            string           `yaml:"type,omitempty" json:"type" schema:"enum=eline|elan"`
	Circuits        []FileCircuit    `yaml:"circuits,omitempty" json:"circuits"`
	MACLimit        int              `yaml:"mac_limit,omitempty" json:"mac_limit,omitempty"`
	CircuitMACLimit int              `yaml:"circuit_mac_limit,omitempty" json:"circuit_mac_limit,omitempty"`
	BandwidthMbps   int              `yaml:"bandwidth_mbps,omitempty" json:"bandwidth_mbps,omitempty"`
	ECMP            bool             `yaml:"ecmp,omitempty" json:"ecmp,omitempty"`   // spread flows over equal-cost paths
	Storm           *dpconfig.Storm  `yaml:"storm,omitempty" json:"storm,omitempty"` // storm control of every circuit without its own
	Tenant          string           `yaml:"tenant,omitempty" json:"tenant,omitempty" schema:"pattern=^[a-z0-9][a-z0-9_-]{0,31}$"`
	Paths           *PathConstraints `yaml:"paths,omitempty" json:"paths,omitempty"`
}

// FileCircuit is a circuit of a FileService.
type FileCircuit struct {
	Node    string          `yaml:"node,omitempty" json:"node,omitempty" schema:"pattern=^[a-z0-9-]{1,15}$"`
	Port    string          `yaml:"port,omitempty" json:"port,omitempty" schema:"pattern=^[a-z0-9-]{1,15}$"`
	VLAN    any             `yaml:"vlan" json:"vlan,omitempty"`
	Segment string          `yaml:"segment,omitempty" json:"segment,omitempty" schema:"pattern=^[a-z0-9-]{1,15}$"` // a multi-homed site: no node or port
	Storm   *dpconfig.Storm `yaml:"storm,omitempty" json:"storm,omitempty"`                                        // this circuit's storm control
}

// Parse reads a topology file's bytes. It returns the topology (validated,
// defaults filled in) and the services the file lists.
func Parse(data []byte) (*Topology, []FileService, error) {
	var f File
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true) // a misspelt key is an error, not a default
	if err := dec.Decode(&f); err != nil && err != io.EOF {
		return nil, nil, fmt.Errorf("topology: %w", err)
	}
	return f.Parse()
}

// Parse is the topology f describes (validated, defaults filled in) and
// the services it lists.
func (f *File) Parse() (*Topology, []FileService, error) {
	t := &Topology{Name: f.Name, Fabric: f.Fabric, Nodes: f.Nodes, Links: f.Links, CustomerPorts: f.CustomerPorts,
		Segments: f.Segments}
	seen := map[[2]string]bool{}
	for _, cp := range t.CustomerPorts {
		seen[[2]string{cp.Node, cp.Port}] = true
	}
	for _, h := range f.Hosts {
		if h.Behind != "" {
			continue
		}
		for _, e := range append([]Endpoint{{Node: h.Node, Port: h.Port, Devargs: h.Devargs}}, h.Also...) {
			k := [2]string{e.Node, e.Port}
			if !seen[k] {
				seen[k] = true
				t.CustomerPorts = append(t.CustomerPorts, CustomerPort(e))
			}
		}
	}
	if err := t.Normalize(nil); err != nil {
		return nil, nil, err
	}
	return t, f.Services, nil
}

// Load reads and parses a topology file.
func Load(path string) (*Topology, []FileService, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("topology: %w", err)
	}
	t, s, err := Parse(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, s, nil
}

var nameRE = regexp.MustCompile(`^[a-z0-9-]{1,15}$`)

// FieldError is an error about one field of a topology, named by its path
// in the file (links[2].a, fabric.ttl), so that a tool can point at its line.
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

func at(field string, err error) error { return &FieldError{Field: field, Err: err} }

// Normalize validates t, fills defaults, sorts everything by name and assigns
// link ids: a link keeps the id it has in prev (same endpoints), new links get
// the smallest free id. prev may be nil.
func (t *Topology) Normalize(prev *Topology) error {
	if t.Fabric.TTL < 0 || t.Fabric.TTL > 255 {
		return at("fabric.ttl", fmt.Errorf("topology: fabric ttl %d out of range 1..255", t.Fabric.TTL))
	}
	if err := t.Fabric.BFD.validate("fabric"); err != nil {
		return at("fabric.bfd", err)
	}
	drained := map[string]bool{}
	if prev != nil {
		for _, n := range prev.Nodes {
			drained[n.Name] = n.Drained
		}
	}
	for i := range t.Nodes {
		t.Nodes[i].Drained = drained[t.Nodes[i].Name]
	}
	nodes := map[string]bool{}
	for i, n := range t.Nodes {
		if !nameRE.MatchString(n.Name) {
			return at(fmt.Sprintf("nodes[%d].name", i), fmt.Errorf("topology: node name %q: want [a-z0-9-], 1..15 characters", n.Name))
		}
		if nodes[n.Name] {
			return at(fmt.Sprintf("nodes[%d].name", i), fmt.Errorf("topology: node %q listed twice", n.Name))
		}
		nodes[n.Name] = true
	}
	ports := map[[2]string]string{} // (node, port) -> "fabric" | "customer"
	usePort := func(e Endpoint, kind string) error {
		if !nodes[e.Node] {
			return fmt.Errorf("topology: %s port %s:%s: unknown node %q", kind, e.Node, e.Port, e.Node)
		}
		if !nameRE.MatchString(e.Port) {
			return fmt.Errorf("topology: port name %q on %s: want [a-z0-9-], 1..15 characters", e.Port, e.Node)
		}
		if err := CheckDevargs(e.Devargs); err != nil {
			return fmt.Errorf("topology: %s port %s:%s: %w", kind, e.Node, e.Port, err)
		}
		k := [2]string{e.Node, e.Port}
		if old, ok := ports[k]; ok {
			return fmt.Errorf("topology: port %s:%s used twice (as %s and %s)", e.Node, e.Port, old, kind)
		}
		ports[k] = kind
		return nil
	}
	for i := range t.Links {
		l := &t.Links[i]
		field := fmt.Sprintf("links[%d]", i)
		if l.A.Node == l.B.Node {
			return at(field, fmt.Errorf("topology: link %s connects node %s to itself", l.Name(), l.A.Node))
		}
		if err := usePort(l.A, "fabric"); err != nil {
			return at(field+".a", err)
		}
		if err := usePort(l.B, "fabric"); err != nil {
			return at(field+".b", err)
		}
		if l.Cost == 0 {
			l.Cost = DefaultCost
		}
		if l.Cost < 0 {
			return at(field+".cost", fmt.Errorf("topology: link %s: cost %d must be positive", l.Name(), l.Cost))
		}
		if l.CapacityMbps == 0 {
			l.CapacityMbps = DefaultCapacityMbps
		}
		if l.CapacityMbps < 0 {
			return at(field+".capacity_mbps", fmt.Errorf("topology: link %s: capacity_mbps %d must be positive", l.Name(), l.CapacityMbps))
		}
		if l.BFD != nil {
			if err := l.BFD.validate("link " + l.Name()); err != nil {
				return at(field+".bfd", err)
			}
		}
		// Canonical orientation (A < B) so that a link is matched across
		// imports whichever way round the file lists it.
		if l.B.Node < l.A.Node || (l.B.Node == l.A.Node && l.B.Port < l.A.Port) {
			l.A, l.B = l.B, l.A
		}
	}
	for i, cp := range t.CustomerPorts {
		if err := usePort(Endpoint(cp), "customer"); err != nil {
			return at(fmt.Sprintf("customer_ports[%d]", i), err)
		}
	}
	if err := t.checkSegments(ports); err != nil {
		return err
	}
	if err := checkPortsPerNode(ports); err != nil {
		return err
	}
	macs := map[string]string{}
	for k, kind := range ports {
		if kind != "fabric" {
			continue
		}
		mac := PortMAC(k[0], k[1])
		if other, dup := macs[mac]; dup {
			return fmt.Errorf("topology: ports %s and %s:%s hash to the same MAC %s: rename one", other, k[0], k[1], mac)
		}
		macs[mac] = k[0] + ":" + k[1]
	}
	sort.Slice(t.Nodes, func(i, j int) bool { return t.Nodes[i].Name < t.Nodes[j].Name })
	sort.Slice(t.Links, func(i, j int) bool { return t.Links[i].Name() < t.Links[j].Name() })
	sort.Slice(t.CustomerPorts, func(i, j int) bool {
		a, b := t.CustomerPorts[i], t.CustomerPorts[j]
		return a.Node < b.Node || (a.Node == b.Node && a.Port < b.Port)
	})
	return t.assignLinkIDs(prev)
}

// checkPortsPerNode refuses a node with more ports than its datapath takes
// (dpconfig.MaxPorts, fabric and customer together): the agent could not
// open the rest, and the services through them would never forward.
func checkPortsPerNode(ports map[[2]string]string) error {
	all, fabric := map[string]int{}, map[string]int{}
	for k, kind := range ports {
		all[k[0]]++
		if kind == "fabric" {
			fabric[k[0]]++
		}
	}
	var names []string
	for n, k := range all {
		if k > dpconfig.MaxPorts {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return nil
	}
	sort.Strings(names)
	n := names[0]
	err := fmt.Errorf("topology: node %s has %d ports (%d fabric, %d customer): a node's datapath takes at most %d",
		n, all[n], fabric[n], all[n]-fabric[n], dpconfig.MaxPorts)
	if len(names) > 1 {
		err = fmt.Errorf("%w (and %d other nodes have more)", err, len(names)-1)
	}
	return err
}

// checkSegments validates the segments against the ports ((node, port) ->
// kind): customer ports of two or more distinct nodes, none in two segments.
func (t *Topology) checkSegments(ports map[[2]string]string) error {
	names := map[string]bool{}
	inSegment := map[[2]string]string{}
	for i := range t.Segments {
		sg := &t.Segments[i]
		if err := sg.check(ports, names, inSegment); err != nil {
			return at(fmt.Sprintf("segments[%d]", i), err)
		}
	}
	sort.Slice(t.Segments, func(i, j int) bool { return t.Segments[i].Name < t.Segments[j].Name })
	return nil
}

// check validates one segment; names and inSegment collect the segments
// checked before it.
func (sg *Segment) check(ports map[[2]string]string, names map[string]bool, inSegment map[[2]string]string) error {
	if !nameRE.MatchString(sg.Name) {
		return fmt.Errorf("topology: segment name %q: want [a-z0-9-], 1..15 characters", sg.Name)
	}
	if names[sg.Name] {
		return fmt.Errorf("topology: segment %q listed twice", sg.Name)
	}
	names[sg.Name] = true
	nodes := map[string]bool{}
	for _, p := range sg.Ports {
		k := [2]string{p.Node, p.Port}
		if ports[k] != "customer" {
			return fmt.Errorf("topology: segment %s: %s:%s is not a customer port", sg.Name, p.Node, p.Port)
		}
		if other, ok := inSegment[k]; ok {
			return fmt.Errorf("topology: segment %s: %s:%s is on segment %s already", sg.Name, p.Node, p.Port, other)
		}
		if nodes[p.Node] {
			return fmt.Errorf("topology: segment %s: two ports on %s (a segment has one port per leaf)", sg.Name, p.Node)
		}
		inSegment[k], nodes[p.Node] = sg.Name, true
	}
	if len(sg.Ports) < 2 {
		return fmt.Errorf("topology: segment %s: %d port(s), a segment is on two leaves or more", sg.Name, len(sg.Ports))
	}
	sort.Slice(sg.Ports, func(i, j int) bool { return sg.Ports[i].Node < sg.Ports[j].Node })
	return nil
}

func (t *Topology) assignLinkIDs(prev *Topology) error {
	old := map[string]int{}
	if prev != nil {
		for _, l := range prev.Links {
			old[l.Name()] = l.ID
		}
	}
	used := map[int]bool{}
	for i := range t.Links {
		t.Links[i].ID = 0
		if id, ok := old[t.Links[i].Name()]; ok {
			t.Links[i].ID = id
			used[id] = true
		}
	}
	next := 1
	for i := range t.Links {
		if t.Links[i].ID != 0 {
			continue
		}
		for used[next] {
			next++
		}
		if next > MaxLinkID {
			return fmt.Errorf("topology: more than %d links", MaxLinkID)
		}
		t.Links[i].ID = next
		used[next] = true
	}
	return nil
}

// HasNode reports whether node exists.
func (t *Topology) HasNode(node string) bool {
	for _, n := range t.Nodes {
		if n.Name == node {
			return true
		}
	}
	return false
}

// CustomerPort returns the customer port node:port, if it is one.
func (t *Topology) CustomerPort(node, port string) (CustomerPort, bool) {
	for _, cp := range t.CustomerPorts {
		if cp.Node == node && cp.Port == port {
			return cp, true
		}
	}
	return CustomerPort{}, false
}

// IsFabricPort reports whether node:port is the end of a fabric link.
func (t *Topology) IsFabricPort(node, port string) bool {
	_, ok := t.LinkAt(node, port)
	return ok
}

// LinkByID returns the link with id.
func (t *Topology) LinkByID(id int) (Link, bool) {
	for _, l := range t.Links {
		if l.ID == id {
			return l, true
		}
	}
	return Link{}, false
}

// LinkAt returns the link that ends on node:port, if one does.
func (t *Topology) LinkAt(node, port string) (Link, bool) {
	for _, l := range t.Links {
		if (l.A.Node == node && l.A.Port == port) || (l.B.Node == node && l.B.Port == port) {
			return l, true
		}
	}
	return Link{}, false
}

// NodeLinks returns the links that end on node, in link order.
func (t *Topology) NodeLinks(node string) []Link {
	var out []Link
	for _, l := range t.Links {
		if l.A.Node == node || l.B.Node == node {
			out = append(out, l)
		}
	}
	return out
}

// PortMAC is the stable, locally administered MAC of a fabric port: 02:e3
// followed by 32 bits of a hash of node and port, so it survives restarts and
// both ends of a link can compute each other's.
func PortMAC(node, port string) string {
	h := fnv.New32a()
	h.Write([]byte(node))
	h.Write([]byte{0})
	h.Write([]byte(port))
	v := h.Sum32()
	return fmt.Sprintf("02:e3:%02x:%02x:%02x:%02x", byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
}

// Devargs returns the port's DPDK devargs: as given, or the lab's default of
// an af_packet device on the Linux interface named after the port.
func Devargs(port, given string) string {
	if given != "" {
		return given
	}
	return "net_af_packet_" + port + ",iface=" + port
}

// Marshal writes t and services as a topology file that Parse reads back.
func Marshal(t *Topology, services []FileService) ([]byte, error) {
	f := File{Name: t.Name, Fabric: t.Fabric, Nodes: t.Nodes, Links: t.Links, CustomerPorts: t.CustomerPorts,
		Segments: t.Segments, Services: services}
	var doc yaml.Node
	if err := doc.Encode(f); err != nil {
		return nil, fmt.Errorf("topology: %w", err)
	}
	flowLeaves(&doc)
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, fmt.Errorf("topology: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("topology: %w", err)
	}
	return b.Bytes(), nil
}

// flowLeaves writes each mapping of scalars on one line ({node: leaf1,
// port: fab1}), as the examples do.
func flowLeaves(n *yaml.Node) {
	leaf := n.Kind == yaml.MappingNode
	for _, c := range n.Content {
		flowLeaves(c)
		leaf = leaf && c.Kind == yaml.ScalarNode
	}
	if leaf {
		n.Style = yaml.FlowStyle
	}
}
