package hostproxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/aisan-dev/aisan/egress/audit"
	"github.com/aisan-dev/aisan/egress/boxconn"
)

// Backend is the audit log's backend name for this proxy.
const Backend = "hosts"

// Default timeouts; each bounds one step a box could otherwise stall.
const (
	DefaultHeaderTimeout   = 10 * time.Second
	DefaultResolveTimeout  = 5 * time.Second
	DefaultDialTimeout     = 10 * time.Second
	DefaultResponseTimeout = 60 * time.Second
)

// maxHeader caps a request head: a proxy request is a line and a few
// headers, and an endless one must not grow our memory.
const maxHeader = 64 << 10

// Config is a proxy's policy and host facts, as plain data.
type Config struct {
	// Allow is the allow-list the box was launched with; empty allows
	// nothing (until a grant).
	Allow List
	// Live, when not nil, is the list to serve instead of Allow: a
	// running box's list as a hand-over passes it on, with its grants and
	// their lapse times. Entries that lapsed already are dropped.
	Live []Entry
	// Slot names the box in the command a refusal tells the user to run
	// ("" leaves the command out).
	Slot string
	// Lapsed, when set, is called after a grant lapsed (outside the
	// proxy's lock), so that what shows the list can follow.
	Lapsed func()
	// Resolver looks names up on the host side; nil means [HostResolver].
	// Wrap it with [Overrides.Then] for AISAN_RESOLVE.
	Resolver Resolver
	// Local is the host's own interface addresses ([LocalAddrs]) known
	// beforehand; they always count as the host's own.
	Local []netip.Addr
	// LocalAddrs lists the host's interface addresses as they are now; it
	// is asked at every decision, since a host gains addresses while a box
	// runs (IPv6 temporary addresses, DHCP, a VPN). nil means
	// [LocalAddrs].
	LocalAddrs func() ([]netip.Addr, error)
	// Audit receives one entry per decision; nil discards.
	Audit audit.Sink
	// Timeouts; zero means the Default… value.
	HeaderTimeout, ResolveTimeout, DialTimeout, ResponseTimeout time.Duration
	// MaxConns caps the box's open connections (0: boxconn.MaxConns, the
	// cap every box-facing server shares); more wait in the kernel's
	// backlog until one closes.
	MaxConns int
}

// Proxy serves the allow-list proxy for one box.
type Proxy struct {
	cfg Config

	// ctx ends at Close, cutting lookups and dials in flight.
	ctx    context.Context
	cancel context.CancelFunc

	mu     sync.Mutex
	closed bool
	// draining: the listeners are closed on purpose, connections remain.
	draining bool
	lns      map[net.Listener]struct{}
	conns    map[net.Conn]struct{}
	wg       sync.WaitGroup
	// live is the allow-list as it stands (grants.go); tunnels are the
	// connections open through it, each re-judged when an entry goes.
	live    []Entry
	cur     List
	gen     uint64
	lapses  map[Pattern]*time.Timer
	tunnels map[*tunnel]struct{}

	// dial is the one place a connection leaves; tests replace it with one
	// that refuses anything off this machine.
	dial func(ctx context.Context, addr string) (net.Conn, error)
}

// New makes a proxy; cfg's slices are copied.
func New(cfg Config) *Proxy {
	cfg.Allow = append(List(nil), cfg.Allow...)
	cfg.Local = append([]netip.Addr(nil), cfg.Local...)
	if cfg.Resolver == nil {
		cfg.Resolver = HostResolver
	}
	if cfg.Audit == nil {
		cfg.Audit = audit.Discard
	}
	if cfg.LocalAddrs == nil {
		cfg.LocalAddrs = LocalAddrs
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&cfg.HeaderTimeout, DefaultHeaderTimeout)
	def(&cfg.ResolveTimeout, DefaultResolveTimeout)
	def(&cfg.DialTimeout, DefaultDialTimeout)
	def(&cfg.ResponseTimeout, DefaultResponseTimeout)
	var d net.Dialer
	ctx, cancel := context.WithCancel(context.Background())
	p := &Proxy{cfg: cfg, ctx: ctx, cancel: cancel, lns: map[net.Listener]struct{}{}, conns: map[net.Conn]struct{}{},
		lapses: map[Pattern]*time.Timer{}, tunnels: map[*tunnel]struct{}{},
		dial: func(ctx context.Context, addr string) (net.Conn, error) { return d.DialContext(ctx, "tcp", addr) }}
	p.startLive()
	return p
}

