// Package nodestate is the contract between the controller and the agents
// in etcd: the keys of a node's desired config and status, and their JSON
// values (docs/control-plane.md, "etcd keys"). Both sides import it, so the
// two can only disagree by changing this one file; it depends on no etcd
// code.
package nodestate

import (
	"strconv"
	"time"
)

// Key layout: everything lives under Prefix.
const (
	Prefix        = "/e3/v1/"
	DesiredPrefix = Prefix + "desired/"
	StatusPrefix  = Prefix + "status/"
)

// A node's desired state is a set of small keys under DesiredNode(node),
// written by the controller, each change in one transaction that touches
// only the keys it changes (docs/control-plane.md, "etcd keys"):
//
//	<prefix>generation       the node's generation: an int64, rewritten by
//	                         every transaction that changes the node
//	<prefix>node             the node's own fragment (settings, ports,
//	                         nexthops, link BFD sessions)
//	<prefix>service/<name>   one service's fragment on the node
//	<prefix>check/<key>      one path check's fragment on the node
//	<prefix>prepare/<name>   what a change of service <name> creates on the
//	                         node, written a step before the change itself
//	                         and removed with it (make-before-break across
//	                         nodes)
//	<prefix>oam/<handle>     a pseudowire ping or trace for the node to send
//	                         (OAMRequest), under a short lease: no fragment
//
// Fragments are dpconfig.Fragment JSON; the node's config is their merge.
// Until the generation key exists a node has no desired state at all.
const (
	GenerationSuffix = "generation"
	BaseSuffix       = "node"
	ServiceInfix     = "service/"
	CheckInfix       = "check/"
	PrepareInfix     = "prepare/"
	OAMInfix         = "oam/"
)

// DesiredNode is the prefix of node's desired keys.
func DesiredNode(node string) string { return DesiredPrefix + node + "/" }

// GenerationKey, BaseKey, ServiceKey and CheckKey name node's desired keys.
func GenerationKey(node string) string    { return DesiredNode(node) + GenerationSuffix }
func BaseKey(node string) string          { return DesiredNode(node) + BaseSuffix }
func ServiceKey(node, name string) string { return DesiredNode(node) + ServiceInfix + name }
func CheckKey(node, check string) string  { return DesiredNode(node) + CheckInfix + check }
func PrepareKey(node, name string) string { return DesiredNode(node) + PrepareInfix + name }
func OAMKey(node string, handle uint32) string {
	return DesiredNode(node) + OAMInfix + strconv.FormatUint(uint64(handle), 10)
}
func StatusKey(node string) string { return StatusPrefix + node }

// PortStatus is one port's link state in NodeStatus, and its traffic.
type PortStatus struct {
	Name   string     `json:"name"`
	LinkUp bool       `json:"link_up"`
	Stats  *PortStats `json:"stats,omitempty"`
}

// WithoutStats is ports without their traffic, for comparing statuses.
func WithoutStats(ports []PortStatus) []PortStatus {
	out := make([]PortStatus, len(ports))
	for i, p := range ports {
		p.Stats = nil
		out[i] = p
	}
	return out
}

// PortStats are a port's counters and their rates over about the last
// second, as polled when the status was written: they ride along with
// writes made for other reasons and the periodic one, and never cause a
// write of their own. The fabric page shows them per link.
type PortStats struct {
	RxPkts  uint64  `json:"rx_pkts"`
	RxBytes uint64  `json:"rx_bytes"`
	TxPkts  uint64  `json:"tx_pkts"`
	TxBytes uint64  `json:"tx_bytes"`
	RxPPS   float64 `json:"rx_pps"`
	TxPPS   float64 `json:"tx_pps"`
	RxBPS   float64 `json:"rx_bps"` // bits per second
	TxBPS   float64 `json:"tx_bps"`
}

// BFDStatus is one BFD session of the node's datapath, as last polled: the
// in-band view of one fabric adjacency (Label 0; the session id is the link
// id) or of one path to another leaf (a path check; Label is the first label
// of its LSP). Usable is what the datapath's protection uses: false from the
// moment the session fails until it has been up for its wait-to-restore time,
// and a path check's while a neighbour on it pauses (Paused: this session's).
type BFDStatus struct {
	ID     uint32 `json:"id"`
	Label  uint32 `json:"label,omitempty"`
	Port   string `json:"port"`
	State  string `json:"state"`
	Diag   string `json:"diag"`
	Usable bool   `json:"usable"`
	Paused bool   `json:"paused,omitempty"`
	Downs  uint64 `json:"downs"`
}

// NodeStatus is the value of /e3/v1/status/<node>, written by the node's
// agent under a lease, so it disappears when the agent stops or loses etcd.
// No key means the agent is down, not the node: whether a node forwards is
// what its neighbours' BFD sessions say (docs/ha.md).
type NodeStatus struct {
	Node              string       `json:"node"`
	BootID            string       `json:"boot_id"` // the datapath's; "" if never reached
	AppliedGeneration int64        `json:"applied_generation"`
	Ports             []PortStatus `json:"ports"`
	BFD               []BFDStatus  `json:"bfd,omitempty"`
	Error             string       `json:"error"`
	Updated           time.Time    `json:"updated"` // RFC 3339
	// MACTable is the datapath's MAC table capacity (0: not known yet):
	// the controller admits E-LANs' MAC limits against it.
	MACTable int64 `json:"mac_table,omitempty"`
	// OAM is what the datapath's pseudowire OAM log saw in the last
	// OAMKeep (pw_oam_log): the controller's ping and trace read it.
	OAM []OAMEvent `json:"oam,omitempty"`
	// Services is the ingress rate (bits per second, from the node's
	// circuits) of the busiest services on the node, by name, at most
	// MaxServiceRates of them: the controller's load cost tells a
	// service's own traffic from the rest of a link's.
	Services map[string]float64 `json:"service_rx_bps,omitempty"`
}

// MaxServiceRates bounds NodeStatus.Services.
const MaxServiceRates = 64

// OAMKeep is how long an agent reports a PW OAM event.
const OAMKeep = time.Minute

// OAMRequest asks a node's datapath to send MPLS echo requests into one
// service's pseudowire (pw_ping), one per probe, all with one handle.
type OAMRequest struct {
	Handle  uint32     `json:"handle"`
	Service uint32     `json:"service"` // the service's datapath id
	Probes  []OAMProbe `json:"probes"`
}

// OAMProbe is one request: to an E-LAN's remote endpoint Source, with TTL
// (0: the node's).
type OAMProbe struct {
	Source uint16 `json:"source,omitempty"`
	TTL    uint8  `json:"ttl,omitempty"`
	Seq    uint32 `json:"seq"`
}

// OAMEvent is one event of a datapath's PW OAM log (pw_oam_log): a request
// sent, seen at a transit node whose TTL ran out or at its egress, or a
// reply back at its origin.
type OAMEvent struct {
	Kind       string `json:"kind"` // sent, transit, egress, reply
	Handle     uint32 `json:"handle"`
	Seq        uint32 `json:"seq"`
	TimeNS     int64  `json:"time_ns"` // wall clock
	TTL        int    `json:"ttl"`
	LabelIn    uint32 `json:"label_in,omitempty"`
	LabelOut   uint32 `json:"label_out,omitempty"`
	Service    *int64 `json:"service,omitempty"`
	Source     uint16 `json:"source,omitempty"`
	RTTNS      int64  `json:"rtt_ns,omitempty"`
	ReturnCode int    `json:"return_code,omitempty"`
}
