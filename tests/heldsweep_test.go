package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The held-sweep tests attack the end's sweep itself from inside a real
// strict box: what the box plants where the sweep cannot read, past what
// it can hold, or in a shape it did not look for, and names chosen to
// drive the user's terminal. Then the test takes the user's next step.

// fsmonitorPayload is a payload script for a planted core.fsmonitor and
// its marker, outside the repository.
func fsmonitorPayload(t *testing.T, name string) (evil, pwned string) {
	t.Helper()
	pwned = filepath.Join(t.TempDir(), "PWNED-"+name)
	evil = payload(t, t.TempDir(), pwned)
	os.Chmod(filepath.Dir(evil), 0o755)
	return evil, pwned
}

// TestHeldSweepUnreadableDir: the box plants a nested repository with
// a core.fsmonitor and its gitlink, then makes the parent directory
// unreadable (search only) so the sweep cannot list it. Host git status
// at the root does not run it; the end says loudly what it could not
// check; the set is held and reviewable, and discarding it says where
// the directory is.
func TestHeldSweepUnreadableDir(t *testing.T) {
	repo, _, env := strictRepo(t)
	evil, pwned := fsmonitorPayload(t, "unreadable")
	t.Cleanup(func() {
		// The directory the box made unreadable, wherever it ended up.
		ms, _ := filepath.Glob(filepath.Join(repo, "lib*"))
		for _, m := range ms {
			os.Chmod(m, 0o755)
		}
	})
	r := strict(t, repo, env, nil, "sh", "-c", fmt.Sprintf(`set -e
mkdir -p lib/sub
git init -q lib/sub
git -C lib/sub commit -q --allow-empty -m sub
git -C lib/sub config core.fsmonitor %q
git update-index --add --cacheinfo 160000,$(git -C lib/sub rev-parse HEAD),lib/sub
chmod 111 lib
echo planted`, evil))
	if r.code != 0 || !strings.Contains(r.stdout, "planted") {
		t.Fatalf("exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	runCmd(t, repo, env, "", "git", "status")
	absent(t, "host git status", pwned)
	if !strings.Contains(r.stderr, "NOT CHECKED: lib:") || !strings.Contains(r.stderr, "renamed aside to lib.aisan-unreadable-") {
		t.Errorf("the box's end does not say it could not check lib: %q", r.stderr)
	}
	slot := slotName(repo, "run")
	rv := review(t, env, slot)
	if rv.code != 0 || !strings.Contains(rv.stdout, "NOT CHECKED: lib:") {
		t.Fatalf("aisan review %s: exit %d, %q %q", slot, rv.code, rv.stdout, rv.stderr)
	}
	if l := aisan(t, env, "", "review"); !strings.Contains(l.stdout, slot) || !strings.Contains(l.stdout, "NOT CHECKED") {
		t.Errorf("aisan review (no slot) does not list %s as not checked: %q %q", slot, l.stdout, l.stderr)
	}
	if a := review(t, env, slot, "--apply"); a.code == 0 || !strings.Contains(a.stderr, "unreadable") {
		t.Errorf("--apply of what nobody could read: exit %d, %q %q", a.code, a.stdout, a.stderr)
	}
	if d := review(t, env, slot, "--discard"); d.code != 0 || !strings.Contains(d.stderr, "renamed it aside") {
		t.Errorf("--discard: exit %d, %q %q", d.code, d.stdout, d.stderr)
	}
}

// TestHeldSweepUnreadableDirRefusedAtLaunch: a directory the launch
// cannot read could hide a socket; the launch is refused naming it, and
// the user's directory is left as it is.
func TestHeldSweepUnreadableDirRefusedAtLaunch(t *testing.T) {
	repo, _, env := strictRepo(t)
	d := filepath.Join(repo, "private")
	os.MkdirAll(filepath.Join(d, "x"), 0o755)
	os.Chmod(d, 0o111)
	t.Cleanup(func() { os.Chmod(d, 0o755) })
	tag := filepath.Join(repo, "RAN")
	r := strict(t, repo, env, nil, "touch", tag)
	if r.code == 0 || !strings.Contains(r.stderr, "cannot read "+d) || !strings.Contains(r.stderr, "chmod u+rx "+d) {
		t.Errorf("exit %d, %q: want the launch refused naming %s", r.code, r.stderr, d)
	}
	absent(t, "a refused box", tag)
	if fi, err := os.Stat(d); err != nil || fi.Mode().Perm() != 0o111 {
		t.Errorf("the launch changed the user's directory: %v %v", fi, err)
	}
}

// TestHeldSweepWedge: the box makes part of its copy of .vscode
// unreadable. Its set is still held at its end (never left running); the
// user then clones a library and adds a .claude of their own: 'aisan
// review' takes neither, the set can be reviewed and discarded, and a
// later box is clean.
func TestHeldSweepWedge(t *testing.T) {
	repo, _, env := strictRepo(t)
	r := strict(t, repo, env, nil, "sh", "-c", `mkdir -p .vscode/x && echo '{"x":1}' > .vscode/tasks.json && chmod 000 .vscode/x && echo planted`)
	if r.code != 0 || !strings.Contains(r.stdout, "planted") {
		t.Fatalf("exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	slot := slotName(repo, "run")
	checkHeld(t, r, env, slot, []string{".vscode/tasks.json", ".vscode/x"}, []string{`+{"x":1}`, "not looked into"})
	os.MkdirAll(filepath.Join(repo, "vendor/lib"), 0o755)
	hostGit(t, filepath.Join(repo, "vendor/lib"), env, "init", "-q")
	os.MkdirAll(filepath.Join(repo, "pkg/.claude"), 0o755)
	os.WriteFile(filepath.Join(repo, "pkg/.claude/settings.json"), []byte("{}\n"), 0o644)
	if l := aisan(t, env, "", "review"); l.code != 0 || !strings.Contains(l.stdout, slot) || strings.Contains(l.stdout, "running") {
		t.Errorf("aisan review: exit %d, %q %q", l.code, l.stdout, l.stderr)
	}
	for _, p := range []string{"vendor/lib/.git", "pkg/.claude/settings.json"} {
		if _, err := os.Lstat(filepath.Join(repo, p)); err != nil {
			t.Errorf("the user's %s, made after the box, was taken: %v", p, err)
		}
	}
	if d := review(t, env, slot, "--discard"); d.code != 0 {
		t.Fatalf("--discard: exit %d, %q %q", d.code, d.stdout, d.stderr)
	}
	n := strict(t, repo, env, nil, "true")
	if n.code != 0 || strings.Contains(n.stderr, "held") {
		t.Errorf("a later clean box: exit %d, %q", n.code, n.stderr)
	}
	for _, p := range []string{"vendor/lib/.git", "pkg/.claude/settings.json"} {
		if _, err := os.Lstat(filepath.Join(repo, p)); err != nil {
			t.Errorf("the user's %s was taken by a later box: %v", p, err)
		}
	}
}

// TestHeldSweepGitDirInSubdir: the box turns a plain directory into a
// git dir (HEAD, objects, refs, a config with worktree = .. and a
// core.fsmonitor). Host git status in that directory does not run it;
// review shows it; once applied, it runs.
func TestHeldSweepGitDirInSubdir(t *testing.T) {
	repo, _, env := strictRepo(t)
	os.MkdirAll(filepath.Join(repo, "src"), 0o755)
	os.WriteFile(filepath.Join(repo, "src/main.c"), []byte("int main(){}\n"), 0o644)
	hostGit(t, repo, env, "add", "-A")
	hostGit(t, repo, env, "commit", "-q", "-m", "src")
	evil, pwned := fsmonitorPayload(t, "gitdir")
	r := strict(t, repo, env, nil, "sh", "-c", fmt.Sprintf(`set -e
cd src && mkdir -p objects refs/heads && echo "ref: refs/heads/main" > HEAD
printf '[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = ..\n\tfsmonitor = %s\n' > config
echo planted`, evil))
	if r.code != 0 || !strings.Contains(r.stdout, "planted") {
		t.Fatalf("exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	runCmd(t, filepath.Join(repo, "src"), env, "", "git", "status")
	absent(t, "host git status in src", pwned)
	if _, err := os.Stat(filepath.Join(repo, "src/main.c")); err != nil {
		t.Errorf("the user's source went with the sweep: %v", err)
	}
	slot := slotName(repo, "run")
	checkHeld(t, r, env, slot, []string{"src/HEAD", "src/config"}, []string{"fsmonitor = " + evil})
	applyHeld(t, env, slot)
	runCmd(t, filepath.Join(repo, "src"), env, "", "git", "status")
	present(t, "git status in src after --apply", pwned)
}

// TestHeldSweepNamesEscaped: the box names a file to drive the user's
// terminal (CR, erase line, OSC 52 to the clipboard). Neither the end's
// line nor the held list carries it raw.
func TestHeldSweepNamesEscaped(t *testing.T) {
	repo, _, env := strictRepo(t)
	r := strict(t, repo, env, nil, "sh", "-c", `mkdir -p .claude && : > ".claude/$(printf 'a\r\033[2K\033]52;c;ZWNobyBwd25lZA==\007')" && echo planted`)
	if r.code != 0 || !strings.Contains(r.stdout, "planted") {
		t.Fatalf("exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	slot := slotName(repo, "run")
	want := `.claude/a\r\x1b[2K\x1b]52;c;ZWNobyBwd25lZA==\a`
	l := aisan(t, env, "", "review")
	for what, out := range map[string]string{"the box's end": r.stderr, "aisan review": l.stdout + l.stderr} {
		if strings.ContainsAny(out, "\r\x1b\a") {
			t.Errorf("%s carries a raw terminal control: %q", what, out)
		}
		if !strings.Contains(out, want) {
			t.Errorf("%s does not name the file escaped (%s): %q", what, want, out)
		}
	}
	review(t, env, slot, "--discard")
}

// TestHeldSweepGitDirHeadForms: git takes a directory for a git dir when
// its HEAD is "ref:" and a ref after any spaces git skips (a newline, a
// CR), or a commit id in upper case; the sweep must take it so too, and
// the user's next git status in it runs nothing. Then the box plants one
// more under a directory it made read-only, which does not keep it in
// the repository either.
func TestHeldSweepGitDirHeadForms(t *testing.T) {
	repo, _, env := strictRepo(t)
	evil, pwned := fsmonitorPayload(t, "headforms")
	dirs := []string{"nl", "cr", "upper", "ro"}
	t.Cleanup(func() {
		for _, d := range dirs {
			os.Chmod(filepath.Join(repo, d), 0o755)
		}
	})
	r := strict(t, repo, env, nil, "sh", "-c", fmt.Sprintf(`set -e
plant() {
	mkdir -p "$1/objects" "$1/refs/heads" && printf "$2" > "$1/HEAD"
	printf '[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n\tfsmonitor = %s\n' > "$1/config"
}
plant nl 'ref:\nrefs/heads/main\n'
plant cr 'ref:\rrefs/heads/main\n'
plant upper '%s\n'
plant ro 'ref: refs/heads/main\n'
chmod 555 ro
echo planted`, evil, strings.Repeat("AB", 20)))
	if r.code != 0 || !strings.Contains(r.stdout, "planted") {
		t.Fatalf("exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	for _, d := range dirs {
		if _, err := os.Lstat(filepath.Join(repo, d, "config")); err == nil {
			t.Errorf("%s/config, a planted git dir's, is still in the repository after the box; its end said %q", d, r.stderr)
		}
		runCmd(t, filepath.Join(repo, d), env, "", "git", "status")
	}
	absent(t, "host git status in each planted dir", pwned)
	if fi, err := os.Stat(filepath.Join(repo, "ro")); err != nil || fi.Mode().Perm() != 0o555 {
		t.Errorf("the read-only directory after the sweep: %v, %v; want it kept at 0555", fi, err)
	}
}

// TestHeldSweepBareFixture: a bare repository the project keeps as a
// fixture is a git dir too; the box's edit of its config in place
// (turning it into a work tree with an fsmonitor) is held for review,
// and the user's next git status in it runs nothing.
func TestHeldSweepBareFixture(t *testing.T) {
	repo, _, env := strictRepo(t)
	bare := filepath.Join(repo, "fixtures", "repo.git")
	hostGit(t, repo, env, "init", "-q", "--bare", bare)
	hostGit(t, repo, env, "add", "-A")
	hostGit(t, repo, env, "commit", "-q", "-m", "fixture", "--allow-empty")
	evil, pwned := fsmonitorPayload(t, "bare")
	r := strict(t, repo, env, nil, "sh", "-c", fmt.Sprintf(`set -e
printf '[core]\n\tbare = false\n\tworktree = .\n\tfsmonitor = %s\n' >> fixtures/repo.git/config
echo planted`, evil))
	if r.code != 0 || !strings.Contains(r.stdout, "planted") {
		t.Fatalf("exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	runCmd(t, bare, env, "", "git", "status")
	absent(t, "host git status in the fixture", pwned)
	if b, err := os.ReadFile(filepath.Join(bare, "config")); err != nil || strings.Contains(string(b), "fsmonitor") {
		t.Errorf("the fixture's config after the box: %q, %v; want it as it was", b, err)
	}
}
