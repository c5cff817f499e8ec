package tests

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// tlsStandIn is the stand-in model API of the e2e tests served over
// HTTPS with a test CA, recording the credential headers each request
// carried.
func tlsStandIn(t *testing.T, ca testCA, commands []string, api func(s *standIn, w http.ResponseWriter, r *http.Request, body []byte)) (*standIn, func() []string) {
	s := &standIn{t: t, commands: commands, results: make([]*string, len(commands))}
	var mu sync.Mutex
	var creds []string
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		captureBody(r, body)
		mu.Lock()
		creds = append(creds, fmt.Sprintf("%s %s authorization=%q x-api-key=%q", r.Method, r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("X-Api-Key")))
		mu.Unlock()
		s.mu.Lock()
		s.seen = append(s.seen, r.Method+" "+r.URL.Path)
		s.mu.Unlock()
		api(s, w, r, body)
	}))
	s.srv.TLS = &tls.Config{Certificates: []tls.Certificate{ca.server}}
	s.srv.StartTLS()
	t.Cleanup(s.srv.Close)
	return s, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), creds...)
	}
}

// TestStrictClaudeThroughEgress: the real claude in a strict box, with
// nothing but the box's own placeholder credential, runs a turn with a
// tool call against a loopback HTTPS stand-in for the Anthropic API,
// reached only through the host-side egress proxy. The upstream saw the
// host's subscription token and never the placeholder; inside the box the
// token is nowhere (files, environment); the requests are in the egress
// log. Then the same with --net, where the box reaches the proxy on the
// host's loopback with its per-box token, which is on no command line.
func TestStrictClaudeThroughEgress(t *testing.T) {
	bin := nodeBin(t, "claude")
	repo, home, _ := strictRepo(t)
	ca := newTestCA(t, t.TempDir(), "127.0.0.1")
	const hostToken = "sk-ant-oat01-host-real-subscription-token"
	os.MkdirAll(filepath.Join(home, ".claude"), 0o700)
	login := fmt.Sprintf(`{"claudeAiOauth":{"accessToken":%q,"refreshToken":"sk-ant-ort01-host-refresh","expiresAt":%d,"scopes":["user:inference"],"subscriptionType":"max"}}`,
		hostToken, time.Now().Add(24*time.Hour).UnixMilli())
	os.WriteFile(filepath.Join(home, ".claude", ".credentials.json"), []byte(login), 0o600)

	probe := `echo from-the-box; ls -a "$CLAUDE_CONFIG_DIR" "$HOME"; grep -rl ` + hostToken[len(hostToken)-12:] + ` "$HOME" /proc/self/environ /proc/1/environ 2>/dev/null; env | grep -c ` + hostToken[len(hostToken)-12:] + `; true`
	// With --net the proxy is on the host's loopback: a request without
	// the per-box token, with a wrong one, or with two credential headers
	// is refused; the token is on no command line.
	netProbe := probe + `; tok=$(cat /proc/[0-9]*/environ 2>/dev/null | tr '\0' '\n' | sed -n 's/^CLAUDE_CODE_OAUTH_TOKEN=//p' | head -n1); u="$ANTHROPIC_BASE_URL/v1/messages"; c() { curl -s -o /dev/null -w '%{http_code}' "$@" -d '{}' "$u"; }; echo "status:$(c -H "Authorization: Bearer $tok")"; echo "status:$(c -H "Authorization: Bearer wrong")"; echo "status:$(c -H "Authorization: Bearer $tok" -H "x-api-key: $tok")"; echo "nohdr:$(c)"; printf %s "$tok" > /tmp/tok; echo "cmdlines:$(cat /proc/[0-9]*/cmdline | tr '\0' '\n' | grep -cF -f /tmp/tok)"; echo "toklen:${#tok}"`
	for _, net := range []bool{false, true} {
		t.Run(fmt.Sprintf("net=%v", net), func(t *testing.T) {
			cmd := probe
			if net {
				cmd = netProbe
			}
			s, creds := tlsStandIn(t, ca, []string{cmd}, anthropicAPI)
			env := append(jailEnv(home, bin), "AISAN_ANTHROPIC_UPSTREAM="+s.srv.URL, "SSL_CERT_FILE="+ca.pemPath, "AISAN_NO_SCOPE=1")
			args := []string{"claude", "--strict", "--skip-permissions"}
			if net {
				args = append(args, "--net")
			}
			args = append(args, "--", "-p", "Run the shell commands you are given.", "--output-format", "json")
			r := runJailed(t, repo, env, args...)
			if err := claudeDone(r.stdout); err != nil {
				t.Fatalf("claude in the strict box: %v\nexit %d\nstdout %s\nstderr %s\nrequests: %s", err, r.code, r.stdout, r.stderr, s.requests())
			}
			res, ok := s.result()
			if !ok || !strings.Contains(res, "from-the-box") {
				t.Fatalf("the tool call did not run in the box: %q", res)
			}
			if strings.Contains(res, ".credentials.json") || strings.Contains(res, "/proc/") || !strings.Contains(res, "\n0") {
				t.Errorf("the host's token is visible in the box:\n%s", res)
			}
			if net {
				// The box's own token alone passes the token check (the
				// policy then judges the body); a wrong one, or the right
				// one in two headers, is refused.
				lines := strings.Split(res, "\n")
				var statuses []string
				for _, l := range lines {
					if v, ok := strings.CutPrefix(l, "status:"); ok {
						statuses = append(statuses, v)
					}
				}
				if len(statuses) != 3 || statuses[1] != "401" || statuses[2] != "401" || statuses[0] == "401" || strings.Contains(res, "toklen:0") {
					t.Errorf("token checks from the box: %v; want the lone right token past the check and 401 for a wrong one and for two headers", statuses)
				}
				if !strings.Contains(res, "nohdr:401") {
					t.Errorf("a request without the per-box token was not refused with 401:\n%s", res)
				}
				if !strings.Contains(res, "cmdlines:0") {
					t.Errorf("the per-box token is on a command line in the box:\n%s", res)
				}
			}
			seen := creds()
			if len(seen) == 0 {
				t.Fatal("nothing reached the upstream")
			}
			for _, c := range seen {
				if !strings.Contains(c, `authorization="Bearer `+hostToken+`"`) || strings.Contains(c, "placeholder") || strings.Contains(c, "aisan-box-") {
					t.Errorf("the upstream got %s; want the host's token and nothing of the box's", c)
				}
			}
			var slotName string
			for n, e := range slotList(t, env) {
				if e.Kind == "claude" {
					slotName = n
					if e.Mode != "strict" {
						t.Errorf("list --json shows mode %q for the strict box", e.Mode)
					}
				}
			}
			if l := aisan(t, env, "", "list"); !strings.Contains(l.stdout, "claude/strict") {
				t.Errorf("aisan list does not show the mode:\n%s", l.stdout)
			}
			if logs := aisan(t, env, "", "logs", "--egress", slotName); !strings.Contains(logs.stdout, "/v1/messages") || strings.Contains(logs.stdout, hostToken) {
				t.Errorf("egress log: %q", logs.stdout)
			}
		})
	}
}

