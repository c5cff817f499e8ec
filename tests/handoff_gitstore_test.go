package tests

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// Hand-offs through git's own store and the names it resolves: attacks
// from inside a real strict box on what git reads without a file in the
// working tree changing (objects, refs git takes for the name the user
// types) and on a config a tool reads from .config/, each followed by
// the user's next ordinary host step.

// swapBlobBox is the box's attack on the blob HEAD and the index name
// for path: it overwrites that loose object's file with a valid loose
// object of its own content (git hash-object wrote it under the hash of
// that content; git does not rehash a loose object it reads for a
// checkout). The working tree, the index's entries and the refs stay as
// they were, so git status is clean. git status then refreshes the
// index with the stat of the box's copy of the held file, so the host's
// file no longer matches the index's stat data. The end hashes the
// objects that changed again, holds the box's and writes the user's
// back from the working tree.
func swapBlobBox(path, content string) string {
	return "set -e\n" +
		"o=$(git rev-parse HEAD:" + path + ")\n" +
		"b=$(printf '%s' " + shq(content) + " | git hash-object -w --stdin)\n" +
		"obj() { echo .git/objects/$(echo $1 | cut -c1-2)/$(echo $1 | cut -c3-); }\n" +
		"rm -f $(obj $o) && cp $(obj $b) $(obj $o)\n" +
		"echo scratch > notes.txt\n" +
		"git status --short\necho swapped\n"
}

// swappedInBox runs swapBlobBox for the pre-commit hook's script in a
// real box over hookScriptRepo, and checks that the end says so; it
// returns the repository, its environment and the file the box's script
// would create.
func swappedInBox(t *testing.T) (repo string, env []string, pwned string) {
	t.Helper()
	repo, env, pwned = hookScriptRepo(t)
	r := strict(t, repo, env, nil, "sh", "-c", swapBlobBox("scripts/check.sh", shTouch(pwned)))
	if r.code != 0 || !strings.Contains(r.stdout, "swapped") {
		t.Fatalf("the box: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	t.Logf("the box's end:\n%s", r.stderr)
	if !strings.Contains(r.stderr, "the box rewrote 1 object of the repository") {
		t.Errorf("the end does not say the box rewrote an object")
	}
	return repo, env, pwned
}

// TestHandoffObjectSwapResetHard: the box rewrites the loose object of
// the script the user's pre-commit hook runs. The user's next steps:
// discard what the box left (git reset --hard) and commit. The reset
// writes the box's script from the object store into the working tree,
// and the commit's hook runs it.
func TestHandoffObjectSwapResetHard(t *testing.T) {
	repo, env, pwned := swappedInBox(t)
	hostGit(t, repo, env, "reset", "-q", "--hard")
	if problem := committer(t, repo, env)("after the box"); problem != "" {
		t.Fatalf("the host's commit after the box: %s", problem)
	}
	absent(t, "git reset --hard and git commit after the box", pwned)
}

// TestHandoffObjectSwapWorktree: the same swap; the user's next step is
// the one TestHandoffReplaceRefHookScript takes, a new worktree for the
// next agent and a commit there. git worktree add checks the box's
// script out of the object store, and the commit's hook runs it.
func TestHandoffObjectSwapWorktree(t *testing.T) {
	repo, env, pwned := swappedInBox(t)
	wt := filepath.Join(filepath.Dir(repo), "next")
	hostGit(t, repo, env, "worktree", "add", "-q", wt)
	if problem := committer(t, wt, env)("in the next worktree"); problem != "" {
		t.Fatalf("the host's commit in the new worktree: %s", problem)
	}
	absent(t, "git worktree add and a commit there after the box", pwned)
}

// TestHandoffShadowingRef: the user's repository tracks a remote
// (refs/remotes/origin/main, as a fetch leaves it). The box commits its
// own version of the script the pre-commit hook runs, with git's
// plumbing, and points refs/origin/main and a file .git/origin/main at
// it, both of which git resolves before refs/remotes/ when a command
// names origin/main. The user's next steps: sync with the remote (git
// reset --hard origin/main; git merge or rebase origin/main resolve the
// same way) and commit. The end removes the ref and sweeps the file
// into the review.
func TestHandoffShadowingRef(t *testing.T) {
	repo, env, pwned := hookScriptRepo(t)
	hostGit(t, repo, env, "update-ref", "refs/remotes/origin/main", "HEAD")
	box := "set -e\nblob=$(printf '%s' " + shq(shTouch(pwned)) + " | git hash-object -w --stdin)\n" +
		"export GIT_INDEX_FILE=/tmp/box-index\ngit read-tree HEAD\ngit update-index --cacheinfo 100755,$blob,scripts/check.sh\n" +
		"c=$(git commit-tree $(git write-tree) -p HEAD -m 'the box')\nunset GIT_INDEX_FILE\n" +
		"git update-ref refs/origin/main $c\nmkdir -p .git/origin\necho $c > .git/origin/main\necho done\n"
	r := strict(t, repo, env, nil, "sh", "-c", box)
	if r.code != 0 || !strings.Contains(r.stdout, "done") {
		t.Fatalf("the box: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	t.Logf("the box's end:\n%s", r.stderr)
	reset := runCmd(t, repo, env, "", "git", "reset", "-q", "--hard", "origin/main")
	t.Logf("git reset --hard origin/main: exit %d %s %s", reset.code, reset.stdout, reset.stderr)
	if problem := committer(t, repo, env)("after the box"); problem != "" {
		t.Fatalf("the host's commit after the box: %s", problem)
	}
	absent(t, "git reset --hard origin/main and git commit after the box", pwned)
}

// TestHandoffMiseConfigDir: with mise installed on the host, an absent
// mise.toml at the root is foreseen (TestHandoffMiseWhileBoxRuns), but
// mise reads .config/mise.toml at the project's root as well, and that
// is only swept when the box ends. While the box runs, the host's mise
// (the user's next prompt in the repository) runs the box's env script.
func TestHandoffMiseConfigDir(t *testing.T) {
	repo, home, env := strictRepo(t)
	mise := agentBin(t, "mise")
	env = onPath(t, env, mise)
	pwned := filepath.Join(t.TempDir(), "PWNED-mise-config")
	evil := payload(t, t.TempDir(), pwned)
	miseEnv := hostMiseEnv(t, home, env, repo)
	hostMise := func() string {
		runHostMise(t, mise, repo, miseEnv)
		return ""
	}
	r := whileBoxWaits(t, repo, env, fmt.Sprintf(`mkdir -p .config && printf '[env]\n_.source = "%s"\n' >.config/mise.toml`, evil), hostMise)
	t.Logf("the box's end:\n%s", r.stderr)
	absent(t, "host mise env while the box ran", pwned)
	runHostMise(t, mise, repo, miseEnv)
	absent(t, "host mise env after the box", pwned)
	checkHeld(t, r, env, slotName(repo, "run"), []string{".config/mise.toml"}, []string{evil})
	absent(t, "the repository after the box (the mount point's parent made for the run)", filepath.Join(repo, ".config"))
}
