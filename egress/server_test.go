package egress_test

import (
	"bufio"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aisan-dev/aisan/egress"
	"github.com/aisan-dev/aisan/egress/audit"
	"github.com/aisan-dev/aisan/egress/cred"
	"github.com/aisan-dev/aisan/egress/egresstest"
	"github.com/aisan-dev/aisan/egress/policy"
)

func TestMain(m *testing.M) { os.Exit(egresstest.RunWithCA(m)) }

const realToken = "sk-real-credential-0123456789"

func testBackend(up *url.URL, src *egresstest.Source) *egress.Backend {
	return &egress.Backend{
		Name:     "test",
		Upstream: up,
		Routes:   []egress.Route{{Method: "POST", Path: "/v1/x", Query: "beta=true"}, {Method: "POST", Path: "/v1/y"}},
		Forward:  []string{"x-keep", "x-pre-*", "user-agent", "accept"},
		Return:   []string{"content-type", "retry-after", "x-ok", "request-id"},
		MaxBody:  1 << 10,
		Check: func(_ egress.Route, body map[string]any) error {
			if _, ok := body["bad"]; ok {
				return egress.Refuse("the field 'bad' is bad")
			}
			if _, ok := body["panic"]; ok {
				panic("policy bug")
			}
			if _, ok := body["plainerr"]; ok {
				return errors.New("plain error")
			}
			return nil
		},
		Credential: func(ctx context.Context) (egress.Credential, error) {
			tok, err := src.Token(ctx)
			if err != nil {
				return nil, err
			}
			return egress.Credential{{Name: "Authorization", Value: tokSecret("Bearer " + tok.Reveal())}}, nil
		},
		Error: func(status int, kind egress.Kind, msg string) []byte {
			b, _ := json.Marshal(map[string]any{"status": status, "kind": int(kind), "message": msg})
			return b
		},
		PolicyStatus: http.StatusForbidden,
	}
}

type fixture struct {
	up     *egresstest.Upstream
	src    *egresstest.Source
	client *http.Client
	audit  *egresstest.Collect
}

func newFixture(t *testing.T, h http.Handler, opt egress.Options) *fixture {
	f := &fixture{up: egresstest.NewUpstream(t, h), src: &egresstest.Source{Value: realToken}, audit: &egresstest.Collect{}}
	if opt.Audit == nil {
		opt.Audit = f.audit
	}
	f.client = egresstest.Serve(t, testBackend(f.up.URL, f.src), opt)
	return f
}

