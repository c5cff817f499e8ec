package tests

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The editor and hook-manager hand-off tests plant, from inside a real
// strict box, what an IDE or a git hook manager on the host runs without
// asking (JetBrains' File Watchers, a VS Code workspace's folder-open
// task, pre-commit's config), then take the user's next step: the host
// sees its own files, the box's are held, and --apply writes them.

// watcherTasks is a JetBrains File Watcher that runs program on save.
func watcherTasks(program string) string {
	return fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?>
<project version="4">
  <component name="ProjectTasksOptions">
    <TaskOptions isEnabled="true">
      <option name="fileExtension" value="go" />
      <option name="name" value="fmt" />
      <option name="program" value="%s" />
      <option name="runOnExternalChanges" value="true" />
    </TaskOptions>
  </component>
</project>
`, program)
}

// TestHandoffIdeaCreated: the repository has no .idea; the box creates
// one with a File Watcher naming its payload. The host's repository has
// no .idea after the box (the IDE the user opens next finds none), the
// new file is held, and --apply writes it.
func TestHandoffIdeaCreated(t *testing.T) {
	repo, _, env := strictRepo(t)
	evil := payload(t, t.TempDir(), filepath.Join(t.TempDir(), "PWNED-idea"))
	r := strict(t, repo, env, nil, "sh", "-c", fmt.Sprintf(`mkdir -p .idea && cat > .idea/watcherTasks.xml <<'X' && echo planted
%sX`, watcherTasks(evil)))
	if r.code != 0 || !strings.Contains(r.stdout, "planted") {
		t.Fatalf("the box could not write .idea (an agent asked to add a File Watcher must be able to): exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Lstat(filepath.Join(repo, ".idea")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after the box the host has a .idea (the run's mount point, or the box's): %v", err)
	}
	slot := slotName(repo, "run")
	// .idea is a swept row: absent at launch, the box's new directory
	// is taken whole at the end; the review shows the file in it.
	checkHeld(t, r, env, slot, []string{".idea"}, []string{".idea/watcherTasks.xml", `value="` + evil + `"`})
	applyHeld(t, env, slot)
	if b, err := os.ReadFile(filepath.Join(repo, ".idea/watcherTasks.xml")); err != nil || !strings.Contains(string(b), evil) {
		t.Errorf("--apply did not write the box's File Watcher: %q %v", b, err)
	}
}

// workspace is a VS Code workspace file whose task runs on folder open.
func workspace(command string) string {
	return fmt.Sprintf(`{
  "folders": [{"path": "."}],
  "tasks": {"version": "2.0.0", "tasks": [{"label": "setup", "type": "shell", "command": %q, "runOptions": {"runOn": "folderOpen"}}]}
}
`, command)
}

// TestHandoffCodeWorkspace: proj.code-workspace exists at launch (a
// suffix row: no name can be foreseen); the box rewrites it with a
// folder-open task, and plants a second workspace file beside it. After
// the box the host's file is as it was and the new one is gone, both are
// held, and --apply writes them.
func TestHandoffCodeWorkspace(t *testing.T) {
	repo, _, env := strictRepo(t)
	ws := filepath.Join(repo, "proj.code-workspace")
	mine := workspace("make")
	if err := os.WriteFile(ws, []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	hostGit(t, repo, env, "add", "proj.code-workspace")
	hostGit(t, repo, env, "commit", "-q", "-m", "workspace")
	evil := payload(t, t.TempDir(), filepath.Join(t.TempDir(), "PWNED-workspace"))
	w := workspace(evil)
	r := strict(t, repo, env, nil, "sh", "-c", fmt.Sprintf(`cat > proj.code-workspace <<'X' && cp proj.code-workspace more.code-workspace && echo planted
%sX`, w))
	if r.code != 0 || !strings.Contains(r.stdout, "planted") {
		t.Fatalf("exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if b, err := os.ReadFile(ws); err != nil || string(b) != mine {
		t.Errorf("the host's workspace file changed behind the user's back: %q %v", b, err)
	}
	if _, err := os.Lstat(filepath.Join(repo, "more.code-workspace")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the box's new workspace file is in the repository: %v", err)
	}
	slot := slotName(repo, "run")
	checkHeld(t, r, env, slot, []string{"proj.code-workspace", "more.code-workspace"}, []string{evil, `-  "tasks": {"version": "2.0.0", "tasks": [{"label": "setup", "type": "shell", "command": "make"`})
	applyHeld(t, env, slot)
	for _, f := range []string{ws, filepath.Join(repo, "more.code-workspace")} {
		if b, err := os.ReadFile(f); err != nil || string(b) != w {
			t.Errorf("--apply did not write the box's %s: %q %v", filepath.Base(f), b, err)
		}
	}
}

// TestHandoffPreCommitConfig: the repository has no
// .pre-commit-config.yaml; the box creates one whose local hook runs its
// payload (pre-commit's installed git hook would run it on the user's
// next git commit). After the box the host has none, it is held, and
// --apply writes it.
func TestHandoffPreCommitConfig(t *testing.T) {
	repo, _, env := strictRepo(t)
	evil := payload(t, t.TempDir(), filepath.Join(t.TempDir(), "PWNED-precommit"))
	cfg := fmt.Sprintf("repos:\n- repo: local\n  hooks:\n  - id: x\n    name: x\n    entry: %s\n    language: system\n    always_run: true\n    pass_filenames: false\n", evil)
	r := strict(t, repo, env, nil, "sh", "-c", fmt.Sprintf(`cat > .pre-commit-config.yaml <<'X' && echo planted
%sX`, cfg))
	if r.code != 0 || !strings.Contains(r.stdout, "planted") {
		t.Fatalf("exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Lstat(filepath.Join(repo, ".pre-commit-config.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after the box the host has a .pre-commit-config.yaml: %v", err)
	}
	hostGit(t, repo, env, "commit", "-q", "--allow-empty", "-m", "after the box")
	slot := slotName(repo, "run")
	checkHeld(t, r, env, slot, []string{".pre-commit-config.yaml"}, []string{"+    entry: " + evil})
	applyHeld(t, env, slot)
	if b, err := os.ReadFile(filepath.Join(repo, ".pre-commit-config.yaml")); err != nil || string(b) != cfg {
		t.Errorf("--apply did not write the box's config: %q %v", b, err)
	}
}

// TestHandoffHuskyScript: husky is installed (the real one, from
// tests/env/npm.sh: core.hooksPath .husky/_, its dispatcher there, the
// user's .husky/pre-commit); the box rewrites .husky/pre-commit, which
// lies outside the hooks path jail/gitpin protects. Host git commit does
// not run it; review shows it; once applied, git commit runs it.
func TestHandoffHuskyScript(t *testing.T) {
	repo, _, env := strictRepo(t)
	// Not agentBin: husky takes any argument for a hooks directory, and
	// 'husky --version' in a git checkout would point its hooks there.
	husky := filepath.Join(os.Getenv("AISAN_NODE_MODULES"), ".bin", "husky")
	if _, err := os.Stat(husky); err != nil || os.Getenv("AISAN_NODE_MODULES") == "" {
		need(t, "husky", fmt.Errorf("%s: %v (make test installs it with tests/env/npm.sh)", husky, err))
	}
	if r := runCmd(t, repo, env, "", husky); r.code != 0 {
		t.Fatalf("husky: exit %d, %s %s", r.code, r.stdout, r.stderr)
	}
	if got := strings.TrimSpace(hostGit(t, repo, env, "config", "core.hooksPath")); got != ".husky/_" {
		t.Fatalf("husky set core.hooksPath to %q", got)
	}
	if err := os.WriteFile(filepath.Join(repo, ".husky", "pre-commit"), []byte("true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	hostGit(t, repo, env, "commit", "-q", "--allow-empty", "-m", "husky runs the user's script")
	pwned := filepath.Join(t.TempDir(), "PWNED-husky-script")
	r := strict(t, repo, env, nil, "sh", "-c", fmt.Sprintf(`echo 'touch %s' > .husky/pre-commit && echo planted`, pwned))
	if r.code != 0 || !strings.Contains(r.stdout, "planted") {
		t.Fatalf("exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	hostGit(t, repo, env, "commit", "-q", "--allow-empty", "-m", "after the box")
	absent(t, "host git commit", pwned)
	slot := slotName(repo, "run")
	checkHeld(t, r, env, slot, []string{".husky/pre-commit"}, []string{"+touch " + pwned})
	applyHeld(t, env, slot)
	hostGit(t, repo, env, "commit", "-q", "--allow-empty", "-m", "after apply")
	present(t, "git commit after --apply", pwned)
}

// TestHandoffMiseWhileBoxRuns: with mise installed on the host (the real
// one, from tests/env/npm.sh), an absent mise.toml is foreseen: the box
// writes its copy from the start. While the box still runs, the host's
// mise, which trusts the project, reads the repository as the user's
// next prompt would (mise env) and runs nothing of the box's; after it,
// the change is held.
func TestHandoffMiseWhileBoxRuns(t *testing.T) {
	repo, home, env := strictRepo(t)
	mise := agentBin(t, "mise")
	env = onPath(t, env, mise)
	pwned := filepath.Join(t.TempDir(), "PWNED-mise")
	evil := payload(t, t.TempDir(), pwned)
	miseEnv := hostMiseEnv(t, home, env, repo)
	hostMise := func() string {
		cmd := exec.Command(mise, "env")
		cmd.Dir, cmd.Env = repo, miseEnv
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Sprintf("mise env: %v: %s", err, out)
		}
		return ""
	}
	r := whileBoxWaits(t, repo, env, fmt.Sprintf(`printf '[env]\n_.source = "%s"\n' >mise.toml`, evil), hostMise)
	absent(t, "host mise env while the box ran", pwned)
	if problem := hostMise(); problem != "" {
		t.Fatalf("the host's step after the box: %s", problem)
	}
	absent(t, "host mise env after the box", pwned)
	checkHeld(t, r, env, slotName(repo, "run"), []string{"mise.toml"}, []string{evil})
}

// TestHandoffLefthookLocalWhileBoxRuns: a repository that uses lefthook
// (its lefthook.yml committed, its git hooks installed by the real
// lefthook) and has no lefthook-local.yml, which lefthook merges over
// the main config. The box writes one whose pre-commit runs a payload,
// then waits while the host commits, as the user would; the host
// commits again after the box. Neither commit runs it; review holds it;
// once applied, the next commit does (the control).
func TestHandoffLefthookLocalWhileBoxRuns(t *testing.T) {
	repo, _, env := strictRepo(t)
	lefthook := agentBin(t, "lefthook")
	env = onPath(t, env, lefthook)
	installHookManager(t, repo, env, lefthook, "lefthook.yml", "pre-commit:\n  commands:\n    ok:\n      run: \"true\"\n")
	pwned := filepath.Join(t.TempDir(), "PWNED-lefthook")
	evil := payload(t, t.TempDir(), pwned)
	commit := committer(t, repo, env)
	r := whileBoxWaits(t, repo, env, fmt.Sprintf(`printf 'pre-commit:\n  commands:\n    planted:\n      run: %s\n' >lefthook-local.yml`, evil),
		func() string { return commit("while the box runs") })
	heldUntilApplied(t, r, repo, env, commit, pwned, "lefthook-local.yml", evil)
}

// TestHandoffPreCommitWhileBoxRuns: the repository uses pre-commit (the
// real one, from the distribution: its config committed with a harmless
// local hook, its git hook installed). The box adds a local hook that
// runs a payload, then waits while the host commits, as the user would;
// the host commits again after the box. Neither commit runs it; review
// holds it; once applied (and staged, as pre-commit wants), the next
// commit does (the control).
func TestHandoffPreCommitWhileBoxRuns(t *testing.T) {
	repo, _, env := strictRepo(t)
	preCommit, err := exec.LookPath("pre-commit")
	if err != nil {
		need(t, "pre-commit", fmt.Errorf("%w (make test installs the distribution's package)", err))
	}
	hook := func(id, entry string) string {
		return fmt.Sprintf("  - id: %s\n    name: %s\n    entry: %s\n    language: system\n    always_run: true\n    pass_filenames: false\n", id, id, entry)
	}
	own := "repos:\n- repo: local\n  hooks:\n" + hook("ok", "/bin/true")
	installHookManager(t, repo, env, preCommit, ".pre-commit-config.yaml", own)
	pwned := filepath.Join(t.TempDir(), "PWNED-precommit-run")
	evil := payload(t, t.TempDir(), pwned)
	theirs := own + hook("planted", evil)
	commit := committer(t, repo, env)
	r := whileBoxWaits(t, repo, env, fmt.Sprintf("printf '%%s' '%s' >.pre-commit-config.yaml", theirs),
		func() string { return commit("while the box runs") })
	// pre-commit refuses an unstaged config, so the applied one is staged.
	heldUntilApplied(t, r, repo, env, commit, pwned, ".pre-commit-config.yaml", "+    entry: "+evil, ".pre-commit-config.yaml")
}

// installHookManager commits a hook manager's config (name, content) in
// repo and runs its install there (bin install), as its user has.
func installHookManager(t *testing.T, repo string, env []string, bin, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(repo, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	hostGit(t, repo, env, "add", name)
	hostGit(t, repo, env, "commit", "-q", "-m", filepath.Base(bin))
	if r := runCmd(t, repo, env, "", bin, "install"); r.code != 0 {
		t.Fatalf("%s install: exit %d, %s %s", filepath.Base(bin), r.code, r.stdout, r.stderr)
	}
}

// heldUntilApplied is the rest of a hook manager's hand-off, after the
// box r planted file while the host committed beside it: the payload
// (marker pwned) ran neither then nor on the commit after the box, the
// slot holds file with want in what review shows, and once applied the
// next commit (staging stage too) runs it, the control.
func heldUntilApplied(t *testing.T, r result, repo string, env []string, commit func(string, ...string) string, pwned, file, want string, stage ...string) {
	t.Helper()
	absent(t, "host git commit while the box ran", pwned)
	if problem := commit("after the box"); problem != "" {
		t.Fatalf("the host's commit after the box: %s", problem)
	}
	absent(t, "host git commit after the box", pwned)
	slot := slotName(repo, "run")
	checkHeld(t, r, env, slot, []string{file}, []string{want})
	applyHeld(t, env, slot)
	if problem := commit("after review", stage...); problem != "" {
		t.Fatalf("the host's commit once applied: %s", problem)
	}
	present(t, "host git commit once applied", pwned)
}

// onPath puts only bin of the test tree's tools on env's PATH: the
// launch looks a tool up there.
func onPath(t *testing.T, env []string, bin string) []string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Symlink(bin, filepath.Join(dir, filepath.Base(bin))); err != nil {
		t.Fatal(err)
	}
	return append(env, "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// whileBoxWaits runs plant (shell) in a strict box in repo, which then
// waits while the host takes step, as the user's next prompt or commit
// would while the box still runs; it fails the test when either went
// wrong and returns the box's result.
func whileBoxWaits(t *testing.T, repo string, env []string, plant string, step func() string) result {
	t.Helper()
	seen := make(chan string, 1)
	go func() {
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if _, err := os.Stat(filepath.Join(repo, "ready")); err == nil {
				seen <- step()
				os.WriteFile(filepath.Join(repo, "looked"), nil, 0o644)
				return
			}
		}
		seen <- "the box never got ready"
	}()
	r := strict(t, repo, env, nil, "sh", "-c", plant+` && : >ready &&
		i=0; while [ ! -e looked ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done; echo box-done`)
	if r.code != 0 || !strings.Contains(r.stdout, "box-done") {
		t.Fatalf("the box: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if problem := <-seen; problem != "" {
		t.Fatalf("the host's step while the box ran: %s", problem)
	}
	return r
}

// committer returns the host's git commit in repo: each call stages a
// new file first (lefthook and pre-commit skip hooks when nothing is
// staged), and the paths in add; it returns what went wrong, or "".
func committer(t *testing.T, repo string, env []string) func(msg string, add ...string) string {
	n := 0
	return func(msg string, add ...string) string {
		n++
		name := fmt.Sprintf("change-%d.txt", n)
		os.WriteFile(filepath.Join(repo, name), []byte(msg+"\n"), 0o644)
		if r := runCmd(t, repo, env, "", "git", append([]string{"add", name}, add...)...); r.code != 0 {
			return fmt.Sprintf("git add: exit %d: %s", r.code, r.stderr)
		}
		if r := runCmd(t, repo, env, "", "git", "commit", "-q", "-m", msg); r.code != 0 {
			return fmt.Sprintf("git commit: exit %d: %s %s", r.code, r.stdout, r.stderr)
		}
		return ""
	}
}

// TestHandoffEnvrcLoads: the user allowed a project's .envrc that sources
// .envrc.local and puts bin/ on PATH (direnv asks again only when the
// .envrc itself changes). The box creates both files; after it ends the
// user's next step, direnv exec in the repository, runs neither: they
// are held for review.
func TestHandoffEnvrcLoads(t *testing.T) {
	_, err := exec.LookPath("direnv")
	need(t, "direnv, the host tool this test takes the next step with", err)
	repo, _, env := strictRepo(t)
	writeFile(t, filepath.Join(repo, ".envrc"), "source_env_if_exists .envrc.local\nPATH_add bin\ndotenv_if_exists\n")
	hostGit(t, repo, env, "add", "-A")
	hostGit(t, repo, env, "commit", "-q", "-m", "envrc")
	if r := runCmd(t, repo, env, "", "direnv", "allow", "."); r.code != 0 {
		t.Fatalf("direnv allow: %d %q", r.code, r.stderr)
	}
	_, pwned := fsmonitorPayload(t, "envrc")
	r := strict(t, repo, env, nil, "sh", "-c", fmt.Sprintf(`set -e
echo 'touch %[1]s.local' > .envrc.local
mkdir -p bin && printf '#!/bin/sh\ntouch %[1]s.bin\n' > bin/git && chmod +x bin/git
echo 'NODE_OPTIONS=--require=/x' > .env
echo planted`, pwned))
	if r.code != 0 || !strings.Contains(r.stdout, "planted") {
		t.Fatalf("exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	d := runCmd(t, repo, env, "", "direnv", "exec", repo, "sh", "-c", "git --version; echo \"NODE_OPTIONS=$NODE_OPTIONS\"")
	if d.code != 0 {
		t.Fatalf("direnv exec after the box: %d %q %q", d.code, d.stdout, d.stderr)
	}
	absent(t, "direnv exec after the box", pwned+".local", pwned+".bin")
	if strings.Contains(d.stdout, "--require") {
		t.Errorf("the box's .env reached direnv's environment: %q", d.stdout)
	}
	slot := slotName(repo, "run")
	checkHeld(t, r, env, slot, []string{".envrc.local", "bin/git", ".env"}, nil)
}

// TestHandoffEnvrcLayouts: what direnv's layouts, a PATH set with the
// ${PATH:+...} idiom, PYTHONPATH and NODE_OPTIONS set by hand and
// source_up put in reach of the user's next cd is the .envrc's to load,
// not the box's to plant. The host's
// direnv exec then runs none of what the box wrote, in the root or in a
// subdirectory whose .envrc sources upwards.
func TestHandoffEnvrcLayouts(t *testing.T) {
	_, err := exec.LookPath("direnv")
	need(t, "direnv, the host tool this test takes the next step with", err)
	repo, _, env := strictRepo(t)
	writeFile(t, filepath.Join(repo, ".envrc"), "layout node\nexport PATH=\"$PWD/tools${PATH:+:$PATH}\"\n"+
		"export PYTHONPATH=$PWD/src\nexport NODE_OPTIONS='--require ./hook.js'\n")
	writeFile(t, filepath.Join(repo, "sub", ".envrc"), "source_up_if_exists .envrc.shared\n")
	hostGit(t, repo, env, "add", "-A")
	hostGit(t, repo, env, "commit", "-q", "-m", "envrc")
	for _, d := range []string{".", "sub"} {
		if r := runCmd(t, filepath.Join(repo, d), env, "", "direnv", "allow", "."); r.code != 0 {
			t.Fatalf("direnv allow %s: %d %q", d, r.code, r.stderr)
		}
	}
	_, pwned := fsmonitorPayload(t, "layout")
	r := strict(t, repo, env, nil, "sh", "-c", fmt.Sprintf(`set -e
mkdir -p node_modules/.bin tools
printf '#!/bin/sh\ntouch %[1]s.node\n' > node_modules/.bin/aisan-probe-a
printf '#!/bin/sh\ntouch %[1]s.tools\n' > tools/aisan-probe-b
chmod +x node_modules/.bin/aisan-probe-a tools/aisan-probe-b
echo 'touch %[1]s.shared' > .envrc.shared
mkdir -p src && echo 'open("%[1]s.py", "w")' > src/json.py
echo 'require("fs").writeFileSync("%[1]s.hook", "")' > hook.js
echo planted`, pwned))
	if r.code != 0 || !strings.Contains(r.stdout, "planted") {
		t.Fatalf("exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	for _, d := range []string{repo, filepath.Join(repo, "sub")} {
		x := runCmd(t, d, env, "", "direnv", "exec", d, "sh", "-c", "aisan-probe-a; aisan-probe-b; python3 -c 'import json'; node -e 0; true")
		if x.code != 0 {
			t.Fatalf("direnv exec %s after the box: %d %q %q", d, x.code, x.stdout, x.stderr)
		}
	}
	absent(t, "direnv exec after the box", pwned+".node", pwned+".tools", pwned+".shared", pwned+".py", pwned+".hook")
	checkHeld(t, r, env, slotName(repo, "run"), []string{"node_modules/.bin/aisan-probe-a", "tools/aisan-probe-b", ".envrc.shared", "src/json.py", "hook.js"}, nil)
}

// TestHandoffOtherAgentsFiles: other agents the user may run on the
// host obey their project files unasked (Gemini CLI's settings with MCP
// servers and hooks, Cursor's hooks.json, aider's lint command), and so
// do other version control tools (Mercurial's hgrc hooks, Jujutsu's
// repository config). The repository has none; the box creates each, one existing at launch is
// rewritten. After the box the host's repository holds none of the new
// ones and the old one as it was, and all are held. (None of those tools
// is installed here: the host's next step is reading the repository.)
func TestHandoffOtherAgentsFiles(t *testing.T) {
	repo, _, env := strictRepo(t)
	writeFile(t, filepath.Join(repo, "sub", ".aider.conf.yml"), "auto-lint: false\n")
	hostGit(t, repo, env, "add", "-A")
	hostGit(t, repo, env, "commit", "-q", "-m", "aider")
	r := strict(t, repo, env, nil, "sh", "-c", `set -e
mkdir -p .gemini .cursor
echo '{"mcpServers": {"x": {"command": "./x.sh"}}}' > .gemini/settings.json
echo '{"version": 1, "hooks": {"stop": [{"command": "./x.sh"}]}}' > .cursor/hooks.json
echo 'lint-cmd: ./x.sh' > .aider.conf.yml
echo 'lint-cmd: ./x.sh' > sub/.aider.conf.yml
mkdir -p .hg .jj/repo
printf '[hooks]\npre-status = ./x.sh\n' > .hg/hgrc
printf '[fix.tools.x]\ncommand = ["./x.sh"]\n' > .jj/repo/config.toml
echo planted`)
	if r.code != 0 || !strings.Contains(r.stdout, "planted") {
		t.Fatalf("exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	for _, p := range []string{".gemini", ".cursor", ".aider.conf.yml", ".hg", ".jj"} {
		if _, err := os.Lstat(filepath.Join(repo, p)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("after the box the host's repository has %s: %v", p, err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(repo, "sub", ".aider.conf.yml")); err != nil || string(b) != "auto-lint: false\n" {
		t.Errorf("sub/.aider.conf.yml after the box: %q %v", b, err)
	}
	checkHeld(t, r, env, slotName(repo, "run"), []string{".gemini", ".cursor", ".aider.conf.yml", "sub/.aider.conf.yml", ".hg", ".jj"}, []string{"lint-cmd: ./x.sh", "pre-status = ./x.sh"})
}

// TestHandoffToolVersions: asdf and mise run a tool from the directory a
// .tool-versions path: version names, rustup's proxies run cargo from a
// rust-toolchain.toml's [toolchain] path, and yarn runs the release a
// .yarnrc.yml's yarnPath names, for every command at or below the file,
// with no question. A box can neither plant such a file (nor a project
// .npmrc, whose settings override the user's ignore-scripts) nor rewrite
// the tool one found at launch names. asdf, mise, rustup and yarn are
// not installed for the test user here: the host's next step runs the
// tool as they would, from the named directory's bin or with node
// (rustup 1.29 does so for `cargo --version`, checked by hand).
func TestHandoffToolVersions(t *testing.T) {
	repo, _, env := strictRepo(t)
	nodeDir := filepath.Join(repo, "tools", "node")
	tool := filepath.Join(nodeDir, "bin", "node")
	writeFile(t, tool, "#!/bin/sh\necho host node\n")
	os.Chmod(tool, 0o755)
	writeFile(t, filepath.Join(repo, "sub", ".tool-versions"), "nodejs path:"+nodeDir+"\n")
	rustDir := filepath.Join(repo, "tools", "rust")
	cargo := filepath.Join(rustDir, "bin", "cargo")
	writeFile(t, cargo, "#!/bin/sh\necho host cargo\n")
	os.Chmod(cargo, 0o755)
	writeFile(t, filepath.Join(repo, "crate", "rust-toolchain.toml"), "[toolchain]\npath = \""+rustDir+"\"\n")
	writeFile(t, filepath.Join(repo, "web", ".yarnrc.yml"), "yarnPath: .yarn/releases/yarn-4.1.0.cjs\n")
	writeFile(t, filepath.Join(repo, "web", ".yarn", "releases", "yarn-4.1.0.cjs"), "console.log('host yarn')\n")
	hostGit(t, repo, env, "add", "-A")
	hostGit(t, repo, env, "commit", "-q", "-m", "tools")
	r := strict(t, repo, env, nil, "sh", "-c", `set -e
printf '#!/bin/sh\necho planted node\n' > tools/node/bin/node
printf '#!/bin/sh\necho planted cargo\n' > tools/rust/bin/cargo
echo "console.log('planted yarn')" > web/.yarn/releases/yarn-4.1.0.cjs
echo ignore-scripts=false > .npmrc
mkdir -p other && printf '[toolchain]\npath = "%s/evil"\n' "$PWD" > other/rust-toolchain
mkdir -p evil/bin && printf '#!/bin/sh\necho planted python\n' > evil/bin/python && chmod +x evil/bin/python
echo "python path:$PWD/evil" > .tool-versions
echo planted`)
	if r.code != 0 || !strings.Contains(r.stdout, "planted") {
		t.Fatalf("exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	shim := `d=$(sed -n "s/^$1 path://p" "$2"); "$d/bin/$3"`
	if h := runCmd(t, filepath.Join(repo, "sub"), env, "", "sh", "-c", shim, "sh", "nodejs", ".tool-versions", "node"); h.stdout != "host node\n" {
		t.Errorf("the host's node in sub/ after the box, through its .tool-versions: %q %q", h.stdout, h.stderr)
	}
	if h := runCmd(t, filepath.Join(repo, "crate"), env, "", "sh", "-c", `"$(sed -n 's/^path = "\(.*\)"$/\1/p' rust-toolchain.toml)/bin/cargo"`); h.stdout != "host cargo\n" {
		t.Errorf("the host's cargo in crate/ after the box, through its rust-toolchain.toml: %q %q", h.stdout, h.stderr)
	}
	if _, err := os.Stat("/usr/bin/node"); err == nil {
		if h := runCmd(t, filepath.Join(repo, "web"), env, "", "/usr/bin/node", ".yarn/releases/yarn-4.1.0.cjs"); h.stdout != "host yarn\n" {
			t.Errorf("the host's yarn release in web/ after the box: %q %q", h.stdout, h.stderr)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "web", ".yarn", "releases", "yarn-4.1.0.cjs")); string(b) != "console.log('host yarn')\n" {
		t.Errorf("the box rewrote the yarn release a .yarnrc.yml names: %q", b)
	}
	for _, p := range []string{".tool-versions", "other/rust-toolchain", ".npmrc"} {
		if _, err := os.Lstat(filepath.Join(repo, p)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("after the box the host's repository has %s: %v", p, err)
		}
	}
	checkHeld(t, r, env, slotName(repo, "run"), []string{".tool-versions", "tools/node", "tools/rust", "other/rust-toolchain", ".npmrc", "yarn-4.1.0.cjs"}, []string{"python path:", "echo planted node", "echo planted cargo", "planted yarn", "ignore-scripts=false"})
}

// TestHandoffPythonVenv: a virtual environment in the repository runs
// what a box could plant with no question: every start of its python
// runs the import lines of each .pth file in site-packages (an editor's
// Python extension starts it on folder open), and the user's shell
// sources bin/activate. After a box planted a .pth and rewrote
// activate, the host's next '.venv/bin/python -c pass' and '.
// .venv/bin/activate' run neither: both are held.
func TestHandoffPythonVenv(t *testing.T) {
	needTool(t, "/usr/bin/python3")
	repo, _, env := strictRepo(t)
	if r := runCmd(t, repo, env, "", "/usr/bin/python3", "-m", "venv", "--without-pip", ".venv"); r.code != 0 {
		need(t, "python3 -m venv", fmt.Errorf("%s", r.stderr))
	}
	site, _ := filepath.Glob(filepath.Join(repo, ".venv", "lib", "python3*", "site-packages"))
	if len(site) != 1 {
		t.Fatalf("site-packages: %q", site)
	}
	out := t.TempDir()
	os.Chmod(out, 0o777)
	pwned := filepath.Join(out, "PWNED")
	r := strict(t, repo, env, nil, "sh", "-c", fmt.Sprintf(`set -e
echo "import os; open('%[1]s.pth', 'w')" > %[2]s/zz-planted.pth
echo "touch %[1]s.activate" >> .venv/bin/activate
echo planted`, pwned, shq(site[0])))
	if r.code != 0 || !strings.Contains(r.stdout, "planted") {
		t.Fatalf("the box: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if h := runCmd(t, repo, env, "", filepath.Join(repo, ".venv", "bin", "python"), "-c", "pass"); h.code != 0 {
		t.Fatalf("the host's venv python after the box: %q %q", h.stdout, h.stderr)
	}
	if h := runCmd(t, repo, env, "", "sh", "-c", ". .venv/bin/activate"); h.code != 0 {
		t.Errorf("the host's activate after the box: %q %q", h.stdout, h.stderr)
	}
	absent(t, "the host's venv after the box", pwned+".pth", pwned+".activate")
	checkHeld(t, r, env, slotName(repo, "run"), []string{"zz-planted.pth", ".venv/bin/activate"}, []string{"touch " + pwned + ".activate"})
}

// TestHandoffMiseSourcedScript: the user's trusted mise.toml sources a
// script of the repository (_.source) and loads a dotenv file of it
// (_.file) on every cd into the project. The box leaves mise.toml alone
// and rewrites both. The host's mise (the real one), run as the user's
// next prompt runs it, must run and load nothing of the box's.
func TestHandoffMiseSourcedScript(t *testing.T) {
	repo, home, env := strictRepo(t)
	mise := agentBin(t, "mise")
	env = onPath(t, env, mise)
	out := t.TempDir()
	os.Chmod(out, 0o777)
	miseEnv := hostMiseEnv(t, home, env, repo)
	hostMise := func() string { t.Helper(); return runHostMise(t, mise, repo, miseEnv) }
	writeFile(t, filepath.Join(repo, "mise.toml"), "[env]\n_.source = \"./scripts/env.sh\"\n_.file = \".env.mise\"\n")
	writeFile(t, filepath.Join(repo, "scripts", "env.sh"), "touch "+filepath.Join(out, "CONTROL")+"\nexport FROM_SCRIPT=user\n")
	writeFile(t, filepath.Join(repo, ".env.mise"), "FROM_FILE=user\n")
	if got := hostMise(); !strings.Contains(got, "FROM_SCRIPT=user") || !strings.Contains(got, "FROM_FILE=user") {
		t.Fatalf("control: mise env does not load the script and the file: %q", got)
	}
	present(t, "mise env before the box", filepath.Join(out, "CONTROL"))

	pwned := filepath.Join(out, "PWNED")
	r := strict(t, repo, env, nil, "sh", "-c", "printf 'touch "+pwned+"\\nexport FROM_SCRIPT=box\\n' > scripts/env.sh && printf 'FROM_FILE=box\\n' > .env.mise && echo planted")
	if r.code != 0 || !strings.Contains(r.stdout, "planted") {
		t.Fatalf("the box: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	got := hostMise()
	absent(t, "mise env after the box", pwned)
	if strings.Contains(got, "=box") {
		t.Errorf("mise env after the box loads the box's values: %q", got)
	}
	checkHeld(t, r, env, slotName(repo, "run"), []string{"scripts/env.sh", ".env.mise"}, nil)
}

// TestHandoffMiseEnvConfig: the user runs mise with MISE_ENV=dev, so
// mise also reads mise.dev.toml, which the repository does not have.
// The box creates one whose env sources its own script. After the box,
// the host's mise, trusting the project, must run nothing of it.
func TestHandoffMiseEnvConfig(t *testing.T) {
	repo, home, env := strictRepo(t)
	mise := agentBin(t, "mise")
	env = onPath(t, env, mise)
	out := t.TempDir()
	os.Chmod(out, 0o777)
	miseEnv := append(hostMiseEnv(t, home, env, repo), "MISE_ENV=dev")
	hostMise := func(dir string) string { t.Helper(); return runHostMise(t, mise, dir, miseEnv) }
	writeFile(t, filepath.Join(repo, "mise.toml"), "[env]\nFROM = \"mise.toml\"\n")
	// The control: in a copy of the repository, mise.dev.toml is read.
	control := t.TempDir()
	writeFile(t, filepath.Join(control, "mise.dev.toml"), "[env]\n_.source = \"./c.sh\"\n")
	writeFile(t, filepath.Join(control, "c.sh"), "touch "+filepath.Join(out, "CONTROL")+"\n")
	miseEnv = append(miseEnv, "MISE_TRUSTED_CONFIG_PATHS="+repo+":"+control)
	hostMise(control)
	present(t, "mise env with MISE_ENV=dev", filepath.Join(out, "CONTROL"))

	pwned := filepath.Join(out, "PWNED")
	r := strict(t, repo, env, nil, "sh", "-c", "printf '[env]\\n_.source = \"./e.sh\"\\n' > mise.dev.toml && printf 'touch "+pwned+"\\n' > e.sh && echo planted")
	if r.code != 0 || !strings.Contains(r.stdout, "planted") {
		t.Fatalf("the box: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	hostMise(repo)
	absent(t, "mise env after the box", pwned)
	checkHeld(t, r, env, slotName(repo, "run"), []string{"mise.dev.toml"}, nil)
}

// hostMiseEnv is the environment the host's mise runs in for a mise
// test: the user's, trusting the projects in trusted, with its own state
// directories.
func hostMiseEnv(t *testing.T, home string, env []string, trusted string) []string {
	state := t.TempDir()
	return append(os.Environ(), append(env, "MISE_TRUSTED_CONFIG_PATHS="+trusted,
		"MISE_DATA_DIR="+filepath.Join(state, "data"), "MISE_CONFIG_DIR="+filepath.Join(home, ".config", "mise"),
		"MISE_CACHE_DIR="+filepath.Join(state, "cache"), "MISE_STATE_DIR="+filepath.Join(state, "state"))...)
}

// runHostMise runs mise env in dir as the user's next prompt there
// would, and returns what it exports.
func runHostMise(t *testing.T, mise, dir string, env []string) string {
	t.Helper()
	cmd := exec.Command(mise, "env")
	cmd.Dir, cmd.Env = dir, env
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("mise env: %v: %s", err, b)
	}
	return string(b)
}
