package controller

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// DefaultEtcdQuota is etcd's own default backend quota (--quota-backend-bytes).
const DefaultEtcdQuota = 2 << 30

// roomShare is the share of the quota past which new services are refused:
// what is left is for the changes of the services already there (repairs,
// moves) and their removals, which etcd itself would refuse once its
// database reaches the quota (its NOSPACE alarm stops every write).
const roomShare = 0.9

// roomPoll is how often the database's size is read.
const roomPoll = 5 * time.Second

// storeRoom follows the size of etcd's database against its quota. etcd
// counts the database file, free pages included: deletions and compaction
// make room inside it, only a defragmentation shrinks it.
type storeRoom struct {
	quota int64
	size  atomic.Int64 // the largest member's database file; 0 until read
}

// follow reads the size of every member's database every roomPoll until
// ctx ends.
func (r *storeRoom) follow(ctx context.Context, cli *clientv3.Client) {
	t := time.NewTicker(roomPoll)
	defer t.Stop()
	for {
		r.read(ctx, cli)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (r *storeRoom) read(ctx context.Context, cli *clientv3.Client) {
	var most int64
	for _, ep := range cli.Endpoints() {
		sctx, cancel := context.WithTimeout(ctx, roomPoll)
		s, err := cli.Status(sctx, ep)
		cancel()
		if err == nil {
			most = max(most, s.DbSize)
		}
	}
	if most > 0 {
		r.size.Store(most)
	}
}

// full reports whether new services must wait for room, and says why.
func (r *storeRoom) full() error {
	size := r.size.Load()
	if float64(size) < roomShare*float64(r.quota) {
		return nil
	}
	return errorf(KindExhausted, "etcd's database is %s, %.0f%% of its %s quota: new services are refused so that "+
		"repairs and removals still fit; compact and defragment etcd, or raise its quota (--etcd-quota; docs/operations.md, \"etcd's quota\")",
		gib(size), 100*float64(size)/float64(r.quota), gib(r.quota))
}

func gib(b int64) string { return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30)) }

// admitRoom refuses ch if it creates a service while etcd's database is
// near its quota.
func (c *Controller) admitRoom(st *state, ch *change) error {
	for name := range ch.put {
		if st.services[name] != nil {
			continue
		}
		err := c.room.full()
		if err != nil {
			c.metrics.storeFull.Inc()
		}
		return err
	}
	return nil
}

// etcdFailed is the error of an etcd write that failed: etcd's NOSPACE
// (its database at its quota) is a full store, not the controller's fault.
func (c *Controller) etcdFailed(err error) error {
	if errors.Is(err, rpctypes.ErrNoSpace) {
		c.metrics.storeFull.Inc()
		return errorf(KindExhausted, "etcd's database is at its quota (%v): nothing is written until it is compacted and "+
			"defragmented and its NOSPACE alarm disarmed (docs/operations.md, \"etcd's quota\")", err)
	}
	return errorf(KindInternal, "etcd transaction: %v", err)
}
