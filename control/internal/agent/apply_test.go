package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/e3fabric/e3fabric/control/internal/dpconfig"
	"github.com/e3fabric/e3fabric/control/internal/dprpc"
)

// tableDP is an in-memory datapath with the reference checks that matter
// to Apply's ordering: an object may only refer to existing objects, may
// only be deleted when nothing refers to it, and a circuit's (port, VLAN)
// belongs to one circuit; with maxLabels, the label table is full at that
// many. It records every call. It stands in for e3-vswitchd only in these
// unit tests; the integration test uses the real one.
type tableDP struct {
	cfg       dpconfig.Config
	calls     []string
	fail      map[string]error // call string -> error to return once
	maxLabels int
}

func (d *tableDP) do(call string, check func() error, apply func()) error {
	d.calls = append(d.calls, call)
	if err, ok := d.fail[call]; ok {
		delete(d.fail, call)
		return err
	}
	if err := check(); err != nil {
		return err
	}
	apply()
	return nil
}

func rpcErr(code int, format string, a ...any) error {
	return &dprpc.Error{Method: "test", Code: code, Message: fmt.Sprintf(format, a...)}
}

func (d *tableDP) hasNexthop(id uint32) bool {
	return slices.ContainsFunc(d.cfg.Nexthops, func(n dpconfig.Nexthop) bool { return n.ID == id })
}
func (d *tableDP) hasNHLFE(id uint32) bool {
	return slices.ContainsFunc(d.cfg.NHLFEs, func(n dpconfig.NHLFE) bool { return n.ID == id })
}
func (d *tableDP) hasService(id uint32) bool {
	return slices.ContainsFunc(d.cfg.Services, func(s dpconfig.Service) bool { return s.ID == id })
}

func upsert[T any](list *[]T, v T, same func(T) bool) {
	if i := slices.IndexFunc(*list, same); i >= 0 {
		(*list)[i] = v
	} else {
		*list = append(*list, v)
	}
}

func remove[T any](list *[]T, same func(T) bool) { *list = slices.DeleteFunc(*list, same) }

