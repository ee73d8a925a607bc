package sflow

import (
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"time"

	"github.com/e3fabric/e3fabric/control/internal/dprpc"
)

// Config is what an Exporter samples and where it sends.
type Config struct {
	DP         *dprpc.Client
	Collectors []string          // host:port (UDP; the standard port is 6343)
	Rate       uint32            // 1 in Rate of each port's frames
	PortRates  map[string]uint32 // ports with a rate of their own (0: not sampled)
	Polling    time.Duration
	Agent      netip.Addr // the datagrams' agent address; invalid: the address toward the first collector
	Log        *slog.Logger
}

// ReadInterval is how often the datapath's queue of samples is read: its
// 4096 samples last 0.4 s at 10,000 samples/s.
const ReadInterval = 100 * time.Millisecond

// Exporter sets the datapath's sampling rate, reads its samples and
// counters, and sends them to the collectors.
type Exporter struct {
	cfg     Config
	conns   []*net.UDPConn
	start   time.Time
	seq     uint32            // datagrams
	flowSeq map[uint32]uint32 // per data source
	ctrSeq  map[uint32]uint32
	names   map[uint32]string // service id -> name
	pending [][]byte
	size    int
}

// New opens the collectors' sockets.
func New(cfg Config) (*Exporter, error) {
	if cfg.Rate == 0 {
		return nil, fmt.Errorf("sflow: a sampling rate of 0")
	}
	x := &Exporter{cfg: cfg, start: time.Now(), flowSeq: map[uint32]uint32{}, ctrSeq: map[uint32]uint32{},
		names: map[uint32]string{}}
	for _, c := range cfg.Collectors {
		addr, err := net.ResolveUDPAddr("udp", c)
		if err != nil {
			x.Close()
			return nil, fmt.Errorf("sflow: collector %s: %w", c, err)
		}
		conn, err := net.DialUDP("udp", nil, addr)
		if err != nil {
			x.Close()
			return nil, fmt.Errorf("sflow: collector %s: %w", c, err)
		}
		x.conns = append(x.conns, conn)
	}
	if !x.cfg.Agent.IsValid() && len(x.conns) > 0 {
		if a, ok := netip.AddrFromSlice(x.conns[0].LocalAddr().(*net.UDPAddr).IP); ok {
			x.cfg.Agent = a.Unmap()
		}
	}
	return x, nil
}

// Close closes the sockets.
func (x *Exporter) Close() {
	for _, c := range x.conns {
		c.Close()
	}
}

// Run exports until ctx ends. A datapath that is down or restarted is
// waited for; its rate is set again as soon as it answers without it.
func (x *Exporter) Run(ctx context.Context) error {
	read := time.NewTicker(ReadInterval)
	defer read.Stop()
	poll := time.NewTicker(x.cfg.Polling)
	defer poll.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-read.C:
			if err := x.readSamples(ctx); err != nil && ctx.Err() == nil {
				x.cfg.Log.Debug("sflow: samples", "err", err)
			}
		case <-poll.C:
			if err := x.pollCounters(ctx); err != nil && ctx.Err() == nil {
				x.cfg.Log.Debug("sflow: counters", "err", err)
			}
		}
	}
}

type readResult struct {
	Rate  uint32 `json:"rate"`
	Ports []struct {
		Port   string `json:"port"`
		PortID uint32 `json:"port_id"`
		Rate   uint32 `json:"rate"`
	} `json:"ports"`
	Samples []struct {
		InPort   string `json:"in_port"`
		OutPort  string `json:"out_port"`
		Outputs  int    `json:"outputs"`
		Service  *int64 `json:"service"`
		FrameLen uint32 `json:"frame_length"`
		Rate     uint32 `json:"rate"`
		Pool     uint64 `json:"pool"`
		Drops    uint64 `json:"drops"`
		Header   string `json:"header"`
	} `json:"samples"`
}

// IfIndex is the sFlow (and SNMP) interface index of a datapath port:
// its DPDK port id + 1, 0 being "unknown".
func IfIndex(portID uint32) uint32 { return portID + 1 }