// Serve accepts proxy connections on ln until [Proxy.Close], then returns
// nil. ln is typically the Unix socket the box's relay connects to.
func (p *Proxy) Serve(ln net.Listener) error {
	ln = boxconn.Limit(ln, p.cfg.MaxConns)
	if !p.track(ln) {
		ln.Close()
		return nil
	}
	defer p.untrack(ln)
	var backoff time.Duration
	for {
		c, err := ln.Accept()
		if err != nil {
			if p.isClosed() || p.isDraining() {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			if errors.Is(err, net.ErrClosed) {
				return fmt.Errorf("host proxy listener %s closed: %w", ln.Addr(), err)
			}
			// Out of descriptors and the like: wait, as net/http does.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			time.Sleep(backoff)
			continue
		}
		backoff = 0
		// Counted under the lock that Close takes, so Close's Wait never
		// races a new handler.
		p.mu.Lock()
		if p.closed || p.draining {
			p.mu.Unlock()
			c.Close()
			return nil
		}
		p.conns[c] = struct{}{}
		p.wg.Add(1)
		p.mu.Unlock()
		go func() {
			defer p.wg.Done()
			defer p.untrack(c)
			p.handle(c)
		}()
	}
}

// Close stops every listener and cuts every open connection and tunnel,
// then waits for their handlers.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	p.cancel()
	for _, t := range p.lapses {
		t.Stop()
	}
	for l := range p.lns {
		l.Close()
	}
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	return nil
}

// Drain stops the proxy taking connections and lets the open ones end by
// themselves until ctx is done, then cuts what is left as Close does.
func (p *Proxy) Drain(ctx context.Context) {
	p.mu.Lock()
	p.draining = true
	for l := range p.lns {
		l.Close()
	}
	p.mu.Unlock()
	done := make(chan struct{})
	go func() { p.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
	p.Close()
}

func (p *Proxy) isDraining() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.draining
}

type closer interface{ Close() error }

func (p *Proxy) track(c closer) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	switch c := c.(type) {
	case net.Listener:
		p.lns[c] = struct{}{}
	case net.Conn:
		p.conns[c] = struct{}{}
	}
	return true
}

func (p *Proxy) untrack(c closer) {
	p.mu.Lock()
	switch c := c.(type) {
	case net.Listener:
		delete(p.lns, c)
	case net.Conn:
		delete(p.conns, c)
	}
	p.mu.Unlock()
	c.Close()
}

func (p *Proxy) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// RefusedError is a policy refusal: Reason says what was refused and Hint
// is the pattern that would allow it (empty when none can). Slot, when
// set, is the running box's, which the user can grant it to.
type RefusedError struct {
	Target Target
	Reason string
	Hint   string
	Slot   string
}

func (e *RefusedError) Error() string {
	switch {
	case e.Hint == "":
		return e.Reason
	case e.Slot != "":
		return fmt.Sprintf("%s; the user can allow it while the box runs with: aisan allow %s --host %s (or start the box with --allow-host %s)", e.Reason, e.Slot, e.Hint, e.Hint)
	}
	return fmt.Sprintf("%s; to allow it, start the box with --allow-host %s (or allow_hosts = [%q] in a bind spec)", e.Reason, e.Hint, e.Hint)
}

// Decide is the whole policy for one request, without I/O: whether t is on
// l, and the error to answer if not. Addresses are checked after
// resolution by [Check].
func Decide(l List, t Target) (explicit bool, err error) {
	ok, explicit := l.Match(t)
	if ok {
		return explicit, nil
	}
	hint := t.Host()
	if t.Addr.IsValid() || !isDefaultPort(t.Port) {
		hint = t.String()
	}
	return false, &RefusedError{Target: t, Reason: fmt.Sprintf("%s is not on this box's host allow-list", t), Hint: hint}
}

