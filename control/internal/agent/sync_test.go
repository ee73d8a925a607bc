package agent

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/e3fabric/e3fabric/control/internal/dpconfig"
)

func (d *tableDP) ConfigDump(context.Context) (dpconfig.Config, error) {
	c := d.cfg
	c.Version, c.Settings = dpconfig.Version, c.Settings.Normalize()
	return c, nil
}

// Sync counts as config_load does, plus what it deletes; an object
// deleted to make way and added back is replaced; a dry run calls nothing.
func TestSync(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		from  dpconfig.Config
		to    dpconfig.Config
		keep  bool
		want  SyncResult
		calls int
	}{
		{"from empty", dpconfig.Config{}, base(), false, SyncResult{Added: 11}, 11},
		{"to empty", base(), dpconfig.Config{}, false, SyncResult{Removed: 11}, 11},
		{"equal", base(), base(), false, SyncResult{}, 0},
		{"replaced, added, removed and settings", base(), edit(func(c *dpconfig.Config) {
			c.Labels = c.Labels[:1]
			c.NHLFEs[0].Label = 1500
			c.Ports = append(c.Ports, dpconfig.Port{Name: "cust1", Devargs: "net_null2", Kind: dpconfig.KindCustomer})
			c.Settings.TTL = 200
		}), false, SyncResult{Added: 1, Replaced: 2, Removed: 1}, 4},
		{"settings kept", base(), edit(func(c *dpconfig.Config) { c.Settings = dpconfig.Settings{TTL: 9} }), true,
			SyncResult{}, 0},
		{"VLANs exchanged", base(), edit(func(c *dpconfig.Config) {
			c.Circuits[0].VLAN, c.Circuits[1].VLAN = c.Circuits[1].VLAN, c.Circuits[0].VLAN
		}), false, SyncResult{Replaced: 2}, 4},
		{"an nhlfe becomes protected", base(), edit(func(c *dpconfig.Config) {
			c.NHLFEs = append(c.NHLFEs, dpconfig.NHLFE{ID: 12, Nexthop: 1, Label: 1002})
			c.NHLFEs[0] = dpconfig.NHLFE{ID: 10, Protect: &dpconfig.Protection{Primary: 11, Backup: 12, Watch: 1}}
		}), false, SyncResult{Added: 1, Replaced: 1}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, dry := range []bool{true, false} {
				dp := &tableDP{}
				if _, err := reconcileOnce(t, dp, tc.from); err != nil {
					t.Fatal(err)
				}
				dp.calls = nil
				res, err := Sync(ctx, dp, tc.to, tc.keep, dry)
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Plan) != tc.calls {
					t.Errorf("dry %v: plan %v, want %d calls", dry, opStrings(res.Plan), tc.calls)
				}
				res.Plan = nil
				if !reflect.DeepEqual(res, tc.want) {
					t.Errorf("dry %v: %+v, want %+v", dry, res, tc.want)
				}
				switch {
				case dry && len(dp.calls) > 0:
					t.Errorf("a dry run called %q", dp.calls)
				case !dry && !tc.keep && !dp.cfg.Equal(tc.to):
					t.Errorf("not synced: %+v", dp.cfg)
				}
			}
		})
	}
}

// A config that does not validate changes nothing.
func TestSyncRefusesInvalid(t *testing.T) {
	dp := &tableDP{}
	if _, err := reconcileOnce(t, dp, base()); err != nil {
		t.Fatal(err)
	}
	dp.calls = nil
	bad := edit(func(c *dpconfig.Config) {
		c.Labels = append(c.Labels, dpconfig.Label{Label: 600, Type: dpconfig.LabelSwap, NHLFE: u32(99)})
	})
	if _, err := Sync(context.Background(), dp, bad, false, false); !errors.Is(err, ErrDesiredInvalid) {
		t.Fatalf("Sync: %v, want ErrDesiredInvalid", err)
	}
	if !slices.Equal(dp.calls, nil) {
		t.Errorf("calls %q", dp.calls)
	}
}
