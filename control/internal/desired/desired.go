// Package desired turns services and their routes into each node's desired
// datapath configuration (dpconfig.Config), with the label semantics of
// DESIGN.md "Tables and label semantics" (worked example in
// docs/control-plane.md). It also computes the routes (routing.go).
package desired

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/e3fabric/e3fabric/control/internal/dpconfig"
	"github.com/e3fabric/e3fabric/control/internal/labels"
	"github.com/e3fabric/e3fabric/control/internal/model"
	"github.com/e3fabric/e3fabric/control/internal/topology"
)

// Fragment is one object's part of one node's configuration: the node's
// own (Base), a service's, or a path check's (checks.go).
type Fragment = dpconfig.Fragment

// Watcher gives the BFD session id, at node, of the check of path p from
// `from` to `to` (one end is node), creating the check if it is new.
type Watcher func(node, from, to string, p model.Path) (uint32, error)

// builder accumulates fragments for one service or check.
type builder struct {
	name    string // for errors
	rec     *model.ServiceRecord
	as      *labels.Assigner
	watch   Watcher
	frags   map[string]*Fragment
	site    map[model.CircuitKey]site // E-LAN circuits on multi-homed sites (segments.go)
	scratch *Scratch                  // where frags come from, if the caller does not keep them
}

func (b *builder) frag(node string) *Fragment {
	f := b.frags[node]
	if f == nil {
		if b.scratch != nil {
			f = b.scratch.fragment(node)
		} else {
			f = &Fragment{}
		}
		b.frags[node] = f
	}
	return f
}

// Scratch lends its fragments to one build after another whose fragments
// are not kept (a new leader replays every stored service only to check
// its roles and find its nodes): each build reuses the memory of the one
// before instead of allocating its own. One per goroutine.
type Scratch struct {
	frags map[string]*Fragment // by node, kept from build to build
	cur   map[string]*Fragment // this build's
}

// NewScratch returns an empty Scratch.
func NewScratch() *Scratch {
	return &Scratch{frags: map[string]*Fragment{}, cur: map[string]*Fragment{}}
}

func (s *Scratch) fragment(node string) *Fragment {
	f := s.frags[node]
	if f == nil {
		f = &Fragment{}
		s.frags[node] = f
	}
	f.Reset()
	return f
}

// Replay builds rec as Build does, with fragments lent by s, and returns
// the nodes it has a fragment on; the fragments themselves are s's again
// at its next use.
func Replay(rec *model.ServiceRecord, as *labels.Assigner, watch Watcher, s *Scratch) ([]string, error) {
	clear(s.cur)
	b := &builder{name: "service " + rec.Spec.Name, rec: rec, as: as, watch: watch, frags: s.cur, scratch: s}
	if err := b.service(); err != nil {
		return nil, err
	}
	nodes := make([]string, 0, len(s.cur))
	for n := range s.cur {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	return nodes, nil
}

func (b *builder) get(node, kind, role string) (uint32, error) {
	v, err := b.as.Get(node, kind, role)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", b.name, err)
	}
	return v, nil
}

// Build returns the service's fragment per node, allocating its labels, NHLFE
// ids and circuit ids through as (by role: see the role strings below).
// Protected entries watch the checks of their primary paths, which watch
// names (and creates where new).
func Build(rec *model.ServiceRecord, as *labels.Assigner, watch Watcher) (map[string]*Fragment, error) {
	b := &builder{name: "service " + rec.Spec.Name, rec: rec, as: as, watch: watch, frags: map[string]*Fragment{}}
	if err := b.service(); err != nil {
		return nil, err
	}
	for _, f := range b.frags {
		f.Sort()
	}
	return b.frags, nil
}

func (b *builder) service() error {
	if b.rec.Spec.Type == model.ELine {
		return b.eline()
	}
	return b.elan()
}

func (b *builder) circuits(node string, reachable bool) error {
	if !reachable {
		return nil
	}
	for _, c := range b.rec.Spec.Circuits {
		if c.Node == node {
			if err := b.circuit(c); err != nil {
				return err
			}
		}
	}
	return nil
}

func (b *builder) circuit(c model.Circuit) error {
	id, err := b.get(c.Node, model.KindCircuit, "circuit:"+c.Port+":"+c.VLAN.String())
	if err != nil {
		return err
	}
	st := b.site[c.Key()]
	dc := dpconfig.Circuit{ID: id, Port: c.Port, VLAN: c.VLAN, Service: b.rec.ID,
		MACLimit: b.rec.Spec.CircuitMACLimit, NonDF: st.nonDF, Peers: st.peers,
		SegmentSource: st.source, SegmentLabel: st.label, SiteFloods: st.floods, Announce: st.announce}
	b.rec.Spec.StormOf(c).Apply(&dc)
	f := b.frag(c.Node)
	f.Circuits = append(f.Circuits, dc)
	return nil
}

