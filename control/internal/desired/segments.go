package desired

import (
	"slices"

	"github.com/e3fabric/e3fabric/control/internal/model"
	"github.com/e3fabric/e3fabric/control/internal/paths"
)

// bumFilter is what an E-LAN circuit on a multi-homed segment takes of the
// BUM frames that come from the fabric (the datapath's circuit params
// non_df and peers; docs/multihoming.md).
type bumFilter struct {
	nonDF bool     // another leaf is the segment's designated forwarder
	peers []uint16 // the source ids of the segment's other leaves
}

// bumFilters gives each of the service's circuits on a segment its filter.
// Split horizon is local bias (RFC 8365 section 8.3.2): the leaf a BUM
// frame enters delivers it to its own segments itself, so a leaf never
// delivers BUM from a leaf it shares a segment with into that segment; it
// costs no label, only the peers' source ids. Of the other BUM, only the
// segment's designated forwarder delivers: one leaf per (service,
// segment) among the reachable ones, so a leaf that fails hands its
// segments to the others at the controller's next computation.
func bumFilters(s *model.ServiceSpec, r *model.Route) map[model.CircuitKey]bumFilter {
	dfs := DesignatedForwarders(s, r)
	out := map[model.CircuitKey]bumFilter{}
	for _, c := range s.Circuits {
		if c.Segment == "" {
			continue
		}
		f := bumFilter{nonDF: c.Node != dfs[c.Segment]}
		for _, o := range s.Circuits {
			if o.Segment == c.Segment && o.Node != c.Node {
				f.peers = append(f.peers, r.Sources[o.Node])
			}
		}
		slices.Sort(f.peers)
		out[c.Key()] = f
	}
	return out
}

// DesignatedForwarders returns each of the service's segments' DF, elected
// among the segment's leaves the route reaches.
func DesignatedForwarders(s *model.ServiceSpec, r *model.Route) map[string]string {
	var out map[string]string
	live := map[string][]string{}
	for _, c := range s.Circuits {
		if c.Segment != "" && !slices.Contains(r.Unreachable, c.Node) {
			live[c.Segment] = append(live[c.Segment], c.Node)
		}
	}
	for _, c := range s.Circuits {
		if c.Segment != "" {
			if out == nil {
				out = map[string]string{}
			}
			out[c.Segment] = DesignatedForwarder(s.Name, c.Segment, live[c.Segment])
		}
	}
	return out
}

// DesignatedForwarder elects, of the nodes a service's segment is reachable
// through, the one that delivers BUM from the fabric into it: the highest
// random weight of (service, segment, node), as RFC 8584 section 3.2 does
// for EVPN. The services of a segment spread evenly over its leaves, and
// when one leaf goes, only the services it served move. "" if none.
func DesignatedForwarder(service, segment string, nodes []string) string {
	best, bestW := "", uint64(0)
	for _, n := range nodes {
		w := paths.Weight(service, segment, n)
		if best == "" || w > bestW || (w == bestW && n < best) {
			best, bestW = n, w
		}
	}
	return best
}
