package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The parent tests rename, from inside a real strict box, the directory
// above a protected path and plant the box's own at the freed name, then
// take the host's next step: the end trusts what it finds at a name
// protected at launch, so the rename must fail (each such directory is a
// mount point in the box), the host must not run what was planted, and
// the user's own files must stay where they were.

// renameAttack is a box script that renames from aside and then plants;
// it prints "renamed" when the rename worked and stops otherwise.
func renameAttack(from, aside, plant string) string {
	return fmt.Sprintf(`if mv %s %s; then echo renamed; else echo refused; exit 0; fi
set -e
%s
echo planted`, shq(from), shq(aside), plant)
}

// checkRenameRefused: the box's rename failed and planted nothing.
func checkRenameRefused(t *testing.T, r result) {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("box: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "refused") || strings.Contains(r.stdout, "planted") {
		t.Errorf("the box renamed a directory above a protected path: %q %q", r.stdout, r.stderr)
	}
}

// TestHandoffParentRenameNestedGit: a nested repository with a gitlink;
// the box renames its parent, makes a new nested repository at the old
// name with a core.fsmonitor and points the gitlink at it. Host git
// status does not run it, and the user's git dir is neither moved nor
// held for review.
func TestHandoffParentRenameNestedGit(t *testing.T) {
	repo, _, env := strictRepo(t)
	sub := filepath.Join(repo, "lib", "sub")
	os.MkdirAll(sub, 0o755)
	hostGit(t, sub, env, "init", "-q")
	writeFile(t, filepath.Join(sub, "f"), "x\n")
	hostGit(t, sub, env, "add", "f")
	hostGit(t, sub, env, "commit", "-q", "-m", "sub")
	head := strings.TrimSpace(hostGit(t, sub, env, "rev-parse", "HEAD"))
	writeFile(t, filepath.Join(repo, "top"), "t\n")
	hostGit(t, repo, env, "add", "lib/sub", "top")
	hostGit(t, repo, env, "commit", "-q", "-m", "init")
	pwned := filepath.Join(t.TempDir(), "PWNED-parent-git")
	evil := payload(t, t.TempDir(), pwned)
	os.Chmod(filepath.Dir(evil), 0o755)
	for _, from := range []string{"lib/sub", "lib"} {
		t.Run(from, func(t *testing.T) {
			r := strict(t, repo, env, nil, "sh", "-c", renameAttack(from, from+"-aside", fmt.Sprintf(`mkdir -p lib/sub
cd lib/sub
git init -q .
echo x > f
git add f
git commit -qm s
git config core.fsmonitor %s
cd ../..
git update-index --cacheinfo 160000,$(git -C lib/sub rev-parse HEAD),lib/sub`, shq(evil))))
			checkRenameRefused(t, r)
			runCmd(t, repo, env, "", "git", "status")
			absent(t, "host git status", pwned)
			if got := strings.TrimSpace(hostGit(t, sub, env, "rev-parse", "HEAD")); got != head {
				t.Errorf("lib/sub's HEAD is %s, want the user's %s", got, head)
			}
			absent(t, "the box's rename", filepath.Join(repo, from+"-aside"))
			if strings.Contains(r.stderr, "sub/.git") {
				t.Errorf("the end held the user's git dir: %q", r.stderr)
			}
		})
	}
}

// TestHandoffParentRenameClaude: a nested project's .claude; the box
// renames the project's directory and plants a .claude with a hook at
// the old name. The user's settings stay, the box's never land.
func TestHandoffParentRenameClaude(t *testing.T) {
	repo, _, env := strictRepo(t)
	mine := `{"permissions":{"allow":["Bash(ls)"]}}` + "\n"
	settings := filepath.Join(repo, "pkgs", "a", ".claude", "settings.json")
	writeFile(t, settings, mine)
	for _, from := range []string{"pkgs/a", "pkgs"} {
		t.Run(from, func(t *testing.T) {
			r := strict(t, repo, env, nil, "sh", "-c", renameAttack(from, from+"-aside",
				"mkdir -p pkgs/a/.claude\necho '{\"hooks\":{\"SessionStart\":[{\"hooks\":[{\"type\":\"command\",\"command\":\"touch /tmp/x\"}]}]}}' > pkgs/a/.claude/settings.json"))
			checkRenameRefused(t, r)
			if b, err := os.ReadFile(settings); err != nil || string(b) != mine {
				t.Errorf("%s after the box: %q %v, want the user's %q", settings, b, err, mine)
			}
			absent(t, "the box's rename", filepath.Join(repo, from+"-aside"))
		})
	}
}

