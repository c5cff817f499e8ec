package jail

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/aisan-dev/aisan/jail/busproxy"
	"github.com/aisan-dev/aisan/jail/history"
	"github.com/google/go-cmp/cmp"
)

// nowhere is a project, a home and a state dir that do not exist: a plan
// reads nothing, so it needs none of them.
const nowhere = "/nonexistent/aisan-plan-test"

func handHost() Host {
	return Host{
		Bwrap: "/usr/bin/bwrap", Cwd: nowhere + "/src/proj", Home: nowhere + "/home",
		AisanHome: nowhere + "/home/.aisan", RuntimeDir: nowhere + "/run/user/1000",
		Env: []string{
			"HOME=" + nowhere + "/home", "PATH=/usr/bin:/bin", "TERM=xterm",
			"XDG_RUNTIME_DIR=" + nowhere + "/run/user/1000",
			"DBUS_SESSION_BUS_ADDRESS=unix:path=" + nowhere + "/run/user/1000/bus",
			"API_TOKEN=sk-not-for-the-box",
		},
		BwrapVersion:   [3]int{0, 11, 0},
		Bus:            busproxy.HostFacts{ProxyPath: "/usr/bin/xdg-dbus-proxy", Sockets: []string{nowhere + "/run/user/1000/bus"}},
		RuntimeSystemd: true,
		StateDirs:      []string{nowhere + "/home/.aisan"},
	}
}

// TestPlanDenyList: a deny-list plan from a hand-built host and what its
// mode prepared: the history copies, the PID dirs and the kind's
// variables are in the Spec, the bus goes through the proxy in the
// slot's run directory, and planning twice gives the same argv.
func TestPlanDenyList(t *testing.T) {
	h := handHost()
	prep := Prepared{
		History: []history.Bind{{Src: nowhere + "/home/.aisan/history/s/claude", Dst: nowhere + "/home/.claude/projects"}},
		PIDDirs: []Mount{{Kind: Bind, Src: nowhere + "/home/.aisan/pids/s/claude-x", Dst: nowhere + "/home/.claude/x"}},
		Env:     []string{"EXTRA=1"},
	}
	req := Request{Kind: KindClaude, Args: []string{"--continue"}}
	s, err := Plan(req, h, "proj-1-claude", prep)
	if err != nil {
		t.Fatal(err)
	}
	if s.Strict != nil || s.SlotDir != h.SlotDir("proj-1-claude") || s.Slot != "proj-1-claude" {
		t.Fatalf("session %+v", s)
	}
	if got := strings.Join(s.Spec.Command, " "); got != "claude --continue" {
		t.Errorf("command %q", got)
	}
	for _, m := range []Mount{{Kind: Bind, Src: prep.History[0].Src, Dst: prep.History[0].Dst}, prep.PIDDirs[0]} {
		if !slices.ContainsFunc(s.Spec.Mounts, func(x Mount) bool { return x.Kind == m.Kind && x.Src == m.Src && x.Dst == m.Dst }) {
			t.Errorf("no mount %+v", m)
		}
	}
	if !slices.Contains(s.Spec.Env, "EXTRA=1") {
		t.Errorf("the kind's variables are missing: %q", s.Spec.Env)
	}
	if s.Spec.Bus.Mode != busproxy.Filtered || !strings.HasPrefix(s.Spec.Bus.ProxySocket, s.SlotDir+"/") {
		t.Errorf("bus %+v", s.Spec.Bus)
	}
	again, err := Plan(req, h, "proj-1-claude", prep)
	if err != nil || !cmp.Equal(again.Compiled, s.Compiled) {
		t.Errorf("a second plan differs: %v", err)
	}
	if _, err := os.Stat(nowhere); err == nil {
		t.Fatalf("%s exists: a plan made it", nowhere)
	}
}

// TestPlanStrict: a strict plan from what its mode gathered: the preset's
// Spec, compiled; the host's secret-looking variables and those the
// options took from the host are redacted for explain; --net warns; a box
// prepared for another slot is refused.
func TestPlanStrict(t *testing.T) {
	h := handHost()
	o := StrictOptions{
		Kind: KindCodex, Slot: "proj-1-codex", Command: []string{"codex"}, Repo: nowhere + "/src/proj", Cwd: nowhere + "/src/proj",
		Home: nowhere + "/home", User: "u", HostEnv: h.Env, AisanState: []string{h.AisanHome},
		StateDir: nowhere + "/home/.aisan/state/proj-1-codex", ExtraEnv: []string{"FROM_HOST=value", "OPENAI_API_KEY=sk-x"},
		Egress:  []Endpoint{{Name: "codex", Backend: "codex", Var: "AISAN_EGRESS_CODEX", HTTP: true}},
		EnvFile: h.SlotDir("proj-1-codex") + "/box.env", Net: true,
	}
	sp := StrictPlan{Options: o, Secret: []string{"FROM_HOST"}, BindFiles: []string{"/b.toml"}, Notes: []string{"a note"}, Explain: "\nMCP servers:\n  none\n"}
	req := Request{Kind: KindCodex}
	s, err := Plan(req, h, "proj-1-codex", Prepared{Strict: &sp})
	if err != nil {
		t.Fatal(err)
	}
	if s.Strict == nil || !cmp.Equal(s.Strict.Options, o) {
		t.Fatalf("strict plan %+v", s.Strict)
	}
	secret := s.Strict.SecretNames(s.Spec.Env)
	for _, k := range []string{"FROM_HOST", "OPENAI_API_KEY"} {
		if !slices.Contains(secret, k) {
			t.Errorf("%s is not redacted: %q", k, secret)
		}
	}
	if len(sp.Secret) != 1 {
		t.Errorf("Plan changed the gathered secrets: %q", sp.Secret)
	}
	if len(s.Warnings) != 2 || s.Warnings[0] != "a note" || !strings.HasPrefix(s.Warnings[1], "--net:") {
		t.Errorf("warnings %q", s.Warnings)
	}
	if s.Spec.Namespaces.Net || s.Compiled.EnvFile != o.EnvFile || !slices.Contains(s.Spec.Env, "AISAN_JAIL=proj-1-codex") {
		t.Errorf("spec %+v", s.Spec)
	}
	if s.Strict.BwrapVersion != ([3]int{}) {
		t.Errorf("bwrap's version named without an overlay: %v", s.Strict.BwrapVersion)
	}
	if _, err := Plan(req, h, "other-1-codex", Prepared{Strict: &sp}); err == nil {
		t.Error("a box prepared for another slot was planned")
	}
	if _, err := os.Stat(nowhere); err == nil {
		t.Fatalf("%s exists: a plan made it", nowhere)
	}
}

// TestPlanDenyListWd: a deny-list jail starts in the directory as the
// caller's PWD names it (bwrap sets PWD to its --chdir), while the slot
// and its history stay keyed by the real path.
func TestPlanDenyListWd(t *testing.T) {
	h := handHost()
	h.Wd = nowhere + "/link/proj"
	s, err := Plan(Request{Kind: KindRun, Args: []string{"true"}}, h, "proj-1-run", Prepared{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Spec.Cwd != h.Wd {
		t.Errorf("cwd %q, want %q", s.Spec.Cwd, h.Wd)
	}
	h.Wd = ""
	if s, err = Plan(Request{Kind: KindRun, Args: []string{"true"}}, h, "proj-1-run", Prepared{}); err != nil || s.Spec.Cwd != h.Cwd {
		t.Errorf("without Wd: cwd %q (%v), want %q", s.Spec.Cwd, err, h.Cwd)
	}
}