func (f *fixture) do(t *testing.T, method, target string, hdr http.Header, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, "http://box"+target, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, vs := range hdr {
		req.Header[k] = vs
	}
	resp, err := f.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestForwardRebuildsTheRequest(t *testing.T) {
	f := newFixture(t, egresstest.JSON(201, `{"ok":true}`, "X-Ok", "1", "X-Secret", "s", "Request-Id", "req_1", "Set-Cookie", "a=b"), egress.Options{})
	body := `{"model":"m","n":1.50e3}`
	hdr := http.Header{
		"X-Keep":        {"a", "b"},
		"X-Pre-Foo":     {"c"},
		"X-Other":       {"dropped"},
		"Authorization": {"Bearer aisan-placeholder"},
		"X-Api-Key":     {"aisan-placeholder"},
		"Cookie":        {"session=placeholder"},
		"User-Agent":    {"claude-cli/2.1.332"},
	}
	resp := f.do(t, "POST", "/v1/x?beta=true", hdr, body)
	got, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 201 || string(got) != `{"ok":true}` {
		t.Fatalf("answer %d %s", resp.StatusCode, got)
	}
	if resp.Header.Get("X-Ok") != "1" || resp.Header.Get("Request-Id") != "req_1" || resp.Header.Get("X-Secret") != "" || resp.Header.Get("Set-Cookie") != "" {
		t.Errorf("response headers not filtered: %v", resp.Header)
	}
	reqs := f.up.Requests()
	if len(reqs) != 1 {
		t.Fatalf("upstream saw %d requests", len(reqs))
	}
	r := reqs[0]
	if r.Method != "POST" || r.Target != "/v1/x?beta=true" || string(r.Body) != body || r.Host != f.up.URL.Host {
		t.Errorf("upstream saw %s %s host %s body %s", r.Method, r.Target, r.Host, r.Body)
	}
	if got := r.Header.Values("Authorization"); len(got) != 1 || got[0] != "Bearer "+realToken {
		t.Errorf("Authorization upstream = %q", got)
	}
	if v := r.Header.Values("X-Keep"); len(v) != 2 {
		t.Errorf("repeated header collapsed: %q", v)
	}
	for _, h := range []string{"X-Api-Key", "Cookie", "X-Other"} {
		if r.Header.Get(h) != "" {
			t.Errorf("%s reached the upstream", h)
		}
	}
	if r.Header.Get("X-Pre-Foo") != "c" || r.Header.Get("User-Agent") != "claude-cli/2.1.332" {
		t.Errorf("allowed headers missing: %v", r.Header)
	}
	for k, vs := range r.Header {
		for _, v := range vs {
			if strings.Contains(v, "placeholder") {
				t.Errorf("placeholder reached the upstream in %s", k)
			}
		}
	}
	es := f.audit.Entries()
	if len(es) != 1 || es[0].Status != 201 || es[0].Path != "/v1/x?beta=true" || es[0].BytesUp != int64(len(body)) || es[0].BytesDown != int64(len(got)) || es[0].Refused != "" || es[0].Backend != "test" {
		t.Errorf("audit %+v", es)
	}
}

func TestRefusedNeverReachesUpstreamOrCredential(t *testing.T) {
	big := `{"a":"` + strings.Repeat("x", 2000) + `"}`
	for _, tc := range []struct {
		name, method, target, ctype, cenc, body string
		status                                  int
		reason                                  string
	}{
		{"unknown path", "POST", "/v1/z", "", "", `{}`, 403, "is not a request"},
		{"escaped path", "POST", "/v1/%78?beta=true", "", "", `{}`, 403, "is not a request"},
		{"trailing slash", "POST", "/v1/x/?beta=true", "", "", `{}`, 403, "is not a request"},
		{"double slash", "POST", "//v1/x?beta=true", "", "", `{}`, 403, "is not a request"},
		{"missing query", "POST", "/v1/x", "", "", `{}`, 403, "is not a request"},
		{"extra query", "POST", "/v1/x?beta=true&x=1", "", "", `{}`, 403, "is not a request"},
		{"empty query", "POST", "/v1/y?", "", "", `{}`, 403, "is not a request"},
		{"query on plain route", "POST", "/v1/y?beta=true", "", "", `{}`, 403, "is not a request"},
		{"wrong method", "GET", "/v1/x?beta=true", "", "", ``, 403, "is not a request"},
		{"lower-case method", "post", "/v1/x?beta=true", "", "", `{}`, 403, "is not a request"},
		{"duplicate key", "POST", "/v1/y", "", "", `{"a":1,"a":2}`, 403, "duplicate key"},
		{"nested duplicate", "POST", "/v1/y", "", "", `{"a":[{"b":1,"b":1}]}`, 403, "duplicate key"},
		{"escaped duplicate", "POST", "/v1/y", "", "", `{"tools":1,"tool\u0073":2}`, 403, "duplicate key"},
		{"trailing data", "POST", "/v1/y", "", "", `{} {}`, 403, "data after"},
		{"array body", "POST", "/v1/y", "", "", `[]`, 403, "must be a JSON object"},
		{"empty body", "POST", "/v1/y", "", "", ``, 403, "empty body"},
		{"invalid utf8", "POST", "/v1/y", "", "", "{\"a\":\"\xff\"}", 403, "UTF-8"},
		{"lone surrogate", "POST", "/v1/y", "", "", `{"a":"\ud800"}`, 403, "surrogate"},
		{"too large", "POST", "/v1/y", "", "", big, 413, "larger than"},
		{"compressed", "POST", "/v1/y", "", "gzip", `{}`, 403, "compressed"},
		{"not json", "POST", "/v1/y", "text/plain", "", `{}`, 403, "application/json"},
		{"utf-16 charset", "POST", "/v1/y", "application/json; charset=utf-16", "", `{}`, 403, "in UTF-8"},
		{"other parameter", "POST", "/v1/y", "application/json; boundary=x", "", `{}`, 403, "no other parameter"},
		{"policy refusal", "POST", "/v1/y", "", "", `{"bad":1}`, 403, "'bad' is bad"},
		{"policy panic", "POST", "/v1/y", "", "", `{"panic":1}`, 403, "policy failed"},
		{"policy plain error", "POST", "/v1/y", "", "", `{"plainerr":1}`, 403, "plain error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, egresstest.JSON(200, `{}`), egress.Options{})
			hdr := http.Header{}
			if tc.cenc != "" {
				hdr.Set("Content-Encoding", tc.cenc)
			}
			if tc.ctype != "" {
				hdr.Set("Content-Type", tc.ctype)
			}
			resp := f.do(t, tc.method, tc.target, hdr, tc.body)
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status {
				t.Errorf("status %d, want %d (%s)", resp.StatusCode, tc.status, b)
			}
			var e struct{ Message string }
			if err := json.Unmarshal(b, &e); err != nil || !strings.Contains(e.Message, tc.reason) || !strings.HasPrefix(e.Message, "aisan strict mode: ") {
				t.Errorf("refusal body %s, want reason %q", b, tc.reason)
			}
			if resp.Header.Get("X-Should-Retry") != "false" {
				t.Errorf("x-should-retry = %q", resp.Header.Get("X-Should-Retry"))
			}
			if n := len(f.up.Requests()); n != 0 {
				t.Errorf("upstream saw %d requests", n)
			}
			if n := f.src.Calls(); n != 0 {
				t.Errorf("credential read %d times", n)
			}
			es := f.audit.Entries()
			if len(es) != 1 || es[0].Refused == "" || es[0].Status != tc.status {
				t.Errorf("audit %+v", es)
			}
		})
	}
}

