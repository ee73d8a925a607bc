package controller

import (
	"context"
	"encoding/json"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/e3fabric/e3fabric/control/internal/desired"
	"github.com/e3fabric/e3fabric/control/internal/dpconfig"
	"github.com/e3fabric/e3fabric/control/internal/model"
	"github.com/e3fabric/e3fabric/control/internal/nodestate"
	"github.com/e3fabric/e3fabric/control/internal/store"
)

// Limits of one migration transaction: etcd's defaults (128 operations,
// 1.5 MiB per request), so an external etcd needs no tuning to upgrade.
const (
	migrateOps   = 100
	migrateBytes = 1 << 20
)

// migrate upgrades a store of schema 1, where each node's desired config
// was one document (/e3/v1/desired/<node>), to per-object keys
// (nodestate.DesiredNode). It writes every fragment key in batches, the
// records in the grouped form, then in one last transaction each node's
// generation and the schema version; then it deletes the old documents.
// Agents act on a node's keys only once its generation key exists, so
// they see the new layout whole or not at all; each batch is fenced on
// leadership, and a migration cut short is finished by the next leader.
func (c *Controller) migrate(ctx context.Context, st *state) error {
	var ops []clientv3.Op
	size := 0
	flush := func() error {
		if len(ops) == 0 {
			return nil
		}
		r, err := c.opt.Etcd.Txn(ctx).If(st.fence).Then(ops...).Commit()
		if err == nil && !r.Succeeded {
			err = fmt.Errorf("lost leadership")
		}
		ops, size = ops[:0], 0
		return err
	}
	links := model.LinksOf(st.topo)
	// put writes v at key; a desired key (of node, not "") is recorded.
	put := func(node, key string, v any) error {
		var b []byte
		var err error
		switch v := v.(type) {
		case *svcState:
			b, err = encodeRecord(v, storedForm(v, links))
		case *desired.Fragment:
			b, err = dpconfig.EncodeFragment(v)
		default:
			b, err = json.Marshal(v)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		if len(ops) >= migrateOps || size+len(b) > migrateBytes {
			if err := flush(); err != nil {
				return err
			}
		}
		ops, size = append(ops, clientv3.OpPut(key, string(b))), size+len(b)
		if node != "" {
			st.written.put(node, key, b)
		}
		return nil
	}
	for _, n := range st.topo.Nodes {
		if err := put(n.Name, nodestate.BaseKey(n.Name), desired.Base(st.topo, n.Name)); err != nil {
			return err
		}
	}
	for name, s := range st.services {
		for n, f := range s.frags {
			if err := put(n, nodestate.ServiceKey(n, name), f); err != nil {
				return err
			}
		}
		if err := put("", store.ServiceKey(name), s); err != nil {
			return err
		}
	}
	for key, cs := range st.checks {
		for n, f := range cs.frags {
			if err := put(n, nodestate.CheckKey(n, key), f); err != nil {
				return err
			}
		}
		if err := put("", store.CheckKey(key), cs.rec); err != nil {
			return err
		}
	}
	if err := flush(); err != nil {
		return fmt.Errorf("migrate to schema %s: %w", store.SchemaVersion, err)
	}
	gen := st.gen + 1
	for _, n := range st.topo.Nodes {
		ops = append(ops, clientv3.OpPut(nodestate.GenerationKey(n.Name), fmt.Sprint(gen)))
	}
	ops = append(ops, clientv3.OpPut(store.GenerationKey, fmt.Sprint(gen)),
		clientv3.OpPut(store.SchemaKey, store.SchemaVersion))
	if err := flush(); err != nil {
		return fmt.Errorf("migrate to schema %s: %w", store.SchemaVersion, err)
	}
	for _, n := range st.topo.Nodes {
		st.nodeGen[n.Name] = gen
	}
	// No reader uses the old documents any more; a leader that finds one
	// left runs the (idempotent) migration again.
	for _, k := range st.legacy {
		if len(ops) >= migrateOps {
			if err := flush(); err != nil {
				return err
			}
		}
		ops = append(ops, clientv3.OpDelete(k))
	}
	if err := flush(); err != nil {
		return fmt.Errorf("migrate: delete schema %s keys: %w", store.SchemaV1, err)
	}
	st.gen, st.legacy = gen, nil
	return nil
}
