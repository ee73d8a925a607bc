package api

import (
	"fmt"
	"net/http"

	"github.com/e3fabric/e3fabric/control/internal/model"
)

// tenantOps registers the tenants' endpoints: the fabric's tokens only
// (docs/tenants.md).
func (s *Server) tenantOps() {
	param := map[string]string{"tenant": "pattern=^[a-z0-9][a-z0-9_-]{0,31}$"}
	s.handle(op{pattern: "GET /v1/tenants", id: "listTenants", role: roleRead, status: 200, resp: []model.TenantView{},
		summary: "every tenant: ports, quota, usage, tokens (their ids)"},
		func(r *http.Request) (int, any, error) {
			v, err := s.c.Tenants(r.Context())
			return 200, v, err
		})
	s.handle(op{pattern: "GET /v1/tenants/{tenant}", id: "getTenant", role: roleRead, params: param, status: 200,
		resp: model.TenantView{}, errs: []int{404}, summary: "a tenant"},
		func(r *http.Request) (int, any, error) {
			v, err := s.c.Tenant(r.Context(), r.PathValue("tenant"))
			return 200, v, err
		})
	s.handle(op{pattern: "PUT /v1/tenants/{tenant}", id: "putTenant", role: roleAdmin, params: param, body: model.Tenant{},
		status: 200, resp: model.TenantView{}, errs: []int{404, 409, 422},
		summary: "create or replace a tenant; a replacement must keep its services within its ports and quota"},
		func(r *http.Request) (int, any, error) {
			var t model.Tenant
			if err := decode(r, &t); err != nil {
				return 0, nil, err
			}
			if name := r.PathValue("tenant"); t.Name != name {
				return 0, nil, &httpError{http.StatusUnprocessableEntity, "invalid",
					fmt.Sprintf("the body names tenant %q, the path %q", t.Name, name)}
			}
			if err := s.c.PutTenant(r.Context(), t); err != nil {
				return 0, nil, err
			}
			v, err := s.c.Tenant(r.Context(), t.Name)
			return 200, v, err
		})
	s.handle(op{pattern: "DELETE /v1/tenants/{tenant}", id: "deleteTenant", role: roleAdmin, params: param,
		status: 204, errs: []int{404, 409}, summary: "delete a tenant that owns no service, and its tokens"},
		func(r *http.Request) (int, any, error) {
			return 204, nil, s.c.DeleteTenant(r.Context(), r.PathValue("tenant"))
		})
	s.handle(op{pattern: "POST /v1/tenants/{tenant}/tokens", id: "createTenantToken", role: roleAdmin, params: param,
		body: model.TokenRequest{}, status: 201, resp: model.NewToken{}, errs: []int{404, 409, 422},
		summary: "a new token of the tenant (shown only in this answer; etcd keeps its digest)"},
		func(r *http.Request) (int, any, error) {
			var req model.TokenRequest
			if err := decode(r, &req); err != nil {
				return 0, nil, err
			}
			v, err := s.c.CreateToken(r.Context(), r.PathValue("tenant"), req.Role)
			return 201, v, err
		})
	s.handle(op{pattern: "DELETE /v1/tenants/{tenant}/tokens/{id}", id: "revokeTenantToken", role: roleAdmin,
		params: map[string]string{"tenant": param["tenant"], "id": "pattern=^[0-9a-f]{12}$"},
		status: 204, errs: []int{404}, summary: "revoke a token of the tenant, at once on every replica"},
		func(r *http.Request) (int, any, error) {
			return 204, nil, s.c.RevokeToken(r.Context(), r.PathValue("tenant"), r.PathValue("id"))
		})
}
