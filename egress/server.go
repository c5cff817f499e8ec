package egress

import (
	"context"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"mime"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/http/httputil"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/aisan-dev/aisan/egress/audit"
	"github.com/aisan-dev/aisan/egress/boxconn"
	"github.com/aisan-dev/aisan/egress/cred"
)

// Rules for serving (the order is the order of the checks):
//  1. With a per-box token (a --net box), exactly one credential header
//     must be present and carry it; else 401.
//  2. Method, path and query must be one of the backend's routes, exactly,
//     and the headers the backend's policy lists must hold only values it
//     knows; else refused before the body is read.
//  3. The box's token budget: once the tokens counted reach it, every
//     call is refused (not retried), saying how the user raises it.
//  4. The per-box rate limit; else 429 with retry-after.
//  5. The body: one JSON content type (UTF-8 or no charset), no content
//     encoding, no trailers, at most MaxBody bytes (413), strict JSON
//     object, then the backend's body policy.
//  6. Only then the credential is read (or refreshed).
//  7. The request is rebuilt from the route, the header allow-list, the
//     checked bytes and the credential, and the answer streamed back with
//     only the allowed response headers, its usage counted on the way
//     (usage.go); a stream already running is never cut, budget or not.
//  8. A 401 from the upstream, for a backend whose credential refreshes,
//     forces one refresh (shared with every other request that saw the
//     same token refused) and one retry with the new credential and the
//     same buffered body; a refresh that fails is a refusal, and a second
//     401 goes back to the client as it came.
// Any error or panic in 1–6 is a refusal in the API's own shape; nothing
// refused reaches the upstream.

// Options configure one served backend for one box.
type Options struct {
	// Token is the per-box token a --net box's client sends as its
	// placeholder credential. Empty for a box without network, whose 0600
	// socket in a 0700 directory is the authentication.
	Token string
	// Audit receives one entry per request; nil discards.
	Audit audit.Sink
	// Rate and Burst limit requests per box (default 2/s, burst 60: a
	// Claude /context sends about 25 count_tokens calls at once), when
	// Limiter is nil.
	Rate  rate.Limit
	Burst int
	// Limiter, when set, is the box's request rate, shared by its
	// backends and changed while they serve.
	Limiter *rate.Limiter
	// Meter, when set, counts the calls and tokens of the box's model
	// backends and holds its budget.
	Meter *Meter
	// Slot names the box in the commands a refusal tells the user to run
	// ("" leaves the name out).
	Slot string
	// Transport reaches the upstream; nil means NewUpstreamTransport's.
	Transport http.RoundTripper
	// ErrorLog receives proxy errors (never secrets); nil discards.
	ErrorLog *log.Logger
	// MaxConns caps the box's open connections (0: boxconn.MaxConns,
	// the cap every box-facing server shares); more wait in the kernel's
	// backlog until one closes.
	MaxConns int
}

// NewTransport is the upstream transport: TLS verified against the system
// store (so SSL_CERT_FILE works), HTTP/1.1 over a keep-alive pool, no
// transparent compression (the box must see the upstream's bytes, and we
// never decode them). HTTP/1.1 because Go's HTTP/2 client costs about a
// quarter of a millisecond more per request in egressbench, more than the
// whole budget, and a box rarely has more than a few calls in flight.
func NewTransport() *http.Transport {
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:       &tls.Config{MinVersion: tls.VersionTLS12},
		MaxIdleConns:          32,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   15 * time.Second,
		ResponseHeaderTimeout: 10 * time.Minute,
		DisableCompression:    true,
	}
}

// OneProc runs the calling process's Go code on one processor at a time
// (GOMAXPROCS 1); a process serving a box's backends calls it once. A call
// through the proxy wakes it several times (the box's request, the
// upstream's answer, each streamed event), and with several processors
// each wake-up hands the goroutine to another thread on another CPU; on
// one it runs where it woke. egressbench on 2 CPUs: about 0.1 ms less
// added latency per call. The launcher's own work beside the proxy (the
// terminal copy, the transcript) is I/O and needs no second one.
func OneProc() { runtime.GOMAXPROCS(1) }

// Server serves one backend for one box.
type Server struct {
	b     *Backend
	opt   Options
	lim   *rate.Limiter
	proxy *httputil.ReverseProxy
	hs    *http.Server
}

