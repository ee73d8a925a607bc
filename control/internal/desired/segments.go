package desired

import (
	"hash/fnv"
	"slices"
	"strings"

	"github.com/e3fabric/e3fabric/control/internal/dpconfig"
	"github.com/e3fabric/e3fabric/control/internal/model"
	"github.com/e3fabric/e3fabric/control/internal/paths"
)

// site is what an E-LAN circuit on a multi-homed site is told (the
// datapath's circuit params non_df, peers, segment_source, segment_label
// and site_floods; docs/multihoming.md).
type site struct {
	nonDF  bool     // another leaf is the segment's designated forwarder
	floods bool     // the site floods its BUM up every link: only the DF takes it
	source uint16   // the segment's source id (0 while this leaf does not reach the site)
	label  uint32   // the segment label frames from the site carry below the service's
	peers  []uint16 // the source ids of the segment's other leaves
	// announce changes whenever the leaves that reach the site do, so that
	// each of them announces the service's MACs into it: the site's switch
	// learns at once which link now leads to them.
	announce uint32
}

// sites gives each of the service's circuits on a segment what it is told.
//
//   - Split horizon is local bias (RFC 8365 section 8.3.2): the leaf a BUM
//     frame enters delivers it to its own segments itself, so a leaf never
//     delivers BUM from a leaf it shares a segment with into that segment;
//     this costs only the peers' source ids.
//   - Of the other BUM on a flood tree, only the segment's designated
//     forwarder delivers: one of the leaves that reach the site, per
//     (service, segment).
//   - Frames from the site carry the segment label below the service's, so
//     every other member learns the site's MACs against the segment's
//     source id (aliasing: it reaches them through any of the site's
//     leaves), and the site's other leaves learn them as their own. This
//     costs one label per (service, segment) on each member, with the same
//     value on all of them (labels.KindSegmentLabel).
func (b *builder) sites() (map[model.CircuitKey]site, error) {
	s, r := &b.rec.Spec, &b.rec.Route
	dfs := DesignatedForwarders(s, r)
	out := map[model.CircuitKey]site{}
	for _, c := range s.Circuits {
		if c.Segment == "" {
			continue
		}
		f := site{nonDF: c.Node != dfs[c.Segment]}
		if sr := r.Sites[c.Segment]; sr != nil {
			label, err := b.get("", model.KindSegmentLabel, "segment:"+c.Segment)
			if err != nil {
				return nil, err
			}
			f.label, f.floods = label, sr.Floods
			if slices.Contains(sr.Leaves, c.Node) {
				f.source, f.announce = sr.Source, announceValue(sr.Leaves)
			}
		}
		for _, o := range s.Circuits {
			if o.Segment == c.Segment && o.Node != c.Node {
				f.peers = append(f.peers, r.Sources[o.Node])
			}
		}
		slices.Sort(f.peers)
		out[c.Key()] = f
	}
	return out, nil
}

// announceValue is a digest of the leaves that reach a site, never 0.
func announceValue(leaves []string) uint32 {
	h := fnv.New32a()
	for _, l := range leaves {
		h.Write([]byte(l))
		h.Write([]byte{0})
	}
	return h.Sum32() | 1
}

