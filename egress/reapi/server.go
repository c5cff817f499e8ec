package reapi

import (
	"bufio"
	"context"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

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
	// BoxToken, when set, must come with every stream as
	// "authorization: Bearer TOKEN". It is for a box on the host network
	// (--net), where any local process could reach a loopback listener;
	// behind the relay's 0600 socket it is not needed. It is never
	// forwarded.
	BoxToken string
}

// Server serves one gRPC backend to one box.
type Server struct {
	cfg  *Config
	opts Options
	src  cred.Source
	ops  *opSet
	hs   *http.Server
	up   *http.Transport
	sem  chan struct{}
}

// New checks opts and prepares both sides; nothing is dialled until the
// first stream passes the policy.
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
	s := &Server{cfg: cfg, opts: opts, src: src, ops: newOpSet(), sem: make(chan struct{}, opts.MaxConns)}

	// The box side: prior-knowledge HTTP/2 only, no HTTP/1 and no Upgrade.
	var box http.Protocols
	box.SetUnencryptedHTTP2(true)
	s.hs = &http.Server{
		Handler:        http.HandlerFunc(s.serveStream),
		Protocols:      &box,
		MaxHeaderBytes: maxHeaderBlock,
		HTTP2: &http.HTTP2Config{
			MaxConcurrentStreams:          256,
			MaxDecoderHeaderTableSize:     headerTableSize,
			MaxReceiveBufferPerStream:     2 << 20,
			MaxReceiveBufferPerConnection: 3 << 20,
			// A relay whose box died without closing is found by ping.
			SendPingTimeout: time.Minute,
			PingTimeout:     30 * time.Second,
		},
		// A library does not log; what matters is in the audit log.
		ErrorLog: log.New(io.Discard, "", 0),
	}

	host, _, _ := net.SplitHostPort(cfg.Upstream)
	tlsConf := &tls.Config{ServerName: host, RootCAs: opts.RootCAs, NextProtos: []string{"h2"}, MinVersion: tls.VersionTLS12}
	dial := opts.Dial
	if dial == nil {
		d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
		dial = d.DialContext
	}
	var up http.Protocols
	up.SetHTTP2(true)
	s.up = &http.Transport{
		Protocols: &up,
		// Proxy stays nil: the host's HTTPS_PROXY is not ours to follow.
		DialTLSContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			raw, err := dial(ctx, network, addr)
			if err != nil {
				return nil, fmt.Errorf("dial upstream %s: %w", addr, err)
			}
			c := tls.Client(raw, tlsConf.Clone())
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
		IdleConnTimeout:    5 * time.Minute,
		HTTP2: &http.HTTP2Config{
			// A full connection means another one, not a queue.
			StrictMaxConcurrentRequests: false,
			MaxReceiveBufferPerStream:   2 << 20,
			// Pings find an upstream connection that died silently, so
			// a long WaitExecution fails instead of hanging.
			SendPingTimeout:  30 * time.Second,
			PingTimeout:      15 * time.Second,
			WriteByteTimeout: time.Minute,
		},
	}
	return s, nil
}

// Serve accepts the box's connections on ln (the 0600 Unix socket its
// relay connects to) and serves each as prior-knowledge h2c until ln
// fails or the server is closed. It returns nil after Close.
func (s *Server) Serve(ln net.Listener) error {
	err := s.hs.Serve(&boxListener{Listener: ln, sem: s.sem})
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("egress %s: %w", s.cfg.Name, err)
	}
	return nil
}

// Close stops the listeners, drops the box's connections and the idle
// upstream ones.
func (s *Server) Close() error {
	err := s.hs.Close()
	s.up.CloseIdleConnections()
	return err
}

// boxListener caps the box's connections and puts a schemeConn under
// each.
type boxListener struct {
	net.Listener
	sem chan struct{}
}

func (l *boxListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.sem <- struct{}{}:
			return &boxConn{schemeConn: newSchemeConn(c), sem: l.sem}, nil
		default:
			// The box holds MaxConns connections already: turn the next
			// away rather than queue it unread.
			c.Close()
		}
	}
}

type boxConn struct {
	*schemeConn
	sem  chan struct{}
	once sync.Once
}

func (c *boxConn) Close() error {
	c.once.Do(func() { <-c.sem })
	return c.schemeConn.Conn.Close()
}

// boxTokenOK compares in constant time, so the answer's timing does not
// tell a guesser how much of the token was right.
func boxTokenOK(values []string, token string) bool {
	if len(values) != 1 {
		return false
	}
	got, ok := strings.CutPrefix(values[0], "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(got), []byte(token)) == 1
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

	if s.opts.BoxToken != "" && !boxTokenOK(r.Header.Values("Authorization"), s.opts.BoxToken) {
		deny(codeUnauthenticated, "no or wrong box token", "this endpoint needs the box's token as authorization: Bearer TOKEN")
		return
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