type ctxKey int

const exchangeKey ctxKey = 0

// exchange carries what the checks decided into Rewrite and the
// transport, and what happened there back to the audit line.
type exchange struct {
	route Route
	in    http.Header
	body  []byte
	cred  Credential
	// release gives back what the call held of the budget
	// ([Meter.hold]); it does nothing when there is no meter.
	release func()
	// refused is the reason the exchange was refused after admission (a
	// failed refresh), for the audit line.
	refused string
	// tokens are what the answer reported the call used.
	tokens *audit.Tokens
}

// NewServer checks the backend definition and builds its server.
func NewServer(b *Backend, o Options) (*Server, error) {
	if err := b.validate(); err != nil {
		return nil, err
	}
	if o.Audit == nil {
		o.Audit = audit.Discard
	}
	if o.Rate == 0 {
		o.Rate = DefaultRate
	}
	if o.Burst == 0 {
		o.Burst = DefaultBurst
	}
	if o.Transport == nil {
		o.Transport = NewUpstreamTransport(UpstreamOptions{})
	}
	if o.ErrorLog == nil {
		o.ErrorLog = log.New(io.Discard, "", 0)
	}
	lim := o.Limiter
	if lim == nil {
		lim = rate.NewLimiter(o.Rate, o.Burst)
	}
	s := &Server{b: b, opt: o, lim: lim}
	s.proxy = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			x := pr.In.Context().Value(exchangeKey).(*exchange)
			b.Rewrite(pr, x.route, x.body, x.cred)
		},
		Transport: retryTransport{s},
		// Zero: ReverseProxy then flushes every write of an event stream
		// or of a body of unknown length (chunked) as it arrives, and
		// writes a body of known length without a flush per write.
		FlushInterval: 0,
		ErrorLog:      o.ErrorLog,
		BufferPool:    copyBuffers,
		ModifyResponse: func(resp *http.Response) error {
			b.filterResponse(resp.Header)
			// Trailers pass the same list: the ones announced now, and
			// those the transport sets as the body ends, which
			// ReverseProxy then copies to the box.
			b.filterResponse(resp.Trailer)
			if resp.Body != nil && resp.Body != http.NoBody {
				resp.Body = &trailerFilter{ReadCloser: resp.Body, resp: resp, b: b}
			}
			if x, ok := resp.Request.Context().Value(exchangeKey).(*exchange); ok {
				countUsage(resp, b.Usage, func(u answerUsage) {
					t := u.Tokens
					switch {
					case resp.StatusCode/100 != 2 || x.route.Uncounted:
						if !u.Got {
							return
						}
					case u.Cut || !u.Got:
						t = cutShort(t, len(x.body), u)
					}
					x.tokens = &t
					if o.Meter != nil {
						o.Meter.add(b.Name, t)
					}
				})
			}
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			var rf *Refusal
			if !errors.As(err, &rf) {
				o.ErrorLog.Printf("egress %s: upstream: %v", b.Name, err)
				// The cause names the host's resolver and the addresses
				// it dialled: the log has it, the box only the fact.
				rf = &Refusal{Kind: KindUpstream, Reason: "aisan strict mode: the upstream " + b.Upstream.Host + " could not be reached from the host (the reason is in the host's egress log)",
					Detail: unwrapURLError(err).Error()}
			}
			if x, ok := r.Context().Value(exchangeKey).(*exchange); ok {
				x.refused = rf.logged()
				if r.Context().Err() != nil && !x.route.Uncounted {
					// The box hung up before the answer began: the
					// upstream may have taken the request, and the call
					// is not free (usage.go).
					t := cutShort(audit.Tokens{}, len(x.body), answerUsage{})
					x.tokens = &t
					if o.Meter != nil {
						o.Meter.add(b.Name, t)
					}
				}
			}
			b.WriteRefusal(w, rf)
		},
	}
	s.hs = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       5 * time.Minute,
		MaxHeaderBytes:    256 << 10,
		ErrorLog:          o.ErrorLog,
	}
	return s, nil
}

// copyBuffers are the buffers answers are copied through, shared by
// every server of the process so a call allocates none.
var copyBuffers = &bufferPool{p: sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}}

type bufferPool struct{ p sync.Pool }

