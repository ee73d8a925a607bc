package dpconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/klauspost/compress/gzip"
	"io"
	"sync"
)

// Assemble merges a node's fragments into its whole configuration, lists
// in key order. Settings not given by any fragment are the defaults.
func Assemble(frags []*Fragment) Config {
	var all Fragment
	for _, f := range frags {
		all.Add(f)
	}
	all.Sort()
	c := all.lists()
	if all.Settings != nil {
		c.Settings = *all.Settings
	}
	return c
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
