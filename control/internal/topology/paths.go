package topology

import "strings"

// PathConstraints are what a service asks of its paths (docs/tenants.md).
type PathConstraints struct {
	// AvoidNodes and AvoidLinks (names, leaf1:fab1-spine1:fab1) are never
	// crossed; a service they disconnect is refused.
	AvoidNodes []string `yaml:"avoid_nodes,omitempty" json:"avoid_nodes,omitempty" schema:"description=nodes its paths never cross"`
	AvoidLinks []string `yaml:"avoid_links,omitempty" json:"avoid_links,omitempty" schema:"description=links (by name) its paths never cross"`
	// DisjointFrom is another service of the same tenant whose paths and
	// tree its own share no link with (Disjoint "link", the default) or
	// no transit node (Disjoint "node").
	DisjointFrom string `yaml:"disjoint_from,omitempty" json:"disjoint_from,omitempty" schema:"pattern=^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$"`
	Disjoint     string `yaml:"disjoint,omitempty" json:"disjoint,omitempty" schema:"enum=link|node"`
	// PreferNode is a node its paths cross where the fabric allows: links
	// that do not touch it cost four times as much.
	PreferNode string `yaml:"prefer_node,omitempty" json:"prefer_node,omitempty" schema:"pattern=^[a-z0-9-]{1,15}$"`
}

// String is the constraints for humans.
func (p *PathConstraints) String() string {
	var out []string
	if len(p.AvoidNodes) > 0 {
		out = append(out, "avoid nodes "+strings.Join(p.AvoidNodes, ","))
	}
	if len(p.AvoidLinks) > 0 {
		out = append(out, "avoid links "+strings.Join(p.AvoidLinks, ","))
	}
	if p.DisjointFrom != "" {
		kind := p.Disjoint
		if kind == "" {
			kind = "link"
		}
		out = append(out, kind+"-disjoint from "+p.DisjointFrom)
	}
	if p.PreferNode != "" {
		out = append(out, "prefer "+p.PreferNode)
	}
	return strings.Join(out, "; ")
}