// TestPreflightStrict: 'aisan preflight --strict' checks the model
// backends the host has: a valid Claude login (named, its content never
// printed) with a usable refresh lock and an upstream that answers (a
// loopback HTTPS stand-in here) is ok; a login that does not parse fails
// naming the file; a backend without a login is reported as not set up.
func TestPreflightStrict(t *testing.T) {
	requireJail(t)
	home, env := testEnv(t)
	ca := newTestCA(t, t.TempDir(), "127.0.0.1")
	s, _ := tlsStandIn(t, ca, nil, anthropicAPI)
	env = append(env, "AISAN_ANTHROPIC_UPSTREAM="+s.srv.URL, "SSL_CERT_FILE="+ca.pemPath, "CLAUDE_CONFIG_DIR=", "CODEX_HOME=")
	const secret = "sk-ant-oat01-preflight-secret-value"
	creds := filepath.Join(home, ".claude", ".credentials.json")
	os.MkdirAll(filepath.Dir(creds), 0o700)
	os.WriteFile(creds, []byte(fmt.Sprintf(`{"claudeAiOauth":{"accessToken":%q,"refreshToken":"r","expiresAt":%d,"subscriptionType":"max"}}`,
		secret, time.Now().Add(2*time.Hour).UnixMilli())), 0o600)
	type finding struct{ Status, Name, Detail, Fix string }
	run := func() map[string]finding {
		r := aisan(t, env, "", "preflight", "--strict", "--json")
		if strings.Contains(r.stdout+r.stderr, secret[len(secret)-10:]) {
			t.Fatalf("preflight printed the credential")
		}
		var out struct{ Findings []finding }
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
			t.Fatalf("preflight --strict --json: %v\n%s\n%s", err, r.stdout, r.stderr)
		}
		m := map[string]finding{}
		for _, f := range out.Findings {
			m[f.Name] = f
		}
		return m
	}
	m := run()
	if f := m["anthropic login"]; f.Status != "ok" || !strings.Contains(f.Detail, ".credentials.json") {
		t.Errorf("anthropic login: %+v", f)
	}
	if f := m["anthropic upstream"]; f.Status != "ok" || !strings.Contains(f.Detail, "answers") {
		t.Errorf("anthropic upstream: %+v", f)
	}
	if f := m["codex login"]; f.Status != "ok" || !strings.Contains(f.Detail, "not set up") {
		t.Errorf("codex login: %+v", f)
	}
	os.WriteFile(creds, []byte(`{"claudeAiOauth": {`+secret), 0o600)
	m = run()
	if f := m["anthropic login"]; !strings.EqualFold(f.Status, "fail") || !strings.Contains(f.Detail, ".credentials.json") || f.Fix == "" {
		t.Errorf("a broken login: %+v; want FAIL naming the file, with a fix", f)
	}
}

