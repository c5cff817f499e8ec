package agent

import (
	"slices"
	"testing"
)

func TestCredentialsCoverEveryAgentAndTheEnvironment(t *testing.T) {
	env := map[string]string{"CODEX_HOME": "/srv/codex", "XDG_CONFIG_HOME": "/x/cfg", "KUBECONFIG": "/k/a:/k/b", "CLAUDE_CONFIG_DIR": "relative"}
	got := Credentials("/home/u", func(k string) string { return env[k] })
	for _, want := range []string{
		"/home/u/.claude/.credentials.json", "/home/u/.codex/auth.json", "/srv/codex/auth.json",
		"/home/u/.local/share/opencode/auth.json", "/home/u/.ssh", "/home/u/.aws", "/home/u/.netrc",
		"/x/cfg/gh/hosts.yml", "/k/a", "/k/b",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("credentials lack %s: %q", want, got)
		}
	}
	if !slices.IsSorted(got) {
		t.Errorf("not sorted: %q", got)
	}
	for _, p := range got {
		if p == "relative/.credentials.json" {
			t.Errorf("a relative CLAUDE_CONFIG_DIR was trusted")
		}
	}
}

func TestByKind(t *testing.T) {
	for _, k := range []string{"claude", "codex", "opencode"} {
		a, ok := ByKind(k)
		if !ok || a.Binary == "" || a.StateEnv == "" || a.InstallHint == "" {
			t.Errorf("%s: %+v %v", k, a, ok)
		}
	}
	if _, ok := ByKind("run"); ok {
		t.Error("run is not an agent")
	}
}