func (d *tableDP) SettingsSet(_ context.Context, s dpconfig.Settings) error {
	return d.do("set settings", func() error { return nil }, func() { d.cfg.Settings = s })
}
func (d *tableDP) PortAdd(_ context.Context, p dpconfig.Port) (bool, error) {
	return true, d.do("add port "+p.Name, func() error { return nil },
		func() { upsert(&d.cfg.Ports, p, func(x dpconfig.Port) bool { return x.Name == p.Name }) })
}
func (d *tableDP) PortDel(_ context.Context, name string) error {
	return d.do("del port "+name, func() error {
		if slices.ContainsFunc(d.cfg.Nexthops, func(n dpconfig.Nexthop) bool { return n.Port == name }) {
			return rpcErr(dprpc.CodeBusy, "port %s in use", name)
		}
		return nil
	}, func() { remove(&d.cfg.Ports, func(x dpconfig.Port) bool { return x.Name == name }) })
}
func (d *tableDP) NexthopAdd(_ context.Context, n dpconfig.Nexthop) (bool, error) {
	return true, d.do(fmt.Sprint("add nexthop ", n.ID), func() error { return nil },
		func() { upsert(&d.cfg.Nexthops, n, func(x dpconfig.Nexthop) bool { return x.ID == n.ID }) })
}
func (d *tableDP) NexthopDel(_ context.Context, id uint32) error {
	return d.do(fmt.Sprint("del nexthop ", id), func() error {
		if slices.ContainsFunc(d.cfg.NHLFEs, func(n dpconfig.NHLFE) bool { return n.Protect == nil && n.Nexthop == id }) ||
			slices.ContainsFunc(d.cfg.BFD, func(b dpconfig.BFD) bool { return b.Nexthop == id }) {
			return rpcErr(dprpc.CodeBusy, "nexthop %d in use", id)
		}
		return nil
	}, func() { remove(&d.cfg.Nexthops, func(x dpconfig.Nexthop) bool { return x.ID == id }) })
}
func (d *tableDP) BFDAdd(_ context.Context, b dpconfig.BFD) (bool, error) {
	return true, d.do(fmt.Sprint("add bfd ", b.ID), func() error {
		if !d.hasNexthop(b.Nexthop) {
			return rpcErr(dprpc.CodeNotFound, "nexthop %d", b.Nexthop)
		}
		return nil
	}, func() { upsert(&d.cfg.BFD, b, func(x dpconfig.BFD) bool { return x.ID == b.ID }) })
}
func (d *tableDP) BFDDel(_ context.Context, id uint32) error {
	return d.do(fmt.Sprint("del bfd ", id), func() error { return nil },
		func() { remove(&d.cfg.BFD, func(x dpconfig.BFD) bool { return x.ID == id }) })
}
func (d *tableDP) NHLFEAdd(_ context.Context, n dpconfig.NHLFE) (bool, error) {
	return true, d.do(fmt.Sprint("add nhlfe ", n.ID), func() error {
		if p := n.Protect; p != nil {
			if !d.hasNHLFE(p.Primary) || !d.hasNHLFE(p.Backup) {
				return rpcErr(dprpc.CodeNotFound, "nhlfe %d or %d", p.Primary, p.Backup)
			}
			return nil
		}
		if !d.hasNexthop(n.Nexthop) {
			return rpcErr(dprpc.CodeNotFound, "nexthop %d", n.Nexthop)
		}
		return nil
	}, func() { upsert(&d.cfg.NHLFEs, n, func(x dpconfig.NHLFE) bool { return x.ID == n.ID }) })
}
func (d *tableDP) NHLFEDel(_ context.Context, id uint32) error {
	return d.do(fmt.Sprint("del nhlfe ", id), func() error {
		if slices.ContainsFunc(d.cfg.Services, func(s dpconfig.Service) bool { return s.NHLFE != nil && *s.NHLFE == id }) ||
			slices.ContainsFunc(d.cfg.NHLFEs, func(n dpconfig.NHLFE) bool {
				return n.Protect != nil && (n.Protect.Primary == id || n.Protect.Backup == id)
			}) {
			return rpcErr(dprpc.CodeBusy, "nhlfe %d in use", id)
		}
		return nil
	}, func() { remove(&d.cfg.NHLFEs, func(x dpconfig.NHLFE) bool { return x.ID == id }) })
}
func (d *tableDP) ServiceAdd(_ context.Context, s dpconfig.Service) (bool, error) {
	return true, d.do(fmt.Sprint("add service ", s.ID), func() error {
		if s.NHLFE != nil && !d.hasNHLFE(*s.NHLFE) {
			return rpcErr(dprpc.CodeNotFound, "nhlfe %d", *s.NHLFE)
		}
		return nil
	}, func() { upsert(&d.cfg.Services, s, func(x dpconfig.Service) bool { return x.ID == s.ID }) })
}
func (d *tableDP) ServiceDel(_ context.Context, id uint32) error {
	return d.do(fmt.Sprint("del service ", id), func() error {
		if slices.ContainsFunc(d.cfg.Circuits, func(c dpconfig.Circuit) bool { return c.Service == id }) {
			return rpcErr(dprpc.CodeBusy, "service %d in use", id)
		}
		return nil
	}, func() { remove(&d.cfg.Services, func(x dpconfig.Service) bool { return x.ID == id }) })
}
func (d *tableDP) CircuitAdd(_ context.Context, c dpconfig.Circuit) (bool, error) {
	return true, d.do(fmt.Sprint("add circuit ", c.ID), func() error {
		if !d.hasService(c.Service) {
			return rpcErr(dprpc.CodeNotFound, "service %d", c.Service)
		}
		if slices.ContainsFunc(d.cfg.Circuits, func(x dpconfig.Circuit) bool {
			return x.ID != c.ID && x.Port == c.Port && x.VLAN == c.VLAN
		}) {
			return rpcErr(dprpc.CodeConflict, "port %s vlan %s in use", c.Port, c.VLAN)
		}
		return nil
	}, func() { upsert(&d.cfg.Circuits, c, func(x dpconfig.Circuit) bool { return x.ID == c.ID }) })
}
func (d *tableDP) CircuitDel(_ context.Context, id uint32) error {
	return d.do(fmt.Sprint("del circuit ", id), func() error { return nil },
		func() { remove(&d.cfg.Circuits, func(x dpconfig.Circuit) bool { return x.ID == id }) })
}
func (d *tableDP) LabelAdd(_ context.Context, l dpconfig.Label) (bool, error) {
	return true, d.do(fmt.Sprint("add label ", l.Label), func() error {
		if d.maxLabels > 0 && len(d.cfg.Labels) >= d.maxLabels &&
			!slices.ContainsFunc(d.cfg.Labels, func(x dpconfig.Label) bool { return x.Label == l.Label }) {
			return rpcErr(dprpc.CodeNoSpace, "label table full")
		}
		return nil
	},
		func() { upsert(&d.cfg.Labels, l, func(x dpconfig.Label) bool { return x.Label == l.Label }) })
}
func (d *tableDP) LabelDel(_ context.Context, label uint32) error {
	return d.do(fmt.Sprint("del label ", label), func() error { return nil },
		func() { remove(&d.cfg.Labels, func(x dpconfig.Label) bool { return x.Label == label }) })
}