func TestCredentialFailureIsARefusal(t *testing.T) {
	f := newFixture(t, egresstest.JSON(200, `{}`), egress.Options{})
	f.src.Err = errors.New("the Claude login expired and could not be refreshed; run `claude` on the host")
	resp := f.do(t, "POST", "/v1/y", nil, `{}`)
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 403 || !strings.Contains(string(b), "could not be refreshed") || resp.Header.Get("X-Should-Retry") != "false" {
		t.Errorf("got %d %s %v", resp.StatusCode, b, resp.Header)
	}
	if len(f.up.Requests()) != 0 {
		t.Error("reached the upstream without a credential")
	}
}

func TestPerBoxToken(t *testing.T) {
	up := egresstest.NewUpstream(t, egresstest.JSON(200, `{}`))
	src := &egresstest.Source{Value: realToken}
	ln, err := egress.ListenLoopback()
	if err != nil {
		t.Fatal(err)
	}
	const tok = "box-token-0123456789abcdef"
	srv, err := egress.NewServer(testBackend(up.URL, src), egress.Options{Token: tok})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	for _, tc := range []struct {
		name   string
		hdr    http.Header
		status int
	}{
		{"none", http.Header{}, 401},
		{"wrong bearer", http.Header{"Authorization": {"Bearer nope"}}, 401},
		{"prefix of token", http.Header{"Authorization": {"Bearer " + tok[:10]}}, 401},
		{"basic scheme", http.Header{"Authorization": {"Basic " + tok}}, 401},
		{"two headers", http.Header{"Authorization": {"Bearer " + tok}, "X-Api-Key": {tok}}, 401},
		{"two values", http.Header{"Authorization": {"Bearer " + tok, "Bearer " + tok}}, 401},
		{"bearer", http.Header{"Authorization": {"Bearer " + tok}}, 200},
		{"lower-case bearer", http.Header{"Authorization": {"bearer " + tok}}, 200},
		{"x-api-key", http.Header{"X-Api-Key": {tok}}, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up.Reset()
			req, _ := http.NewRequest("POST", "http://"+ln.Addr().String()+"/v1/y", strings.NewReader(`{}`))
			req.Header = tc.hdr
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, b)
			}
			if tc.status == 401 && len(up.Requests()) != 0 {
				t.Error("unauthenticated request reached the upstream")
			}
			if tc.status == 200 {
				r := up.Requests()[0]
				if r.Header.Get("X-Api-Key") != "" || r.Header.Get("Authorization") != "Bearer "+realToken {
					t.Errorf("upstream headers %v", r.Header)
				}
			}
		})
	}
}

