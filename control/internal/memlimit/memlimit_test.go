package memlimit

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"testing"
)

func TestParseSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		err  bool
	}{
		{"1024", 1024, false},
		{"512MiB", 512 << 20, false},
		{"4 GiB", 4 << 30, false},
		{"3KiB", 3 << 10, false},
		{"10B", 10, false},
		{"1TiB", 1 << 40, false},
		{"-1", 0, true},
		{"lots", 0, true},
		{"4GB", 0, true},
		{"", 0, true},
		{"9000000000TiB", 0, true},
	} {
		got, err := ParseSize(c.in)
		if (err != nil) != c.err || got != c.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d, error %v", c.in, got, err, c.want, c.err)
		}
	}
}

func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestResolve(t *testing.T) {
	dir := t.TempDir()
	v2 := write(t, dir, "v2", "1073741824\n")
	unlimited := write(t, dir, "max", "max\n")
	v1none := write(t, dir, "v1", "9223372036854771712\n")
	absent := filepath.Join(dir, "absent")
	gib := int64(1 << 30)
	share := int64(float64(gib) * AutoShare)
	half := int64(float64(gib/2) * AutoShare)
	for _, c := range []struct {
		name, opt, env string
		files          []string
		want           int64
		err            bool
	}{
		{"auto takes a share of the cgroup's limit", "auto", "", []string{v2}, share, false},
		{"an absent file is no limit", "auto", "", []string{absent, v2}, share, false},
		{"auto without a cgroup limit sets none", "auto", "", []string{unlimited}, 0, false},
		{"cgroup v1's huge number is no limit", "auto", "", []string{v1none}, 0, false},
		{"no cgroup files", "auto", "", []string{absent}, 0, false},
		{"the smallest of the cgroup's and its ancestors'", "auto", "", []string{unlimited, write(t, dir, "parent", "536870912\n"), v2}, half, false},
		{"GOMEMLIMIT wins over auto", "auto", "2GiB", []string{v2}, 0, false},
		{"a size", "512MiB", "", []string{v2}, 512 << 20, false},
		{"a size wins over GOMEMLIMIT", "512MiB", "2GiB", nil, 512 << 20, false},
		{"zero is none", "0", "", []string{v2}, 0, false},
		{"a bad size is refused", "half", "", nil, 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Resolve(c.opt, c.env, c.files)
			if (err != nil) != c.err || got != c.want {
				t.Errorf("Resolve(%q, %q) = %d, %v; want %d, error %v", c.opt, c.env, got, err, c.want, c.err)
			}
		})
	}
}

func TestApply(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(prev)
	t.Setenv("GOMEMLIMIT", "")
	note, err := Apply("256MiB")
	if err != nil || note != "memory limit 256 MiB" {
		t.Fatalf("Apply(256MiB) = %q, %v", note, err)
	}
	if got := debug.SetMemoryLimit(-1); got != 256<<20 {
		t.Errorf("the runtime's limit is %d, want %d", got, 256<<20)
	}
	if _, err := Apply("half"); err == nil {
		t.Error("Apply(half) took a size that is none")
	}
	if got := debug.SetMemoryLimit(-1); got != 256<<20 {
		t.Errorf("a refused option changed the limit to %d", got)
	}
}

func TestCgroupFiles(t *testing.T) {
	for _, c := range []struct {
		name, proc string
		want       []string
	}{
		{"cgroup v2, a systemd unit", "0::/system.slice/e3-controller.service\n", []string{
			"/cg/system.slice/e3-controller.service/memory.max", "/cg/system.slice/memory.max", "/cg/memory.max"}},
		{"cgroup v2, the root (a container's namespace)", "0::/\n", []string{"/cg/memory.max"}},
		{"cgroup v1", "12:pids:/x\n4:cpu,memory:/docker/abc\n", []string{
			"/cg/memory/docker/abc/memory.limit_in_bytes", "/cg/memory/docker/memory.limit_in_bytes",
			"/cg/memory/memory.limit_in_bytes"}},
		{"nothing readable", "", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := CgroupFiles(c.proc, "/cg"); !slices.Equal(got, c.want) {
				t.Errorf("CgroupFiles(%q) = %q, want %q", c.proc, got, c.want)
			}
		})
	}
}
