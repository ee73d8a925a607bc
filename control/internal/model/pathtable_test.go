package model

import "testing"

func TestPathTableSharesEqualPaths(t *testing.T) {
	p := Path{{Link: 1, From: "leaf1", FromPort: "fab1", To: "spine1", ToPort: "fab1"},
		{Link: -4, From: "spine1", FromPort: "fab2", To: "leaf2", ToPort: "fab1"}}
	q := append(Path(nil), p...)
	other := Path{{Link: 2, From: "leaf1", FromPort: "fab2", To: "spine2", ToPort: "fab1"}}
	var tab PathTable
	a, b, c := tab.Intern(p), tab.Intern(q), tab.Intern(other)
	if &a[0] != &b[0] {
		t.Fatal("equal paths not shared")
	}
	if &a[0] == &p[0] {
		t.Fatal("the table keeps the caller's slice, which the caller may change")
	}
	if &c[0] == &a[0] || c[0] != other[0] || tab.Len() != 2 {
		t.Fatalf("distinct paths: %v, %d interned", c, tab.Len())
	}
	r := Route{Primary: q, Unicast: []UnicastPath{{From: "leaf1", To: "leaf2", Path: append(Path(nil), p...)}}}
	tab.Route(&r)
	if &r.Primary[0] != &a[0] || &r.Unicast[0].Path[0] != &a[0] {
		t.Fatal("a route's paths not interned")
	}
}
