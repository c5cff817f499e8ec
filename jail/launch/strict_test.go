package launch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/boxinit"
)

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
	o := jail.StrictOptions{Kind: jail.KindClaude, StateDir: state, Cwd: "/w/r", Repo: "/w/r", SkipPermissions: true}
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
	if err := seedState(jail.StrictOptions{Kind: jail.KindCodex, StateDir: codex, Cwd: "/w/r", Repo: "/w/r"}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(codex, "config.toml")); !strings.Contains(string(b), "trust_level = 'trusted'") || !strings.Contains(string(b), "model = 'm'") {
		t.Fatalf("codex config %q", b)
	}
}

// TestPrepareStrictWritesEnvFile: what a built-in backend hands the agent
// lands in a 0600 file, and a failure to start refuses the launch.
func TestPrepareStrictWritesEnvFile(t *testing.T) {
	dir := t.TempDir()
	stopped := false
	s := &jail.Session{
		SlotDir: dir,
		Request: jail.Request{Strict: &jail.StrictRequest{StartEgress: func(_ context.Context, eps []jail.Endpoint) (*jail.EgressRun, error) {
			if len(eps) != 1 || eps[0].Name != "anthropic" {
				t.Errorf("endpoints %+v", eps)
			}
			return &jail.EgressRun{Stop: func() { stopped = true }, Env: []string{"AISAN_EGRESS_ANTHROPIC=http://127.0.0.1:4444", "ANTHROPIC_API_KEY=per-box-token"}}, nil
		}}},
		Spec:   jail.Spec{Egress: []jail.Endpoint{{Name: "anthropic", Backend: "anthropic"}}, EnvFile: filepath.Join(dir, "box.env")},
		Strict: &jail.StrictPlan{},
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
	if _, err := prepareStrict(context.Background(), s, discard); !errors.Is(err, jail.ErrNoBackend) {
		t.Fatalf("no starter: %v", err)
	}
}

// TestStrictHandover: a keeper gets one inherited socket per built-in
// endpoint, the services' state and the files to sweep; a run that hands
// over another number of sockets is refused (the wrapper then keeps
// serving), and the wrapper's drain is what the run gave.
func TestStrictHandover(t *testing.T) {
	eps := []jail.Endpoint{{Name: "anthropic", Backend: "anthropic"}, {Name: "hosts", Backend: jail.HostsBackend}}
	drained := false
	n := 2
	run := &jail.EgressRun{Stop: func() {}, Handover: func() ([]*os.File, []byte, func(context.Context), error) {
		var files []*os.File
		for range n {
			r, w, _ := os.Pipe()
			w.Close()
			files = append(files, r)
		}
		return files, []byte(`{"token":"t"}`), func(context.Context) { drained = true }, nil
	}}
	h := &strictHost{egress: run, builtin: eps, gitWatch: []string{"/r/.git/config.worktree"}, say: discard}
	if !h.keepable() {
		t.Fatal("a run with a hand-over is not keepable")
	}
	ks, files, drain, err := h.handover()
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || len(ks.Endpoints) != 2 || string(ks.State) != `{"token":"t"}` || ks.GitWatch[0] != "/r/.git/config.worktree" {
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
	// A box without built-in endpoints hands over nothing but the sweep.
	h = &strictHost{gitWatch: []string{"/w"}, say: discard}
	if ks, files, _, err := h.handover(); err != nil || len(files) != 0 || len(ks.Endpoints) != 0 || len(ks.GitWatch) != 1 {
		t.Errorf("no egress: %+v %v %v", ks, files, err)
	}
}
