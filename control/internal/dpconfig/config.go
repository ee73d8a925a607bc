// Package dpconfig holds the configuration of one e3-vswitchd, in the exact
// JSON shape of its config_dump / config_load methods (docs/control-api.md).
// It is also the desired config the controller writes to etcd for each node,
// so the agent's job is a diff between two values of this one type.
package dpconfig

// Version is the schema version of Config (the "version" field).
const Version = 1

// Config is a whole node: what config_dump returns and config_load takes.
type Config struct {
	Version  int       `json:"version"`
	Settings Settings  `json:"settings"`
	Ports    []Port    `json:"ports"`
	Nexthops []Nexthop `json:"nexthops"`
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

// NHLFE is (nexthop, label to write) (nhlfe_add).
type NHLFE struct {
	ID      uint32 `json:"id"`
	Nexthop uint32 `json:"nexthop"`
	Label   uint32 `json:"label"`
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
}

// Label entry types.
const (
	LabelSwap      = "swap"
	LabelELine     = "eline"
	LabelELAN      = "elan"
	LabelReplicate = "replicate"
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
}