// lsp installs a label-switched path along p (src -> dst) that ends in the
// label term at dst, and returns the NHLFE at src that enters it. Roles carry
// the direction and the path's key, so a moved path has new labels.
func (b *builder) lsp(tag string, p model.Path, term uint32) (uint32, error) {
	var buf [128]byte
	role := string(p.AppendKey(append(append(buf[:0], tag...), ':'), false))
	first, err := b.transit(role, p, term)
	if err != nil {
		return 0, err
	}
	id, err := b.get(p[0].From, model.KindNHLFE, role)
	if err != nil {
		return 0, err
	}
	f := b.frag(p[0].From)
	f.NHLFEs = append(f.NHLFEs, dpconfig.NHLFE{ID: id, Nexthop: uint32(p[0].Link), Label: first})
	return id, nil
}

// transit installs the swap entries of p's transit nodes toward the label
// term at p's end, and returns the label p's first hop must write. Each
// entry, and term, takes frames only from the port p arrives on.
func (b *builder) transit(role string, p model.Path, term uint32) (uint32, error) {
	last := p[len(p)-1]
	b.inPort(last.To, term, last.ToPort)
	next := term
	for i := len(p) - 1; i > 0; i-- {
		h := p[i]
		id, err := b.get(h.From, model.KindNHLFE, role)
		if err != nil {
			return 0, err
		}
		l, err := b.get(h.From, model.KindLabel, role)
		if err != nil {
			return 0, err
		}
		f := b.frag(h.From)
		f.NHLFEs = append(f.NHLFEs, dpconfig.NHLFE{ID: id, Nexthop: uint32(h.Link), Label: next})
		f.Labels = append(f.Labels, dpconfig.Label{Label: l, Type: dpconfig.LabelSwap, NHLFE: u32(id),
			InPorts: []string{p[i-1].ToPort}})
		next = l
	}
	return next, nil
}

// inPort lets node's label entry take frames from port too (an entry that
// several paths end in, such as a term label with a backup path, takes
// each path's last port).
func (b *builder) inPort(node string, label uint32, port string) {
	f := b.frag(node)
	for i := range f.Labels {
		if f.Labels[i].Label == label {
			if !slices.Contains(f.Labels[i].InPorts, port) {
				f.Labels[i].InPorts = append(f.Labels[i].InPorts, port)
			}
			return
		}
	}
}

// protect adds, at node, a protected NHLFE that stands for primary while
// the check of primaryPath (from node to its end) finds it usable, and for
// backup otherwise (backupPath may end elsewhere: another leaf of a site). Every protected NHLFE whose primary takes one path watches the
// same check, so the datapath moves them all with one write (docs/ha.md).
// The backup path is checked too, so that a move of the service onto it
// only changes which check the entry watches, and the operator sees
// whether the backup is ready.
func (b *builder) protect(node, role string, primary, backup uint32, primaryPath, backupPath model.Path) (uint32, error) {
	watch, err := b.watch(node, node, primaryPath[len(primaryPath)-1].To, primaryPath)
	if err == nil {
		_, err = b.watch(node, node, backupPath[len(backupPath)-1].To, backupPath)
	}
	if err != nil {
		return 0, fmt.Errorf("%s: %w", b.name, err)
	}
	id, err := b.get(node, model.KindNHLFE, role)
	if err != nil {
		return 0, err
	}
	f := b.frag(node)
	f.NHLFEs = append(f.NHLFEs, dpconfig.NHLFE{ID: id, Protect: &dpconfig.Protection{
		Primary: primary, Backup: backup, Watch: watch}})
	return id, nil
}

// ecmp adds, at node, an ECMP group over two equal-cost paths: each member
// is protected by the other path, and is left out of the group while its
// own path's check fails (docs/multihoming.md).
func (b *builder) ecmp(node, tag string, nh1, nh2 uint32, p1, p2 model.Path) (uint32, error) {
	m1, err := b.protect(node, tag+":ecmp:1", nh1, nh2, p1, p2)
	if err != nil {
		return 0, err
	}
	m2, err := b.protect(node, tag+":ecmp:2", nh2, nh1, p2, p1)
	if err != nil {
		return 0, err
	}
	id, err := b.get(node, model.KindNHLFE, tag+":ecmp")
	if err != nil {
		return 0, err
	}
	f := b.frag(node)
	f.ECMPs = append(f.ECMPs, dpconfig.ECMP{ID: id, Members: []uint32{m1, m2}})
	return id, nil
}

