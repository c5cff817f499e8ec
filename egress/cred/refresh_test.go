package cred_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aisan-dev/aisan/egress/cred"
	"github.com/aisan-dev/aisan/egress/egresstest"
)

func TestMain(m *testing.M) {
	if os.Getenv("CRED_TEST_CHILD") != "" {
		os.Exit(child())
	}
	os.Exit(egresstest.RunWithCA(m))
}

// child is another aisan process refreshing the same login (its HTTP
// client trusts the test CA through SSL_CERT_FILE, set by the parent).
func child() int {
	var tok cred.Secret
	var err error
	switch os.Getenv("CRED_TEST_CHILD") {
	case "claude":
		c := &cred.ClaudeOAuth{Dir: os.Getenv("CRED_TEST_DIR"), TokenURL: os.Getenv("CRED_TEST_URL")}
		tok, err = c.Token(context.Background())
	case "codex":
		c := &cred.CodexChatGPT{Home: os.Getenv("CRED_TEST_DIR"), TokenURL: os.Getenv("CRED_TEST_URL")}
		tok, err = c.Token(context.Background())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Print(tok.Reveal())
	return 0
}

func newEndpoint(t *testing.T, first string) (*egresstest.TokenEndpoint, string) {
	e := egresstest.NewTokenEndpoint(first)
	up := egresstest.NewUpstream(t, e)
	return e, up.URL.String() + "/v1/oauth/token"
}

func writeClaude(t *testing.T, dir, access, refresh string, expires time.Time) {
	t.Helper()
	b := fmt.Sprintf(`{"claudeAiOauth":{"accessToken":%q,"refreshToken":%q,"expiresAt":%d,"scopes":["user:inference"],"subscriptionType":"max","rateLimitTier":"default_claude_max_20x"},"mcpOAuth":{"x":{"keep":true}}}`,
		access, refresh, expires.UnixMilli())
	if err := os.WriteFile(filepath.Join(dir, ".credentials.json"), []byte(b), 0o600); err != nil {
		t.Fatal(err)
	}
}

func client() *http.Client { return &http.Client{Transport: egresstest.Transport()} }

func TestClaudeFreshTokenIsNotRefreshed(t *testing.T) {
	dir := t.TempDir()
	e, url := newEndpoint(t, "rt-0")
	writeClaude(t, dir, "access-0", "rt-0", time.Now().Add(time.Hour))
	c := &cred.ClaudeOAuth{Dir: dir, TokenURL: url, HTTP: client()}
	for i := 0; i < 3; i++ {
		tok, err := c.Token(context.Background())
		if err != nil || tok.Reveal() != "access-0" {
			t.Fatalf("%q %v", tok.Reveal(), err)
		}
	}
	// A new login on the host is picked up at once.
	writeClaude(t, dir, "access-new", "rt-0", time.Now().Add(2*time.Hour))
	if tok, _ := c.Token(context.Background()); tok.Reveal() != "access-new" {
		t.Errorf("changed file not re-read: %q", tok.Reveal())
	}
	if plan, _ := c.SubscriptionType(); plan != "max" {
		t.Errorf("plan %q", plan)
	}
	if e.Calls.Load() != 0 {
		t.Error("refreshed a fresh token")
	}
}

func TestClaudeRefreshWritesBackInTheClientsFormat(t *testing.T) {
	dir := t.TempDir()
	e, url := newEndpoint(t, "rt-0")
	writeClaude(t, dir, "access-0", "rt-0", time.Now().Add(time.Minute))
	c := &cred.ClaudeOAuth{Dir: dir, TokenURL: url, HTTP: client()}
	tok, err := c.Token(context.Background())
	if err != nil || tok.Reveal() != "access-1" {
		t.Fatalf("%q %v", tok.Reveal(), err)
	}
	body := e.Bodies()[0]
	if body["grant_type"] != "refresh_token" || body["client_id"] != "9d1c250a-e61b-44d9-88ed-5944d1962f5e" || !strings.Contains(body["scope"].(string), "user:inference") {
		t.Errorf("refresh body %v", body)
	}
	path := filepath.Join(dir, ".credentials.json")
	st, _ := os.Stat(path)
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode())
	}
	raw, _ := os.ReadFile(path)
	if bytes.Contains(raw, []byte("\n")) || !bytes.HasPrefix(raw, []byte(`{"claudeAiOauth":{"accessToken":"access-1","refreshToken":"rt-1","expiresAt":`)) ||
		!bytes.Contains(raw, []byte(`"scopes":["user:inference","user:profile"],"subscriptionType":"max","rateLimitTier":"default_claude_max_20x"},"mcpOAuth":{"x":{"keep":true}}}`)) {
		t.Errorf("written back as %s", raw)
	}
	var v struct{ ClaudeAiOauth struct{ ExpiresAt int64 } }
	json.Unmarshal(raw, &v)
	if d := time.Until(time.UnixMilli(v.ClaudeAiOauth.ExpiresAt)); d < 59*time.Minute || d > time.Hour {
		t.Errorf("expiresAt in %v", d)
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".*tmp"))
	if _, err := os.Stat(filepath.Join(dir, ".oauth_refresh.lock")); err == nil || len(left) > 0 {
		t.Errorf("lock or temporary file left behind: %v", left)
	}
}

