package api

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync/atomic"
	"time"
)

// minRate makes a request body arrive at rate bytes/s or better, after a
// grace: a client that announces a body and trickles it (or
// sends none) loses its request with 408 instead of holding a slot until
// the server's read timeout.
func minRate(w http.ResponseWriter, body io.ReadCloser, rate float64, grace time.Duration, refused *atomic.Uint64) io.ReadCloser {
	return &rateBody{ReadCloser: body, rc: http.NewResponseController(w), rate: rate, grace: grace, start: time.Now(), refused: refused}
}

type rateBody struct {
	io.ReadCloser
	rc      *http.ResponseController
	rate    float64
	grace   time.Duration
	start   time.Time
	read    int64
	refused *atomic.Uint64
}

func (b *rateBody) Read(p []byte) (int, error) {
	due := b.start.Add(b.grace + time.Duration(float64(b.read+int64(len(p)))/b.rate*float64(time.Second)))
	b.rc.SetReadDeadline(due)
	n, err := b.ReadCloser.Read(p)
	b.read += int64(n)
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		b.refused.Add(1)
		return n, &httpError{http.StatusRequestTimeout, "slow_body",
			fmt.Sprintf("request body slower than %.0f bytes/s", b.rate)}
	}
	return n, err
}