// TestStrictCodexThroughEgress: the real codex in a strict box, with the
// host's OpenAI API key (never in the box), runs a turn with a tool call
// against a loopback HTTPS stand-in for the Responses API, through the
// egress proxy: the upstream saw the host's key and nothing of the box's.
// With --net the proxy listens on the host's loopback and codex's provider
// option names that address; the per-box token is on no command line.
func TestStrictCodexThroughEgress(t *testing.T) {
	bin := nodeBin(t, "codex")
	ca := newTestCA(t, t.TempDir(), "127.0.0.1")
	const hostKey = "sk-host-openai-key-0123456789"
	for _, net := range []bool{false, true} {
		t.Run(fmt.Sprintf("net=%v", net), func(t *testing.T) {
			repo, home, _ := strictRepo(t)
			// The user's model choice, which the strict box takes from the
			// host's config (its providers and credentials it does not).
			os.MkdirAll(filepath.Join(home, ".codex"), 0o700)
			os.WriteFile(filepath.Join(home, ".codex", "config.toml"), []byte("model = \"gpt-5-codex\"\n"), 0o600)
			var mu sync.Mutex
			var tools []string
			api := func(s *standIn, w http.ResponseWriter, r *http.Request, body []byte) {
				var req struct {
					Tools []map[string]any `json:"tools"`
				}
				json.Unmarshal(body, &req)
				mu.Lock()
				for _, tl := range req.Tools {
					tools = append(tools, fmt.Sprint(tl["type"], ":", tl["name"]))
				}
				mu.Unlock()
				responsesAPI(s, w, r, body)
			}
			probe := `echo from-the-box; env | grep -c ` + hostKey[len(hostKey)-10:] + `; true`
			if net {
				// The token is read from the client's environment; the
				// pattern file keeps it off this command's own line.
				probe += `; tok=$(cat /proc/[0-9]*/environ 2>/dev/null | tr '\0' '\n' | sed -n 's/^AISAN_CODEX_API_KEY=//p' | head -n1); printf %s "$tok" > /tmp/tok; echo "toklen:${#tok}"; echo "cmdlines:$(cat /proc/[0-9]*/cmdline | tr '\0' '\n' | grep -cF -f /tmp/tok)"`
			}
			s, creds := tlsStandIn(t, ca, []string{probe}, api)
			env := append(jailEnv(home, bin), "OPENAI_API_KEY="+hostKey, "AISAN_OPENAI_UPSTREAM="+s.srv.URL+"/v1",
				"SSL_CERT_FILE="+ca.pemPath, "AISAN_NO_SCOPE=1")
			args := []string{"codex", "--strict", "--skip-permissions"}
			if net {
				args = append(args, "--net")
			}
			args = append(args, "--", "exec", "--skip-git-repo-check", "--json", "Run the shell commands you are given.")
			r := runJailed(t, repo, env, args...)
			if !strings.Contains(r.stdout, `"type":"turn.completed"`) {
				t.Fatalf("codex in the strict box: exit %d\nstdout %s\nstderr %s\nrequests %s", r.code, r.stdout, r.stderr, s.requests())
			}
			res, ok := s.result()
			if !ok || !strings.Contains(res, "from-the-box") || !strings.Contains(res, "\n0") {
				mu.Lock()
				t.Fatalf("the tool call in the box: %q (requests %s, tools %v)\nstdout %s", res, s.requests(), tools, r.stdout)
			}
			if net && (!strings.Contains(res, "cmdlines:0") || strings.Contains(res, "toklen:0")) {
				t.Errorf("the per-box token is missing or on a command line in the box:\n%s", res)
			}
			for _, c := range creds() {
				if !strings.Contains(c, `authorization="Bearer `+hostKey+`"`) || strings.Contains(c, "placeholder") || strings.Contains(c, "aisan-box-") {
					t.Errorf("the upstream got %s; want the host's key only", c)
				}
			}
		})
	}
}

