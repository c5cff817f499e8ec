package egress

// The proxy's own upstream client.
//
// Rules:
//   - A request is written and its answer read on the goroutine that
//     asked (the proxy's handler), over a pooled keep-alive TLS
//     connection. net/http's Transport hands each request to a writer
//     goroutine and each answer back from a reader goroutine; on this
//     path those two hand-offs cost more than the whole added-latency
//     budget (egressbench), so they are not made.
//   - HTTP/1.1 only (ALPN says so); with a proxy configured in the
//     environment for the upstream, net/http's Transport serves instead.
//   - A pooled connection is checked before reuse (a non-blocking peek:
//     an idle HTTP/1.1 connection has nothing to read, so data or EOF
//     means the upstream closed it). A reused connection that fails before
//     any byte of the answer arrived is retried once on a new one: the
//     upstream answers a model call's headers before it works on it, so
//     it did not act on a request it never answered.
//   - A connection goes back to the pool only after its answer was read
//     to the end with keep-alive; one closed early, cancelled or in error
//     is closed. There is no timer per request: a wait ends when the box's
//     client gives up (its connection closes, which cancels the request),
//     and the clients have timeouts of their own.

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"syscall"
	"time"
)

// UpstreamOptions tune NewUpstreamTransport; the zero value is what the
// proxy uses.
type UpstreamOptions struct {
	// TLS is the client TLS configuration (nil: the system roots).
	TLS *tls.Config
	// MaxIdle caps the pooled idle connections (default 16).
	MaxIdle int
	// IdleTimeout drops a connection idle this long (default 90 s).
	IdleTimeout time.Duration
}

