// Package memlimit sets the Go runtime's soft memory limit from an option:
// a size, "0" for none, or "auto" for a share of the process's cgroup memory
// limit (systemd's MemoryMax=, a container's limit). Under the limit the runtime
// collects sooner and returns freed memory to the system, so what a process
// holds after a burst of work stays near what it uses, not at the burst's
// peak.
package memlimit

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
)

// AutoShare is the part of the cgroup's limit "auto" takes: the rest is
// left for what the runtime does not count (thread stacks, cgo).
const AutoShare = 0.9

// CgroupRoot is where the cgroup file systems are mounted.
const CgroupRoot = "/sys/fs/cgroup"

// CgroupFiles lists the files that may hold a memory limit of the process
// whose /proc/<pid>/cgroup is procCgroup: its own cgroup's and each
// ancestor's (a unit's MemoryMax= is on the unit's cgroup, a slice's on
// its parent), cgroup v2 first, then v1's memory controller.
func CgroupFiles(procCgroup, root string) []string {
	var v2, v1 []string
	for _, line := range strings.Split(procCgroup, "\n") {
		f := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(f) != 3 {
			continue
		}
		switch {
		case f[0] == "0" && f[1] == "":
			v2 = ancestors(filepath.Join(root, f[2]), root, "memory.max")
		case slices.Contains(strings.Split(f[1], ","), "memory"):
			base := filepath.Join(root, "memory")
			v1 = ancestors(filepath.Join(base, f[2]), base, "memory.limit_in_bytes")
		}
	}
	return append(v2, v1...)
}

// ancestors is name in dir and in every folder above it up to top.
func ancestors(dir, top, name string) []string {
	var out []string
	for {
		out = append(out, filepath.Join(dir, name))
		if dir == top || !strings.HasPrefix(dir, top) {
			return out
		}
		dir = filepath.Dir(dir)
	}
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

// CgroupLimit is the smallest memory limit that files set, in bytes; 0
// when none does ("max", an absent file, or v1's "no limit").
func CgroupLimit(files []string) int64 {
	var least int64
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || n <= 0 || n >= 1<<62 { // "max"; v1 says "no limit" with a huge number
			continue
		}
		if least == 0 || n < least {
			least = n
		}
	}
	return least
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
	own, _ := os.ReadFile("/proc/self/cgroup")
	n, err := Resolve(opt, env, CgroupFiles(string(own), CgroupRoot))
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