// TestStrictOpencodeThroughEgress: the real opencode in a strict box, with
// the host's API key from its auth.json (never in the box), runs a turn
// with a tool call against a loopback HTTPS stand-in for an
// OpenAI-compatible provider, through the egress proxy. The box knows the
// provider and the user's model only from what aisan takes of the host's
// opencode config: a provider declared there (its options, which may hold
// secrets, left behind), and a provider of opencode's built-in catalog.
func TestStrictOpencodeThroughEgress(t *testing.T) {
	bin := nodeBin(t, "opencode")
	ca := newTestCA(t, t.TempDir(), "127.0.0.1")
	const hostKey = "sk-host-opencode-key-0123456789"
	const configSecret = "host-config-header-secret-42"
	for _, tc := range []struct {
		name, provider, model string
		// declare writes the provider into the host's config; otherwise
		// its upstream comes from the override.
		declare bool
	}{
		{name: "declared", provider: "standin", model: "stand-in-large", declare: true},
		{name: "catalog", provider: "zai-coding-plan", model: "glm-5.3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo, home, _ := strictRepo(t)
			var mu sync.Mutex
			var models []string
			api := func(s *standIn, w http.ResponseWriter, r *http.Request, body []byte) {
				var req struct {
					Model string `json:"model"`
				}
				json.Unmarshal(body, &req)
				mu.Lock()
				models = append(models, req.Model)
				mu.Unlock()
				chatAPI(s, w, r, body)
			}
			// The patterns are split in the command, which opencode keeps
			// in its session database, so only the values themselves match.
			pats := `-e '` + hostKey[len(hostKey)-10:len(hostKey)-5] + `''` + hostKey[len(hostKey)-5:] + `' -e '` + configSecret[:10] + `''` + configSecret[10:] + `'`
			probe := `echo from-the-box; env | grep -c ` + pats + `; grep -rls ` + pats + ` "$HOME" "$XDG_DATA_HOME" /proc/1/environ; true`
			s, creds := tlsStandIn(t, ca, []string{probe}, api)
			cfg := map[string]any{"model": tc.provider + "/" + tc.model}
			env := append(jailEnv(home, bin), "SSL_CERT_FILE="+ca.pemPath, "AISAN_NO_SCOPE=1")
			if tc.declare {
				cfg["provider"] = map[string]any{tc.provider: map[string]any{
					"npm": "@ai-sdk/openai-compatible", "name": "Stand-in",
					"options": map[string]any{"baseURL": s.srv.URL + "/v1", "headers": map[string]string{"X-Host-Secret": configSecret}},
					"models":  map[string]any{"stand-in-small": map[string]any{"name": "small"}, tc.model: map[string]any{"name": "large", "tool_call": true}},
				}}
			} else {
				env = append(env, "AISAN_OPENCODE_UPSTREAM_ZAI_CODING_PLAN="+s.srv.URL+"/v1")
			}
			data, _ := json.Marshal(cfg)
			os.MkdirAll(filepath.Join(home, ".config", "opencode"), 0o700)
			os.WriteFile(filepath.Join(home, ".config", "opencode", "opencode.json"), data, 0o600)
			os.MkdirAll(filepath.Join(home, ".local", "share", "opencode"), 0o700)
			auth := fmt.Sprintf(`{%q:{"type":"api","key":%q},"other-oauth":{"type":"oauth","refresh":"r","access":"a","expires":0}}`, tc.provider, hostKey)
			os.WriteFile(filepath.Join(home, ".local", "share", "opencode", "auth.json"), []byte(auth), 0o600)

			r := runJailed(t, repo, env, "opencode", "--strict", "--", "run", "--format", "json", "Run the shell commands you are given.")
			if !strings.Contains(r.stdout, `"text":"Done."`) {
				t.Fatalf("opencode in the strict box: exit %d\nstdout %s\nstderr %s\nrequests %s", r.code, r.stdout, r.stderr, s.requests())
			}
			res, ok := s.result()
			if !ok || !strings.Contains(res, "from-the-box") {
				t.Fatalf("the tool call did not run in the box: %q", res)
			}
			if strings.TrimSpace(strings.TrimPrefix(res, "from-the-box")) != "0" {
				t.Errorf("the host's key or its config's secret is visible in the box:\n%s", res)
			}
			mu.Lock()
			for _, m := range models {
				if m != tc.model {
					t.Errorf("the box asked for model %q; the host's config chose %q", m, tc.model)
				}
			}
			mu.Unlock()
			seen := creds()
			if len(seen) == 0 {
				t.Fatal("nothing reached the upstream")
			}
			for _, c := range seen {
				if !strings.Contains(c, `authorization="Bearer `+hostKey+`"`) || strings.Contains(c, "placeholder") {
					t.Errorf("the upstream got %s; want the host's key only", c)
				}
			}
		})
	}
}

