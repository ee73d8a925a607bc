package controller

import (
	"github.com/e3fabric/e3fabric/control/internal/desired"
	"github.com/e3fabric/e3fabric/control/internal/dpconfig"
)

// precoder encodes the fragments of services planned in a batch while the
// next ones are planned: planning is serial (the label allocator), and
// encoding (JSON, gzip) would otherwise wait for the commit. A fragment is
// never changed once built, so its encoding stays valid until the commit.
type precoder struct {
	in   chan map[string]*desired.Fragment
	done chan struct{}
	out  map[*desired.Fragment]encoded // written by the encoder only, read after done
}

type encoded struct {
	b   []byte
	err error
}

func newPrecoder() *precoder {
	p := &precoder{in: make(chan map[string]*desired.Fragment, 64), done: make(chan struct{}),
		out: map[*desired.Fragment]encoded{}}
	go func() {
		defer close(p.done)
		for frags := range p.in {
			for _, f := range frags {
				b, err := dpconfig.EncodeFragment(f)
				p.out[f] = encoded{b, err}
			}
		}
	}()
	return p
}

// add queues frags for encoding.
func (p *precoder) add(frags map[string]*desired.Fragment) { p.in <- frags }

// wait returns every encoding, once all added are done.
func (p *precoder) wait() map[*desired.Fragment]encoded {
	close(p.in)
	<-p.done
	return p.out
}
