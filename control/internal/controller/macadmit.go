package controller

import (
	"github.com/e3fabric/e3fabric/control/internal/dpconfig"
	"github.com/e3fabric/e3fabric/control/internal/model"
)

// macCommit is what an E-LAN may learn on each of its members: its MAC
// limit (the datapath's default where it sets none). An E-Line learns none.
func macCommit(s *model.ServiceSpec) int64 {
	switch {
	case s.Type != model.ELAN:
		return 0
	case s.MACLimit > 0:
		return int64(s.MACLimit)
	}
	return dpconfig.DefaultMACLimit
}

// admitMACs refuses specs whose MAC limits, with those of the E-LANs
// already on a member node (but the services named in replacing), would
// come to more than that node's MAC table holds: one E-LAN full of MACs
// could then keep another from learning (docs/security.md). A node whose
// agent has not reported its table yet is not checked.
func admitMACs(st *state, specs []model.ServiceSpec, replacing map[string]bool) error {
	add := map[string]int64{}
	for i := range specs {
		if n := macCommit(&specs[i]); n > 0 {
			for _, m := range specs[i].Members() {
				add[m] += n
			}
		}
	}
	used := map[string]int64{}
	for m := range add {
		used[m] = st.macs[m]
	}
	for name := range replacing {
		if sv := st.services[name]; sv != nil {
			if n := macCommit(&sv.rec.Spec); n > 0 {
				for _, m := range sv.rec.Spec.Members() {
					used[m] -= n
				}
			}
		}
	}
	for node, n := range add {
		table := st.status[node].MACTable
		if table > 0 && used[node]+n > table {
			return errorf(KindExhausted, "node %s: its MAC table holds %d MACs, and the E-LANs on it would be "+
				"allowed %d (%d by the others): give this service a lower mac_limit", node, table, used[node]+n, used[node])
		}
	}
	return nil
}

// commitMACs adds spec's MAC commitment to each of its member nodes
// (sign 1), or takes it off (-1).
func (st *state) commitMACs(spec *model.ServiceSpec, sign int64) {
	if n := macCommit(spec); n > 0 {
		for _, m := range spec.Members() {
			st.macs[m] += sign * n
		}
	}
}
