package model

import (
	"fmt"

	"github.com/e3fabric/e3fabric/control/internal/dpconfig"
	"github.com/e3fabric/e3fabric/control/internal/topology"
)

// SpecFromFile is the service a topology file lists. An error names the
// field it is about (a topology.FieldError relative to the service).
func SpecFromFile(fs topology.FileService) (ServiceSpec, error) {
	spec := ServiceSpec{Name: fs.Name, Type: fs.Type, MACLimit: fs.MACLimit, CircuitMACLimit: fs.CircuitMACLimit,
		BandwidthMbps: fs.BandwidthMbps, ECMP: fs.ECMP, Storm: fs.Storm, Tenant: fs.Tenant, Paths: fs.Paths}
	for i, ci := range fs.Circuits {
		v, err := dpconfig.ParseVLAN(ci.VLAN)
		if err != nil {
			return spec, &topology.FieldError{Field: fmt.Sprintf("circuits[%d].vlan", i),
				Err: fmt.Errorf("service %s: circuit %s:%s: %w", fs.Name, ci.Node, ci.Port, err)}
		}
		spec.Circuits = append(spec.Circuits, Circuit{Node: ci.Node, Port: ci.Port, VLAN: v, Segment: ci.Segment,
			Storm: ci.Storm})
	}
	return spec, nil
}

// File is s as a topology file lists it (SpecFromFile's inverse).
func (s *ServiceSpec) File() topology.FileService {
	fs := topology.FileService{Name: s.Name, Type: s.Type, MACLimit: s.MACLimit, CircuitMACLimit: s.CircuitMACLimit,
		BandwidthMbps: s.BandwidthMbps, ECMP: s.ECMP, Storm: s.Storm, Tenant: s.Tenant, Paths: s.Paths}
	for _, ci := range s.Circuits {
		var vlan any = ci.VLAN.String()
		if ci.VLAN != dpconfig.Untagged {
			vlan = int(ci.VLAN)
		}
		fs.Circuits = append(fs.Circuits, topology.FileCircuit{Node: ci.Node, Port: ci.Port, VLAN: vlan,
			Segment: ci.Segment, Storm: ci.Storm})
	}
	return fs
}
