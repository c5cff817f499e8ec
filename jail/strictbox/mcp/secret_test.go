package mcp

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFilterEnv(t *testing.T) {
	src := Source{File: "/h/.claude.json"}
	imp := Import{Client: Claude, Servers: []Server{
		{Name: "gh", Client: Claude, Source: src, Command: "gh-mcp", Env: []EnvVar{{"GITHUB_TOKEN", "ghp_0123456789abcdefghij0123456789abcdef"}, {"LOG", "1"}, {"OTHER_KEY", "v"}}},
		{Name: "plain", Client: Claude, Source: src, Command: "p", Env: []EnvVar{{"REF_TOKEN", "${REF_TOKEN}"}}},
	}}
	orig := cloneImport(imp)
	got, withheld, passed := FilterEnv(imp, []string{"GITHUB_TOKEN"})
	if d := cmp.Diff(orig, imp); d != "" {
		t.Errorf("FilterEnv modified its input:\n%s", d)
	}
	if d := cmp.Diff([]EnvVar{{"GITHUB_TOKEN", "ghp_0123456789abcdefghij0123456789abcdef"}, {"LOG", "1"}}, got.Servers[0].Env); d != "" {
		t.Errorf("gh env (-want +got):\n%s", d)
	}
	if d := cmp.Diff(imp.Servers[1].Env, got.Servers[1].Env); d != "" {
		t.Errorf("a reference must pass unchanged:\n%s", d)
	}
	if d := cmp.Diff([]Withheld{{Server: "gh", Client: Claude, Source: src, Name: "OTHER_KEY", Why: "name"}}, withheld); d != "" {
		t.Errorf("withheld (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]Passed{{Server: "gh", Client: Claude, Source: src, Name: "GITHUB_TOKEN"}}, passed); d != "" {
		t.Errorf("passed (-want +got):\n%s", d)
	}
	imp.Dropped = []Dropped{{Name: "web", Client: Claude, Source: src, Reason: "remote (http)"}}
	lines := Lines(imp, withheld, passed)
	want := []string{
		`claude mcp server "web" from /h/.claude.json not imported: remote (http)`,
		`claude mcp server "gh" from /h/.claude.json: env OTHER_KEY looks like a secret (by its name) and is not copied; allow it with mcp_env`,
		`claude mcp server "gh" from /h/.claude.json receives env GITHUB_TOKEN (allowed by mcp_env)`,
	}
	if d := cmp.Diff(want, lines); d != "" {
		t.Errorf("lines (-want +got):\n%s", d)
	}
	for _, l := range lines {
		if strings.Contains(l, "ghp_") || strings.Contains(l, "v\"") {
			t.Errorf("a value leaked into %q", l)
		}
	}
	r := Redacted(imp.Servers[0])
	if r.Env[0].Value != "[redacted]" || r.Env[1].Value != "1" || r.Env[2].Value != "[redacted]" || imp.Servers[0].Env[0].Value == "[redacted]" {
		t.Errorf("Redacted = %+v (input now %+v)", r.Env, imp.Servers[0].Env)
	}
}

func cloneImport(imp Import) Import {
	c := imp
	c.Servers = nil
	for _, s := range imp.Servers {
		s.Env = append([]EnvVar(nil), s.Env...)
		s.Args = append([]string(nil), s.Args...)
		c.Servers = append(c.Servers, s)
	}
	return c
}

func TestSummary(t *testing.T) {
	if s := Summary(Import{Client: Codex}); s != "" {
		t.Errorf("no servers: %q", s)
	}
	s := Summary(Import{Client: Codex, Servers: []Server{{Name: "a"}, {Name: "b"}}})
	if s != "codex: 2 mcp server(s) start in the box (a, b)" {
		t.Errorf("kept only: %q", s)
	}
	s = Summary(Import{Client: Codex, Dropped: []Dropped{{Name: "w", Reason: "remote", Source: Source{File: "/c"}}}})
	if s != "codex: 0 mcp server(s) start in the box; not imported: w (remote; /c)" {
		t.Errorf("dropped only: %q", s)
	}
}
