// Package dprpc is a JSON-RPC 2.0 client for e3-vswitchd's control socket
// (docs/control-api.md): one request object out, one response object plus
// "\n" back, over a Unix stream socket.
//
// A Client holds at most one connection and serialises calls on it (the
// datapath serves one request at a time anyway). It connects lazily, and
// after any transport error or timeout it drops the connection so the next
// call starts on a fresh one; a datapath restart therefore costs one
// failed call at most, and usually none (see Call).
package dprpc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"
	"time"
)

// DefaultTimeout bounds one call when the caller's context has no earlier
// deadline. Every datapath method is a table update or a dump; a port_add
// that probes a device is the slowest.
const DefaultTimeout = 10 * time.Second

// Error is an error answered by the datapath: the call reached it and it
// refused; its state is unchanged.
type Error struct {
	Method  string
	Code    int
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: %s (code %d)", e.Method, e.Message, e.Code)
}

// HasCode reports whether err is (or wraps) a datapath Error with code.
func HasCode(err error, code int) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}

// IsNotFound reports a -32000 answer: the object, or one it refers to, does
// not exist.
func IsNotFound(err error) bool { return HasCode(err, CodeNotFound) }

// Client is a connection to one datapath's control socket. It is safe for
// concurrent use; calls are serialised.
type Client struct {
	path    string
	timeout time.Duration

	mu     sync.Mutex // serialises calls and guards the fields below
	conn   net.Conn
	dec    *json.Decoder
	nextID uint64
	conns  uint64 // connections made so far
}

// New returns a client for the socket at path. It does not connect; the
// first call does. timeout <= 0 means DefaultTimeout.
func New(path string, timeout time.Duration) *Client {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &Client{path: path, timeout: timeout}
}

// Path is the socket's path.
func (c *Client) Path() string { return c.path }

// Connections counts the connections made so far; a caller that sees it
// grow knows the previous connection broke (e.g. the datapath restarted).
func (c *Client) Connections() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conns
}

// Close drops the connection, if any. The client stays usable.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dropLocked()
}

type request struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  any    `json:"params,omitempty"`
	ID      uint64 `json:"id"`
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// Call sends method with params (nil for none) and decodes the result into
// result (nil to ignore it). It returns *Error when the datapath answered
// with an error, and a wrapped transport error otherwise.
//
// If a connection that was opened by an earlier call turns out to be dead
// (the datapath restarted since), the call is sent once more on a fresh
// connection. That is safe because every method is idempotent: a repeated
// _add changes nothing and a repeated _del answers not-found.
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	c.mu.Lock()
	defer c.mu.Unlock()

	reused := c.conn != nil
	raw, err := c.roundTrip(ctx, method, params)
	if err != nil && reused && isStaleConn(err) && ctx.Err() == nil {
		raw, err = c.roundTrip(ctx, method, params)
	}
	if err != nil {
		return err
	}
	if result == nil {
		return nil
	}
	if err := json.Unmarshal(raw, result); err != nil {
		return fmt.Errorf("%s: decode result: %w", method, err)
	}
	return nil
}

