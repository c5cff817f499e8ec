package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/aisan-dev/aisan/jail/jailtest"
)

// TestHandoffClaudeHookRootImports: the project's hooks are scripts at
// the project's own root (python3 hook.py, a python script run by its
// #! line, node hook.js, python3 -c code), whose directory cannot be
// held whole. The box leaves the settings and the scripts alone: it
// rewrites the root modules they import (helpers.py, util.py, inl.py,
// jshelper.js), plants a
// json.py that shadows the standard library's json the hook imports,
// and a gettext.py that shadows the gettext argparse imports for the
// other script. The user's next 'claude -p' on the host must run none of
// it, and each must be in the review; the box's edit of main.py, which
// no hook imports, still lands directly.
func TestHandoffClaudeHookRootImports(t *testing.T) {
	h := newHostClaude(t, "python3", "node")
	repo, env := h.repo, h.env
	settings := promptHooks(`python3 hook.py`, `"$CLAUDE_PROJECT_DIR"/check.py`, `node hook.js`, `python3 -c 'import inl; inl.run()'`)
	writeFile(t, filepath.Join(repo, ".claude", "settings.json"), string(settings))
	writeFile(t, filepath.Join(repo, "hook.py"), "import json\nimport helpers\nhelpers.run(json.dumps({}))\n")
	writeFile(t, filepath.Join(repo, "check.py"), "#!/usr/bin/env python3\nimport argparse\nfrom util import run\nrun()\n")
	os.Chmod(filepath.Join(repo, "check.py"), 0o755)
	writeFile(t, filepath.Join(repo, "hook.js"), "require('./jshelper').run()\n")
	mods := func(pwned string) map[string]string {
		py := func(m string) string {
			if pwned == "" {
				return "def run(*a):\n    pass\n"
			}
			return pyTouch(pwned+"."+m) + "def run(*a):\n    pass\n"
		}
		js := "exports.run = () => {}\n"
		main := "print('main')\n"
		if pwned != "" {
			js = nodeTouch(pwned+".jshelper") + "exports.run = () => {}\n"
			main = "print('main, edited')\n"
		}
		m := map[string]string{"helpers.py": py("helpers"), "util.py": py("util"), "inl.py": py("inl"), "jshelper.js": js, "main.py": main}
		if pwned != "" {
			m["json.py"] = pyTouch(pwned+".json") + "def dumps(x):\n    return ''\n"
			m["gettext.py"] = pyTouch(pwned+".gettext") + "gettext = lambda s: s\nngettext = lambda s, p, n: s\n"
		}
		return m
	}
	h.write(t, mods(""))
	h.commitAndTrust(t, "hooks")
	marks := func(pwned string) []string {
		return []string{pwned + ".helpers", pwned + ".util", pwned + ".inl", pwned + ".jshelper", pwned + ".json", pwned + ".gettext"}
	}
	r, pwned := h.handOff(t, mods, marks, 0)
	for _, f := range []string{"json.py", "gettext.py"} {
		if _, err := os.Lstat(filepath.Join(repo, f)); err == nil {
			t.Errorf("the box's %s, which shadows Python's own for a hook at the root, is in the host's repository", f)
		}
	}
	if b, err := os.ReadFile(filepath.Join(repo, "main.py")); err != nil || string(b) != "print('main, edited')\n" {
		t.Errorf("the box's edit of main.py, which no hook imports, did not land: %q %v", b, err)
	}
	checkHeld(t, r, env, slotName(repo, "run"), []string{"helpers.py", "util.py", "inl.py", "jshelper.js", "json.py", "gettext.py"}, []string{"open(" + strconv.Quote(pwned+".json"), "open(" + strconv.Quote(pwned+".gettext")})
}

// rootPlant is a Python program, run in the project's directory, that
// plants modules which touch mark.NAME when imported: cached bytecode
// for helpers.py that Python takes without looking at the source (an
// unchecked hash-based .pyc in __pycache__), a gettext package (which
// argparse imports), and a textwrap.pyc with no source.
const rootPlant = `import importlib.util, os, py_compile, shutil, sys
mark = sys.argv[1]
def src(m):
    return "open(%r, 'w').close()\ndef run(*a):\n    pass\ngettext = lambda s: s\nngettext = lambda s, p, n: s\n" % (mark + "." + m)
os.makedirs(".mk", exist_ok=True)
open(".mk/helpers.py", "w").write(src("pycache"))
py_compile.compile(".mk/helpers.py", cfile=importlib.util.cache_from_source("helpers.py"), invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH, doraise=True)
os.makedirs("gettext", exist_ok=True)
open("gettext/__init__.py", "w").write(src("gettext"))
open(".mk/textwrap.py", "w").write(src("textwrap"))
py_compile.compile(".mk/textwrap.py", cfile="textwrap.pyc", doraise=True)
shutil.rmtree(".mk")
print("planted")
`

