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
	"github.com/aisan-dev/aisan/egress/boxconn"
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
	// MaxConns caps the box's concurrent connections; 0 means
	// boxconn.MaxConns, the cap every box-facing server shares.
	MaxConns int
	// MaxHeld caps the bytes the box's streams hold on the host at once
	// (first messages until they are sent, replay room, a later
	// compressed message until it is checked); 0 means
	// DefaultMaxHeld.
	MaxHeld int
	// BoxToken, when set, must come with every stream as
	// "authorization: Bearer TOKEN". It is for a box on the host network
	// (--net), where any local process could reach a loopback listener;
	// behind the relay's 0600 socket it is not needed. It is never
	// forwarded.
	BoxToken string
}

// DefaultMaxHeld lets a box keep a few dozen large first messages in
// flight.
const DefaultMaxHeld = 256 << 20

// Server serves one gRPC backend to one box.
type Server struct {
	cfg  *Config
	opts Options
	src  cred.Source
	ops  *opSet
	mem  *budget
	hs   *http.Server
	up   *http.Transport
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
	if opts.MaxHeld <= 0 {
		opts.MaxHeld = DefaultMaxHeld
	}
	// One stream must always fit, or it would wait forever.
	opts.MaxHeld = max(opts.MaxHeld, 5+3*cfg.MaxFirstMessage+maxReplay)
	s := &Server{cfg: cfg, opts: opts, src: src, ops: newOpSet(), mem: newBudget(opts.MaxHeld)}

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
			MaxReadFrameSize:              maxReadFrame,
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
			// Writes leave in batches (see batchConn), which also
			// applies the byte timeout the transport would.
			bc := newBatchConn(raw, time.Minute)
			c := tls.Client(bc, tlsConf.Clone())
			if err := c.HandshakeContext(ctx); err != nil {
				bc.Close()
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
			SendPingTimeout: 30 * time.Second,
			PingTimeout:     15 * time.Second,
		},
	}
	return s, nil
}

// Serve accepts the box's connections on ln (the 0600 Unix socket its
// relay connects to) and serves each as prior-knowledge h2c until ln
// fails or the server is closed. It returns nil after Close.
func (s *Server) Serve(ln net.Listener) error {
	err := s.hs.Serve(boxconn.Limit(schemeListener{ln}, s.opts.MaxConns))
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

// Drain stops taking connections and lets the streams in flight finish
// until ctx is done; then it closes what is left.
func (s *Server) Drain(ctx context.Context) {
	if s.hs.Shutdown(ctx) != nil {
		s.hs.Close()
	}
	s.up.CloseIdleConnections()
}

// schemeListener puts a schemeConn under each of the box's connections.
type schemeListener struct{ net.Listener }

func (l schemeListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return newSchemeConn(c), nil
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

// bodyReaders hold the buffers a streaming request is read from the box
// through. Large reads drain the box's window in few steps (the server
// sends WINDOW_UPDATE as the handler reads), and a pool spares each
// ByteStream Write its own 256 KiB.
var bodyReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 256<<10) }}

// stream is one gRPC call on its way through: its audit entry and what
// admit learned.
type stream struct {
	w        http.ResponseWriter
	r        *http.Request
	e        audit.Entry
	held     int           // bytes taken from the budget
	raw      []byte        // the first message as received
	streamUp bool          // the request has more than one message
	body     *upBody       // the upstream request body, once sent
	br       *bufio.Reader // the box's body, buffered, for a streaming request
	later    *laterCheck   // br's messages after the first, checked on the way
	answered bool          // the upstream's answer has begun
}

// refusal is why a later request message was refused, nil when none was.
func (st *stream) refusal() *Denied {
	if st.later == nil {
		return nil
	}
	return st.later.refusal()
}

// refuse answers the box with a gRPC status; reason goes to the audit log
// and toBox to the client.
func (st *stream) refuse(code int, reason, toBox string) {
	st.e.Refused, st.e.Status = reason, code
	refuse(st.w, code, toBox)
}