func TestClaudeRefreshFailure(t *testing.T) {
	dir := t.TempDir()
	e, url := newEndpoint(t, "rt-0")
	e.Fail = true
	writeClaude(t, dir, "access-0", "rt-0", time.Now().Add(-time.Minute))
	before, _ := os.ReadFile(filepath.Join(dir, ".credentials.json"))
	c := &cred.ClaudeOAuth{Dir: dir, TokenURL: url, HTTP: client()}
	_, err := c.Token(context.Background())
	if err == nil || !strings.Contains(err.Error(), "could not be refreshed") || !strings.Contains(err.Error(), "run `claude` on the host") {
		t.Errorf("error %v", err)
	}
	// What the endpoint answered is for the host's log, not the box.
	if err != nil && (strings.Contains(err.Error(), "refresh token already used") || !strings.Contains(cred.Detail(err), "refresh token already used")) {
		t.Errorf("error %q, detail %q: want the endpoint's answer in the detail only", err, cred.Detail(err))
	}
	if strings.Contains(fmt.Sprint(err), "rt-0") {
		t.Error("the error holds the refresh token")
	}
	after, _ := os.ReadFile(filepath.Join(dir, ".credentials.json"))
	if !bytes.Equal(before, after) {
		t.Error("a failed refresh changed the file")
	}
	// Inside the margin but not yet expired: the old token still serves.
	writeClaude(t, dir, "access-0", "rt-0", time.Now().Add(time.Minute))
	if tok, err := c.Token(context.Background()); err != nil || tok.Reveal() != "access-0" {
		t.Errorf("%q %v", tok.Reveal(), err)
	}
}

func TestClaudeRefusesSymlinkedLogin(t *testing.T) {
	dir := t.TempDir()
	other := t.TempDir()
	writeClaude(t, other, "a", "r", time.Now().Add(time.Hour))
	os.Symlink(filepath.Join(other, ".credentials.json"), filepath.Join(dir, ".credentials.json"))
	c := &cred.ClaudeOAuth{Dir: dir}
	if _, err := c.Token(context.Background()); err == nil {
		t.Error("followed a symlink")
	}
}

