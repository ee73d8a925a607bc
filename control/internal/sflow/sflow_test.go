package sflow

import (
	"encoding/binary"
	"net/netip"
	"testing"
)

func words(b []byte) []uint32 {
	out := make([]uint32, len(b)/4)
	for i := range out {
		out[i] = binary.BigEndian.Uint32(b[4*i:])
	}
	return out
}

// The XDR layout of sFlow v5 (sflow.org): what tshark's dissector judges
// in tests/control/test_cp_sflow.py, here field by field.
func TestEncode(t *testing.T) {
	fs := FlowSample{Seq: 7, Source: 3, Rate: 1000, Pool: 123456, Drops: 2, Input: 3, Output: 5, Outputs: 1,
		FrameLen: 64, Header: []byte{1, 2, 3, 4, 5}, ServiceName: "red", ServiceID: 9}
	w := words(fs.Encode())
	want := []uint32{1, uint32(4 * (len(w) - 2)), // flow_sample, its length
		7, 3, 1000, 123456, 2, 3, 5, 2, // seq, source, rate, pool, drops, in, out, records
		1, 24, 1, 64, 0, 5, 0x01020304, 0x05000000, // raw header: Ethernet, frame length, stripped, 5 bytes padded
		1009, 16, 3, 0x72656400, 9, 0, // extended_mpls_vc: "red" padded, VC id, COS
	}
	if len(w) != len(want) {
		t.Fatalf("%d words, want %d: %v", len(w), len(want), w)
	}
	for i := range want {
		if w[i] != want[i] {
			t.Fatalf("word %d: %#x, want %#x (%v)", i, w[i], want[i], w)
		}
	}
	fs.Outputs, fs.ServiceName = 3, ""
	if w := words(fs.Encode()); w[8] != 0x80000003 || w[9] != 1 {
		t.Fatalf("flooded to 3 ports: output %#x, records %d", w[8], w[9])
	}

	c := IfCounters{Seq: 1, IfIndex: 4, SpeedBps: 1e10, Up: true, InOctets: 1 << 33, InPkts: 10, OutPkts: 20, InDiscards: 3}
	w = words(c.Encode())
	if w[0] != 2 || w[2] != 1 || w[3] != 4 || w[5] != 1 || w[6] != 88 || len(w) != 7+22 {
		t.Fatalf("counter sample: %v", w)
	}
	// ifIndex, ifType, speed, direction, status (admin and oper up),
	// in octets (2^33), in unicast, multicast and broadcast (unknown),
	// discards, ..., out unicast.
	if w[7] != 4 || w[8] != 6 || w[11] != 1 || w[12] != 3 || w[13] != 2 || w[14] != 0 || w[15] != 10 ||
		w[16] != Unknown || w[17] != Unknown || w[18] != 3 || w[23] != 20 {
		t.Fatalf("generic interface counters: %v", w[7:])
	}

	d := Datagram{Agent: netip.MustParseAddr("192.0.2.1"), Seq: 5, UptimeMS: 1000}
	w = words(d.Encode([][]byte{fs.Encode()}))
	if w[0] != 5 || w[1] != 1 || w[2] != 0xc0000201 || w[3] != 0 || w[4] != 5 || w[5] != 1000 || w[6] != 1 {
		t.Fatalf("datagram header: %v", w[:7])
	}
}