// roundTrip does one request/response on the connection, connecting first
// if needed. Any failure other than an answered error drops the connection.
func (c *Client) roundTrip(ctx context.Context, method string, params any) (json.RawMessage, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	deadline := time.Now().Add(c.timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	if err := c.connect(ctx); err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	conn := c.conn
	if err := conn.SetDeadline(deadline); err != nil {
		c.dropLocked()
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	// Cancelling ctx interrupts a blocked read or write at once.
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	c.nextID++
	id := c.nextID
	msg, err := json.Marshal(request{JSONRPC: "2.0", Method: method, Params: params, ID: id})
	if err != nil {
		return nil, fmt.Errorf("%s: encode params: %w", method, err)
	}
	fail := func(err error) (json.RawMessage, error) {
		c.dropLocked()
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	if _, err := conn.Write(append(msg, '\n')); err != nil {
		return fail(err)
	}
	// The decoder reads exactly one object; the "\n" after it is skipped
	// as whitespace before the next one.
	var resp response
	if err := c.dec.Decode(&resp); err != nil {
		return fail(err)
	}
	var gotID uint64
	if json.Unmarshal(resp.ID, &gotID) != nil || gotID != id {
		// Calls are serialised and a timed-out call drops its connection,
		// so this is a server bug; the stream can no longer be trusted.
		return fail(fmt.Errorf("response id %s, want %d", resp.ID, id))
	}
	if resp.Error != nil {
		return nil, &Error{Method: method, Code: resp.Error.Code, Message: resp.Error.Message}
	}
	return resp.Result, nil
}

// Request is one call of a Pipeline.
type Request struct {
	Method string
	Params any
}

// Reply is one call's outcome: its result, or an error (*Error when the
// datapath answered with one).
type Reply struct {
	Result json.RawMessage
	Err    error
}

// Pipeline sends reqs in order on one connection without waiting for each
// answer, and returns their replies in the same order. The datapath serves
// a connection's requests one after the other, in order, so a pipeline
// keeps the order of its calls (make-before-break holds) and costs one
// round trip rather than one per call. A transport failure fails the calls
// not yet answered; a dead reused connection is retried once, whole, when
// it failed before any answer.
func (c *Client) Pipeline(ctx context.Context, reqs []Request) []Reply {
	c.mu.Lock()
	defer c.mu.Unlock()
	reused := c.conn != nil
	out, answered := c.pipeline(ctx, reqs)
	if answered == 0 && reused && len(reqs) > 0 && isStaleConn(out[0].Err) && ctx.Err() == nil {
		out, _ = c.pipeline(ctx, reqs)
	}
	return out
}

func (c *Client) pipeline(ctx context.Context, reqs []Request) (out []Reply, answered int) {
	out = make([]Reply, len(reqs))
	if len(reqs) == 0 {
		return out, 0
	}
	if err := c.connect(ctx); err != nil {
		for i, r := range reqs {
			out[i].Err = fmt.Errorf("%s: %w", r.Method, err)
		}
		return out, 0
	}
	conn := c.conn
	// The deadline moves on with every answer: a long pipeline is fine
	// while the datapath keeps answering.
	deadline := func() time.Time {
		d := time.Now().Add(c.timeout)
		if cd, ok := ctx.Deadline(); ok && cd.Before(d) {
			d = cd
		}
		return d
	}
	conn.SetDeadline(deadline())
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	// Requests whose params do not encode fail alone and are not sent.
	var sent []int
	var msgs [][]byte
	for i, r := range reqs {
		c.nextID++
		msg, err := json.Marshal(request{JSONRPC: "2.0", Method: r.Method, Params: r.Params, ID: c.nextID})
		if err != nil {
			out[i].Err = fmt.Errorf("%s: encode params: %w", r.Method, err)
			c.nextID--
			continue
		}
		sent, msgs = append(sent, i), append(msgs, append(msg, '\n'))
	}
	first := c.nextID - uint64(len(sent)) + 1
	// The writer runs beside the reader: the datapath stops reading while
	// its answers are not read, so writing everything first could block.
	werr := make(chan error, 1)
	go func() {
		w := bufio.NewWriterSize(conn, 64<<10)
		for _, m := range msgs {
			if _, err := w.Write(m); err != nil {
				werr <- err
				return
			}
		}
		werr <- w.Flush()
	}()
	fail := func(k int, err error) {
		c.dropLocked()
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		for _, i := range sent[k:] {
			out[i].Err = fmt.Errorf("%s: %w", reqs[i].Method, err)
		}
		<-werr
	}
	for k, i := range sent {
		var resp response
		if err := c.dec.Decode(&resp); err != nil {
			fail(k, err)
			return out, k
		}
		conn.SetDeadline(deadline())
		var id uint64
		if json.Unmarshal(resp.ID, &id) != nil || id != first+uint64(k) {
			fail(k, fmt.Errorf("response id %s, want %d", resp.ID, first+uint64(k)))
			return out, k
		}
		if resp.Error != nil {
			out[i].Err = &Error{Method: reqs[i].Method, Code: resp.Error.Code, Message: resp.Error.Message}
		} else {
			out[i].Result = resp.Result
		}
	}
	if err := <-werr; err != nil {
		c.dropLocked()
	}
	return out, len(sent)
}

// connect opens the connection if there is none.
func (c *Client) connect(ctx context.Context) error {
	if c.conn != nil {
		return nil
	}
	d := net.Dialer{Timeout: c.timeout}
	conn, err := d.DialContext(ctx, "unix", c.path)
	if err != nil {
		return fmt.Errorf("connect %s: %w", c.path, err)
	}
	c.conn, c.dec = conn, json.NewDecoder(conn)
	c.conns++
	return nil
}

func (c *Client) dropLocked() error {
	if c.conn == nil {
		return nil
	}
	err := c.conn.Close()
	c.conn, c.dec = nil, nil
	return err
}

// isStaleConn reports errors that mean the peer closed the connection
// before answering: what a reused connection to a restarted datapath gives.
func isStaleConn(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET)
}
