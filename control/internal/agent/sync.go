package agent

import (
	"context"
	"fmt"

	"github.com/e3fabric/e3fabric/control/internal/dpconfig"
)

// Dumper is what Sync needs of a datapath beyond Apply's calls;
// *dprpc.Client implements it.
type Dumper interface {
	Datapath
	ConfigDump(ctx context.Context) (dpconfig.Config, error)
}

// SyncResult counts what a sync changes, as the datapath's config_load
// counts what it adds and replaces: objects new to the node, objects
// changed (the settings count as one), objects deleted.
type SyncResult struct {
	Added    int  `json:"added"`
	Replaced int  `json:"replaced"`
	Removed  int  `json:"removed"`
	Plan     []Op `json:"-"`
}

// Sync makes a datapath equal to want, deletions included, with the
// planner a full pass uses (dump, Diff, Apply): `e3-agent sync FILE`, a
// node run without a controller. want with no settings (keepSettings)
// leaves the datapath's as they are. A config that does not validate
// changes nothing; dryRun plans and counts without a call that changes
// anything.
func Sync(ctx context.Context, dp Dumper, want dpconfig.Config, keepSettings, dryRun bool) (SyncResult, error) {
	if err := want.Validate(); err != nil {
		return SyncResult{}, fmt.Errorf("%w: %w", ErrDesiredInvalid, err)
	}
	have, err := dp.ConfigDump(ctx)
	if err != nil {
		return SyncResult{}, fmt.Errorf("datapath: %w", err)
	}
	if keepSettings {
		want.Settings = have.Settings
	}
	res := SyncResult{Plan: Diff(want, have)}
	had, wanted := keysOf(have), keysOf(want)
	for _, op := range res.Plan {
		k := idKey(op)
		switch {
		case op.Kind == dpconfig.KindSettings:
			res.Replaced++
		case op.Action == Delete:
			if !wanted[k] { // else deleted to make way, and added back
				res.Removed++
			}
		case had[k]:
			res.Replaced++
		default:
			res.Added++
		}
	}
	if dryRun {
		return res, nil
	}
	_, err = Apply(ctx, dp, res.Plan)
	return res, err
}

// idKey names an op's object by its key space: NHLFEs of either form and
// ECMP groups share one, so an id that changes form is replaced, not
// added and removed.
func idKey(op Op) string {
	switch op.Kind {
	case dpconfig.KindProtected, dpconfig.KindECMP:
		return dpconfig.KindNHLFE.String() + " " + op.Key
	}
	return op.Kind.String() + " " + op.Key
}

// keysOf lists the objects of c by idKey: what a plan from nothing adds.
func keysOf(c dpconfig.Config) map[string]bool {
	keys := map[string]bool{}
	for _, op := range Diff(c, dpconfig.Config{Settings: c.Settings}) {
		keys[idKey(op)] = true
	}
	return keys
}
