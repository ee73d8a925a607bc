package model

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/e3fabric/e3fabric/control/internal/topology"
)

// StoredService is a service record as etcd holds it
// (/e3/v1/services/<name>, docs/control-plane.md): the intent, the route in
// link ids, and the allocated values without their roles. The values of
// each node and kind are listed in the order the build asked for their
// roles (labels.Assigner.Sequence), with a digest of that order, so a
// rebuild over the same route gets each role its value back and can tell
// when it would not. Everything else (hops, roles, per-node fragments) is
// derived again on load.
type StoredService struct {
	Spec            ServiceSpec       `json:"spec"`
	ID              uint32            `json:"id"`
	Generation      int64             `json:"generation"`
	NodeGenerations NodeGenerations   `json:"node_generations"`
	Route           StoredRoute       `json:"route"`
	Values          StoredValues      `json:"values"`
	Roles           string            `json:"roles"`
	Move            *Move             `json:"move,omitempty"`
	Peers           map[string]string `json:"peers,omitempty"`
}

// Deltas is a list of values stored as the first and then each one's
// difference from the one before: the values of one service are mostly
// allocated in a row, so most differences are 1.
type Deltas []uint32

// MarshalJSON writes the differences.
func (d Deltas) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 2+3*len(d))
	b = append(b, '[')
	prev := int64(0)
	for i, v := range d {
		if i > 0 {
			b = append(b, ',')
		}
		b, prev = strconv.AppendInt(b, int64(v)-prev, 10), int64(v)
	}
	return append(b, ']'), nil
}

// UnmarshalJSON reads the differences back into values.
func (d *Deltas) UnmarshalJSON(b []byte) error {
	sc := scanner{b: b}
	out := sc.deltas()
	if sc.peek() != 0 {
		sc.fail("unexpected data after the array")
	}
	if sc.err != nil {
		return fmt.Errorf("values %.40s: %w", b, sc.err)
	}
	*d = out
	return nil
}

// deltas reads a Deltas array (null: empty).
func (s *scanner) deltas() Deltas {
	out, v := Deltas{}, int64(0)
	s.list(func() {
		if v += int64(s.int()); v < 0 || v > 1<<32-1 {
			s.fail(fmt.Sprintf("value %d out of range", v))
			return
		}
		out = append(out, uint32(v))
	})
	if s.err != nil {
		return nil
	}
	return out
}

// NodeGenerations is the generation of each node a service's last change
// wrote. It and StoredValues are read by hand: encoding/json's generic
// path for maps was most of a stored record's decoding, and a new leader
// decodes every record.
type NodeGenerations map[string]int64

// UnmarshalJSON reads {"node": generation, ...}.
func (g *NodeGenerations) UnmarshalJSON(b []byte) error {
	sc := scanner{b: b}
	out := NodeGenerations{}
	null := sc.object(func(node string) { out[node] = int64(sc.int()) })
	if sc.peek() != 0 {
		sc.fail("unexpected data after the object")
	}
	if sc.err != nil {
		// Names with escapes: JSON all the same.
		return json.Unmarshal(b, (*map[string]int64)(g))
	}
	if null {
		out = nil
	}
	*g = out
	return nil
}

// StoredValues are a record's values by node and kind.
type StoredValues map[string]map[string]Deltas

// UnmarshalJSON reads {"node": {"kind": deltas, ...}, ...}.
func (v *StoredValues) UnmarshalJSON(b []byte) error {
	sc := scanner{b: b}
	out := StoredValues{}
	null := sc.object(func(node string) {
		kinds := map[string]Deltas{}
		sc.object(func(kind string) { kinds[kind] = sc.deltas() })
		out[node] = kinds
	})
	if sc.peek() != 0 {
		sc.fail("unexpected data after the object")
	}
	if sc.err != nil {
		return json.Unmarshal(b, (*map[string]map[string]Deltas)(v))
	}
	if null {
		out = nil
	}
	*v = out
	return nil
}

// StoredRoute is a Route with each path as signed link ids: +id crosses the
// link from its A end to its B end, -id the other way. Unicast paths name
// their ends by source id.
type StoredRoute struct {
	Primary     []int                 `json:"primary,omitempty"`
	Backup      []int                 `json:"backup,omitempty"`
	Active      string                `json:"active,omitempty"`
	Fallback    []int                 `json:"fallback,omitempty"`
	ECMP        bool                  `json:"ecmp,omitempty"`
	Sources     map[string]uint16     `json:"sources,omitempty"`
	Unicast     []StoredUnicast       `json:"unicast,omitempty"`
	Tree        []int                 `json:"tree,omitempty"`
	Sites       map[string]*SiteRoute `json:"sites,omitempty"`
	Unreachable []string              `json:"unreachable,omitempty"`
	Move        *StoredRoute          `json:"move,omitempty"`
}

