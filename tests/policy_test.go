package tests

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// boxAttacks are request bodies a box sends its endpoints to make the
// provider act outside it, each hiding what the provider would act on
// where an earlier, deny-listing policy did not look: a URL source one
// level under a document inside a tool result, a server-run tool added
// mid-conversation, and (Responses) a shell tool whose environment is a
// hosted container with network access, a namespace with no tools, an
// include of a server tool's sources, a typed input item that names
// only its id (which reads a stored item); and a body the table passes sent
// with a beta, an API version or a codex beta feature aisan does not
// know, each of which could switch on what the table lets through
// unread.
var boxAttacks = []struct {
	name, endpoint, path, body, want string
	header                           string // an extra request header, if any
}{
	{"deep url source", "AISAN_EGRESS_ANTHROPIC", "/v1/messages?beta=true",
		`{"model":"claude-sonnet-5-5","max_tokens":8,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"document","source":{"type":"content","content":[{"type":"image","source":{"type":"url","url":"https://x.invalid/?leak=1"}}]}}]}]}]}`,
		`messages[0].content[0].content[0].source.content[0].source.type: an image source type \"url\" is refused`, ""},
	{"server tool added mid-conversation", "AISAN_EGRESS_ANTHROPIC", "/v1/messages?beta=true",
		`{"model":"claude-sonnet-5-5","max_tokens":8,"messages":[{"role":"system","content":[{"type":"tool_addition","tool":{"type":"tool_definition","definition":{"type":"web_fetch_20250910","name":"web_fetch"}}}]},{"role":"user","content":"hi"}]}`,
		`messages[0].content[0].tool.definition.type: a tool type \"web_fetch_20250910\" is refused`, ""},
	{"hosted shell", "AISAN_EGRESS_OPENAI", "/responses",
		`{"model":"gpt-5-codex","input":"run it","stream":true,"store":false,"tools":[{"type":"shell","environment":{"type":"container_auto"}}]}`,
		`tools[0].environment.type: a shell environment type \"container_auto\" is refused`, ""},
	{"empty namespace", "AISAN_EGRESS_OPENAI", "/responses",
		`{"model":"gpt-5-codex","input":"hi","store":false,"tools":[{"type":"namespace","name":"web"}]}`,
		`tools[0]: a namespace tool needs the field \"tools\"`, ""},
	{"stored item by its id", "AISAN_EGRESS_OPENAI", "/responses",
		`{"model":"gpt-5-codex","input":[{"type":"function_call_output","id":"fco_68c1"}],"store":false}`,
		`input[0]: a function call output needs the field \"call_id\"`, ""},
	{"server sources", "AISAN_EGRESS_OPENAI", "/responses",
		`{"model":"gpt-5-codex","input":"hi","store":false,"include":["web_search_call.action.sources"]}`,
		`include[0]: \"web_search_call.action.sources\" is not one of`, ""},
	{"unknown beta", "AISAN_EGRESS_ANTHROPIC", "/v1/messages?beta=true",
		`{"model":"claude-sonnet-5-5","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`,
		`the anthropic-beta header: \"aisan-unknown-switch-2099-01-01\" is not a value aisan knows`,
		"anthropic-beta: claude-code-20250219, aisan-unknown-switch-2099-01-01"},
	{"unknown API version", "AISAN_EGRESS_ANTHROPIC", "/v1/messages?beta=true",
		`{"model":"claude-sonnet-5-5","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`,
		`the anthropic-version header: \"2099-01-01\" is not a value aisan knows; strict mode passes only what its policy lists (aisan explain --policy anthropic)`,
		"anthropic-version: 2099-01-01"},
	{"unknown codex beta feature", "AISAN_EGRESS_OPENAI", "/responses",
		`{"model":"gpt-5-codex","input":"hi","store":false}`,
		`the x-codex-beta-features header: \"aisan_unknown_switch\" is not a value aisan knows; strict mode passes only what its policy lists (aisan explain --policy openai)`,
		"x-codex-beta-features: aisan_unknown_switch"},
}