// protectedLSP installs the LSPs along p and, if there is one, its
// link-disjoint backup bk toward term, and returns the NHLFE that enters
// them: p's own (plain) when there is no backup, else a protected NHLFE
// over both, or with ecmp a group over both.
func (b *builder) protectedLSP(tag string, p, bk model.Path, term uint32, ecmp bool) (in, plain uint32, err error) {
	if plain, err = b.lsp(tag, p, term); err != nil || len(bk) == 0 {
		return plain, plain, err
	}
	backup, err := b.lsp(tag, bk, term)
	if err != nil {
		return 0, 0, err
	}
	if ecmp {
		in, err = b.ecmp(p[0].From, tag, plain, backup, p, bk)
	} else {
		in, err = b.protect(p[0].From, tag+":protected", plain, backup, p, bk)
	}
	return in, plain, err
}

// Reverse returns p walked from its end to its start.
func Reverse(p model.Path) model.Path {
	out := make(model.Path, len(p))
	for i, h := range p {
		out[len(p)-1-i] = flip(h)
	}
	return out
}

// flip returns h taken the other way.
func flip(h model.Hop) model.Hop {
	return model.Hop{Link: h.Link, From: h.To, FromPort: h.ToPort, To: h.From, ToPort: h.FromPort}
}

func (b *builder) eline() error {
	s, r := &b.rec.Spec, &b.rec.Route
	if _, seg, ok := s.SiteEnd(); ok {
		return b.elineSite(seg)
	}
	a, z := s.Circuits[0].Node, s.Circuits[1].Node
	if a == z { // hairpin: both circuits on one node, no labels
		if len(r.Unreachable) > 0 {
			return nil
		}
		b.frag(a).Services = append(b.frag(a).Services, dpconfig.Service{ID: b.rec.ID, Type: dpconfig.ServiceELine, Name: s.Name})
		return b.circuits(a, true)
	}
	if r.Active == "" {
		return nil // down: nothing to program
	}
	ingress, err := b.elineLeg(a, z, r)
	if err != nil {
		return err
	}
	mv := b.rec.Move
	if mv == nil || r.Move == nil || r.Move.Active == "" {
		for _, d := range [][2]string{{a, z}, {z, a}} {
			b.frag(d[0]).Services = append(b.frag(d[0]).Services, dpconfig.Service{ID: b.rec.ID,
				Type: dpconfig.ServiceELine, Name: s.Name, NHLFE: u32(ingress[d])})
			if err := b.circuits(d[0], true); err != nil {
				return err
			}
		}
		return nil
	}
	// A move (docs/operations.md, "Live migration"): the end that stays
	// sends to the old place and a copy to the new one, and takes both
	// places' frames on its one label; the new place is programmed as if
	// the move were done, so that its end changes nothing there.
	stay, old := a, z
	if mv.From.Node == a {
		stay, old = z, a
	}
	na, nz := a, z
	if old == a {
		na = mv.To.Node
	} else {
		nz = mv.To.Node
	}
	moved, err := b.elineLeg(na, nz, r.Move)
	if err != nil {
		return err
	}
	n := mv.To.Node
	for _, x := range []struct {
		node     string
		nhlfe    uint32
		branches []uint32
	}{{stay, ingress[[2]string{stay, old}], []uint32{moved[[2]string{stay, n}]}},
		{old, ingress[[2]string{old, stay}], nil}, {n, moved[[2]string{n, stay}], nil}} {
		b.frag(x.node).Services = append(b.frag(x.node).Services, dpconfig.Service{ID: b.rec.ID,
			Type: dpconfig.ServiceELine, Name: s.Name, NHLFE: u32(x.nhlfe), Branches: x.branches})
	}
	for _, node := range []string{stay, old} {
		if err := b.circuits(node, true); err != nil {
			return err
		}
	}
	return b.circuit(mv.To)
}

// termRole is the role of node's label for an E-Line's frames from peer:
// after a move, the node its peer was on when the label was allocated.
func (b *builder) termRole(node, peer string) string {
	if p, ok := b.rec.Peers[node]; ok {
		peer = p
	}
	return "eline-term<" + peer
}

