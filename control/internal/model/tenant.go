package model

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/e3fabric/e3fabric/control/internal/dpconfig"
	"github.com/e3fabric/e3fabric/control/internal/topology"
)

// Tenant is a customer of the fabric: it owns services, has tokens that
// reach only them, quotas, and the customer ports and VLANs its services
// may use (docs/tenants.md).
type Tenant struct {
	Name  string       `json:"name" schema:"pattern=^[a-z0-9][a-z0-9_-]{0,31}$"`
	Quota TenantQuota  `json:"quota"`
	Ports []TenantPort `json:"ports,omitempty" schema:"description=the customer ports its circuits may use (none: no port)"`
}

// TenantQuota caps what a tenant's services may hold together (0: no cap).
type TenantQuota struct {
	Services      int `json:"services,omitempty" schema:"minimum=0;maximum=1000000;description=services (0: no cap)"`
	Circuits      int `json:"circuits,omitempty" schema:"minimum=0;maximum=1000000;description=circuits of all its services (0: no cap)"`
	MACs          int `json:"macs,omitempty" schema:"minimum=0;maximum=16777216;description=the sum of its E-LANs' mac_limit, each E-LAN giving one under a cap (0: no cap)"`
	BandwidthMbps int `json:"bandwidth_mbps,omitempty" schema:"minimum=0;maximum=100000000;description=the sum of its services' bandwidth_mbps (0: no cap)"`
}

// TenantPort is a customer port a tenant may use, and which VLANs of it.
type TenantPort struct {
	Node  string `json:"node" schema:"pattern=^[a-z0-9-]{1,15}$"`
	Port  string `json:"port" schema:"pattern=^[A-Za-z0-9_.-]{1,15}$"`
	VLANs string `json:"vlans,omitempty" schema:"pattern=^((untagged|[0-9]{1,4}(-[0-9]{1,4})?)(,(untagged|[0-9]{1,4}(-[0-9]{1,4})?))*)?$;description=VLANs it may use (100-199,300,untagged), empty: all"`
}

// Allows says whether c is on one of t's ports and VLANs.
func (t *Tenant) Allows(c Circuit) bool {
	for _, p := range t.Ports {
		if p.Node == c.Node && p.Port == c.Port && vlanIn(p.VLANs, c.VLAN) {
			return true
		}
	}
	return false
}

func vlanIn(ranges string, v dpconfig.VLAN) bool {
	if ranges == "" {
		return true
	}
	for _, r := range strings.Split(ranges, ",") {
		lo, hi, untagged := vlanRange(r)
		if untagged == (v == dpconfig.Untagged) && (untagged || int(v) >= lo && int(v) <= hi) {
			return true
		}
	}
	return false
}

// vlanRange reads one element of a VLAN list: "untagged", "N" or "N-M"
// (the schema's pattern has checked its shape).
func vlanRange(r string) (lo, hi int, untagged bool) {
	if r == "untagged" {
		return 0, 0, true
	}
	a, b, _ := strings.Cut(r, "-")
	lo, _ = strconv.Atoi(a)
	hi = lo
	if b != "" {
		hi, _ = strconv.Atoi(b)
	}
	return lo, hi, false
}

// Validate checks what the schema cannot: VLAN ranges in order and in
// 1..4094, each port once.
func (t *Tenant) Validate() error {
	seen := map[[2]string]bool{}
	for i, p := range t.Ports {
		if seen[[2]string{p.Node, p.Port}] {
			return fmt.Errorf("tenant %s: ports[%d]: %s:%s is listed twice", t.Name, i, p.Node, p.Port)
		}
		seen[[2]string{p.Node, p.Port}] = true
		if p.VLANs == "" {
			continue
		}
		for _, r := range strings.Split(p.VLANs, ",") {
			if lo, hi, untagged := vlanRange(r); !untagged && (lo < 1 || hi > 4094 || lo > hi) {
				return fmt.Errorf("tenant %s: ports[%d]: VLAN range %q: want 1..4094, low to high", t.Name, i, r)
			}
		}
	}
	return nil
}

// TenantUsage is what a tenant's services hold, against its quota.
type TenantUsage struct {
	Services      int `json:"services"`
	Circuits      int `json:"circuits"`
	MACs          int `json:"macs"`
	BandwidthMbps int `json:"bandwidth_mbps"`
}

// Add is u with service s counted in.
func (u TenantUsage) Add(s *ServiceSpec) TenantUsage {
	u.Services++
	u.Circuits += len(s.Circuits)
	if s.Type == ELAN {
		u.MACs += s.MACLimit
	}
	u.BandwidthMbps += s.BandwidthMbps
	return u
}

// TenantView is a tenant as the API shows it.
type TenantView struct {
	Tenant
	Usage  TenantUsage `json:"usage"`
	Tokens []TokenInfo `json:"tokens"`
}

// Token roles.
const (
	RoleAdmin = "admin"
	RoleRead  = "read"
)

// TokenRequest asks for a new token of a tenant.
type TokenRequest struct {
	Role string `json:"role" schema:"enum=admin|read;description=admin: reads and changes its services, read: reads them"`
}

// TokenInfo describes a token without giving it: its id (the start of
// its digest, to revoke it by), role and creation time.
type TokenInfo struct {
	ID      string    `json:"id"`
	Tenant  string    `json:"tenant"`
	Role    string    `json:"role"`
	Created time.Time `json:"created"`
}

// NewToken is a token as created: the only time the token itself is shown.
type NewToken struct {
	TokenInfo
	Token string `json:"token"`
}

// PathConstraints are what a service asks of its paths (docs/tenants.md);
// the topology file's services take them too.
type PathConstraints = topology.PathConstraints

// TenantStreamView is what GET /v1/stream sends a tenant's token every
// second (a `services` event): its services and their status.
type TenantStreamView struct {
	Time     time.Time     `json:"time"`
	Tenant   string        `json:"tenant"`
	Services []ServiceView `json:"services"`
}