func TestRateLimit(t *testing.T) {
	f := newFixture(t, egresstest.JSON(200, `{}`), egress.Options{Rate: 0.5, Burst: 1})
	if resp := f.do(t, "POST", "/v1/y", nil, `{}`); resp.StatusCode != 200 {
		t.Fatalf("first: %d", resp.StatusCode)
	}
	resp := f.do(t, "POST", "/v1/y", nil, `{}`)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "2" || resp.Header.Get("Retry-After-Ms") == "" {
		t.Errorf("second: %d %v", resp.StatusCode, resp.Header)
	}
	if resp.Header.Get("X-Should-Retry") != "" {
		t.Error("a rate limit must stay retryable")
	}
	if len(f.up.Requests()) != 1 {
		t.Error("rate-limited request reached the upstream")
	}
}

func TestSSEIsStreamedPerEvent(t *testing.T) {
	// An event stream, and a chunked body of another type: both must
	// arrive write by write.
	for _, ct := range []string{"text/event-stream", "application/x-ndjson"} {
		t.Run(ct, func(t *testing.T) { streamedPerWrite(t, ct) })
	}
}

func streamedPerWrite(t *testing.T, ct string) {
	release := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", ct)
		w.WriteHeader(200)
		io.WriteString(w, "event: one\ndata: {}\n\n")
		w.(http.Flusher).Flush()
		<-release
		io.WriteString(w, "event: two\ndata: {}\n\n")
	})
	f := newFixture(t, h, egress.Options{})
	resp := f.do(t, "POST", "/v1/y", nil, `{"stream":true}`)
	br := bufio.NewReader(resp.Body)
	got := make(chan string, 1)
	go func() {
		l, _ := br.ReadString('\n')
		got <- l
	}()
	select {
	case l := <-got:
		if l != "event: one\n" {
			t.Errorf("first line %q", l)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the first event was held back until the stream ended")
	}
	close(release)
	rest, _ := io.ReadAll(br)
	if !strings.Contains(string(rest), "event: two") {
		t.Errorf("rest %q", rest)
	}
}