// TestClaudeRefreshExactlyOnce: while a host claude holds the CLI's lock
// and refreshes, and several aisan processes and goroutines want a fresh
// token at the same moment, the token endpoint sees one refresh; everyone
// ends up with its result.
func TestClaudeRefreshExactlyOnce(t *testing.T) {
	for _, hostCLI := range []bool{true, false} {
		t.Run(fmt.Sprintf("hostCLI=%v", hostCLI), func(t *testing.T) {
			dir := t.TempDir()
			e, url := newEndpoint(t, "rt-0")
			writeClaude(t, dir, "access-0", "rt-0", time.Now().Add(time.Minute))
			lock := filepath.Join(dir, ".oauth_refresh.lock")
			cliDone := make(chan struct{})
			if hostCLI {
				// The fake host CLI: takes the lock as proper-lockfile does,
				// refreshes after a while, writes the file, releases.
				if err := os.Mkdir(lock, 0o755); err != nil {
					t.Fatal(err)
				}
				go func() {
					defer close(cliDone)
					time.Sleep(700 * time.Millisecond)
					resp, err := client().Post(url, "application/json", strings.NewReader(`{"grant_type":"refresh_token","refresh_token":"rt-0"}`))
					if err != nil {
						t.Error(err)
						return
					}
					var v struct {
						AccessToken  string `json:"access_token"`
						RefreshToken string `json:"refresh_token"`
					}
					json.NewDecoder(resp.Body).Decode(&v)
					resp.Body.Close()
					writeClaude(t, dir, v.AccessToken, v.RefreshToken, time.Now().Add(time.Hour))
					os.Remove(lock)
				}()
			} else {
				close(cliDone)
			}
			var wg sync.WaitGroup
			results := make(chan string, 32)
			// Two aisan processes' worth of goroutines in this process...
			for i := 0; i < 2; i++ {
				c := &cred.ClaudeOAuth{Dir: dir, TokenURL: url, HTTP: client()}
				for j := 0; j < 4; j++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						tok, err := c.Token(context.Background())
						if err != nil {
							t.Error(err)
						}
						results <- tok.Reveal()
					}()
				}
			}
			// ...and three more real processes.
			self, _ := os.Executable()
			for i := 0; i < 3; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					cmd := exec.Command(self, "-test.run=^$")
					cmd.Env = append(os.Environ(), "CRED_TEST_CHILD=claude", "CRED_TEST_DIR="+dir, "CRED_TEST_URL="+url)
					var errb bytes.Buffer
					cmd.Stderr = &errb
					out, err := cmd.Output()
					if err != nil {
						t.Errorf("child: %v: %s", err, errb.String())
					}
					results <- string(out)
				}()
			}
			wg.Wait()
			<-cliDone
			close(results)
			for r := range results {
				if r != "access-1" {
					t.Errorf("a refresher ended with %q, not the one refreshed token", r)
				}
			}
			if n := e.Calls.Load(); n != 1 {
				t.Errorf("the token endpoint saw %d refreshes, want exactly 1", n)
			}
		})
	}
}

// TestStaleLockIsTakenOver: a lock whose holder died is taken over, in
// the shape the CLI leaves (a directory) and in the one an older aisan
// preflight left (a file, which the CLI itself can never clear); either
// way the lock is gone once the refresh is done.
func TestStaleLockIsTakenOver(t *testing.T) {
	for _, shape := range []string{"directory", "file"} {
		t.Run(shape, func(t *testing.T) {
			dir := t.TempDir()
			e, url := newEndpoint(t, "rt-0")
			writeClaude(t, dir, "access-0", "rt-0", time.Now().Add(-time.Minute))
			lock := filepath.Join(dir, ".oauth_refresh.lock")
			if shape == "directory" {
				os.Mkdir(lock, 0o755)
			} else {
				os.WriteFile(lock, nil, 0o600)
			}
			old := time.Now().Add(-2 * time.Minute)
			os.Chtimes(lock, old, old)
			c := &cred.ClaudeOAuth{Dir: dir, TokenURL: url, HTTP: client(), LockWait: 5 * time.Second}
			if tok, err := c.Token(context.Background()); err != nil || tok.Reveal() != "access-1" || e.Calls.Load() != 1 {
				t.Errorf("%q %v calls %d", tok.Reveal(), err, e.Calls.Load())
			}
			if _, err := os.Lstat(lock); err == nil {
				t.Error("the lock is still there after the refresh")
			}
		})
	}
}

// TestFreshFileLockIsWaitedFor: a file-shaped lock younger than the CLI's
// stale time is someone's until then: no refresh goes out meanwhile.
func TestFreshFileLockIsWaitedFor(t *testing.T) {
	dir := t.TempDir()
	e, url := newEndpoint(t, "rt-0")
	writeClaude(t, dir, "access-0", "rt-0", time.Now().Add(-time.Minute))
	os.WriteFile(filepath.Join(dir, ".oauth_refresh.lock"), nil, 0o600)
	c := &cred.ClaudeOAuth{Dir: dir, TokenURL: url, HTTP: client(), LockWait: 300 * time.Millisecond}
	if _, err := c.Token(context.Background()); err == nil || !strings.Contains(err.Error(), "still held by another process") || e.Calls.Load() != 0 {
		t.Errorf("error %v, %d refreshes", err, e.Calls.Load())
	}
}

func TestLiveLockTimesOut(t *testing.T) {
	dir := t.TempDir()
	_, url := newEndpoint(t, "rt-0")
	writeClaude(t, dir, "access-0", "rt-0", time.Now().Add(-time.Minute))
	os.Mkdir(filepath.Join(dir, ".oauth_refresh.lock"), 0o755)
	c := &cred.ClaudeOAuth{Dir: dir, TokenURL: url, HTTP: client(), LockWait: 300 * time.Millisecond}
	if _, err := c.Token(context.Background()); err == nil || !strings.Contains(err.Error(), "still held by another process") {
		t.Errorf("error %v", err)
	}
}

