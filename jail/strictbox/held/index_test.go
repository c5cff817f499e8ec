package held

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aisan-dev/aisan/jail/jailtest"
	"github.com/aisan-dev/aisan/jail/strictbox/protect"
)

// gitRepo is a repository in a fresh directory d for the index tests
// (its set's home is d/home): git runs in a directory of it and write
// writes a file of it, each relative to it.
type gitRepo struct {
	t       *testing.T
	d, repo string
	gitBin  string
}

func newGitRepo(t *testing.T) *gitRepo {
	t.Helper()
	gitBin, err := exec.LookPath("git")
	jailtest.Need(t, "git", err)
	d, _ := filepath.EvalSymlinks(t.TempDir())
	g := &gitRepo{t: t, d: d, repo: filepath.Join(d, "repo"), gitBin: gitBin}
	os.MkdirAll(g.repo, 0o755)
	g.git("", "init", "-q")
	return g
}

// gitIn runs git in dir with input.
func (g *gitRepo) gitIn(dir, input string, args ...string) string {
	g.t.Helper()
	cmd := exec.Command(g.gitBin, args...)
	cmd.Dir = filepath.Join(g.repo, dir)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	cmd.Stdin = strings.NewReader(input)
	out, err := cmd.CombinedOutput()
	if err != nil {
		g.t.Fatalf("git %q in %s: %v: %s", args, cmd.Dir, err, out)
	}
	return string(out)
}

func (g *gitRepo) git(dir string, args ...string) string {
	g.t.Helper()
	return g.gitIn(dir, "", args...)
}

func (g *gitRepo) write(p, data string) {
	g.t.Helper()
	p = filepath.Join(g.repo, p)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(data), 0o755); err != nil {
		g.t.Fatal(err)
	}
}

