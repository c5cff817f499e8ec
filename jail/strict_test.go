package jail

import (
	"context"
	"errors"
	"github.com/aisan-dev/aisan/jail/boxinit"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseEgress(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want EgressRequest
		err  string
	}{
		{in: "stub=/run/s.sock", want: EgressRequest{Name: "stub", Socket: "/run/s.sock"}},
		{in: "my-db2=/tmp/x/../db.sock", want: EgressRequest{Name: "my-db2", Socket: "/tmp/db.sock"}},
		{in: "anthropic", want: EgressRequest{Name: "anthropic", Backend: "anthropic"}},
		{in: "openai-compatible:zai", want: EgressRequest{Name: "openai-compatible:zai", Backend: "openai-compatible", Param: "zai"}},
		{in: "reapi=/home/u/r.toml", want: EgressRequest{Name: "reapi", Backend: "reapi", Param: "/home/u/r.toml"}},
		{in: "grpc:build=/home/u/g.toml", want: EgressRequest{Name: "grpc:build", Backend: "grpc", Param: "/home/u/g.toml"}},
		{in: "anthropic=/run/s.sock", err: "built-in backends are"},
		{in: "openai-compatible", err: "built-in backends are"},
		{in: "Stub=/s", err: "must match"},
		{in: "-x=/s", err: "must match"},
		{in: "stub", err: "NAME=SOCKET"},
		{in: "stub=rel.sock", err: "absolute"},
	} {
		got, err := ParseEgress(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: %+v %v, want %+v", tc.in, got, err, tc.want)
		}
	}
}

func strictBase() StrictOptions {
	return StrictOptions{
		Kind: KindClaude, Slot: "r-1-claude", Command: []string{"claude"}, Repo: "/w/r", Cwd: "/w/r", Home: "/h",
		StateDir: "/h/.aisan/state/r-1-claude", AisanState: []string{"/h/.aisan"},
		Egress: []Endpoint{{Name: "a-b", Port: 2000, Socket: "/run/x/egress/a-b.sock", Source: "/run/s1"}},
	}
}

func TestEgressChecks(t *testing.T) {
	o := strictBase()
	o.Egress = append(o.Egress, Endpoint{Name: "a:b", Backend: "grpc", Port: 2001, Socket: "/run/x/egress/a-b2.sock"})
	if _, err := Compile(Strict(o), Host{}); err == nil || !strings.Contains(err.Error(), "both map to AISAN_EGRESS_A_B") {
		t.Fatalf("colliding names: %v", err)
	}
	o = strictBase()
	o.Egress = append(o.Egress, Endpoint{Name: "c", Port: 2000, Socket: "/run/x/egress/c.sock", Source: "/run/s2"})
	if _, err := Compile(Strict(o), Host{}); err == nil || !strings.Contains(err.Error(), "share port 2000") {
		t.Fatalf("shared port: %v", err)
	}
	s := Strict(strictBase())
	s.Mounts = s.Mounts[:len(s.Mounts)-1]
	if err := Validate(s); err == nil || !strings.Contains(err.Error(), "not bound read-only") {
		t.Fatalf("unmounted socket: %v", err)
	}
}

// TestCredentialAnyDirection: a source that is, contains or lies inside a
// credential path is refused; a sibling is not.
func TestCredentialAnyDirection(t *testing.T) {
	for _, tc := range []struct {
		src string
		bad bool
	}{
		{"/h/.ssh", true}, {"/h", true}, {"/h/.ssh/config", true}, {"/h/.sshx", false}, {"/h/.config", false},
	} {
		o := strictBase()
		o.Forbidden = []string{"/h/.ssh"}
		o.Binds = []Mount{{Kind: ROBind, Src: tc.src, Dst: "/x", Why: "bind spec b.toml:7"}}
		_, err := Compile(Strict(o), Host{})
		if tc.bad != (err != nil) {
			t.Errorf("%s: %v", tc.src, err)
		}
		if tc.bad && (err == nil || !strings.Contains(err.Error(), "b.toml:7")) {
			t.Errorf("%s: error does not name the bind spec line: %v", tc.src, err)
		}
	}
}

