// Package memlimit sets the Go runtime's soft memory limit from an option:
// a size, "0" for none, or "auto" for a share of the cgroup's memory limit
// (systemd's MemoryMax=, a container's limit). Under the limit the runtime
// collects sooner and returns freed memory to the system, so what a process
// holds after a burst of work stays near what it uses, not at the burst's
// peak.
package memlimit

import (
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// AutoShare is the part of the cgroup's limit "auto" takes: the rest is
// left for what the runtime does not count (thread stacks, cgo).
const AutoShare = 0.9

// CgroupFiles are where a cgroup's memory limit is read from, v2 first.
var CgroupFiles = []string{
	"/sys/fs/cgroup/memory.max",
	"/sys/fs/cgroup/memory/memory.limit_in_bytes",
}

var units = []struct {
	suffix string
	mult   int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"B", 1},
}

// ParseSize reads a size in bytes: a number, optionally followed by B, KiB,
// MiB, GiB or TiB.
func ParseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a size (bytes, or a number with B, KiB, MiB, GiB or TiB)", s)
	}
	if n > (1<<63-1)/mult {
		return 0, fmt.Errorf("%d x %d bytes is too large", n, mult)
	}
	return n * mult, nil
}

// CgroupLimit is the memory limit of the first of files that sets one, in
// bytes; 0 when none does ("max", an absent file, or v1's "no limit").
func CgroupLimit(files []string) int64 {
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		v := strings.TrimSpace(string(b))
		if v == "max" {
			return 0
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 || n >= 1<<62 { // v1 says "no limit" with a huge number
			return 0
		}
		return n
	}
	return 0
}

// Resolve turns the option into a limit in bytes (0: none). "auto" takes
// AutoShare of the cgroup's limit, unless GOMEMLIMIT (env) is set: the
// runtime has applied that one already, and it wins.
func Resolve(opt string, env string, files []string) (int64, error) {
	switch strings.TrimSpace(opt) {
	case "auto":
		if env != "" {
			return 0, nil
		}
		return int64(float64(CgroupLimit(files)) * AutoShare), nil
	case "", "0":
		return 0, nil
	}
	return ParseSize(opt)
}

// Apply sets the runtime's limit from the option and says what it did, for
// the log.
func Apply(opt string) (string, error) {
	env := os.Getenv("GOMEMLIMIT")
	n, err := Resolve(opt, env, CgroupFiles)
	if err != nil {
		return "", fmt.Errorf("memory limit: %w", err)
	}
	if n > 0 {
		debug.SetMemoryLimit(n)
		return fmt.Sprintf("memory limit %d MiB", n>>20), nil
	}
	if env != "" {
		return "memory limit from GOMEMLIMIT=" + env, nil
	}
	return "no memory limit", nil
}