// TestStrictRefusalsFromInsideABox: from inside a real strict box, each
// attack is refused by the host's egress proxy in the API's own error
// shape, naming the JSON path and why; none reaches the upstream; the
// launch ends with one line that counts the refusals, names the
// commonest and the command that lists them all; the egress log has
// every one.
func TestStrictRefusalsFromInsideABox(t *testing.T) {
	repo, home, env := strictRepo(t)
	ca := newTestCA(t, t.TempDir(), "127.0.0.1")
	var mu sync.Mutex
	var reached []string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		reached = append(reached, r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{}`)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{ca.server}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	os.MkdirAll(filepath.Join(home, ".claude"), 0o700)
	os.WriteFile(filepath.Join(home, ".claude", ".credentials.json"), []byte(fmt.Sprintf(`{"claudeAiOauth":{"accessToken":"sk-ant-oat01-x","refreshToken":"r","expiresAt":%d,"subscriptionType":"max"}}`,
		time.Now().Add(time.Hour).UnixMilli())), 0o600)
	env = append(env, "AISAN_ANTHROPIC_UPSTREAM="+srv.URL, "AISAN_OPENAI_UPSTREAM="+srv.URL+"/v1", "OPENAI_API_KEY=sk-host-openai-key",
		"SSL_CERT_FILE="+ca.pemPath)
	var script strings.Builder
	for _, a := range boxAttacks {
		hdr := ""
		if a.header != "" {
			hdr = "-H " + shellQuote(a.header) + " "
		}
		fmt.Fprintf(&script, "echo %q; curl -s -w '\\nstatus:%%{http_code}\\n' -H 'content-type: application/json' %s--data-binary %s \"$%s%s\"\n",
			"== "+a.name, hdr, shellQuote(a.body), a.endpoint, a.path)
	}
	r := strict(t, repo, env, []string{"--egress", "anthropic", "--egress", "openai"}, "sh", "-c", script.String())
	for _, a := range boxAttacks {
		_, out, _ := strings.Cut(r.stdout, "== "+a.name+"\n")
		out, _, _ = strings.Cut(out, "\n==")
		if !strings.Contains(out, a.want) || !(strings.Contains(out, "status:402") && strings.Contains(out, `"permission_error"`) || strings.Contains(out, "status:400") && strings.Contains(out, `"invalid_request_error"`)) {
			t.Errorf("%s: the box got:\n%s\nwant the API's error shape with %s", a.name, out, a.want)
		}
	}
	mu.Lock()
	if len(reached) != 0 {
		t.Errorf("refused requests reached the upstream: %v", reached)
	}
	mu.Unlock()
	if !strings.Contains(r.stderr, fmt.Sprintf("aisan: note: strict mode refused %d requests of this box's; the commonest", len(boxAttacks))) || !strings.Contains(r.stderr, "aisan logs --egress ") {
		t.Errorf("no refusal line at the end of the launch:\n%s", r.stderr)
	}
	_, slotName, _ := strings.Cut(r.stderr, "aisan logs --egress ")
	slotName = strings.TrimSpace(slotName)
	if logs := aisan(t, env, "", "logs", "--egress", slotName); strings.Count(logs.stdout, "refused") < len(boxAttacks) {
		t.Errorf("aisan logs --egress %s:\n%s%s", slotName, logs.stdout, logs.stderr)
	}
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// TestPreflightThenRefresh: `aisan preflight --strict` on a host whose
// Claude login has expired leaves the Claude directory as it found it,
// and the next strict box's first model call refreshes the login through
// the host's egress proxy (once), whether the refresh lock was absent or
// left behind as a file by an older preflight, which the proxy clears.
func TestPreflightThenRefresh(t *testing.T) {
	requireJail(t)
	ca := newTestCA(t, t.TempDir(), "127.0.0.1")
	for _, staleFile := range []bool{false, true} {
		t.Run(fmt.Sprintf("staleFileLock=%v", staleFile), func(t *testing.T) {
			repo, home, env := strictRepo(t)
			var mu sync.Mutex
			var refreshes int
			var seen []string
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				defer mu.Unlock()
				w.Header().Set("Content-Type", "application/json")
				if r.URL.Path == "/v1/oauth/token" {
					refreshes++
					fmt.Fprint(w, `{"access_token":"sk-ant-oat01-refreshed","refresh_token":"rt-1","expires_in":3600}`)
					return
				}
				if r.Method != http.MethodPost {
					return // preflight's look at the upstream
				}
				seen = append(seen, r.Header.Get("Authorization"))
				if r.Header.Get("Authorization") != "Bearer sk-ant-oat01-refreshed" {
					w.WriteHeader(401)
					fmt.Fprint(w, `{"type":"error","error":{"type":"authentication_error","message":"expired"}}`)
					return
				}
				fmt.Fprint(w, `{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"ok"}]}`)
			}))
			srv.TLS = &tls.Config{Certificates: []tls.Certificate{ca.server}}
			srv.StartTLS()
			t.Cleanup(srv.Close)
			dir := filepath.Join(home, ".claude")
			os.MkdirAll(dir, 0o700)
			creds := filepath.Join(dir, ".credentials.json")
			os.WriteFile(creds, []byte(fmt.Sprintf(`{"claudeAiOauth":{"accessToken":"sk-ant-oat01-expired","refreshToken":"rt-0","expiresAt":%d,"subscriptionType":"max"}}`,
				time.Now().Add(-time.Hour).UnixMilli())), 0o600)
			lock := filepath.Join(dir, ".oauth_refresh.lock")
			if staleFile {
				os.WriteFile(lock, nil, 0o600)
				old := time.Now().Add(-2 * time.Minute)
				os.Chtimes(lock, old, old)
			}
			env = append(env, "AISAN_ANTHROPIC_UPSTREAM="+srv.URL, "AISAN_ANTHROPIC_TOKEN_URL="+srv.URL+"/v1/oauth/token",
				"SSL_CERT_FILE="+ca.pemPath, "CLAUDE_CONFIG_DIR=", "CODEX_HOME=")
			before := dirState(t, dir)
			p := aisan(t, env, "", "preflight", "--strict")
			if after := dirState(t, dir); after != before {
				t.Errorf("preflight --strict changed %s:\nbefore %s\nafter  %s", dir, before, after)
			}
			if staleFile != strings.Contains(p.stdout, "rm ~/.claude/.oauth_refresh.lock") {
				t.Errorf("preflight on the lock (a stale file: %v):\n%s", staleFile, p.stdout)
			}
			r := strict(t, repo, env, []string{"--egress", "anthropic"}, "sh", "-c",
				`curl -s -w '\nstatus:%{http_code}\n' -H 'content-type: application/json' -d '{"model":"claude-sonnet-5-5","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}' "$AISAN_EGRESS_ANTHROPIC/v1/messages?beta=true"`)
			if !strings.Contains(r.stdout, "status:200") {
				t.Errorf("the call from the box: %s\n%s", r.stdout, r.stderr)
			}
			mu.Lock()
			defer mu.Unlock()
			if refreshes != 1 || len(seen) != 1 || seen[0] != "Bearer sk-ant-oat01-refreshed" {
				t.Errorf("%d refreshes, the upstream saw %q", refreshes, seen)
			}
			if b, _ := os.ReadFile(creds); !strings.Contains(string(b), "sk-ant-oat01-refreshed") || !strings.Contains(string(b), "rt-1") {
				t.Errorf("the refreshed login was not saved: %s", b)
			}
			if _, err := os.Lstat(lock); err == nil {
				t.Error("the refresh lock is still there")
			}
		})
	}
}

// dirState lists dir's entries with their kinds, sizes and times.
func dirState(t *testing.T, dir string) string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, de := range des {
		fi, _ := de.Info()
		fmt.Fprintf(&b, "%s %v %d %d; ", de.Name(), fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
	}
	return b.String()
}

// TestStrictUpstreamUnreachable: a box's model call to an upstream the
// host cannot reach, or with a login whose refresh cannot reach the
// token endpoint, gets the API's error saying so, from the host's egress
// proxy; why (the address the host dialled and its error) is in the
// host's egress log, not in the box.
func TestStrictUpstreamUnreachable(t *testing.T) {
	repo, home, env := strictRepo(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	os.MkdirAll(filepath.Join(home, ".claude"), 0o700)
	os.WriteFile(filepath.Join(home, ".claude", ".credentials.json"), []byte(fmt.Sprintf(`{"claudeAiOauth":{"accessToken":"sk-ant-oat01-x","refreshToken":"r","expiresAt":%d,"subscriptionType":"max"}}`,
		time.Now().Add(time.Hour).UnixMilli())), 0o600)
	env = append(env, "AISAN_ANTHROPIC_UPSTREAM=https://"+addr)
	script := `curl -s -w '\nstatus:%{http_code}\n' -H 'content-type: application/json' -H 'anthropic-version: 2023-06-01' ` +
		`--data-binary '{"model":"claude-sonnet-5-5","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}' "$AISAN_EGRESS_ANTHROPIC/v1/messages"`
	r := strict(t, repo, env, []string{"--egress", "anthropic"}, "sh", "-c", script)
	if !strings.Contains(r.stdout, "status:502") || !strings.Contains(r.stdout, "could not be reached from the host") {
		t.Errorf("the box got:\n%s\nwant a 502 saying the upstream could not be reached (stderr %s)", r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout, "connection refused") || strings.Contains(r.stdout, "dial tcp") {
		t.Errorf("the box is told the host-side cause:\n%s", r.stdout)
	}
	var slotName string
	for n, e := range slotList(t, env) {
		if e.Kind == "run" {
			slotName = n
		}
	}
	if logs := aisan(t, env, "", "logs", "--egress", slotName); !strings.Contains(logs.stdout, "connection refused") {
		t.Errorf("the egress log lacks the cause:\n%s%s", logs.stdout, logs.stderr)
	}

	// The login has expired and its token endpoint is the closed port.
	os.WriteFile(filepath.Join(home, ".claude", ".credentials.json"), []byte(fmt.Sprintf(`{"claudeAiOauth":{"accessToken":"sk-ant-oat01-x","refreshToken":"r","expiresAt":%d,"subscriptionType":"max"}}`,
		time.Now().Add(-time.Hour).UnixMilli())), 0o600)
	env = append(env, "AISAN_ANTHROPIC_TOKEN_URL=https://"+addr+"/v1/oauth/token")
	r = strict(t, repo, env, []string{"--egress", "anthropic"}, "sh", "-c", script)
	if !strings.Contains(r.stdout, "could not be refreshed") || strings.Contains(r.stdout, "connection refused") || strings.Contains(r.stdout, "dial tcp") {
		t.Errorf("the box got:\n%s\nwant the refresh's failure without its cause (stderr %s)", r.stdout, r.stderr)
	}
	logs := aisan(t, env, "", "logs", "--egress", slotName)
	if strings.Count(logs.stdout, "connection refused") < 2 {
		t.Errorf("the egress log lacks the refresh's cause:\n%s%s", logs.stdout, logs.stderr)
	}
}
