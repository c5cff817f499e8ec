package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fsmonitorConfig is a git config whose fsmonitor touches marker: host
// git status runs it.
func fsmonitorConfig(marker string) string {
	return fmt.Sprintf("[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfsmonitor = \"touch %s; echo\"\n", marker)
}

// TestStrictMainBoxLinkedWorktree: a box started in the main worktree
// points a linked worktree's commondir at a common dir of its own (whose
// config names an fsmonitor), writes that worktree's config.worktree, and
// adds a worktree of its own. Host git status in the linked worktree runs
// none of it.
func TestStrictMainBoxLinkedWorktree(t *testing.T) {
	repo, _, env := strictRepo(t)
	wt := filepath.Join(filepath.Dir(repo), "wt")
	hostGit(t, repo, env, "worktree", "add", "-q", wt, "-b", "feat")
	hostGit(t, repo, env, "config", "extensions.worktreeConfig", "true")
	pwned := filepath.Join(t.TempDir(), "PWNED-commondir")
	pwnedWT := filepath.Join(t.TempDir(), "PWNED-config-worktree")
	r := strict(t, repo, env, nil, "sh", "-c", fmt.Sprintf(`set -e
C=$PWD/.cache/c
mkdir -p $C/objects/info $C/refs/heads
echo $PWD/.git/objects > $C/objects/info/alternates
cp .git/refs/heads/* $C/refs/heads/
printf %%s %s > $C/config
echo $C > .git/worktrees/wt/commondir
printf %%s %s > .git/worktrees/wt/config.worktree
git worktree add -q /tmp/other -b other
echo planted`, shq(fsmonitorConfig(pwned)), shq(fsmonitorConfig(pwnedWT))))
	if r.code != 0 || !strings.Contains(r.stdout, "planted") {
		t.Fatalf("exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	hostGit(t, wt, env, "status")
	absent(t, "host git status in the linked worktree", pwned, pwnedWT)
	for _, f := range []string{".git/worktrees/wt/commondir", ".git/worktrees/wt/config.worktree", ".git/worktrees/other"} {
		if !strings.Contains(r.stderr, f) {
			t.Errorf("the box's end does not say it held %s: %q", f, r.stderr)
		}
	}
	if _, err := os.Lstat(filepath.Join(repo, ".git/worktrees/other")); err == nil {
		t.Errorf("the box's new worktree dir reached the repository")
	}
	// Control: the same commondir written on the host does run.
	os.WriteFile(filepath.Join(repo, ".git/worktrees/wt/commondir"), []byte(filepath.Join(repo, ".cache/c")+"\n"), 0o644)
	runCmd(t, wt, env, "", "git", "status")
	present(t, "git status with the planted commondir", pwned)
}

// TestStrictNestedCommondir: a box plants a commondir in a nested
// repository's git dir, pointing at a common dir of its own whose config
// names an fsmonitor. Host git status at the root (the nested repository
// is a gitlink) does not run it.
func TestStrictNestedCommondir(t *testing.T) {
	repo, _, env := strictRepo(t)
	sub := filepath.Join(repo, "sub")
	os.Mkdir(sub, 0o755)
	hostGit(t, sub, env, "init", "-q")
	hostGit(t, sub, env, "commit", "-q", "--allow-empty", "-m", "sub")
	hostGit(t, repo, env, "add", "sub")
	hostGit(t, repo, env, "commit", "-q", "-m", "gitlink")
	pwned := filepath.Join(t.TempDir(), "PWNED-nested")
	plant := fmt.Sprintf(`set -e
C=$PWD/sub/.git/c2
mkdir -p $C/objects/info $C/refs/heads
echo $PWD/sub/.git/objects > $C/objects/info/alternates
cp sub/.git/refs/heads/* $C/refs/heads/
printf %%s %s > $C/config
echo c2 > sub/.git/commondir
echo planted`, shq(fsmonitorConfig(pwned)))
	r := strict(t, repo, env, nil, "sh", "-c", plant)
	if r.code != 0 || !strings.Contains(r.stdout, "planted") {
		t.Fatalf("exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	hostGit(t, repo, env, "status")
	absent(t, "host git status at the root", pwned)
	if !strings.Contains(r.stderr, "sub/.git/commondir") {
		t.Errorf("the box's end does not say it held sub/.git/commondir: %q", r.stderr)
	}
	// Control: the same planted on the host does run. (The end took
	// c2 too: its refs are files git would read as refs.)
	os.RemoveAll(filepath.Join(sub, ".git/c2"))
	runCmd(t, repo, env, "", "sh", "-c", plant)
	runCmd(t, repo, env, "", "git", "status")
	present(t, "git status with the planted commondir", pwned)
}

// TestStrictIncludeOfInclude: the repository's config includes a tracked
// file, which includes one that does not exist; the box creates it naming
// an fsmonitor. Host git status does not run it.
func TestStrictIncludeOfInclude(t *testing.T) {
	repo, _, env := strictRepo(t)
	os.WriteFile(filepath.Join(repo, "shared.gitconfig"), []byte("[include]\n\tpath = more.gitconfig\n"), 0o644)
	hostGit(t, repo, env, "add", "shared.gitconfig")
	hostGit(t, repo, env, "commit", "-q", "-m", "shared config")
	hostGit(t, repo, env, "config", "include.path", "../shared.gitconfig")
	pwned := filepath.Join(t.TempDir(), "PWNED-include")
	r := strict(t, repo, env, nil, "sh", "-c", fmt.Sprintf(`printf %%s %s > more.gitconfig && echo planted`, shq(fsmonitorConfig(pwned))))
	if r.code != 0 || !strings.Contains(r.stdout, "planted") {
		t.Fatalf("exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	hostGit(t, repo, env, "status")
	absent(t, "host git status", pwned)
	checkHeld(t, r, env, slotName(repo, "run"), []string{"more.gitconfig"}, []string{"fsmonitor"})
	// Control: the same file written on the host does run.
	os.WriteFile(filepath.Join(repo, "more.gitconfig"), []byte(fsmonitorConfig(pwned)), 0o644)
	runCmd(t, repo, env, "", "git", "status")
	present(t, "git status with the included file", pwned)
}
