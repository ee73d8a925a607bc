package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/e3fabric/e3fabric/control/internal/dpconfig"
)

// Datapath is the part of e3-vswitchd's control API that Apply uses;
// *dprpc.Client implements it. Deletes of missing objects succeed.
type Datapath interface {
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

// ApplyResult says what Apply did.
type ApplyResult struct {
	Calls int // datapath calls made
	// Unchanged lists adds/replaces the datapath answered with
	// changed=false: the dump and the desired config differ only in a form
	// that Normalize does not know, and every pass will repeat the call.
	Unchanged []Op
}

// Apply runs a plan from Diff in its order: additions and replacements,
// then deletions. A failed call does not stop the pass: the datapath
// checks references itself (it refuses to delete what is still in use and
// to add what points at something missing) so carrying on is safe, and it
// lets independent services converge while one is broken. Calls that failed
// are tried once more at the end, because a deletion may have cleared the
// way: a circuit whose (port, VLAN) moves to another circuit id conflicts
// until the old circuit is gone. What still fails is returned, joined; the
// caller retries the whole reconcile later.
func Apply(ctx context.Context, dp Datapath, plan []Op) (ApplyResult, error) {
	var res ApplyResult
	var failed []Op
	run := func(ops []Op) []error {
		var errs []error
		failed = failed[:0:0]
		for _, op := range ops {
			if ctx.Err() != nil {
				return append(errs, ctx.Err())
			}
			res.Calls++
			changed, err := call(ctx, dp, op)
			if err != nil {
				failed = append(failed, op)
				errs = append(errs, fmt.Errorf("%s: %w", op, err))
				continue
			}
			if op.Action != Delete && op.Kind != KindSettings && !changed {
				res.Unchanged = append(res.Unchanged, op)
			}
		}
		return errs
	}
	if errs := run(plan); len(errs) == 0 || ctx.Err() != nil {
		return res, errors.Join(errs...)
	}
	return res, errors.Join(run(failed)...)
}

// call makes the one datapath call an Op stands for.
func call(ctx context.Context, dp Datapath, op Op) (changed bool, err error) {
	if op.Action == Delete {
		switch o := op.Obj.(type) {
		case dpconfig.Port:
			return true, dp.PortDel(ctx, o.Name)
		case dpconfig.Nexthop:
			return true, dp.NexthopDel(ctx, o.ID)
		case dpconfig.BFD:
			return true, dp.BFDDel(ctx, o.ID)
		case dpconfig.NHLFE:
			return true, dp.NHLFEDel(ctx, o.ID)
		case dpconfig.Service:
			return true, dp.ServiceDel(ctx, o.ID)
		case dpconfig.Circuit:
			return true, dp.CircuitDel(ctx, o.ID)
		case dpconfig.Label:
			return true, dp.LabelDel(ctx, o.Label)
		}
	} else {
		switch o := op.Obj.(type) {
		case dpconfig.Settings:
			return true, dp.SettingsSet(ctx, o)
		case dpconfig.Port:
			return dp.PortAdd(ctx, o)
		case dpconfig.Nexthop:
			return dp.NexthopAdd(ctx, o)
		case dpconfig.BFD:
			return dp.BFDAdd(ctx, o)
		case dpconfig.NHLFE:
			return dp.NHLFEAdd(ctx, o)
		case dpconfig.Service:
			return dp.ServiceAdd(ctx, o)
		case dpconfig.Circuit:
			return dp.CircuitAdd(ctx, o)
		case dpconfig.Label:
			return dp.LabelAdd(ctx, o)
		}
	}
	return false, fmt.Errorf("no datapath call for %T", op.Obj)
}
