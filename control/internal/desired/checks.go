package desired

import (
	"fmt"

	"github.com/e3fabric/e3fabric/control/internal/dpconfig"
	"github.com/e3fabric/e3fabric/control/internal/labels"
	"github.com/e3fabric/e3fabric/control/internal/model"
	"github.com/e3fabric/e3fabric/control/internal/topology"
)

// Check is a connectivity check of one path between two leaves: a BFD
// session at each end, carried over an LSP of its own in each direction
// (MPLS-TP CC, RFC 6428), so an end sees a failure anywhere on the path: a
// far link, a transit node that stopped switching. One check serves every
// service whose protected traffic takes the path (docs/ha.md).
type Check struct {
	A, Z string     // the ends, A < Z
	Path model.Path // from A to Z
}

// CheckOf is the check of p, which runs from `from` to `to`.
func CheckOf(from, to string, p model.Path) Check {
	if from < to {
		return Check{A: from, Z: to, Path: p}
	}
	return Check{A: to, Z: from, Path: Reverse(p)}
}

// Key names the check: its ends and its links.
func (k Check) Key() string {
	var buf [128]byte
	return string(appendCheckKey(buf[:0], k.A, k.Z, k.Path, false))
}

// CheckKey is CheckOf(from, to, p).Key(), without building the check.
func CheckKey(from, to string, p model.Path) string {
	var buf [128]byte
	return string(AppendCheckKey(buf[:0], from, to, p))
}

// AppendCheckKey appends CheckKey(from, to, p) to b: a map lookup by
// string(b) finds a check without making its key.
func AppendCheckKey(b []byte, from, to string, p model.Path) []byte {
	if from < to {
		return appendCheckKey(b, from, to, p, false)
	}
	return appendCheckKey(b, to, from, p, true)
}

func appendCheckKey(b []byte, a, z string, p model.Path, reverse bool) []byte {
	b = append(append(append(append(b, a...), '>'), z...), ':')
	return p.AppendKey(b, reverse)
}

// Roles of a check's allocations, at each end.
const (
	checkSessionRole = "check"
	checkTermRole    = "check-term"
)

// CheckSession returns the BFD session id of the check at end, as as has
// (or now gives) it.
func CheckSession(as *labels.Assigner, end string) (uint32, error) {
	return as.Get(end, model.KindSession, checkSessionRole)
}

// Roles is how many roles BuildCheck asks for: a session and a
// terminating label at each end, and each way a label and an NHLFE per
// transit node.
func (k Check) Roles() int { return 4 + 4*max(len(k.Path)-1, 0) }

// BuildCheck returns the check's fragment per node: at each end, a BFD
// session that sends into its LSP toward the other end and an OAM label
// entry that ends the other end's LSP; at each transit node the two LSPs'
// swap entries. Timers are the fabric's (topology fabric.bfd).
func BuildCheck(k Check, as *labels.Assigner, timers topology.BFD) (map[string]*Fragment, error) {
	b := &builder{name: "check " + k.Key(), as: as, frags: map[string]*Fragment{}}
	for _, d := range []struct {
		src, dst string
		p        model.Path
	}{{k.A, k.Z, k.Path}, {k.Z, k.A, Reverse(k.Path)}} {
		sess, err := CheckSession(as, d.src)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.name, err)
		}
		peer, err := CheckSession(as, d.dst)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.name, err)
		}
		term, err := b.get(d.dst, model.KindLabel, checkTermRole)
		if err != nil {
			return nil, err
		}
		b.frag(d.dst).Labels = append(b.frag(d.dst).Labels,
			dpconfig.Label{Label: term, Type: dpconfig.LabelOAM, Session: u32(peer)})
		first, err := b.transit("check:"+d.src+">"+d.dst, d.p, term)
		if err != nil {
			return nil, err
		}
		b.frag(d.src).BFD = append(b.frag(d.src).BFD, dpconfig.BFD{ID: sess, Nexthop: uint32(d.p[0].Link),
			Label: first, TxMS: timers.TxMS, RxMS: timers.RxMS, Multiplier: timers.Multiplier, WTRS: timers.WTRS})
	}
	for _, f := range b.frags {
		f.Sort()
	}
	return b.frags, nil
}