// NewUpstreamTransport is the proxy's upstream transport (see the rules
// above); a request that is not https, or one the environment routes
// through a proxy, is served by NewTransport's.
func NewUpstreamTransport(o UpstreamOptions) http.RoundTripper {
	if o.MaxIdle == 0 {
		o.MaxIdle = 16
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = 90 * time.Second
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if o.TLS != nil {
		cfg = o.TLS.Clone()
	}
	cfg.NextProtos = []string{"http/1.1"}
	if cfg.ClientSessionCache == nil {
		cfg.ClientSessionCache = tls.NewLRUClientSessionCache(32)
	}
	fallback := NewTransport()
	fallback.TLSClientConfig = cfg.Clone()
	fallback.TLSClientConfig.NextProtos = nil
	return &upstreamTransport{o: o, tls: cfg, fallback: fallback, idle: map[string][]*upConn{}}
}

type upstreamTransport struct {
	o        UpstreamOptions
	tls      *tls.Config
	fallback *http.Transport

	mu   sync.Mutex
	idle map[string][]*upConn // by host:port, most recent last
}

type upConn struct {
	tc    *tls.Conn
	raw   syscall.Conn
	br    *bufio.Reader
	bw    *bufio.Writer
	since time.Time // idle since
}

func (t *upstreamTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != "https" {
		return t.fallback.RoundTrip(req)
	}
	if p, err := http.ProxyFromEnvironment(req); err != nil || p != nil {
		return t.fallback.RoundTrip(req)
	}
	addr := req.URL.Host
	if req.URL.Port() == "" {
		addr = net.JoinHostPort(req.URL.Hostname(), "443")
	}
	c, reused := t.get(addr)
	for {
		if c == nil {
			var err error
			if c, err = t.dial(req.Context(), addr, req.URL.Hostname()); err != nil {
				closeBody(req)
				return nil, err
			}
		}
		resp, started, err := t.exchange(req, c, addr)
		if err == nil {
			return resp, nil
		}
		c.tc.Close()
		if !reused || started || req.GetBody == nil || req.Context().Err() != nil {
			return nil, err
		}
		// A stale pooled connection: once more on a new one.
		body, gerr := req.GetBody()
		if gerr != nil {
			return nil, err
		}
		req = req.Clone(req.Context())
		req.Body = body
		c, reused = nil, false
	}
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// exchange writes req on c and reads the answer's headers; started says
// whether any byte of the answer arrived.
func (t *upstreamTransport) exchange(req *http.Request, c *upConn, addr string) (*http.Response, bool, error) {
	ctx := req.Context()
	stop := context.AfterFunc(ctx, func() { c.tc.Close() })
	fail := func(started bool, err error) (*http.Response, bool, error) {
		stop()
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return nil, started, err
	}
	if err := req.Write(c.bw); err != nil {
		return fail(false, err)
	}
	if err := c.bw.Flush(); err != nil {
		return fail(false, err)
	}
	var resp *http.Response
	for {
		if _, err := c.br.Peek(1); err != nil {
			return fail(false, err)
		}
		r, err := http.ReadResponse(c.br, req)
		if err != nil {
			return fail(true, err)
		}
		if r.StatusCode >= 100 && r.StatusCode < 200 && r.StatusCode != http.StatusSwitchingProtocols {
			continue // an informational answer (103 Early Hints): the real one follows
		}
		resp = r
		break
	}
	resp.Body = &upBody{rc: resp.Body, t: t, c: c, addr: addr, stop: stop, reuse: !resp.Close && !req.Close}
	return resp, true, nil
}

// upBody returns its connection to the pool once read to the end.
type upBody struct {
	rc    io.ReadCloser
	t     *upstreamTransport
	c     *upConn
	addr  string
	stop  func() bool
	reuse bool
	done  bool
}

func (b *upBody) Read(p []byte) (int, error) {
	if b.done {
		return 0, io.EOF
	}
	n, err := b.rc.Read(p)
	if err != nil {
		b.finish(errors.Is(err, io.EOF))
	}
	return n, err
}

func (b *upBody) Close() error {
	b.finish(false)
	return nil
}

// finish ends the exchange: the connection is pooled if the answer was
// read to its end, cancellation did not close it and keep-alive holds.
func (b *upBody) finish(complete bool) {
	if b.done {
		return
	}
	b.done = true
	live := b.stop()
	if complete && live && b.reuse {
		b.t.put(b.addr, b.c)
		return
	}
	b.c.tc.Close()
}

func (t *upstreamTransport) dial(ctx context.Context, addr, host string) (*upConn, error) {
	cfg := t.tls.Clone()
	if cfg.ServerName == "" {
		cfg.ServerName = host
	}
	hctx, cancel := context.WithTimeout(ctx, 45*time.Second)
	defer cancel()
	nc, err := (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext(hctx, "tcp", addr)
	if err != nil {
		return nil, &url.Error{Op: "dial", URL: "https://" + addr, Err: err}
	}
	tc := tls.Client(rawIO(nc), cfg)
	if err := tc.HandshakeContext(hctx); err != nil {
		nc.Close()
		return nil, &url.Error{Op: "dial", URL: "https://" + addr, Err: err}
	}
	if p := tc.ConnectionState().NegotiatedProtocol; p != "" && p != "http/1.1" {
		tc.Close()
		return nil, fmt.Errorf("upstream %s chose protocol %q, not HTTP/1.1", addr, p)
	}
	raw, _ := tc.NetConn().(syscall.Conn)
	return &upConn{tc: tc, raw: raw, br: bufio.NewReaderSize(tc, 16<<10), bw: bufio.NewWriterSize(tc, 16<<10)}, nil
}

// get takes the most recently pooled live connection to addr.
func (t *upstreamTransport) get(addr string) (*upConn, bool) {
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	l := t.idle[addr]
	for len(l) > 0 {
		c := l[len(l)-1]
		l = l[:len(l)-1]
		t.idle[addr] = l
		if now.Sub(c.since) < t.o.IdleTimeout && c.br.Buffered() == 0 && quiet(c.raw) {
			return c, true
		}
		c.tc.Close()
	}
	return nil, false
}

func (t *upstreamTransport) put(addr string, c *upConn) {
	c.since = time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	l := append(t.idle[addr], c)
	if len(l) > t.o.MaxIdle {
		l[0].tc.Close()
		l = l[1:]
	}
	t.idle[addr] = l
}

// quiet reports whether an idle connection has nothing to read: data (a
// TLS alert) or EOF mean the upstream has closed it.
func quiet(c syscall.Conn) bool {
	if c == nil {
		return true
	}
	rc, err := c.SyscallConn()
	if err != nil {
		return false
	}
	ok := false
	rc.Read(func(fd uintptr) bool {
		ok = rawPeek(fd) == syscall.EAGAIN
		return true
	})
	return ok
}

// CloseIdleConnections closes the pooled connections.
func (t *upstreamTransport) CloseIdleConnections() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for addr, l := range t.idle {
		for _, c := range l {
			c.tc.Close()
		}
		delete(t.idle, addr)
	}
	t.fallback.CloseIdleConnections()
}