// typedDP is the datapath's API one call at a time, as the fakes here
// implement it.
type typedDP interface {
	SettingsSet(ctx context.Context, s dpconfig.Settings) error
	PortAdd(ctx context.Context, p dpconfig.Port) (bool, error)
	PortDel(ctx context.Context, name string) error
	NexthopAdd(ctx context.Context, n dpconfig.Nexthop) (bool, error)
	NexthopDel(ctx context.Context, id uint32) error
	BFDAdd(ctx context.Context, b dpconfig.BFD) (bool, error)
	BFDDel(ctx context.Context, id uint32) error
	NHLFEAdd(ctx context.Context, n dpconfig.NHLFE) (bool, error)
	NHLFEDel(ctx context.Context, id uint32) error
	ServiceAdd(ctx context.Context, s dpconfig.Service) (bool, error)
	ServiceDel(ctx context.Context, id uint32) error
	CircuitAdd(ctx context.Context, c dpconfig.Circuit) (bool, error)
	CircuitDel(ctx context.Context, id uint32) error
	LabelAdd(ctx context.Context, l dpconfig.Label) (bool, error)
	LabelDel(ctx context.Context, label uint32) error
}

// pipe serves a pipeline on a typed fake, in order, as the datapath does.
func pipe(ctx context.Context, d typedDP, reqs []dprpc.Request) []dprpc.Reply {
	out := make([]dprpc.Reply, len(reqs))
	for i, r := range reqs {
		if ctx.Err() != nil {
			out[i].Err = ctx.Err()
			continue
		}
		var changed bool
		var err error
		id := func() uint32 {
			m := r.Params.(map[string]uint32)
			return m["id"] + m["label"]
		}
		switch r.Method {
		case "settings_set":
			err = d.SettingsSet(ctx, r.Params.(dpconfig.Settings))
		case "port_add":
			changed, err = d.PortAdd(ctx, r.Params.(dpconfig.Port))
		case "port_del":
			err = d.PortDel(ctx, r.Params.(map[string]string)["name"])
		case "nexthop_add":
			changed, err = d.NexthopAdd(ctx, r.Params.(dpconfig.Nexthop))
		case "nexthop_del":
			err = d.NexthopDel(ctx, id())
		case "bfd_add":
			changed, err = d.BFDAdd(ctx, r.Params.(dpconfig.BFD))
		case "bfd_del":
			err = d.BFDDel(ctx, id())
		case "nhlfe_add":
			changed, err = d.NHLFEAdd(ctx, r.Params.(dpconfig.NHLFE))
		case "nhlfe_del":
			err = d.NHLFEDel(ctx, id())
		case "service_add":
			changed, err = d.ServiceAdd(ctx, r.Params.(dpconfig.Service))
		case "service_del":
			err = d.ServiceDel(ctx, id())
		case "circuit_add":
			changed, err = d.CircuitAdd(ctx, r.Params.(dpconfig.Circuit))
		case "circuit_del":
			err = d.CircuitDel(ctx, id())
		case "label_add":
			changed, err = d.LabelAdd(ctx, r.Params.(dpconfig.Label))
		case "label_del":
			err = d.LabelDel(ctx, id())
		default:
			err = rpcErr(dprpc.CodeMethodNotFound, "%s", r.Method)
		}
		out[i].Err = err
		if err == nil {
			out[i].Result, _ = json.Marshal(dprpc.AddResult{Changed: changed})
		}
	}
	return out
}