// TestUpstreamUnreachable: the box learns that the upstream could not be
// reached; why (the address dialled, the resolver's answer) is only in
// the host's egress log.
func TestUpstreamUnreachable(t *testing.T) {
	src := &egresstest.Source{Value: realToken}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	up, _ := url.Parse("https://" + addr)
	path := filepath.Join(t.TempDir(), "egress.log")
	log, err := audit.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	client := egresstest.Serve(t, testBackend(up, src), egress.Options{Audit: log})
	req, _ := http.NewRequest("POST", "http://box/v1/y", strings.NewReader(`{}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 502 || !strings.Contains(string(b), "could not be reached") || strings.Contains(string(b), realToken) {
		t.Errorf("got %d %s", resp.StatusCode, b)
	}
	log.Close()
	logged, _ := os.ReadFile(path)
	if !strings.Contains(string(logged), "connection refused") {
		t.Errorf("the egress log lacks the cause: %s", logged)
	}
	if strings.Contains(string(b), "connection refused") || strings.Contains(string(b), "dial tcp") {
		t.Errorf("the box is told the host-side cause: %s", b)
	}
}

func TestUntrustedUpstreamFails(t *testing.T) {
	up := egresstest.NewUpstream(t, egresstest.JSON(200, `{}`))
	src := &egresstest.Source{Value: realToken}
	tr := egress.NewTransport()
	tr.TLSClientConfig.RootCAs = x509EmptyPool()
	client := egresstest.Serve(t, testBackend(up.URL, src), egress.Options{Transport: tr})
	req, _ := http.NewRequest("POST", "http://box/v1/y", strings.NewReader(`{}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 502 || len(up.Requests()) != 0 {
		t.Errorf("an upstream with an untrusted certificate answered: %d", resp.StatusCode)
	}
}

func TestCheckUpstream(t *testing.T) {
	for raw, ok := range map[string]bool{
		"https://api.anthropic.com":             true,
		"https://chatgpt.com/backend-api/codex": true,
		"https://127.0.0.1:8443/":               true,
		"http://api.anthropic.com":              false,
		"https://user:pw@api.anthropic.com":     false,
		"https://api.anthropic.com/?x=1":        false,
		"https:///path":                         false,
		"api.anthropic.com":                     false,
	} {
		_, err := egress.ParseUpstream("X", raw)
		if (err == nil) != ok {
			t.Errorf("%s: err %v", raw, err)
		}
	}
	src := &egresstest.Source{}
	u, _ := url.Parse("http://example.invalid")
	if _, err := egress.NewServer(testBackend(u, src), egress.Options{}); err == nil {
		t.Error("NewServer took a plain-http upstream")
	}
	b := testBackend(&url.URL{Scheme: "https", Host: "h"}, src)
	b.Forward = append(b.Forward, "x-api-*")
	if _, err := egress.NewServer(b, egress.Options{}); err == nil {
		t.Error("NewServer took a Forward list that passes x-api-key")
	}
}

func TestListenUnix(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.sock")
	ln, err := egress.ListenUnix(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Lstat(path)
	if err != nil || st.Mode().Perm() != 0o600 || st.Mode().Type() != os.ModeSocket {
		t.Fatalf("socket mode %v %v", st.Mode(), err)
	}
	ln.Close()
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Error("Close left the socket behind")
	}
	// A stale socket (its server gone) is replaced.
	stale, _ := net.Listen("unix", path)
	stale.(*net.UnixListener).SetUnlinkOnClose(false)
	stale.Close()
	ln, err = egress.ListenUnix(path)
	if err != nil {
		t.Fatalf("stale socket: %v", err)
	}
	ln.Close()
	// Anything else is never removed.
	os.WriteFile(path, []byte("keep"), 0o600)
	if _, err := egress.ListenUnix(path); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Errorf("regular file: %v", err)
	}
	os.Remove(path)
	os.Symlink(filepath.Join(dir, "elsewhere"), path)
	if _, err := egress.ListenUnix(path); err == nil {
		t.Error("symlink: no error")
	}
}

func TestNoDirector(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	sub, _ := filepath.Glob("*/*.go")
	for _, f := range append(files, sub...) {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, _ := os.ReadFile(f)
		if strings.Contains(string(b), "Director:") || strings.Contains(string(b), ".Director") {
			t.Errorf("%s uses ReverseProxy.Director; use Rewrite (it cannot be undone by hop-by-hop headers)", f)
		}
	}
}

func TestAuditHoldsNoSecret(t *testing.T) {
	f := newFixture(t, egresstest.JSON(200, `{}`), egress.Options{})
	f.do(t, "POST", "/v1/y", http.Header{"Authorization": {"Bearer placeholder"}}, `{"x":"`+realToken+`"}`)
	b, _ := json.Marshal(f.audit.Entries())
	if strings.Contains(string(b), realToken) || strings.Contains(string(b), "placeholder") {
		t.Errorf("audit leaks: %s", b)
	}
}

func ExampleListenUnix() {
	dir, _ := os.MkdirTemp("", "ex")
	defer os.RemoveAll(dir)
	ln, err := egress.ListenUnix(filepath.Join(dir, "anthropic.sock"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ln.Close()
	st, _ := os.Stat(filepath.Join(dir, "anthropic.sock"))
	fmt.Println(st.Mode().Perm())
	// Output: -rw-------
}

func tokSecret(s string) cred.Secret { return cred.NewSecret(s) }

func x509EmptyPool() *x509.CertPool { return x509.NewCertPool() }

func FuzzMatch(f *testing.F) {
	for _, s := range []string{"/v1/x?beta=true", "/v1/y", "/v1/y?", "/v1/%78?beta=true", "//v1/y", "/v1/x?beta=true&beta=true"} {
		f.Add("POST", s)
	}
	b := testBackend(&url.URL{Scheme: "https", Host: "h"}, &egresstest.Source{})
	f.Fuzz(func(t *testing.T, method, target string) {
		r := &http.Request{Method: method, RequestURI: target}
		rt, ok := b.Match(r)
		if !ok {
			return
		}
		want := rt.Path
		if rt.Query != "" {
			want += "?" + rt.Query
		}
		if target != want || method != rt.Method {
			t.Fatalf("%s %q matched %v", method, target, rt)
		}
	})
}

func FuzzRewriteNeverForwardsBoxCredentials(f *testing.F) {
	f.Add("Authorization", "Bearer box")
	f.Add("x-api-key", "box")
	f.Add("X-Pre-Authorization", "box")
	b := testBackend(&url.URL{Scheme: "https", Host: "h"}, &egresstest.Source{})
	f.Fuzz(func(t *testing.T, name, value string) {
		in, err := http.NewRequest("POST", "http://box/v1/y", nil)
		if err != nil {
			return
		}
		in.Header[name] = []string{value}
		in.Header["Authorization"] = []string{"Bearer box"}
		pr := &httputil.ProxyRequest{In: in, Out: in.Clone(context.Background())}
		b.Rewrite(pr, egress.Route{Method: "POST", Path: "/v1/y"}, nil, egress.Credential{{Name: "Authorization", Value: cred.NewSecret("Bearer real")}})
		for k, vs := range pr.Out.Header {
			for _, v := range vs {
				if strings.Contains(v, "box") && !strings.HasPrefix(strings.ToLower(k), "x-pre-") && strings.ToLower(k) != "x-keep" && strings.ToLower(k) != "user-agent" && strings.ToLower(k) != "accept" {
					t.Fatalf("forwarded %s: %q", k, v)
				}
			}
		}
		if got := pr.Out.Header.Values("Authorization"); len(got) != 1 || got[0] != "Bearer real" {
			t.Fatalf("Authorization %q", got)
		}
	})
}

func TestAuditFileLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "egress.log")
	log, err := audit.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, egresstest.JSON(200, `{"ok":1}`), egress.Options{Audit: log})
	f.do(t, "POST", "/v1/x?beta=true", nil, `{"a":1}`)
	f.do(t, "POST", "/v1/y", nil, `{"bad":1}`)
	log.Close()
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines: %s", len(lines), b)
	}
	var ok, refused map[string]any
	json.Unmarshal([]byte(lines[0]), &ok)
	json.Unmarshal([]byte(lines[1]), &refused)
	if ok["path"] != "/v1/x?beta=true" || ok["status"] != 200.0 || ok["refused"] != "" || ok["bytes_up"] != 7.0 || ok["bytes_down"] != 8.0 || ok["backend"] != "test" {
		t.Errorf("allowed: %s", lines[0])
	}
	if refused["status"] != 403.0 || !strings.Contains(refused["refused"].(string), "'bad' is bad") || refused["ms"] != 0.0 {
		t.Errorf("refused: %s", lines[1])
	}
	for _, k := range []string{"time", "backend", "method", "path", "status", "bytes_up", "bytes_down", "ms", "refused"} {
		if _, has := ok[k]; !has {
			t.Errorf("no %s in %s", k, lines[0])
		}
	}
}