func (b *bufferPool) Get() []byte  { return *b.p.Get().(*[]byte) }
func (b *bufferPool) Put(x []byte) { b.p.Put(&x) }

func unwrapURLError(err error) error {
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) {
		if inner := ue.Unwrap(); inner != nil {
			return inner
		}
	}
	return err
}

// Serve accepts connections on ln until Close.
func (s *Server) Serve(ln net.Listener) error {
	err := s.hs.Serve(boxconn.Limit(ln, s.opt.MaxConns))
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Close stops the server and every open stream.
func (s *Server) Close() error { return s.hs.Close() }

// Drain stops the server taking connections and lets the requests in
// flight finish, until ctx is done; then it closes what is left. The
// listener is closed as by Close; see [Disown] for one another process
// goes on serving.
func (s *Server) Drain(ctx context.Context) {
	if s.hs.Shutdown(ctx) != nil {
		s.hs.Close()
	}
}

// Serve serves backend b on ln until ctx is done.
func Serve(ctx context.Context, ln net.Listener, b *Backend, o Options) error {
	s, err := NewServer(b, o)
	if err != nil {
		ln.Close()
		return err
	}
	stop := context.AfterFunc(ctx, func() { s.Close() })
	defer stop()
	return s.Serve(ln)
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	cw := &countingWriter{ResponseWriter: w}
	e := audit.Entry{Time: time.Now(), Backend: s.b.Name, Method: r.Method, Path: r.RequestURI}
	defer func() {
		e.Status, e.BytesDown = cw.status, cw.n
		s.opt.Audit.Log(e)
	}()
	x, body, rf := s.admit(r)
	e.BytesUp = int64(len(body))
	if rf != nil {
		e.Refused = rf.logged()
		s.b.WriteRefusal(cw, rf)
		return
	}
	start := time.Now()
	defer func() {
		e.MS = float64(time.Since(start).Microseconds()) / 1000
		e.Refused = x.refused
		e.Tokens = x.tokens
	}()
	// The answer is counted by the time the proxy returns (its body is
	// read to the end or closed there), so what the call held goes back
	// after its count is in.
	defer x.release()
	if s.opt.Meter != nil {
		s.opt.Meter.forwarded(s.b.Name)
	}
	s.proxy.ServeHTTP(cw, r.WithContext(context.WithValue(r.Context(), exchangeKey, x)))
}

// retryTransport is the server's upstream transport: rule 7 over
// Options.Transport.
type retryTransport struct{ s *Server }

func (t retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	base, b := t.s.opt.Transport, t.s.b
	req = noTrace(req)
	resp, err := noRedirect(base.RoundTrip(req))
	if err != nil || resp.StatusCode != http.StatusUnauthorized || b.Refresh == nil {
		return resp, err
	}
	x, ok := req.Context().Value(exchangeKey).(*exchange)
	if !ok {
		return resp, nil
	}
	c, err := b.Refresh(req.Context(), x.cred)
	if err != nil {
		resp.Body.Close()
		t.s.opt.ErrorLog.Printf("egress %s: refresh after 401: %v", b.Name, err)
		return nil, &Refusal{Kind: KindCredential, Reason: "aisan strict mode: the upstream refused the host's login and refreshing it failed: " + err.Error(), Detail: cred.Detail(err)}
	}
	if c.equal(x.cred) {
		return resp, nil // nothing new to try: the client sees the upstream's answer
	}
	// The refused answer is small; reading it lets its connection be
	// reused for the retry.
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	retry := req.Clone(req.Context())
	retry.Header = b.outHeader(x.in, c)
	setBody(retry, x.body)
	x.cred = c
	return noRedirect(base.RoundTrip(retry))
}

// noRedirect turns an upstream's redirect into a refusal that says so:
// the request carried the host's credential to the address it was meant
// for, and neither the proxy nor (through it) the box's client goes on to
// another.
func noRedirect(resp *http.Response, err error) (*http.Response, error) {
	if err != nil {
		return resp, err
	}
	if rerr := cred.Redirected(resp); rerr != nil {
		resp.Body.Close()
		return nil, &Refusal{Kind: KindUpstream, Reason: "aisan strict mode: the upstream " + rerr.Error() + "; check the upstream URL (AISAN_*_UPSTREAM)"}
	}
	return resp, nil
}

// admit runs checks 1–6. Every way out that is not a pass is a Refusal,
// panics included.
func (s *Server) admit(r *http.Request) (x *exchange, body []byte, rf *Refusal) {
	defer func() {
		if p := recover(); p != nil {
			s.opt.ErrorLog.Printf("egress %s: policy panic: %v", s.b.Name, p)
			x, rf = nil, &Refusal{Kind: KindPolicy, Reason: "aisan strict mode: the request policy failed on this request, so it was refused"}
		}
	}()
	if s.opt.Token != "" {
		if err := checkToken(r.Header, s.opt.Token); err != nil {
			return nil, nil, &Refusal{Kind: KindAuth, Reason: "aisan strict mode: " + err.Error()}
		}
	}
	rt, ok := s.b.Match(r)
	if !ok {
		return nil, nil, &Refusal{Kind: KindPolicy, Reason: fmt.Sprintf("aisan strict mode: %s %s is not a request this box may send to %s", r.Method, r.RequestURI, s.b.Name)}
	}
	if s.b.CheckHeader != nil {
		if err := s.b.CheckHeader(rt, HeaderValues(r.Header)); err != nil {
			return nil, nil, s.b.bodyRefusal(err)
		}
	}
	if m := s.opt.Meter; m != nil {
		if budget, spent, out := m.spentOut(); out {
			return nil, nil, s.budgetRefusal(budget, spent, 0)
		}
	}
	now := time.Now()
	if res := s.lim.ReserveN(now, 1); !res.OK() || res.DelayFrom(now) > 0 {
		d := time.Second
		if res.OK() {
			d = res.DelayFrom(now)
			res.CancelAt(now)
		}
		return nil, nil, &Refusal{Kind: KindRate, Reason: fmt.Sprintf("aisan strict mode: this box is sending requests faster than its rate limit (%s); retry after the time in retry-after, or the user can raise it with: %s", FormatRate(s.lim.Limit(), s.lim.Burst()), s.steer("--rate N/s,BURST")), RetryAfter: d}
	}
	body, rf = s.readBody(r)
	if rf != nil {
		return nil, body, rf
	}
	obj, err := ParseObject(body)
	if err != nil {
		return nil, body, &Refusal{Kind: KindPolicy, Reason: "aisan strict mode: " + err.Error()}
	}
	if err := s.b.Check(rt, obj); err != nil {
		return nil, body, s.b.bodyRefusal(err)
	}
	c, err := s.b.Credential(r.Context())
	if err != nil {
		s.opt.ErrorLog.Printf("egress %s: credential: %v", s.b.Name, err)
		var r *Refusal
		if errors.As(err, &r) {
			return nil, body, r
		}
		return nil, body, &Refusal{Kind: KindCredential, Reason: "aisan strict mode: the host credential is not usable: " + err.Error(), Detail: cred.Detail(err)}
	}
	release := func() {}
	if m := s.opt.Meter; m != nil && !rt.Uncounted {
		// Checked again, now that the request is known, with what the
		// calls already in flight hold: they are not counted yet.
		rel, budget, spent, held, ok := m.hold(r.Context(), requestEstimate(len(body))+outputCap(obj, s.b.OutputCaps))
		if !ok {
			return nil, body, s.budgetRefusal(budget, spent, held)
		}
		release = rel
	}
	return &exchange{route: rt, in: r.Header, body: body, cred: c, release: release}, body, nil
}

// budgetRefusal says the box's budget is spent, or that the call stopped
// waiting for what calls in flight hold of its rest.
func (s *Server) budgetRefusal(budget, spent, held int64) *Refusal {
	if spent < budget {
		// Given up waiting for room ([Meter.hold]).
		return &Refusal{Kind: KindBudget, Reason: fmt.Sprintf("aisan strict mode: the rest of this box's token budget is held by calls still in flight (%d tokens counted, at least %d more in flight, budget %d), and this call stopped waiting for them to end; the user can raise it with: %s", spent, held, budget, s.steer("--budget +N"))}
	}
	return &Refusal{Kind: KindBudget, Reason: fmt.Sprintf("aisan strict mode: this box's token budget is spent (%d tokens counted, budget %d); the user can raise it with: %s", spent, budget, s.steer("--budget +N"))}
}

// steer is the command that changes this box's option opt while it runs.
func (s *Server) steer(opt string) string {
	if s.opt.Slot == "" {
		return "aisan allow SLOT " + opt
	}
	return "aisan allow " + s.opt.Slot + " " + opt
}

func asRefusal(err error) *Refusal {
	var r *Refusal
	if errors.As(err, &r) {
		return r
	}
	return &Refusal{Kind: KindPolicy, Reason: "aisan strict mode: " + err.Error()}
}

func (s *Server) readBody(r *http.Request) ([]byte, *Refusal) {
	if ce := r.Header.Values("Content-Encoding"); len(ce) > 0 && !(len(ce) == 1 && strings.EqualFold(ce[0], "identity")) {
		return nil, &Refusal{Kind: KindPolicy, Reason: "aisan strict mode: a compressed request body cannot be checked; send it uncompressed"}
	}
	ct := r.Header.Values("Content-Type")
	if len(ct) > 1 {
		return nil, &Refusal{Kind: KindPolicy, Reason: "aisan strict mode: the request has more than one Content-Type"}
	}
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return nil, &Refusal{Kind: KindPolicy, Reason: "aisan strict mode: the request body must be application/json"}
	}
	for k, v := range params {
		if k != "charset" || !strings.EqualFold(v, "utf-8") {
			return nil, &Refusal{Kind: KindPolicy, Reason: "aisan strict mode: the request body must be application/json in UTF-8, with no other parameter"}
		}
	}
	tooLarge := &Refusal{Kind: KindTooLarge, Reason: fmt.Sprintf("aisan strict mode: the request body is larger than the box's limit of %d bytes", s.b.MaxBody)}
	if r.ContentLength > s.b.MaxBody {
		return nil, tooLarge
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, s.b.MaxBody+1))
	if int64(len(b)) > s.b.MaxBody {
		return b, tooLarge
	}
	if err != nil {
		return b, &Refusal{Kind: KindPolicy, Reason: "aisan strict mode: the request body could not be read: " + err.Error()}
	}
	if len(r.Trailer) > 0 {
		// No client sends trailers, and a header there (a content
		// encoding) would come after the checks that read the header.
		return b, &Refusal{Kind: KindPolicy, Reason: "aisan strict mode: the request carries trailers; send every header before the body"}
	}
	return b, nil
}