// StoredUnicast is a UnicastPath, stored as [from, to, path, backup], with
// a fifth element true when the path and its backup share the flows (ECMP).
type StoredUnicast struct {
	From, To     uint16
	Path, Backup []int
	ECMP         bool
}

// MarshalJSON writes the array form.
func (u StoredUnicast) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 16+6*(len(u.Path)+len(u.Backup)))
	b = append(b, '[')
	b = strconv.AppendUint(b, uint64(u.From), 10)
	b = append(b, ',')
	b = strconv.AppendUint(b, uint64(u.To), 10)
	b = appendInts(append(b, ','), u.Path)
	b = appendInts(append(b, ','), u.Backup)
	if u.ECMP {
		b = append(b, ",true"...)
	}
	return append(b, ']'), nil
}

// appendInts appends xs as encoding/json writes it: null when nil.
func appendInts(b []byte, xs []int) []byte {
	if xs == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, x := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(x), 10)
	}
	return append(b, ']')
}

// UnmarshalJSON reads the array form. By hand: a loaded fabric holds one
// per ordered pair of every E-LAN's members, and encoding/json's generic
// path (an array of raw values, then each) was a tenth of a new leader's
// load.
func (u *StoredUnicast) UnmarshalJSON(b []byte) error {
	sc := scanner{b: b}
	sc.open('[')
	from, to := sc.int(), 0
	sc.next()
	to = sc.int()
	sc.next()
	path := sc.ints()
	sc.next()
	backup := sc.ints()
	ecmp := sc.more() && sc.bool()
	sc.close(']')
	switch {
	case sc.err != nil:
		return fmt.Errorf("unicast path %.40s: %w", b, sc.err)
	case from < 0 || from > 0xffff || to < 0 || to > 0xffff:
		return fmt.Errorf("unicast path %.40s: source id out of range", b)
	}
	*u = StoredUnicast{From: uint16(from), To: uint16(to), Path: path, Backup: backup, ECMP: ecmp}
	return nil
}

// scanner reads the compact arrays of numbers the stored forms use; the
// first error sticks, and every later read returns zero values.
type scanner struct {
	b   []byte
	i   int
	err error
}

func (s *scanner) fail(what string) {
	if s.err == nil {
		s.err = fmt.Errorf("%s at byte %d", what, s.i)
	}
}

func (s *scanner) space() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
}

// peek is the next byte after white space, 0 at the end or after an error.
func (s *scanner) peek() byte {
	s.space()
	if s.err != nil || s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

func (s *scanner) open(c byte) {
	if s.peek() != c {
		s.fail(fmt.Sprintf("want %q", c))
		return
	}
	s.i++
}

// close ends the array: c, then nothing.
func (s *scanner) close(c byte) {
	s.open(c)
	if s.peek() != 0 {
		s.fail("unexpected data after the array")
	}
}

// next reads the comma between two elements.
func (s *scanner) next() { s.open(',') }

// more reads a comma if one comes (another element), else nothing.
func (s *scanner) more() bool {
	if s.peek() != ',' {
		return false
	}
	s.i++
	return true
}

func (s *scanner) word(w string) bool {
	s.space()
	if s.err == nil && len(s.b)-s.i >= len(w) && string(s.b[s.i:s.i+len(w)]) == w {
		s.i += len(w)
		return true
	}
	return false
}

func (s *scanner) bool() bool {
	switch {
	case s.word("true"):
		return true
	case s.word("false"):
		return false
	}
	s.fail("want true or false")
	return false
}

// int reads an integer of at most 18 digits.
func (s *scanner) int() int {
	s.space()
	neg := s.i < len(s.b) && s.b[s.i] == '-'
	if neg {
		s.i++
	}
	start, v := s.i, 0
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' && s.i-start < 18 {
		v = v*10 + int(s.b[s.i]-'0')
		s.i++
	}
	if s.i == start || s.i < len(s.b) && (s.b[s.i] >= '0' && s.b[s.i] <= '9' || s.b[s.i] == '.' || s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.fail("want an integer")
		return 0
	}
	if neg {
		return -v
	}
	return v
}

// object reads null (reporting it) or an object, calling member with each
// key to read its value. Keys are names without escapes (nodes, kinds).
func (s *scanner) object(member func(key string)) (null bool) {
	return s.seq('{', '}', func() {
		key := s.str()
		if s.open(':'); s.err == nil {
			member(key)
		}
	})
}

