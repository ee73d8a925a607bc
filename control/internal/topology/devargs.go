package topology

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
)

// A port's devargs reach the datapath's rte_dev_probe, which runs as root:
// the topology takes only these drivers and keys, the list the datapath
// checks again (datapath/src/node/devargs.c), which also keeps every file
// under its own directory. net_pcap, which writes files, is for tests of
// the datapath alone and never comes from a topology.
type devargsRule struct {
	keys      []string
	pathKeys  []string // keys whose value is a file
	mustHaves []string // key=value pairs it must carry
}

var devargsRules = map[string]devargsRule{
	"net_af_packet": {keys: []string{"iface", "qpairs", "blocksz", "framesz", "framecnt", "qdisc_bypass", "fanout_mode"}},
	"net_af_xdp":    {keys: []string{"iface", "start_queue", "queue_count", "shared_umem", "busy_budget", "force_copy"}},
	// An abstract socket would be open to any local user.
	"net_memif":       {keys: []string{"id", "role", "bsize", "rsize", "mac", "zero-copy", "socket-abstract"}, pathKeys: []string{"socket"}, mustHaves: []string{"socket-abstract=no"}},
	"net_vhost":       {keys: []string{"queues", "client", "iommu-support", "postcopy-support", "tso", "linear-buffer", "ext-buffer"}, pathKeys: []string{"iface"}},
	"net_virtio_user": {keys: []string{"queues", "queue_size", "server", "mrg_rxbuf", "in_order", "packed_vq", "mac"}, pathKeys: []string{"path"}},
	"net_tap":         {keys: []string{"iface", "mac"}},
	"net_null":        {keys: []string{"size", "copy", "no-rx"}},
	"net_ring":        {},
}

var pciRE = regexp.MustCompile(`^([0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$`)

// CheckDevargs refuses devargs outside the allow-list, naming the device
// or the key.
func CheckDevargs(devargs string) error {
	if devargs == "" || pciRE.MatchString(devargs) {
		return nil
	}
	name, args, _ := strings.Cut(devargs, ",")
	var driver string
	for d := range devargsRules {
		if strings.HasPrefix(name, d) && len(d) > len(driver) {
			driver = d
		}
	}
	if driver == "" {
		return fmt.Errorf("devargs: device %s is not allowed (net_af_packet, net_af_xdp, net_memif, net_vhost, net_virtio_user, net_tap, net_null, net_ring, a PCI address)", name)
	}
	r := devargsRules[driver]
	var have []string
	for kv := range strings.SplitSeq(args, ",") {
		if args == "" {
			break
		}
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case slices.Contains(r.pathKeys, k):
			if !path.IsAbs(v) || strings.Contains(v, "..") || path.Clean(v) != v {
				return fmt.Errorf("devargs: key %s: want an absolute path without '..' (under the node's run directory)", k)
			}
		case !slices.Contains(r.keys, k):
			return fmt.Errorf("devargs: key %s is not allowed for %s", k, driver)
		}
		have = append(have, kv)
	}
	for _, m := range r.mustHaves {
		if !slices.Contains(have, m) {
			return fmt.Errorf("devargs: %s ports need %s", driver, m)
		}
	}
	return nil
}