// errFailed is a failure on the host's side (a lookup, a dial, the
// upstream's answer), not a refusal: it answers 502, not 403. The box is
// told what failed for which target (box); the cause goes to the host's
// egress log only, since it names the host's resolver and the addresses
// the host dialled, which are none of the box's business.
type errFailed struct {
	box string
	err error
}

func (e errFailed) Error() string { return e.box + ": " + e.err.Error() }

func (e errFailed) Unwrap() error { return e.err }

// connect decides authority and, when allowed, dials the checked
// address; gen is the generation of the list it decided on.
func (p *Proxy) connect(ctx context.Context, authority string, defaultPort uint16) (Target, net.Conn, uint64, error) {
	t, err := ParseTarget(authority, defaultPort)
	if err != nil {
		return t, nil, 0, err
	}
	list, gen := p.list()
	explicit, err := Decide(list, t)
	if err != nil {
		var rf *RefusedError
		if errors.As(err, &rf) {
			rf.Slot = p.cfg.Slot
		}
		return t, nil, gen, err
	}
	addrs := []netip.Addr{t.Addr}
	if !t.Addr.IsValid() {
		// Only a name on the list is ever looked up, so the box cannot use
		// the proxy to send queries for names of its choosing.
		rctx, cancel := context.WithTimeout(ctx, p.cfg.ResolveTimeout)
		addrs, err = p.cfg.Resolver.LookupNetIP(rctx, "ip", lookupName(list, t))
		cancel()
		if err != nil {
			return t, nil, gen, errFailed{"cannot resolve " + t.Name + " on the host", err}
		}
	}
	local, err := p.local()
	if err != nil {
		return t, nil, gen, errFailed{"cannot check the addresses of " + t.String(), err}
	}
	addrs, err = Check(t, addrs, explicit, local)
	if err != nil {
		return t, nil, gen, err
	}
	dctx, cancel := context.WithTimeout(ctx, p.cfg.DialTimeout)
	defer cancel()
	var errs []error
	for _, a := range addrs {
		// A literal address: the dial does no second lookup, so it goes
		// exactly where Check looked.
		c, err := p.dial(dctx, netip.AddrPortFrom(a, t.Port).String())
		if err == nil {
			if !explicit && toSelf(c) {
				// The address became the host's own between the check
				// and the dial.
				c.Close()
				return t, nil, gen, &RefusedError{Target: t, Reason: fmt.Sprintf("%s is %s address, allowed only when named exactly with the port", t, HostOwn), Hint: t.String()}
			}
			return t, c, gen, nil
		}
		errs = append(errs, err)
	}
	return t, nil, gen, errFailed{"cannot connect to " + t.String(), errors.Join(errs...)}
}

// lookupName is the name to ask the resolver for. A name that only a
// wildcard allows is one the box chose: it goes absolute
// ("x.example.com."), so that a resolver with a search list (search in
// resolv.conf, ndots above 1) answers for that name and not for
// x.example.com.corp.example, a host of the host's network that no
// pattern names. A name a pattern names exactly is the user's, and is
// looked up as they would look it up.
func lookupName(l List, t Target) string {
	for _, p := range l {
		if !p.Wildcard && p.matches(t) {
			return t.Name
		}
	}
	return t.Name + "."
}

// local is the host's own addresses: those known at the start and those
// it has now.
func (p *Proxy) local() ([]netip.Addr, error) {
	now, err := p.cfg.LocalAddrs()
	if err != nil {
		return nil, fmt.Errorf("cannot list this host's addresses: %w", err)
	}
	return append(append([]netip.Addr(nil), p.cfg.Local...), now...), nil
}

// toSelf reports whether c is a TCP connection to this machine itself: the
// kernel gives a connection to one of its own addresses that address as
// its source.
func toSelf(c net.Conn) bool {
	la, ok1 := c.LocalAddr().(*net.TCPAddr)
	ra, ok2 := c.RemoteAddr().(*net.TCPAddr)
	return ok1 && ok2 && la.IP.Equal(ra.IP)
}

type limitReader struct {
	r io.Reader
	n int64
}

func (l *limitReader) Read(b []byte) (int, error) {
	if l.n <= 0 {
		return 0, errors.New("request head too large")
	}
	if int64(len(b)) > l.n {
		b = b[:l.n]
	}
	n, err := l.r.Read(b)
	l.n -= int64(n)
	return n, err
}

