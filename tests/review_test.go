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

// TestReviewManySwept: the box plants more than a set's record was
// read back at (a thousand .envrc files at paths near PATH_MAX, each
// swept out of the repository on its own). The set must still be listed
// by 'aisan review' and 'aisan list', and --discard must drop it: a set
// nothing lists or drops would hide what the box left, and stay forever.
func TestReviewManySwept(t *testing.T) {
	repo, home, env := strictRepo(t)
	slot := slotName(repo, "run")
	r := strict(t, repo, env, nil, "sh", "-c", `A=$(printf '%0250d' 0); P=$A; i=1; while [ $i -lt 15 ]; do P=$P/$A; i=$((i+1)); done; `+
		`mkdir -p "$P" && cd "$P" && i=0 && while [ $i -lt 1300 ]; do mkdir d$i && : > d$i/.envrc || exit 1; i=$((i+1)); done; echo planted`)
	if r.code != 0 || !strings.Contains(r.stdout, "planted") {
		t.Fatalf("the box: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "held for review") {
		t.Fatalf("the box's end does not say it held the planted files: %q", r.stderr)
	}
	l := aisan(t, env, "", "review")
	if !strings.Contains(l.stdout, slot) {
		t.Errorf("aisan review does not list the slot: %q %q", l.stdout, l.stderr)
	}
	if l := aisan(t, env, "", "list"); !strings.Contains(l.stderr, "held for review in "+slot) {
		t.Errorf("aisan list does not point at the held set: %q %q", l.stdout, l.stderr)
	}
	rv := review(t, env, slot)
	if rv.code == 0 && !strings.Contains(rv.stdout, "added ") {
		t.Errorf("aisan review %s shows nothing: %q %q", slot, rv.stdout, rv.stderr)
	}
	if rv.code != 0 && !strings.Contains(rv.stderr, "--discard") {
		t.Errorf("aisan review %s cannot show the set and does not say how to drop it: %q %q", slot, rv.stdout, rv.stderr)
	}
	if a := review(t, env, slot, "--apply"); rv.code != 0 && a.code == 0 {
		t.Errorf("--apply of what the review could not show: %q %q", a.stdout, a.stderr)
	}
	if d := review(t, env, slot, "--discard"); d.code != 0 {
		t.Errorf("--discard: exit %d, %q %q", d.code, d.stdout, d.stderr)
	}
	if ents, _ := os.ReadDir(filepath.Join(home, ".aisan", "held", slot)); len(ents) != 0 {
		t.Errorf("after --discard the store still holds %d sets of the slot", len(ents))
	}
}