// TestStrictRefreshOnceAcrossBoxes: three strict boxes (three aisan
// processes, each serving its own egress proxy) send a model call at the
// same moment while the host's Claude login is about to expire; the token
// endpoint stand-in sees exactly one refresh, whether the boxes race each
// other for it or a fake host CLI holds the CLI's lock and refreshes
// first, and every box's call goes out with the one refreshed token.
func TestStrictRefreshOnceAcrossBoxes(t *testing.T) {
	requireJail(t)
	ca := newTestCA(t, t.TempDir(), "127.0.0.1")
	for _, hostCLI := range []bool{false, true} {
		t.Run(fmt.Sprintf("hostCLI=%v", hostCLI), func(t *testing.T) {
			home, env := testEnv(t)
			var mu sync.Mutex
			refreshToken, access, gen := "rt-0", "", 0
			var refreshes atomic.Int64
			var seen []string
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				mu.Lock()
				defer mu.Unlock()
				w.Header().Set("Content-Type", "application/json")
				if r.URL.Path == "/v1/oauth/token" {
					refreshes.Add(1)
					var req struct {
						RefreshToken string `json:"refresh_token"`
					}
					json.Unmarshal(body, &req)
					if req.RefreshToken != refreshToken {
						w.WriteHeader(400)
						fmt.Fprint(w, `{"error":"invalid_grant"}`)
						return
					}
					gen++
					refreshToken, access = fmt.Sprintf("rt-%d", gen), fmt.Sprintf("sk-ant-oat01-refreshed-%d", gen)
					json.NewEncoder(w).Encode(map[string]any{"access_token": access, "refresh_token": refreshToken, "expires_in": 3600})
					return
				}
				tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
				seen = append(seen, tok)
				if tok != access {
					w.WriteHeader(401)
					fmt.Fprint(w, `{"type":"error","error":{"type":"authentication_error","message":"expired"}}`)
					return
				}
				fmt.Fprint(w, `{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"ok"}]}`)
			}))
			srv.TLS = &tls.Config{Certificates: []tls.Certificate{ca.server}}
			srv.StartTLS()
			t.Cleanup(srv.Close)
			claudeDir := filepath.Join(home, ".claude")
			os.MkdirAll(claudeDir, 0o700)
			writeLogin := func(access, refresh string, expires time.Time) {
				login := fmt.Sprintf(`{"claudeAiOauth":{"accessToken":%q,"refreshToken":%q,"expiresAt":%d,"scopes":["user:inference"],"subscriptionType":"max"}}`, access, refresh, expires.UnixMilli())
				os.WriteFile(filepath.Join(claudeDir, ".credentials.json"), []byte(login), 0o600)
			}
			// Inside the refresh margin: the next request refreshes it.
			writeLogin("sk-ant-oat01-expiring", "rt-0", time.Now().Add(time.Minute))
			env = append(env, "AISAN_ANTHROPIC_UPSTREAM="+srv.URL, "AISAN_ANTHROPIC_TOKEN_URL="+srv.URL+"/v1/oauth/token",
				"SSL_CERT_FILE="+ca.pemPath, "AISAN_NO_SCOPE=1")
			lock := filepath.Join(claudeDir, ".oauth_refresh.lock")
			if hostCLI {
				// The fake host CLI holds the lock as proper-lockfile does.
				if err := os.Mkdir(lock, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			// Each box waits for the others, then sends one call.
			const client = `touch ready; while [ ! -e go ]; do sleep 0.02; done; curl -s -w '\nstatus:%{http_code}\n' -H 'content-type: application/json' -H 'anthropic-version: 2023-06-01' -d '{"model":"claude-sonnet-5-5","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}' "$AISAN_EGRESS_ANTHROPIC/v1/messages?beta=true"`
			const boxes = 3
			repos := make([]string, boxes)
			results := make([]result, boxes)
			var wg sync.WaitGroup
			for i := range boxes {
				repos[i] = worktree(t)
				hostGit(t, repos[i], env, "init", "-q")
				wg.Add(1)
				go func() {
					defer wg.Done()
					results[i] = aisanIn(t, repos[i], env, "", "run", "--strict", "--egress", "anthropic", "--", "sh", "-c", client)
				}()
			}
			waitFor(t, 30*time.Second, "every box ready", func() bool {
				for _, r := range repos {
					if _, err := os.Stat(filepath.Join(r, "ready")); err != nil {
						return false
					}
				}
				return true
			})
			for _, r := range repos {
				os.WriteFile(filepath.Join(r, "go"), nil, 0o644)
			}
			if hostCLI {
				// The CLI refreshes while the boxes' proxies wait for its
				// lock, writes the login back and lets go.
				time.Sleep(time.Second)
				hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: caPool(t, ca)}}}
				resp, err := hc.Post(srv.URL+"/v1/oauth/token", "application/json", strings.NewReader(`{"grant_type":"refresh_token","refresh_token":"rt-0"}`))
				if err != nil {
					t.Fatal(err)
				}
				var v struct {
					Access  string `json:"access_token"`
					Refresh string `json:"refresh_token"`
				}
				json.NewDecoder(resp.Body).Decode(&v)
				resp.Body.Close()
				writeLogin(v.Access, v.Refresh, time.Now().Add(time.Hour))
				os.Remove(lock)
			}
			wg.Wait()
			for i, r := range results {
				t.Logf("box %d: %s", i, r.stdout)
				if !strings.Contains(r.stdout, "status:200") {
					t.Errorf("box %d: exit %d\nstdout %s\nstderr %s", i, r.code, r.stdout, r.stderr)
				}
			}
			if n := refreshes.Load(); n != 1 {
				t.Errorf("the token endpoint saw %d refreshes, want exactly 1", n)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, s := range seen {
				if s != "sk-ant-oat01-refreshed-1" {
					t.Errorf("the upstream got %q; want only the one refreshed token", s)
				}
			}
		})
	}
}

