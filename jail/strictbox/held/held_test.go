package held

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aisan-dev/aisan/jail/strictbox/protect"
)

// fixture is a repository with .claude/settings.json and no .envrc, and
// a prepared set for both.
func fixture(t *testing.T) (repo, set string) {
	t.Helper()
	d, _ := filepath.EvalSymlinks(t.TempDir())
	repo = filepath.Join(d, "repo")
	os.MkdirAll(filepath.Join(repo, ".claude"), 0o755)
	os.WriteFile(filepath.Join(repo, ".claude/settings.json"), []byte("{}\n"), 0o644)
	set = NewSetDir(filepath.Join(d, "home"), "repo-1-claude", time.Now())
	m := Manifest{Slot: "repo-1-claude", Repo: repo, Items: []protect.Item{
		{Path: filepath.Join(repo, ".claude"), Dir: true, How: protect.Copy},
		{Path: filepath.Join(repo, ".envrc"), How: protect.Create},
		{Path: filepath.Join(repo, "deep/er/hooks"), Dir: true, How: protect.Create},
	}}
	if err := Prepare(set, m); err != nil {
		t.Fatal(err)
	}
	return repo, set
}

func TestNothingChangedLeavesNothing(t *testing.T) {
	repo, set := fixture(t)
	for _, p := range []string{".envrc", "deep/er/hooks"} {
		if _, err := os.Lstat(filepath.Join(repo, p)); err != nil {
			t.Fatalf("mount point %s not made: %v", p, err)
		}
	}
	r, err := End(set)
	if err != nil || len(r.Files) != 0 || len(r.Kept) != 0 {
		t.Fatalf("%+v %v", r, err)
	}
	for _, p := range []string{".envrc", "deep"} {
		if _, err := os.Lstat(filepath.Join(repo, p)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left after the run: %v", p, err)
		}
	}
	if _, err := os.Lstat(set); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an empty set is kept: %v", err)
	}
}

func TestHeldThenApplied(t *testing.T) {
	repo, set := fixture(t)
	// The box: edits the copy, fills the new .envrc, plants a hook and a
	// nested .claude where nothing was protected.
	os.WriteFile(filepath.Join(Work(set, 0), "settings.json"), []byte("{\"hooks\":1}\n"), 0o644)
	os.WriteFile(filepath.Join(Work(set, 1)), []byte("evil\n"), 0o644)
	os.WriteFile(filepath.Join(Work(set, 2), "pre-commit"), []byte("#!/bin/sh\n\x1b[2Jtrue\n"), 0o755)
	os.MkdirAll(filepath.Join(repo, "sub/.claude"), 0o755)
	os.WriteFile(filepath.Join(repo, "sub/.claude/settings.json"), []byte("x"), 0o644)
	r, err := End(set)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{".claude/settings.json", ".envrc", "deep/er/hooks/pre-commit", "sub/.claude"}
	for i := range want {
		want[i] = filepath.Join(repo, want[i])
	}
	if strings.Join(r.Files, " ") != strings.Join(want, " ") {
		t.Fatalf("held %q, want %q", r.Files, want)
	}
	if !strings.Contains(r.Summary(repo, "s"), ".claude/settings.json, .envrc, deep/er/hooks/pre-commit, sub/.claude;") {
		t.Errorf("summary %q", r.Summary(repo, "s"))
	}
	// Nothing reached the repository.
	if b, _ := os.ReadFile(filepath.Join(repo, ".claude/settings.json")); string(b) != "{}\n" {
		t.Errorf("the repository's settings: %q", b)
	}
	for _, p := range []string{".envrc", "deep", "sub/.claude"} {
		if _, err := os.Lstat(filepath.Join(repo, p)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is in the repository: %v", p, err)
		}
	}
	cs, err := Changes(set)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	Render(&out, repo, cs)
	for _, w := range []string{"modified .claude/settings.json\n", "-{}\n+{\"hooks\":1}\n", "added .envrc\n", "+\\x1b[2Jtrue\n", "added sub/.claude\n"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("diff lacks %q:\n%s", w, out.String())
		}
	}
	if err := Apply(set); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{".claude/settings.json": "{\"hooks\":1}\n", ".envrc": "evil\n", "sub/.claude/settings.json": "x"} {
		if b, _ := os.ReadFile(filepath.Join(repo, p)); string(b) != want {
			t.Errorf("%s after apply: %q, want %q", p, b, want)
		}
	}
	if fi, err := os.Stat(filepath.Join(repo, "deep/er/hooks/pre-commit")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("the hook after apply: %v %v", fi, err)
	}
	if _, err := os.Lstat(set); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an applied set is kept: %v", err)
	}
}

