// Package nodestate is the contract between the controller and the agents
// in etcd: the keys of a node's desired config and status, and their JSON
// values (docs/control-plane.md, "etcd keys"). Both sides import it, so the
// two can only disagree by changing this one file; it depends on no etcd
// code.
package nodestate

import (
	"time"

	"github.com/e3fabric/e3fabric/control/internal/dpconfig"
)

// Key layout: everything lives under Prefix.
const (
	Prefix        = "/e3/v1/"
	DesiredPrefix = Prefix + "desired/"
	StatusPrefix  = Prefix + "status/"
)

// DesiredKey and StatusKey name one node's keys.
func DesiredKey(node string) string { return DesiredPrefix + node }
func StatusKey(node string) string  { return StatusPrefix + node }

// Desired is the value of /e3/v1/desired/<node>, written by the controller
// in one transaction per change.
type Desired struct {
	Generation int64           `json:"generation"`
	Config     dpconfig.Config `json:"config"`
}

// PortStatus is one port's link state in NodeStatus.
type PortStatus struct {
	Name   string `json:"name"`
	LinkUp bool   `json:"link_up"`
}

// BFDStatus is one BFD session of the node's datapath, as last polled: the
// in-band view of one fabric adjacency (Label 0; the session id is the link
// id) or of one path to another leaf (a path check; Label is the first label
// of its LSP). Usable is what the datapath's protection uses: false from the
// moment the session fails until it has been up for its wait-to-restore time.
type BFDStatus struct {
	ID     uint32 `json:"id"`
	Label  uint32 `json:"label,omitempty"`
	Port   string `json:"port"`
	State  string `json:"state"`
	Diag   string `json:"diag"`
	Usable bool   `json:"usable"`
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
}
