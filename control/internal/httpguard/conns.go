package httpguard

import (
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/e3fabric/e3fabric/control/internal/model"
)

// ConnGuard caps the API's open connections. When it is full, a new
// connection takes the place of the longest-idle one (one that has sent no
// request yet, or waits between keep-alive requests); only when every
// connection is busy is the new one closed at once. So idle connections,
// however many, never keep a client out, and the descriptors the API holds
// (the process shares them with its embedded etcd) stay bounded.
type ConnGuard struct {
	max     int
	mu      sync.Mutex
	conns   map[net.Conn]*guarded // by the accepted (TCP) connection
	evicted atomic.Uint64
	refused atomic.Uint64
}

type guarded struct {
	busy  bool
	since time.Time
}

// NewConnGuard allows max open connections.
func NewConnGuard(max int) *ConnGuard {
	return &ConnGuard{max: max, conns: map[net.Conn]*guarded{}}
}

// Listener wraps l: its Accept makes room or refuses as above.
func (g *ConnGuard) Listener(l net.Listener) net.Listener { return &guardedListener{l, g} }

// ConnState is the http.Server hook that tells busy from idle.
func (g *ConnGuard) ConnState(c net.Conn, st http.ConnState) {
	if nc, ok := c.(interface{ NetConn() net.Conn }); ok { // TLS
		c = nc.NetConn()
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	switch st {
	case http.StateActive:
		if s := g.conns[c]; s != nil {
			s.busy = true
		}
	case http.StateIdle:
		if s := g.conns[c]; s != nil {
			s.busy, s.since = false, time.Now()
		}
	case http.StateClosed, http.StateHijacked:
		delete(g.conns, c)
	}
}

// Stats returns the open connections and what was evicted and refused.
func (g *ConnGuard) Stats() *model.APIStats {
	g.mu.Lock()
	defer g.mu.Unlock()
	return &model.APIStats{Open: len(g.conns), Max: g.max, Evicted: g.evicted.Load(), Refused: g.refused.Load()}
}

// admit registers c, evicting the longest-idle connection if full.
func (g *ConnGuard) admit(c net.Conn) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.conns) >= g.max {
		var oldest net.Conn
		var at time.Time
		for oc, s := range g.conns {
			if !s.busy && (oldest == nil || s.since.Before(at)) {
				oldest, at = oc, s.since
			}
		}
		if oldest == nil {
			g.refused.Add(1)
			return false
		}
		delete(g.conns, oldest)
		oldest.Close()
		g.evicted.Add(1)
	}
	g.conns[c] = &guarded{since: time.Now()}
	return true
}

type guardedListener struct {
	net.Listener
	g *ConnGuard
}

func (l *guardedListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.g.admit(c) {
			return c, nil
		}
		c.Close()
	}
}
