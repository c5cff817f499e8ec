package reapi

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/net/http2"

	"github.com/aisan-dev/aisan/egress/audit"
	"github.com/aisan-dev/aisan/egress/cred"
)

// Options are the facts of one launch that the file cannot know.
type Options struct {
	// Authority is the in-box endpoint the client dials, for example
	// "127.0.0.1:8712"; every stream's :authority must equal it.
	Authority string
	// Audit receives one entry per stream; nil discards.
	Audit audit.Sink
	// Source overrides the credential source the file names (tests).
	Source cred.Source
	// RootCAs verifies the upstream; nil means the system roots, which
	// honour SSL_CERT_FILE.
	RootCAs *x509.CertPool
	// Dial opens the TCP connection to the upstream; nil means
	// net.Dialer. Tests map the upstream's name to a loopback server.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// MaxConns caps the box's concurrent connections; 0 means 64.
	MaxConns int
}

// Server serves one gRPC backend to one box.
type Server struct {
	cfg  *Config
	opts Options
	src  cred.Source
	ops  *opSet
	h2   *http2.Server
	up   *http2.Transport
	sem  chan struct{}
	base *http.Server

	mu     sync.Mutex
	closed bool
	lns    map[net.Listener]struct{}
	conns  map[net.Conn]struct{}
	wg     sync.WaitGroup
}

// New checks opts and prepares the upstream transport; nothing is dialled
// until the first stream passes the policy.
func New(cfg *Config, opts Options) (*Server, error) {
	if cfg == nil {
		return nil, errors.New("egress reapi: no configuration")
	}
	if opts.Authority == "" {
		return nil, fmt.Errorf("egress %s: no in-box authority", cfg.Name)
	}
	src := opts.Source
	if src == nil {
		var err error
		if src, err = cfg.Source(); err != nil {
			return nil, fmt.Errorf("egress %s: %w", cfg.Name, err)
		}
	}
	if opts.Audit == nil {
		opts.Audit = audit.Discard
	}
	if opts.MaxConns <= 0 {
		opts.MaxConns = 64
	}
	host, _, _ := net.SplitHostPort(cfg.Upstream)
	s := &Server{
		cfg: cfg, opts: opts, src: src, ops: newOpSet(),
		sem:   make(chan struct{}, opts.MaxConns),
		lns:   make(map[net.Listener]struct{}),
		conns: make(map[net.Conn]struct{}),
		h2: &http2.Server{
			MaxConcurrentStreams:         256,
			MaxDecoderHeaderTableSize:    headerTableSize,
			MaxUploadBufferPerStream:     4 << 20,
			MaxUploadBufferPerConnection: 16 << 20,
			ReadIdleTimeout:              time.Minute,
			PingTimeout:                  30 * time.Second,
		},
		base: &http.Server{MaxHeaderBytes: maxHeaderBlock},
	}
	dial := opts.Dial
	if dial == nil {
		d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
		dial = d.DialContext
	}
	s.up = &http2.Transport{
		TLSClientConfig: &tls.Config{
			ServerName: host,
			RootCAs:    opts.RootCAs,
			NextProtos: []string{"h2"},
			MinVersion: tls.VersionTLS12,
		},
		DialTLSContext: func(ctx context.Context, network, addr string, tc *tls.Config) (net.Conn, error) {
			raw, err := dial(ctx, network, addr)
			if err != nil {
				return nil, fmt.Errorf("dial upstream %s: %w", addr, err)
			}
			c := tls.Client(raw, tc)
			if err := c.HandshakeContext(ctx); err != nil {
				raw.Close()
				return nil, fmt.Errorf("TLS to upstream %s: %w", addr, err)
			}
			if p := c.ConnectionState().NegotiatedProtocol; p != "h2" {
				c.Close()
				return nil, fmt.Errorf("upstream %s does not speak HTTP/2 over TLS (ALPN %q)", addr, p)
			}
			return c, nil
		},
		DisableCompression: true,
		// Pings find an upstream connection that died silently, so a
		// long WaitExecution fails over instead of hanging.
		ReadIdleTimeout:  30 * time.Second,
		PingTimeout:      15 * time.Second,
		WriteByteTimeout: time.Minute,
	}
	return s, nil
}

// Serve accepts the box's connections on ln (the 0600 Unix socket its
// relay connects to) and serves each as prior-knowledge h2c until ln
// fails or the server is closed. It returns nil after Close.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return net.ErrClosed
	}
	s.lns[ln] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.lns, ln)
		s.mu.Unlock()
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			return fmt.Errorf("egress %s: accept: %w", s.cfg.Name, err)
		}
		select {
		case s.sem <- struct{}{}:
		default:
			// The box holds MaxConns connections already: turn the
			// next away rather than queue it unread.
			c.Close()
			continue
		}
		if !s.track(c) {
			c.Close()
			<-s.sem
			return nil
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer func() { <-s.sem }()
			defer s.untrack(c)
			s.h2.ServeConn(newSchemeConn(c), &http2.ServeConnOpts{
				Handler:    http.HandlerFunc(s.serveStream),
				BaseConfig: s.base,
			})
		}()
	}
}

func (s *Server) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

func (s *Server) untrack(c net.Conn) {
	c.Close()
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

// Close stops the listeners, drops the box's connections and the idle
// upstream ones, and waits for the connection goroutines.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	for ln := range s.lns {
		ln.Close()
	}
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	s.up.CloseIdleConnections()
	return nil
}

