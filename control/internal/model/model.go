// Package model holds the controller's objects as they are stored in etcd and
// exchanged over the northbound API: services, their circuits, the routes the
// controller computed for them and the identifiers it allocated.
package model

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/e3fabric/e3fabric/control/internal/dpconfig"
	"github.com/e3fabric/e3fabric/control/internal/nodestate"
	"github.com/e3fabric/e3fabric/control/internal/topology"
)

// Service types (same strings as the datapath's).
const (
	ELine = "eline"
	ELAN  = "elan"
)

// Circuit is an attachment circuit: (node, customer port, VLAN).
type Circuit struct {
	Node string        `json:"node"`
	Port string        `json:"port"`
	VLAN dpconfig.VLAN `json:"vlan"`
	// Segment names the multi-homed site (topology.Segment) the circuit's
	// port is on. In a request, a circuit with a segment and no node
	// stands for one circuit on each of the segment's ports.
	Segment string `json:"segment,omitempty"`
	// Storm, when set, is the circuit's storm control instead of the
	// service's (an E-LAN's).
	Storm *dpconfig.Storm `json:"storm,omitempty"`
}

// CircuitKey is what makes a circuit: two circuits with one key are one.
type CircuitKey struct {
	Node, Port string
	VLAN       dpconfig.VLAN
}

// Key returns the circuit's key.
func (c Circuit) Key() CircuitKey { return CircuitKey{c.Node, c.Port, c.VLAN} }

// UnmarshalJSON reads a circuit; without a vlan (or with null) it is the
// whole untagged port.
func (c *Circuit) UnmarshalJSON(b []byte) error {
	var j struct {
		Node    string          `json:"node"`
		Port    string          `json:"port"`
		VLAN    *dpconfig.VLAN  `json:"vlan"`
		Segment string          `json:"segment"`
		Storm   *dpconfig.Storm `json:"storm"`
	}
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*c = Circuit{Node: j.Node, Port: j.Port, VLAN: dpconfig.Untagged, Segment: j.Segment, Storm: j.Storm}
	if j.VLAN != nil {
		c.VLAN = *j.VLAN
	}
	return nil
}

func (c Circuit) String() string {
	switch {
	case c.Node == "":
		return "@" + c.Segment + ":" + c.VLAN.String()
	case c.Segment != "":
		return c.Node + ":" + c.Port + ":" + c.VLAN.String() + "@" + c.Segment
	}
	return c.Node + ":" + c.Port + ":" + c.VLAN.String()
}

// ParseCircuit reads "node:port:vlan" or "node:port" (untagged), or
// "@segment:vlan" or "@segment" (untagged) for a multi-homed site.
func ParseCircuit(s string) (Circuit, error) {
	if seg, ok := strings.CutPrefix(s, "@"); ok {
		name, vlan, tagged := strings.Cut(seg, ":")
		c := Circuit{Segment: name, VLAN: dpconfig.Untagged}
		if name == "" {
			return Circuit{}, fmt.Errorf("circuit %q: want @SEGMENT:VLAN or @SEGMENT", s)
		}
		if tagged {
			v, err := dpconfig.ParseVLAN(vlan)
			if err != nil {
				return Circuit{}, fmt.Errorf("circuit %q: %w", s, err)
			}
			c.VLAN = v
		}
		return c, nil
	}
	f := strings.Split(s, ":")
	if len(f) < 2 || len(f) > 3 || f[0] == "" || f[1] == "" {
		return Circuit{}, fmt.Errorf("circuit %q: want NODE:PORT:VLAN or NODE:PORT", s)
	}
	c := Circuit{Node: f[0], Port: f[1], VLAN: dpconfig.Untagged}
	if len(f) == 3 {
		v, err := dpconfig.ParseVLAN(f[2])
		if err != nil {
			return Circuit{}, fmt.Errorf("circuit %q: %w", s, err)
		}
		c.VLAN = v
	}
	return c, nil
}

// Less orders circuits by node, port, VLAN, untagged first.
func (c Circuit) Less(d Circuit) bool {
	if c.Node != d.Node {
		return c.Node < d.Node
	}
	if c.Port != d.Port {
		return c.Port < d.Port
	}
	return (c.VLAN+1)%(dpconfig.Untagged+1) < (d.VLAN+1)%(dpconfig.Untagged+1)
}