// siteEntries installs, for each segment of the service, the segment
// label's entry on every reachable member, and on every member that does
// not reach the site itself, the remote endpoint of the segment's source:
// an ECMP group over its unicast NHLFEs toward each leaf that reaches the
// site, so that each flow toward a MAC of the site takes one of them
// (aliasing), and a leaf that fails leaves the group in the datapath, as
// its path checks fail (the same protection bytes as every path to it).
//
// It also gives each of the site's circuits its redirect (redirects).
func (b *builder) siteEntries(reach []string, svc map[string]*dpconfig.Service) error {
	r := &b.rec.Route
	for _, seg := range b.rec.Spec.Segments() {
		sr := r.Sites[seg]
		if sr == nil {
			continue
		}
		if err := b.redirects(seg, reach); err != nil {
			return err
		}
		label, err := b.get("", model.KindSegmentLabel, "segment:"+seg)
		if err != nil {
			return err
		}
		for _, m := range reach {
			f := b.frag(m)
			f.Labels = append(f.Labels, dpconfig.Label{Label: label, Type: dpconfig.LabelELAN,
				Service: u32(b.rec.ID), Source: u16(sr.Source)})
			if slices.Contains(sr.Leaves, m) {
				continue
			}
			var members []uint32
			for _, leaf := range sr.Leaves {
				for _, rm := range svc[m].Remotes {
					if rm.Source != r.Sources[leaf] {
						continue
					}
					for _, nh := range b.groupMembers(m, rm.NHLFE) {
						if nh, err = b.watched(m, leaf, seg, nh); err != nil {
							return err
						}
						members = append(members, nh)
					}
				}
			}
			if len(members) == 0 {
				continue
			}
			nh := members[0]
			if len(members) > 1 {
				if nh, err = b.get(m, model.KindNHLFE, "elan-site:"+seg); err != nil {
					return err
				}
				f.ECMPs = append(f.ECMPs, dpconfig.ECMP{ID: nh, Members: members[:min(len(members), dpconfig.MaxECMPMembers)]})
			}
			svc[m].Remotes = append(svc[m].Remotes, dpconfig.Remote{Source: sr.Source, NHLFE: nh})
		}
	}
	return nil
}

// segmentInPorts gives each member's segment labels the ports a frame
// carrying one can arrive on: those of the service's labels (known unicast
// and flood) for a source that is one of the site's leaves, which the
// segment label sits below. The datapath checks the stacked label's ports
// too, so a neighbour off those paths cannot have a frame learned against
// the site.
func (b *builder) segmentInPorts(reach []string) {
	r := &b.rec.Route
	for _, seg := range b.rec.Spec.Segments() {
		sr := r.Sites[seg]
		if sr == nil {
			continue
		}
		sources := make([]uint16, 0, len(sr.Leaves))
		for _, leaf := range sr.Leaves {
			sources = append(sources, r.Sources[leaf])
		}
		for _, m := range reach {
			labels := b.frag(m).Labels
			var ports []string
			for _, e := range labels {
				if e.Service == nil || *e.Service != b.rec.ID || e.Source == nil || !slices.Contains(sources, *e.Source) {
					continue
				}
				for _, p := range e.InPorts {
					if !slices.Contains(ports, p) {
						ports = append(ports, p)
					}
				}
			}
			slices.Sort(ports)
			for i := range labels {
				if labels[i].Type == dpconfig.LabelELAN && labels[i].Source != nil && *labels[i].Source == sr.Source &&
					labels[i].Service != nil && *labels[i].Service == b.rec.ID {
					labels[i].InPorts = ports
				}
			}
		}
	}
}