// elineLeg installs an E-Line's labels and paths between a and z along r
// (its primary and backup, hot standby; its fallback while active) and
// returns the ingress NHLFE of each direction ({src, dst}).
func (b *builder) elineLeg(a, z string, r *model.Route) (map[[2]string]uint32, error) {
	ingress := map[[2]string]uint32{}
	for _, d := range [][2]string{{a, z}, {z, a}} {
		src, dst := d[0], d[1]
		term, err := b.get(dst, model.KindLabel, b.termRole(dst, src))
		if err != nil {
			return nil, err
		}
		f := b.frag(dst)
		if !slices.ContainsFunc(f.Labels, func(l dpconfig.Label) bool { return l.Label == term }) {
			f.Labels = append(f.Labels, dpconfig.Label{Label: term, Type: dpconfig.LabelELine, Service: u32(b.rec.ID)})
		}
		paths, nhs := map[string]model.Path{}, map[string]uint32{}
		for _, pp := range []struct {
			name string
			p    model.Path
		}{{"primary", r.Primary}, {"backup", r.Backup}, {"fallback", r.Fallback}} {
			if len(pp.p) == 0 || (pp.name == "fallback" && r.Active != "fallback") {
				continue
			}
			p := pp.p
			if src != a {
				p = Reverse(p)
			}
			nh, err := b.lsp("eline:"+src+">"+dst, p, term)
			if err != nil {
				return nil, err
			}
			paths[pp.name] = p
			nhs[pp.name] = nh
		}
		ingress[d] = nhs[r.Active]
		// With both planned paths installed, the ingress is protected: the
		// datapath moves to the other one by itself when the active one's
		// check fails (docs/ha.md). Same role whichever is active, so
		// the controller's switch rewrites the entry and allocates nothing.
		if standby := map[string]string{"primary": "backup", "backup": "primary"}[r.Active]; standby != "" && len(r.Backup) > 0 {
			tag := "eline:" + src + ">" + dst
			var id uint32
			var err error
			if r.ECMP {
				id, err = b.ecmp(src, tag, nhs["primary"], nhs["backup"], paths["primary"], paths["backup"])
			} else {
				id, err = b.protect(src, tag+":protected", nhs[r.Active], nhs[standby], paths[r.Active], paths[standby])
			}
			if err != nil {
				return nil, err
			}
			ingress[d] = id
		}
	}
	return ingress, nil
}

func (b *builder) elan() error {
	s, r := &b.rec.Spec, &b.rec.Route
	var reach []string
	for _, m := range s.Members() {
		if !contains(r.Unreachable, m) {
			reach = append(reach, m)
		}
	}
	var err error
	if b.site, err = b.sites(); err != nil {
		return err
	}
	svc := map[string]*dpconfig.Service{}
	for _, m := range reach {
		svc[m] = &dpconfig.Service{ID: b.rec.ID, Type: dpconfig.ServiceELAN, Name: s.Name, MACLimit: s.MACLimit}
		if err := b.circuits(m, true); err != nil {
			return err
		}
	}
	// Known unicast: at receiver `to`, a label meaning (S, source=from); at
	// sender `from`, remote endpoint source(to) -> NHLFE into the path.
	for _, u := range r.Unicast {
		term, err := b.get(u.To, model.KindLabel, "elan-uc<"+u.From)
		if err != nil {
			return err
		}
		f := b.frag(u.To)
		// Its path and its backup each add the port they arrive on.
		f.Labels = append(f.Labels, dpconfig.Label{Label: term, Type: dpconfig.LabelELAN,
			Service: u32(b.rec.ID), Source: u16(r.Sources[u.From]), InPorts: make([]string, 0, 2)})
		nh, _, err := b.protectedLSP("elan-uc:"+u.From+">"+u.To, u.Path, u.Backup, term, u.ECMP)
		if err != nil {
			return err
		}
		svc[u.From].Remotes = append(svc[u.From].Remotes, dpconfig.Remote{Source: r.Sources[u.To], NHLFE: nh})
	}
	if err := b.siteEntries(reach, svc); err != nil {
		return err
	}
	// Flooding: one tree; per source leaf its own labels on every tree node.
	if len(r.Tree) > 0 {
		tkey := model.Path(r.Tree).Key()
		for _, src := range reach {
			if err := b.floodFrom(src, tkey, svc); err != nil {
				return err
			}
		}
	}
	b.segmentInPorts(reach)
	for _, m := range reach {
		sv := svc[m]
		sort.Slice(sv.Remotes, func(i, j int) bool { return sv.Remotes[i].Source < sv.Remotes[j].Source })
		sort.Slice(sv.Branches, func(i, j int) bool { return sv.Branches[i] < sv.Branches[j] })
		b.frag(m).Services = append(b.frag(m).Services, *sv)
	}
	return nil
}

