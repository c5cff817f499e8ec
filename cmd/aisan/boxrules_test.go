//go:build !aisanfront

package main

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aisan-dev/aisan/jail/strictbox"
)

// TestClaudeBoxRulesFile: no settings file gives the box no rules (and
// clears what an earlier seed or the box left, its switches for hooks
// too); one that does not parse stops the
// launch with the file and a hint, since the box would lose its rules.
func TestClaudeBoxRulesFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "settings.json")
	v := strictbox.RulesView{Shows: func(string) bool { return false }, LookPath: func(string) string { return "" },
		HostLookPath: func(string) string { return "" }, Mountable: func(string) error { return nil }, Home: dir, Project: dir}
	r, err := claudeBoxRules(file, v)
	if err != nil || len(r.Settings) != 0 || !slices.Equal(r.Keys[:4], []string{"permissions", "hooks", "disableAllHooks", "env"}) || !slices.Contains(r.Keys, "model") {
		t.Fatalf("no file: %+v, %v", r, err)
	}
	os.WriteFile(file, []byte(`{"permissions": {"deny": ["Bash(touch:*)"]`), 0o600)
	_, err = claudeBoxRules(file, v)
	var h interface{ Hints() []string }
	if err == nil || !strings.Contains(err.Error(), file) || !errors.As(err, &h) || len(h.Hints()) == 0 {
		t.Fatalf("a broken file: %v", err)
	}
	os.WriteFile(file, []byte(`{"permissions": {"deny": ["Bash(touch:*)"]}}`), 0o600)
	if r, err = claudeBoxRules(file, v); err != nil || !strings.Contains(string(r.Settings["permissions"]), "Bash(touch:*)") {
		t.Fatalf("the deny rule: %+v, %v", r, err)
	}
}

// TestCodexBoxRules: the launch names the user's Codex hooks, which the
// box's Codex does not run, and says nothing without them.
func TestCodexBoxRules(t *testing.T) {
	dir := t.TempDir()
	if r := codexBoxRules(dir); len(r.Left) != 0 {
		t.Errorf("no hooks, yet %q", r.Left)
	}
	os.WriteFile(filepath.Join(dir, "hooks.json"), []byte(`{"hooks":{}}`), 0o600)
	if r := codexBoxRules(dir); len(r.Left) != 1 || r.Source != filepath.Join(dir, "hooks.json") {
		t.Errorf("hooks: %+v", r)
	}
}
