package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// hookHandOff is the run the git hook tests share, on a repository
// whose hooks (git's own, or a hook manager's, installed) run the
// repository's files mods("") on commit. mods(mark) are those files
// made to leave marks starting with mark. First the control: with
// mods(CONTROL) committed, the host's next commit leaves every
// marks(CONTROL), or the test proves nothing. Then the box writes
// mods(PWNED) over them and stages them (pre-commit runs what is
// staged: it stashes the rest first), and the host's next commit must
// leave none of marks(PWNED); the box's end holds held (relative to
// the repository) and puts their index entries back.
func hookHandOff(t *testing.T, repo string, env []string, mods func(mark string) map[string]string, marks func(mark string) []string, held ...string) {
	t.Helper()
	hookHandOffIn(t, repo, "", env, mods, marks, held...)
}

// hookHandOffIn is hookHandOff for a repository sub inside the box's
// repository box (a nested one, a submodule): the box starts in box,
// the hooked repository's files, commits and index are sub's, and held
// are relative to box.
func hookHandOffIn(t *testing.T, box, sub string, env []string, mods func(mark string) map[string]string, marks func(mark string) []string, held ...string) {
	t.Helper()
	repo := filepath.Join(box, sub)
	out := t.TempDir()
	os.Chmod(out, 0o777)
	write := func(files map[string]string) {
		for f, data := range files {
			writeFile(t, filepath.Join(repo, f), data)
			os.Chmod(filepath.Join(repo, f), 0o755)
		}
	}
	commit := committer(t, repo, env)
	// Committed each time: pre-commit runs what is staged (it stashes
	// the rest first).
	stage := func(files map[string]string, msg string) {
		t.Helper()
		write(files)
		hostGit(t, repo, env, "add", "-A")
		if problem := commit(msg); problem != "" {
			t.Fatalf("%s: %s", msg, problem)
		}
	}
	stage(mods(""), "the hooks' files")
	control := filepath.Join(out, "CONTROL")
	stage(mods(control), "control")
	present(t, "git commit before the box", marks(control)...)
	if t.Failed() {
		t.FailNow()
	}
	stage(mods(""), "the hooks' files again")

	pwned := filepath.Join(out, "PWNED")
	attack := ""
	if sub != "" {
		attack = "cd " + shq(sub) + "\n"
	}
	for f, data := range mods(pwned) {
		attack += "printf '%s' " + shq(data) + " > " + shq(f) + " && git add -- " + shq(f) + "\n"
	}
	r := strict(t, box, env, nil, "sh", "-c", "set -e\n"+attack+"echo planted\n")
	if r.code != 0 || !strings.Contains(r.stdout, "planted") {
		t.Fatalf("the box: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	t.Logf("the box's launch and end:\n%s", r.stderr)
	if problem := commit("after the box"); problem != "" {
		t.Fatalf("the host's commit after the box: %s", problem)
	}
	absent(t, "git commit after the box", marks(pwned)...)
	checkHeld(t, r, env, slotName(box, "run"), held, nil)
	if !strings.Contains(r.stderr, "staged its own version") {
		t.Errorf("the box's end does not say it put the index entries back: %q", r.stderr)
	}
	if staged := strings.TrimSpace(hostGit(t, repo, env, "diff", "--cached", "--name-only")); staged != "" {
		t.Errorf("staged after the host's commit: %q", staged)
	}
}

// shTouch is a shell script that leaves mark, or does nothing.
func shTouch(mark string) string {
	if mark == "" {
		return "#!/bin/sh\nexit 0\n"
	}
	return "#!/bin/sh\ntouch " + mark + "\n"
}

// TestHandoffGitHookScripts: the repository's pre-commit hook is the
// user's own and runs files of the repository: a script, and make with
// the project's Makefile, whose recipe runs another script. The box
// leaves the hook alone and rewrites what it runs. The user's next 'git
// commit' on the host must run none of it.
func TestHandoffGitHookScripts(t *testing.T) {
	repo, _, env := strictRepo(t)
	_, err := exec.LookPath("make")
	need(t, "make", err)
	hook := filepath.Join(repo, ".git", "hooks", "pre-commit")
	writeFile(t, hook, "#!/bin/sh\n./scripts/check.sh\nmake -s lint\n")
	os.Chmod(hook, 0o755)
	writeFile(t, filepath.Join(repo, "Makefile"), "lint:\n\t./tools/lint.sh\n")
	mods := func(mark string) map[string]string {
		return map[string]string{"scripts/check.sh": shTouch(suffixed(mark, ".check")), "tools/lint.sh": shTouch(suffixed(mark, ".lint"))}
	}
	marks := func(mark string) []string { return []string{mark + ".check", mark + ".lint"} }
	hookHandOff(t, repo, env, mods, marks, "scripts/check.sh", "tools/lint.sh")
}

// TestHandoffNestedRepoHookScripts: a repository nested in the box's
// (a tool checked out under tools/, not a submodule) has the user's
// pre-commit hook, which runs a script of that repository. The box
// rewrites the script and stages it there. The user's next 'git commit'
// in the nested repository must not run it.
func TestHandoffNestedRepoHookScripts(t *testing.T) {
	repo, _, env := strictRepo(t)
	sub := filepath.Join(repo, "tools", "lib")
	os.MkdirAll(sub, 0o755)
	hostGit(t, sub, env, "init", "-q")
	hostGit(t, sub, env, "commit", "-q", "--allow-empty", "-m", "init")
	hook := filepath.Join(sub, ".git", "hooks", "pre-commit")
	writeFile(t, hook, "#!/bin/sh\n./scripts/check.sh\n")
	os.Chmod(hook, 0o755)
	mods := func(mark string) map[string]string {
		return map[string]string{"scripts/check.sh": shTouch(suffixed(mark, ".check"))}
	}
	marks := func(mark string) []string { return []string{mark + ".check"} }
	hookHandOffIn(t, repo, "tools/lib", env, mods, marks, "tools/lib/scripts/check.sh")
}

// TestHandoffSubmoduleHookScripts: the same for a submodule, whose git
// dir lies in the box's repository's .git/modules and whose hook (the
// user's) runs a script of the submodule's working tree.
func TestHandoffSubmoduleHookScripts(t *testing.T) {
	repo, _, env := strictRepo(t)
	src := worktree(t)
	hostGit(t, src, env, "init", "-q")
	hostGit(t, src, env, "commit", "-q", "--allow-empty", "-m", "init")
	hostGit(t, repo, env, "-c", "protocol.file.allow=always", "submodule", "add", "-q", src, "lib")
	hostGit(t, repo, env, "commit", "-q", "-m", "the submodule")
	hook := filepath.Join(repo, ".git", "modules", "lib", "hooks", "pre-commit")
	writeFile(t, hook, "#!/bin/sh\n./scripts/check.sh\n")
	os.Chmod(hook, 0o755)
	mods := func(mark string) map[string]string {
		return map[string]string{"scripts/check.sh": shTouch(suffixed(mark, ".check"))}
	}
	marks := func(mark string) []string { return []string{mark + ".check"} }
	hookHandOffIn(t, repo, "lib", env, mods, marks, "lib/scripts/check.sh")
}

// TestHandoffGitHookMakeInclude: the pre-commit hook runs make, whose
// recipe lies in a makefile the Makefile includes and names its script
// through a variable set there. The box rewrites the script; the
// user's next commit must not run it.
func TestHandoffGitHookMakeInclude(t *testing.T) {
	repo, _, env := strictRepo(t)
	_, err := exec.LookPath("make")
	need(t, "make", err)
	hook := filepath.Join(repo, ".git", "hooks", "pre-commit")
	writeFile(t, hook, "#!/bin/sh\nmake -s lint\n")
	os.Chmod(hook, 0o755)
	writeFile(t, filepath.Join(repo, "Makefile"), "MK = mk\ninclude $(MK)/rules.mk\n")
	writeFile(t, filepath.Join(repo, "mk", "rules.mk"), "LINTER ?= ./tools/lint.sh\nlint:\n\t$(LINTER) --all\n")
	mods := func(mark string) map[string]string {
		return map[string]string{"tools/lint.sh": shTouch(suffixed(mark, ".lint"))}
	}
	marks := func(mark string) []string { return []string{mark + ".lint"} }
	hookHandOff(t, repo, env, mods, marks, "tools/lint.sh")
}

// TestHandoffLintStagedPackageJSON: the pre-commit hook runs npx
// lint-staged (a stand-in in node_modules that runs each command of
// package.json's "lint-staged", as lint-staged does), whose
// configuration sits in package.json. The box rewrites it there; the
// user's next commit must not run the box's command.
func TestHandoffLintStagedPackageJSON(t *testing.T) {
	repo, _, env := strictRepo(t)
	for _, tool := range []string{"npx", "node"} {
		_, err := exec.LookPath(tool)
		need(t, tool, err)
	}
	env = append(env, "npm_config_offline=true", "npm_config_update_notifier=false")
	hook := filepath.Join(repo, ".git", "hooks", "pre-commit")
	writeFile(t, hook, "#!/bin/sh\nnpx --no-install lint-staged\n")
	os.Chmod(hook, 0o755)
	writeFile(t, filepath.Join(repo, "node_modules", "lint-staged", "package.json"), `{"name": "lint-staged", "version": "0.0.0", "bin": {"lint-staged": "cli.js"}}`)
	writeFile(t, filepath.Join(repo, "node_modules", "lint-staged", "cli.js"), "#!/usr/bin/env node\n"+
		"const c = require(process.cwd() + '/package.json')['lint-staged'] || {};\n"+
		"for (const k of Object.keys(c)) require('child_process').execSync(c[k], {stdio: 'inherit'});\n")
	os.Chmod(filepath.Join(repo, "node_modules", "lint-staged", "cli.js"), 0o755)
	os.MkdirAll(filepath.Join(repo, "node_modules", ".bin"), 0o755)
	os.Symlink("../lint-staged/cli.js", filepath.Join(repo, "node_modules", ".bin", "lint-staged"))
	mods := func(mark string) map[string]string {
		cmd := "true"
		if mark != "" {
			cmd = "touch " + mark + ".staged"
		}
		return map[string]string{"package.json": `{"name": "p", "lint-staged": {"*": "` + cmd + `"}}`}
	}
	marks := func(mark string) []string { return []string{mark + ".staged"} }
	hookHandOff(t, repo, env, mods, marks, "package.json")
}

// suffixed is mark with suffix, or "" for no mark.
func suffixed(mark, suffix string) string {
	if mark == "" {
		return ""
	}
	return mark + suffix
}

// TestHandoffHuskyHookScripts: husky is installed (the real one, from
// tests/env/npm.sh) and the user's .husky/pre-commit runs a node script
// of the repository. The box leaves .husky alone and rewrites that
// script. The user's next 'git commit' on the host must not run it.
func TestHandoffHuskyHookScripts(t *testing.T) {
	repo, _, env := strictRepo(t)
	husky := filepath.Join(os.Getenv("AISAN_NODE_MODULES"), ".bin", "husky")
	if _, err := os.Stat(husky); err != nil || os.Getenv("AISAN_NODE_MODULES") == "" {
		need(t, "husky", fmt.Errorf("%s: %v (make test installs it with tests/env/npm.sh)", husky, err))
	}
	_, err := exec.LookPath("node")
	need(t, "node", err)
	if r := runCmd(t, repo, env, "", husky); r.code != 0 {
		t.Fatalf("husky: exit %d, %s %s", r.code, r.stdout, r.stderr)
	}
	writeFile(t, filepath.Join(repo, ".husky", "pre-commit"), "node tools/precommit.js\n")
	mods := func(mark string) map[string]string {
		if mark == "" {
			return map[string]string{"tools/precommit.js": "\n"}
		}
		return map[string]string{"tools/precommit.js": nodeTouch(mark)}
	}
	hookHandOff(t, repo, env, mods, func(mark string) []string { return []string{mark} }, "tools/precommit.js")
}

// TestHandoffPreCommitEntries: the repository uses pre-commit (the
// real one, from the distribution), whose local hooks run a script of
// the repository and python with one. The box leaves the config alone
// and rewrites both files. The user's next 'git commit' on the host
// must run neither.
func TestHandoffPreCommitEntries(t *testing.T) {
	repo, _, env := strictRepo(t)
	preCommit, err := exec.LookPath("pre-commit")
	if err != nil {
		need(t, "pre-commit", fmt.Errorf("%w (make test installs the distribution's package)", err))
	}
	hook := func(id, entry, language string) string {
		return fmt.Sprintf("  - id: %s\n    name: %s\n    entry: %s\n    language: %s\n    always_run: true\n    pass_filenames: false\n", id, id, entry, language)
	}
	cfg := "repos:\n- repo: local\n  hooks:\n" + hook("check", "scripts/check.sh", "script") + hook("lint", "python3 tools/lint.py", "system")
	installHookManager(t, repo, env, preCommit, ".pre-commit-config.yaml", cfg)
	mods := func(mark string) map[string]string {
		py := "\n"
		if mark != "" {
			py = pyTouch(mark + ".lint")
		}
		return map[string]string{"scripts/check.sh": shTouch(suffixed(mark, ".check")), "tools/lint.py": py}
	}
	marks := func(mark string) []string { return []string{mark + ".check", mark + ".lint"} }
	hookHandOff(t, repo, env, mods, marks, "scripts/check.sh", "tools/lint.py")
}

// TestHandoffLefthookRuns: the repository uses lefthook (the real one,
// from tests/env/npm.sh), whose pre-commit command runs a script of the
// repository from a subdirectory and whose script in .lefthook runs
// another with sh. The box leaves the config and .lefthook alone and
// rewrites what they run. The user's next 'git commit' on the host must
// run none of it.
func TestHandoffLefthookRuns(t *testing.T) {
	repo, _, env := strictRepo(t)
	lefthook := agentBin(t, "lefthook")
	env = onPath(t, env, lefthook)
	writeFile(t, filepath.Join(repo, ".lefthook", "pre-commit", "more.sh"), "#!/bin/sh\nsh tools/more.sh\n")
	os.Chmod(filepath.Join(repo, ".lefthook", "pre-commit", "more.sh"), 0o755)
	installHookManager(t, repo, env, lefthook, "lefthook.yml", "pre-commit:\n  commands:\n    lint:\n      root: web/\n      run: ./lint.sh\n  scripts:\n    \"more.sh\":\n      runner: sh\n")
	mods := func(mark string) map[string]string {
		return map[string]string{"web/lint.sh": shTouch(suffixed(mark, ".lint")), "tools/more.sh": shTouch(suffixed(mark, ".more"))}
	}
	marks := func(mark string) []string { return []string{mark + ".lint", mark + ".more"} }
	hookHandOff(t, repo, env, mods, marks, "web/lint.sh", "tools/more.sh")
}

// TestHandoffPreCommitModule: pre-commit's installed hook starts its
// python with -m pre_commit in the repository's root, where Python
// looks for the module first. The box adds a pre_commit package there.
// The user's next 'git commit' on the host must not run it.
func TestHandoffPreCommitModule(t *testing.T) {
	repo, _, env := strictRepo(t)
	preCommit, err := exec.LookPath("pre-commit")
	if err != nil {
		need(t, "pre-commit", fmt.Errorf("%w (make test installs the distribution's package)", err))
	}
	installHookManager(t, repo, env, preCommit, ".pre-commit-config.yaml", "repos:\n- repo: local\n  hooks:\n  - {id: ok, name: ok, entry: /bin/true, language: system, always_run: true, pass_filenames: false}\n")
	pwned := filepath.Join(t.TempDir(), "PWNED-module")
	os.Chmod(filepath.Dir(pwned), 0o777)
	r := strict(t, repo, env, nil, "sh", "-c", "mkdir pre_commit && : > pre_commit/__init__.py && printf '%s' "+shq(pyTouch(pwned))+" > pre_commit/__main__.py && echo planted")
	if r.code != 0 || !strings.Contains(r.stdout, "planted") {
		t.Fatalf("the box: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	t.Logf("the box's launch and end:\n%s", r.stderr)
	commit := committer(t, repo, env)
	if problem := commit("after the box"); problem != "" {
		t.Fatalf("the host's commit after the box: %s", problem)
	}
	absent(t, "git commit after the box", pwned)
	checkHeld(t, r, env, slotName(repo, "run"), []string{"pre_commit"}, nil)
}

// hookScriptRepo is a strict test repository whose pre-commit hook (the
// user's, in .git/hooks) runs the committed scripts/check.sh, and the
// marker a box's version of that script would write.
func hookScriptRepo(t *testing.T) (repo string, env []string, pwned string) {
	t.Helper()
	repo, _, env = strictRepo(t)
	out := t.TempDir()
	os.Chmod(out, 0o777)
	hook := filepath.Join(repo, ".git", "hooks", "pre-commit")
	writeFile(t, hook, "#!/bin/sh\n./scripts/check.sh\n")
	os.Chmod(hook, 0o755)
	writeFile(t, filepath.Join(repo, "scripts/check.sh"), shTouch(""))
	os.Chmod(filepath.Join(repo, "scripts/check.sh"), 0o755)
	hostGit(t, repo, env, "add", "-A")
	hostGit(t, repo, env, "commit", "-q", "-m", "the hook's script")
	return repo, env, filepath.Join(out, "PWNED")
}

// TestHandoffBoxCommitsHookScript: the box rewrites the script the
// user's pre-commit hook runs and commits it. The working tree and the
// index keep the user's script, the user's next commit runs that, and
// the box's end says its commit changed what host tools run.
func TestHandoffBoxCommitsHookScript(t *testing.T) {
	repo, env, pwned := hookScriptRepo(t)
	r := strict(t, repo, env, nil, "sh", "-c", "set -e\nprintf '%s' "+shq(shTouch(pwned))+" > scripts/check.sh\ngit -c gc.auto=0 -c maintenance.auto=false commit -q --no-verify -am 'the box'\necho committed\n")
	if r.code != 0 || !strings.Contains(r.stdout, "committed") {
		t.Fatalf("the box: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "committed its own version") || !strings.Contains(r.stderr, "scripts/check.sh") {
		t.Errorf("the box's end does not say it committed a held script: %q", r.stderr)
	}
	t.Logf("the box's end:\n%s", r.stderr)
	// The launch returned before comparing the repository with its
	// snapshot (the receipt); that comparison runs git diff after the
	// box's commit, beside the user's next git command, and must not
	// rewrite the index, or hold its lock, under it.
	index := filepath.Join(repo, ".git", "index")
	returned, err := os.Stat(index)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`aisan review ([^'\s]+)`).FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("the end names no held set: %q", r.stderr)
	}
	waitFor(t, 15*time.Second, "the receipt's comparison", func() bool {
		rep := aisan(t, env, "", "report", m[1], "--json")
		return strings.Contains(rep.stdout, `"receipt": true`) && !strings.Contains(rep.stdout, "changes_unknown")
	})
	if now, err := os.Stat(index); err != nil || !os.SameFile(returned, now) || !now.ModTime().Equal(returned.ModTime()) {
		t.Errorf("the index was rewritten after the launch returned (%v)", err)
	}
	if log := hostGit(t, repo, env, "log", "-1", "--format=%s"); strings.TrimSpace(log) != "the box" {
		t.Fatalf("the box's commit is not HEAD: %q", log)
	}
	if problem := committer(t, repo, env)("after the box"); problem != "" {
		t.Fatalf("the host's commit after the box: %s", problem)
	}
	absent(t, "git commit after the box", pwned)
}

// TestHandoffBoxBranchHookScript: the box leaves its version of the
// script the pre-commit hook runs on a branch of its own, a tag, a
// remote-tracking branch (git switch fix would make a branch of it) and
// in a stash, staying on the user's branch, a usual way to hand work
// back. Checking one out or popping the stash would put it in the
// working tree; the end names each, and the host's next commit on the
// user's branch runs the user's script.
func TestHandoffBoxBranchHookScript(t *testing.T) {
	repo, env, pwned := hookScriptRepo(t)
	// A held file is a mount point in the box, which checkout cannot
	// replace: the branch is made with git's plumbing, the stash with
	// stash create and store, as the box's agent could.
	box := "set -e\nblob=$(printf '%s' " + shq(shTouch(pwned)) + " | git hash-object -w --stdin)\n" +
		"export GIT_INDEX_FILE=/tmp/box-index\ngit read-tree HEAD\ngit update-index --cacheinfo 100755,$blob,scripts/check.sh\n" +
		"c=$(git commit-tree $(git write-tree) -p HEAD -m 'the box')\nunset GIT_INDEX_FILE\ngit branch agent-work $c\n" +
		"git tag v9 $c\ngit update-ref refs/remotes/origin/fix $c\n" +
		"printf '%s' " + shq(shTouch(pwned)) + " > scripts/check.sh\ngit stash store -m 'the box' $(git stash create)\necho done\n"
	r := strict(t, repo, env, nil, "sh", "-c", box)
	if r.code != 0 || !strings.Contains(r.stdout, "done") {
		t.Fatalf("the box: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	t.Logf("the box's end:\n%s", r.stderr)
	for _, w := range []string{"branches it made or moved", "agent-work (scripts/check.sh)", "stash@{0} (scripts/check.sh)", "tag v9 (scripts/check.sh)", "origin/fix (scripts/check.sh)"} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("the box's end does not say %q", w)
		}
	}
	if problem := committer(t, repo, env)("after the box"); problem != "" {
		t.Fatalf("the host's commit after the box: %s", problem)
	}
	absent(t, "git commit after the box", pwned)
}

// TestHandoffRebaseTodoExec: the box starts an interactive rebase,
// stops it at a break and adds an exec line to its todo. Host git
// status then says a rebase is in progress, and the user's next step,
// git rebase --continue, would run the line. The rebase the box left is
// held for review instead (applying it brings it back, and the line
// runs: the control); one the user had in progress at launch is the
// user's, and the end says what the box added to it.
func TestHandoffRebaseTodoExec(t *testing.T) {
	repo, _, env := strictRepo(t)
	out := t.TempDir()
	os.Chmod(out, 0o777)
	for i, s := range []string{"one", "two"} {
		writeFile(t, filepath.Join(repo, "notes.txt"), s+"\n")
		hostGit(t, repo, env, "add", "-A")
		hostGit(t, repo, env, "commit", "-q", "-m", fmt.Sprint("commit ", i))
	}
	pwned := filepath.Join(out, "PWNED")
	box := "set -e\nGIT_SEQUENCE_EDITOR=\"sed -i '1i break'\" git rebase -q -i HEAD~1\n" +
		"echo 'exec touch " + pwned + "' >> .git/rebase-merge/git-rebase-todo\necho stopped\n"
	r := strict(t, repo, env, nil, "sh", "-c", box)
	if r.code != 0 || !strings.Contains(r.stdout, "stopped") {
		t.Fatalf("the box: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	t.Logf("the box's end:\n%s", r.stderr)
	cont := runCmd(t, repo, env, "", "git", "rebase", "--continue")
	t.Logf("git rebase --continue after the box: exit %d %s %s", cont.code, cont.stdout, cont.stderr)
	absent(t, "git rebase --continue after the box", pwned)
	if !strings.Contains(r.stderr, ".git/rebase-merge") {
		t.Errorf("the box's end does not name the rebase it held: %q", r.stderr)
	}
	m := regexp.MustCompile(`aisan review ([^'\s]+)`).FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("the end names no held set: %q", r.stderr)
	}
	checkHeld(t, r, env, m[1], []string{".git/rebase-merge"}, []string{"exec touch " + pwned})
	applyHeld(t, env, m[1])
	runCmd(t, repo, env, "", "git", "rebase", "--continue")
	present(t, "git rebase --continue once the held rebase is applied", pwned)

	// The user's own rebase, in progress as the box starts: the box
	// adds a line to it, and the end names the line.
	user := runCmd(t, repo, append(slices.Clone(env), "GIT_SEQUENCE_EDITOR=sed -i '1i break'"), "", "git", "rebase", "-q", "-i", "HEAD~1")
	if _, err := os.Stat(filepath.Join(repo, ".git", "rebase-merge")); err != nil {
		t.Fatalf("the user's rebase did not stop: %d %s %v", user.code, user.stderr, err)
	}
	again := filepath.Join(out, "AGAIN")
	r = strict(t, repo, env, nil, "sh", "-c", "echo 'exec touch "+again+"' >> .git/rebase-merge/git-rebase-todo")
	t.Logf("the second box's end:\n%s", r.stderr)
	if !strings.Contains(r.stderr, "added commands to the operation you have in progress") || !strings.Contains(r.stderr, `"exec touch `+again+`" in .git/rebase-merge/git-rebase-todo`) {
		t.Errorf("the end does not name the line the box added to the user's rebase: %q", r.stderr)
	}
}

// TestHandoffReplaceRefHookScript: the repository uses pre-commit (the
// real one), whose hook runs a script of the repository. The box makes
// git show its own script in place of the blob that HEAD and the index
// name for it (git replace), which leaves git status clean. The user's
// next steps: a new worktree for the next agent (git worktree add
// checks every file out, the replaced blob too) and a commit there,
// whose hook runs the script. The end puts the replace refs back and
// says so.
func TestHandoffReplaceRefHookScript(t *testing.T) {
	repo, _, env := strictRepo(t)
	preCommit, err := exec.LookPath("pre-commit")
	if err != nil {
		need(t, "pre-commit", fmt.Errorf("%w (make test installs the distribution's package)", err))
	}
	out := t.TempDir()
	os.Chmod(out, 0o777)
	writeFile(t, filepath.Join(repo, "scripts/check.sh"), shTouch(""))
	os.Chmod(filepath.Join(repo, "scripts/check.sh"), 0o755)
	writeFile(t, filepath.Join(repo, "notes.txt"), "notes\n")
	hostGit(t, repo, env, "add", "-A")
	hostGit(t, repo, env, "commit", "-q", "-m", "the hook's script")
	installHookManager(t, repo, env, preCommit, ".pre-commit-config.yaml",
		"repos:\n- repo: local\n  hooks:\n  - id: check\n    name: check\n    entry: scripts/check.sh\n    language: script\n    always_run: true\n    pass_filenames: false\n")

	pwned := filepath.Join(out, "PWNED")
	box := "set -e\nb=$(printf '%s' " + shq(shTouch(pwned)) + " | git hash-object -w --stdin)\n" +
		"git replace $(git rev-parse HEAD:scripts/check.sh) $b\ngit status --short\necho replaced\n"
	r := strict(t, repo, env, nil, "sh", "-c", box)
	if r.code != 0 || !strings.Contains(r.stdout, "replaced") {
		t.Fatalf("the box: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	t.Logf("the box's end:\n%s", r.stderr)
	if !strings.Contains(r.stderr, "replace refs") {
		t.Errorf("the box's end does not say it put the replace refs back: %q", r.stderr)
	}
	wt := filepath.Join(filepath.Dir(repo), "next")
	hostGit(t, repo, env, "worktree", "add", "-q", wt)
	c := runCmd(t, wt, env, "", "git", "commit", "-q", "--allow-empty", "-m", "after the box")
	t.Logf("the host's commit in a new worktree after the box: %d %s %s", c.code, c.stdout, c.stderr)
	absent(t, "git worktree add and a commit there after the box", pwned)
}