// redirects gives each reachable leaf of the segment a way to the site
// while its own link to it is down, without the controller: its circuit's
// redirect NHLFE, into the known-unicast path (and backup) toward another
// leaf of the site, which ends in that leaf's CIRCUIT entry for its own
// circuit of the site. The other leaf is the first after it (by name) that
// reaches the site, else the first reachable one. Each costs the other
// leaf one label, and the path's transit nodes one swap entry.
func (b *builder) redirects(seg string, reach []string) error {
	s, r := &b.rec.Spec, &b.rec.Route
	var leaves []model.Circuit
	for _, c := range s.Circuits {
		if c.Segment == seg && slices.Contains(reach, c.Node) {
			leaves = append(leaves, c)
		}
	}
	slices.SortFunc(leaves, func(x, y model.Circuit) int { return strings.Compare(x.Node, y.Node) })
	for i, c := range leaves {
		var to *model.Circuit
		for k := 1; k < len(leaves) && to == nil; k++ {
			if o := leaves[(i+k)%len(leaves)]; slices.Contains(r.Sites[seg].Leaves, o.Node) {
				to = &o
			}
		}
		if to == nil && len(leaves) > 1 {
			to = &leaves[(i+1)%len(leaves)]
		}
		if to == nil {
			continue
		}
		u := unicastPath(r, c.Node, to.Node)
		if u == nil || len(u.Path) == 0 {
			continue
		}
		circuit, err := b.get(to.Node, model.KindCircuit, "circuit:"+to.Port+":"+to.VLAN.String())
		if err != nil {
			return err
		}
		term, err := b.get(to.Node, model.KindLabel, "site-redirect<"+c.Node)
		if err != nil {
			return err
		}
		b.frag(to.Node).Labels = append(b.frag(to.Node).Labels, dpconfig.Label{Label: term, Type: dpconfig.LabelCircuit,
			Circuit: u32(circuit)})
		nh, _, err := b.protectedLSP("site-redirect:"+c.Node+">"+to.Node, u.Path, u.Backup, term, false)
		if err != nil {
			return err
		}
		own, err := b.get(c.Node, model.KindCircuit, "circuit:"+c.Port+":"+c.VLAN.String())
		if err != nil {
			return err
		}
		f := b.frag(c.Node)
		for k := range f.Circuits {
			if f.Circuits[k].ID == own {
				f.Circuits[k].Redirect = nh
			}
		}
	}
	return nil
}

// watched is nh if it is protected, else (a path without a backup) a
// protected NHLFE whose primary and backup are both nh, watching the
// path's check: a group leaves a member out only when its session says so,
// and a leaf that fails must leave the group however it is reached.
func (b *builder) watched(node, to, seg string, nh uint32) (uint32, error) {
	for _, n := range b.frag(node).NHLFEs {
		if n.ID != nh {
			continue
		}
		if n.Protect != nil {
			return nh, nil
		}
		if u := unicastPath(&b.rec.Route, node, to); u != nil && len(u.Path) > 0 {
			return b.protect(node, "elan-site:"+seg+">"+to+":watched", nh, nh, u.Path, u.Path)
		}
	}
	return nh, nil
}

// unicastPath is r's unicast path from -> to, or nil.
func unicastPath(r *model.Route, from, to string) *model.UnicastPath {
	for k := range r.Unicast {
		if r.Unicast[k].From == from && r.Unicast[k].To == to {
			return &r.Unicast[k]
		}
	}
	return nil
}

// groupMembers is nh, or its members if nh is an ECMP group at node: a
// group's members are plain or protected NHLFEs.
func (b *builder) groupMembers(node string, nh uint32) []uint32 {
	for _, e := range b.frag(node).ECMPs {
		if e.ID == nh {
			return e.Members
		}
	}
	return []uint32{nh}
}

