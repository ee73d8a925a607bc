// Package dpconfig holds the configuration of one e3-vswitchd, in the exact
// JSON shape of its config_dump / config_load methods (docs/control-api.md).
// It is also the desired config the controller writes to etcd for each node,
// so the agent's job is a diff between two values of this one type.
package dpconfig

import (
	"encoding/json"
	"fmt"
)

// Version is the schema version of Config (the "version" field).
const Version = 1

// Config is a whole node: what config_dump returns and config_load takes.
type Config struct {
	Version  int       `json:"version"`
	Settings Settings  `json:"settings"`
	Ports    []Port    `json:"ports"`
	Nexthops []Nexthop `json:"nexthops"`
	BFD      []BFD     `json:"bfd"`
	NHLFEs   []NHLFE   `json:"nhlfes"`
	Services []Service `json:"services"`
	Circuits []Circuit `json:"circuits"`
	Labels   []Label   `json:"labels"`
}

// Settings are the node-wide settings (settings_get / settings_set).
type Settings struct {
	TTL         int  `json:"ttl"`
	ControlWord bool `json:"control_word"`
	MACAgingS   int  `json:"mac_aging_s"`
	MACLimit    int  `json:"mac_limit"`
	// Move damping: more than MACMoveLimit moves of a MAC within
	// MACMoveWindowS freeze it for MACMoveWindowS (0: no damping).
	MACMoveLimit   int `json:"mac_move_limit"`
	MACMoveWindowS int `json:"mac_move_window_s,omitempty"`
}

// Port kinds.
const (
	KindCustomer = "customer"
	KindFabric   = "fabric"
)

// Port is a DPDK device attached to the switch (port_add).
type Port struct {
	Name     string `json:"name"`
	Devargs  string `json:"devargs"`
	Kind     string `json:"kind"`
	MTU      int    `json:"mtu,omitempty"`
	MAC      string `json:"mac,omitempty"`
	RxQueues int    `json:"rx_queues,omitempty"`
}

// Nexthop is (fabric port, neighbour's MAC) (nexthop_add).
type Nexthop struct {
	ID   uint32 `json:"id"`
	Port string `json:"port"`
	MAC  string `json:"mac"`
}

// BFD is a BFD session (bfd_add): the in-band OAM that detects a failed
// link, path or hung node, and the protection that protected NHLFEs watch
// (docs/ha.md). Without Label it checks the adjacency toward Nexthop; with
// Label it checks a path: its frames enter the path's LSP at Nexthop with
// Label, and come back through an OAM label entry naming the session. Zero
// timers mean the datapath's defaults.
type BFD struct {
	ID         uint32 `json:"id"`
	Nexthop    uint32 `json:"nexthop"`
	Label      uint32 `json:"label,omitempty"`
	TxMS       int    `json:"tx_ms,omitempty"`
	RxMS       int    `json:"rx_ms,omitempty"`
	Multiplier int    `json:"multiplier,omitempty"`
	WTRS       *int   `json:"wtr_s,omitempty"` // nil: the default; 0 is "restore at once"
}

// NHLFE is (nexthop, label to write) (nhlfe_add), or, when Protect is set,
// a protected NHLFE with neither: it resolves to Protect.Primary while BFD
// session Protect.Watch finds that path usable, else to Protect.Backup.
type NHLFE struct {
	ID      uint32
	Nexthop uint32
	Label   uint32
	Protect *Protection
}

// Protection is what a protected NHLFE stands for.
type Protection struct {
	Primary, Backup uint32 // plain NHLFEs
	Watch           uint32 // the BFD session watching the primary's path
}

// nhlfeJSON is the wire form: {id, nexthop, label} or {id, primary, backup, watch}.
type nhlfeJSON struct {
	ID      uint32  `json:"id"`
	Nexthop *uint32 `json:"nexthop,omitempty"`
	Label   *uint32 `json:"label,omitempty"`
	Primary *uint32 `json:"primary,omitempty"`
	Backup  *uint32 `json:"backup,omitempty"`
	Watch   *uint32 `json:"watch,omitempty"`
}