func TestMaxConns(t *testing.T) {
	up := egresstest.NewUpstream(t, egresstest.JSON(200, `{}`))
	path := filepath.Join(t.TempDir(), "s.sock")
	ln, err := egress.ListenUnix(path)
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := egress.NewServer(testBackend(up.URL, &egresstest.Source{Value: "x"}), egress.Options{MaxConns: 2})
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	var idle []net.Conn
	for i := 0; i < 2; i++ {
		c, err := net.Dial("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		idle = append(idle, c)
	}
	// A third connection is not served while two are open...
	third, _ := net.Dial("unix", path)
	third.SetDeadline(time.Now().Add(300 * time.Millisecond))
	io.WriteString(third, "POST /v1/y HTTP/1.1\r\nHost: b\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
	if _, err := third.Read(make([]byte, 1)); err == nil {
		t.Fatal("served a connection beyond the cap")
	}
	third.Close()
	// ...and is once one closes.
	idle[0].Close()
	c, _ := net.Dial("unix", path)
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(c, "POST /v1/y HTTP/1.1\r\nHost: b\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
	if l, err := bufio.NewReader(c).ReadString('\n'); err != nil || !strings.Contains(l, "200") {
		t.Errorf("after a close: %q %v", l, err)
	}
}

// TestHandOverToAnotherServer: a second server (a keeper, in its own
// process in real life) serves a duplicate of the first's listening
// socket; the first drains: a request it was answering is answered, it
// takes nothing new, and the socket file stays; requests then reach the
// second. Closing the second removes the file.
func TestHandOverToAnotherServer(t *testing.T) {
	release := make(chan struct{})
	up := egresstest.NewUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Keep") == "slow" {
			<-release
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{}`)
	}))
	path := filepath.Join(t.TempDir(), "s.sock")
	ln, err := egress.ListenUnix(path)
	if err != nil {
		t.Fatal(err)
	}
	b := testBackend(up.URL, &egresstest.Source{Value: "x"})
	first, _ := egress.NewServer(b, egress.Options{})
	go first.Serve(ln)
	post := func(keep string) (int, error) {
		c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", path)
		}}}
		req, _ := http.NewRequest("POST", "http://box/v1/y", strings.NewReader(`{}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Keep", keep)
		resp, err := c.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	slow := make(chan error, 1)
	go func() {
		code, err := post("slow")
		if err == nil && code != 200 {
			err = fmt.Errorf("status %d", code)
		}
		slow <- err
	}()
	waitUntil(t, func() bool { return len(up.Requests()) == 1 })

	f, err := egress.ListenerFile(ln)
	if err != nil {
		t.Fatal(err)
	}
	ln2, err := egress.InheritListener(f, path)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	second, _ := egress.NewServer(b, egress.Options{})
	go second.Serve(ln2)
	egress.Disown(ln)
	drained := make(chan struct{})
	go func() {
		first.Drain(context.Background())
		close(drained)
	}()
	select {
	case <-drained:
		t.Fatal("the drain did not wait for the request in flight")
	case <-time.After(100 * time.Millisecond):
	}
	// New requests are answered meanwhile, by the second.
	if code, err := post("new"); err != nil || code != 200 {
		t.Fatalf("a request during the drain: %d %v", code, err)
	}
	close(release)
	if err := <-slow; err != nil {
		t.Errorf("the request in flight at the hand-over: %v", err)
	}
	<-drained
	if fi, err := os.Lstat(path); err != nil || fi.Mode().Type() != os.ModeSocket {
		t.Fatalf("the drained server removed the socket: %v", err)
	}
	for i := range 3 {
		if code, err := post("after"); err != nil || code != 200 {
			t.Fatalf("request %d after the drain: %d %v", i, code, err)
		}
	}
	second.Close()
	ln2.Close()
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("closing the inherited listener left the socket: %v", err)
	}

	// What is not a listening socket is refused.
	r, w, _ := os.Pipe()
	defer w.Close()
	if _, err := egress.InheritListener(r, path); err == nil {
		t.Error("a pipe was taken as a listener")
	}
	r.Close()
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("timed out")
}

// TestUpstreamRedirectIsNotFollowed: an upstream that answers a model call
// with a redirect gets no second request, from the proxy or (through
// it) from the box's client, which is told why in the API's shape.
func TestUpstreamRedirectIsNotFollowed(t *testing.T) {
	elsewhere := egresstest.NewUpstream(t, egresstest.JSON(200, `{}`))
	for _, status := range []int{301, 302, 303, 307, 308} {
		f := newFixture(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, elsewhere.URL.String()+"/steal", status)
		}), egress.Options{})
		resp := f.do(t, "POST", "/v1/y", nil, `{}`)
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 502 || !strings.Contains(string(b), "a redirect to "+elsewhere.URL.Host+", which aisan does not follow") || resp.Header.Get("Location") != "" {
			t.Errorf("%d: the box got %d %s (Location %q)", status, resp.StatusCode, b, resp.Header.Get("Location"))
		}
		if n := len(f.up.Requests()); n != 1 {
			t.Errorf("%d: the upstream saw %d requests", status, n)
		}
	}
	if n := len(elsewhere.Requests()); n != 0 {
		t.Errorf("the redirect target saw %d requests", n)
	}
}

