package controller

import "testing"

func TestDigests(t *testing.T) {
	d := newDigests()
	v1, v2 := []byte(`{"labels":[1]}`), []byte(`{"labels":[2]}`)
	check := func(what, node, key string, v []byte, wantStored, wantSame bool) {
		t.Helper()
		if stored, same := d.same(node, key, v); stored != wantStored || same != wantSame {
			t.Errorf("%s: same(%s, %s) = %v, %v; want %v, %v", what, node, key, stored, same, wantStored, wantSame)
		}
	}
	check("empty", "leaf1", "k", v1, false, false)
	d.put("leaf1", "k", v1)
	check("written", "leaf1", "k", v1, true, true)
	check("another value", "leaf1", "k", v2, true, false)
	check("a delete", "leaf1", "k", nil, true, false)
	check("another node's key", "leaf2", "k", v1, false, false)
	check("another key", "leaf1", "k2", v1, false, false)
	d.put("leaf2", "k", v2)
	d.put("leaf1", "k", nil)
	check("deleted", "leaf1", "k", v1, false, false)
	check("the other node keeps its own", "leaf2", "k", v2, true, true)
	d.dropNode("leaf2")
	check("its node gone", "leaf2", "k", v2, false, false)
}
