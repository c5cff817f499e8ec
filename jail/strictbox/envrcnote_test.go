package strictbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aisan-dev/aisan/jail"
)

func TestEnvrcNote(t *testing.T) {
	root := t.TempDir()
	sub := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := envrcNote(sub, nil); got != "" {
		t.Errorf("no .envrc: %q", got)
	}
	envrc := filepath.Join(root, "a", ".envrc")
	os.WriteFile(envrc, []byte("PATH_add bin\nexport DATABASE_URL=postgres://u:pw@h/db\nexport NODE_ENV=dev PATH\ndotenv\n"), 0o644)
	got := envrcNote(sub, []string{"NODE_ENV"})
	for _, want := range []string{envrc, "DATABASE_URL", "dotenv", "--env NAME"} {
		if !strings.Contains(got, want) {
			t.Errorf("note %q lacks %q", got, want)
		}
	}
	for _, not := range []string{"pw", "NODE_ENV", "PATH,"} {
		if strings.Contains(got, not) {
			t.Errorf("note %q says %q", got, not)
		}
	}
	// Everything passed: nothing to say.
	os.WriteFile(envrc, []byte("export A=1\n"), 0o644)
	if got := envrcNote(sub, []string{"A=2"}); got != "" {
		t.Errorf("every name passed: %q", got)
	}
	// The nearest .envrc wins, and one that is not a regular file is not read.
	near := filepath.Join(sub, ".envrc")
	if err := os.Symlink(envrc, near); err != nil {
		t.Fatal(err)
	}
	if got := envrcNote(sub, nil); got != "" {
		t.Errorf("a linked .envrc was read: %q", got)
	}
	os.Remove(near)
	names := "export " + strings.Repeat("V", 1)
	for i := range 9 {
		names += " N" + string(rune('0'+i)) + "=1"
	}
	os.WriteFile(envrc, []byte(names+"\n"), 0o644)
	if got := envrcNote(sub, nil); !strings.Contains(got, "and 4 more") {
		t.Errorf("a long list is not cut: %q", got)
	}
}

func TestAgentRunNote(t *testing.T) {
	if got := agentRunNote(jail.KindRun, []string{"/usr/local/bin/claude", "-p", "hi"}); !strings.Contains(got, "'aisan claude --strict -- ARGS'") {
		t.Errorf("claude by run: %q", got)
	}
	if got := agentRunNote(jail.KindRun, []string{"codex"}); !strings.Contains(got, "aisan codex --strict") {
		t.Errorf("codex by run: %q", got)
	}
	for _, c := range [][]string{{"go", "test"}, {"claude-helper"}} {
		if got := agentRunNote(jail.KindRun, c); got != "" {
			t.Errorf("%q: %q", c, got)
		}
	}
	if got := agentRunNote(jail.Kind("claude"), []string{"claude"}); got != "" {
		t.Errorf("aisan claude --strict: %q", got)
	}
}
