package dprpc

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/e3fabric/e3fabric/control/internal/dpconfig"
)

// Typed helpers for the methods the agent and the CLI use. Object params
// are the dpconfig types themselves: they are the exact JSON shape of the
// _add methods (config_dump is a list of _add params).

// SystemInfo is the result of system_info.
type SystemInfo struct {
	Version  string           `json:"version"`
	BootID   string           `json:"boot_id"` // new random id at every datapath start
	Workers  int              `json:"workers"`
	PollMode string           `json:"poll_mode"`
	UptimeS  float64          `json:"uptime_s"`
	Limits   map[string]int64 `json:"limits"`
}

// SystemInfo calls system_info.
func (c *Client) SystemInfo(ctx context.Context) (SystemInfo, error) {
	var r SystemInfo
	err := c.Call(ctx, "system_info", nil, &r)
	return r, err
}

// ConfigDump calls config_dump: everything the datapath is programmed with.
func (c *Client) ConfigDump(ctx context.Context) (dpconfig.Config, error) {
	var r dpconfig.Config
	err := c.Call(ctx, "config_dump", nil, &r)
	return r, err
}

// SettingsSet calls settings_set with every setting.
func (c *Client) SettingsSet(ctx context.Context, s dpconfig.Settings) error {
	return c.Call(ctx, "settings_set", s, nil)
}

// LinkState is a port's link: the datapath writes it as a bool or as
// "up"/"down"; both decode.
type LinkState bool

func (l *LinkState) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	switch v := v.(type) {
	case bool:
		*l = LinkState(v)
	case string:
		if v != "up" && v != "down" {
			return fmt.Errorf("link %q: want up or down", v)
		}
		*l = v == "up"
	default:
		return fmt.Errorf("link %s: want a bool or up/down", b)
	}
	return nil
}

// PortStats are a port's counters.
type PortStats struct {
	RxPkts  uint64 `json:"rx_pkts"`
	RxBytes uint64 `json:"rx_bytes"`
	TxPkts  uint64 `json:"tx_pkts"`
	TxBytes uint64 `json:"tx_bytes"`
	// TX bursts retried after a partial one (a VM's ring, vhost-user).
	TxRetries uint64            `json:"tx_retries"`
	Drops     map[string]uint64 `json:"drops"`
}

// PortInfo is one element of port_list.
type PortInfo struct {
	dpconfig.Port
	PortID    int       `json:"port_id"`
	Link      LinkState `json:"link"`
	SpeedMbps uint32    `json:"speed_mbps"`
	Workers   []int     `json:"workers"`
	Stats     PortStats `json:"stats"`
}

// PortList calls port_list for every port.
func (c *Client) PortList(ctx context.Context) ([]PortInfo, error) {
	var r []PortInfo
	err := c.Call(ctx, "port_list", nil, &r)
	return r, err
}

// ServiceInfo is one service of service_list: its configuration and the
// counters the agent reads (the datapath reports more).
type ServiceInfo struct {
	dpconfig.Service
	Stats struct {
		RxPkts  uint64 `json:"rx_pkts"`
		RxBytes uint64 `json:"rx_bytes"`
	} `json:"stats"`
}

// ServiceList calls service_list for every service.
func (c *Client) ServiceList(ctx context.Context) ([]ServiceInfo, error) {
	var r []ServiceInfo
	err := c.Call(ctx, "service_list", nil, &r)
	return r, err
}

// AddResult is what every _add answers.
type AddResult struct {
	Changed bool `json:"changed"`
}

func (c *Client) add(ctx context.Context, method string, params any) (bool, error) {
	var r AddResult
	err := c.Call(ctx, method, params, &r)
	return r.Changed, err
}

// del calls an _del method; a missing object is success (the caller wants
// it gone), so deletes are idempotent.
func (c *Client) del(ctx context.Context, method string, params any) error {
	if err := c.Call(ctx, method, params, nil); err != nil && !IsNotFound(err) {
		return err
	}
	return nil
}

// PortAdd adds or replaces a port; changed is false when it was already so.
func (c *Client) PortAdd(ctx context.Context, p dpconfig.Port) (changed bool, err error) {
	return c.add(ctx, "port_add", p)
}