func (x *Exporter) readSamples(ctx context.Context) error {
	var r readResult
	if err := x.cfg.DP.Call(ctx, "sflow_read", map[string]any{"max": 4096}, &r); err != nil {
		return err
	}
	if err := x.setRates(ctx, &r); err != nil {
		return err
	}
	ifIndex := map[string]uint32{}
	for _, p := range r.Ports {
		ifIndex[p.Port] = IfIndex(p.PortID)
	}
	for _, s := range r.Samples {
		hdr, err := base64.StdEncoding.DecodeString(s.Header)
		if err != nil {
			return fmt.Errorf("sflow_read: header: %w", err)
		}
		src := ifIndex[s.InPort]
		x.flowSeq[src]++
		fs := FlowSample{Seq: x.flowSeq[src], Source: src, Rate: s.Rate, Pool: uint32(s.Pool), Drops: uint32(s.Drops),
			Input: src, Output: ifIndex[s.OutPort], Outputs: s.Outputs, FrameLen: s.FrameLen, Header: hdr}
		if s.Service != nil {
			fs.ServiceID = uint32(*s.Service)
			fs.ServiceName = x.serviceName(ctx, fs.ServiceID)
		}
		x.add(fs.Encode())
	}
	x.flush()
	return nil
}

// setRates sets the datapath's rates where they are not the configured
// ones: not set yet, or the datapath restarted without them.
func (x *Exporter) setRates(ctx context.Context, r *readResult) error {
	want := func(port string) uint32 {
		if n, ok := x.cfg.PortRates[port]; ok {
			return n
		}
		return x.cfg.Rate
	}
	wrong := r.Rate != x.cfg.Rate
	for _, p := range r.Ports {
		wrong = wrong || p.Rate != want(p.Port)
	}
	if !wrong {
		return nil
	}
	if err := x.cfg.DP.Call(ctx, "sflow_set", map[string]any{"rate": x.cfg.Rate}, nil); err != nil {
		return err
	}
	for port, n := range x.cfg.PortRates {
		if err := x.cfg.DP.Call(ctx, "sflow_set", map[string]any{"rate": n, "port": port}, nil); err != nil {
			return err
		}
	}
	x.cfg.Log.Info("sflow: sampling", "rate", x.cfg.Rate, "ports", x.cfg.PortRates)
	return nil
}

// serviceName is the name of service id, from service_list (cached).
func (x *Exporter) serviceName(ctx context.Context, id uint32) string {
	if n, ok := x.names[id]; ok {
		return n
	}
	var list []struct {
		ID   uint32 `json:"id"`
		Name string `json:"name"`
	}
	if err := x.cfg.DP.Call(ctx, "service_list", map[string]any{"id": id}, &list); err != nil || len(list) == 0 {
		return fmt.Sprint(id)
	}
	if len(x.names) > 1<<16 { // ids are reused by other services: forget now and then
		clear(x.names)
	}
	x.names[id] = list[0].Name
	return list[0].Name
}

func (x *Exporter) pollCounters(ctx context.Context) error {
	ports, err := x.cfg.DP.PortList(ctx)
	if err != nil {
		return err
	}
	for _, p := range ports {
		idx := IfIndex(uint32(p.PortID))
		x.ctrSeq[idx]++
		var drops uint64
		for _, n := range p.Stats.Drops {
			drops += n
		}
		c := IfCounters{Seq: x.ctrSeq[idx], IfIndex: idx, SpeedBps: uint64(p.SpeedMbps) * 1e6, Up: bool(p.Link),
			InOctets: p.Stats.RxBytes, OutOctets: p.Stats.TxBytes, InPkts: uint32(p.Stats.RxPkts),
			OutPkts: uint32(p.Stats.TxPkts), InDiscards: uint32(drops)}
		x.add(c.Encode())
	}
	x.flush()
	return nil
}

// add queues a sample, sending the datagram first if it would not fit.
func (x *Exporter) add(sample []byte) {
	if x.size+len(sample) > MaxDatagram-64 {
		x.flush()
	}
	x.pending = append(x.pending, sample)
	x.size += len(sample)
}

func (x *Exporter) flush() {
	if len(x.pending) == 0 {
		return
	}
	x.seq++
	d := Datagram{Agent: x.cfg.Agent, Seq: x.seq, UptimeMS: uint32(time.Since(x.start).Milliseconds())}
	b := d.Encode(x.pending)
	for _, c := range x.conns {
		if _, err := c.Write(b); err != nil {
			x.cfg.Log.Debug("sflow: send", "collector", c.RemoteAddr(), "err", err)
		}
	}
	x.pending, x.size = x.pending[:0], 0
}
