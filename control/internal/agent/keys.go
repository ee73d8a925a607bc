package agent

import (
	"errors"
	"fmt"
	"sort"
	"strconv"

	"github.com/e3fabric/e3fabric/control/internal/dpconfig"
	"github.com/e3fabric/e3fabric/control/internal/nodestate"
)

// ErrDesiredInvalid marks a desired state that does not decode or
// validate: only a new desired value can help, so the agent does not retry.
var ErrDesiredInvalid = errors.New("desired state refused")

// desiredKeys is the node's desired state as its etcd keys hold it, by key
// name below the node's prefix (nodestate.DesiredNode).
type desiredKeys struct {
	gen   int64                         // the generation key; 0: absent, no desired state
	frags map[string]*dpconfig.Fragment // every other key: the last value that decoded
	mods  map[string]int64              // each key's mod revision, as last seen
	bad   map[string]error              // keys whose latest value was refused
}

func newDesiredKeys() *desiredKeys {
	return &desiredKeys{frags: map[string]*dpconfig.Fragment{}, mods: map[string]int64{}, bad: map[string]error{}}
}

// set takes in key k's value v; it reports whether a fragment changed. A
// value that does not decode is kept as an error, and the key's last good
// value stays.
func (d *desiredKeys) set(k string, v []byte, mod int64) bool {
	d.mods[k] = mod
	if k == nodestate.GenerationSuffix {
		g, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil {
			d.bad[k] = fmt.Errorf("%w: %s: %w", ErrDesiredInvalid, k, err)
			return false
		}
		delete(d.bad, k)
		d.gen = g
		return false
	}
	f, err := dpconfig.DecodeFragment(v)
	if err != nil {
		d.bad[k] = fmt.Errorf("%w: %s: %w", ErrDesiredInvalid, k, err)
		return false
	}
	delete(d.bad, k)
	d.frags[k] = f
	return true
}

// remove takes in key k's deletion; it reports whether a fragment went.
func (d *desiredKeys) remove(k string) bool {
	delete(d.mods, k)
	delete(d.bad, k)
	if k == nodestate.GenerationSuffix {
		d.gen = 0
		return false
	}
	_, had := d.frags[k]
	delete(d.frags, k)
	return had
}

// err joins the refusals, in key order.
func (d *desiredKeys) err() error {
	if len(d.bad) == 0 {
		return nil
	}
	ks := make([]string, 0, len(d.bad))
	for k := range d.bad {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	errs := make([]error, len(ks))
	for i, k := range ks {
		errs[i] = d.bad[k]
	}
	return errors.Join(errs...)
}