// TestRefusedHeaderShapes: a Content-Type given twice, and trailers
// (which arrive after the header checks), are refused with a reason
// before the credential is read; the same body sent plainly passes.
func TestRefusedHeaderShapes(t *testing.T) {
	send := func(t *testing.T, f *fixture, twoTypes, trailer bool) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("POST", "http://box/v1/y", io.MultiReader(strings.NewReader(`{"a":1}`)))
		req.Header.Set("Content-Type", "application/json")
		if twoTypes {
			req.Header.Add("Content-Type", "text/plain")
		}
		if trailer {
			req.Trailer = http.Header{"Content-Encoding": {"gzip"}}
		}
		resp, err := f.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	for _, tc := range []struct {
		name              string
		twoTypes, trailer bool
		reason            string
	}{
		{"two content types", true, false, "more than one Content-Type"},
		{"trailers", false, true, "trailers"},
		{"plain", false, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, egresstest.JSON(200, `{}`), egress.Options{})
			resp := send(t, f, tc.twoTypes, tc.trailer)
			b, _ := io.ReadAll(resp.Body)
			if tc.reason == "" {
				if resp.StatusCode != 200 || len(f.up.Requests()) != 1 {
					t.Fatalf("a plain request: %d %s", resp.StatusCode, b)
				}
				return
			}
			if resp.StatusCode != 403 || !strings.Contains(string(b), tc.reason) {
				t.Errorf("status %d %s, want 403 naming %q", resp.StatusCode, b, tc.reason)
			}
			if len(f.up.Requests()) != 0 || f.src.Calls() != 0 {
				t.Errorf("the upstream or the credential was reached")
			}
		})
	}
}