func TestStrictDoesNotChangeOptionsOrSpec(t *testing.T) {
	o := strictBase()
	o.Command = []string{"claude", "-p", "x"}
	o.SkipPermissions = true
	before := strictBase()
	before.Command = []string{"claude", "-p", "x"}
	before.SkipPermissions = true
	spec := Strict(o)
	if d := cmp.Diff(before, o); d != "" {
		t.Fatalf("Strict changed its options:\n%s", d)
	}
	frozen := deepCopy(t, spec)
	if _, err := Compile(spec, Host{}); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(frozen, spec); d != "" {
		t.Fatalf("Compile changed the spec:\n%s", d)
	}
	if got := strings.Join(spec.Command, " "); got != "claude --permission-mode bypassPermissions -p x" {
		t.Fatalf("command %q", got)
	}
}

func TestRedactOptions(t *testing.T) {
	got := RedactOptions([]string{"--setenv", "TOKEN", "s3cret", "--setenv", "A", "b", "--chdir", "/"}, []string{"TOKEN"})
	if strings.Contains(strings.Join(got, " "), "s3cret") || got[5] != "b" {
		t.Fatalf("%q", got)
	}
}

// TestSeedStateNeverFollowsALink: a symlink the box planted in its state
// directory is replaced, its target untouched; a regular file that does
// not parse is refused, not overwritten.
func TestSeedStateNeverFollowsALink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("keep"), 0o600)
	state := filepath.Join(dir, "state")
	os.Mkdir(state, 0o700)
	os.Symlink(victim, filepath.Join(state, ".claude.json"))
	o := StrictOptions{Kind: KindClaude, StateDir: state, Cwd: "/w/r", Repo: "/w/r", SkipPermissions: true}
	if err := seedState(o); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Fatalf("the link's target was written: %q", b)
	}
	b, err := os.ReadFile(filepath.Join(state, ".claude.json"))
	if err != nil || !strings.Contains(string(b), `"hasCompletedOnboarding": true`) || !strings.Contains(string(b), `"/w/r"`) {
		t.Fatalf("seed %q %v", b, err)
	}
	if b, _ := os.ReadFile(filepath.Join(state, "settings.json")); !strings.Contains(string(b), "skipDangerousModePermissionPrompt") {
		t.Fatalf("settings %q", b)
	}
	os.WriteFile(filepath.Join(state, ".claude.json"), []byte("{broken"), 0o600)
	if err := seedState(o); err == nil || !strings.Contains(err.Error(), "does not parse") {
		t.Fatalf("broken file: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(state, ".claude.json")); string(b) != "{broken" {
		t.Fatalf("broken file overwritten: %q", b)
	}
	codex := filepath.Join(dir, "codex")
	os.Mkdir(codex, 0o700)
	os.WriteFile(filepath.Join(codex, "config.toml"), []byte("model = \"m\"\n"), 0o600)
	if err := seedState(StrictOptions{Kind: KindCodex, StateDir: codex, Cwd: "/w/r", Repo: "/w/r"}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(codex, "config.toml")); !strings.Contains(string(b), "trust_level = 'trusted'") || !strings.Contains(string(b), "model = 'm'") {
		t.Fatalf("codex config %q", b)
	}
}

func TestParseBwrapVersion(t *testing.T) {
	v, err := parseBwrapVersion("bubblewrap 0.8.0\n")
	if err != nil || v != [3]int{0, 8, 0} {
		t.Fatalf("%v %v", v, err)
	}
	if _, err := parseBwrapVersion("nothing"); err == nil {
		t.Fatal("accepted no version")
	}
}

// TestCodexPreferences: the model settings pass, providers and anything
// else do not.
func TestCodexPreferences(t *testing.T) {
	p := filepath.Join(t.TempDir(), "config.toml")
	os.WriteFile(p, []byte("model = \"gpt-5.5\"\nmodel_provider = \"corp\"\nmodel_reasoning_effort = \"high\"\nmodel_verbosity = \"a\\\"b\"\n[model_providers.corp]\nbase_url = \"https://x\"\nenv_key = \"CORP_KEY\"\n"), 0o600)
	got := codexPreferences(p, []string{"model", "model_reasoning_effort", "model_verbosity"})
	if strings.Join(got, " ") != `model="gpt-5.5" model_reasoning_effort="high"` {
		t.Fatalf("%q", got)
	}
}

// TestEgressWithHostNetwork: with --net a built-in endpoint has no relay
// and needs the environment file; a raw relay is refused.
func TestEgressWithHostNetwork(t *testing.T) {
	o := strictBase()
	o.Net = true
	o.Egress = []Endpoint{{Name: "anthropic", Backend: "anthropic"}}
	if _, err := Compile(Strict(o), Host{}); err == nil || !strings.Contains(err.Error(), "environment file") {
		t.Fatalf("no env file: %v", err)
	}
	o.EnvFile = "/run/x/box.env"
	c, err := Compile(Strict(o), Host{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Relays) != 0 || c.EnvFile != "/run/x/box.env" || !strings.Contains(strings.Join(c.Options, " "), "--ro-bind /run/x/box.env /run/x/box.env") {
		t.Fatalf("compiled %+v", c)
	}
	o.Egress = append(o.Egress, Endpoint{Name: "raw", Port: 3000, Socket: "/run/x/egress/raw.sock", Source: "/run/s"})
	if _, err := Compile(Strict(o), Host{}); err == nil || !strings.Contains(err.Error(), "raw relay") {
		t.Fatalf("raw relay with --net: %v", err)
	}
}

// TestPrepareStrictWritesEnvFile: what a built-in backend hands the agent
// lands in a 0600 file, and a failure to start refuses the launch.
func TestPrepareStrictWritesEnvFile(t *testing.T) {
	dir := t.TempDir()
	stopped := false
	s := &Session{
		SlotDir: dir,
		Request: Request{Strict: &StrictRequest{StartEgress: func(_ context.Context, eps []Endpoint) (*EgressRun, error) {
			if len(eps) != 1 || eps[0].Name != "anthropic" {
				t.Errorf("endpoints %+v", eps)
			}
			return &EgressRun{Stop: func() { stopped = true }, Env: []string{"AISAN_EGRESS_ANTHROPIC=http://127.0.0.1:4444", "ANTHROPIC_API_KEY=per-box-token"}}, nil
		}}},
		Spec:   Spec{Egress: []Endpoint{{Name: "anthropic", Backend: "anthropic"}}, EnvFile: filepath.Join(dir, "box.env")},
		Strict: &StrictPlan{},
	}
	host, err := prepareStrict(context.Background(), s, discard)
	if err != nil {
		t.Fatal(err)
	}
	if host.keepable() {
		t.Error("a box whose egress cannot be handed over was found keepable")
	}
	fi, err := os.Stat(s.Spec.EnvFile)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("env file %v %v", fi, err)
	}
	got, err := boxinit.ReadEnvFile(s.Spec.EnvFile)
	if err != nil || len(got) != 2 || got[1] != "ANTHROPIC_API_KEY=per-box-token" {
		t.Fatalf("%q %v", got, err)
	}
	host.end()
	if !stopped {
		t.Fatal("the backend was not stopped after the box")
	}
	s.Request.Strict.StartEgress = nil
	os.RemoveAll(filepath.Join(dir, "egress"))
	if _, err := prepareStrict(context.Background(), s, discard); !errors.Is(err, ErrNoBackend) {
		t.Fatalf("no starter: %v", err)
	}
}

// FuzzParseEgress: no panic; an accepted raw relay has a valid name, an
// absolute socket and a variable of its own.
func FuzzParseEgress(f *testing.F) {
	for _, s := range []string{"stub=/s", "anthropic", "openai-compatible:x", "reapi=/f", "grpc:a=/f", "a=", "=", ":", "grpc:=", "A-b=/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseEgress(s)
		if err != nil {
			return
		}
		if r.Backend == "" && (!rawEgressName().MatchString(r.Name) || !filepath.IsAbs(r.Socket)) {
			t.Fatalf("accepted %q as %+v", s, r)
		}
		if !strings.HasPrefix(EgressEnvName(r.Name), "AISAN_EGRESS_") {
			t.Fatal("bad variable")
		}
	})
}