// prepare makes the set for m (the repository's, with its git dir) as a
// launch does, apart in time from what came before and comes after.
func (g *gitRepo) prepare(m Manifest) string {
	g.t.Helper()
	time.Sleep(20 * time.Millisecond)
	m.Slot, m.Repo, m.Start = "repo-1-claude", g.repo, time.Now()
	m.GitDir, m.CommonDir = filepath.Join(g.repo, ".git"), filepath.Join(g.repo, ".git")
	set := NewSetDir(filepath.Join(g.d, "home"), m.Slot, time.Now())
	if err := Prepare(set, m); err != nil {
		g.t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	return set
}

// TestIndexPutBack: the box stages its own version of a held file
// (and a file at a mount point made for it, and one the end sweeps);
// the end puts their index entries back as they were at launch, says
// so, and leaves the box's staging of other files alone.
func TestIndexPutBack(t *testing.T) {
	g := newGitRepo(t)
	repo, run, write := g.repo, func(args ...string) string { t.Helper(); return g.git("", args...) }, g.write
	write("scripts/check.sh", "#!/bin/sh\nexit 0\n")
	write("src/main.go", "package main\n")
	run("add", "-A")
	run("commit", "-q", "-m", "init")
	set := g.prepare(Manifest{Items: []protect.Item{
		{Path: filepath.Join(repo, "scripts/check.sh"), How: protect.Copy},
		{Path: filepath.Join(repo, ".envrc"), How: protect.Create},
	}})
	// The box: its version of the held script staged (the repository's
	// file is the user's: the box wrote its copy), an .envrc staged at
	// the mount point, and a change of its own work staged.
	write("scripts/check.sh", "#!/bin/sh\ntouch /tmp/pwned\n")
	write("src/main.go", "package main // the box's\n")
	run("add", "scripts/check.sh", "src/main.go")
	run("add", "-f", ".envrc")
	write("scripts/check.sh", "#!/bin/sh\nexit 0\n")

	r, err := End(set)
	if err != nil {
		t.Fatalf("End: %v", err)
	}
	want := []string{filepath.Join(repo, ".envrc"), filepath.Join(repo, "scripts/check.sh")}
	if !slices.Equal(r.Unstaged, want) {
		t.Errorf("unstaged %q, want %q", r.Unstaged, want)
	}
	staged := run("diff", "--cached", "--name-only")
	if strings.TrimSpace(staged) != "src/main.go" {
		t.Errorf("staged after the end: %q, want only src/main.go", staged)
	}
	if l := strings.Join(r.Lines(repo, "repo-1-claude"), "\n"); !strings.Contains(l, "staged its own version") || !strings.Contains(l, "scripts/check.sh") {
		t.Errorf("the end does not say what it put back:\n%s", l)
	}
}

// TestNestedIndexPutBack: the same in a repository nested in the box's
// (its hooks run what its index has): the end puts back the nested
// index's entry of a held file there, and leaves the box's repository's
// index and the rest of the nested one alone.
func TestNestedIndexPutBack(t *testing.T) {
	g := newGitRepo(t)
	sub := filepath.Join(g.repo, "tools", "sub")
	write := func(p, data string) { t.Helper(); g.write(strings.TrimPrefix(p, g.repo+"/"), data) }
	run := func(dir string, args ...string) string {
		t.Helper()
		return g.git(strings.TrimPrefix(strings.TrimPrefix(dir, g.repo), "/"), args...)
	}
	os.MkdirAll(sub, 0o755)
	run(sub, "init", "-q")
	write(filepath.Join(sub, "scripts/check.sh"), "#!/bin/sh\nexit 0\n")
	write(filepath.Join(sub, "README"), "sub\n")
	run(sub, "add", "-A")
	run(sub, "commit", "-q", "-m", "init")
	set := g.prepare(Manifest{
		Items:       []protect.Item{{Path: filepath.Join(sub, "scripts/check.sh"), How: protect.Copy}},
		Known:       []string{filepath.Join(sub, ".git")},
		NestedIndex: []NestedIndex{{Root: sub, GitDir: filepath.Join(sub, ".git")}}})
	write(filepath.Join(sub, "scripts/check.sh"), "#!/bin/sh\ntouch /tmp/pwned\n")
	write(filepath.Join(sub, "README"), "the box's\n")
	run(sub, "add", "scripts/check.sh", "README")
	write(filepath.Join(sub, "scripts/check.sh"), "#!/bin/sh\nexit 0\n")

	r, err := End(set)
	if err != nil {
		t.Fatalf("End: %v", err)
	}
	if want := []string{filepath.Join(sub, "scripts/check.sh")}; !slices.Equal(r.Unstaged, want) {
		t.Errorf("unstaged %q, want %q", r.Unstaged, want)
	}
	if staged := strings.TrimSpace(run(sub, "diff", "--cached", "--name-only")); staged != "README" {
		t.Errorf("staged in the nested repository after the end: %q, want only README", staged)
	}
}

// TestCommittedSaid: the box commits its own version of a held script
// (and a change of its own work); the end says which held path its
// commits changed, and nothing of the rest.
func TestCommittedSaid(t *testing.T) {
	g := newGitRepo(t)
	repo, run, write := g.repo, func(args ...string) string { t.Helper(); return g.git("", args...) }, g.write
	write("scripts/check.sh", "#!/bin/sh\nexit 0\n")
	write("src/main.go", "package main\n")
	run("add", "-A")
	run("commit", "-q", "-m", "init")
	run("pack-refs", "--all")
	set := g.prepare(Manifest{Items: []protect.Item{{Path: filepath.Join(repo, "scripts/check.sh"), How: protect.Copy}}})
	write("scripts/check.sh", "#!/bin/sh\ntouch /tmp/pwned\n")
	write("src/main.go", "package main // the box's\n")
	run("commit", "-q", "-am", "the box's")
	write("scripts/check.sh", "#!/bin/sh\nexit 0\n")

	r, err := End(set)
	if err != nil {
		t.Fatalf("End: %v", err)
	}
	if want := []string{filepath.Join(repo, "scripts/check.sh")}; !slices.Equal(r.Committed, want) {
		t.Errorf("committed %q, want %q", r.Committed, want)
	}
	if l := strings.Join(r.Lines(repo, "repo-1-claude"), "\n"); !strings.Contains(l, "committed its own version") || !strings.Contains(l, "scripts/check.sh") || strings.Contains(l, "main.go") {
		t.Errorf("the end does not say what the box committed, or says more:\n%s", l)
	}
}

// TestBranchesSaid: the box leaves its version of a held script on a
// branch it makes, on one of the user's it moves (a packed one), in a
// stash, on a tag it makes (annotated), on one of the user's it moves,
// and on remote-tracking branches it writes (a new one, and the user's
// origin/main moved), and stays on the user's branch; a branch or tag
// that changes only what is not held, and the user's refs it left
// alone, are not said. A tag naming a blob is said as not compared.
func TestBranchesSaid(t *testing.T) {
	g := newGitRepo(t)
	repo, run, write := g.repo, func(args ...string) string { t.Helper(); return g.git("", args...) }, g.write
	write("scripts/check.sh", "#!/bin/sh\nexit 0\n")
	write("src/main.go", "package main\n")
	run("add", "-A")
	run("commit", "-q", "-m", "init")
	run("branch", "old")
	run("branch", "kept")
	run("tag", "v1")
	run("tag", "v0")
	run("update-ref", "refs/remotes/origin/main", "HEAD")
	run("pack-refs", "--all")
	home := strings.TrimSpace(run("symbolic-ref", "--short", "HEAD"))
	set := g.prepare(Manifest{Items: []protect.Item{{Path: filepath.Join(repo, "scripts/check.sh"), How: protect.Copy}}})
	// The box.
	run("checkout", "-q", "-b", "fix")
	write("scripts/check.sh", "#!/bin/sh\ntouch /tmp/pwned\n")
	run("commit", "-q", "-am", "the box's fix")
	run("checkout", "-q", "-b", "docs", home)
	write("src/main.go", "package main // docs\n")
	run("commit", "-q", "-am", "the box's docs")
	run("checkout", "-q", "old")
	write("scripts/check.sh", "#!/bin/sh\ntouch /tmp/pwned-old\n")
	run("commit", "-q", "-am", "the box moves old")
	run("checkout", "-q", home)
	run("tag", "-a", "-m", "release", "v2", "fix")
	run("tag", "-f", "v1", "old")
	run("tag", "v1-docs", "docs")
	run("update-ref", "refs/remotes/origin/main", "fix")
	run("update-ref", "refs/remotes/origin/feature", "old")
	blob := strings.TrimSpace(run("hash-object", "-w", "scripts/check.sh"))
	write(".git/refs/tags/blob", blob+"\n")
	write("scripts/check.sh", "#!/bin/sh\ntouch /tmp/pwned-stash\n")
	run("stash", "-q")
	// The box packs its refs: the end compares with packed-refs as it
	// was, not as the box left it.
	run("pack-refs", "--all")

	r, err := End(set)
	if err != nil {
		t.Fatalf("End: %v", err)
	}
	var got []string
	for _, b := range r.Branches {
		got = append(got, b.Ref+" "+strings.Join(b.Paths, ","))
	}
	check := filepath.Join(repo, "scripts/check.sh")
	want := []string{"refs/heads/fix " + check, "refs/heads/old " + check, "refs/remotes/origin/feature " + check, "refs/remotes/origin/main " + check, "refs/stash " + check, "refs/tags/v1 " + check, "refs/tags/v2 " + check}
	if !slices.Equal(got, want) {
		t.Errorf("branches %q, want %q", got, want)
	}
	l := strings.Join(r.Lines(repo, "repo-1-claude"), "\n")
	for _, w := range []string{"branches it made or moved", "fix (scripts/check.sh)", "old (scripts/check.sh)", "stash@{0} (scripts/check.sh)", "tag v1 (scripts/check.sh)", "tag v2 (scripts/check.sh)", "origin/main (scripts/check.sh)", "origin/feature (scripts/check.sh)", "could not compare tag blob"} {
		if !strings.Contains(l, w) {
			t.Errorf("the end does not say %q:\n%s", w, l)
		}
	}
	if strings.Contains(l, "docs") || strings.Contains(l, "kept") || strings.Contains(l, "v0") || len(r.Committed) > 0 {
		t.Errorf("the end says more than the refs that hold the box's script:\n%s", l)
	}
}

// TestBranchesUnread: a repository with more branches than a launch
// reads; the end says it could not check them rather than nothing.
func TestBranchesUnread(t *testing.T) {
	g := newGitRepo(t)
	g.write("scripts/check.sh", "#!/bin/sh\nexit 0\n")
	g.git("", "add", "-A")
	g.git("", "commit", "-q", "-m", "init")
	head := strings.TrimSpace(g.git("", "rev-parse", "HEAD"))
	for i := range maxRefs + 1 {
		g.write(fmt.Sprintf(".git/refs/tags/t%d", i), head+"\n")
	}
	set := g.prepare(Manifest{Items: []protect.Item{{Path: filepath.Join(g.repo, "scripts/check.sh"), How: protect.Copy}}})
	r, err := End(set)
	if err != nil {
		t.Fatalf("End: %v", err)
	}
	if l := strings.Join(r.Lines(g.repo, "repo-1-claude"), "\n"); !strings.Contains(l, "were not read at launch") {
		t.Errorf("the end does not say the branches were not checked:\n%s", l)
	}
}

// TestNestedAddedExecsSaid: the same in a repository nested in the
// box's, whose own rebase was in progress at launch.
func TestNestedAddedExecsSaid(t *testing.T) {
	g := newGitRepo(t)
	g.write("README", "top\n")
	g.git("", "add", "-A")
	g.git("", "commit", "-q", "-m", "top")
	for _, c := range []string{"one", "two"} {
		g.write("sub/notes.txt", c+"\n")
		if c == "one" {
			g.git("sub", "init", "-q")
		}
		g.git("sub", "add", "-A")
		g.git("sub", "commit", "-q", "-m", c)
	}
	t.Setenv("GIT_SEQUENCE_EDITOR", "sed -i '1i break'")
	g.git("sub", "rebase", "-q", "-i", "HEAD~1")
	sub := filepath.Join(g.repo, "sub")
	set := g.prepare(Manifest{
		Items:       []protect.Item{{Path: filepath.Join(sub, "notes.txt"), How: protect.Copy}},
		Known:       []string{filepath.Join(sub, ".git")},
		NestedIndex: []NestedIndex{{Root: sub, GitDir: filepath.Join(sub, ".git")}}})
	todo := filepath.Join(sub, ".git", "rebase-merge", "git-rebase-todo")
	f, err := os.OpenFile(todo, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("exec touch /tmp/pwned\n")
	f.Close()
	r, err := End(set)
	if err != nil {
		t.Fatalf("End: %v", err)
	}
	if want := []AddedExec{{Todo: todo, Line: "exec touch /tmp/pwned"}}; !slices.Equal(r.AddedExecs, want) {
		t.Errorf("added execs %+v, want %+v", r.AddedExecs, want)
	}
}

// TestIndexLockSaid: a git of the box's stopped mid-commit leaves
// .git/index.lock; the end says so.
func TestIndexLockSaid(t *testing.T) {
	g := newGitRepo(t)
	g.write("scripts/check.sh", "#!/bin/sh\nexit 0\n")
	g.git("", "add", "-A")
	g.git("", "commit", "-q", "-m", "init")
	set := g.prepare(Manifest{Items: []protect.Item{{Path: filepath.Join(g.repo, "scripts/check.sh"), How: protect.Copy}}})
	g.write(".git/index.lock", "")
	r, err := End(set)
	if err != nil {
		t.Fatalf("End: %v", err)
	}
	if l := strings.Join(r.Lines(g.repo, "repo-1-claude"), "\n"); !strings.Contains(l, "index lock is there after the box: .git/index.lock") {
		t.Errorf("the end does not say the lock is there:\n%s", l)
	}
}

// TestAddedExecsSaid: the user has an interactive rebase in progress
// (stopped at a break, with an exec line of the user's) when the box
// starts; the box adds an exec line to its todo. The end names the line
// the box added, not the user's.
func TestAddedExecsSaid(t *testing.T) {
	g := newGitRepo(t)
	repo, run, write := g.repo, func(args ...string) string { t.Helper(); return g.git("", args...) }, g.write
	for _, c := range []string{"one", "two"} {
		write("notes.txt", c+"\n")
		run("add", "-A")
		run("commit", "-q", "-m", c)
	}
	t.Setenv("GIT_SEQUENCE_EDITOR", "sed -i -e '1i break' -e '$a exec make test'")
	run("rebase", "-q", "-i", "HEAD~1")
	todo := filepath.Join(repo, ".git", "rebase-merge", "git-rebase-todo")
	set := g.prepare(Manifest{Items: []protect.Item{{Path: filepath.Join(repo, "notes.txt"), How: protect.Copy}}})
	f, err := os.OpenFile(todo, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("x touch /tmp/pwned\n")
	f.Close()

	r, err := End(set)
	if err != nil {
		t.Fatalf("End: %v", err)
	}
	if want := []AddedExec{{Todo: todo, Line: "x touch /tmp/pwned"}}; !slices.Equal(r.AddedExecs, want) {
		t.Errorf("added execs %+v, want %+v", r.AddedExecs, want)
	}
	l := strings.Join(r.Lines(repo, "repo-1-claude"), "\n")
	if !strings.Contains(l, `"x touch /tmp/pwned" in .git/rebase-merge/git-rebase-todo`) || strings.Contains(l, "make test") {
		t.Errorf("the end does not say the line the box added, or says the user's:\n%s", l)
	}
}

// TestReplaceRefsPutBack: the box makes git show its own script in
// place of the blob HEAD and the index name for a held file (git
// replace: git status stays clean, and the next checkout writes it),
// packs it with the user's refs, and points the user's own replace ref
// elsewhere. The end puts the replace refs back as they were at launch.
func TestReplaceRefsPutBack(t *testing.T) {
	g := newGitRepo(t)
	repo, run, write := g.repo, func(args ...string) string { t.Helper(); return g.git("", args...) }, g.write
	write("scripts/check.sh", "#!/bin/sh\nexit 0\n")
	write("a.txt", "a\n")
	run("add", "-A")
	run("commit", "-q", "-m", "init")
	blob := func(s string) string {
		t.Helper()
		return strings.TrimSpace(g.gitIn("", s, "hash-object", "-w", "--stdin"))
	}
	userFrom, userTo := strings.TrimSpace(run("rev-parse", "HEAD:a.txt")), blob("the user's replacement\n")
	run("replace", userFrom, userTo)
	set := g.prepare(Manifest{Items: []protect.Item{{Path: filepath.Join(repo, "scripts/check.sh"), How: protect.Copy}}})
	// The box.
	check := strings.TrimSpace(run("rev-parse", "HEAD:scripts/check.sh"))
	run("replace", check, blob("#!/bin/sh\ntouch /tmp/pwned\n"))
	run("pack-refs", "--all")
	run("replace", "-f", userFrom, blob("the box's\n"))
	if got := run("cat-file", "-p", "HEAD:scripts/check.sh"); !strings.Contains(got, "pwned") {
		t.Fatalf("control: the replace ref does not show the box's script: %q", got)
	}

	r, err := End(set)
	if err != nil {
		t.Fatalf("End: %v", err)
	}
	if got := run("cat-file", "-p", "HEAD:scripts/check.sh"); strings.Contains(got, "pwned") {
		t.Errorf("after the end git still shows the box's script: %q", got)
	}
	if got := strings.Fields(run("replace", "-l", "--format=medium")); !slices.Equal(got, []string{userFrom, "->", userTo}) {
		t.Errorf("replace refs after the end %q, want the user's alone", got)
	}
	if len(r.Replaced) != 2 {
		t.Errorf("put back %q, want the box's two", r.Replaced)
	}
	if l := strings.Join(r.Lines(repo, "repo-1-claude"), "\n"); !strings.Contains(l, "replace refs") || !strings.Contains(l, "refs/replace/"+check) {
		t.Errorf("the end does not say it put the replace refs back:\n%s", l)
	}
}

// TestIndexFlagsPutBack: entries put back keep the user's skip-worktree
// and assume-unchanged marks, and a mark the box set on a held file (to
// hide its change from git status) is taken off.
func TestIndexFlagsPutBack(t *testing.T) {
	g := newGitRepo(t)
	run := func(args ...string) string { t.Helper(); return g.git("", args...) }
	var m Manifest
	for _, f := range []string{"a.sh", "b.sh", "c.sh"} {
		g.write("scripts/"+f, "#!/bin/sh\nexit 0\n")
		m.Items = append(m.Items, protect.Item{Path: filepath.Join(g.repo, "scripts", f), How: protect.Copy})
	}
	run("add", "-A")
	run("commit", "-q", "-m", "init")
	run("update-index", "--skip-worktree", "scripts/a.sh")
	run("update-index", "--assume-unchanged", "scripts/b.sh")
	set := g.prepare(m)
	// The box stages its own a.sh and b.sh through the index alone, and
	// hides c.sh.
	blob := strings.TrimSpace(g.gitIn("", "#!/bin/sh\ntouch /tmp/pwned\n", "hash-object", "-w", "--stdin"))
	g.gitIn("", "100755 "+blob+" 0\tscripts/a.sh\n100755 "+blob+" 0\tscripts/b.sh\n", "update-index", "--index-info")
	run("update-index", "--skip-worktree", "scripts/c.sh")

	if _, err := End(set); err != nil {
		t.Fatalf("End: %v", err)
	}
	want := "S 100755 %s 0\tscripts/a.sh\nh 100755 %s 0\tscripts/b.sh\nH 100755 %s 0\tscripts/c.sh\n"
	orig := strings.TrimSpace(run("rev-parse", "HEAD:scripts/a.sh"))
	if got := run("ls-files", "-s", "-v"); got != strings.ReplaceAll(want, "%s", orig) {
		t.Errorf("the index after the end:\n%s\nwant:\n%s", got, strings.ReplaceAll(want, "%s", orig))
	}
}

// TestShadowingRefsPutBack: refs the box makes that git would take for
// the user's from the names the user types (refs/origin/main and a
// branch origin/main over refs/remotes/origin/main, a tag over the
// branch of the same name) are removed, and the end says which; a ref
// in another namespace and ORIG_HEAD pointed at the box's commit are
// said, not removed; the user's remote-tracking branch stays.
func TestShadowingRefsPutBack(t *testing.T) {
	g := newGitRepo(t)
	run := func(args ...string) string { t.Helper(); return g.git("", args...) }
	g.write("scripts/check.sh", "#!/bin/sh\nexit 0\n")
	run("add", "-A")
	run("commit", "-q", "-m", "init")
	home := strings.TrimSpace(run("symbolic-ref", "--short", "HEAD"))
	run("update-ref", "refs/remotes/origin/main", "HEAD")
	run("update-ref", "refs/remotes/origin/feature", "HEAD")
	user := strings.TrimSpace(run("rev-parse", "HEAD"))
	set := g.prepare(Manifest{Items: []protect.Item{{Path: filepath.Join(g.repo, "scripts/check.sh"), How: protect.Copy}}})
	// The box: a commit of its script, made with plumbing, named where
	// git looks first.
	g.write("scripts/check.sh", "#!/bin/sh\ntouch /tmp/pwned\n")
	run("add", "-A")
	run("commit", "-q", "-m", "the box")
	box := strings.TrimSpace(run("rev-parse", "HEAD"))
	run("reset", "-q", "--soft", user)
	run("reset", "-q", "--hard")
	run("update-ref", "refs/origin/main", box)
	run("branch", "origin/feature", box)
	run("tag", home, box)
	run("update-ref", "refs/work/agent", box)
	g.write(".git/ORIG_HEAD", box+"\n")

	r, err := End(set)
	if err != nil {
		t.Fatalf("End: %v", err)
	}
	want := []string{
		"refs/heads/origin/feature -> " + box + ", which hid refs/remotes/origin/feature",
		"refs/origin/main -> " + box + ", which hid refs/remotes/origin/main",
		"refs/tags/" + home + " -> " + box + ", which hid refs/heads/" + home,
	}
	if !slices.Equal(r.Unshadowed, want) {
		t.Errorf("put back %q, want %q", r.Unshadowed, want)
	}
	for _, name := range []string{"origin/main", "origin/feature", home} {
		if got := strings.TrimSpace(run("rev-parse", name)); got != user {
			t.Errorf("%s is %s after the end, want the user's %s", name, got, user)
		}
	}
	var said []string
	for _, b := range r.Branches {
		said = append(said, b.Ref)
	}
	if want := []string{"ORIG_HEAD", "refs/work/agent"}; !slices.Equal(said, want) {
		t.Errorf("refs said %q, want %q", said, want)
	}
	l := strings.Join(r.Lines(g.repo, "repo-1-claude"), "\n")
	for _, w := range []string{"git would take for others of the same name", "ORIG_HEAD (scripts/check.sh)", "refs/work/agent (scripts/check.sh)"} {
		if !strings.Contains(l, w) {
			t.Errorf("the end does not say %q:\n%s", w, l)
		}
	}
}

// TestRootRefsSwept: files the box plants at the top of the git dir
// that git reads as refs before refs/ itself (.git/origin/main for
// origin/main, .git/main for main, a link) are swept into the review;
// a note of its there, and git's own files, are not.
func TestRootRefsSwept(t *testing.T) {
	g := newGitRepo(t)
	run := func(args ...string) string { t.Helper(); return g.git("", args...) }
	g.write("scripts/check.sh", "#!/bin/sh\nexit 0\n")
	run("add", "-A")
	run("commit", "-q", "-m", "init")
	user := strings.TrimSpace(run("rev-parse", "HEAD"))
	home := strings.TrimSpace(run("symbolic-ref", "--short", "HEAD"))
	run("update-ref", "refs/remotes/origin/main", "HEAD")
	g.write(".git/user-notes", user+"\n") // the user's, before the box
	set := g.prepare(Manifest{Items: []protect.Item{{Path: filepath.Join(g.repo, "scripts/check.sh"), How: protect.Copy}}})
	g.write("scripts/check.sh", "#!/bin/sh\ntouch /tmp/pwned\n")
	run("commit", "-q", "-am", "the box")
	box := strings.TrimSpace(run("rev-parse", "HEAD"))
	run("reset", "-q", "--hard", user)
	g.write(".git/origin/main", box+"\n")
	g.write(".git/"+home, box+"\n")
	if err := os.Symlink("refs/remotes/origin/main", filepath.Join(g.repo, ".git", "upstream")); err != nil {
		t.Fatal(err)
	}
	g.write(".git/box-notes.txt", "not a ref\n")
	g.write(".git/user-notes", box+"\n")

	r, err := End(set)
	if err != nil {
		t.Fatalf("End: %v", err)
	}
	var got []string
	for _, f := range r.Files {
		got = append(got, strings.TrimPrefix(f, g.repo+"/"))
	}
	slices.Sort(got)
	want := []string{".git/" + home, ".git/origin", ".git/upstream", ".git/user-notes"}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("held %q, want %q", got, want)
	}
	for _, name := range []string{"origin/main", home} {
		if out := strings.TrimSpace(run("rev-parse", name)); out != user {
			t.Errorf("%s is %s after the end, want the user's %s", name, out, user)
		}
	}
	if _, err := os.Stat(filepath.Join(g.repo, ".git", "box-notes.txt")); err != nil {
		t.Errorf("a file that is no ref was swept: %v", err)
	}
}