// TestHeaderPolicy: a backend's header policy sees every value the
// Forward list would pass, runs before the body is read and the
// credential is, and its refusal names the header and the value.
func TestHeaderPolicy(t *testing.T) {
	for _, tc := range []struct {
		name   string
		hdr    http.Header
		body   string
		reason string
	}{
		{"known", http.Header{"X-Keep": {"ok-1, ok-2", "ok-1"}}, `{"a":1}`, ""},
		{"none", http.Header{}, `{"a":1}`, ""},
		{"unknown value", http.Header{"X-Keep": {"ok-1, other-9"}}, `{"a":1}`, `aisan strict mode refused this request: the x-keep header: "other-9" is not a value aisan knows; strict mode passes only what its policy lists (aisan explain --policy test)`},
		{"unknown value on a second line", http.Header{"X-Keep": {"ok-1", "other-9"}}, `{"a":1}`, `"other-9" is not a value`},
		{"before the body", http.Header{"X-Keep": {"other-9"}}, `not json`, `"other-9" is not a value`},
		{"policy panic", http.Header{"X-Keep": {"panic"}}, `{"a":1}`, "policy failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fixture{up: egresstest.NewUpstream(t, egresstest.JSON(200, `{}`)), src: &egresstest.Source{Value: realToken}, audit: &egresstest.Collect{}}
			b := testBackend(f.up.URL, f.src)
			tb := (&policy.Table{Name: "t", Root: "b", Shapes: []policy.Shape{{Name: "b"}},
				Headers: []policy.HeaderList{{Name: "x-keep", Values: []string{"ok-1", "ok-2"}}}}).MustCompile()
			b.CheckHeader = func(_ egress.Route, values func(string) []string) error {
				if slices.Contains(values("x-keep"), "panic") {
					panic("header policy bug")
				}
				return tb.CheckHeaders(values)
			}
			f.client = egresstest.Serve(t, b, egress.Options{Audit: f.audit})
			resp := f.do(t, "POST", "/v1/y", tc.hdr, tc.body)
			got, _ := io.ReadAll(resp.Body)
			if tc.reason == "" {
				if resp.StatusCode != 200 || len(f.up.Requests()) != 1 {
					t.Fatalf("%d %s", resp.StatusCode, got)
				}
				if up := f.up.Requests()[0].Header.Values("X-Keep"); !slices.Equal(up, tc.hdr.Values("X-Keep")) {
					t.Errorf("the upstream got x-keep %q", up)
				}
				return
			}
			var e struct{ Message string }
			if json.Unmarshal(got, &e); resp.StatusCode != 403 || !strings.Contains(e.Message, tc.reason) {
				t.Errorf("%d %s, want 403 with %q", resp.StatusCode, got, tc.reason)
			}
			if len(f.up.Requests()) != 0 || f.src.Calls() != 0 {
				t.Errorf("the upstream or the credential was reached")
			}
			if es := f.audit.Entries(); len(es) != 1 || es[0].Refused == "" {
				t.Errorf("audit %+v", es)
			}
		})
	}
}