func (p *Proxy) handle(c net.Conn) {
	start := time.Now()
	c.SetReadDeadline(start.Add(p.cfg.HeaderTimeout))
	lr := &limitReader{r: c, n: maxHeader}
	br := bufio.NewReaderSize(lr, 4096)
	req, err := http.ReadRequest(br)
	if err != nil {
		var ne net.Error
		switch {
		case lr.n == maxHeader:
			return // connected and left (or idled) without a byte: nothing was asked
		case lr.n <= 0:
			err = fmt.Errorf("request head larger than %d KiB", maxHeader>>10)
		case errors.As(err, &ne) && ne.Timeout():
			err = fmt.Errorf("no complete request head within %s", p.cfg.HeaderTimeout)
		default:
			err = fmt.Errorf("not an HTTP proxy request (%s); the box reaches other hosts only through HTTP CONNECT or http:// requests", clip(err.Error()))
		}
		p.refuse(c, start, "-", "-", http.StatusForbidden, err)
		return
	}
	c.SetReadDeadline(time.Time{})
	lr.n = 1 << 62
	ctx := p.ctx
	switch {
	case req.Method == http.MethodConnect:
		p.tunnel(ctx, c, br, req, start)
	case req.URL.IsAbs() && req.URL.Scheme == "http" && req.URL.Host != "":
		p.forward(ctx, c, br, req, start)
	case req.URL.IsAbs() && req.URL.Scheme == "http":
		p.refuse(c, start, req.Method, "", http.StatusForbidden, fmt.Errorf("the URL %q has no host; write http://HOST[:PORT]/PATH", clip(req.RequestURI)))
	case req.URL.IsAbs():
		p.refuse(c, start, req.Method, req.URL.Host, http.StatusForbidden, fmt.Errorf("%s:// requests are not proxied; use CONNECT (HTTPS_PROXY) for https", req.URL.Scheme))
	default:
		p.refuse(c, start, req.Method, req.Host, http.StatusForbidden, errors.New("not a proxy request (no absolute URL); use this endpoint as HTTP_PROXY/HTTPS_PROXY"))
	}
}

func statusOf(err error) int {
	var f errFailed
	if errors.As(err, &f) {
		return http.StatusBadGateway
	}
	return http.StatusForbidden
}

// clip keeps client-chosen text in the audit log short and on one line.
func clip(s string) string {
	if len(s) > 256 {
		s = s[:256]
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '?'
		}
		return r
	}, s)
}

func (p *Proxy) refuse(c net.Conn, start time.Time, method, path string, status int, err error) {
	text := err.Error()
	var f errFailed
	if errors.As(err, &f) {
		text = f.box + " (the reason is in the host's egress log)"
	}
	msg := "aisan: " + strings.ReplaceAll(text, "\n", " ") + "\n"
	fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		status, http.StatusText(status), len(msg), msg)
	p.log(start, method, path, status, 0, 0, err)
}

func (p *Proxy) log(start time.Time, method, path string, status int, up, down int64, err error) {
	p.logNote(start, method, path, status, up, down, err, "")
}

func (p *Proxy) logNote(start time.Time, method, path string, status int, up, down int64, err error, note string) {
	e := audit.Entry{
		Note:      note,
		Time:      start,
		Backend:   Backend,
		Method:    clip(method),
		Path:      clip(path),
		Status:    status,
		BytesUp:   up,
		BytesDown: down,
		MS:        float64(time.Since(start).Microseconds()) / 1000,
	}
	if err != nil {
		e.Refused = clip(err.Error())
	}
	p.cfg.Audit.Log(e)
}

func pathOf(t Target, authority string) string {
	if t.Port != 0 {
		return t.String()
	}
	return authority
}

