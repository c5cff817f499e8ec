package backend_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aisan-dev/aisan/egress"
	"github.com/aisan-dev/aisan/egress/backend"
	"github.com/aisan-dev/aisan/egress/egresstest"
)

// rotatingLogin is a stand-in token endpoint and model upstream sharing
// one notion of the valid access token: the upstream accepts only the
// newest one the endpoint issued (answering 401 to any other, as a
// revoked token gets).
type rotatingLogin struct {
	*egresstest.TokenEndpoint
	// refuseAll makes the upstream refuse even the newest token.
	refuseAll bool

	mu     sync.Mutex
	seen   []string // the bearer tokens the upstream saw, in order
	bodyOK []bool   // whether each request carried the whole body
}

func newLogin(jwt, fail, refuseAll bool) *rotatingLogin {
	l := &rotatingLogin{TokenEndpoint: egresstest.NewTokenEndpoint("rt-0"), refuseAll: refuseAll}
	l.JWT, l.Fail = jwt, fail
	return l
}

const wantBody = `{"model":"m","messages":[{"role":"user","content":"hello"}],"max_tokens":10}`

func (l *rotatingLogin) api(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	l.mu.Lock()
	l.seen = append(l.seen, tok)
	l.bodyOK = append(l.bodyOK, string(body) == wantBody || strings.Contains(string(body), `"input"`))
	ok := tok == l.Access() && !l.refuseAll
	l.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if !ok {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"type":"error","error":{"type":"authentication_error","message":"OAuth token has been revoked"}}`)
		return
	}
	fmt.Fprint(w, `{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"hi"}]}`)
}

// refreshFixture is a backend served on a socket whose host login (still
// far from its expiry) the upstream no longer accepts.
type refreshFixture struct {
	login  *rotatingLogin
	client *http.Client
	audit  *egresstest.Collect
	send   func() *http.Response
}

func newRefreshFixture(t *testing.T, name string, login *rotatingLogin) *refreshFixture {
	t.Helper()
	home := t.TempDir()
	mux := http.NewServeMux()
	mux.Handle("/oauth/token", login.TokenEndpoint)
	mux.HandleFunc("/", login.api)
	up := egresstest.NewUpstream(t, mux)
	vars := map[string]string{}
	var target, body string
	switch name {
	case "anthropic":
		dir := filepath.Join(home, ".claude")
		os.MkdirAll(dir, 0o700)
		os.WriteFile(filepath.Join(dir, ".credentials.json"), []byte(fmt.Sprintf(`{"claudeAiOauth":{"accessToken":"access-revoked","refreshToken":%q,"expiresAt":%d,"subscriptionType":"max"}}`,
			"rt-0", time.Now().Add(5*time.Hour).UnixMilli())), 0o600)
		vars["AISAN_ANTHROPIC_UPSTREAM"] = up.URL.String()
		vars["AISAN_ANTHROPIC_TOKEN_URL"] = up.URL.String() + "/oauth/token"
		target, body = "/v1/messages?beta=true", wantBody
	case "codex":
		dir := filepath.Join(home, ".codex")
		os.MkdirAll(dir, 0o700)
		auth, _ := json.Marshal(map[string]any{"auth_mode": "chatgpt", "tokens": map[string]string{
			"id_token": egresstest.JWT(time.Now().Add(5*time.Hour), "id"), "access_token": egresstest.JWT(time.Now().Add(5*time.Hour), "revoked"),
			"refresh_token": "rt-0", "account_id": "acct-1"}})
		os.WriteFile(filepath.Join(dir, "auth.json"), auth, 0o600)
		vars["AISAN_CODEX_UPSTREAM"] = up.URL.String()
		vars["AISAN_CODEX_TOKEN_URL"] = up.URL.String() + "/oauth/token"
		target, body = "/responses", `{"model":"m","input":[],"stream":true,"store":false}`
	}
	s, err := backend.New(name, backend.Options{Home: home, Getenv: func(k string) string { return vars[k] }, Transport: egresstest.Transport()})
	if err != nil {
		t.Fatal(err)
	}
	f := &refreshFixture{login: login, audit: &egresstest.Collect{}}
	f.client = egresstest.Serve(t, s.Backend, egress.Options{Transport: egresstest.Transport(), Audit: f.audit})
	f.send = func() *http.Response {
		req, _ := http.NewRequest(http.MethodPost, "http://box"+target, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := f.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	return f
}

// TestUnauthorizedForcesOneRefresh: for the backends whose host login
// refreshes, an upstream 401 to a token that has not expired yet makes the
// proxy refresh it once and retry once with the same body; the client
// sees only the answer to the retry. Concurrent requests that all saw the
// old token refused share that one refresh (and one that comes after it
// is sent with the new token).
func TestUnauthorizedForcesOneRefresh(t *testing.T) {
	for _, name := range []string{"anthropic", "codex"} {
		t.Run(name, func(t *testing.T) {
			login := newLogin(name == "codex", false, false)
			f := newRefreshFixture(t, name, login)
			var wg sync.WaitGroup
			statuses := make(chan int, 6)
			for range 6 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					resp := f.send()
					io.Copy(io.Discard, resp.Body)
					statuses <- resp.StatusCode
				}()
			}
			wg.Wait()
			close(statuses)
			for s := range statuses {
				if s != http.StatusOK {
					t.Errorf("a request ended with %d, want the retry's 200", s)
				}
			}
			if n := login.Calls.Load(); n != 1 {
				t.Errorf("the token endpoint saw %d refreshes, want exactly 1", n)
			}
			login.mu.Lock()
			defer login.mu.Unlock()
			// Each request the upstream refused was retried once; one
			// that reached the proxy after the refresh went out with the
			// new token at once.
			refused := 0
			for _, tok := range login.seen {
				if tok != login.Access() {
					refused++
				}
			}
			if refused == 0 || len(login.seen) != 6+refused {
				t.Errorf("the upstream saw %d requests, %d of them with the old token; want each of those retried once and the rest sent with the new token: %q", len(login.seen), refused, login.seen)
			}
			for i, ok := range login.bodyOK {
				if !ok {
					t.Errorf("request %d reached the upstream without its whole body", i)
				}
			}
			if name == "codex" && login.Bodies()[0]["refresh_reason"] != "unauthorized" {
				t.Errorf("the forced refresh said %v", login.Bodies()[0]["refresh_reason"])
			}
		})
	}
}

// TestUnauthorizedNeverLoops: an upstream that refuses even the refreshed
// token gets one refresh and one retry per request, and after that no
// refresh at all for a while; its 401 goes back to the client.
func TestUnauthorizedNeverLoops(t *testing.T) {
	login := newLogin(false, false, true)
	f := newRefreshFixture(t, "anthropic", login)
	for i := range 3 {
		resp := f.send()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(b), "revoked") {
			t.Errorf("request %d: %d %s; want the upstream's 401", i, resp.StatusCode, b)
		}
	}
	if n := login.Calls.Load(); n != 1 {
		t.Errorf("%d refreshes for an upstream that refuses every token, want 1", n)
	}
	login.mu.Lock()
	defer login.mu.Unlock()
	if len(login.seen) != 4 {
		t.Errorf("the upstream saw %d requests, want 2 for the first (one retry) and 1 each after: %q", len(login.seen), login.seen)
	}
}

// TestUnauthorizedRefreshFailure: a refresh that fails after a 401 is a
// refusal in the API's shape that says so, not a bare 401, and it is in
// the audit line.
func TestUnauthorizedRefreshFailure(t *testing.T) {
	login := newLogin(false, true, false)
	f := newRefreshFixture(t, "anthropic", login)
	resp := f.send()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusOK || !strings.Contains(string(b), "refreshing it failed") ||
		!strings.Contains(string(b), "claude") || resp.Header.Get("X-Should-Retry") != "false" {
		t.Errorf("got %d %s (x-should-retry %q); want a refusal naming the failed refresh", resp.StatusCode, b, resp.Header.Get("X-Should-Retry"))
	}
	if e := f.audit.Entries(); len(e) != 1 || !strings.Contains(e[0].Refused, "refreshing it failed") {
		t.Errorf("audit %+v", e)
	}
}