// floodFrom installs the tree oriented away from src: at every other tree
// node a REPLICATE label for (S, src) whose RPF port faces src, whose
// branches are the downstream edges and which delivers locally on members;
// at src the service's flood branches.
func (b *builder) floodFrom(src, tkey string, svc map[string]*dpconfig.Service) error {
	r := &b.rec.Route
	role := "elan-fl<" + src + ":" + tkey
	// A tree has a dozen nodes: slices searched in order cost less than maps.
	away := func(n string, h model.Hop) (model.Hop, bool) { // h oriented away from n
		switch n {
		case h.From:
			return h, true
		case h.To:
			return flip(h), true
		}
		return h, false
	}
	// Breadth first from src; up[i] is the edge from order[i]'s parent.
	order := make([]string, 1, len(r.Tree)+1)
	up := make([]model.Hop, 1, len(r.Tree)+1)
	order[0] = src
	for i := 0; i < len(order); i++ {
		for _, t := range r.Tree {
			if h, ok := away(order[i], t); ok && !slices.Contains(order, h.To) {
				order, up = append(order, h.To), append(up, h)
			}
		}
	}
	label := make([]uint32, len(order))
	for i := 1; i < len(order); i++ {
		l, err := b.get(order[i], model.KindLabel, role)
		if err != nil {
			return err
		}
		label[i] = l
	}
	// Children's NHLFEs, then each node's entry.
	for i, n := range order {
		var branches []uint32
		for _, t := range r.Tree {
			h, ok := away(n, t)
			if !ok || (i > 0 && h.To == up[i].From) {
				continue
			}
			id, err := b.get(n, model.KindNHLFE, role+">"+h.To)
			if err != nil {
				return err
			}
			b.frag(n).NHLFEs = append(b.frag(n).NHLFEs, dpconfig.NHLFE{ID: id, Nexthop: uint32(h.Link), Label: label[slices.Index(order, h.To)]})
			branches = append(branches, id)
		}
		slices.Sort(branches)
		if i == 0 {
			svc[n].Branches = append(svc[n].Branches, branches...)
			continue
		}
		e := dpconfig.Label{Label: label[i], Type: dpconfig.LabelReplicate, RPFPort: up[i].ToPort, Branches: branches,
			InPorts: []string{up[i].ToPort}}
		if _, member := svc[n]; member {
			e.Service, e.Source = u32(b.rec.ID), u16(r.Sources[src])
		}
		b.frag(n).Labels = append(b.frag(n).Labels, e)
	}
	return nil
}

// Base returns node's own fragment, from the topology alone: settings,
// ports, nexthops and the BFD session of every adjacency.
func Base(t *topology.Topology, node string) *Fragment {
	s := dpconfig.DefaultSettings()
	s.TTL, s.ControlWord = t.Fabric.TTLOrDefault(), t.Fabric.ControlWordOn()
	f := &Fragment{Settings: &s}
	for _, l := range t.NodeLinks(node) {
		local, remote := l.End(node)
		f.Ports = append(f.Ports, dpconfig.Port{Name: local.Port, Devargs: topology.Devargs(local.Port, local.Devargs),
			Kind: dpconfig.KindFabric, MAC: topology.PortMAC(node, local.Port)})
		f.Nexthops = append(f.Nexthops, dpconfig.Nexthop{ID: uint32(l.ID), Port: local.Port, MAC: topology.PortMAC(remote.Node, remote.Port)})
		// Every adjacency runs BFD; its session id is the link id. Its
		// state tells the controller which links are up (docs/ha.md).
		b := t.LinkBFD(l)
		s := dpconfig.BFD{ID: uint32(l.ID), Nexthop: uint32(l.ID),
			TxMS: b.TxMS, RxMS: b.RxMS, Multiplier: b.Multiplier, WTRS: b.WTRS, AuthKey: strings.ToLower(b.AuthKey)}
		if b.AuthKey != "" {
			id := uint8(b.AuthKeyID)
			s.AuthKeyID = &id
		}
		f.BFD = append(f.BFD, s)
	}
	for _, cp := range t.CustomerPorts {
		if cp.Node == node {
			f.Ports = append(f.Ports, dpconfig.Port{Name: cp.Port, Devargs: topology.Devargs(cp.Port, cp.Devargs), Kind: dpconfig.KindCustomer})
		}
	}
	f.Sort()
	return f
}

// Assemble returns node's whole configuration: its base and every fragment.
func Assemble(t *topology.Topology, node string, frags []*Fragment) dpconfig.Config {
	return dpconfig.Assemble(append([]*Fragment{Base(t, node)}, frags...))
}

func u32(v uint32) *uint32 { return &v }
func u16(v uint16) *uint16 { return &v }
