package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// plantScripts writes each of scripts (relative to repo) as a script that
// exits 0, and returns the box's shell script that rewrites each in place
// to touch pwned.NAME (NAME its base name) and every one of also.
func plantScripts(t *testing.T, repo string, scripts []string, pwned string, also ...string) string {
	t.Helper()
	for _, f := range scripts {
		writeFile(t, filepath.Join(repo, f), "#!/bin/sh\nexit 0\n")
		os.Chmod(filepath.Join(repo, f), 0o755)
	}
	return fmt.Sprintf("set -e\nfor f in %s; do printf '#!/bin/sh\\ntouch %s.%%s %s\\n' $(basename $f) >$f; done\necho planted",
		strings.Join(scripts, " "), pwned, strings.Join(also, " "))
}

// scriptMarks are the files plantScripts' rewrites touch.
func scriptMarks(pwned string, scripts []string) []string {
	var out []string
	for _, f := range scripts {
		out = append(out, pwned+"."+filepath.Base(f))
	}
	return out
}

// TestHandoffClaudeHookIndirect: the project's .claude/settings.json runs
// its hooks' scripts the ways projects do: after a cd, inside bash -c,
// through an npm script and a make target, from inline node code, from
// a script of its own that sources a file beside it, and an optional
// local script that does not exist until the box creates it.
// The box leaves the settings alone and rewrites each script (and the
// package.json script and the Makefile recipe) in place. The user's next
// 'claude -p' on the host must run none of the rewrites: all are held,
// and the launch says which command it could not follow and what it held
// for it.
func TestHandoffClaudeHookIndirect(t *testing.T) {
	h := newHostClaude(t)
	h.agentEnv = append(h.agentEnv, "npm_config_update_notifier=false", "npm_config_cache="+filepath.Join(h.home, ".npm"))
	repo, env, out := h.repo, h.env, h.out
	pwned := filepath.Join(out, "PWNED")
	cmd := func(c string) map[string]any { return map[string]any{"type": "command", "command": c} }
	hooks := map[string]any{
		"SessionStart": []any{map[string]any{"hooks": []any{cmd(`cd "$CLAUDE_PROJECT_DIR"/hooks && ./start.sh`)}}},
		"UserPromptSubmit": []any{map[string]any{"hooks": []any{
			cmd(`bash -c 'cd tools && sh prompt.sh'`),
			cmd(`npm run --silent prompt`),
			cmd(`make -s -C build hook`),
			cmd(`node -e "require('child_process').execFileSync('sh', ['inline/x.sh'], {stdio: 'inherit'})"`),
			cmd(`./hooks/check.sh`),
			cmd(`[ -x ./hooks/local.sh ] && ./hooks/local.sh || true`),
		}}},
	}
	settings, _ := json.Marshal(map[string]any{"hooks": hooks})
	writeFile(t, filepath.Join(repo, ".claude", "settings.json"), string(settings))
	writeFile(t, filepath.Join(repo, "package.json"), `{"name": "p", "private": true, "scripts": {"prompt": "sh scripts/npm-prompt.sh"}}`+"\n")
	writeFile(t, filepath.Join(repo, "build", "Makefile"), "hook:\n\t./hook.sh\n")
	writeFile(t, filepath.Join(repo, "hooks", "check.sh"), "#!/bin/sh\n. \"$(dirname \"$0\")/lib.sh\"\n")
	os.Chmod(filepath.Join(repo, "hooks", "check.sh"), 0o755)
	scripts := []string{"hooks/start.sh", "tools/prompt.sh", "scripts/npm-prompt.sh", "build/hook.sh", "inline/x.sh", "hooks/lib.sh"}
	attack := plantScripts(t, repo, scripts, pwned)
	h.commitAndTrust(t, "hooks")
	// The control first: the hooks do run each script on the host.
	control := filepath.Join(out, "CONTROL")
	for _, f := range scripts {
		writeFile(t, filepath.Join(repo, f), "#!/bin/sh\ntouch "+control+"."+filepath.Base(f)+"\n")
	}
	h.prompt(t)
	present(t, "claude before the box", scriptMarks(control, scripts)...)
	for _, f := range scripts {
		writeFile(t, filepath.Join(repo, f), "#!/bin/sh\nexit 0\n")
	}
	// The box also rewrites the npm script and the make recipe (in
	// place: a rename onto a held file fails).
	attack = strings.Replace(attack, "set -e\n", fmt.Sprintf("set -e\necho '{\"name\": \"p\", \"private\": true, \"scripts\": {\"prompt\": \"touch %[1]s.npm\"}}' > package.json\nprintf 'hook:\\n\\ttouch %[1]s.make\\n' > build/Makefile\n", pwned), 1)
	attack += fmt.Sprintf("\nprintf '#!/bin/sh\\ntouch %s.local.sh\\n' > hooks/local.sh && chmod +x hooks/local.sh", pwned)
	r := strict(t, repo, env, nil, "sh", "-c", attack)
	if r.code != 0 || !strings.Contains(r.stdout, "planted") {
		t.Fatalf("the box: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	t.Logf("the box's launch and end:\n%s", r.stderr)
	o := h.prompt(t)
	t.Logf("claude unjailed after the box:\n%s", o)
	absent(t, "claude after the box", append(scriptMarks(pwned, scripts), pwned+".npm", pwned+".make", pwned+".local.sh")...)
	if _, err := os.Lstat(filepath.Join(repo, "hooks", "local.sh")); err == nil {
		t.Errorf("the box's hooks/local.sh, which a hook runs once it exists, is in the host's repository")
	}
	if !strings.Contains(r.stderr, "inline/x.sh") || !strings.Contains(r.stderr, "node -e") {
		t.Errorf("the launch does not say which command it could not follow (node -e) and what it held for it: %q", r.stderr)
	}
	// The end's line names six paths and counts the rest; review shows all.
	checkHeld(t, r, env, slotName(repo, "run"), []string{"build/Makefile", "build/hook.sh", "hooks/lib.sh", "hooks/local.sh", "hooks/start.sh", "inline/x.sh"},
		[]string{"package.json", "scripts/npm-prompt.sh", "tools/prompt.sh", "touch " + pwned})
}

// TestHandoffEditorTasksIndirect: VS Code runs a folder-open task and
// the tasks it depends on (a shell task that cds first, an npm task in a
// folder of the workspace, whose script runs a package's command from
// node_modules/.bin), and a workspace file's own folder-open task. The
// box rewrites each script they reach, and the package's file. VS Code
// is not on this machine: the host's next step is each command run as
// VS Code runs it (a shell task by /bin/sh -c in its directory, an npm
// task as npm run SCRIPT in its path), which must run no rewrite.
func TestHandoffEditorTasksIndirect(t *testing.T) {
	repo, home, env := strictRepo(t)
	writeFile(t, filepath.Join(repo, ".vscode", "tasks.json"), `{
	"version": "2.0.0",
	"tasks": [
		{"label": "open", "type": "shell", "command": "cd sub && ./open.sh", "dependsOn": ["dep", "web"], "runOptions": {"runOn": "folderOpen"}},
		{"label": "dep", "type": "shell", "command": "./dep.sh", "options": {"cwd": "${workspaceFolder}/tools"}},
		{"label": "web", "type": "npm", "script": "watch", "path": "web"},
	],
}`)
	writeFile(t, filepath.Join(repo, "web", "package.json"), `{"name": "w", "private": true, "scripts": {"watch": "node watch.js && probe-lint"}}`+"\n")
	// A package's command, as npm install leaves it: a link in
	// node_modules/.bin to a file of the package.
	writeFile(t, filepath.Join(repo, "web", "node_modules", "probe-lint", "cli.js"), "#!/usr/bin/env node\n")
	os.Chmod(filepath.Join(repo, "web", "node_modules", "probe-lint", "cli.js"), 0o755)
	os.MkdirAll(filepath.Join(repo, "web", "node_modules", ".bin"), 0o755)
	if err := os.Symlink("../probe-lint/cli.js", filepath.Join(repo, "web", "node_modules", ".bin", "probe-lint")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(repo, "proj.code-workspace"), `{"folders": [{"path": "."}],
	"tasks": {"version": "2.0.0", "tasks": [{"label": "ws", "type": "shell", "command": "bash -c 'cd ws && ./ws.sh'", "runOptions": {"runOn": "folderOpen"}}]}}`)
	scripts := []string{"sub/open.sh", "tools/dep.sh", "ws/ws.sh"}
	plantScripts(t, repo, scripts, filepath.Join(t.TempDir(), "unused"))
	writeFile(t, filepath.Join(repo, "web", "watch.js"), "\n")
	hostGit(t, repo, env, "add", "-A")
	hostGit(t, repo, env, "commit", "-q", "-m", "tasks")
	out := t.TempDir()
	os.Chmod(out, 0o777)
	pwned := filepath.Join(out, "PWNED")
	attack := plantScripts(t, repo, scripts, pwned)
	attack = strings.Replace(attack, "set -e\n", fmt.Sprintf("set -e\necho 'require(\"fs\").writeFileSync(\"%[1]s.watch\", \"\")' > web/watch.js\n"+
		"printf '#!/usr/bin/env node\\nrequire(\"fs\").writeFileSync(\"%[1]s.lint\", \"\")\\n' > web/node_modules/probe-lint/cli.js\n", pwned), 1)
	r := strict(t, repo, env, nil, "sh", "-c", attack)
	if r.code != 0 || !strings.Contains(r.stdout, "planted") {
		t.Fatalf("the box: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	t.Logf("the box's launch and end:\n%s", r.stderr)
	npmEnv := append(env, "npm_config_update_notifier=false", "npm_config_cache="+filepath.Join(home, ".npm"))
	for _, c := range []struct {
		dir  string
		argv []string
	}{
		{repo, []string{"/bin/sh", "-c", "cd sub && ./open.sh"}},
		{filepath.Join(repo, "tools"), []string{"/bin/sh", "-c", "./dep.sh"}},
		{filepath.Join(repo, "web"), []string{"npm", "run", "watch"}},
		{repo, []string{"/bin/sh", "-c", "bash -c 'cd ws && ./ws.sh'"}},
	} {
		if x := runCmd(t, c.dir, npmEnv, "", c.argv[0], c.argv[1:]...); x.code != 0 {
			t.Errorf("%q in %s on the host: exit %d %q", c.argv, c.dir, x.code, x.stderr)
		}
	}
	absent(t, "the folder-open tasks on the host after the box", append(scriptMarks(pwned, scripts), pwned+".watch", pwned+".lint")...)
	checkHeld(t, r, env, slotName(repo, "run"), append([]string{"web/watch.js", "web/node_modules/probe-lint/cli.js"}, scripts...), []string{"touch " + pwned})
}

// TestHandoffClaudeHookImports: the project's hooks run scripts of its
// own through interpreters that load code from beside the script:
// python3 tools/hook.py imports helpers (tools/helpers.py) and json,
// which Python looks for in tools/ before its own library; node
// scripts/hook.js requires ./lib; bin/check, a python script by its #!
// line, imports util beside it. The box leaves the settings and the
// scripts alone, rewrites the modules they import and plants
// tools/json.py. The user's next 'claude -p' on the host must run none
// of it: each script's directory is held whole.
func TestHandoffClaudeHookImports(t *testing.T) {
	h := newHostClaude(t, "python3", "node")
	repo, env := h.repo, h.env
	settings := promptHooks(`python3 tools/hook.py`, `node "$CLAUDE_PROJECT_DIR"/scripts/hook.js`, `./bin/check`)
	writeFile(t, filepath.Join(repo, ".claude", "settings.json"), string(settings))
	writeFile(t, filepath.Join(repo, "tools", "hook.py"), "import json\nimport helpers\nhelpers.run(json.dumps({}))\n")
	writeFile(t, filepath.Join(repo, "scripts", "hook.js"), "require('./lib').run()\n")
	writeFile(t, filepath.Join(repo, "bin", "check"), "#!/usr/bin/env python3\nimport util\nutil.run()\n")
	os.Chmod(filepath.Join(repo, "bin", "check"), 0o755)
	// mods are the modules the scripts load, each touching its mark
	// (or, the host's own, doing nothing).
	mods := func(pwned string) map[string]string {
		py := func(m string) string {
			if pwned == "" {
				return "def run(*a):\n    pass\n"
			}
			return pyTouch(pwned+"."+m) + "def run(*a):\n    pass\n"
		}
		js := "exports.run = () => {}\n"
		if pwned != "" {
			js = nodeTouch(pwned+".lib") + "exports.run = () => {}\n"
		}
		m := map[string]string{"tools/helpers.py": py("helpers"), "scripts/lib.js": js, "bin/util.py": py("util")}
		if pwned != "" {
			// A json.py beside tools/hook.py shadows Python's own.
			m["tools/json.py"] = pyTouch(pwned+".json") + "def dumps(x):\n    return ''\n"
		}
		return m
	}
	h.write(t, mods(""))
	h.commitAndTrust(t, "hooks")
	marks := func(pwned string) []string {
		return []string{pwned + ".helpers", pwned + ".lib", pwned + ".util", pwned + ".json"}
	}
	r, pwned := h.handOff(t, mods, marks, 0)
	if _, err := os.Lstat(filepath.Join(repo, "tools", "json.py")); err == nil {
		t.Errorf("the box's tools/json.py, which shadows Python's json for tools/hook.py, is in the host's repository")
	}
	checkHeld(t, r, env, slotName(repo, "run"), []string{"tools/helpers.py", "tools/json.py", "scripts/lib.js", "bin/util.py"}, []string{"open(" + strconv.Quote(pwned+".json")})
}

// TestHandoffClaudeHookClimbs: a hook runs node tools/hook.js, which
// requires ../lib/util: a module outside the script's own directory,
// which is held whole, and outside no other held path. The box leaves
// the settings and the script alone and rewrites lib/util.js. The
// user's next 'claude -p' on the host must not run the box's module.
func TestHandoffClaudeHookClimbs(t *testing.T) {
	h := newHostClaude(t, "node")
	settings := promptHooks(`node tools/hook.js`)
	h.write(t, map[string]string{".claude/settings.json": string(settings), "tools/hook.js": "require('../lib/util').run()\n"})
	mods := func(mark string) map[string]string {
		if mark == "" {
			return map[string]string{"lib/util.js": "exports.run = () => {}\n"}
		}
		return map[string]string{"lib/util.js": nodeTouch(mark) + "exports.run = () => {}\n"}
	}
	h.write(t, mods(""))
	h.commitAndTrust(t, "hook")
	r, pwned := h.handOff(t, mods, func(mark string) []string { return []string{mark} }, 0)
	checkHeld(t, r, h.env, slotName(h.repo, "run"), []string{"lib/util.js"}, []string{strconv.Quote(pwned)})
}

// TestHandoffClaudeHookPackageMain: a hook runs node tools/hook.js,
// which requires the package dep from node_modules and the directory
// ../vendor/pkg; each package's main leads out of its own directory
// (../../lib/dep.js and ../../lib/pkg.js), where node takes it as
// written. The box rewrites only those two files. The user's next
// 'claude -p' on the host must run neither.
func TestHandoffClaudeHookPackageMain(t *testing.T) {
	h := newHostClaude(t, "node")
	h.write(t, map[string]string{
		".claude/settings.json":         string(promptHooks(`node tools/hook.js`)),
		"tools/hook.js":                 "require('dep').run()\nrequire('../vendor/pkg').run()\n",
		"node_modules/dep/package.json": `{"name": "dep", "main": "../../lib/dep.js"}`,
		"vendor/pkg/package.json":       `{"name": "pkg", "main": "../../lib/pkg.js"}`,
	})
	mods := func(mark string) map[string]string {
		if mark == "" {
			return map[string]string{"lib/dep.js": "exports.run = () => {}\n", "lib/pkg.js": "exports.run = () => {}\n"}
		}
		return map[string]string{
			"lib/dep.js": nodeTouch(mark+".dep") + "exports.run = () => {}\n",
			"lib/pkg.js": nodeTouch(mark+".pkg") + "exports.run = () => {}\n",
		}
	}
	h.write(t, mods(""))
	h.commitAndTrust(t, "hook")
	marks := func(mark string) []string { return []string{mark + ".dep", mark + ".pkg"} }
	r, pwned := h.handOff(t, mods, marks, 0)
	checkHeld(t, r, h.env, slotName(h.repo, "run"), []string{"lib/dep.js", "lib/pkg.js"}, []string{strconv.Quote(pwned + ".dep")})
}

// TestHandoffClaudeHookPreload: hooks run node with modules it loads
// before the script: node -r ./lib/pre.js (which requires
// ../more/m.js) and node --import dep (a package in node_modules). The
// box rewrites only more/m.js and dep's index.js. The user's next
// 'claude -p' on the host must run neither.
func TestHandoffClaudeHookPreload(t *testing.T) {
	h := newHostClaude(t, "node")
	h.write(t, map[string]string{
		".claude/settings.json":         string(promptHooks(`node -r ./lib/pre.js tools/hook.js`, `node --import dep tools/hook.js`)),
		"tools/hook.js":                 "\n",
		"lib/pre.js":                    "require('../more/m.js')\n",
		"node_modules/dep/package.json": `{"name": "dep"}`,
	})
	mods := func(mark string) map[string]string {
		if mark == "" {
			return map[string]string{"more/m.js": "\n", "node_modules/dep/index.js": "\n"}
		}
		return map[string]string{"more/m.js": nodeTouch(mark + ".m"), "node_modules/dep/index.js": nodeTouch(mark + ".dep")}
	}
	h.write(t, mods(""))
	h.commitAndTrust(t, "hooks")
	marks := func(mark string) []string { return []string{mark + ".m", mark + ".dep"} }
	r, pwned := h.handOff(t, mods, marks, 0)
	checkHeld(t, r, h.env, slotName(h.repo, "run"), []string{"more/m.js", "node_modules/dep"}, []string{strconv.Quote(pwned + ".m")})
}

// TestHandoffClaudeHookInstall: a hook runs npm install (offline, as
// a session's first prompt may), which runs the package's own install
// scripts (preinstall: node tools/pre.js, prepare: sh tools/prep.sh)
// and those of a dependency kept in the project (file:./vendor/local,
// postinstall: node post.js). The box rewrites only the three scripts'
// files. The user's next 'claude -p' on the host must run none of them.
func TestHandoffClaudeHookInstall(t *testing.T) {
	h := newHostClaude(t, "npm", "node")
	h.agentEnv = append(h.agentEnv, "npm_config_offline=true", "npm_config_update_notifier=false", "npm_config_audit=false", "npm_config_fund=false", "npm_config_cache="+filepath.Join(h.home, ".npm"))
	h.write(t, map[string]string{
		".claude/settings.json":     string(promptHooks(`npm install`)),
		".gitignore":                "node_modules/\npackage-lock.json\n",
		"package.json":              `{"name": "p", "version": "1.0.0", "scripts": {"preinstall": "node tools/pre.js", "prepare": "sh tools/prep.sh"}, "dependencies": {"local": "file:./vendor/local"}}`,
		"vendor/local/package.json": `{"name": "local", "version": "1.0.0", "scripts": {"postinstall": "node post.js"}}`,
	})
	mods := func(mark string) map[string]string {
		if mark == "" {
			return map[string]string{"tools/pre.js": "\n", "tools/prep.sh": ":\n", "vendor/local/post.js": "\n"}
		}
		return map[string]string{"tools/pre.js": nodeTouch(mark + ".pre"), "tools/prep.sh": "touch " + mark + ".prep\n", "vendor/local/post.js": nodeTouch(mark + ".post")}
	}
	h.write(t, mods(""))
	h.commitAndTrust(t, "install hook")
	marks := func(mark string) []string { return []string{mark + ".pre", mark + ".prep", mark + ".post"} }
	r, pwned := h.handOff(t, mods, marks, 0)
	checkHeld(t, r, h.env, slotName(h.repo, "run"), []string{"tools", "vendor/local"}, []string{"touch " + pwned + ".prep"})
}

// TestHandoffClaudeHookInstallWorkspaces: a hook runs npm install in a
// project with workspaces (offline: they are linked from the project),
// which runs each workspace's install scripts. The box rewrites what a
// workspace's postinstall runs. The user's next 'claude -p' on the
// host must not run it.
func TestHandoffClaudeHookInstallWorkspaces(t *testing.T) {
	h := newHostClaude(t, "npm", "node")
	h.agentEnv = append(h.agentEnv, "npm_config_offline=true", "npm_config_update_notifier=false", "npm_config_audit=false", "npm_config_fund=false", "npm_config_cache="+filepath.Join(h.home, ".npm"))
	h.write(t, map[string]string{
		".claude/settings.json":   string(promptHooks(`npm install`)),
		".gitignore":              "node_modules/\npackage-lock.json\n",
		"package.json":            `{"name": "p", "version": "1.0.0", "workspaces": ["packages/*"]}`,
		"packages/w/package.json": `{"name": "w", "version": "1.0.0", "scripts": {"postinstall": "node scripts/post.js"}}`,
	})
	mods := func(mark string) map[string]string {
		if mark == "" {
			return map[string]string{"packages/w/scripts/post.js": "\n"}
		}
		return map[string]string{"packages/w/scripts/post.js": nodeTouch(mark)}
	}
	h.write(t, mods(""))
	h.commitAndTrust(t, "install hook")
	r, _ := h.handOff(t, mods, func(mark string) []string { return []string{mark} }, 0)
	checkHeld(t, r, h.env, slotName(h.repo, "run"), []string{"packages/w/scripts"}, nil)
}

// TestHandoffClaudeHookPipInstall: a hook installs the project in
// development mode (python3 -m pip install -e ., offline), which runs
// its setup.py, which imports version.py from beside it. The box
// rewrites only those two files. The user's next 'claude -p' on the
// host must run neither.
func TestHandoffClaudeHookPipInstall(t *testing.T) {
	h := newHostClaude(t, "python3")
	for _, m := range []string{"pip", "setuptools"} {
		if err := exec.Command("python3", "-c", "import "+m).Run(); err != nil {
			need(t, "python3's "+m, err)
		}
	}
	h.write(t, map[string]string{
		".claude/settings.json": string(promptHooks(`python3 -m pip install --quiet --user --break-system-packages --no-index --no-build-isolation --no-deps -e .`)),
		".gitignore":            "*.egg-info/\n__pycache__/\n",
	})
	mods := func(mark string) map[string]string {
		setup := "from version import V\nimport setuptools\nsetuptools.setup(name='p', version=V, py_modules=[])\n"
		if mark == "" {
			return map[string]string{"setup.py": setup, "version.py": "V = '1.0'\n"}
		}
		return map[string]string{"setup.py": pyTouch(mark+".setup") + setup, "version.py": pyTouch(mark+".version") + "V = '1.0'\n"}
	}
	h.write(t, mods(""))
	h.commitAndTrust(t, "pip install hook")
	marks := func(mark string) []string { return []string{mark + ".setup", mark + ".version"} }
	r, pwned := h.handOff(t, mods, marks, 0)
	checkHeld(t, r, h.env, slotName(h.repo, "run"), []string{"setup.py", "version.py"}, []string{strconv.Quote(pwned + ".setup")})
}

// TestHandoffClaudeHookLinterConfig: a hook formats with the project's
// own linter (npx eslint --fix ., from node_modules/.bin), which loads
// eslint.config.js, which imports ./lint/rules.js. The box leaves the
// hook, the linter and its config alone and rewrites only the module the
// config imports. The user's next 'claude -p' on the host must not run
// it.
func TestHandoffClaudeHookLinterConfig(t *testing.T) {
	// A stand-in for eslint: it loads the config from where it runs.
	h := hostWithEslint(t, "require(require('path').resolve('eslint.config.js'))\n", map[string]string{
		"eslint.config.js": "module.exports = [require('./lint/rules.js')]\n",
	})
	mods := func(mark string) map[string]string {
		if mark == "" {
			return map[string]string{"lint/rules.js": "module.exports = {}\n"}
		}
		return map[string]string{"lint/rules.js": nodeTouch(mark) + "module.exports = {}\n"}
	}
	h.write(t, mods(""))
	h.commitAndTrust(t, "lint hook")
	r, pwned := h.handOff(t, mods, func(mark string) []string { return []string{mark} }, 0)
	checkHeld(t, r, h.env, slotName(h.repo, "run"), []string{"lint/rules.js"}, []string{strconv.Quote(pwned)})
}

// TestHandoffClaudeHookNewConfig: the project's hook runs eslint, and
// the project has no eslint config at launch. The box adds one, which
// eslint would load and run on the host. The user's next 'claude -p'
// on the host must not run it: the end sweeps it into the review.
func TestHandoffClaudeHookNewConfig(t *testing.T) {
	// A stand-in for eslint: it loads a config from where it runs, when
	// there is one.
	h := hostWithEslint(t, "const p = require('path').resolve('eslint.config.js')\nif (require('fs').existsSync(p)) require(p)\n", nil)
	mods := func(mark string) map[string]string {
		if mark == "" {
			return map[string]string{}
		}
		return map[string]string{"eslint.config.js": nodeTouch(mark)}
	}
	h.commitAndTrust(t, "lint hook")
	r, pwned := h.handOff(t, mods, func(mark string) []string { return []string{mark} }, 0)
	checkHeld(t, r, h.env, slotName(h.repo, "run"), []string{"eslint.config.js"}, []string{strconv.Quote(pwned)})
}

// hostWithEslint is a host whose project's hook runs npx eslint --fix
// ., with a node stand-in for eslint in node_modules (cli, its script
// after the #! line) and files besides.
func hostWithEslint(t *testing.T, cli string, files map[string]string) *hostClaude {
	t.Helper()
	h := newHostClaude(t, "npx", "node")
	h.agentEnv = append(h.agentEnv, "npm_config_offline=true", "npm_config_update_notifier=false", "npm_config_cache="+filepath.Join(h.home, ".npm"))
	h.write(t, map[string]string{
		".claude/settings.json":            string(promptHooks(`npx eslint --fix .`)),
		".gitignore":                       "node_modules/\n",
		"node_modules/eslint/package.json": `{"name": "eslint", "version": "0.0.0", "bin": {"eslint": "cli.js"}}`,
		"node_modules/eslint/cli.js":       "#!/usr/bin/env node\n" + cli,
	})
	h.write(t, files)
	os.Chmod(filepath.Join(h.repo, "node_modules", "eslint", "cli.js"), 0o755)
	if err := os.MkdirAll(filepath.Join(h.repo, "node_modules", ".bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../eslint/cli.js", filepath.Join(h.repo, "node_modules", ".bin", "eslint")); err != nil {
		t.Fatal(err)
	}
	return h
}

// TestSweepLeavesLinkedWorkAlone: the project's hook loads a package
// by name that is not installed at launch, so the box's end sweeps
// what the box adds in node_modules for it. The box makes node_modules
// a link to the user's other project, which has that package. The
// sweep must move the box's link, and leave the other project's
// package where it is.
func TestSweepLeavesLinkedWorkAlone(t *testing.T) {
	h := newHostClaude(t, "node")
	other := filepath.Join(h.home, "other")
	dep := filepath.Join(other, "node_modules", "dep", "index.js")
	writeFile(t, dep, "module.exports = 1\n")
	h.write(t, map[string]string{
		".claude/settings.json":  string(promptHooks(`node .claude/hooks/check.js`)),
		".claude/hooks/check.js": "try { require('dep') } catch (e) {}\n",
		".gitignore":             "node_modules\n",
	})
	h.commitAndTrust(t, "hook")
	r := strict(t, h.repo, h.env, nil, "sh", "-c", "ln -s "+shq(filepath.Join(other, "node_modules"))+" node_modules && echo linked")
	if r.code != 0 || !strings.Contains(r.stdout, "linked") {
		t.Fatalf("the box: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	t.Logf("the box's launch and end:\n%s", r.stderr)
	if _, err := os.Lstat(dep); err != nil {
		t.Errorf("the box's end moved the other project's package: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(h.repo, "node_modules")); err == nil {
		t.Errorf("the box's link is still in the repository")
	}
	checkHeld(t, r, h.env, slotName(h.repo, "run"), []string{"node_modules"}, nil)
}

// TestHandoffMCPImports: the project's .mcp.json starts two local
// servers the user approved: python3 tools/server.py, which imports
// helpers from beside it, and sh srv/mcp.sh, which sources srv/lib.sh.
// The box rewrites neither server's own file, only what each loads. The
// user's next 'claude -p' on the host must start none of it.
func TestHandoffMCPImports(t *testing.T) {
	h := newHostClaude(t, "python3")
	repo, env := h.repo, h.env
	writeFile(t, filepath.Join(repo, ".mcp.json"), `{"mcpServers": {"py": {"command": "python3", "args": ["tools/server.py"]}, "sh": {"command": "sh", "args": ["srv/mcp.sh"]}}}`+"\n")
	writeFile(t, filepath.Join(repo, "tools", "server.py"), "import helpers\n")
	writeFile(t, filepath.Join(repo, "srv", "mcp.sh"), ". srv/lib.sh\n")
	mods := func(mark string) map[string]string {
		if mark == "" {
			return map[string]string{"tools/helpers.py": "\n", "srv/lib.sh": ":\n"}
		}
		return map[string]string{"tools/helpers.py": pyTouch(mark + ".helpers"), "srv/lib.sh": "touch " + mark + ".lib\n"}
	}
	h.write(t, mods(""))
	h.commitAndTrust(t, "servers", "py", "sh")
	marks := func(m string) []string { return []string{m + ".helpers", m + ".lib"} }
	// The servers start after claude has answered.
	r, pwned := h.handOff(t, mods, marks, 2*time.Second)
	checkHeld(t, r, env, slotName(repo, "run"), []string{"tools/helpers.py", "srv/lib.sh"}, []string{"touch " + pwned + ".lib"})
}

// TestHandoffClaudeHookLink: the hooks' scripts are links kept in the
// repository (tools/hook.sh -> ../lib/real.sh, as a shared script is
// often linked in), one a python script that imports from beside its
// target. The box rewrites the links' targets. The user's next 'claude
// -p' on the host must run neither rewrite.
func TestHandoffClaudeHookLink(t *testing.T) {
	h := newHostClaude(t, "python3")
	repo, env, out := h.repo, h.env, h.out
	settings := promptHooks(`./tools/hook.sh`, `python3 tools/hook.py`, `./tools/other.sh`)
	writeFile(t, filepath.Join(repo, ".claude", "settings.json"), string(settings))
	writeFile(t, filepath.Join(repo, "lib", "real.sh"), "#!/bin/sh\nexit 0\n")
	os.Chmod(filepath.Join(repo, "lib", "real.sh"), 0o755)
	writeFile(t, filepath.Join(repo, "lib", "other.sh"), "#!/bin/sh\nexit 0\n")
	os.Chmod(filepath.Join(repo, "lib", "other.sh"), 0o755)
	writeFile(t, filepath.Join(repo, "lib", "real.py"), "import helpers\n")
	writeFile(t, filepath.Join(repo, "lib", "helpers.py"), "\n")
	os.MkdirAll(filepath.Join(repo, "tools"), 0o755)
	for l, target := range map[string]string{"tools/hook.sh": "../lib/real.sh", "tools/hook.py": "../lib/real.py", "tools/other.sh": "../lib/other.sh"} {
		if err := os.Symlink(target, filepath.Join(repo, l)); err != nil {
			t.Fatal(err)
		}
	}
	h.commitAndTrust(t, "hooks")
	// The control first: the hooks do run the links' targets on the host.
	control := filepath.Join(out, "CONTROL")
	writeFile(t, filepath.Join(repo, "lib", "real.sh"), "#!/bin/sh\ntouch "+control+".sh\n")
	writeFile(t, filepath.Join(repo, "lib", "helpers.py"), pyTouch(control+".py"))
	h.prompt(t)
	present(t, "claude before the box", control+".sh", control+".py")
	writeFile(t, filepath.Join(repo, "lib", "real.sh"), "#!/bin/sh\nexit 0\n")
	writeFile(t, filepath.Join(repo, "lib", "helpers.py"), "\n")
	pwned := filepath.Join(out, "PWNED")
	// It also points a link elsewhere, at a script of its own beside it.
	attack := fmt.Sprintf("set -e\nprintf '#!/bin/sh\\ntouch %[1]s.sh\\n' > lib/real.sh\nprintf 'open(\"%[1]s.py\", \"w\").close()\\n' > lib/helpers.py\n"+
		"printf '#!/bin/sh\\ntouch %[1]s.relink\\n' > tools/evil.sh\nchmod +x tools/evil.sh\nln -sfn evil.sh tools/other.sh\necho planted\n", pwned)
	r := strict(t, repo, env, nil, "sh", "-c", attack)
	if r.code != 0 || !strings.Contains(r.stdout, "planted") {
		t.Fatalf("the box: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	t.Logf("the box's launch and end:\n%s", r.stderr)
	o := h.prompt(t)
	t.Logf("claude unjailed after the box:\n%s", o)
	absent(t, "claude after the box", pwned+".sh", pwned+".py", pwned+".relink")
	checkHeld(t, r, env, slotName(repo, "run"), []string{"lib/real.sh", "lib/helpers.py", "tools/evil.sh", "tools/other.sh"}, []string{"touch " + pwned + ".sh"})
}

// hostClaude is a strict test repository with the host's real claude
// set up against a scripted model stand-in, for a box's attack and the
// user's next unjailed 'claude -p'. out is a directory anyone may write
// marks in.
type hostClaude struct {
	bin, repo, home, out string
	env, agentEnv        []string
	s                    *standIn
}

// newHostClaude skips the test when one of tools is not on PATH.
func newHostClaude(t *testing.T, tools ...string) *hostClaude {
	t.Helper()
	h := &hostClaude{bin: agentBin(t, "claude")}
	for _, p := range tools {
		_, err := exec.LookPath(p)
		need(t, p+" on PATH", err)
	}
	h.repo, h.home, h.env = strictRepo(t)
	h.s = newScriptedStandIn(t, nil, anthropicAPI)
	h.agentEnv = append(baseEnv(h.home), claudeSetup(t, h.home, h.s)...)
	h.agentEnv = append(h.agentEnv, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1", "PYTHONDONTWRITEBYTECODE=1")
	h.out = t.TempDir()
	os.Chmod(h.out, 0o777)
	return h
}

// commitAndTrust commits the repository as it is, and marks it trusted
// in ~/.claude.json with the .mcp.json servers named approved.
func (h *hostClaude) commitAndTrust(t *testing.T, msg string, servers ...string) {
	t.Helper()
	hostGit(t, h.repo, h.env, "add", "-A")
	hostGit(t, h.repo, h.env, "commit", "-q", "-m", msg)
	project := map[string]any{"hasTrustDialogAccepted": true}
	if len(servers) > 0 {
		project["enabledMcpjsonServers"] = servers
	}
	state, _ := json.Marshal(map[string]any{"hasCompletedOnboarding": true, "projects": map[string]any{h.repo: project}})
	writeFile(t, filepath.Join(h.home, ".claude.json"), string(state))
}

// prompt runs the host's claude -p, unjailed, and returns its output.
func (h *hostClaude) prompt(t *testing.T) string {
	t.Helper()
	return runUnjailed(t, h.s, h.repo, h.agentEnv, h.bin, "-p", "Say done.", "--output-format", "json")
}

// TestHandoffClaudeHookLaunchers: the project's hooks run their code
// through package managers' launchers: go run ./cmd/hook (which
// compiles every Go file of the package and the module's packages it
// imports) and npx tsx scripts/hook.ts (the project's own tsx from
// node_modules/.bin, which loads ./lib from beside the script). The
// box leaves the settings and the named files alone: it adds a Go file
// with an init to the package, rewrites a package it imports, rewrites
// the module the script loads and the launcher's own package. The
// user's next 'claude -p' on the host must run none of it.
func TestHandoffClaudeHookLaunchers(t *testing.T) {
	h := newHostClaude(t, "go", "npx", "node")
	repo, env := h.repo, h.env
	h.agentEnv = append(h.agentEnv, "GOTOOLCHAIN=local", "GOPROXY=off", "npm_config_offline=true", "npm_config_update_notifier=false", "npm_config_cache="+filepath.Join(h.home, ".npm"))
	settings := promptHooks(`go run ./cmd/hook`, `npx tsx scripts/hook.ts`)
	writeFile(t, filepath.Join(repo, ".claude", "settings.json"), string(settings))
	writeFile(t, filepath.Join(repo, ".gitignore"), "node_modules/\n")
	writeFile(t, filepath.Join(repo, "go.mod"), "module example.com/hooks\n\ngo 1.21\n")
	writeFile(t, filepath.Join(repo, "cmd", "hook", "main.go"), "package main\n\nimport \"example.com/hooks/internal/util\"\n\nfunc main() { util.Run() }\n")
	writeFile(t, filepath.Join(repo, "scripts", "hook.ts"), "require('./lib').run()\n")
	writeFile(t, filepath.Join(repo, "node_modules", "tsx", "package.json"), `{"name": "tsx", "version": "0.0.0", "bin": {"tsx": "cli.js"}}`)
	if err := os.MkdirAll(filepath.Join(repo, "node_modules", ".bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../tsx/cli.js", filepath.Join(repo, "node_modules", ".bin", "tsx")); err != nil {
		t.Fatal(err)
	}
	// mods are what the launchers run besides the named files, each
	// touching its mark (or, the host's own, doing nothing).
	mods := func(pwned string) map[string]string {
		touch := func(m string) string {
			if pwned == "" {
				return ""
			}
			return nodeTouch(pwned + "." + m)
		}
		goTouch := "func Run() {}\n"
		if pwned != "" {
			goTouch = fmt.Sprintf("import \"os\"\n\nfunc Run() { os.WriteFile(%q, nil, 0o644) }\n", pwned+".util")
		}
		m := map[string]string{
			"internal/util/util.go": "package util\n\n" + goTouch,
			"scripts/lib.ts":        touch("lib") + "exports.run = () => {}\n",
			// A stand-in for tsx: it loads .ts files as JavaScript.
			"node_modules/tsx/cli.js": "#!/usr/bin/env node\n" + touch("tsx") +
				"require.extensions['.ts'] = require.extensions['.js']\nrequire(require('path').resolve(process.argv[2]))\n",
		}
		if pwned != "" {
			// A file of the package go run compiles, planted.
			m["cmd/hook/zz.go"] = fmt.Sprintf("package main\n\nimport \"os\"\n\nfunc init() { os.WriteFile(%q, nil, 0o644) }\n", pwned+".init")
		}
		return m
	}
	h.write(t, mods(""))
	os.Chmod(filepath.Join(repo, "node_modules", "tsx", "cli.js"), 0o755)
	h.commitAndTrust(t, "hooks")
	marks := func(pwned string) []string {
		return []string{pwned + ".util", pwned + ".lib", pwned + ".tsx", pwned + ".init"}
	}
	r, pwned := h.handOff(t, mods, marks, 0)
	if _, err := os.Lstat(filepath.Join(repo, "cmd", "hook", "zz.go")); err == nil {
		t.Errorf("the box's cmd/hook/zz.go, which go run compiles into the hook, is in the host's repository")
	}
	checkHeld(t, r, env, slotName(repo, "run"), []string{"internal/util/util.go", "scripts/lib.ts", "cmd/hook/zz.go"}, []string{strconv.Quote(pwned + ".init")})
}

// promptHooks is Claude Code settings whose UserPromptSubmit hooks run
// the command lines cmds, in order.
func promptHooks(cmds ...string) []byte {
	var hooks []any
	for _, c := range cmds {
		hooks = append(hooks, map[string]any{"type": "command", "command": c})
	}
	settings, _ := json.Marshal(map[string]any{"hooks": map[string]any{
		"UserPromptSubmit": []any{map[string]any{"hooks": hooks}},
	}})
	return settings
}

// nodeTouch and pyTouch are a line of JavaScript and one of Python that
// create the file path: what the hand-off tests' planted code does, and
// the control's copy of it.
func nodeTouch(path string) string { return fmt.Sprintf("require('fs').writeFileSync(%q, '')\n", path) }

func pyTouch(path string) string { return fmt.Sprintf("open(%q, 'w').close()\n", path) }

// write writes files, named relative to the repository.
func (h *hostClaude) write(t *testing.T, files map[string]string) {
	t.Helper()
	for f, data := range files {
		writeFile(t, filepath.Join(h.repo, f), data)
	}
}

// handOff is the run the hand-off tests share, on a repository whose own
// files (mods("")) are committed. mods(mark) are the files whose content
// leaves marks starting with mark when the host runs them; a file in
// mods(mark) and not in mods("") is planted, and taken away again after
// the control. First the control: the host's 'claude -p' with
// mods(CONTROL) in place must leave every marks(CONTROL), or the test
// proves nothing. Then a box writes mods(PWNED), and the host's next
// 'claude -p' must leave none of marks(PWNED). late is how long after
// claude ends a mark may still come (a server it started): the control
// waits up to five times that, the check after the box that long. It
// returns the box's result and PWNED.
func (h *hostClaude) handOff(t *testing.T, mods func(mark string) map[string]string, marks func(mark string) []string, late time.Duration) (result, string) {
	t.Helper()
	own := mods("")
	control := filepath.Join(h.out, "CONTROL")
	// made are the directories the control's files need that the
	// project does not have: they go again with those files.
	var made []string
	for f := range mods(control) {
		if _, ok := own[f]; ok {
			continue
		}
		top := ""
		for d := filepath.Dir(filepath.Join(h.repo, f)); d != h.repo; d = filepath.Dir(d) {
			if _, err := os.Lstat(d); err != nil {
				top = d
			}
		}
		if top != "" && !slices.Contains(made, top) {
			made = append(made, top)
		}
	}
	h.write(t, mods(control))
	o := h.prompt(t)
	for deadline := time.Now().Add(5 * late); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if !slices.ContainsFunc(marks(control), func(m string) bool { _, err := os.Lstat(m); return err != nil }) {
			break
		}
	}
	present(t, "claude before the box", marks(control)...)
	if t.Failed() {
		t.Fatalf("the control run:\n%s", o)
	}
	for f := range mods(control) {
		if data, ok := own[f]; ok {
			writeFile(t, filepath.Join(h.repo, f), data)
			continue
		}
		os.Remove(filepath.Join(h.repo, f))
	}
	for _, d := range made {
		if err := os.RemoveAll(d); err != nil {
			t.Fatal(err)
		}
	}
	pwned := filepath.Join(h.out, "PWNED")
	attack := "set -e\n"
	for f, data := range mods(pwned) {
		attack += fmt.Sprintf("mkdir -p %s && printf '%%s' %s > %s\n", shq(filepath.Dir(f)), shq(data), f)
	}
	r := strict(t, h.repo, h.env, nil, "sh", "-c", attack+"echo planted\n")
	if r.code != 0 || !strings.Contains(r.stdout, "planted") {
		t.Fatalf("the box: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	t.Logf("the box's launch and end:\n%s", r.stderr)
	o = h.prompt(t)
	t.Logf("claude unjailed after the box:\n%s", o)
	time.Sleep(late)
	absent(t, "claude after the box", marks(pwned)...)
	return r, pwned
}

// handOffHeld is handOff with no late marks, then checks that the box's
// end held each of held (relative to the project) for review.
func (h *hostClaude) handOffHeld(t *testing.T, mods func(mark string) map[string]string, marks func(mark string) []string, held ...string) {
	t.Helper()
	r, _ := h.handOff(t, mods, marks, 0)
	checkHeld(t, r, h.env, slotName(h.repo, "run"), held, nil)
}

// TestHandoffClaudeHookWrappers: the project's hooks reach their code
// through a wrapper and the command's environment: env -S with the
// script in its split string, timeout with an option that takes a value
// before the script (which calls another), BASH_ENV naming a script bash
// reads first (stdin from /dev/null: on a socket, as a hook's is, bash
// reads ~/.bashrc instead), and NODE_OPTIONS naming a module node loads
// first. The
// box leaves the settings and the named script alone and rewrites what
// each hook runs. The user's next 'claude -p' on the host must run none
// of it.
func TestHandoffClaudeHookWrappers(t *testing.T) {
	h := newHostClaude(t, "node", "timeout")
	repo, env := h.repo, h.env
	settings := promptHooks(`env -S './hooks/split.sh'`, `timeout --signal KILL 30 ./hooks/t.sh`, `BASH_ENV=./hooks/env.sh bash -c true </dev/null`, `NODE_OPTIONS=--require=./hooks/r.js node -e 0`)
	writeFile(t, filepath.Join(repo, ".claude", "settings.json"), string(settings))
	writeFile(t, filepath.Join(repo, "hooks", "t.sh"), "#!/bin/sh\n./hooks/t2.sh\n")
	mods := func(pwned string) map[string]string {
		sh := func(m string) string {
			if pwned == "" {
				return "#!/bin/sh\nexit 0\n"
			}
			return "#!/bin/sh\ntouch " + pwned + "." + m + "\n"
		}
		js := ""
		if pwned != "" {
			js = nodeTouch(pwned + ".r")
		}
		return map[string]string{
			"hooks/split.sh": sh("split"),
			"hooks/t2.sh":    sh("t2"),
			"hooks/env.sh":   sh("env"),
			"hooks/r.js":     js,
		}
	}
	h.write(t, mods(""))
	for _, f := range []string{"split.sh", "t.sh", "t2.sh"} {
		os.Chmod(filepath.Join(repo, "hooks", f), 0o755)
	}
	h.commitAndTrust(t, "hooks")
	marks := func(pwned string) []string {
		return []string{pwned + ".split", pwned + ".t2", pwned + ".env", pwned + ".r"}
	}
	r, pwned := h.handOff(t, mods, marks, 0)
	checkHeld(t, r, env, slotName(repo, "run"), []string{"hooks/split.sh", "hooks/t2.sh", "hooks/env.sh", "hooks/r.js"}, []string{pwned + ".split"})
}

// TestHandoffClaudeHookStdinScripts: the project's hooks run their
// scripts as a command find runs (-exec), as a shell's input (bash <
// FILE) and through a pipe (cat FILE | sh); each script calls another.
// The box leaves the settings and the named scripts alone and rewrites
// the scripts they call. The user's next 'claude -p' on the host must
// run none of it.
func TestHandoffClaudeHookStdinScripts(t *testing.T) {
	h := newHostClaude(t, "find")
	repo, env := h.repo, h.env
	settings := promptHooks(`find . -maxdepth 0 -exec ./hooks/f.sh {} \;`, `bash < hooks/s.sh`, `cat hooks/p.sh | sh`)
	writeFile(t, filepath.Join(repo, ".claude", "settings.json"), string(settings))
	for _, n := range []string{"f", "s", "p"} {
		writeFile(t, filepath.Join(repo, "hooks", n+".sh"), "#!/bin/sh\n./hooks/"+n+"2.sh\n")
	}
	os.Chmod(filepath.Join(repo, "hooks", "f.sh"), 0o755)
	mods := func(pwned string) map[string]string {
		m := map[string]string{}
		for _, n := range []string{"f2", "s2", "p2"} {
			m["hooks/"+n+".sh"] = "#!/bin/sh\nexit 0\n"
			if pwned != "" {
				m["hooks/"+n+".sh"] = "#!/bin/sh\ntouch " + pwned + "." + n + "\n"
			}
		}
		return m
	}
	h.write(t, mods(""))
	for _, n := range []string{"f2", "s2", "p2"} {
		os.Chmod(filepath.Join(repo, "hooks", n+".sh"), 0o755)
	}
	h.commitAndTrust(t, "hooks")
	marks := func(pwned string) []string {
		return []string{pwned + ".f2", pwned + ".s2", pwned + ".p2"}
	}
	r, pwned := h.handOff(t, mods, marks, 0)
	checkHeld(t, r, env, slotName(repo, "run"), []string{"hooks/f2.sh", "hooks/s2.sh", "hooks/p2.sh"}, []string{pwned + ".f2"})
}

// TestHandoffClaudeHookRunners: the project's hooks run their scripts
// through programs that run the rest of their words as a command
// (flock with its lock, ionice and taskset with theirs, script -c with
// a command line), and through git's configuration given with -c: a
// shell alias, an fsmonitor hook git status runs, and a hooks directory;
// an fsmonitor hook a configuration file include.path names sets, and an
// alias GIT_CONFIG_KEY_0 and GIT_CONFIG_VALUE_0 set; and a script of the
// project's own named as a wrapper (./hooks/nice).
// The box leaves the settings and the named scripts alone and rewrites
// what each hook reaches. The user's next 'claude -p' on the host must
// run none of it.
func TestHandoffClaudeHookRunners(t *testing.T) {
	h := newHostClaude(t, "git", "flock", "ionice", "taskset", "script")
	repo, env := h.repo, h.env
	settings := promptHooks(`flock -w 30 . ./hooks/fl.sh`, `ionice -c 3 taskset 0x1 ./hooks/io.sh`, `script -q -c './hooks/sc.sh' /dev/null </dev/null`, `git -c alias.check='!./hooks/al.sh' check`, `git -c core.fsmonitor=./hooks/fsm.sh status >/dev/null 2>&1`, `git -c core.hooksPath=githooks hook run pre-commit`, `./hooks/nice true`, `git -c include.path="$CLAUDE_PROJECT_DIR"/git/extra.cfg status >/dev/null 2>&1`, `GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.ev GIT_CONFIG_VALUE_0='!./hooks/ev.sh' git ev`)
	writeFile(t, filepath.Join(repo, ".claude", "settings.json"), string(settings))
	writeFile(t, filepath.Join(repo, "git", "extra.cfg"), "[core]\n\tfsmonitor = ./hooks/inc.sh\n")
	for _, n := range []string{"fl", "io", "sc"} {
		writeFile(t, filepath.Join(repo, "hooks", n+".sh"), "#!/bin/sh\n./hooks/"+n+"2.sh\n")
		os.Chmod(filepath.Join(repo, "hooks", n+".sh"), 0o755)
	}
	// mods are the scripts the hooks reach, each touching its mark.
	mods := func(pwned string) map[string]string {
		m := map[string]string{}
		for f, mark := range map[string]string{"hooks/fl2.sh": "fl2", "hooks/io2.sh": "io2", "hooks/sc2.sh": "sc2", "hooks/al.sh": "al", "hooks/fsm.sh": "fsm", "githooks/pre-commit": "pc", "hooks/nice": "nice", "hooks/inc.sh": "inc", "hooks/ev.sh": "ev"} {
			m[f] = "#!/bin/sh\nexit 0\n"
			if pwned != "" {
				m[f] = "#!/bin/sh\ntouch " + pwned + "." + mark + "\n"
			}
		}
		return m
	}
	h.write(t, mods(""))
	for f := range mods("") {
		os.Chmod(filepath.Join(repo, f), 0o755)
	}
	h.commitAndTrust(t, "hooks")
	marks := func(pwned string) []string {
		var out []string
		for _, m := range []string{"fl2", "io2", "sc2", "al", "fsm", "pc", "nice", "inc", "ev"} {
			out = append(out, pwned+"."+m)
		}
		return out
	}
	r, pwned := h.handOff(t, mods, marks, 0)
	// The held line names six, the review all.
	checkHeld(t, r, env, slotName(repo, "run"), []string{"githooks/pre-commit", "hooks/al.sh", "hooks/ev.sh", "hooks/fl2.sh", "hooks/fsm.sh", "hooks/inc.sh"}, []string{"hooks/io2.sh", "hooks/nice", "hooks/sc2.sh", pwned + ".al"})
}