// DesignatedForwarders returns each of the service's segments' DF, elected
// among the leaves that reach the site (model.SiteRoute).
func DesignatedForwarders(s *model.ServiceSpec, r *model.Route) map[string]string {
	var out map[string]string
	for _, seg := range s.Segments() {
		if out == nil {
			out = map[string]string{}
		}
		var leaves []string
		if sr := r.Sites[seg]; sr != nil {
			leaves = sr.Leaves
		} else { // a route computed before sites were routed
			for _, c := range s.Circuits {
				if c.Segment == seg && !slices.Contains(r.Unreachable, c.Node) {
					leaves = append(leaves, c.Node)
				}
			}
		}
		out[seg] = DesignatedForwarder(s.Name, seg, leaves)
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

// elineSite builds an E-Line between a circuit and a multi-homed site
// (docs/multihoming.md). Each leg (end -> leaf, and back) is an LSP like
// an E-Line's, protected by its link-disjoint backup where one exists. At
// the end, the service's NHLFE picks the leaf:
//   - active-active, for a site with a LAG (it sends each frame up one
//     link): an ECMP group over the legs to every leaf that reaches the
//     site, each flow on one;
//   - active-standby, for a site that floods up every link: the
//     designated forwarder's leg, protected by the next leaf's, which
//     delivers to the site too; only the DF takes frames from the site
//     (the others' circuits have non_df), so the end gets each frame once.
func (b *builder) elineSite(seg string) error {
	s, r := &b.rec.Spec, &b.rec.Route
	end, _, _ := s.SiteEnd()
	sr := r.Sites[seg]
	if sr == nil || len(r.Unreachable) > 0 && len(r.Unicast) == 0 {
		return nil // nothing reachable: nothing to program
	}
	df := DesignatedForwarder(s.Name, seg, sr.Leaves)
	endTerm, err := b.get(end.Node, model.KindLabel, "eline-term<"+seg)
	if err != nil {
		return err
	}
	b.frag(end.Node).Labels = append(b.frag(end.Node).Labels, dpconfig.Label{Label: endTerm,
		Type: dpconfig.LabelELine, Service: u32(b.rec.ID)})
	plain, legs := map[string]uint32{}, map[string]uint32{}
	paths := map[string]model.Path{}
	for _, u := range r.Unicast {
		// end -> leaf, and leaf -> end on the reverse paths.
		term, err := b.get(u.To, model.KindLabel, "eline-term<"+end.Node)
		if err != nil {
			return err
		}
		b.frag(u.To).Labels = append(b.frag(u.To).Labels, dpconfig.Label{Label: term,
			Type: dpconfig.LabelELine, Service: u32(b.rec.ID)})
		for _, d := range []struct {
			from, to string
			p, bk    model.Path
			term     uint32
		}{{end.Node, u.To, u.Path, u.Backup, term}, {u.To, end.Node, Reverse(u.Path), Reverse(u.Backup), endTerm}} {
			nh, p, err := b.protectedLSP("eline:"+d.from+">"+d.to, d.p, d.bk, d.term, false)
			if err != nil {
				return err
			}
			if d.from == end.Node {
				legs[u.To], plain[u.To], paths[u.To] = nh, p, d.p
			} else {
				b.frag(u.To).Services = append(b.frag(u.To).Services, dpconfig.Service{ID: b.rec.ID,
					Type: dpconfig.ServiceELine, Name: s.Name, NHLFE: u32(nh)})
			}
		}
	}
	// The end's way in.
	var in uint32
	var live []string
	for _, l := range sr.Leaves {
		if _, ok := legs[l]; ok {
			live = append(live, l)
		}
	}
	switch {
	case len(live) == 0:
		return nil
	case !sr.Floods && len(live) > 1:
		var members []uint32
		for _, l := range live {
			members = append(members, legs[l])
		}
		if in, err = b.get(end.Node, model.KindNHLFE, "eline-site:"+seg); err != nil {
			return err
		}
		b.frag(end.Node).ECMPs = append(b.frag(end.Node).ECMPs, dpconfig.ECMP{ID: in,
			Members: members[:min(len(members), dpconfig.MaxECMPMembers)]})
	case len(live) > 1:
		// Protected by the standby's leg: the DF's check, when it fails,
		// moves the end's frames to the standby leaf.
		standby := live[(slices.Index(live, df)+1)%len(live)]
		if in, err = b.protect(end.Node, "eline-site:"+seg+":protected", plain[df], plain[standby],
			paths[df], paths[standby]); err != nil {
			return err
		}
	default:
		in = legs[live[0]]
	}
	b.frag(end.Node).Services = append(b.frag(end.Node).Services, dpconfig.Service{ID: b.rec.ID,
		Type: dpconfig.ServiceELine, Name: s.Name, NHLFE: u32(in)})
	// Circuits: the end's, and each reachable leaf's, where a site that
	// floods is taken from by its DF only.
	if err := b.circuits(end.Node, true); err != nil {
		return err
	}
	for _, u := range r.Unicast {
		if err := b.circuits(u.To, true); err != nil {
			return err
		}
		f := b.frag(u.To)
		for k := range f.Circuits {
			if f.Circuits[k].Service == b.rec.ID {
				f.Circuits[k].NonDF = sr.Floods && u.To != df
				f.Circuits[k].SiteFloods = sr.Floods
			}
		}
	}
	return nil
}
