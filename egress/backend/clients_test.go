package backend_test

// The real clients, unjailed but in a network namespace of their own (bwrap
// --unshare-net: loopback only, so nothing can leave the machine), talk to
// the proxy the way a strict box does: client -> 127.0.0.1 relay (this test
// binary, re-executed) -> Unix socket -> proxy -> loopback TLS stand-in.
// Each run re-captures what the client sent and compares its shape with
// the fixtures under egress/*/testdata, so a client update that adds a
// field or a header fails here first; -update rewrites them.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/aisan-dev/aisan/egress"
	"github.com/aisan-dev/aisan/egress/backend"
	"github.com/aisan-dev/aisan/egress/egresstest"
)

var update = flag.Bool("update", false, "rewrite the captured request fixtures")

const npmBin = "/opt/aisan-test-npm/node_modules/.bin"

func TestMain(m *testing.M) {
	if spec := os.Getenv("AISAN_EGRESS_TEST_RELAY"); spec != "" {
		os.Exit(relayAndRun(spec))
	}
	os.Exit(egresstest.RunWithCA(m))
}

// relayAndRun is the in-box side: a loopback listener relayed to the Unix
// socket, then the client (argv as JSON in AISAN_EGRESS_TEST_ARGV).
func relayAndRun(spec string) int {
	port, sock, _ := strings.Cut(spec, "=")
	ln, err := net.Listen("tcp", "127.0.0.1:"+port)
	if err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		return 111
	}
	go egresstest.Relay(ln, sock)
	var argv []string
	json.Unmarshal([]byte(os.Getenv("AISAN_EGRESS_TEST_ARGV")), &argv)
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "AISAN_EGRESS_TEST_") {
			env = append(env, e)
		}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Stdin, cmd.Stdout, cmd.Stderr = env, os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		fmt.Fprintln(os.Stderr, "relay: run:", err)
		return 112
	}
	return 0
}

func need(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Getenv("AISAN_REQUIRE_INTEGRATION") == "1" {
		t.Fatalf("needs %s: %v (AISAN_REQUIRE_INTEGRATION=1 forbids skipping)", what, err)
	}
	t.Skipf("needs %s: %v", what, err)
}

// box is one client run's world: a scratch dir the unprivileged user owns,
// the host side's fake home (root's), and the served backend.
type box struct {
	dir      string // box HOME and work dir parent
	hostHome string
	uid, gid int
	sock     string
	up       *egresstest.Upstream
	spec     *backend.Spec

	audit *egresstest.Collect

	mu            sync.Mutex
	clientHeaders map[string]map[string]bool // per request target, every header name the client sent
}

const relayPort = 18713

func newBox(t *testing.T, upstream http.Handler) *box {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: this runs a real client (seconds each)")
	}
	_, err := exec.LookPath("bwrap")
	need(t, "bwrap (for a network namespace with loopback only)", err)
	b := &box{uid: os.Getuid(), gid: os.Getgid(), audit: &egresstest.Collect{}}
	if b.uid == 0 {
		u, err := user.Lookup("aisan-test")
		need(t, "the unprivileged user aisan-test (clients must not run as root)", err)
		b.uid, _ = strconv.Atoi(u.Uid)
		b.gid, _ = strconv.Atoi(u.Gid)
	}
	root, err := os.MkdirTemp("", "aisan-egress-clients-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	b.dir = filepath.Join(root, "box")
	b.hostHome = filepath.Join(root, "host")
	for _, d := range []string{b.dir, filepath.Join(b.dir, "work"), b.hostHome} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(root, 0o711)
	b.up = egresstest.NewUpstream(t, upstream)
	return b
}

// serveWith serves the backend with options eo; wrap, if not nil, changes
// the built backend first.
func (b *box) serveWith(t *testing.T, name string, env map[string]string, o backend.Options, eo egress.Options, wrap func(*egress.Backend)) {
	t.Helper()
	o.Home = b.hostHome
	o.Getenv = func(k string) string { return env[k] }
	spec, err := backend.New(name, o)
	if err != nil {
		t.Fatal(err)
	}
	b.spec = spec
	b.sock = filepath.Join(b.dir, "egress.sock")
	ln, err := egress.ListenUnix(b.sock)
	if err != nil {
		t.Fatal(err)
	}
	if wrap != nil {
		wrap(spec.Backend)
	}
	if eo.Audit == nil {
		eo.Audit = b.audit
	}
	srv, err := egress.NewServer(spec.Backend, eo)
	if err != nil {
		t.Fatal(err)
	}
	b.clientHeaders = map[string]map[string]bool{}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		m := b.clientHeaders[r.RequestURI]
		if m == nil {
			m = map[string]bool{}
			b.clientHeaders[r.RequestURI] = m
		}
		for k := range r.Header {
			m[strings.ToLower(k)] = true
		}
		b.mu.Unlock()
		srv.ServeHTTP(w, r)
	})}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close(); ln.Close() })
}

