// Package metrics holds what the controller's and the agent's Prometheus
// metrics share: the registry every process builds (no global one), and
// the latency of a gRPC client's calls (etcd's), by method. The metrics
// themselves are defined beside what they measure (docs/operations.md).
package metrics

import (
	"context"
	"net/http"
	"path"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"
)

// NewRegistry returns a registry with the Go runtime's and the process's
// collectors and cs.
func NewRegistry(cs ...prometheus.Collector) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reg.MustRegister(cs...)
	return reg
}

// Handler serves reg in the Prometheus text format; a collector's error
// is logged in the response's place, never half a page.
func Handler(reg *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError})
}

// GRPCLatency times a gRPC client's unary calls by method: etcd's Range,
// Txn, Put and so on.
type GRPCLatency struct {
	hist *prometheus.HistogramVec
}

// NewGRPCLatency names the histogram, e.g. "e3_controller_etcd_request_seconds".
func NewGRPCLatency(name, help string) *GRPCLatency {
	return &GRPCLatency{hist: prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: name, Help: help,
		Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14), // 0.5 ms .. 4 s
	}, []string{"method"})}
}

// DialOption adds the timing to a client's connection.
func (g *GRPCLatency) DialOption() grpc.DialOption {
	return grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any,
		cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		start := time.Now()
		err := invoker(ctx, method, req, reply, cc, opts...)
		g.hist.WithLabelValues(path.Base(method)).Observe(time.Since(start).Seconds())
		return err
	})
}

func (g *GRPCLatency) Describe(ch chan<- *prometheus.Desc) { g.hist.Describe(ch) }
func (g *GRPCLatency) Collect(ch chan<- prometheus.Metric) { g.hist.Collect(ch) }