func writeCodex(t *testing.T, dir string, access, refresh string) {
	t.Helper()
	v := map[string]any{"auth_mode": "chatgpt", "OPENAI_API_KEY": nil,
		"tokens":       map[string]string{"id_token": egresstest.JWT(time.Now().Add(time.Hour), "id"), "access_token": access, "refresh_token": refresh, "account_id": "acct-1"},
		"last_refresh": "2026-11-01T00:00:00Z"}
	b, _ := json.MarshalIndent(v, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "auth.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestCodexRefreshExactlyOnce(t *testing.T) {
	dir := t.TempDir()
	e, url := newEndpoint(t, "rt-0")
	e.JWT = true
	writeCodex(t, dir, egresstest.JWT(time.Now().Add(time.Minute), "old"), "rt-0")
	var wg sync.WaitGroup
	results := make(chan string, 16)
	c := &cred.CodexChatGPT{Home: dir, TokenURL: url, HTTP: client()}
	for j := 0; j < 4; j++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := c.Login(context.Background())
			if err != nil || l.AccountID != "acct-1" {
				t.Error(err, l.AccountID)
			}
			results <- l.Access.Reveal()
		}()
	}
	self, _ := os.Executable()
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(self, "-test.run=^$")
			cmd.Env = append(os.Environ(), "CRED_TEST_CHILD=codex", "CRED_TEST_DIR="+dir, "CRED_TEST_URL="+url)
			out, err := cmd.Output()
			if err != nil {
				t.Errorf("child: %v", err)
			}
			results <- string(out)
		}()
	}
	wg.Wait()
	close(results)
	var first string
	for r := range results {
		if first == "" {
			first = r
		}
		if r != first || !strings.Contains(r, ".") {
			t.Errorf("refreshers disagree: %q vs %q", r, first)
		}
	}
	if n := e.Calls.Load(); n != 1 {
		t.Errorf("%d refreshes, want 1", n)
	}
	body := e.Bodies()[0]
	if body["client_id"] != "app_EMoamEEZ73f0CkXaXp7hrann" || body["refresh_reason"] != "proactive_expiry" || body["scope"] != nil {
		t.Errorf("refresh body %v", body)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "auth.json"))
	if !bytes.HasPrefix(raw, []byte("{\n  \"OPENAI_API_KEY\": null,\n  \"auth_mode\": \"chatgpt\",")) || !bytes.Contains(raw, []byte(`"refresh_token": "rt-1"`)) || bytes.Contains(raw, []byte("2026-11-01")) {
		t.Errorf("written back as %s", raw)
	}
}