// tokenHeaders are the headers a client may present the per-box token in.
var tokenHeaders = []string{"Authorization", "X-Api-Key", "Proxy-Authorization", "Api-Key", "X-Goog-Api-Key"}

// checkToken requires exactly one credential header among tokenHeaders,
// carrying tok (as "Bearer tok" in Authorization), compared in constant
// time.
func checkToken(h http.Header, tok string) error {
	var vals []string
	var names []string
	for _, n := range tokenHeaders {
		for _, v := range h.Values(n) {
			vals = append(vals, v)
			names = append(names, n)
		}
	}
	if len(vals) != 1 {
		return fmt.Errorf("the request must carry exactly one credential header with the box's token (it has %d)", len(vals))
	}
	v := vals[0]
	if names[0] == "Authorization" || names[0] == "Proxy-Authorization" {
		scheme, rest, ok := strings.Cut(v, " ")
		if !ok || !strings.EqualFold(scheme, "bearer") {
			return errors.New("the credential header is not a bearer token")
		}
		v = rest
	}
	if subtle.ConstantTimeCompare([]byte(v), []byte(tok)) != 1 {
		return errors.New("the request does not carry the box's token")
	}
	return nil
}

type countingWriter struct {
	http.ResponseWriter
	status int
	n      int64
}