// SortCircuits sorts in place.
func SortCircuits(cs []Circuit) {
	sort.Slice(cs, func(i, j int) bool { return cs[i].Less(cs[j]) })
}

// ServiceSpec is what the operator asks for.
type ServiceSpec struct {
	Name     string    `json:"name" schema:"pattern=^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$"`
	Type     string    `json:"type" schema:"enum=eline|elan"`
	Circuits []Circuit `json:"circuits"`
	MACLimit int       `json:"mac_limit,omitempty" schema:"minimum=0;maximum=16777216;description=the MACs an E-LAN may learn, 0: the node's default"`
	// CircuitMACLimit caps the MACs an E-LAN learns on each of its
	// circuits (0: only MACLimit), so one site cannot take the whole share.
	CircuitMACLimit int `json:"circuit_mac_limit,omitempty" schema:"minimum=0;maximum=16777216"`
	// BandwidthMbps is the bandwidth the service reserves on every link
	// its route crosses (primary and backup paths, flood tree): it is
	// admitted only where that much is left (docs/control-plane.md,
	// "Bandwidth"). 0: it reserves nothing.
	BandwidthMbps int `json:"bandwidth_mbps,omitempty" schema:"minimum=0;maximum=100000000;description=Mbps reserved on every link of the service's paths and tree, admitted only where that much is left (0: none)"`
	// ECMP spreads the service's flows over its equal-cost paths at the
	// ingress leaf (docs/multihoming.md), rather than keeping the standby
	// path idle.
	ECMP bool `json:"ecmp,omitempty"`
	// Storm is the storm control of each of an E-LAN's circuits that has
	// none of its own (docs/operations.md).
	Storm *dpconfig.Storm `json:"storm,omitempty"`
	// Tenant owns the service ("": the fabric's operator); a tenant's
	// token sees and changes only its own (docs/tenants.md).
	Tenant string `json:"tenant,omitempty" schema:"pattern=^[a-z0-9][a-z0-9_-]{0,31}$"`
	// Paths are constraints on its paths and tree.
	Paths *PathConstraints `json:"paths,omitempty"`
}

// StormOf is circuit c's storm control: its own, else the service's.
func (s *ServiceSpec) StormOf(c Circuit) dpconfig.Storm {
	switch {
	case c.Storm != nil:
		return *c.Storm
	case s.Storm != nil:
		return *s.Storm
	}
	return dpconfig.Storm{}
}

var serviceNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$`)

// ValidateShape checks what can be checked without the topology.
func (s *ServiceSpec) ValidateShape() error {
	if !serviceNameRE.MatchString(s.Name) {
		return fmt.Errorf("service name %q: want 1..63 characters of [A-Za-z0-9_.-], starting with a letter or digit", s.Name)
	}
	switch s.Type {
	case ELine:
		// Two ends: circuits, or one circuit and one multi-homed site
		// (all its circuits, once the segment is expanded).
		ends, segs := 0, s.Segments()
		for _, c := range s.Circuits {
			if c.Segment == "" {
				ends++
			}
		}
		if ends+len(segs) != 2 || len(segs) > 1 {
			return fmt.Errorf("service %s: an eline has exactly 2 ends (circuits, or one circuit and one "+
				"multi-homed site), got %d circuits on %d sites", s.Name, len(s.Circuits), len(segs))
		}
	case ELAN:
		if len(s.Circuits) < 2 {
			return fmt.Errorf("service %s: an elan has at least 2 circuits, got %d", s.Name, len(s.Circuits))
		}
	default:
		return fmt.Errorf("service %s: type %q: want %q or %q", s.Name, s.Type, ELine, ELAN)
	}
	if s.MACLimit < 0 || s.CircuitMACLimit < 0 || s.BandwidthMbps < 0 {
		return fmt.Errorf("service %s: mac_limit, circuit_mac_limit and bandwidth_mbps must not be negative", s.Name)
	}
	if s.CircuitMACLimit > 0 && s.Type != ELAN {
		return fmt.Errorf("service %s: circuit_mac_limit applies to an elan only", s.Name)
	}
	storms := s.Storm != nil
	if s.Storm != nil {
		if err := s.Storm.Validate(); err != nil {
			return fmt.Errorf("service %s: %w", s.Name, err)
		}
	}
	for _, c := range s.Circuits {
		if c.Storm != nil {
			storms = true
			if err := c.Storm.Validate(); err != nil {
				return fmt.Errorf("service %s: circuit %s: %w", s.Name, c, err)
			}
		}
	}
	if storms && s.Type != ELAN {
		return fmt.Errorf("service %s: storm control applies to an elan only (an eline floods nothing)", s.Name)
	}
	seen := map[CircuitKey]bool{}
	for _, c := range s.Circuits {
		if !c.VLAN.Valid() {
			return fmt.Errorf("service %s: circuit %s:%s: vlan %d: want 1..4094 or untagged", s.Name, c.Node, c.Port, uint16(c.VLAN))
		}
		if seen[c.Key()] {
			return fmt.Errorf("service %s: circuit %s listed twice", s.Name, c)
		}
		seen[c.Key()] = true
	}
	return nil
}

// Members returns the distinct nodes of the circuits, sorted.
func (s *ServiceSpec) Members() []string {
	set := map[string]bool{}
	for _, c := range s.Circuits {
		set[c.Node] = true
	}
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// SiteEnd returns, for an E-Line to a multi-homed site, its single-homed
// circuit and the site's segment; ok is false for any other service.
func (s *ServiceSpec) SiteEnd() (end Circuit, segment string, ok bool) {
	if s.Type != ELine {
		return Circuit{}, "", false
	}
	for _, c := range s.Circuits {
		if c.Segment == "" {
			end = c
		} else {
			segment = c.Segment
		}
	}
	return end, segment, segment != ""
}

// Segments returns the multi-homed sites the service's circuits are on, sorted.
func (s *ServiceSpec) Segments() []string {
	var out []string
	for _, c := range s.Circuits {
		if c.Segment != "" && !slices.Contains(out, c.Segment) {
			out = append(out, c.Segment)
		}
	}
	sort.Strings(out)
	return out
}

// Hop is one link of a path: leave From on FromPort, arrive at To on ToPort.
type Hop struct {
	Link     int    `json:"link"`
	From     string `json:"from"`
	FromPort string `json:"from_port"`
	To       string `json:"to"`
	ToPort   string `json:"to_port"`
}

// Path is a loop-free sequence of hops; empty when source = destination.
type Path []Hop

// Nodes returns the nodes the path visits, src first.
func (p Path) Nodes(src string) []string {
	out := []string{src}
	for _, h := range p {
		out = append(out, h.To)
	}
	return out
}

// Key is a compact identity of the path, used in label roles so that a moved
// path gets new labels.
func (p Path) Key() string {
	var buf [64]byte
	return string(p.AppendKey(buf[:0], false))
}

// AppendKey appends p's key to b, or with reverse the key of p walked
// from its end.
func (p Path) AppendKey(b []byte, reverse bool) []byte {
	for i := range p {
		if i > 0 {
			b = append(b, '.')
		}
		h := p[i]
		if reverse {
			h = p[len(p)-1-i]
		}
		b = strconv.AppendInt(b, int64(h.Link), 10)
	}
	return b
}

// Route is what the controller computed for a service.
type Route struct {
	// E-Line: the planned primary and backup paths from circuit 0's node to
	// circuit 1's node (reverse direction uses the same links), and which one
	// carries traffic. Both are installed; only the ingress nhlfes move.
	Primary Path   `json:"primary,omitempty"`
	Backup  Path   `json:"backup,omitempty"`
	Active  string `json:"active,omitempty"` // "primary" | "backup" | "" (hairpin or none)
	// Fallback is used when both planned paths are down.
	Fallback Path `json:"fallback,omitempty"`
	// ECMP: the service asked for it and primary and backup cost the same,
	// so both carry flows while both are usable.
	ECMP bool `json:"ecmp,omitempty"`

	// E-LAN.
	Sources map[string]uint16 `json:"sources,omitempty"` // member leaf -> source id
	Unicast []UnicastPath     `json:"unicast,omitempty"`
	Tree    []Hop             `json:"tree,omitempty"` // edges, oriented arbitrarily

	// E-LAN: each multi-homed site of the service (docs/multihoming.md).
	Sites map[string]*SiteRoute `json:"sites,omitempty"`

	// Members of the service the route could not reach (down or partitioned).
	Unreachable []string `json:"unreachable,omitempty"`

	// Move is an E-Line's route to the circuit one of its ends moves to,
	// during the move (ServiceRecord.Move): from the end that stays.
	Move *Route `json:"move,omitempty"`
}

// SiteRoute is how an E-LAN reaches one of its multi-homed sites: the
// segment's source id, which the site's frames carry to the other members
// whichever leaf they enter, and the leaves it is reached through now
// (reachable, with carrier on the segment's port), sorted.
type SiteRoute struct {
	Source uint16   `json:"source"`
	Leaves []string `json:"leaves,omitempty"`
	// Floods: the site sends its BUM up every link (no LAG, topology.Segment).
	Floods bool `json:"floods,omitempty"`
}

// UnicastPath is the known-unicast path from one member leaf to another,
// and a link-disjoint backup the sender's datapath switches to by itself
// when the path's first hop fails (none where the fabric has no such path).
type UnicastPath struct {
	From   string `json:"from"`
	To     string `json:"to"`
	Path   Path   `json:"path"`
	Backup Path   `json:"backup,omitempty"`
	ECMP   bool   `json:"ecmp,omitempty"` // Path and Backup cost the same and both carry flows
}

// Alloc kinds: each is a separate per-node number space.
const (
	KindLabel   = "label"
	KindNHLFE   = "nhlfe"
	KindCircuit = "circuit"
	KindSession = "session" // BFD sessions of path checks (link sessions use the link id)
	// KindSegmentLabel: labels with the same value on every node (node ""),
	// one per (E-LAN, segment): the segment label (docs/multihoming.md).
	KindSegmentLabel = "segment-label"
)

// Alloc is one allocated identifier: on Node, of Kind, for Role (a string
// that names the meaning, e.g. "eline-term>leaf3" or a transit role with the
// path's key). Same role = same meaning = same value across recomputations.
type Alloc struct {
	Node  string `json:"node"`
	Kind  string `json:"kind"`
	Role  string `json:"role"`
	Value uint32 `json:"value"`
}

// AllocValues are a service's allocated values, one run per node and kind
// (in the order its build first asked for each), each run in the order the
// build asked for its roles.
type AllocValues []ValueRun

// ValueRun is the values of one node and kind.
type ValueRun struct {
	Node, Kind string
	Values     []uint32
}

// Service states.
const (
	StateProgrammed = "programmed"
	StatePending    = "pending" // computed and written; some node has not applied it yet
	StateDegraded   = "degraded"
	StateDown       = "down"
)

// ServiceRecord is a service as the controller holds it in memory, and as a
// fabric snapshot lists it; etcd holds it in a compact form (StoredService).
type ServiceRecord struct {
	Spec ServiceSpec `json:"spec"`
	ID   uint32      `json:"id"` // datapath service id, the same on every node
	// Generation is the global generation of the change that last wrote this
	// service; NodeGenerations the desired-config generation each node must
	// have applied to carry the service as computed.
	Generation      int64            `json:"generation"`
	NodeGenerations map[string]int64 `json:"node_generations"`
	Route           Route            `json:"route"`
	// Allocs are the allocations with their roles, as a snapshot lists
	// them; the controller keeps Values and Roles instead (a tenth of the
	// memory), from which a replay of the build gives the roles back.
	Allocs []Alloc     `json:"allocs"`
	Values AllocValues `json:"-"`
	Roles  string      `json:"-"` // digest of the roles, in the order asked for
	// Move is an E-Line end moving to another circuit, until its window
	// ends (docs/operations.md, "Live migration").
	Move *Move `json:"move,omitempty"`
	// Peers names, for an E-Line end whose other end has moved, the node
	// its label from the other end was allocated for (a role's name), so
	// that the label outlives the move.
	Peers map[string]string `json:"peers,omitempty"`
}

// Move is an E-Line's end moving from circuit From to circuit To: until
// Until both receive the other end's frames and both send to it; then To
// replaces From.
type Move struct {
	From  Circuit   `json:"from"`
	To    Circuit   `json:"to"`
	Until time.Time `json:"until"`
}

// MoveRequest starts a move (POST /v1/services/{name}/move).
type MoveRequest struct {
	From    Circuit `json:"from"`
	To      Circuit `json:"to"`
	WindowS int     `json:"window_s,omitempty" schema:"minimum=0;maximum=3600;description=seconds both circuits deliver (0: 30)"`
}

// CheckRecord is what /e3/v1/checks/<key> holds: a connectivity check of one
// path between two leaves (BFD over the path's LSPs, RFC 6428), shared by
// every service whose protected traffic takes that path. Path runs from A
// to Z, A < Z. It lives while some service uses it.
type CheckRecord struct {
	A      string  `json:"a"`
	Z      string  `json:"z"`
	Path   Path    `json:"path"`
	Allocs []Alloc `json:"allocs"`
}

// FabricSnapshot is the whole intent of a fabric and what was allocated for
// it (e3ctl snapshot save / restore): restoring it rebuilds the same
// datapath state, labels included.
type FabricSnapshot struct {
	Version  int                `json:"version"`
	Topology *topology.Topology `json:"topology"`
	Services []ServiceRecord    `json:"services"`
	Checks   []CheckRecord      `json:"checks,omitempty"`
}

// Intent is the whole declared fabric: the topology and every service, as
// `e3ctl apply` sends it and `e3ctl get` writes it (GET /v1/intent).
type Intent struct {
	Topology *topology.Topology `json:"topology"`
	Services []ServiceSpec      `json:"services"`
}

// ApplyRequest makes the fabric what Intent declares, in one change
// (POST /v1/apply).
type ApplyRequest struct {
	Intent
	// Prune deletes the services Intent does not list; without it they stay.
	Prune bool `json:"prune,omitempty"`
	// DryRun returns the plan and changes nothing.
	DryRun bool `json:"dry_run,omitempty"`
	// Generation, when not 0, applies only if the fabric is still at this
	// generation (the one a dry run's plan was made at).
	Generation int64 `json:"generation,omitempty"`
}

// Plan actions.
const (
	ActionCreate = "create"
	ActionUpdate = "update"
	ActionDelete = "delete"
)

// PlanItem is one object an apply creates, updates or deletes. Kind is
// fabric, node, link, customer_port, segment or service.
type PlanItem struct {
	Kind    string        `json:"kind"`
	Name    string        `json:"name"`
	Action  string        `json:"action"`
	Changes []FieldChange `json:"changes,omitempty"`
}

// FieldChange is one field of an updated object: its value before and after
// (absent: unset).
type FieldChange struct {
	Field string `json:"field"`
	From  any    `json:"from,omitempty"`
	To    any    `json:"to,omitempty"`
}

// ApplyResult is an apply's plan and what became of it.
type ApplyResult struct {
	Plan []PlanItem `json:"plan"`
	// Applied: the plan was committed (false for a dry run or an empty plan).
	Applied bool `json:"applied"`
	// Generation is the fabric's generation after the apply (before it, for
	// a dry run).
	Generation int64 `json:"generation"`
}

// Protection states of a service (docs/ha.md).
const (
	Protected   = "protected"   // every ingress has a backup ready in the datapath
	OnBackup    = "on backup"   // some ingress is on its backup: its primary path failed
	Unprotected = "unprotected" // some path has no disjoint backup
)

// Status is a service's computed health for the API.
type Status struct {
	State  string `json:"state"`
	Reason string `json:"reason,omitempty"`
}

// API views (northbound JSON, docs/api/openapi.json).

// ServiceView is a service as the API shows it.
type ServiceView struct {
	ServiceSpec
	ID         uint32      `json:"id"`
	Status     Status      `json:"status"`
	Protection string      `json:"protection,omitempty"` // Protected, OnBackup or Unprotected; "" for a hairpin
	Generation int64       `json:"generation"`
	Route      *Route      `json:"route,omitempty"`
	Allocs     []Alloc     `json:"allocations,omitempty"`
	Checks     []CheckView `json:"checks,omitempty"`
	// DF is each segment's designated forwarder (docs/multihoming.md).
	DF map[string]string `json:"designated_forwarders,omitempty"`
	// Move is the move of one of its ends in progress, if any.
	Move *Move `json:"move,omitempty"`
}

// CheckView is a path check a service's protected traffic relies on, with
// its BFD session's state at each end ("up (restoring)" within the
// wait-to-restore time, "up (neighbour pausing)" while the neighbour at
// its other end or first link pauses; absent where the end's agent does
// not report).
type CheckView struct {
	Key   string            `json:"key"`
	Path  []string          `json:"path"` // node names from A to Z
	State map[string]string `json:"state,omitempty"`
}

// ServiceUpdate adds and removes circuits.
type ServiceUpdate struct {
	AddCircuits    []Circuit `json:"add_circuits,omitempty"`
	RemoveCircuits []Circuit `json:"remove_circuits,omitempty"`
}

// NodeView is a node as the API shows it.
type NodeView struct {
	Name              string     `json:"name"`
	Role              string     `json:"role,omitempty"`
	Up                bool       `json:"up"`       // forwarding, as its neighbours' BFD sessions see it
	AgentUp           bool       `json:"agent_up"` // its agent reports (a dead agent is not a dead node)
	BootID            string     `json:"boot_id,omitempty"`
	DesiredGeneration int64      `json:"desired_generation"`
	AppliedGeneration int64      `json:"applied_generation"`
	Error             string     `json:"error,omitempty"`
	LabelsUsed        int        `json:"labels_used"`
	Ports             []PortView `json:"ports"`
	// Drained: in maintenance (e3ctl node drain). Carrying: while drained,
	// the services whose traffic still crosses it other than through its
	// own single-homed circuits; empty once it can stop without loss to
	// anyone else.
	Drained  bool     `json:"drained,omitempty"`
	Carrying []string `json:"carrying,omitempty"`
}

// PortView is one port of a node.
type PortView struct {
	Name   string `json:"name"`
	Kind   string `json:"kind"`
	MAC    string `json:"mac,omitempty"`
	LinkUp *bool  `json:"link_up,omitempty"` // as reported; absent if unknown
}

// LinkView is a fabric link as the API shows it.
type LinkView struct {
	ID           int    `json:"id"`
	Name         string `json:"name"`
	A            string `json:"a"` // node:port
	B            string `json:"b"`
	Cost         int    `json:"cost"`
	CapacityMbps int    `json:"capacity_mbps"`
	// ReservedMbps is the bandwidth the services over the link reserve.
	ReservedMbps int64 `json:"reserved_mbps"`
	// LoadMbps is the link's measured load, averaged over the
	// controller's load window, in its busier direction (the leader's
	// view; absent where nothing was measured).
	LoadMbps *float64 `json:"load_mbps,omitempty"`
	Up       bool     `json:"up"`
	// BFD is each end's session state as its agent reports it ("up",
	// "down", "init", "up (restoring)" within the wait-to-restore time, or
	// "up (neighbour pausing)" while the other end pauses);
	// absent for an end whose agent does not report.
	BFD map[string]string `json:"bfd,omitempty"`
	// Stats is each end's port traffic as its agent last reported it
	// (counters, and rates over about a second), by node.
	Stats map[string]*nodestate.PortStats `json:"stats,omitempty"`
}

// FabricView is what the fabric page's stream sends every second.
type FabricView struct {
	Time       time.Time  `json:"time"`
	Generation int64      `json:"generation"`
	Nodes      []NodeView `json:"nodes"`
	Links      []LinkView `json:"links"`
}

// Event is one entry of the controller's event log (e3ctl events).
type Event struct {
	Time   time.Time `json:"time"`
	Kind   string    `json:"kind"` // link-down, link-up, node-down, node-up, agent-down, agent-up, repair, leader
	Object string    `json:"object,omitempty"`
	Detail string    `json:"detail,omitempty"`
	// TookMS: for a repair, from the first report of the failure to the
	// commit of the new configuration.
	TookMS int64 `json:"took_ms,omitempty"`
}

// LinkCost is the body of a cost change.
type LinkCost struct {
	Cost int `json:"cost" schema:"minimum=1;maximum=1048576"`
}

// StatusView is the fabric summary.
type StatusView struct {
	Leader     bool           `json:"leader"`
	LeaderURL  string         `json:"leader_url,omitempty"`
	Generation int64          `json:"generation"`
	Nodes      int            `json:"nodes"`
	NodesUp    int            `json:"nodes_up"`
	Links      int            `json:"links"`
	LinksUp    int            `json:"links_up"`
	Services   map[string]int `json:"services"` // state -> count
	// API is this replica's API: open connections, its cap, idle ones
	// closed to make room, new ones refused while all were busy, requests
	// refused for their token.
	API *APIStats `json:"api,omitempty"`
}

// APIStats are the API's refusal and connection counters.
type APIStats struct {
	Open         int    `json:"connections"`
	Max          int    `json:"max_connections"`
	Evicted      uint64 `json:"evicted_idle"`
	Refused      uint64 `json:"refused_busy"`
	Unauthorized uint64 `json:"unauthorized"` // no token, or a wrong one (401)
	Forbidden    uint64 `json:"forbidden"`    // the read-only token for a change (403)
}

// APIError is the body of every error response.
type APIError struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		// Field is the request field the error is about, as a path
		// (services[2].circuits[0], topology.links[1].a), when one is.
		Field string `json:"field,omitempty"`
	} `json:"error"`
}

// PingRequest is the body of POST /v1/services/{name}/ping.
type PingRequest struct {
	Count int `json:"count,omitempty" schema:"minimum=1;maximum=10;description=requests to each other end, default 3"`
}

// PingResult is a pseudowire ping of a service (POST /v1/services/{name}/ping):
// MPLS echo requests sent in-band from one member's node to each other
// end, answered in-band by the egress (docs/operations.md).
type PingResult struct {
	Service  string      `json:"service"`
	From     string      `json:"from"`
	Handle   uint32      `json:"handle"`
	Sent     int         `json:"sent"`
	Received int         `json:"received"`
	Replies  []PingReply `json:"replies"`
}

// PingReply is one request's fate: its round trip, or lost.
type PingReply struct {
	To    string   `json:"to"`
	Seq   uint32   `json:"seq"`
	RTTMS *float64 `json:"rtt_ms,omitempty"` // absent: no reply
}

// TraceResult is a pseudowire trace from a service's node to one other end
// (POST /v1/services/{name}/trace): one request per TTL, each logged by
// the node where its TTL ran out, or by the egress.
type TraceResult struct {
	Service string     `json:"service"`
	From    string     `json:"from"`
	To      string     `json:"to"`
	Hops    []TraceHop `json:"hops"`
	RTTMS   *float64   `json:"rtt_ms,omitempty"` // the egress's reply, back at From
}

// TraceHop is what the request of one TTL reached: a transit node (with the
// label it came on and the one it would have left on) or the egress; no
// node when nothing answered. TimeMS is from the request's sending to its
// arrival there, by the two nodes' clocks.
type TraceHop struct {
	TTL      int      `json:"ttl"`
	Node     string   `json:"node,omitempty"`
	Kind     string   `json:"kind,omitempty"` // transit or egress
	LabelIn  uint32   `json:"label_in,omitempty"`
	LabelOut uint32   `json:"label_out,omitempty"`
	TimeMS   *float64 `json:"time_ms,omitempty"`
}

// JSONSchema is a circuit's JSON Schema (the API's document): every field
// is optional in a request (a site's circuit has a segment and no node or
// port; no vlan is untagged).
func (Circuit) JSONSchema() map[string]any {
	// "" too: a site's circuit has no node or port, a node's no segment.
	name := map[string]any{"type": "string", "pattern": "^([a-z0-9-]{1,15})?$"}
	return map[string]any{"type": "object", "additionalProperties": false, "properties": map[string]any{
		"node": name, "port": name, "segment": name,
		"vlan":  dpconfig.VLAN(0).JSONSchema(),
		"storm": map[string]any{"$ref": "#/components/schemas/Storm"},
	}}
}
