package tests

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The review tests take the user's step after a strict box: read
// 'aisan review SLOT', then apply it. What --apply writes must be what
// the review showed.

// TestReviewApplyWritesOnlyWhatWasShown: the slot holds a harmless edit
// from a first box; a second box of the same slot is still running when
// the user reads the review, and ends before the user's --apply with a
// git hook of its own. --apply must not write the hook nobody was shown:
// it shows it and writes nothing, and the next --apply (the user has now
// read it) writes both.
func TestReviewApplyWritesOnlyWhatWasShown(t *testing.T) {
	repo, _, env := strictRepo(t)
	slot := slotName(repo, "run")
	if r := strict(t, repo, env, nil, "sh", "-c", `mkdir -p .claude && echo '{"shown":1}' > .claude/settings.json && echo first-done`); r.code != 0 || !strings.Contains(r.stdout, "first-done") {
		t.Fatalf("the first box: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	at := func(name string) string { return filepath.Join(repo, name) }
	second := make(chan result, 1)
	go func() {
		second <- strict(t, repo, env, nil, "sh", "-c", `: >second-up; i=0; while [ ! -e second-go ] && [ $i -lt 800 ]; do sleep 0.05; i=$((i+1)); done; `+
			`printf '#!/bin/sh\necho never-shown\n' > .git/hooks/pre-commit && chmod 755 .git/hooks/pre-commit && echo second-done`)
	}()
	waitFor(t, 40*time.Second, "the second box to start", func() bool { _, err := os.Stat(at("second-up")); return err == nil })
	rv := review(t, env, slot)
	if rv.code != 0 || !strings.Contains(rv.stdout, `+{"shown":1}`) {
		t.Fatalf("aisan review while the second box runs: exit %d, %q %q", rv.code, rv.stdout, rv.stderr)
	}
	if strings.Contains(rv.stdout, "never-shown") {
		t.Fatalf("the review shows the running box's hook already: %q", rv.stdout)
	}
	os.WriteFile(at("second-go"), nil, 0o644)
	if r2 := <-second; r2.code != 0 || !strings.Contains(r2.stdout, "second-done") {
		t.Fatalf("the second box: exit %d, %q %q", r2.code, r2.stdout, r2.stderr)
	}
	hook := filepath.Join(repo, ".git", "hooks", "pre-commit")
	a := review(t, env, slot, "--apply")
	if _, err := os.Lstat(hook); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("--apply wrote the hook of a box that ended after the review, never shown (exit %d): %q %q", a.code, a.stdout, a.stderr)
	}
	if _, err := os.Lstat(at(".claude/settings.json")); err == nil && a.code != 0 {
		t.Errorf("--apply refused, yet wrote part of what it held: %q", a.stderr)
	}
	if a.code == 0 || !strings.Contains(a.stdout, "never-shown") || !strings.Contains(a.stderr, "aisan review "+slot) {
		t.Errorf("--apply does not refuse showing what the review did not: exit %d, %q %q", a.code, a.stdout, a.stderr)
	}
	// The user has read it now.
	applyHeld(t, env, slot)
	if b, err := os.ReadFile(hook); err != nil || !strings.Contains(string(b), "never-shown") {
		t.Errorf("the second --apply did not write the hook it showed: %q %v", b, err)
	}
	if b, err := os.ReadFile(at(".claude/settings.json")); err != nil || !strings.Contains(string(b), `"shown":1`) {
		t.Errorf("the second --apply did not write the first box's edit: %q %v", b, err)
	}
}
