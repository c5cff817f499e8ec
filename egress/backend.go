package egress

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/aisan-dev/aisan/egress/cred"
	"github.com/aisan-dev/aisan/egress/policy"
)

// Route is one request shape a backend lets through: the method, the path
// and the raw query string, each compared byte for byte with what the box
// sent (no decoding, no normalising), and the only thing used to build the
// upstream URL, so the box's own spelling never reaches the upstream.
type Route struct {
	Method string
	Path   string
	Query  string // raw, without '?'; "" means none
	// Uncounted marks a route whose answer reports no usage because it
	// uses none (a token count): no estimate is charged for it.
	Uncounted bool
}

func (rt Route) String() string {
	if rt.Query == "" {
		return rt.Method + " " + rt.Path
	}
	return rt.Method + " " + rt.Path + "?" + rt.Query
}

// Kind classifies a refusal; the backend's error shape maps it to its own
// API's error type.
type Kind int

const (
	// KindPolicy is a request the policy does not allow.
	KindPolicy Kind = iota + 1
	// KindAuth is a missing, wrong or repeated per-box token.
	KindAuth
	// KindTooLarge is a body over the size cap.
	KindTooLarge
	// KindRate is the per-box rate limit.
	KindRate
	// KindCredential is a host credential that could not be read or refreshed.
	KindCredential
	// KindUpstream is an upstream that could not be reached.
	KindUpstream
	// KindBudget is a box whose token budget is spent.
	KindBudget
)

// Refusal is an error a policy returns to refuse a request; its Reason is
// shown to the client (and so to the model and the user) and written to
// the audit log, so it must be readable and must never hold a secret.
type Refusal struct {
	Kind   Kind
	Reason string
	// Detail is what the host's egress log records beyond Reason and the
	// box never sees: what a credential command printed or why a login
	// could not be refreshed (cred.Detail), why an upstream could not be
	// reached (the host's resolver, the addresses it dialled).
	Detail     string
	RetryAfter time.Duration // KindRate only
}

// logged is what the egress log records of the refusal.
func (r *Refusal) logged() string {
	if r.Detail == "" {
		return r.Reason
	}
	return r.Reason + " (" + r.Detail + ")"
}

func (r *Refusal) Error() string { return r.Reason }

// Refuse returns a policy refusal. The reason is prefixed so the user can
// tell our refusal from the provider's.
func Refuse(format string, args ...any) error {
	return &Refusal{Kind: KindPolicy, Reason: "aisan strict mode: " + fmt.Sprintf(format, args...)}
}

// Header is one header of a credential.
type Header struct {
	Name  string
	Value cred.Secret
}

// Credential is the set of headers that authenticate a request upstream.
type Credential []Header

// Backend is one upstream API as data plus pure functions. Nothing in it
// talks to the network except Credential, which the server calls only
// after every check passed.
type Backend struct {
	// Name is the backend's name in audit lines and errors ("anthropic").
	Name string
	// Upstream is the https base URL; a path prefix is kept.
	Upstream *url.URL
	// Routes are the only requests forwarded.
	Routes []Route
	// Resolve, when set, replaces Routes for an API whose paths carry a
	// value (Vertex AI's model): it returns the route to forward, built
	// from what it checked and the host's own values, never from the
	// box's spelling.
	Resolve func(method, path, query string) (Route, bool)
	// Forward names the request headers copied upstream, in lower case; a
	// name ending in '*' is a prefix. Credential headers may never appear.
	Forward []string
	// Return names the response headers copied back, the same way.
	Return []string
	// MaxBody caps a request body; larger bodies get 413.
	MaxBody int64
	// Check is the body policy for a route whose body parsed as a strict
	// JSON object. It must be pure; a panic in it is a refusal.
	Check func(rt Route, body map[string]any) error
	// CheckHeader, when set, is the policy for the values of the headers
	// Forward passes (Anthropic's betas), given the request's header as
	// HeaderValues reads it. It runs once the route matched, before the
	// body is read; it must be pure, and a panic in it is a refusal.
	CheckHeader func(rt Route, values func(name string) []string) error
	// Credential returns the headers to authenticate with, refreshing the
	// host credential if needed.
	Credential func(ctx context.Context) (Credential, error)
	// Refresh, when set, replaces a credential the upstream answered 401
	// to: it refreshes the host login stale came from, unless that changed
	// meanwhile, and returns the credential to retry with (stale's values
	// when nothing new can be had). The server asks at most once per
	// request and retries at most once. Nil for credentials that cannot
	// be refreshed (API keys).
	Refresh func(ctx context.Context, stale Credential) (Credential, error)
	// Adjust optionally changes the outgoing headers after the strip and
	// the credential (pure: out is the request being built, in what the
	// box sent).
	Adjust func(out, in http.Header, c Credential)
	// Usage reads the tokens a call used from its answer (see usage.go);
	// nil for an API whose answers report none.
	Usage UsageFunc
	// OutputCaps are the request's top-level fields that cap the tokens
	// of its answer (max_tokens and the like), the first one present
	// counting: a call in flight holds that many against the budget, with
	// its input's estimate, until its answer is counted.
	OutputCaps []string
	// Error renders a refusal in the API's error shape.
	Error func(status int, kind Kind, msg string) []byte
	// PolicyStatus is the status of every refusal no retry can change
	// (the policy's, a spent budget, an unusable host credential),
	// chosen per client so that it shows the reason, once, and reads it
	// as nothing else (Claude takes a 403 for a login to renew, codex
	// retries one).
	PolicyStatus int
}