func TestCodexLoginShapes(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "auth.json"), []byte(`{"auth_mode":"apikey","OPENAI_API_KEY":"sk-x","tokens":null}`), 0o600)
	c := &cred.CodexChatGPT{Home: dir}
	if _, err := c.Login(context.Background()); err == nil || !strings.Contains(err.Error(), "not a ChatGPT login") {
		t.Errorf("API-key login: %v", err)
	}
	if k, err := (cred.CodexAPIKey{Home: dir}).Token(context.Background()); err != nil || k.Reveal() != "sk-x" {
		t.Errorf("API key: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "auth.json"), []byte(`{"auth_mode":"chatgpt","tokens":{"access_token":"not-a-jwt","account_id":"a"}}`), 0o600)
	if _, err := c.Login(context.Background()); err == nil || !strings.Contains(err.Error(), "not a JWT") {
		t.Errorf("bad JWT: %v", err)
	}
	if _, err := cred.JWTExpiry(egresstest.JWT(time.Unix(1700000000, 0), "x")); err != nil {
		t.Error(err)
	}
}

func TestOpencodeKey(t *testing.T) {
	p := filepath.Join(t.TempDir(), "auth.json")
	os.WriteFile(p, []byte(`{"zai":{"type":"api","key":"k1"},"openai":{"type":"oauth","refresh":"r","access":"a","expires":1}}`), 0o600)
	if k, err := (cred.OpencodeKey{Path: p, Provider: "zai"}).Token(context.Background()); err != nil || k.Reveal() != "k1" {
		t.Errorf("%v", err)
	}
	_, err := (cred.OpencodeKey{Path: p, Provider: "openai"}).Token(context.Background())
	if err == nil || !strings.Contains(err.Error(), "OAuth login, which strict mode cannot use") || !strings.Contains(err.Error(), "API key") {
		t.Errorf("oauth: %v", err)
	}
	if _, err := (cred.OpencodeKey{Path: p, Provider: "none"}).Token(context.Background()); err == nil || !strings.Contains(err.Error(), "no entry") {
		t.Errorf("missing: %v", err)
	}
}

func TestKeyFromEnv(t *testing.T) {
	file := filepath.Join(t.TempDir(), "key")
	os.WriteFile(file, []byte("from-file\n"), 0o600)
	for _, tc := range []struct {
		env        map[string]string
		from, want string
	}{
		{map[string]string{"C": "echo from-command", "F": file, "K": "from-env"}, "C", "from-command"},
		{map[string]string{"F": file, "K": "from-env"}, "F", "from-file"},
		{map[string]string{"K": "from-env"}, "K", "from-env"},
	} {
		src, from, err := cred.KeyFromEnv(func(k string) string { return tc.env[k] }, "C", "F", "K", nil)
		if err != nil || from != tc.from {
			t.Fatalf("%v %q", err, from)
		}
		if tok, err := src.Token(context.Background()); err != nil || tok.Reveal() != tc.want {
			t.Errorf("%s: %q %v", tc.from, tok.Reveal(), err)
		}
	}
	if _, _, err := cred.KeyFromEnv(func(string) string { return "" }, "C", "F", "K", nil); err == nil || !strings.Contains(err.Error(), "set C") {
		t.Errorf("none: %v", err)
	}
	if _, _, err := cred.KeyFromEnv(func(k string) string { return map[string]string{"F": "rel/key"}[k] }, "C", "F", "K", nil); err == nil {
		t.Error("relative key file accepted")
	}
}

func TestRefreshOutlivesTheRequest(t *testing.T) {
	dir := t.TempDir()
	e, url := newEndpoint(t, "rt-0")
	writeClaude(t, dir, "access-0", "rt-0", time.Now().Add(-time.Minute))
	c := &cred.ClaudeOAuth{Dir: dir, TokenURL: url, HTTP: client()}
	ctx, cancel := context.WithCancel(context.Background())
	// The box's client hangs up after the refresh token was sent.
	e.OnCall = func() { cancel(); time.Sleep(100 * time.Millisecond) }
	c.Token(ctx)
	raw, _ := os.ReadFile(filepath.Join(dir, ".credentials.json"))
	if e.Calls.Load() != 1 || !bytes.Contains(raw, []byte(`"refreshToken":"rt-1"`)) {
		t.Errorf("the refresh was spent (%d calls) but its result not saved: %s", e.Calls.Load(), raw)
	}
}

// TestTokenEndpointRedirectIsNotFollowed: a token endpoint that answers a
// refresh with a redirect gets the refresh token once, its target never;
// the refresh fails saying so, and the login file is left as it was.
func TestTokenEndpointRedirectIsNotFollowed(t *testing.T) {
	elsewhere := egresstest.NewUpstream(t, egresstest.JSON(200, `{"access_token":"stolen","expires_in":3600}`))
	for _, status := range []int{302, 307, 308} {
		dir := t.TempDir()
		ep := egresstest.NewUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, elsewhere.URL.String()+"/v1/oauth/token", status)
		}))
		writeClaude(t, dir, "access-0", "rt-0", time.Now().Add(-time.Minute))
		before, _ := os.ReadFile(filepath.Join(dir, ".credentials.json"))
		c := &cred.ClaudeOAuth{Dir: dir, TokenURL: ep.URL.String() + "/v1/oauth/token", HTTP: client(), LockWait: time.Second}
		_, err := c.Token(context.Background())
		if err == nil || !strings.Contains(cred.Detail(err), "a redirect to "+elsewhere.URL.Host+", which aisan does not follow") {
			t.Errorf("%d: %v (%s)", status, err, cred.Detail(err))
		}
		if n := len(ep.Requests()); n != 1 {
			t.Errorf("%d: the endpoint saw %d requests", status, n)
		}
		after, _ := os.ReadFile(filepath.Join(dir, ".credentials.json"))
		if string(before) != string(after) {
			t.Errorf("%d: the login changed", status)
		}
	}
	if n := len(elsewhere.Requests()); n != 0 {
		t.Errorf("the redirect target saw %d requests", n)
	}
}