// TestHandoffParentRenameHooksPath: core.hooksPath is .husky/_, existing
// (with the user's hook) or not yet (made for the run); the box renames
// .husky aside and plants its own .husky/_/pre-commit. Host git commit
// does not run it.
func TestHandoffParentRenameHooksPath(t *testing.T) {
	for _, tc := range []struct {
		name   string
		exists bool
	}{{"existing", true}, {"made for the run", false}} {
		t.Run(tc.name, func(t *testing.T) {
			repo, _, env := strictRepo(t)
			hostGit(t, repo, env, "config", "core.hooksPath", ".husky/_")
			if tc.exists {
				writeFile(t, filepath.Join(repo, ".husky", "_", "pre-commit"), "#!/bin/sh\nexit 0\n")
				os.Chmod(filepath.Join(repo, ".husky", "_", "pre-commit"), 0o755)
			}
			pwned := filepath.Join(t.TempDir(), "PWNED-husky-parent")
			r := strict(t, repo, env, nil, "sh", "-c", renameAttack(".husky", ".husky-old",
				fmt.Sprintf("mkdir -p .husky/_\nprintf '#!/bin/sh\\ntouch %s\\n' > .husky/_/pre-commit\nchmod +x .husky/_/pre-commit", pwned)))
			checkRenameRefused(t, r)
			hostGit(t, repo, env, "commit", "-q", "--allow-empty", "-m", "after the box")
			absent(t, "host git commit", pwned)
			absent(t, "the box's rename", filepath.Join(repo, ".husky-old"))
		})
	}
}

// TestHandoffWorkdirHostExec: a strict box refuses to start where it
// would write what the host runs, by the rule a bind spec's rw entry
// follows: the home (holding no credential file), ~/.config (a
// repository there), a dotfiles repository ~/.gitconfig links into, a
// repository of scripts linked into ~/.local/bin one by one. The
// box would append a core.fsmonitor to the global git config and a line
// to ~/.bashrc, or replace a linked script; the launch is refused naming
// why, and host git in another repository, a bash shell and the script
// run nothing.
func TestHandoffWorkdirHostExec(t *testing.T) {
	repo, home, env := strictRepo(t)
	env = append(env, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "AISAN_HOME="+filepath.Join(t.TempDir(), "aisan"))
	pwned := filepath.Join(t.TempDir(), "PWNED-workdir")
	evil := payload(t, t.TempDir(), pwned)
	os.Chmod(filepath.Dir(evil), 0o755)
	cfg := filepath.Join(home, ".config")
	os.MkdirAll(filepath.Join(cfg, "git"), 0o755)
	hostGit(t, cfg, env, "init", "-q")
	dots := filepath.Join(home, "dotfiles")
	os.MkdirAll(dots, 0o755)
	hostGit(t, dots, env, "init", "-q")
	gc, err := os.ReadFile(filepath.Join(home, ".gitconfig"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dots, "gitconfig"), string(gc))
	os.Remove(filepath.Join(home, ".gitconfig"))
	if err := os.Symlink(filepath.Join(dots, "gitconfig"), filepath.Join(home, ".gitconfig")); err != nil {
		t.Fatal(err)
	}
	// Scripts kept in a repository and linked into ~/.local/bin one by one.
	bins := filepath.Join(home, "scripts")
	writeFile(t, filepath.Join(bins, "bin", "hello"), "#!/bin/sh\necho hello\n")
	os.Chmod(filepath.Join(bins, "bin", "hello"), 0o755)
	hostGit(t, bins, env, "init", "-q")
	hello := filepath.Join(home, ".local", "bin", "hello")
	os.MkdirAll(filepath.Dir(hello), 0o755)
	if err := os.Symlink(filepath.Join(bins, "bin", "hello"), hello); err != nil {
		t.Fatal(err)
	}
	fsm := fmt.Sprintf(`printf '[core]\n\tfsmonitor = %s\n'`, evil)
	for _, tc := range []struct {
		dir, attack, says string
	}{
		{home, fsm + ` >> .gitconfig; echo ` + shq(evil) + ` >> .bashrc`, "it is " + home + " (your home"},
		{cfg, fsm + ` >> git/config`, "it is " + cfg + " (it holds the startup files"},
		{dots, fsm + ` >> gitconfig`, "it holds " + filepath.Join(home, ".gitconfig") + " (git's global config"},
		{bins, fmt.Sprintf(`printf '#!/bin/sh\ntouch %s\n' > bin/hello`, pwned), "it is where " + hello + " links to (commands on your PATH)"},
	} {
		t.Run(filepath.Base(tc.dir), func(t *testing.T) {
			r := strict(t, tc.dir, env, nil, "sh", "-c", tc.attack+" && echo planted")
			if r.code == 0 || strings.Contains(r.stdout, "planted") {
				t.Errorf("a strict box started in %s: exit %d, %q %q", tc.dir, r.code, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stderr, "aisan: error: a strict box does not start in "+tc.dir) || !strings.Contains(r.stderr, tc.says) ||
				!strings.Contains(r.stderr, "hint: cd into a project") || !strings.Contains(r.stderr, "read-only") {
				t.Errorf("the refusal does not say why and what to do: %q", r.stderr)
			}
			runCmd(t, repo, env, "", "git", "status")
			runCmd(t, repo, env, "", "bash", "-ic", "true")
			runCmd(t, repo, env, "", hello)
			absent(t, "host git status, a bash shell and ~/.local/bin/hello", pwned)
		})
	}
}
