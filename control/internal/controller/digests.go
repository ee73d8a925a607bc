package controller

import (
	"crypto/sha256"
	"hash/maphash"
)

// digests holds a digest of every desired key's stored value, by node:
// commits compare against them to write only what changes. A key is held
// by a 64-bit hash of its name and its value by 128 bits of SHA-256, a
// fifth of the bytes of the key and a full digest. Two keys sharing a hash
// cost at worst a redundant write or delete: a write is skipped only when
// the value's digest matches too.
type digests struct {
	seed maphash.Seed
	of   map[string]map[uint64][16]byte // node -> key hash -> value digest
}

func newDigests() digests {
	return digests{seed: maphash.MakeSeed(), of: map[string]map[uint64][16]byte{}}
}

func valueDigest(v []byte) [16]byte {
	s := sha256.Sum256(v)
	return [16]byte(s[:16])
}

func (d digests) keyHash(key string) uint64 { return maphash.String(d.seed, key) }

// same reports whether key of node is stored, and whether with value v.
func (d digests) same(node, key string, v []byte) (stored, same bool) {
	old, ok := d.of[node][d.keyHash(key)]
	return ok, ok && v != nil && old == valueDigest(v)
}

// put records that key of node holds v, or (v nil) no longer exists.
func (d digests) put(node, key string, v []byte) {
	h := d.keyHash(key)
	if v == nil {
		delete(d.of[node], h)
		return
	}
	m := d.of[node]
	if m == nil {
		m = map[uint64][16]byte{}
		d.of[node] = m
	}
	m[h] = valueDigest(v)
}

// putNode records a node's keys read at once: key hashes (keyHash) to
// value digests (valueDigest).
func (d digests) putNode(node string, of map[uint64][16]byte) { d.of[node] = of }

// dropNode forgets every key of node (its keys were deleted with it).
func (d digests) dropNode(node string) { delete(d.of, node) }