func (c *countingWriter) WriteHeader(code int) {
	if c.status == 0 {
		c.status = code
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *countingWriter) Write(p []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	n, err := c.ResponseWriter.Write(p)
	c.n += int64(n)
	return n, err
}

func (c *countingWriter) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (c *countingWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// ListenUnix listens on a Unix socket at path with mode 0600. The socket is
// bound under a temporary name, restricted, then renamed into place, so it
// is never reachable with wider permissions. A stale socket at path is
// replaced; any other file there is an error.
func ListenUnix(path string) (net.Listener, error) {
	if st, err := os.Lstat(path); err == nil {
		if st.Mode().Type() != os.ModeSocket {
			return nil, fmt.Errorf("egress socket %s: exists and is not a socket", path)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("egress socket %s: %w", path, err)
	}
	tmp := filepath.Join(filepath.Dir(path), fmt.Sprintf(".%s.%d.tmp", filepath.Base(path), os.Getpid()))
	os.Remove(tmp)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: tmp, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("egress socket %s: %w", path, err)
	}
	ln.SetUnlinkOnClose(false)
	if err := os.Chmod(tmp, 0o600); err != nil {
		ln.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("egress socket %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		ln.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("egress socket %s: %w", path, err)
	}
	return &unixListener{UnixListener: ln, path: path}, nil
}

type unixListener struct {
	*net.UnixListener
	path   string
	closed atomic.Bool
}

// Accept returns the next connection, which may turn out to be one the
// in-box relay hands over (see fdpass.go).
func (l *unixListener) Accept() (net.Conn, error) {
	c, err := l.UnixListener.AcceptUnix()
	if err != nil {
		return nil, err
	}
	return &boxConn{conn: c}, nil
}

func (l *unixListener) Close() error {
	err := l.UnixListener.Close()
	if !l.closed.Swap(true) {
		os.Remove(l.path)
	}
	return err
}

// ListenerFile is a duplicate of ln's listening socket, for another
// process to serve on (a keeper taking over a box whose agent has exited).
func ListenerFile(ln net.Listener) (*os.File, error) {
	if u, ok := ln.(*unixListener); ok {
		return u.UnixListener.File()
	}
	if f, ok := ln.(interface{ File() (*os.File, error) }); ok {
		return f.File()
	}
	return nil, fmt.Errorf("egress listener %s cannot be handed over", ln.Addr())
}

// Disown makes closing ln leave its socket file in place: another process
// serves the same socket now (the one that inherited it), and the file
// names it until that one closes it.
func Disown(ln net.Listener) {
	if u, ok := ln.(*unixListener); ok {
		u.closed.Store(true)
	}
}

// InheritListener serves, in this process, a listening socket another one
// made: f as [ListenerFile] gave it, path its socket file (for a Unix
// socket; "" for a loopback port). What it accepts is handled as
// [ListenUnix]'s connections are; closing it removes the socket file. f
// is the caller's to close.
func InheritListener(f *os.File, path string) (net.Listener, error) {
	ln, err := net.FileListener(f)
	if err != nil {
		return nil, fmt.Errorf("egress socket %s: %w", path, err)
	}
	switch l := ln.(type) {
	case *net.UnixListener:
		if path == "" {
			l.Close()
			return nil, errors.New("an inherited Unix socket needs its path")
		}
		l.SetUnlinkOnClose(false)
		return &unixListener{UnixListener: l, path: path}, nil
	case *net.TCPListener:
		if a, ok := l.Addr().(*net.TCPAddr); !ok || !a.IP.IsLoopback() {
			l.Close()
			return nil, fmt.Errorf("an inherited egress port %s is not on loopback", l.Addr())
		}
		return l, nil
	}
	ln.Close()
	return nil, fmt.Errorf("egress socket %s: not a Unix or TCP listener", path)
}

// ListenLoopback listens on an ephemeral 127.0.0.1 port, for a --net box
// (which must then be served with a per-box Token).
func ListenLoopback() (net.Listener, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("egress loopback listener: %w", err)
	}
	return ln, nil
}

// trailerFilter keeps an answer's trailers to the backend's Return list
// once its body ends: the transport fills resp.Trailer when it reads the
// last chunk, after ModifyResponse has run.
type trailerFilter struct {
	io.ReadCloser
	resp *http.Response
	b    *Backend
}

func (t *trailerFilter) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	if err != nil {
		t.b.filterResponse(t.resp.Trailer)
	}
	return n, err
}

// noTrace is req without the client trace ReverseProxy adds: a transport
// reports each informational (1xx) answer to it (net/http's does), and
// ReverseProxy's hook copies that answer's headers to the box, past the
// Return list. Without a trace net/http's Transport skips 1xx answers.
func noTrace(req *http.Request) *http.Request {
	return req.WithContext(untraced{req.Context()})
}

// untraced is a context whose values are its parent's but a client trace.
type untraced struct{ context.Context }

func (c untraced) Value(key any) any {
	v := c.Context.Value(key)
	if _, ok := v.(*httptrace.ClientTrace); ok {
		return nil
	}
	return v
}