// serveStream runs one gRPC call: admit, credential, forward, answer.
// Nothing after admit runs for a stream admit refused.
func (s *Server) serveStream(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	st := &stream{w: w, r: r, e: audit.Entry{Backend: s.cfg.Name, Method: r.Method, Path: clip(r.RequestURI), Status: -1}}
	defer func() {
		s.mem.release(st.held)
		if st.body != nil {
			st.body.detach()
			st.e.BytesUp = st.body.sent()
		}
		if st.br != nil {
			st.br.Reset(nil)
			bodyReaders.Put(st.br)
		}
		if d := st.refusal(); d != nil && st.e.Refused == "" {
			// The upstream answered before the refused message's end.
			st.e.Refused = d.Reason
		}
		st.e.MS = float64(time.Since(start).Microseconds()) / 1000
		s.opts.Audit.Log(st.e)
	}()
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		if v == http.ErrAbortHandler || st.answered {
			if st.e.Refused == "" {
				st.e.Refused = "stream aborted"
			}
			panic(http.ErrAbortHandler)
		}
		// A bug of ours must not let the stream through: refuse it.
		st.refuse(codeInternal, fmt.Sprintf("internal error: %v", v), "aisan egress internal error")
	}()

	if err := s.admit(st); err != nil {
		var d *Denied
		switch {
		case errors.As(err, &d):
			st.refuse(codePermissionDenied, d.Reason, d.Reason)
		case errors.Is(err, errNoBoxToken):
			st.refuse(codeUnauthenticated, err.Error(), "this endpoint needs the box's token as authorization: Bearer TOKEN")
		default:
			st.e.Refused = "box stream ended: " + err.Error()
		}
		return
	}
	tok, err := s.src.Token(r.Context())
	if err != nil {
		// The helper's own words stay on the host: the box learns only
		// that the host has no credential.
		logged := "credential: " + err.Error()
		if d := cred.Detail(err); d != "" {
			logged += " (" + d + ")"
		}
		st.refuse(codeUnauthenticated, logged,
			"the host has no credential for "+s.cfg.Upstream+" (its token command or file failed; see the egress audit log)")
		return
	}
	resp, err := s.forward(st, tok)
	if err != nil {
		if d := st.refusal(); d != nil {
			st.refuse(codePermissionDenied, d.Reason, d.Reason)
			return
		}
		if r.Context().Err() != nil {
			st.e.Refused = "box cancelled the stream"
			return
		}
		st.refuse(codeUnavailable, "upstream: "+err.Error(), "upstream "+s.cfg.Upstream+" unavailable")
		return
	}
	defer resp.Body.Close()
	s.answer(st, resp)
}

var errNoBoxToken = errors.New("no or wrong box token")

// admit runs the whole policy, reading (within the budget) as much of the
// request as the instance check needs; see policy.go.
func (s *Server) admit(st *stream) error {
	r := st.r
	if s.opts.BoxToken != "" && !boxTokenOK(r.Header.Values("Authorization"), s.opts.BoxToken) {
		return errNoBoxToken
	}
	if err := checkHeaders(s.cfg, s.opts.Authority, r); err != nil {
		return err
	}
	reserve := func(n int) error {
		if err := s.mem.acquire(r.Context(), n); err != nil {
			return err
		}
		st.held += n
		return nil
	}
	st.streamUp = s.cfg.clientStreams(r.RequestURI)
	if st.streamUp {
		if err := reserve(maxReplay); err != nil {
			return err
		}
	}
	raw, msg, err := readFirst(r.Body, r.Header.Get("Grpc-Encoding"), s.cfg.MaxFirstMessage, reserve)
	if err != nil {
		return err
	}
	if err := checkFirstMessage(s.cfg, r.RequestURI, msg, s.ops); err != nil {
		return err
	}
	if st.streamUp && r.Header.Get("Grpc-Encoding") == "gzip" {
		// Room for a later compressed message, kept until it is whole.
		if err := reserve(s.cfg.MaxFirstMessage); err != nil {
			return err
		}
	}
	if !st.streamUp {
		// A one-message request is read to its end, so it goes upstream
		// with its length known and END_STREAM on its only DATA frame.
		if err := onlyMessage(r.Body); err != nil {
			return err
		}
	}
	st.raw = raw
	return nil
}

// forward starts the upstream call with the host's credential.
func (s *Server) forward(st *stream, tok cred.Secret) (*http.Response, error) {
	r := st.r
	var rest io.Reader = http.NoBody
	if st.streamUp {
		st.br = bodyReaders.Get().(*bufio.Reader)
		st.br.Reset(r.Body)
		st.later = newLaterCheck(st.br, s.cfg, r.RequestURI, r.Header.Get("Grpc-Encoding"), s.ops)
		rest = st.later
	}
	st.body = newUpBody(st.raw, rest)
	req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, "https://"+s.cfg.Upstream+r.RequestURI, st.body.view())
	if err != nil {
		return nil, err
	}
	req.Host = s.cfg.Upstream
	req.Header = forwardHeaders(s.cfg, r.Header, tok.Reveal())
	req.ContentLength = -1
	if !st.streamUp {
		req.ContentLength = int64(len(st.raw))
	}
	req.GetBody = st.body.getBody
	return s.up.RoundTrip(req)
}

// answer streams the upstream's answer to the box, trailers included.
func (s *Server) answer(st *stream, resp *http.Response) {
	w, r := st.w, st.r
	h := w.Header()
	for k, v := range resp.Header {
		h[k] = v
	}
	trailersOnly := resp.Header.Get("Grpc-Status") != ""
	w.WriteHeader(resp.StatusCode)
	st.answered = true
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
				st.e.Refused = "box went away: " + err.Error()
				return
			}
			st.e.BytesDown += int64(n)
			if fl != nil {
				fl.Flush()
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			// Reset the box's stream, as the upstream reset ours.
			st.e.Refused = "upstream stream failed: " + rerr.Error()
			if d := st.refusal(); d != nil {
				st.e.Refused = d.Reason
			}
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
		st.e.Status = c
		if c == codeUnauthenticated {
			// The upstream no longer takes the token: fetch a new one
			// for the next stream.
			if inv, ok := s.src.(interface{ Invalidate() }); ok {
				inv.Invalidate()
			}
		}
	}
}