// copyBufs holds the buffers answers are copied through, so a busy box
// does not allocate 64 KiB a stream.
var copyBufs = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// serveStream runs one gRPC call: policy, credential, upstream, answer.
func (s *Server) serveStream(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	e := audit.Entry{Backend: s.cfg.Name, Method: r.Method, Path: clip(r.RequestURI), Status: -1}
	var body *upBody
	answered := false
	defer func() {
		if body != nil {
			e.BytesUp = body.sent()
		}
		e.MS = float64(time.Since(start).Microseconds()) / 1000
		s.opts.Audit.Log(e)
	}()
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		if v == http.ErrAbortHandler || answered {
			if e.Refused == "" {
				e.Refused = "stream aborted"
			}
			panic(http.ErrAbortHandler)
		}
		// A bug of ours must not let the stream through: refuse it.
		e.Refused, e.Status = fmt.Sprintf("internal error: %v", v), codeInternal
		refuse(w, codeInternal, "aisan egress internal error")
	}()
	deny := func(code int, reason, toBox string) {
		e.Refused, e.Status = reason, code
		refuse(w, code, toBox)
	}

	if err := checkHeaders(s.cfg, s.opts.Authority, r); err != nil {
		deny(codePermissionDenied, err.Error(), err.Error())
		return
	}
	raw, msg, err := readFirst(r.Body, r.Header.Get("Grpc-Encoding"), s.cfg.MaxFirstMessage)
	var d *Denied
	if errors.As(err, &d) {
		deny(codePermissionDenied, d.Reason, d.Reason)
		return
	}
	if err != nil {
		e.Refused = "box stream ended: " + err.Error()
		return
	}
	if err := checkFirstMessage(s.cfg, r.RequestURI, msg, s.ops); err != nil {
		deny(codePermissionDenied, err.Error(), err.Error())
		return
	}
	tok, err := s.src.Token(r.Context())
	if err != nil {
		// The helper's own words stay on the host: the box learns only
		// that the host has no credential.
		deny(codeUnauthenticated, "credential: "+err.Error(),
			"the host has no credential for "+s.cfg.Upstream+" (its token command or file failed; see the egress audit log)")
		return
	}

	streamUp := s.cfg.clientStreams(r.RequestURI)
	var rest io.Reader = r.Body
	if streamUp {
		// Large reads drain the box's window in few steps; the transport
		// then sends them frame by frame.
		rest = bufio.NewReaderSize(r.Body, 256<<10)
	} else {
		// A one-message request is read to its end, so it goes upstream
		// with its length known and END_STREAM on its only DATA frame.
		if raw, err = readRest(raw, r.Body, s.cfg.MaxFirstMessage); err != nil {
			e.Refused = "box stream ended: " + err.Error()
			return
		}
		rest = http.NoBody
	}
	body = newUpBody(raw, rest)
	req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, "https://"+s.cfg.Upstream+r.RequestURI, body.view())
	if err != nil {
		deny(codeInternal, "building upstream request: "+err.Error(), "aisan egress internal error")
		return
	}
	req.Host = s.cfg.Upstream
	req.Header = forwardHeaders(s.cfg, r.Header, tok.Reveal())
	req.ContentLength = -1
	if !streamUp {
		req.ContentLength = int64(len(raw))
	}
	req.GetBody = body.getBody
	resp, err := s.up.RoundTrip(req)
	if err != nil {
		if r.Context().Err() != nil {
			e.Refused = "box cancelled the stream"
			return
		}
		deny(codeUnavailable, "upstream: "+err.Error(), "upstream "+s.cfg.Upstream+" unavailable")
		return
	}
	defer resp.Body.Close()

	h := w.Header()
	for k, v := range resp.Header {
		h[k] = v
	}
	trailersOnly := resp.Header.Get("Grpc-Status") != ""
	w.WriteHeader(resp.StatusCode)
	answered = true
	fl, _ := w.(http.Flusher)
	if !s.cfg.serverStreams(r.RequestURI) {
		fl = nil
	}
	if !trailersOnly && fl != nil {
		// Streaming calls such as WaitExecution answer with headers long
		// before the first message; the client may be waiting for them.
		fl.Flush()
	}
	var scan *opScanner
	if r.RequestURI == executeMethod {
		scan = &opScanner{found: s.ops.Add}
	}
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	buf := *bp
	for {
		n, rerr := resp.Body.Read(buf)
		if n > 0 {
			if scan != nil {
				scan.Write(buf[:n])
			}
			if _, err := w.Write(buf[:n]); err != nil {
				e.Refused = "box went away: " + err.Error()
				return
			}
			e.BytesDown += int64(n)
			if fl != nil {
				fl.Flush()
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			// Reset the box's stream, as the upstream reset ours.
			e.Refused = "upstream stream failed: " + rerr.Error()
			panic(http.ErrAbortHandler)
		}
	}
	for k, v := range resp.Trailer {
		h[http.TrailerPrefix+k] = v
	}
	status := resp.Trailer.Get("Grpc-Status")
	if trailersOnly {
		status = resp.Header.Get("Grpc-Status")
	}
	if c, err := strconv.Atoi(status); err == nil {
		e.Status = c
		if c == codeUnauthenticated {
			if inv, ok := s.src.(interface{ Invalidate() }); ok {
				inv.Invalidate()
			}
		}
	}
}