// MarshalJSON writes the plain or the protected form.
func (n NHLFE) MarshalJSON() ([]byte, error) {
	j := nhlfeJSON{ID: n.ID}
	if p := n.Protect; p != nil {
		j.Primary, j.Backup, j.Watch = &p.Primary, &p.Backup, &p.Watch
	} else {
		j.Nexthop, j.Label = &n.Nexthop, &n.Label
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads either form; a mix is an error.
func (n *NHLFE) UnmarshalJSON(b []byte) error {
	var j nhlfeJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	plain := j.Nexthop != nil || j.Label != nil
	prot := j.Primary != nil || j.Backup != nil || j.Watch != nil
	switch {
	case plain && prot:
		return fmt.Errorf("nhlfe %d: both nexthop/label and primary/backup/watch", j.ID)
	case prot:
		if j.Primary == nil || j.Backup == nil || j.Watch == nil {
			return fmt.Errorf("nhlfe %d: protected needs primary, backup and watch", j.ID)
		}
		*n = NHLFE{ID: j.ID, Protect: &Protection{Primary: *j.Primary, Backup: *j.Backup, Watch: *j.Watch}}
	default:
		*n = NHLFE{ID: j.ID}
		if j.Nexthop != nil {
			n.Nexthop = *j.Nexthop
		}
		if j.Label != nil {
			n.Label = *j.Label
		}
	}
	return nil
}

// Service types.
const (
	ServiceELine = "eline"
	ServiceELAN  = "elan"
)

// Remote is an E-LAN remote endpoint: MACs learned from Source go to NHLFE.
type Remote struct {
	Source uint16 `json:"source"`
	NHLFE  uint32 `json:"nhlfe"`
}

// Service is an E-Line or E-LAN instance on this node (service_add).
type Service struct {
	ID       uint32   `json:"id"`
	Type     string   `json:"type"`
	Name     string   `json:"name,omitempty"`
	NHLFE    *uint32  `json:"nhlfe,omitempty"`     // eline: toward the remote leaf; nil = hairpin
	MACLimit int      `json:"mac_limit,omitempty"` // elan; 0 = node default
	Remotes  []Remote `json:"remotes,omitempty"`   // elan
	Branches []uint32 `json:"branches,omitempty"`  // elan: this leaf's flood branches (nhlfe ids)
}

// Circuit is (customer port, VLAN or untagged) -> service (circuit_add).
type Circuit struct {
	ID      uint32 `json:"id"`
	Port    string `json:"port"`
	VLAN    VLAN   `json:"vlan"`
	Service uint32 `json:"service"`
	// MACLimit caps the MACs an E-LAN learns on the circuit; 0: none of its own.
	MACLimit int `json:"mac_limit,omitempty"`
}

// Label entry types.
const (
	LabelSwap      = "swap"
	LabelELine     = "eline"
	LabelELAN      = "elan"
	LabelReplicate = "replicate"
	LabelOAM       = "oam"
)

// Label is one entry of the node's label table (label_add).
type Label struct {
	Label    uint32   `json:"label"`
	Type     string   `json:"type"`
	NHLFE    *uint32  `json:"nhlfe,omitempty"`    // swap
	Service  *uint32  `json:"service,omitempty"`  // eline, elan, replicate with local delivery
	Source   *uint16  `json:"source,omitempty"`   // elan, replicate with local delivery
	RPFPort  string   `json:"rpf_port,omitempty"` // replicate
	Branches []uint32 `json:"branches,omitempty"` // replicate (nhlfe ids)
	Session  *uint32  `json:"session,omitempty"`  // oam: the path's BFD session
	// InPorts are the fabric ports the entry takes frames from: the ports
	// its upstreams send on. Empty takes any port.
	InPorts []string `json:"in_ports,omitempty"`
}
