package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/e3fabric/e3fabric/control/internal/dpconfig"
	"github.com/e3fabric/e3fabric/control/internal/dprpc"
)

// Datapath is what Apply needs of e3-vswitchd's control API;
// *dprpc.Client implements it. The calls of one Pipeline are served in
// order.
type Datapath interface {
	Pipeline(ctx context.Context, reqs []dprpc.Request) []dprpc.Reply
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
// then deletions. The calls go out as one pipeline (one round trip, served
// in order). A failed call does not stop the pass: the datapath checks
// references itself (it refuses to delete what is still in use and to add
// what points at something missing) so carrying on is safe, and it lets
// independent services converge while one is broken. Calls that failed are
// tried once more at the end, because a deletion may have cleared the way
// (a table full until the old entries go). What still fails is returned,
// joined; the caller retries the whole reconcile later.
func Apply(ctx context.Context, dp Datapath, plan []Op) (ApplyResult, error) {
	var res ApplyResult
	run := func(ops []Op) (failed []Op, errs []error) {
		reqs := make([]dprpc.Request, len(ops))
		for i, op := range ops {
			reqs[i] = op.request()
		}
		res.Calls += len(ops)
		for i, r := range dp.Pipeline(ctx, reqs) {
			op := ops[i]
			changed, err := outcome(op, r)
			if err != nil {
				failed = append(failed, op)
				errs = append(errs, fmt.Errorf("%s: %w", op, err))
				continue
			}
			if op.Action != Delete && op.Kind != dpconfig.KindSettings && !changed {
				res.Unchanged = append(res.Unchanged, op)
			}
		}
		return failed, errs
	}
	failed, errs := run(plan)
	if len(errs) == 0 || ctx.Err() != nil {
		return res, errors.Join(errs...)
	}
	_, errs = run(failed)
	return res, errors.Join(errs...)
}

// request is the datapath call an Op stands for: the object itself is the
// params of its _add (config_dump is a list of _add params); a _del names
// the object by its key.
func (op Op) request() dprpc.Request {
	if op.Action == Delete {
		return dprpc.Request{Method: op.Kind.DelMethod(), Params: op.Kind.DelParams(op.Key)}
	}
	return dprpc.Request{Method: op.Kind.AddMethod(), Params: op.Obj}
}

// outcome reads a call's reply: whether an _add changed anything. A _del
// of an object already gone succeeds: the caller wants it gone.
func outcome(op Op, r dprpc.Reply) (changed bool, err error) {
	if r.Err != nil {
		if op.Action == Delete && dprpc.IsNotFound(r.Err) {
			return true, nil
		}
		return false, r.Err
	}
	if op.Action == Delete || op.Kind == dpconfig.KindSettings {
		return true, nil
	}
	var a dprpc.AddResult
	if err := json.Unmarshal(r.Result, &a); err != nil {
		return false, fmt.Errorf("decode result: %w", err)
	}
	return a.Changed, nil
}