// credentialHeaders may never be forwarded from the box, whatever a
// backend's Forward list says.
var credentialHeaders = []string{"authorization", "proxy-authorization", "x-api-key", "cookie", "chatgpt-account-id", "x-goog-api-key", "api-key"}

func (b *Backend) validate() error {
	if b.Name == "" {
		return errors.New("egress backend has no name")
	}
	if err := CheckUpstream(b.Upstream); err != nil {
		return fmt.Errorf("egress backend %s: %w", b.Name, err)
	}
	if len(b.Routes) == 0 && b.Resolve == nil || b.Check == nil || b.Credential == nil || b.Error == nil || b.PolicyStatus == 0 || b.MaxBody <= 0 {
		return fmt.Errorf("egress backend %s: incomplete definition", b.Name)
	}
	for _, f := range b.Forward {
		for _, c := range credentialHeaders {
			if headerMatches(f, c) {
				return fmt.Errorf("egress backend %s: the box's %s header may never be forwarded", b.Name, c)
			}
		}
	}
	return nil
}

// CheckUpstream refuses an upstream that is not a plain https base URL.
func CheckUpstream(u *url.URL) error {
	switch {
	case u == nil:
		return errors.New("no upstream URL")
	case u.Scheme != "https":
		return fmt.Errorf("upstream %s is not https", u.Redacted())
	case u.Host == "":
		return fmt.Errorf("upstream %s has no host", u.Redacted())
	case u.User != nil:
		return fmt.Errorf("upstream %s carries a user name or password", u.Redacted())
	case u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		return fmt.Errorf("upstream %s has a query or fragment", u.Redacted())
	}
	return nil
}

// ParseUpstream parses and checks an upstream base URL (for example from
// AISAN_ANTHROPIC_UPSTREAM); name says where it came from.
func ParseUpstream(name, raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimRight(raw, "/"))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := CheckUpstream(u); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return u, nil
}

// headerMatches reports whether the lower-case header name h is matched by
// the pattern p (a name, or a prefix ending in '*').
func headerMatches(p, h string) bool {
	if strings.HasSuffix(p, "*") {
		return strings.HasPrefix(h, p[:len(p)-1])
	}
	return p == h
}

// HeaderValues reads h as outHeader copies it: the values of every key
// that is name in any case, so a check sees all that will be forwarded.
func HeaderValues(h http.Header) func(name string) []string {
	return func(name string) []string {
		var vs []string
		for k, v := range h {
			if strings.EqualFold(k, name) {
				vs = append(vs, v...)
			}
		}
		return vs
	}
}

func allowed(list []string, name string) bool {
	l := strings.ToLower(name)
	for _, p := range list {
		if headerMatches(p, l) {
			return true
		}
	}
	return false
}

// Match returns the route the request line names exactly, if any. The
// comparison is on the raw request target, so an escaped spelling of an
// allowed path is refused rather than decoded.
func (b *Backend) Match(r *http.Request) (Route, bool) {
	path, query, hasQuery := strings.Cut(r.RequestURI, "?")
	if hasQuery && query == "" {
		return Route{}, false
	}
	if b.Resolve != nil {
		return b.Resolve(r.Method, path, query)
	}
	for _, rt := range b.Routes {
		if rt.Method == r.Method && rt.Path == path && rt.Query == query {
			return rt, true
		}
	}
	return Route{}, false
}