// TestHandoffClaudeHookRootBytecode: a hook runs python3 hook.py at the
// project's root. The box leaves every source file alone: it plants
// bytecode for helpers.py in __pycache__ that Python loads without
// checking the source, a gettext package that argparse imports, and a
// textwrap.pyc with no source beside it. The user's next 'claude -p' on
// the host must run none of it, and each must be in the review.
func TestHandoffClaudeHookRootBytecode(t *testing.T) {
	h := newHostClaude(t, "python3")
	repo, env, out := h.repo, h.env, h.out
	settings := promptHooks(`python3 hook.py`)
	writeFile(t, filepath.Join(repo, ".claude", "settings.json"), string(settings))
	writeFile(t, filepath.Join(repo, "hook.py"), "import helpers\nimport argparse\nimport textwrap\nhelpers.run()\n")
	writeFile(t, filepath.Join(repo, "helpers.py"), "def run(*a):\n    pass\n")
	h.commitAndTrust(t, "hook")
	marks := func(m string) []string { return []string{m + ".pycache", m + ".gettext", m + ".textwrap"} }
	clean := func() {
		for _, p := range []string{"__pycache__", "gettext", "textwrap.pyc"} {
			os.RemoveAll(filepath.Join(repo, p))
		}
	}
	// The control first: each plant does run on the host.
	control := filepath.Join(out, "CONTROL")
	c := exec.Command("python3", "-c", rootPlant, control)
	c.Dir = repo
	if o, err := c.CombinedOutput(); err != nil {
		t.Fatalf("planting on the host: %v\n%s", err, o)
	}
	h.prompt(t)
	present(t, "claude before the box", marks(control)...)
	if t.Failed() {
		t.FailNow()
	}
	clean()
	pwned := filepath.Join(out, "PWNED")
	r := strict(t, repo, env, nil, "python3", "-c", rootPlant, pwned)
	if r.code != 0 || !strings.Contains(r.stdout, "planted") {
		t.Fatalf("the box: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	t.Logf("the box's launch and end:\n%s", r.stderr)
	o := h.prompt(t)
	t.Logf("claude unjailed after the box:\n%s", o)
	absent(t, "claude after the box", marks(pwned)...)
	checkHeld(t, r, env, slotName(repo, "run"), []string{"__pycache__/helpers.", "gettext", "textwrap.pyc"}, []string{"open(" + "'" + pwned + ".gettext"})
	// What the user accepts lands where the box put it.
	applyHeld(t, env, slotName(repo, "run"))
	for _, p := range []string{"gettext/__init__.py", "textwrap.pyc"} {
		if _, err := os.Lstat(filepath.Join(repo, p)); err != nil {
			t.Errorf("after --apply, %s is not in the repository: %v", p, err)
		}
	}
}

// TestHandoffClaudeHookRootImportLinks: a hook runs python3 hook.py at
// the project's root, which imports helpers and pkg, both links kept at
// the root into vendor/ (helpers.py -> vendor/helpers.py, pkg ->
// vendor/pkg). The box rewrites what they lead to. The user's next
// 'claude -p' on the host must run none of it.
func TestHandoffClaudeHookRootImportLinks(t *testing.T) {
	h := newHostClaude(t, "python3")
	repo := h.repo
	settings := promptHooks(`python3 hook.py`)
	writeFile(t, filepath.Join(repo, ".claude", "settings.json"), string(settings))
	writeFile(t, filepath.Join(repo, "hook.py"), "import helpers\nimport pkg\n")
	mods := func(pwned string) map[string]string {
		py := func(m string) string {
			if pwned == "" {
				return "\n"
			}
			return pyTouch(pwned + "." + m)
		}
		return map[string]string{"vendor/helpers.py": py("helpers"), "vendor/pkg/__init__.py": py("pkg")}
	}
	h.write(t, mods(""))
	if err := os.Symlink("vendor/helpers.py", filepath.Join(repo, "helpers.py")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("vendor/pkg", filepath.Join(repo, "pkg")); err != nil {
		t.Fatal(err)
	}
	h.commitAndTrust(t, "hook")
	marks := func(m string) []string { return []string{m + ".helpers", m + ".pkg"} }
	h.handOffHeld(t, mods, marks, "vendor/helpers.py", "vendor/pkg")
}

// TestHandoffClaudeHookNodePackages: hooks run node hook.js at the
// project's root and node tools/check.js, which require packages by name
// (require('dep'), import from 'esdep'): node looks them up in the
// node_modules of the script's directory and of each above it, the
// project's own among them. The box rewrites the packages' code. The
// user's next 'claude -p' on the host must run none of it.
func TestHandoffClaudeHookNodePackages(t *testing.T) {
	h := newHostClaude(t, "node")
	repo := h.repo
	settings := promptHooks(`node hook.js`, `node tools/check.mjs`)
	writeFile(t, filepath.Join(repo, ".claude", "settings.json"), string(settings))
	writeFile(t, filepath.Join(repo, "hook.js"), "require('dep').run()\n")
	writeFile(t, filepath.Join(repo, "tools", "check.mjs"), "import { run } from '@scope/esdep'\nrun()\n")
	writeFile(t, filepath.Join(repo, "node_modules", "dep", "package.json"), `{"name":"dep","main":"lib/main.js"}`)
	writeFile(t, filepath.Join(repo, "node_modules", "@scope", "esdep", "package.json"), `{"name":"@scope/esdep","type":"module","exports":"./index.js"}`)
	mods := func(pwned string) map[string]string {
		cjs, esm := "exports.run = () => {}\n", "export function run() {}\n"
		if pwned != "" {
			cjs = nodeTouch(pwned+".dep") + cjs
			esm = fmt.Sprintf("import { writeFileSync } from 'fs'\nwriteFileSync(%q, '')\n", pwned+".esdep") + esm
		}
		return map[string]string{"node_modules/dep/lib/main.js": cjs, "node_modules/@scope/esdep/index.js": esm}
	}
	h.write(t, mods(""))
	h.commitAndTrust(t, "hooks")
	marks := func(m string) []string { return []string{m + ".dep", m + ".esdep"} }
	h.handOffHeld(t, mods, marks, "node_modules/dep/lib/main.js", "node_modules/@scope/esdep/index.js")
}

// TestHandoffClaudeHookNodeDeps: hooks run node hook.js and node
// tools/check.mjs, which require a package by name (dep, @scope/esdep).
// Those are held whole, but their code loads the packages they depend
// on in turn, each where node finds it from the package's directory:
// nested in the package's own node_modules, or hoisted to the
// project's (named in dependencies, optionalDependencies or
// peerDependencies, scoped or not), and a dependency of a dependency.
// node_modules is ignored by git, as projects keep it. The box rewrites
// each dependency's code. The user's next 'claude -p' on the host must
// run none of it.
func TestHandoffClaudeHookNodeDeps(t *testing.T) {
	h := newHostClaude(t, "node")
	repo, env := h.repo, h.env
	settings := promptHooks(`node hook.js`, `node tools/check.mjs`)
	h.write(t, map[string]string{
		".claude/settings.json": string(settings),
		".gitignore":            "node_modules/\n",
		"hook.js":               "require('dep').run()\n",
		"tools/check.mjs":       "import { run } from '@scope/esdep'\nrun()\n",
		"node_modules/dep/package.json": `{"name": "dep", "main": "lib/main.js",
	"dependencies": {"nested": "^1.0.0"},
	"optionalDependencies": {"hoisted": "^1.0.0"},
	"peerDependencies": {"@scope/peer": "^1.0.0"}}`,
		"node_modules/dep/lib/main.js":                      "require('nested')\nrequire('hoisted')\nrequire('@scope/peer')\nexports.run = () => {}\n",
		"node_modules/dep/node_modules/nested/package.json": `{"name": "nested"}`,
		"node_modules/hoisted/package.json":                 `{"name": "hoisted", "dependencies": {"deep": "^1.0.0"}}`,
		"node_modules/deep/package.json":                    `{"name": "deep"}`,
		"node_modules/@scope/peer/package.json":             `{"name": "@scope/peer"}`,
		"node_modules/@scope/esdep/package.json":            `{"name": "@scope/esdep", "type": "module", "exports": "./index.js", "dependencies": {"@scope/esdep2": "^1.0.0"}}`,
		"node_modules/@scope/esdep/index.js":                "import '@scope/esdep2'\nexport function run() {}\n",
		"node_modules/@scope/esdep2/package.json":           `{"name": "@scope/esdep2", "type": "module", "exports": "./index.js"}`,
	})
	// mods are the dependencies' code, each touching its mark.
	mods := func(pwned string) map[string]string {
		cjs := func(m, rest string) string {
			if pwned == "" {
				return rest
			}
			return nodeTouch(pwned+"."+m) + rest
		}
		esm := "export {}\n"
		if pwned != "" {
			esm = fmt.Sprintf("import { writeFileSync } from 'fs'\nwriteFileSync(%q, '')\n", pwned+".esdep2")
		}
		return map[string]string{
			"node_modules/dep/node_modules/nested/index.js": cjs("nested", "\n"),
			"node_modules/hoisted/index.js":                 cjs("hoisted", "require('deep')\n"),
			"node_modules/deep/index.js":                    cjs("deep", "\n"),
			"node_modules/@scope/peer/index.js":             cjs("peer", "\n"),
			"node_modules/@scope/esdep2/index.js":           esm,
		}
	}
	h.write(t, mods(""))
	h.commitAndTrust(t, "hooks")
	marks := func(m string) []string {
		return []string{m + ".nested", m + ".hoisted", m + ".deep", m + ".peer", m + ".esdep2"}
	}
	r, pwned := h.handOff(t, mods, marks, 0)
	checkHeld(t, r, env, slotName(repo, "run"), []string{"node_modules/dep/node_modules/nested/index.js", "node_modules/hoisted/index.js", "node_modules/deep/index.js", "node_modules/@scope/peer/index.js", "node_modules/@scope/esdep2/index.js"}, []string{strconv.Quote(pwned + ".deep")})
}

// TestHandoffClaudeHookVenvImports: hooks run scripts with the
// project's own environment's python (.venv/bin/python tools/hook.py,
// and hook.py at the root through $CLAUDE_PROJECT_DIR), which import
// by name what is installed in its site-packages: a package (mypkg),
// which imports the distribution it requires (Requires-Dist: dep2),
// and a module (mymod); and it runs a module of it with -m (modcli),
// and an entry point of .venv/bin, whose #! line is that python and
// which imports its package (entrypkg). .venv is ignored by git, as
// projects keep it.
// The box rewrites each in site-packages. The user's next 'claude -p'
// on the host must run none of it.
func TestHandoffClaudeHookVenvImports(t *testing.T) {
	h, site := newVenvClaude(t)
	repo, env := h.repo, h.env
	settings := promptHooks(`.venv/bin/python tools/hook.py`, `"$CLAUDE_PROJECT_DIR"/.venv/bin/python hook.py`, `.venv/bin/python -m modcli`, `.venv/bin/probe-entry`)
	h.write(t, map[string]string{
		".claude/settings.json":                string(settings),
		".gitignore":                           ".venv/\n",
		"tools/hook.py":                        "import mypkg\nmypkg.run()\n",
		"hook.py":                              "import mymod\nmymod.run()\n",
		site + "/mypkg-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: mypkg\nVersion: 1.0\nRequires-Dist: dep2 (>=1.0)\n",
		site + "/mypkg-1.0.dist-info/RECORD":   "mypkg/__init__.py,,\nmypkg-1.0.dist-info/METADATA,,\nmypkg-1.0.dist-info/RECORD,,\n",
		site + "/dep2-1.0.dist-info/METADATA":  "Metadata-Version: 2.1\nName: dep2\nVersion: 1.0\n",
		site + "/dep2-1.0.dist-info/RECORD":    "dep2/__init__.py,,\ndep2-1.0.dist-info/METADATA,,\ndep2-1.0.dist-info/RECORD,,\n",
		// An entry point, as pip and uv write one.
		".venv/bin/probe-entry": "#!" + filepath.Join(repo, ".venv", "bin", "python") + "\nimport sys\nfrom entrypkg.cli import main\nsys.exit(main())\n",
	})
	os.Chmod(filepath.Join(repo, ".venv", "bin", "probe-entry"), 0o755)
	mods := func(pwned string) map[string]string {
		py := func(m, rest string) string {
			if pwned == "" {
				return rest
			}
			return pyTouch(pwned+"."+m) + rest
		}
		return map[string]string{
			site + "/mypkg/__init__.py":    py("mypkg", "import dep2\ndef run():\n    pass\n"),
			site + "/dep2/__init__.py":     py("dep2", "\n"),
			site + "/mymod.py":             py("mymod", "def run():\n    pass\n"),
			site + "/modcli.py":            py("modcli", "\n"),
			site + "/entrypkg/__init__.py": py("entrypkg", "\n"),
			site + "/entrypkg/cli.py":      "def main():\n    return 0\n",
		}
	}
	h.write(t, mods(""))
	h.commitAndTrust(t, "hooks")
	marks := func(m string) []string {
		return []string{m + ".mypkg", m + ".dep2", m + ".mymod", m + ".modcli", m + ".entrypkg"}
	}
	r, pwned := h.handOff(t, mods, marks, 0)
	checkHeld(t, r, env, slotName(repo, "run"), []string{site + "/mypkg/__init__.py", site + "/dep2/__init__.py", site + "/mymod.py", site + "/modcli.py", site + "/entrypkg/__init__.py"}, []string{strconv.Quote(pwned + ".dep2")})
}

// TestHandoffClaudeHookNodeBinDeps: hooks run a package's command from
// node_modules/.bin (npx probe-cli, and an npm script that runs
// probe-lint), a link into the package, which is held whole. Its code
// requires the packages it depends on, hoisted to the project's
// node_modules. The box rewrites those. The user's next 'claude -p'
// on the host must run none of it.
func TestHandoffClaudeHookNodeBinDeps(t *testing.T) {
	h := newHostClaude(t, "npx", "npm", "node")
	repo := h.repo
	h.agentEnv = append(h.agentEnv, "npm_config_offline=true", "npm_config_update_notifier=false", "npm_config_cache="+filepath.Join(h.home, ".npm"))
	settings := promptHooks(`npx probe-cli`, `npm run --silent lint`)
	h.write(t, map[string]string{
		".claude/settings.json":                     string(settings),
		".gitignore":                                "node_modules/\n",
		"package.json":                              `{"name": "p", "private": true, "scripts": {"lint": "probe-lint"}}`,
		"node_modules/probe-cli/package.json":       `{"name": "probe-cli", "version": "1.0.0", "bin": {"probe-cli": "cli.js"}, "dependencies": {"cli-dep": "^1.0.0"}}`,
		"node_modules/probe-cli/cli.js":             "#!/usr/bin/env node\nrequire('cli-dep')\n",
		"node_modules/probe-lint/package.json":      `{"name": "probe-lint", "version": "1.0.0", "bin": {"probe-lint": "bin/lint.js"}, "dependencies": {"@scope/lint-dep": "^1.0.0"}}`,
		"node_modules/probe-lint/bin/lint.js":       "#!/usr/bin/env node\nrequire('@scope/lint-dep')\n",
		"node_modules/cli-dep/package.json":         `{"name": "cli-dep", "version": "1.0.0"}`,
		"node_modules/@scope/lint-dep/package.json": `{"name": "@scope/lint-dep", "version": "1.0.0"}`,
	})
	os.Chmod(filepath.Join(repo, "node_modules", "probe-cli", "cli.js"), 0o755)
	os.Chmod(filepath.Join(repo, "node_modules", "probe-lint", "bin", "lint.js"), 0o755)
	if err := os.MkdirAll(filepath.Join(repo, "node_modules", ".bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	for l, target := range map[string]string{"probe-cli": "../probe-cli/cli.js", "probe-lint": "../probe-lint/bin/lint.js"} {
		if err := os.Symlink(target, filepath.Join(repo, "node_modules", ".bin", l)); err != nil {
			t.Fatal(err)
		}
	}
	mods := func(pwned string) map[string]string {
		js := func(m string) string {
			if pwned == "" {
				return "\n"
			}
			return nodeTouch(pwned + "." + m)
		}
		return map[string]string{"node_modules/cli-dep/index.js": js("cli-dep"), "node_modules/@scope/lint-dep/index.js": js("lint-dep")}
	}
	h.write(t, mods(""))
	h.commitAndTrust(t, "hooks")
	marks := func(m string) []string { return []string{m + ".cli-dep", m + ".lint-dep"} }
	h.handOffHeld(t, mods, marks, "node_modules/cli-dep/index.js", "node_modules/@scope/lint-dep/index.js")
}

// TestHandoffClaudeHookNodeShadow: a hook runs node hook.js at the
// project's root, which requires a package that is installed (dep), and
// one it can do without that is not (try { require('opt') } catch {});
// dep in turn tries an optional dependency that is not installed
// (native). Where node looks for each, the box adds what require takes:
// the package's directory (node_modules/opt/), a file it tries before
// the held directory of dep (node_modules/dep.js), and a file for the
// missing one (node_modules/native.js). The user's next 'claude -p' on
// the host must run none of it, and the launch's end holds each for
// review.
func TestHandoffClaudeHookNodeShadow(t *testing.T) {
	h := newHostClaude(t, "node")
	h.write(t, map[string]string{
		".claude/settings.json":         string(promptHooks(`node hook.js`)),
		".gitignore":                    "node_modules/\n",
		"hook.js":                       "try { require('opt') } catch {}\nrequire('dep')\n",
		"node_modules/dep/package.json": `{"name": "dep", "version": "1.0.0", "optionalDependencies": {"native": "^1.0.0"}}`,
		"node_modules/dep/index.js":     "try { require('native') } catch {}\n",
	})
	h.commitAndTrust(t, "hook")
	mods := func(pwned string) map[string]string {
		if pwned == "" {
			return nil
		}
		touch := func(m string) string { return nodeTouch(pwned + "." + m) }
		return map[string]string{
			"node_modules/opt/index.js": touch("opt"),
			// dep.js, which node takes for dep, goes on to dep's own
			// code, which tries native.
			"node_modules/dep.js":    touch("dep") + "require('./dep/index.js')\n",
			"node_modules/native.js": touch("native"),
		}
	}
	marks := func(m string) []string { return []string{m + ".opt", m + ".dep", m + ".native"} }
	h.handOffHeld(t, mods, marks, "node_modules/opt", "node_modules/dep.js", "node_modules/native.js")
}

// TestHandoffClaudeHookNodeImports: a hook runs node hook.js, which
// loads two entries of the project's package.json "imports" map:
// #dep, mapped to another package (dep-impl in node_modules), and
// #util/*, mapped to files of the project (./lib/*.js). The box rewrites
// what each leads to. The user's next 'claude -p' on the host must run
// none of it.
func TestHandoffClaudeHookNodeImports(t *testing.T) {
	h := newHostClaude(t, "node")
	h.write(t, map[string]string{
		".claude/settings.json":              string(promptHooks(`node hook.js`)),
		".gitignore":                         "node_modules/\n",
		"package.json":                       `{"name": "p", "private": true, "imports": {"#dep": "dep-impl", "#util/*": "./lib/*.js"}}`,
		"hook.js":                            "require('#dep')\nrequire('#util/fmt')\n",
		"node_modules/dep-impl/package.json": `{"name": "dep-impl", "version": "1.0.0"}`,
	})
	mods := func(pwned string) map[string]string {
		js := func(m string) string {
			if pwned == "" {
				return "\n"
			}
			return nodeTouch(pwned + "." + m)
		}
		return map[string]string{"node_modules/dep-impl/index.js": js("dep"), "lib/fmt.js": js("util")}
	}
	h.write(t, mods(""))
	h.commitAndTrust(t, "hook")
	marks := func(m string) []string { return []string{m + ".dep", m + ".util"} }
	h.handOffHeld(t, mods, marks, "node_modules/dep-impl/index.js", "lib/fmt.js")
}

// TestHandoffClaudeHookNodePnpm: the project's packages are laid out as
// pnpm lays them out: node_modules/dep is a link into
// node_modules/.pnpm, and dep's own dependency (sub) a link beside it
// there. A hook runs node hook.js, which requires dep, whose code
// requires sub. The box rewrites both packages' code where the links
// lead. The user's next 'claude -p' on the host must run none of it.
func TestHandoffClaudeHookNodePnpm(t *testing.T) {
	h := newHostClaude(t, "node")
	store := "node_modules/.pnpm"
	h.write(t, map[string]string{
		".claude/settings.json": string(promptHooks(`node hook.js`)),
		".gitignore":            "node_modules/\n",
		"hook.js":               "require('dep')\n",
		store + "/dep@1.0.0/node_modules/dep/package.json": `{"name": "dep", "version": "1.0.0", "dependencies": {"sub": "1.0.0"}}`,
		store + "/sub@1.0.0/node_modules/sub/package.json": `{"name": "sub", "version": "1.0.0"}`,
	})
	for l, target := range map[string]string{
		"node_modules/dep":                    ".pnpm/dep@1.0.0/node_modules/dep",
		store + "/dep@1.0.0/node_modules/sub": "../../sub@1.0.0/node_modules/sub",
	} {
		if err := os.Symlink(target, filepath.Join(h.repo, l)); err != nil {
			t.Fatal(err)
		}
	}
	mods := func(pwned string) map[string]string {
		js := func(m, rest string) string {
			if pwned == "" {
				return rest
			}
			return nodeTouch(pwned+"."+m) + rest
		}
		return map[string]string{
			store + "/dep@1.0.0/node_modules/dep/index.js": js("dep", "require('sub')\n"),
			store + "/sub@1.0.0/node_modules/sub/index.js": js("sub", "\n"),
		}
	}
	h.write(t, mods(""))
	h.commitAndTrust(t, "hook")
	marks := func(m string) []string { return []string{m + ".dep", m + ".sub"} }
	h.handOffHeld(t, mods, marks, store+"/dep@1.0.0/node_modules/dep/index.js", store+"/sub@1.0.0/node_modules/sub/index.js")
}

// TestHandoffClaudeHookVenvEditable: the project's own package is
// installed editable in its environment, as uv does for a project: a
// .pth file in site-packages adds the project's src to the module path.
// A hook runs a script with the environment's python that imports the
// package from there. The box rewrites the package. The user's next
// 'claude -p' on the host must not run it. (A sitecustomize the box
// adds to src is swept too, but Debian's python imports its own from
// the standard library first: the unit tests hold that part.)
func TestHandoffClaudeHookVenvEditable(t *testing.T) {
	h, site := newVenvClaude(t)
	h.write(t, map[string]string{
		".claude/settings.json":  string(promptHooks(`.venv/bin/python tools/hook.py`)),
		".gitignore":             ".venv/\n",
		"tools/hook.py":          "import myproj\nmyproj.run()\n",
		site + "/_myproj.pth":    filepath.Join(h.repo, "src") + "\n",
		"src/myproj/__init__.py": "from . import core\ndef run():\n    pass\n",
		"pyproject.toml":         "[project]\nname = \"myproj\"\nversion = \"1.0\"\n",
	})
	mods := func(pwned string) map[string]string {
		if pwned == "" {
			return map[string]string{"src/myproj/core.py": "\n"}
		}
		return map[string]string{"src/myproj/core.py": pyTouch(pwned + ".core")}
	}
	h.write(t, mods(""))
	h.commitAndTrust(t, "hook")
	marks := func(m string) []string { return []string{m + ".core"} }
	h.handOffHeld(t, mods, marks, "src/myproj/core.py")
}

// TestHandoffClaudeHookNodeDepsPastBudget: the hook's package depends on
// twenty packages of 30 files each, more than a launch copies in all
// for review; those past the budget are bound read-only instead. The box
// tries to rewrite every one; the user's next 'claude -p' on the host
// runs none of the box's code, and the launch says what it bound
// read-only.
func TestHandoffClaudeHookNodeDepsPastBudget(t *testing.T) {
	h := newHostClaude(t, "node")
	settings := promptHooks(`node hook.js`)
	files := map[string]string{".claude/settings.json": string(settings), ".gitignore": "node_modules/\n", "hook.js": "require('dep')\n"}
	deps, main := map[string]string{}, ""
	for i := range 20 {
		p := fmt.Sprintf("p%02d", i)
		deps[p] = "^1.0.0"
		main += fmt.Sprintf("require(%q)\n", p)
		files["node_modules/"+p+"/package.json"] = fmt.Sprintf(`{"name": %q}`, p)
		files["node_modules/"+p+"/index.js"] = "\n"
		for j := range 30 {
			files[fmt.Sprintf("node_modules/%s/lib/m%02d.js", p, j)] = "\n"
		}
	}
	pj, _ := json.Marshal(map[string]any{"name": "dep", "dependencies": deps})
	files["node_modules/dep/package.json"], files["node_modules/dep/index.js"] = string(pj), main
	h.write(t, files)
	h.commitAndTrust(t, "hook")
	// The control: the hook does load the last package on the host.
	control := filepath.Join(h.out, "CONTROL")
	h.write(t, map[string]string{"node_modules/p19/index.js": nodeTouch(control)})
	h.prompt(t)
	present(t, "claude before the box", control)
	h.write(t, map[string]string{"node_modules/p19/index.js": "\n"})
	pwned := filepath.Join(h.out, "PWNED")
	attack := fmt.Sprintf("for i in $(seq -w 0 19); do printf '%%s' %s > node_modules/p$i/index.js 2>/dev/null || echo \"read-only p$i\"; done; echo planted\n", shq(nodeTouch(pwned+".p")))
	r := strict(t, h.repo, h.env, nil, "sh", "-c", attack)
	if r.code != 0 || !strings.Contains(r.stdout, "planted") || !strings.Contains(r.stdout, "read-only p19") {
		t.Fatalf("the box: exit %d, %q %q; want the last packages read-only", r.code, r.stdout, r.stderr)
	}
	t.Logf("the box's launch and end:\n%s", r.stderr)
	if !strings.Contains(r.stderr, "are bound read-only in the box") {
		t.Errorf("the launch does not say what it bound read-only:\n%s", r.stderr)
	}
	o := h.prompt(t)
	t.Logf("claude unjailed after the box:\n%s", o)
	absent(t, "claude after the box", pwned+".p")
}

// TestHandoffClaudeHookVenvStartup: a hook runs a script with the
// project's own environment's python, which runs the .pth files of its
// site-packages as it starts, whatever the script imports. The box
// rewrites a .pth there and adds another. The user's next 'claude -p'
// on the host must run neither (.pth files are protected names
// anywhere: this checks it for a venv from a real box).
func TestHandoffClaudeHookVenvStartup(t *testing.T) {
	h, site := newVenvClaude(t)
	h.write(t, map[string]string{".claude/settings.json": string(promptHooks(`.venv/bin/python tools/hook.py`)), ".gitignore": ".venv/\n", "tools/hook.py": "import json\n"})
	mods := func(pwned string) map[string]string {
		if pwned == "" {
			return map[string]string{site + "/aa.pth": "# a path file\n"}
		}
		run := func(m string) string { return fmt.Sprintf("import os; open(%q, 'w').close()\n", pwned+"."+m) }
		return map[string]string{site + "/aa.pth": run("aa"), site + "/zz_new.pth": run("new")}
	}
	h.write(t, mods(""))
	h.commitAndTrust(t, "hook")
	marks := func(m string) []string { return []string{m + ".aa", m + ".new"} }
	h.handOffHeld(t, mods, marks, site+"/aa.pth", site+"/zz_new.pth")
}

// TestHandoffClaudeHookVenvOptionalImport: a hook's script, run by the
// project's own environment's python, imports a module it can do
// without (try: import ujson as json, except ImportError: import json),
// which is not installed. The box installs its own ujson.py in the
// environment's site-packages; the user's next 'claude -p' on the host
// must not run it.
func TestHandoffClaudeHookVenvOptionalImport(t *testing.T) {
	h, site := newVenvClaude(t)
	h.write(t, map[string]string{".claude/settings.json": string(promptHooks(`.venv/bin/python tools/hook.py`)), ".gitignore": ".venv/\n",
		"tools/hook.py": "try:\n    import ujson as json\nexcept ImportError:\n    import json\n"})
	mods := func(pwned string) map[string]string {
		if pwned == "" {
			return nil
		}
		return map[string]string{site + "/ujson.py": pyTouch(pwned + ".ujson")}
	}
	h.commitAndTrust(t, "hook")
	marks := func(m string) []string { return []string{m + ".ujson"} }
	h.handOffHeld(t, mods, marks, site+"/ujson.py")
}

// TestHandoffClaudeHookVenvEditableFlat: the project is installed
// editable from a flat layout, so the .pth file adds the project's own
// directory to its environment's module path. A hook's script, run by
// that python from tools/, tries a module that is not there (try:
// import optmod). The box adds optmod.py at the project's root. The
// user's next 'claude -p' on the host must not run it.
func TestHandoffClaudeHookVenvEditableFlat(t *testing.T) {
	h, site := newVenvClaude(t)
	h.write(t, map[string]string{
		".claude/settings.json": string(promptHooks(`.venv/bin/python tools/hook.py`)),
		".gitignore":            ".venv/\n",
		"tools/hook.py":         "try:\n    import optmod\nexcept ImportError:\n    pass\n",
		site + "/_myproj.pth":   h.repo + "\n",
	})
	mods := func(pwned string) map[string]string {
		if pwned == "" {
			return nil
		}
		return map[string]string{"optmod.py": pyTouch(pwned + ".optmod")}
	}
	h.commitAndTrust(t, "hook")
	marks := func(m string) []string { return []string{m + ".optmod"} }
	h.handOffHeld(t, mods, marks, "optmod.py")
}

// TestHandoffClaudeHookVenvLauncher: a hook runs a command of the
// project's environment by its name through a Python launcher (pipenv
// run probe-entry, with the environment in the project's .venv): an
// entry point whose #! line is the environment's python and which
// imports its package from site-packages. The box rewrites the
// package. The user's next 'claude -p' on the host must not run it.
func TestHandoffClaudeHookVenvLauncher(t *testing.T) {
	h, site := newVenvClaude(t)
	if _, err := exec.LookPath("pipenv"); err != nil {
		need(t, "pipenv (apt-get install pipenv)", err)
	}
	h.agentEnv = append(h.agentEnv, "PIPENV_VENV_IN_PROJECT=1", "PIPENV_NOSPIN=1", "PIPENV_VERBOSITY=-1", "PIPENV_YES=1")
	h.write(t, map[string]string{
		".claude/settings.json": string(promptHooks(`pipenv run probe-entry`)),
		".gitignore":            ".venv/\n",
		// A source on a closed loopback port: pipenv run reads the
		// Pipfile, and nothing may leave the machine.
		"Pipfile":               "[[source]]\nurl = \"http://127.0.0.1:9/simple\"\nverify_ssl = false\nname = \"local\"\n\n[packages]\n",
		".venv/bin/probe-entry": "#!" + filepath.Join(h.repo, ".venv", "bin", "python") + "\nimport sys\nfrom entrypkg import main\nsys.exit(main())\n",
	})
	os.Chmod(filepath.Join(h.repo, ".venv", "bin", "probe-entry"), 0o755)
	mods := func(pwned string) map[string]string {
		body := "def main():\n    return 0\n"
		if pwned != "" {
			body = pyTouch(pwned+".entrypkg") + body
		}
		return map[string]string{site + "/entrypkg/__init__.py": body}
	}
	h.write(t, mods(""))
	h.commitAndTrust(t, "hook")
	marks := func(m string) []string { return []string{m + ".entrypkg"} }
	h.handOffHeld(t, mods, marks, site+"/entrypkg/__init__.py")
}

// TestHandoffClaudeHookVenvNoSite: as TestHandoffClaudeHookVenvOptionalImport,
// but the project's environment has no site-packages at launch (its
// lib is gone, as after a partial clean): the box makes it, with its
// ujson.py, which the environment's python imports from there. The
// user's next 'claude -p' on the host must not run it.
func TestHandoffClaudeHookVenvNoSite(t *testing.T) {
	h, site := newVenvClaude(t)
	if err := os.RemoveAll(filepath.Join(h.repo, ".venv", "lib")); err != nil {
		t.Fatal(err)
	}
	h.write(t, map[string]string{".claude/settings.json": string(promptHooks(`.venv/bin/python tools/hook.py`)), ".gitignore": ".venv/\n",
		"tools/hook.py": "try:\n    import ujson as json\nexcept ImportError:\n    import json\n"})
	mods := func(pwned string) map[string]string {
		if pwned == "" {
			return nil
		}
		return map[string]string{site + "/ujson.py": pyTouch(pwned + ".ujson")}
	}
	h.commitAndTrust(t, "hook")
	marks := func(m string) []string { return []string{m + ".ujson"} }
	h.handOffHeld(t, mods, marks, site+"/ujson.py")
}

// newVenvClaude is a host claude whose project has its own virtual
// environment (.venv, ignored by git), and that environment's
// site-packages, relative to the project.
func newVenvClaude(t *testing.T) (*hostClaude, string) {
	h := newHostClaude(t, "python3")
	if r := runCmd(t, h.repo, h.env, "", "python3", "-m", "venv", "--without-pip", ".venv"); r.code != 0 {
		// Under AISAN_REQUIRE_INTEGRATION=1 (CI) this fails, not skips.
		jailtest.Need(t, "python3's venv module", fmt.Errorf("python3 -m venv: exit %d %s", r.code, r.stderr))
	}
	sites, _ := filepath.Glob(filepath.Join(h.repo, ".venv", "lib", "python3*", "site-packages"))
	if len(sites) != 1 {
		t.Fatalf("site-packages of the project's environment: %q", sites)
	}
	site, _ := filepath.Rel(h.repo, sites[0])
	return h, site
}
