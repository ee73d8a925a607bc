package dpconfig

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"github.com/klauspost/compress/gzip"
	"io"
	"slices"
	"sync"
)

// Sort puts every list in id order, so a fragment has one encoding.
func (f *Fragment) Sort() {
	slices.SortFunc(f.Ports, func(a, b Port) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortFunc(f.Nexthops, func(a, b Nexthop) int { return cmp.Compare(a.ID, b.ID) })
	slices.SortFunc(f.BFD, func(a, b BFD) int { return cmp.Compare(a.ID, b.ID) })
	slices.SortFunc(f.NHLFEs, func(a, b NHLFE) int { return cmp.Compare(a.ID, b.ID) })
	slices.SortFunc(f.ECMPs, func(a, b ECMP) int { return cmp.Compare(a.ID, b.ID) })
	slices.SortFunc(f.Services, func(a, b Service) int { return cmp.Compare(a.ID, b.ID) })
	slices.SortFunc(f.Circuits, func(a, b Circuit) int { return cmp.Compare(a.ID, b.ID) })
	slices.SortFunc(f.Labels, func(a, b Label) int { return cmp.Compare(a.Label, b.Label) })
}

// Add appends o's objects (and its settings, if it has them) to f.
func (f *Fragment) Add(o *Fragment) {
	if o.Settings != nil {
		s := *o.Settings
		f.Settings = &s
	}
	f.Ports = append(f.Ports, o.Ports...)
	f.Nexthops = append(f.Nexthops, o.Nexthops...)
	f.BFD = append(f.BFD, o.BFD...)
	f.NHLFEs = append(f.NHLFEs, o.NHLFEs...)
	f.ECMPs = append(f.ECMPs, o.ECMPs...)
	f.Services = append(f.Services, o.Services...)
	f.Circuits = append(f.Circuits, o.Circuits...)
	f.Labels = append(f.Labels, o.Labels...)
}

// Assemble merges a node's fragments into its whole configuration, lists
// in id order. Settings not given by any fragment are the defaults.
func Assemble(frags []*Fragment) Config {
	var all Fragment
	for _, f := range frags {
		all.Add(f)
	}
	all.Sort()
	// Empty lists, not null: the form config_dump returns.
	c := Config{Version: Version, Settings: DefaultSettings(), Ports: orEmpty(all.Ports),
		Nexthops: orEmpty(all.Nexthops), BFD: orEmpty(all.BFD), NHLFEs: orEmpty(all.NHLFEs),
		ECMPs: orEmpty(all.ECMPs), Services: orEmpty(all.Services), Circuits: orEmpty(all.Circuits), Labels: orEmpty(all.Labels)}
	if all.Settings != nil {
		c.Settings = *all.Settings
	}
	return c
}

// Fragment returns c as one fragment (its settings included).
func (c Config) Fragment() *Fragment {
	s := c.Settings
	return &Fragment{Settings: &s, Ports: c.Ports, Nexthops: c.Nexthops, BFD: c.BFD, NHLFEs: c.NHLFEs,
		ECMPs: c.ECMPs, Services: c.Services, Circuits: c.Circuits, Labels: c.Labels}
}

func orEmpty[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}

// Stored fragments larger than compressAbove bytes of JSON are gzipped: a
// spine's fragment of one 8-member E-LAN is 6 KiB of JSON and 1 KiB
// compressed, and 10,000 services' worth would otherwise take etcd past
// half a gigabyte. Smaller ones stay plain JSON, readable with etcdctl.
const compressAbove = 1024

var gzipWriters = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed)
	return w
}}

// scratch holds the JSON of fragments being encoded: most are compressed,
// so their JSON is garbage once gzip has read it.
var scratch = sync.Pool{New: func() any { return new(encoder) }}

// EncodeFragment returns f as stored in etcd: JSON, gzipped when large.
func EncodeFragment(f *Fragment) ([]byte, error) {
	e := scratch.Get().(*encoder)
	defer scratch.Put(e)
	e.b, e.err = e.b[:0], nil
	f.encode(e)
	if e.err != nil {
		return nil, fmt.Errorf("fragment: %w", e.err)
	}
	if len(e.b) <= compressAbove {
		return bytes.Clone(e.b), nil
	}
	// JSON of ids and port names compresses about six-fold.
	buf := bytes.NewBuffer(make([]byte, 0, len(e.b)/4))
	w := gzipWriters.Get().(*gzip.Writer)
	defer gzipWriters.Put(w)
	w.Reset(buf)
	if _, err := w.Write(e.b); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// DecodeFragment reads a stored fragment: JSON, or gzipped JSON (its first
// bytes are gzip's magic number, which JSON never starts with).
func DecodeFragment(b []byte) (*Fragment, error) {
	if len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b {
		r, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("fragment: %w", err)
		}
		if b, err = io.ReadAll(io.LimitReader(r, 64<<20)); err != nil {
			return nil, fmt.Errorf("fragment: %w", err)
		}
	}
	f := new(Fragment)
	if err := json.Unmarshal(b, f); err != nil {
		return nil, err
	}
	return f, nil
}