// Rewrite builds the upstream request: the URL from the route alone, the
// headers from the Forward list alone (every value kept, nothing else
// copied), then the credential set, then Adjust. It is pure.
func (b *Backend) Rewrite(pr *httputil.ProxyRequest, rt Route, body []byte, c Credential) {
	u := *b.Upstream
	u.Path = strings.TrimRight(u.Path, "/") + rt.Path
	u.RawPath = ""
	u.RawQuery = rt.Query
	pr.Out.URL = &u
	pr.Out.Host = ""
	pr.Out.Header = b.outHeader(pr.In.Header, c)
	setBody(pr.Out, body)
	pr.Out.TransferEncoding = nil
	pr.Out.Trailer = nil
	pr.Out.Close = false
}

// setBody makes body the request's body, replayable.
func setBody(r *http.Request, body []byte) {
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
}

// outHeader is the upstream request's header: the Forward list's headers
// of in (every value kept, nothing else copied), the credential, then
// Adjust.
func (b *Backend) outHeader(in http.Header, c Credential) http.Header {
	out := make(http.Header, len(in)+len(c)+3)
	for k, vs := range in {
		if allowed(b.Forward, k) {
			out[k] = append([]string(nil), vs...)
		}
	}
	for _, h := range c {
		out.Set(h.Name, h.Value.Reveal())
	}
	out.Set("Content-Type", "application/json")
	if _, ok := out["User-Agent"]; !ok {
		out["User-Agent"] = []string{""} // keep Go's default out: it names us, not the client
	}
	if b.Adjust != nil {
		b.Adjust(out, in, c)
	}
	return out
}

// Get is the value of the credential's header name, empty if it has none.
func (c Credential) Get(name string) cred.Secret {
	for _, h := range c {
		if strings.EqualFold(h.Name, name) {
			return h.Value
		}
	}
	return cred.Secret{}
}

// equal reports whether two credentials set the same headers.
func (c Credential) equal(d Credential) bool {
	if len(c) != len(d) {
		return false
	}
	for i := range c {
		if !strings.EqualFold(c[i].Name, d[i].Name) || c[i].Value.Reveal() != d[i].Value.Reveal() {
			return false
		}
	}
	return true
}

// filterResponse keeps only the Return headers of an upstream answer.
func (b *Backend) filterResponse(h http.Header) {
	for k := range h {
		if !allowed(b.Return, k) {
			delete(h, k)
		}
	}
}

// refusalStatus maps a refusal to its HTTP status for this backend.
func (b *Backend) refusalStatus(k Kind) int {
	switch k {
	case KindAuth:
		return http.StatusUnauthorized
	case KindTooLarge:
		return http.StatusRequestEntityTooLarge
	case KindRate:
		return http.StatusTooManyRequests
	case KindUpstream:
		return http.StatusBadGateway
	default:
		return b.PolicyStatus
	}
}

// WriteRefusal answers a refusal in the API's shape and returns its
// status. Only a rate limit and an unreachable upstream may be retried;
// for everything else the answer would be the same, so the client is
// told not to.
func (b *Backend) WriteRefusal(w http.ResponseWriter, rf *Refusal) int {
	status := b.refusalStatus(rf.Kind)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	switch rf.Kind {
	case KindRate:
		secs := int((rf.RetryAfter + time.Second - 1) / time.Second)
		if secs < 1 {
			secs = 1
		}
		h.Set("Retry-After", strconv.Itoa(secs))
		h.Set("Retry-After-Ms", strconv.FormatInt(max(rf.RetryAfter.Milliseconds(), 1), 10))
	case KindUpstream:
	default:
		h.Set("X-Should-Retry", "false")
	}
	body := b.Error(status, rf.Kind, rf.Reason)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
	return status
}

// bodyRefusal is the refusal of a body, or of a header's value, the
// policy refused: where, why, and what the user can do about it, in words
// the model and the user both read.
func (b *Backend) bodyRefusal(err error) *Refusal {
	var pr *policy.Refusal
	if !errors.As(err, &pr) {
		return asRefusal(err)
	}
	msg := "aisan strict mode refused this request: " + pr.Error()
	if pr.Known {
		msg += "; strict mode sends no such request (run the agent without --strict for it)"
	} else {
		msg += fmt.Sprintf("; strict mode passes only what its policy lists (aisan explain --policy %s): turn off the agent option that sends this, or use an agent version aisan knows", b.Name)
	}
	return &Refusal{Kind: KindPolicy, Reason: msg}
}
