// Package sflow exports a datapath's packet samples and port counters as
// sFlow version 5 datagrams (sflow.org, "sFlow Version 5", July 2004): flow
// samples with the sampled header, the ports in and out and the service as
// an MPLS VC (extended_mpls_vc: the pseudowire's name and id), and counter
// samples with each port's generic interface counters.
package sflow

import (
	"encoding/binary"
	"net/netip"
)

// Record and sample formats (enterprise 0).
const (
	formatFlowSample     = 1
	formatCounterSample  = 2
	formatRawHeader      = 1
	formatExtendedMPLSVC = 1009
	formatIfCounters     = 1

	headerEthernet = 1 // header_protocol: ETHERNET-ISO88023
	ifTypeEthernet = 6 // ethernetCsmacd
	// Unknown is what sFlow asks for a counter the agent does not have.
	Unknown = 0xffffffff
	// MaxDatagram keeps a datagram within one unfragmented packet.
	MaxDatagram = 1400
)

// FlowSample is one sampled frame.
type FlowSample struct {
	Seq        uint32 // per source
	Source     uint32 // ifIndex of the port it came in on (the data source)
	Rate, Pool uint32
	Drops      uint32
	Input      uint32 // ifIndex; 0 unknown
	Output     uint32 // ifIndex; 0 unknown or none
	Outputs    int    // ports it left by: more than one is "multiple"
	FrameLen   uint32
	Header     []byte // the frame's first bytes, as received
	// The service, as an MPLS VC: its name and id (ServiceName "" = none).
	ServiceName string
	ServiceID   uint32
}

// IfCounters are a port's generic interface counters.
type IfCounters struct {
	Seq                 uint32
	IfIndex             uint32
	SpeedBps            uint64
	Up                  bool
	InOctets, OutOctets uint64
	InPkts, OutPkts     uint32
	InDiscards          uint32 // every frame dropped, counted on the port it came in on
}

// Datagram is the header of one datagram; Seq and UptimeMS are the agent's.
type Datagram struct {
	Agent    netip.Addr
	SubAgent uint32
	Seq      uint32
	UptimeMS uint32
}

type enc []byte

func (e enc) u32(v uint32) enc { return binary.BigEndian.AppendUint32(e, v) }
func (e enc) u64(v uint64) enc { return binary.BigEndian.AppendUint64(e, v) }

// opaque writes b with its length, padded to 4 bytes (XDR).
func (e enc) opaque(b []byte) enc {
	e = e.u32(uint32(len(b)))
	e = append(e, b...)
	for len(e)%4 != 0 {
		e = append(e, 0)
	}
	return e
}

// record writes a format and its body with the body's length.
func (e enc) record(format uint32, body enc) enc { return e.u32(format).opaque(body) }

// Encode writes one datagram of the samples, each already encoded by
// FlowSample.Encode or IfCounters.Encode.
func (d Datagram) Encode(samples [][]byte) []byte {
	e := enc(make([]byte, 0, 64+sum(samples))).u32(5)
	if d.Agent.Is6() && !d.Agent.Is4In6() {
		a := d.Agent.As16()
		e = append(e.u32(2), a[:]...)
	} else {
		a := d.Agent.Unmap().As4()
		e = append(e.u32(1), a[:]...)
	}
	e = e.u32(d.SubAgent).u32(d.Seq).u32(d.UptimeMS).u32(uint32(len(samples)))
	for _, s := range samples {
		e = append(e, s...)
	}
	return e
}

func sum(bs [][]byte) int {
	n := 0
	for _, b := range bs {
		n += len(b)
	}
	return n
}

// Encode is s as a sample record.
func (s *FlowSample) Encode() []byte {
	out := s.Output
	if s.Outputs > 1 {
		out = 0x80000000 | uint32(s.Outputs) // "multiple": how many
	}
	records := 1
	hdr := enc(nil).u32(headerEthernet).u32(s.FrameLen).u32(0).opaque(s.Header)
	var vc enc
	if s.ServiceName != "" {
		records++
		vc = enc(nil).opaque([]byte(s.ServiceName)).u32(s.ServiceID).u32(0)
	}
	body := enc(nil).u32(s.Seq).u32(s.Source).u32(s.Rate).u32(s.Pool).u32(s.Drops).u32(s.Input).u32(out).
		u32(uint32(records)).record(formatRawHeader, hdr)
	if vc != nil {
		body = body.record(formatExtendedMPLSVC, vc)
	}
	return enc(nil).record(formatFlowSample, body)
}

// Encode is c as a counter sample record.
func (c *IfCounters) Encode() []byte {
	status := uint32(1) // admin up
	if c.Up {
		status |= 2
	}
	ifc := enc(nil).u32(c.IfIndex).u32(ifTypeEthernet).u64(c.SpeedBps).u32(1).u32(status).
		u64(c.InOctets).u32(c.InPkts).u32(Unknown).u32(Unknown).u32(c.InDiscards).u32(0).u32(Unknown).
		u64(c.OutOctets).u32(c.OutPkts).u32(Unknown).u32(Unknown).u32(0).u32(0).u32(0)
	body := enc(nil).u32(c.Seq).u32(c.IfIndex).u32(1).record(formatIfCounters, ifc)
	return enc(nil).record(formatCounterSample, body)
}