// str reads a string without escapes.
func (s *scanner) str() string {
	s.open('"')
	start := s.i
	for s.err == nil && s.i < len(s.b) && s.b[s.i] != '"' {
		if s.b[s.i] == '\\' || s.b[s.i] < 0x20 {
			s.fail("want a name without escapes")
			return ""
		}
		s.i++
	}
	if s.i >= len(s.b) {
		s.fail("unterminated string")
		return ""
	}
	out := string(s.b[start:s.i])
	s.i++
	return out
}

// ints reads null (nil) or an array of integers (never nil).
func (s *scanner) ints() []int {
	out := []int{}
	if s.list(func() { out = append(out, s.int()) }) {
		return nil
	}
	return out
}

// list reads null (reporting it) or an array, calling elem to read each
// element.
func (s *scanner) list(elem func()) (null bool) { return s.seq('[', ']', elem) }

// seq reads null (reporting it) or the elements between begin and end,
// separated by commas, calling elem to read each.
func (s *scanner) seq(begin, end byte, elem func()) (null bool) {
	if s.word("null") {
		return true
	}
	s.open(begin)
	if s.peek() == end {
		s.i++
		return false
	}
	for s.err == nil {
		elem()
		if !s.more() {
			break
		}
	}
	s.open(end)
	return false
}

// StoreRoute returns r in stored form.
func StoreRoute(r *Route, links Links) StoredRoute {
	s := StoredRoute{Primary: links.ids(r.Primary), Backup: links.ids(r.Backup), Active: r.Active,
		Fallback: links.ids(r.Fallback), ECMP: r.ECMP, Sources: r.Sources, Tree: links.ids(Path(r.Tree)),
		Sites: r.Sites, Unreachable: r.Unreachable}
	for _, u := range r.Unicast {
		s.Unicast = append(s.Unicast, StoredUnicast{From: r.Sources[u.From], To: r.Sources[u.To],
			Path: links.ids(u.Path), Backup: links.ids(u.Backup), ECMP: u.ECMP})
	}
	if r.Move != nil {
		m := StoreRoute(r.Move, links)
		s.Move = &m
	}
	return s
}

// ids returns p's signed link ids.
func (ls Links) ids(p Path) []int {
	if p == nil {
		return nil
	}
	out := make([]int, len(p))
	for i, h := range p {
		out[i] = h.Link
		if l := ls[h.Link]; l.A.Node != h.From || l.A.Port != h.FromPort {
			out[i] = -h.Link
		}
	}
	return out
}

// Links indexes a topology's links by id, for StoreRoute and LoadRoute.
type Links map[int]topology.Link

// LinksOf indexes t's links.
func LinksOf(t *topology.Topology) Links {
	out := make(Links, len(t.Links))
	for _, l := range t.Links {
		out[l.ID] = l
	}
	return out
}

// LoadRoute rebuilds a route from its stored form.
func LoadRoute(s *StoredRoute, links Links) (Route, error) {
	r := Route{Active: s.Active, ECMP: s.ECMP, Sources: s.Sources, Sites: s.Sites, Unreachable: s.Unreachable}
	var err error
	path := func(ids []int) Path {
		p, e := links.path(ids)
		if e != nil && err == nil {
			err = e
		}
		return p
	}
	r.Primary, r.Backup, r.Fallback = path(s.Primary), path(s.Backup), path(s.Fallback)
	r.Tree = path(s.Tree)
	by := map[uint16]string{}
	for m, id := range s.Sources {
		by[id] = m
	}
	for _, u := range s.Unicast {
		from, to := by[u.From], by[u.To]
		if from == "" || to == "" {
			return r, fmt.Errorf("unicast path %d>%d: unknown source id", u.From, u.To)
		}
		r.Unicast = append(r.Unicast, UnicastPath{From: from, To: to, Path: path(u.Path), Backup: path(u.Backup),
			ECMP: u.ECMP})
	}
	if s.Move != nil {
		m, e := LoadRoute(s.Move, links)
		if e != nil && err == nil {
			err = e
		}
		r.Move = &m
	}
	return r, err
}

func (ls Links) path(ids []int) (Path, error) {
	if ids == nil {
		return nil, nil
	}
	p := make(Path, len(ids))
	for i, id := range ids {
		l, ok := ls[max(id, -id)]
		if !ok {
			return nil, fmt.Errorf("link %d not in the topology", max(id, -id))
		}
		a, b := l.A, l.B
		if id < 0 {
			a, b = b, a
		}
		p[i] = Hop{Link: l.ID, From: a.Node, FromPort: a.Port, To: b.Node, ToPort: b.Port}
	}
	return p, nil
}