func (d *tableDP) Pipeline(ctx context.Context, reqs []dprpc.Request) []dprpc.Reply {
	return pipe(ctx, d, reqs)
}

// reconcileOnce is what the agent does in one pass.
func reconcileOnce(t *testing.T, dp *tableDP, desired dpconfig.Config) (ApplyResult, error) {
	t.Helper()
	dp.calls = nil
	return Apply(context.Background(), dp, Diff(desired, dp.cfg))
}

func TestApplyConverges(t *testing.T) {
	dp := &tableDP{}
	if _, err := reconcileOnce(t, dp, base()); err != nil {
		t.Fatalf("first apply: %v", err)
	}
	if !dp.cfg.Equal(base()) {
		t.Fatalf("not converged:\n%+v", dp.cfg)
	}
	res, err := reconcileOnce(t, dp, base())
	if err != nil || res.Calls != 0 || len(dp.calls) != 0 {
		t.Fatalf("second apply of the same config: calls %v, err %v", dp.calls, err)
	}

	// Re-point the E-Line onto a new path and drop the old one.
	next := edit(func(c *dpconfig.Config) {
		c.Nexthops = append(c.Nexthops, dpconfig.Nexthop{ID: 2, Port: "fab0", MAC: "02:00:00:00:02:02"})
		c.NHLFEs[0] = dpconfig.NHLFE{ID: 12, Nexthop: 2, Label: 3000}
		c.Services[0].NHLFE = u32(12)
	})
	if _, err := reconcileOnce(t, dp, next); err != nil {
		t.Fatalf("re-point: %v", err)
	}
	want := []string{"add nexthop 2", "add nhlfe 12", "add service 1", "del nhlfe 10"}
	if !slices.Equal(dp.calls, want) {
		t.Errorf("re-point calls %q, want %q", dp.calls, want)
	}
	if !dp.cfg.Equal(next) {
		t.Errorf("not converged after re-point")
	}
}

// A full table takes a new entry once the old ones are deleted; Apply
// retries the add after the deletions.
func TestApplyRetriesAfterDeletes(t *testing.T) {
	dp := &tableDP{maxLabels: 2}
	if _, err := reconcileOnce(t, dp, base()); err != nil {
		t.Fatal(err)
	}
	next := edit(func(c *dpconfig.Config) { c.Labels[0].Label = 502 })
	if _, err := reconcileOnce(t, dp, next); err != nil {
		t.Fatalf("apply: %v", err)
	}
	want := []string{"add label 502", "del label 500", "add label 502"}
	if !slices.Equal(dp.calls, want) {
		t.Errorf("calls %q, want %q", dp.calls, want)
	}
	if !dp.cfg.Equal(next) {
		t.Errorf("not converged")
	}
}

// A (port, VLAN) moving from one circuit id to another, and two circuits
// exchanging their VLANs: the old circuits go just before the circuits
// are added (breakTaken), after what the new ones need, so no call fails.
func TestApplyMovesPortVLANs(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(c *dpconfig.Config)
		want []string
	}{
		{"new circuit id", func(c *dpconfig.Config) { c.Circuits[0].ID = 7 }, []string{"del circuit 1", "add circuit 7"}},
		{"to a new service", func(c *dpconfig.Config) {
			c.Services = append(c.Services, dpconfig.Service{ID: 3, Type: dpconfig.ServiceELine, NHLFE: u32(10)})
			c.Circuits[0].ID, c.Circuits[0].Service = 7, 3
		}, []string{"add service 3", "del circuit 1", "add circuit 7"}},
		{"VLANs exchanged", func(c *dpconfig.Config) {
			c.Circuits[0].VLAN, c.Circuits[1].VLAN = c.Circuits[1].VLAN, c.Circuits[0].VLAN
		}, []string{"del circuit 1", "del circuit 2", "add circuit 1", "add circuit 2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dp := &tableDP{}
			if _, err := reconcileOnce(t, dp, base()); err != nil {
				t.Fatal(err)
			}
			next := edit(tc.edit)
			if _, err := reconcileOnce(t, dp, next); err != nil {
				t.Fatalf("apply: %v", err)
			}
			if !slices.Equal(dp.calls, tc.want) {
				t.Errorf("calls %q, want %q", dp.calls, tc.want)
			}
			if !dp.cfg.Equal(next) {
				t.Errorf("not converged")
			}
		})
	}
}