func TestApplyNeverClobbers(t *testing.T) {
	repo, set := fixture(t)
	os.WriteFile(filepath.Join(Work(set, 0), "settings.json"), []byte("box\n"), 0o644)
	os.WriteFile(Work(set, 1), []byte("box\n"), 0o644)
	if _, err := End(set); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(repo, ".claude/settings.json"), []byte("host\n"), 0o644)
	err := Apply(set)
	var ce *ConflictError
	if !errors.As(err, &ce) || len(ce.Conflicts) != 1 || !strings.Contains(err.Error(), ".claude/settings.json") {
		t.Fatalf("apply over a host change: %v", err)
	}
	var out bytes.Buffer
	ce.RenderConflicts(&out)
	if !strings.Contains(out.String(), "-host\n+box\n") {
		t.Errorf("conflict shown as:\n%s", out.String())
	}
	// Nothing was written, not even the change without a conflict.
	if _, err := os.Lstat(filepath.Join(repo, ".envrc")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf(".envrc written despite the conflict: %v", err)
	}
	if err := Discard(set); err != nil {
		t.Fatal(err)
	}
}

// TestApplyFollowsNoSymlink: a directory of the repository replaced by a
// symlink after the box (to a place outside) is not written through.
func TestApplyFollowsNoSymlink(t *testing.T) {
	repo, set := fixture(t)
	os.WriteFile(filepath.Join(Work(set, 2), "pre-commit"), []byte("x"), 0o755)
	if _, err := End(set); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(filepath.Dir(repo), "outside")
	os.MkdirAll(filepath.Join(outside, "er/hooks"), 0o755)
	os.Symlink(outside, filepath.Join(repo, "deep"))
	if err := Apply(set); err == nil {
		t.Fatal("applied through a symlink")
	}
	if _, err := os.Lstat(filepath.Join(outside, "er/hooks/pre-commit")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("written through the symlink: %v", err)
	}
}

func TestList(t *testing.T) {
	_, set := fixture(t)
	home := filepath.Dir(filepath.Dir(filepath.Dir(set)))
	sets, problems := List(home, "")
	if len(problems) != 0 || len(sets) != 1 || sets[0].State != Open || sets[0].Slot != "repo-1-claude" {
		t.Fatalf("%+v %v", sets, problems)
	}
	// The same sets, without reading what they hold.
	only, problems := Manifests(home, "")
	if len(problems) != 0 || len(only) != 1 || only[0].Dir != sets[0].Dir || only[0].State != Open || only[0].Files != nil {
		t.Fatalf("%+v %v", only, problems)
	}
}

// TestMountPointsOutliveTheFirstBox: two boxes in one repository; the
// first to end leaves the run's mount points to the other (removing them
// would detach its mounts), which removes them at its end.
func TestMountPointsOutliveTheFirstBox(t *testing.T) {
	repo, first := fixture(t)
	home := filepath.Dir(filepath.Dir(filepath.Dir(first)))
	second := NewSetDir(home, "repo-2-claude", time.Now())
	if err := Prepare(second, Manifest{Slot: "repo-2-claude", Repo: repo, Items: []protect.Item{
		{Path: filepath.Join(repo, ".envrc"), How: protect.Copy},
	}}); err != nil {
		t.Fatal(err)
	}
	if _, err := End(first); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(repo, ".envrc")); err != nil {
		t.Fatalf("the first box's end removed a mount point the second box stands on: %v", err)
	}
	if _, err := End(second); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".envrc", "deep"} {
		if _, err := os.Lstat(filepath.Join(repo, p)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left after both boxes: %v", p, err)
		}
	}
}