// caPool is a pool holding the test CA alone.
func caPool(t *testing.T, ca testCA) *x509.CertPool {
	t.Helper()
	b, err := os.ReadFile(ca.pemPath)
	if err != nil {
		t.Fatal(err)
	}
	p := x509.NewCertPool()
	p.AppendCertsFromPEM(b)
	return p
}

// handOverAttack runs in a strict box: it finds its anthropic endpoint's
// socket and hands the host's proxy what the in-box relay never would (a
// pipe, a file, a listening socket, two descriptors at once; and the
// client end of a connection to the relay itself, which is a TCP
// connection the proxy may serve), then makes an ordinary call.
const handOverAttack = `
import os, socket, sys, urllib.request
sock = None
for root, dirs, files in os.walk("/"):
    dirs[:] = [d for d in dirs if os.path.join(root, d) not in ("/proc", "/sys", "/usr", "/dev", "/etc")]
    if "anthropic.sock" in files:
        sock = os.path.join(root, "anthropic.sock")
print("socket:", sock is not None)
host, port = os.environ["AISAN_EGRESS_ANTHROPIC"].split("//")[1].split(":")
r, w = os.pipe()
f = open("/etc/hostname")
ls = socket.socket(); ls.bind(("127.0.0.1", 0)); ls.listen()
loop = socket.create_connection((host, int(port)))
for name, fds in [("pipe", [r]), ("file", [f.fileno()]), ("listener", [ls.fileno()]), ("loop", [loop.fileno()]), ("two", [r, w])]:
    s = socket.socket(socket.AF_UNIX)
    s.connect(sock)
    socket.send_fds(s, [b"\xa5"], fds)
    s.settimeout(5)
    try:
        got = s.recv(1)
        print(name, "ended" if got == b"" else "answered")
    except Exception as e:
        print(name, "error", type(e).__name__)
req = urllib.request.Request(os.environ["AISAN_EGRESS_ANTHROPIC"] + "/v1/messages?beta=true", method="POST",
    data=b'{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"hi"}]}', headers={"content-type": "application/json"})
print("status:", urllib.request.urlopen(req, timeout=10).status)
# The relay keeps nothing of a connection it handed over: when the host's
# proxy closes its end after its answer, the client here reads the end of
# the stream. (A copy kept in the init, where the relay runs, would hold
# the connection open; the init itself is closed to inspection from here.)
c = socket.create_connection((host, int(port)))
c.sendall(b"POST /v1/messages?beta=true HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
c.settimeout(5)
ended = False
try:
    while c.recv(65536):
        pass
    ended = True
except socket.timeout:
    pass
print("the relay holds an open connection:", not ended)
`

