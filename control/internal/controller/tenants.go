package controller

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/e3fabric/e3fabric/control/internal/model"
	"github.com/e3fabric/e3fabric/control/internal/store"
)

// Tenants (docs/tenants.md). A tenant is a record in etcd; its tokens are
// records keyed by the token's SHA-256, so etcd never holds a token and a
// lookup is one read on any replica (a revoked token stops at once).

// MaxTokensPerTenant bounds a tenant's tokens.
const MaxTokensPerTenant = 16

type tokenRecord struct {
	Tenant  string    `json:"tenant"`
	Role    string    `json:"role"`
	Created time.Time `json:"created"`
}

// tokenID is the public id of a token: the start of its digest's hex.
func tokenID(digest string) string { return digest[:12] }

func digestOf(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// PutTenant creates or replaces a tenant. A replacement must keep every
// service the tenant has within its ports and quota.
func (c *Controller) PutTenant(ctx context.Context, t model.Tenant) error {
	return c.withLeader(func(st *state) error {
		if err := t.Validate(); err != nil {
			return errorf(KindInvalid, "%v", err)
		}
		for i, p := range t.Ports {
			if _, ok := st.topo.CustomerPort(p.Node, p.Port); !ok {
				return atField(fmt.Sprintf("ports[%d]", i), errorf(KindNotFound, "tenant %s: %s:%s is no customer port", t.Name, p.Node, p.Port))
			}
		}
		var mine []model.ServiceSpec
		for _, name := range keys(st.services) {
			if s := st.services[name].rec.Spec; s.Tenant == t.Name {
				mine = append(mine, s)
			}
		}
		if err := tenantAdmits(&t, mine, model.TenantUsage{}); err != nil {
			return errorf(KindConflict, "tenant %s: its services would not fit: %v", t.Name, err)
		}
		b, _ := json.Marshal(t)
		if err := c.txn(ctx, st, clientv3.OpPut(store.TenantKey(t.Name), string(b))); err != nil {
			return err
		}
		st.tenants[t.Name] = &t
		return nil
	})
}

// DeleteTenant removes a tenant that owns no service, and its tokens.
func (c *Controller) DeleteTenant(ctx context.Context, name string) error {
	return c.withLeader(func(st *state) error {
		if st.tenants[name] == nil {
			return errorf(KindNotFound, "tenant %s not found", name)
		}
		for _, n := range keys(st.services) {
			if st.services[n].rec.Spec.Tenant == name {
				return errorf(KindConflict, "tenant %s owns service %s: delete its services first", name, n)
			}
		}
		ops := []clientv3.Op{clientv3.OpDelete(store.TenantKey(name))}
		toks, err := c.tokens(ctx, name)
		if err != nil {
			return err
		}
		for _, t := range toks {
			ops = append(ops, clientv3.OpDelete(store.TokenPrefix+t.digest))
		}
		if err := c.txn(ctx, st, ops...); err != nil {
			return err
		}
		delete(st.tenants, name)
		return nil
	})
}

// txn writes ops fenced on leadership.
func (c *Controller) txn(ctx context.Context, st *state, ops ...clientv3.Op) error {
	r, err := c.opt.Etcd.Txn(ctx).If(st.fence).Then(ops...).Commit()
	if err != nil {
		return c.etcdFailed(err)
	}
	if !r.Succeeded {
		return errorf(KindNotLeader, "leadership lost")
	}
	return nil
}

type storedToken struct {
	digest string
	rec    tokenRecord
}

// tokens lists tenant's tokens ("" : every tenant's).
func (c *Controller) tokens(ctx context.Context, tenant string) ([]storedToken, error) {
	var out []storedToken
	_, err := store.ListJSON(ctx, c.opt.Etcd, store.TokenPrefix, func(digest string, v []byte) error {
		var r tokenRecord
		if json.Unmarshal(v, &r) == nil && (tenant == "" || r.Tenant == tenant) {
			out = append(out, storedToken{digest, r})
		}
		return nil
	})
	if err != nil {
		return nil, errorf(KindInternal, "etcd: %v", err)
	}
	return out, nil
}

// CreateToken makes a new token for tenant with role, shown only here.
func (c *Controller) CreateToken(ctx context.Context, tenant, role string) (model.NewToken, error) {
	var out model.NewToken
	err := c.withLeader(func(st *state) error {
		if st.tenants[tenant] == nil {
			return errorf(KindNotFound, "tenant %s not found", tenant)
		}
		if role != model.RoleAdmin && role != model.RoleRead {
			return errorf(KindInvalid, "role %q: want admin or read", role)
		}
		toks, err := c.tokens(ctx, tenant)
		if err != nil {
			return err
		}
		if len(toks) >= MaxTokensPerTenant {
			return errorf(KindConflict, "tenant %s has %d tokens already: revoke one first", tenant, len(toks))
		}
		raw := make([]byte, 32)
		rand.Read(raw)
		tok := "e3t_" + hex.EncodeToString(raw)
		d := digestOf(tok)
		rec := tokenRecord{Tenant: tenant, Role: role, Created: time.Now().UTC().Truncate(time.Second)}
		b, _ := json.Marshal(rec)
		if err := c.txn(ctx, st, clientv3.OpPut(store.TokenPrefix+d, string(b))); err != nil {
			return err
		}
		out = model.NewToken{TokenInfo: model.TokenInfo{ID: tokenID(d), Tenant: tenant, Role: role, Created: rec.Created}, Token: tok}
		return nil
	})
	return out, err
}

// RevokeToken deletes tenant's token with id.
func (c *Controller) RevokeToken(ctx context.Context, tenant, id string) error {
	return c.withLeader(func(st *state) error {
		toks, err := c.tokens(ctx, tenant)
		if err != nil {
			return err
		}
		for _, t := range toks {
			if tokenID(t.digest) == id {
				return c.txn(ctx, st, clientv3.OpDelete(store.TokenPrefix+t.digest))
			}
		}
		return errorf(KindNotFound, "tenant %s has no token %s", tenant, id)
	})
}

// LookupToken says which tenant and role token belongs to (ok false: none).
// It reads etcd, so it works on every replica.
func (c *Controller) LookupToken(ctx context.Context, token string) (tenant, role string, ok bool, err error) {
	if !strings.HasPrefix(token, "e3t_") || len(token) > 100 {
		return "", "", false, nil
	}
	var r tokenRecord
	found, err := store.GetJSON(ctx, c.opt.Etcd, store.TokenPrefix+digestOf(token), &r)
	if err != nil || !found {
		return "", "", false, err
	}
	return r.Tenant, r.Role, true, nil
}

// Tenants lists the tenants with their usage and tokens.
func (c *Controller) Tenants(ctx context.Context) ([]model.TenantView, error) {
	snap, err := c.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	toks, err := c.tokens(ctx, "")
	if err != nil {
		return nil, err
	}
	out := []model.TenantView{}
	for _, name := range keys(snap.Tenants) {
		v := model.TenantView{Tenant: *snap.Tenants[name], Tokens: []model.TokenInfo{}}
		for _, s := range snap.Services {
			if s.Spec.Tenant == name {
				v.Usage = v.Usage.Add(&s.Spec)
			}
		}
		for _, t := range toks {
			if t.rec.Tenant == name {
				v.Tokens = append(v.Tokens, model.TokenInfo{ID: tokenID(t.digest), Tenant: name, Role: t.rec.Role, Created: t.rec.Created})
			}
		}
		slices.SortFunc(v.Tokens, func(a, b model.TokenInfo) int { return strings.Compare(a.ID, b.ID) })
		out = append(out, v)
	}
	return out, nil
}

// Tenant is one tenant's view.
func (c *Controller) Tenant(ctx context.Context, name string) (model.TenantView, error) {
	all, err := c.Tenants(ctx)
	if err != nil {
		return model.TenantView{}, err
	}
	for _, v := range all {
		if v.Name == name {
			return v, nil
		}
	}
	return model.TenantView{}, errorf(KindNotFound, "tenant %s not found", name)
}

// tenantAdmits checks specs, all of tenant t, against its ports and its
// quota, on top of used (what its other services hold).
func tenantAdmits(t *model.Tenant, specs []model.ServiceSpec, used model.TenantUsage) error {
	for _, s := range specs {
		for _, ci := range s.Circuits {
			if !t.Allows(ci) {
				return fmt.Errorf("service %s: circuit %s is not on a port and VLAN of tenant %s", s.Name, ci, t.Name)
			}
		}
		if t.Quota.MACs > 0 && s.Type == model.ELAN && s.MACLimit == 0 {
			return fmt.Errorf("service %s: tenant %s has a MAC quota: give the E-LAN a mac_limit", s.Name, t.Name)
		}
		used = used.Add(&s)
	}
	q := t.Quota
	for _, x := range []struct {
		what      string
		has, want int
	}{{"services", used.Services, q.Services}, {"circuits", used.Circuits, q.Circuits},
		{"MACs", used.MACs, q.MACs}, {"Mbps of bandwidth", used.BandwidthMbps, q.BandwidthMbps}} {
		if x.want > 0 && x.has > x.want {
			return fmt.Errorf("tenant %s's quota is %d %s; this would make %d", t.Name, x.want, x.what, x.has)
		}
	}
	return nil
}

// admitTenants checks specs against their tenants (ports, quotas) and
// their path constraints, with the services in replacing replaced.
func admitTenants(st *state, specs []model.ServiceSpec, replacing map[string]bool) error {
	by := map[string][]model.ServiceSpec{}
	names := map[string]*model.ServiceSpec{}
	for i := range specs {
		names[specs[i].Name] = &specs[i]
	}
	for i, s := range specs {
		if s.Tenant != "" {
			if st.tenants[s.Tenant] == nil {
				return errorf(KindNotFound, "service %s: tenant %s not found", s.Name, s.Tenant)
			}
			by[s.Tenant] = append(by[s.Tenant], specs[i])
		}
		if err := checkConstraints(st, &s, names); err != nil {
			return err
		}
	}
	for _, tn := range keys(by) {
		var used model.TenantUsage
		for name, sv := range st.services {
			if sv.rec.Spec.Tenant == tn && !replacing[name] && names[name] == nil {
				used = used.Add(&sv.rec.Spec)
			}
		}
		if err := tenantAdmits(st.tenants[tn], by[tn], used); err != nil {
			return errorf(KindQuota, "%v", err)
		}
	}
	return nil
}

// checkConstraints checks that s's path constraints name what exists: a
// service to be disjoint from must be another of the same tenant (in
// batch, or stored).
func checkConstraints(st *state, s *model.ServiceSpec, batch map[string]*model.ServiceSpec) error {
	p := s.Paths
	if p == nil {
		return nil
	}
	for _, n := range append(slices.Clone(p.AvoidNodes), p.PreferNode) {
		if n != "" && !st.topo.HasNode(n) {
			return errorf(KindNotFound, "service %s: paths: unknown node %q", s.Name, n)
		}
	}
	for _, l := range p.AvoidLinks {
		if _, ok := linkByName(st, l); !ok {
			return errorf(KindNotFound, "service %s: paths: unknown link %q", s.Name, l)
		}
	}
	if slices.Contains(p.AvoidNodes, p.PreferNode) && p.PreferNode != "" {
		return errorf(KindInvalid, "service %s: paths: node %s both avoided and preferred", s.Name, p.PreferNode)
	}
	if d := p.DisjointFrom; d != "" {
		other := batch[d]
		if other == nil && st.services[d] != nil {
			other = &st.services[d].rec.Spec
		}
		switch {
		case d == s.Name:
			return errorf(KindInvalid, "service %s: paths: disjoint from itself", s.Name)
		case other == nil || other.Tenant != s.Tenant:
			return errorf(KindNotFound, "service %s: paths: no service %s of the same tenant to be disjoint from", s.Name, d)
		}
	}
	return nil
}

func linkByName(st *state, name string) (int, bool) {
	for _, l := range st.topo.Links {
		if l.Name() == name {
			return l.ID, true
		}
	}
	return 0, false
}