func TestEgressAddress(t *testing.T) {
	for _, tc := range []struct {
		e    Endpoint
		want string
	}{
		{Endpoint{Name: "x", Port: 1}, "127.0.0.1:1"},
		{Endpoint{Name: "anthropic", Backend: "anthropic", Port: 2}, "http://127.0.0.1:2"},
		{Endpoint{Name: "openai-compatible:z", Backend: "openai-compatible", Port: 3}, "http://127.0.0.1:3"},
		{Endpoint{Name: "grpc:b", Backend: "grpc", Port: 4}, "127.0.0.1:4"},
		{Endpoint{Name: "reapi", Backend: "reapi", Port: 5}, "127.0.0.1:5"},
	} {
		if got := EgressAddress(tc.e); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.e, got, tc.want)
		}
	}
}

// TestStrictHandover: a keeper gets one inherited socket per built-in
// endpoint, the services' state and the box's held set; a run that hands
// over another number of sockets is refused (the wrapper then keeps
// serving), and the wrapper's drain is what the run gave.
func TestStrictHandover(t *testing.T) {
	eps := []Endpoint{{Name: "anthropic", Backend: "anthropic"}, {Name: "hosts", Backend: HostsBackend}}
	drained := false
	n := 2
	run := &EgressRun{Stop: func() {}, Handover: func() ([]*os.File, []byte, func(context.Context), error) {
		var files []*os.File
		for range n {
			r, w, _ := os.Pipe()
			w.Close()
			files = append(files, r)
		}
		return files, []byte(`{"token":"t"}`), func(context.Context) { drained = true }, nil
	}}
	h := &strictHost{egress: run, builtin: eps, held: "/h/held/s/1", say: discard}
	if !h.keepable() {
		t.Fatal("a run with a hand-over is not keepable")
	}
	ks, files, drain, err := h.handover()
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || len(ks.Endpoints) != 2 || string(ks.State) != `{"token":"t"}` || ks.Held != "/h/held/s/1" {
		t.Fatalf("handover: %+v, %d files", ks, len(files))
	}
	drain(context.Background())
	if !drained {
		t.Error("the drain is not the run's")
	}
	n = 1
	if _, _, _, err := h.handover(); err == nil {
		t.Error("a hand-over of 1 socket for 2 endpoints was taken")
	}
	// A box without built-in endpoints hands over nothing but its held set.
	h = &strictHost{held: "/w", say: discard}
	if ks, files, _, err := h.handover(); err != nil || len(files) != 0 || len(ks.Endpoints) != 0 || ks.Held != "/w" {
		t.Errorf("no egress: %+v %v %v", ks, files, err)
	}
}

// TestStrictCodexArgsOnce: the -c overrides aisan adds reach Codex once
// each, when a backend's client settings repeat aisan's own switches (as
// explain shows them).
func TestStrictCodexArgsOnce(t *testing.T) {
	o := strictBase()
	o.Kind = KindCodex
	o.Command = []string{"codex", "exec", "hi"}
	o.AgentArgs = []string{"-c", `model_provider="aisan"`, "-c", "check_for_update_on_startup=false", "-c", `web_search="disabled"`}
	cmd := Strict(o).Command
	for _, kv := range []string{`model_provider="aisan"`, "check_for_update_on_startup=false", `web_search="disabled"`, "analytics.enabled=false"} {
		if n := slices.Index(cmd, kv); n < 0 || slices.Index(cmd[n+1:], kv) >= 0 {
			t.Errorf("%s is not in codex's arguments exactly once: %q", kv, cmd)
		}
	}
	if got := cmd[len(cmd)-2:]; !slices.Equal(got, []string{"exec", "hi"}) {
		t.Errorf("the user's arguments do not come last: %q", cmd)
	}
}
