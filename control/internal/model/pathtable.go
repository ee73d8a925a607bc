package model

import "strconv"

// PathTable interns paths. The services of a leaf/spine fabric share most
// of their paths (a pair of leaves has one per spine), so a route that
// holds interned paths costs a slice header per path, not a copy of its
// hops. Interned paths are shared: nothing may change one in place.
type PathTable struct {
	m   map[string]Path
	key []byte
}

// Intern returns the table's copy of p.
func (t *PathTable) Intern(p Path) Path {
	if len(p) == 0 {
		return p
	}
	k := t.key[:0]
	for _, h := range p {
		k = strconv.AppendInt(k, int64(h.Link), 10)
		k = append(append(append(append(k, ' '), h.From...), ' '), h.FromPort...)
		k = append(append(append(append(append(k, ' '), h.To...), ' '), h.ToPort...), ';')
	}
	t.key = k
	if q, ok := t.m[string(k)]; ok {
		return q
	}
	if t.m == nil {
		t.m = map[string]Path{}
	}
	q := Path(append([]Hop(nil), p...))
	t.m[string(k)] = q
	return q
}

// Route interns every path of r.
func (t *PathTable) Route(r *Route) {
	r.Primary, r.Backup, r.Fallback = t.Intern(r.Primary), t.Intern(r.Backup), t.Intern(r.Fallback)
	for i := range r.Unicast {
		r.Unicast[i].Path, r.Unicast[i].Backup = t.Intern(r.Unicast[i].Path), t.Intern(r.Unicast[i].Backup)
	}
	if r.Move != nil {
		t.Route(r.Move)
	}
}

// Len is the number of paths interned.
func (t *PathTable) Len() int { return len(t.m) }
