package controller

import (
	"github.com/e3fabric/e3fabric/control/internal/desired"
	"github.com/e3fabric/e3fabric/control/internal/dpconfig"
	"github.com/e3fabric/e3fabric/control/internal/model"
)

// precoder encodes what services planned in a batch will store while the
// next ones are planned: planning is serial (the label allocator), and
// encoding (fragments: JSON and gzip; records: the route as link ids, the
// value sequence and its digest) would otherwise wait for the commit. A
// planned service is never changed before the commit, so what is encoded
// stays valid; only the record's generations wait for the commit.
type precoder struct {
	links model.Links
	in    chan *svcState
	done  chan struct{}
	// Written by the encoder only, read after done.
	frags   map[*desired.Fragment]encoded
	records map[*svcState]*model.StoredService
}

type encoded struct {
	b   []byte
	err error
}

// newPrecoder starts an encoder for services routed over links' topology.
func newPrecoder(links model.Links) *precoder {
	p := &precoder{links: links, in: make(chan *svcState, 64), done: make(chan struct{}),
		frags: map[*desired.Fragment]encoded{}, records: map[*svcState]*model.StoredService{}}
	go func() {
		defer close(p.done)
		for s := range p.in {
			for _, f := range s.frags {
				b, err := dpconfig.EncodeFragment(f)
				p.frags[f] = encoded{b, err}
			}
			p.records[s] = storedForm(s, p.links)
		}
	}()
	return p
}

// add queues a planned service for encoding.
func (p *precoder) add(s *svcState) { p.in <- s }

// wait hands every encoding to ch, once all added are done.
func (p *precoder) wait(ch *change) {
	close(p.in)
	<-p.done
	ch.encoded, ch.records = p.frags, p.records
}
