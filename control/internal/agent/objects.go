package agent

// The agent's set of objects (type objects) and its add, remove and pick
// are generated from the kinds (kinds_gen.go); these are their helpers.

func dropKeys[K comparable, V, W any](m map[K]V, ks map[K]W) {
	for k := range ks {
		delete(m, k)
	}
}

func pickKeys[K comparable, V, W any](m map[K]V, ks map[K]W) []V {
	var out []V
	for k := range ks {
		if v, ok := m[k]; ok {
			out = append(out, v)
		}
	}
	return out
}