func (b *box) baseURL() string { return "http://127.0.0.1:" + strconv.Itoa(relayPort) }

// run runs argv in a loopback-only network namespace as the unprivileged
// user, with exactly env (plus PATH and HOME).
func (b *box) run(t *testing.T, argv, env []string) (string, string) {
	t.Helper()
	out, errs, err := b.try(t, argv, env)
	if err != nil {
		t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", argv[0], err, out, tail(errs))
	}
	return out, errs
}

// try is run without failing on the client's exit status.
func (b *box) try(t *testing.T, argv, env []string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := b.command(t, ctx, argv, env)
	cmd.SysProcAttr.Setpgid = true
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

// command is bwrap running the relay and then argv, as the unprivileged
// user, with exactly env (plus PATH, HOME and the XDG dirs).
func (b *box) command(t *testing.T, ctx context.Context, argv, env []string) *exec.Cmd {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(b.dir, "relay.test")
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	filepath.Walk(b.dir, func(p string, _ os.FileInfo, _ error) error { return os.Lchown(p, b.uid, b.gid) })
	argvJSON, _ := json.Marshal(argv)
	full := append([]string{
		"PATH=" + npmBin + ":/usr/local/bin:/usr/bin:/bin",
		"HOME=" + b.dir,
		"XDG_CONFIG_HOME=" + filepath.Join(b.dir, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(b.dir, ".local/share"),
		"XDG_CACHE_HOME=" + filepath.Join(b.dir, ".cache"),
		"XDG_STATE_HOME=" + filepath.Join(b.dir, ".local/state"),
		"TMPDIR=" + filepath.Join(b.dir),
		"LANG=C.UTF-8",
		"AISAN_EGRESS_TEST_RELAY=" + strconv.Itoa(relayPort) + "=" + b.sock,
		"AISAN_EGRESS_TEST_ARGV=" + string(argvJSON),
	}, env...)
	cmd := exec.CommandContext(ctx, "bwrap", "--dev-bind", "/", "/", "--unshare-net", "--unshare-pid", "--die-with-parent",
		"--chdir", filepath.Join(b.dir, "work"), "--", bin)
	cmd.Env = full
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if os.Getuid() == 0 {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(b.uid), Gid: uint32(b.gid)}
	}
	return cmd
}

// runTUI runs argv on a pty (150x50) until done reports true, then kills
// it; it returns the last of what the client drew.
func (b *box) runTUI(t *testing.T, argv, env []string, done func() bool) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := b.command(t, ctx, argv, append(env, "TERM=xterm-256color", "COLUMNS=150", "LINES=50"))
	cmd.SysProcAttr.Setsid = true
	cmd.SysProcAttr.Setctty = true
	ptmx, err := pty.StartWithAttrs(cmd, &pty.Winsize{Rows: 50, Cols: 150}, cmd.SysProcAttr)
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	var mu sync.Mutex
	var screen bytes.Buffer
	go func() {
		buf := make([]byte, 32<<10)
		for {
			n, err := ptmx.Read(buf)
			mu.Lock()
			screen.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	for !done() && ctx.Err() == nil && (cmd.ProcessState == nil) {
		time.Sleep(200 * time.Millisecond)
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	cmd.Wait()
	mu.Lock()
	defer mu.Unlock()
	if ctx.Err() != nil {
		t.Errorf("%s did not finish in time; screen:\n%s", argv[0], tail(screen.String()))
	}
	return tail(screen.String())
}

func tail(s string) string {
	if len(s) > 4000 {
		return "…" + s[len(s)-4000:]
	}
	return s
}

// shape is what a fixture pins down about one captured request.
type shape struct {
	Route   string   `json:"route"`
	Headers []string `json:"headers"`
	Keys    []string `json:"keys"`
	Tools   []string `json:"tool_types,omitempty"`
}

func shapeOf(r egresstest.Request) shape {
	s := shape{Route: r.Method + " " + r.Target}
	for k := range r.Header {
		s.Headers = append(s.Headers, strings.ToLower(k))
	}
	sort.Strings(s.Headers)
	var body map[string]json.RawMessage
	json.Unmarshal(r.Body, &body)
	for k := range body {
		s.Keys = append(s.Keys, k)
	}
	sort.Strings(s.Keys)
	var tools []struct {
		Type *string `json:"type"`
	}
	json.Unmarshal(body["tools"], &tools)
	for _, t := range tools {
		ty := "(none)"
		if t.Type != nil {
			ty = *t.Type
		}
		if !slices.Contains(s.Tools, ty) {
			s.Tools = append(s.Tools, ty)
		}
	}
	sort.Strings(s.Tools)
	return s
}

// maxBodies caps the bodies kept per fixture (Claude's /context sends
// dozens of near-identical ones).
const maxBodies = 4

// checkFixtures compares the captured requests' shapes with
// <dir>/<name>.shapes.json and keeps the bodies as <name>-N.json (the
// policy tests run every one of them). Shapes are compared as a set:
// clients send some requests more than once.
func (b *box) checkFixtures(t *testing.T, dir, name string, reqs []egresstest.Request) {
	t.Helper()
	b.mu.Lock()
	union := map[string]bool{}
	for _, r := range reqs {
		for k := range b.clientHeaders[r.Target] {
			union[k] = true
		}
	}
	b.mu.Unlock()
	var client []string
	for k := range union {
		client = append(client, k)
	}
	sort.Strings(client)
	var shapes []shape
	seen := map[string]bool{}
	for _, r := range reqs {
		s := shapeOf(r)
		k, _ := json.Marshal(s)
		if !seen[string(k)] {
			seen[string(k)] = true
			shapes = append(shapes, s)
		}
	}
	sort.Slice(shapes, func(i, j int) bool {
		a, _ := json.Marshal(shapes[i])
		b, _ := json.Marshal(shapes[j])
		return string(a) < string(b)
	})
	got, _ := json.MarshalIndent(map[string]any{"client_headers": client, "upstream_requests": shapes}, "", "  ")
	got = append(got, '\n')
	path := filepath.Join(dir, name+".shapes.json")
	if *update {
		old, _ := filepath.Glob(filepath.Join(dir, name+"-*.json"))
		for _, f := range old {
			os.Remove(f)
		}
		for i, r := range reqs {
			if i == maxBodies {
				break
			}
			var pretty bytes.Buffer
			json.Indent(&pretty, r.Body, "", " ")
			os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%d.json", name, i+1)), append(pretty.Bytes(), '\n'), 0o644)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no fixture %s (run with -update): %v", path, err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s sends requests of another shape than %s: the client changed; check the new fields against the policy, then run with -update\ngot:\n%s", name, path, got)
	}
}

// checkUpstream: every request that reached the stand-in carried the host's
// real credential, exactly once, and nothing of the box's placeholder.
func checkUpstream(t *testing.T, reqs []egresstest.Request, header, want string) {
	t.Helper()
	if len(reqs) == 0 {
		t.Fatal("nothing reached the upstream")
	}
	for _, r := range reqs {
		if got := r.Header.Values(header); len(got) != 1 || got[0] != want {
			t.Errorf("%s %s: %s = %q", r.Method, r.Target, header, got)
		}
		for k, vs := range r.Header {
			for _, v := range vs {
				if strings.Contains(v, "aisan-placeholder") {
					t.Errorf("%s %s: the placeholder reached the upstream in %s", r.Method, r.Target, k)
				}
			}
		}
		if bytes.Contains(r.Body, []byte("aisan-placeholder")) {
			t.Errorf("%s %s: the placeholder reached the upstream in the body", r.Method, r.Target)
		}
	}
}

func needClient(t *testing.T, name string) string {
	p := filepath.Join(npmBin, name)
	_, err := os.Stat(p)
	need(t, "the npm-installed "+name, err)
	return p
}

const realOAuth = "sk-ant-oat01-host-real-access-token"

const claudePrompt = "Run the shell command `echo " + egresstest.ToolMarker + "` and report."

func claudeBox(t *testing.T, eo egress.Options, wrap func(*egress.Backend)) (*box, []string, []string) {
	return claudeBoxWith(t, eo, wrap, backend.Options{}, nil)
}

func claudeBoxWith(t *testing.T, eo egress.Options, wrap func(*egress.Backend), o backend.Options, vars map[string]string) (*box, []string, []string) {
	claude := needClient(t, "claude")
	b := newBox(t, egresstest.Anthropic())
	os.MkdirAll(filepath.Join(b.hostHome, ".claude"), 0o700)
	creds := fmt.Sprintf(`{"claudeAiOauth":{"accessToken":%q,"refreshToken":"sk-ant-ort01-host-refresh","expiresAt":%d,"scopes":["user:inference"],"subscriptionType":"max"}}`,
		realOAuth, time.Now().Add(8*time.Hour).UnixMilli())
	os.WriteFile(filepath.Join(b.hostHome, ".claude", ".credentials.json"), []byte(creds), 0o600)
	if vars == nil {
		vars = map[string]string{}
	}
	vars["AISAN_ANTHROPIC_UPSTREAM"] = b.up.URL.String()
	b.serveWith(t, "anthropic", vars, o, eo, wrap)
	state := filepath.Join(b.dir, ".claude-state")
	os.MkdirAll(state, 0o700)
	env := append(b.spec.BoxEnv(b.baseURL(), eo.Token), "CLAUDE_CONFIG_DIR="+state)
	return b, []string{claude, "-p", claudePrompt, "--allowedTools", "Bash"}, env
}

func TestRealClaudeThroughProxy(t *testing.T) {
	b, argv, env := claudeBox(t, egress.Options{}, nil)
	out, _ := b.run(t, argv, env)
	if !strings.Contains(out, egresstest.Answer+" after "+egresstest.ToolMarker) {
		t.Errorf("claude did not finish the tool turn through the proxy: %q", out)
	}
	reqs := b.up.Requests()
	checkUpstream(t, reqs, "Authorization", "Bearer "+realOAuth)
	for _, r := range reqs {
		if !strings.Contains(r.Header.Get("Anthropic-Beta"), "oauth-2025-04-20") {
			t.Errorf("no oauth beta: %q", r.Header.Get("Anthropic-Beta"))
		}
	}
	b.checkFixtures(t, "../anthropic/testdata", "claude-p", reqs)
}

// TestRealClaudeHonoursRetryAfter: the tool turn's second call hits the
// per-box rate limit; Claude waits for retry-after and goes on.
func TestRealClaudeHonoursRetryAfter(t *testing.T) {
	b, argv, env := claudeBox(t, egress.Options{Rate: 0.5, Burst: 1}, nil)
	out, _ := b.run(t, argv, env)
	if !strings.Contains(out, egresstest.Answer+" after "+egresstest.ToolMarker) {
		t.Errorf("claude did not get past the rate limit: %q", out)
	}
	var limited, after time.Time
	for _, e := range b.audit.Entries() {
		if e.Status == 429 && limited.IsZero() {
			limited = e.Time
		}
		if e.Status == 200 && !limited.IsZero() {
			after = e.Time
		}
	}
	if limited.IsZero() || after.IsZero() {
		t.Fatalf("no 429 then 200 in %+v", b.audit.Entries())
	}
	if d := after.Sub(limited); d < time.Second {
		t.Errorf("claude retried %v after a 429 with retry-after 2", d)
	}
}

func codexBox(t *testing.T, exp time.Time, eo egress.Options, wrap func(*egress.Backend), extra ...string) (*box, []string, []string) {
	codex := needClient(t, "codex")
	b := newBox(t, egresstest.Responses())
	os.MkdirAll(filepath.Join(b.hostHome, ".codex"), 0o700)
	os.WriteFile(filepath.Join(b.hostHome, ".codex", "auth.json"), []byte(codexAuth(t, exp, "host-access")), 0o600)
	b.serveWith(t, "codex", map[string]string{"AISAN_CODEX_UPSTREAM": b.up.URL.String()}, backend.Options{}, eo, wrap)
	home := filepath.Join(b.dir, ".codex-state")
	os.MkdirAll(home, 0o700)
	argv := append([]string{codex, "exec", "--skip-git-repo-check"}, b.spec.ClientArgs(b.baseURL())...)
	argv = append(append(argv, extra...), "Say hello.")
	return b, argv, append(b.spec.BoxEnv(b.baseURL(), eo.Token), "CODEX_HOME="+home)
}

func TestRealCodexThroughProxy(t *testing.T) {
	for _, tc := range []struct {
		fixture string
		extra   []string
	}{
		{"codex-exec", nil}, // the default model: tools in an additional_tools item
		{"codex-gpt55", []string{"-c", `model="gpt-5.5"`}}, // top-level tools with client tool_search
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			exp := time.Now().Add(8 * time.Hour)
			b, argv, env := codexBox(t, exp, egress.Options{}, nil, tc.extra...)
			out, errs := b.run(t, argv, env)
			if !strings.Contains(out+errs, egresstest.Answer) {
				t.Errorf("codex did not show the answer: %q / %q", out, tail(errs))
			}
			reqs := b.up.Requests()
			checkUpstream(t, reqs, "Chatgpt-Account-Id", "acct-host")
			checkUpstream(t, reqs, "Authorization", "Bearer "+jwt(t, exp, "host-access"))
			b.checkFixtures(t, "../openai/testdata", tc.fixture, reqs)
		})
	}
}

func opencodeBox(t *testing.T, eo egress.Options, wrap func(*egress.Backend)) (*box, []string, []string) {
	opencode := needClient(t, "opencode")
	b := newBox(t, egresstest.Chat())
	p := filepath.Join(b.hostHome, ".local/share/opencode")
	os.MkdirAll(p, 0o700)
	os.WriteFile(filepath.Join(p, "auth.json"), []byte(`{"zai-coding-plan":{"type":"api","key":"host-real-zai-key"}}`), 0o600)
	b.serveWith(t, "openai-compatible:zai-coding-plan", map[string]string{"AISAN_OPENCODE_UPSTREAM_ZAI_CODING_PLAN": b.up.URL.String()}, backend.Options{Model: "glm-5.3"}, eo, wrap)
	return b, []string{opencode, "run", "Say hello."}, b.spec.BoxEnv(b.baseURL(), eo.Token)
}

func TestRealOpencodeThroughProxy(t *testing.T) {
	b, argv, env := opencodeBox(t, egress.Options{}, nil)
	out, errs := b.run(t, argv, env)
	if !strings.Contains(out+errs, egresstest.Answer) {
		t.Errorf("opencode did not show the answer: %q / %q", out, tail(errs))
	}
	reqs := b.up.Requests()
	checkUpstream(t, reqs, "Authorization", "Bearer host-real-zai-key")
	b.checkFixtures(t, "../openai/testdata", "opencode-run", reqs)
}

// TestRealClientsShowRefusals: a policy refusal reaches the user through
// each client, word for word, and the client does not send it again (the
// status per client and x-should-retry: false are what make that so).
func TestRealClientsShowRefusals(t *testing.T) {
	const marker = "test-refusal-7f3a"
	refuseAll := func(be *egress.Backend) {
		be.Check = func(egress.Route, map[string]any) error {
			return egress.Refuse("tool type 'web_search_20250305' runs on the provider's servers; the box has no network (%s)", marker)
		}
	}
	for _, tc := range []struct {
		name     string
		setup    func(*testing.T) (*box, []string, []string)
		requests int // distinct calls the client makes before giving up
	}{
		{"claude", func(t *testing.T) (*box, []string, []string) { return claudeBox(t, egress.Options{}, refuseAll) }, 1},
		{"codex", func(t *testing.T) (*box, []string, []string) {
			return codexBox(t, time.Now().Add(time.Hour), egress.Options{}, refuseAll)
		}, 1},
		{"opencode", func(t *testing.T) (*box, []string, []string) { return opencodeBox(t, egress.Options{}, refuseAll) }, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, argv, env := tc.setup(t)
			out, errs, err := b.try(t, argv, env)
			if err == nil {
				t.Errorf("the client succeeded despite the refusal: %q", out)
			}
			if !strings.Contains(out+errs, marker) || !strings.Contains(out+errs, "runs on the provider") {
				t.Errorf("the reason is not shown:\nstdout %q\nstderr %q", out, tail(errs))
			}
			if n := len(b.audit.Entries()); n > tc.requests {
				t.Errorf("the client sent the refused request %d times, want at most %d (it retried)", n, tc.requests)
			}
			if len(b.up.Requests()) != 0 {
				t.Error("a refused request reached the upstream")
			}
		})
	}
}

// jwt is an unsigned but well-formed JWT, as codex parses it.
func jwt(t *testing.T, exp time.Time, sub string) string {
	t.Helper()
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	return enc(map[string]string{"alg": "none", "typ": "JWT"}) + "." + enc(map[string]any{
		"sub": sub, "exp": exp.Unix(), "email": "host@example.invalid",
		"https://api.openai.com/auth": map[string]string{"chatgpt_account_id": "acct-host", "chatgpt_plan_type": "plus"},
	}) + ".c2ln"
}

func codexAuth(t *testing.T, exp time.Time, sub string) string {
	v := map[string]any{
		"auth_mode":      "chatgpt",
		"OPENAI_API_KEY": nil,
		"tokens": map[string]string{
			"id_token":      jwt(t, exp, "id-"+sub),
			"access_token":  jwt(t, exp, sub),
			"refresh_token": "rt-" + sub,
			"account_id":    "acct-host",
		},
		"last_refresh": time.Now().UTC().Format(time.RFC3339Nano),
	}
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

// TestRealClaudeWithAPIKey: --api-key with the key from a helper command;
// the box's placeholder key is replaced by the host's.
func TestRealClaudeWithAPIKey(t *testing.T) {
	b, argv, env := claudeBoxWith(t, egress.Options{}, nil, backend.Options{APIKey: true},
		map[string]string{"AISAN_ANTHROPIC_KEY_COMMAND": "printf sk-ant-api03-host-key"})
	out, _ := b.run(t, argv, env)
	if !strings.Contains(out, egresstest.Answer+" after "+egresstest.ToolMarker) {
		t.Errorf("claude did not finish the tool turn: %q", out)
	}
	reqs := b.up.Requests()
	checkUpstream(t, reqs, "X-Api-Key", "sk-ant-api03-host-key")
	for _, r := range reqs {
		if r.Header.Get("Authorization") != "" || strings.Contains(r.Header.Get("Anthropic-Beta"), "oauth") {
			t.Errorf("API-key request carries OAuth: %v", r.Header)
		}
	}
}

// TestRealClientsWithPerBoxToken: in a --net box the placeholder each
// client sends is the per-box token; the proxy demands it, alone, and
// every genuine request must pass that check.
func TestRealClientsWithPerBoxToken(t *testing.T) {
	const tok = "aisan-box-token-5b0c2e9d41f7a3c8"
	eo := egress.Options{Token: tok}
	for _, tc := range []struct {
		name  string
		setup func(*testing.T) (*box, []string, []string)
	}{
		{"claude", func(t *testing.T) (*box, []string, []string) { return claudeBox(t, eo, nil) }},
		{"codex", func(t *testing.T) (*box, []string, []string) { return codexBox(t, time.Now().Add(time.Hour), eo, nil) }},
		{"opencode", func(t *testing.T) (*box, []string, []string) { return opencodeBox(t, eo, nil) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, argv, env := tc.setup(t)
			out, errs := b.run(t, argv, env)
			if !strings.Contains(out+errs, egresstest.Answer) {
				t.Errorf("no answer: %q / %q", out, tail(errs))
			}
			for _, e := range b.audit.Entries() {
				if e.Status == 401 {
					t.Errorf("a genuine request failed the token check: %+v", e)
				}
			}
			for _, r := range b.up.Requests() {
				for k, vs := range r.Header {
					if strings.Contains(strings.Join(vs, " "), tok) {
						t.Errorf("the per-box token reached the upstream in %s", k)
					}
				}
			}
		})
	}
}

// TestRealClaudeTUIThroughProxy: the interactive client (its own betas,
// its own identity) through the same chain, with the first start seeded
// as a strict box seeds it.
func TestRealClaudeTUIThroughProxy(t *testing.T) {
	b, argv, env := claudeBox(t, egress.Options{}, nil)
	state := filepath.Join(b.dir, ".claude-state")
	seed, _ := json.Marshal(map[string]any{"hasCompletedOnboarding": true,
		"projects": map[string]any{filepath.Join(b.dir, "work"): map[string]any{"hasTrustDialogAccepted": true}}})
	os.WriteFile(filepath.Join(state, ".claude.json"), seed, 0o600)
	argv = []string{argv[0], claudePrompt, "--allowedTools", "Bash"}
	finished := func() bool {
		for _, r := range b.up.Requests() {
			if bytes.Contains(r.Body, []byte("tool_result")) && bytes.Contains(r.Body, []byte(egresstest.ToolMarker)) {
				return true
			}
		}
		return false
	}
	screen := b.runTUI(t, argv, env, finished)
	if !finished() {
		t.Fatalf("the interactive turn did not reach the tool result; screen:\n%s", screen)
	}
	reqs := b.up.Requests()
	checkUpstream(t, reqs, "Authorization", "Bearer "+realOAuth)
	b.checkFixtures(t, "../anthropic/testdata", "claude-tui", reqs)
}

// TestRealTUIsThroughProxy: codex's and opencode's interactive clients
// through the same chain, until their turn's answer came back.
func TestRealTUIsThroughProxy(t *testing.T) {
	t.Run("codex", func(t *testing.T) {
		b, argv, env := codexBox(t, time.Now().Add(time.Hour), egress.Options{}, nil)
		// The TUI takes the prompt as its argument, after the overrides.
		argv = append([]string{argv[0]}, argv[3:]...)
		seen := func() bool { return len(b.up.Requests()) >= 1 }
		screen := b.runTUI(t, argv, env, seen)
		if len(b.up.Requests()) == 0 {
			t.Fatalf("no request; screen:\n%s", screen)
		}
		b.checkFixtures(t, "../openai/testdata", "codex-tui", b.up.Requests()[:1])
	})
	t.Run("opencode", func(t *testing.T) {
		b, argv, env := opencodeBox(t, egress.Options{}, nil)
		argv = []string{argv[0], "--prompt", "Say hello."}
		// The turn's call (the one with tools) is what must pass; the
		// title call races it and is covered by opencode run.
		turns := func() []egresstest.Request {
			var out []egresstest.Request
			for _, r := range b.up.Requests() {
				if bytes.Contains(r.Body, []byte(`"tools"`)) {
					out = append(out, r)
				}
			}
			return out
		}
		screen := b.runTUI(t, argv, env, func() bool { return len(turns()) > 0 })
		if len(turns()) == 0 {
			t.Fatalf("no turn request; screen:\n%s", screen)
		}
		b.checkFixtures(t, "../openai/testdata", "opencode-tui", turns()[:1])
	})
}

// TestRealClaudeContextThroughProxy: /context counts tokens per tool group
// with a burst of count_tokens calls, which must pass the policy and the
// rate limit's burst.
func TestRealClaudeContextThroughProxy(t *testing.T) {
	b, argv, env := claudeBox(t, egress.Options{}, nil)
	state := filepath.Join(b.dir, ".claude-state")
	seed, _ := json.Marshal(map[string]any{"hasCompletedOnboarding": true,
		"projects": map[string]any{filepath.Join(b.dir, "work"): map[string]any{"hasTrustDialogAccepted": true}}})
	os.WriteFile(filepath.Join(state, ".claude.json"), seed, 0o600)
	var last int
	var stable time.Time
	counted := func() bool {
		n := 0
		for _, r := range b.up.Requests() {
			if strings.HasPrefix(r.Target, "/v1/messages/count_tokens") {
				n++
			}
		}
		// Done once the burst is over: some calls, then quiet for 2 s.
		if n != last {
			last, stable = n, time.Now()
		}
		return n > 0 && time.Since(stable) > 2*time.Second
	}
	screen := b.runTUI(t, []string{argv[0], "/context"}, env, counted)
	if last == 0 {
		t.Fatalf("no count_tokens call; screen:\n%s", screen)
	}
	for _, e := range b.audit.Entries() {
		if e.Refused != "" {
			t.Errorf("refused: %+v", e)
		}
	}
	var ct []egresstest.Request
	for _, r := range b.up.Requests() {
		if strings.HasPrefix(r.Target, "/v1/messages/count_tokens") {
			ct = append(ct, r)
		}
	}
	checkUpstream(t, ct, "Authorization", "Bearer "+realOAuth)
	b.checkFixtures(t, "../anthropic/testdata", "claude-context", ct)
}
