package api

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/e3fabric/e3fabric/control/internal/model"
)

// tenantMetrics serves GET /metrics to a tenant's token: its services'
// state and its usage against its quota, nothing of the fabric or of other
// tenants (docs/tenants.md).
func (s *Server) tenantMetrics(w http.ResponseWriter, r *http.Request, tenant string) {
	snap, err := s.c.Snapshot(r.Context())
	if err != nil {
		st, code := errorStatus(err)
		writeError(w, st, code, err.Error())
		return
	}
	state := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "e3_tenant_service_state",
		Help: "1 for each of the tenant's services, labelled with its state (programmed, pending, degraded, down)."},
		[]string{"service", "type", "state"})
	usage := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "e3_tenant_usage",
		Help: "What the tenant's services hold: services, circuits, macs (the sum of mac_limit), bandwidth_mbps."},
		[]string{"resource"})
	quota := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "e3_tenant_quota",
		Help: "The tenant's quota per resource (0: no cap)."}, []string{"resource"})
	var u model.TenantUsage
	for _, n := range snap.ServiceNames() {
		rec := snap.Services[n]
		if rec.Spec.Tenant != tenant {
			continue
		}
		state.WithLabelValues(n, rec.Spec.Type, snap.ServiceStatus(rec).State).Set(1)
		u = u.Add(&rec.Spec)
	}
	var q model.TenantQuota
	if t := snap.Tenants[tenant]; t != nil {
		q = t.Quota
	}
	for _, x := range []struct {
		name      string
		has, caps int
	}{{"services", u.Services, q.Services}, {"circuits", u.Circuits, q.Circuits}, {"macs", u.MACs, q.MACs},
		{"bandwidth_mbps", u.BandwidthMbps, q.BandwidthMbps}} {
		usage.WithLabelValues(x.name).Set(float64(x.has))
		quota.WithLabelValues(x.name).Set(float64(x.caps))
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(state, usage, quota)
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(w, r)
}