// A failure does not stop independent work, is reported, and the old path
// is kept: the datapath refuses to delete what is still in use.
func TestApplyFailureKeepsOldPath(t *testing.T) {
	dp := &tableDP{}
	if _, err := reconcileOnce(t, dp, base()); err != nil {
		t.Fatal(err)
	}
	next := edit(func(c *dpconfig.Config) {
		c.NHLFEs[0] = dpconfig.NHLFE{ID: 12, Nexthop: 1, Label: 3000}
		c.Services[0].NHLFE = u32(12)
		c.Labels = append(c.Labels, dpconfig.Label{Label: 600, Type: dpconfig.LabelELine, Service: u32(1)})
	})
	noSpace := rpcErr(dprpc.CodeNoSpace, "nhlfe table full")
	dp.fail = map[string]error{"add nhlfe 12": noSpace}
	_, err := reconcileOnce(t, dp, next)
	// Pass: nhlfe 12 fails, service 1 fails (nhlfe 12 missing), label 600
	// is added, nhlfe 10 cannot go (service 1 uses it). Retry: nhlfe 12
	// now succeeds, and so does service 1; nhlfe 10 is deleted.
	want := []string{"add nhlfe 12", "add service 1", "add label 600", "del nhlfe 10",
		"add nhlfe 12", "add service 1", "del nhlfe 10"}
	if err != nil || !slices.Equal(dp.calls, want) {
		t.Errorf("calls %q err %v, want %q and no error", dp.calls, err, want)
	}

	// Persistent failure: the error names the call and keeps the code; the
	// E-Line stays on its old nhlfe.
	dp2 := &tableDP{}
	if _, err := reconcileOnce(t, dp2, base()); err != nil {
		t.Fatal(err)
	}
	dp2.fail = map[string]error{"add nhlfe 12": noSpace}
	_, err = Apply(context.Background(), &failingAdds{dp2, "add nhlfe 12", noSpace}, Diff(next, dp2.cfg))
	if err == nil || !strings.Contains(err.Error(), "add nhlfe 12") || !dprpc.HasCode(err, dprpc.CodeNoSpace) {
		t.Fatalf("err = %v, want add nhlfe 12 with no-space code", err)
	}
	if svc := dp2.cfg.Services[0]; *svc.NHLFE != 10 || !dp2.hasNHLFE(10) {
		t.Errorf("old path broken: service 1 -> nhlfe %d, nhlfe 10 present %v", *svc.NHLFE, dp2.hasNHLFE(10))
	}
	if !slices.ContainsFunc(dp2.cfg.Labels, func(l dpconfig.Label) bool { return l.Label == 600 }) {
		t.Errorf("independent label 600 not added")
	}
}

// failingAdds makes one call fail every time.
type failingAdds struct {
	*tableDP
	call string
	err  error
}

func (f *failingAdds) Pipeline(ctx context.Context, reqs []dprpc.Request) []dprpc.Reply {
	return pipe(ctx, f, reqs)
}

func (f *failingAdds) NHLFEAdd(ctx context.Context, n dpconfig.NHLFE) (bool, error) {
	if fmt.Sprint("add nhlfe ", n.ID) == f.call {
		return false, f.err
	}
	return f.tableDP.NHLFEAdd(ctx, n)
}

func TestApplyStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dp := &tableDP{}
	_, err := Apply(ctx, dp, Diff(base(), dp.cfg))
	if !errors.Is(err, context.Canceled) || len(dp.calls) != 0 {
		t.Errorf("err %v calls %v, want context.Canceled and no calls", err, dp.calls)
	}
}