// PortDel removes a port (no error if it does not exist).
func (c *Client) PortDel(ctx context.Context, name string) error {
	return c.del(ctx, "port_del", map[string]string{"name": name})
}

// NexthopAdd adds or replaces a nexthop.
func (c *Client) NexthopAdd(ctx context.Context, n dpconfig.Nexthop) (bool, error) {
	return c.add(ctx, "nexthop_add", n)
}

// NexthopDel removes a nexthop (no error if it does not exist).
func (c *Client) NexthopDel(ctx context.Context, id uint32) error {
	return c.del(ctx, "nexthop_del", map[string]uint32{"id": id})
}

// BFDAdd adds a BFD session or changes its timers.
func (c *Client) BFDAdd(ctx context.Context, b dpconfig.BFD) (bool, error) {
	return c.add(ctx, "bfd_add", b)
}

// BFDDel removes a BFD session (no error if it does not exist).
func (c *Client) BFDDel(ctx context.Context, id uint32) error {
	return c.del(ctx, "bfd_del", map[string]uint32{"id": id})
}

// BFDInfo is one session of bfd_list: its configuration, state and counters.
type BFDInfo struct {
	dpconfig.BFD
	Port         string `json:"port"`
	State        string `json:"state"`
	RemoteState  string `json:"remote_state"`
	Diag         string `json:"diag"`
	LocalDisc    uint32 `json:"local_disc"`
	RemoteDisc   uint32 `json:"remote_disc"`
	TxIntervalUS uint32 `json:"tx_interval_us"`
	DetectTimeUS uint32 `json:"detect_time_us"`
	Usable       bool   `json:"usable"`
	Paused       bool   `json:"paused"` // the neighbour slowed its interval: pausing (docs/ha.md)
	TxPkts       uint64 `json:"tx_pkts"`
	RxPkts       uint64 `json:"rx_pkts"`
	Ups          uint64 `json:"ups"`
	Downs        uint64 `json:"downs"`
	Pauses       uint64 `json:"pauses"`
	SinceMS      uint64 `json:"since_ms"`
}

// BFDList calls bfd_list.
func (c *Client) BFDList(ctx context.Context) ([]BFDInfo, error) {
	var r []BFDInfo
	err := c.Call(ctx, "bfd_list", nil, &r)
	return r, err
}

// NHLFEAdd adds or replaces an nhlfe.
func (c *Client) NHLFEAdd(ctx context.Context, n dpconfig.NHLFE) (bool, error) {
	return c.add(ctx, "nhlfe_add", n)
}

// NHLFEDel removes an nhlfe (no error if it does not exist).
func (c *Client) NHLFEDel(ctx context.Context, id uint32) error {
	return c.del(ctx, "nhlfe_del", map[string]uint32{"id": id})
}

// ServiceAdd adds or replaces a service.
func (c *Client) ServiceAdd(ctx context.Context, s dpconfig.Service) (bool, error) {
	return c.add(ctx, "service_add", s)
}

// ServiceDel removes a service (no error if it does not exist).
func (c *Client) ServiceDel(ctx context.Context, id uint32) error {
	return c.del(ctx, "service_del", map[string]uint32{"id": id})
}

// CircuitAdd adds or replaces a circuit.
func (c *Client) CircuitAdd(ctx context.Context, ci dpconfig.Circuit) (bool, error) {
	return c.add(ctx, "circuit_add", ci)
}

// CircuitDel removes a circuit (no error if it does not exist).
func (c *Client) CircuitDel(ctx context.Context, id uint32) error {
	return c.del(ctx, "circuit_del", map[string]uint32{"id": id})
}

// LabelAdd adds or replaces a label entry.
func (c *Client) LabelAdd(ctx context.Context, l dpconfig.Label) (bool, error) {
	return c.add(ctx, "label_add", l)
}

// LabelDel removes a label entry (no error if it does not exist).
func (c *Client) LabelDel(ctx context.Context, label uint32) error {
	return c.del(ctx, "label_del", map[string]uint32{"label": label})
}