// BenchmarkEndBesideHeldSets ends a box's set while eight others wait
// for review, each holding a changed copy of a 300-file directory: the
// figure is the end of one box, which must not grow with what the others
// hold.
func BenchmarkEndBesideHeldSets(b *testing.B) {
	d, _ := filepath.EvalSymlinks(b.TempDir())
	repo, home := filepath.Join(d, "repo"), filepath.Join(d, "home")
	dir := filepath.Join(repo, ".claude")
	os.MkdirAll(dir, 0o755)
	for i := range 300 {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d", i)), bytes.Repeat([]byte{'a' + byte(i%26)}, 2048), 0o644)
	}
	// A new file's mount point is made for each run, and removed or
	// handed over to another running box at its end.
	items := []protect.Item{{Path: dir, Dir: true, How: protect.Copy}, {Path: filepath.Join(repo, ".envrc"), How: protect.Create}}
	prepare := func(slot string) string {
		set := NewSetDir(home, slot, time.Now())
		if err := Prepare(set, Manifest{Slot: slot, Repo: repo, Items: items}); err != nil {
			b.Fatal(err)
		}
		return set
	}
	for i := range 8 {
		set := prepare(fmt.Sprintf("repo-%d-claude", i))
		os.WriteFile(filepath.Join(Work(set, 0), "f000"), []byte("changed"), 0o644)
		if r, err := End(set); err != nil || len(r.Files) != 1 {
			b.Fatalf("held set %d: %+v %v", i, r, err)
		}
	}
	for b.Loop() {
		b.StopTimer()
		set := prepare("repo-9-claude")
		b.StartTimer()
		if r, err := End(set); err != nil || len(r.Files) != 0 {
			b.Fatalf("%+v %v", r, err)
		}
	}
}

// TestManifestTooLargeListed: a held set whose manifest grew past what is
// read back (the box planted that many paths) is still listed, as
// unreadable, and can be discarded.
func TestManifestTooLargeListed(t *testing.T) {
	_, set := fixture(t)
	home := filepath.Dir(filepath.Dir(filepath.Dir(set)))
	if err := os.WriteFile(filepath.Join(set, manifestName), bytes.Repeat([]byte(" "), maxManifest+1), 0o600); err != nil {
		t.Fatal(err)
	}
	sets, problems := List(home, "")
	if len(sets) != 1 || sets[0].State != Unreadable || sets[0].Slot != "repo-1-claude" || sets[0].Problem == nil || len(problems) != 0 {
		t.Fatalf("listed %+v, problems %v", sets, problems)
	}
	if err := Apply(set); err == nil {
		t.Error("applied a set whose manifest cannot be read")
	}
	if err := Discard(set); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(set); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the set is left: %v", err)
	}
}

// TestSetEntriesBounded: what a set holds is read up to a bound over all
// its copies, not only per copy: past it, the copy being read stands as
// one entry nobody read, shown so and never applied.
func TestSetEntriesBounded(t *testing.T) {
	defer func(n int) { maxSetEntries = n }(maxSetEntries)
	maxSetEntries = 30
	repo, set := fixture(t)
	for i := range 20 {
		os.WriteFile(filepath.Join(Work(set, 0), fmt.Sprintf("f%d", i)), []byte("x"), 0o644)
		os.WriteFile(filepath.Join(Work(set, 2), fmt.Sprintf("h%d", i)), []byte("x"), 0o755)
	}
	if _, err := End(set); err != nil {
		t.Fatal(err)
	}
	cs, err := Changes(set)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	Render(&out, repo, cs)
	if !strings.Contains(out.String(), "runs past 30 entries") {
		t.Errorf("a set past the bound listed as:\n%s", out.String())
	}
	if err := Apply(set); err == nil {
		t.Error("applied a set past the bound")
	}
	if _, err := os.Lstat(filepath.Join(repo, "deep")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("written despite the refusal: %v", err)
	}
}