// TestStrictHandOverAttack: from inside a strict box, handing the host's
// egress proxy anything but the one TCP connection the relay passes ends
// that socket connection and nothing else; the proxy goes on serving the
// box, and nothing of the attempts reaches the upstream. The relay (in the
// box's init) holds no descriptor of a connection it handed over: the
// proxy's close ends it.
func TestStrictHandOverAttack(t *testing.T) {
	repo, home, env := strictRepo(t)
	ca := newTestCA(t, t.TempDir(), "127.0.0.1")
	var mu sync.Mutex
	var calls int
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"msg_1","type":"message","role":"assistant","content":[]}`)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{ca.server}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	os.MkdirAll(filepath.Join(home, ".claude"), 0o700)
	os.WriteFile(filepath.Join(home, ".claude", ".credentials.json"), []byte(fmt.Sprintf(`{"claudeAiOauth":{"accessToken":"sk-ant-oat01-x","refreshToken":"r","expiresAt":%d,"subscriptionType":"max"}}`,
		time.Now().Add(time.Hour).UnixMilli())), 0o600)
	env = append(env, "AISAN_ANTHROPIC_UPSTREAM="+srv.URL, "SSL_CERT_FILE="+ca.pemPath)
	r := strict(t, repo, env, []string{"--egress", "anthropic"}, "python3", "-c", handOverAttack)
	want := "socket: True\npipe ended\nfile ended\nlistener ended\nloop ended\ntwo ended\nstatus: 200\nthe relay holds an open connection: False\n"
	if r.stdout != want {
		t.Errorf("in the box:\n%s\nwant:\n%s\nstderr %s", r.stdout, want, r.stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	if calls != 2 {
		t.Errorf("the upstream saw %d calls, want the two ordinary calls", calls)
	}
}