func (p *Proxy) tunnel(ctx context.Context, c net.Conn, br *bufio.Reader, req *http.Request, start time.Time) {
	t, up, gen, err := p.connect(ctx, req.Host, 0)
	if err != nil {
		p.refuse(c, start, req.Method, pathOf(t, req.Host), statusOf(err), err)
		return
	}
	tn, err := p.open(t, gen, c, up)
	if tn == nil {
		if err != nil {
			p.refuse(c, start, req.Method, t.String(), http.StatusForbidden, err)
		}
		return
	}
	defer p.shut(tn)
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		p.logTunnel(tn, start, req.Method, http.StatusOK, 0, 0)
		return
	}
	// Bytes the client sent after the CONNECT head (an eager TLS hello)
	// are already in br; pass them on before the raw copy.
	var early int64
	if n := br.Buffered(); n > 0 {
		b, _ := br.Peek(n)
		w, _ := up.Write(b)
		early = int64(w)
	}
	sent, got := pump(c, up)
	p.logTunnel(tn, start, req.Method, http.StatusOK, early+sent, got)
}

// pump copies both ways until both directions end, passing each EOF on as
// a half-close so a client that shuts its write side still gets the rest.
func pump(client, up net.Conn) (sent, got int64) {
	done := make(chan int64, 1)
	go func() {
		n, _ := io.Copy(up, client)
		closeWrite(up)
		done <- n
	}()
	got, _ = io.Copy(client, up)
	closeWrite(client)
	sent = <-done
	return sent, got
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		if cw.CloseWrite() == nil {
			return
		}
	}
	c.Close()
}

// hopHeaders are the connection-level headers a proxy must not pass on
// (RFC 9110 §7.6.1), plus Proxy-Authorization, which is for us.
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

func dropHop(h http.Header) {
	for _, f := range h.Values("Connection") {
		for _, k := range strings.Split(f, ",") {
			h.Del(strings.TrimSpace(k))
		}
	}
	for _, k := range hopHeaders {
		h.Del(k)
	}
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

// forward relays one plain-HTTP request to the checked address and closes:
// one request a connection keeps the decision and the log line together.
func (p *Proxy) forward(ctx context.Context, c net.Conn, br *bufio.Reader, req *http.Request, start time.Time) {
	authority := req.URL.Host
	t, up, gen, err := p.connect(ctx, authority, 80)
	if err != nil {
		p.refuse(c, start, req.Method, pathOf(t, authority), statusOf(err), err)
		return
	}
	tn, err := p.open(t, gen, c, up)
	if tn == nil {
		if err != nil {
			p.refuse(c, start, req.Method, t.String(), http.StatusForbidden, err)
		}
		return
	}
	defer p.shut(tn)
	dropHop(req.Header)
	// The upstream sees the host that was decided on, whatever Host header
	// the client also sent.
	req.Host = authority
	req.Close = true
	cw := &countWriter{w: c}
	if strings.EqualFold(req.Header.Get("Expect"), "100-continue") {
		// The request is allowed: the client may send its body now. The
		// body goes on in one piece, so the upstream is not asked again.
		req.Header.Del("Expect")
		if req.ProtoAtLeast(1, 1) {
			io.WriteString(cw, "HTTP/1.1 100 Continue\r\n\r\n")
		}
	}
	upw := &countWriter{w: up}
	if err := req.Write(upw); err != nil {
		p.refuse(c, start, req.Method, t.String(), http.StatusBadGateway, errFailed{"cannot send the request to " + t.String(), err})
		return
	}
	up.SetReadDeadline(time.Now().Add(p.cfg.ResponseTimeout))
	ubr := bufio.NewReader(up)
	var resp *http.Response
	for {
		resp, err = http.ReadResponse(ubr, req)
		if err == nil && resp.StatusCode == http.StatusSwitchingProtocols {
			resp.Body.Close()
			err = errors.New("it switched protocols, which the request did not ask for")
		}
		// Other interim answers (100, 103) are not the answer: read on.
		if err != nil || resp.StatusCode >= 200 {
			break
		}
		resp.Body.Close()
	}
	if err != nil {
		p.refuse(c, start, req.Method, t.String(), http.StatusBadGateway, errFailed{"cannot read the response from " + t.String(), err})
		return
	}
	up.SetReadDeadline(time.Time{})
	defer resp.Body.Close()
	dropHop(resp.Header)
	resp.Close = true
	resp.Write(cw)
	p.logTunnel(tn, start, req.Method, resp.StatusCode, upw.n, cw.n)
}
