package projectrun

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/aisan-dev/aisan/jail/strictbox/protect"
)

// TestClimbs: the literal specifiers a script loads relative to its own
// directory, and a note for a path built at run time that climbs.
func TestClimbs(t *testing.T) {
	for _, tt := range []struct {
		name, lang, text string
		loads            []string // lang:path
		notes            []string
	}{
		{"node require and import", "js", "const u = require('../lib/util')\nimport x from \"../lib/y.js\"\nimport '../side'\nexport * from './own'\nconst m = await import(`../dyn.mjs`)\nrequire('fs')\n",
			[]string{"js:/r/lib/util", "js:/r/dyn.mjs", "js:/r/lib/y.js", "js:/r/side", "js:/r/tools/own"}, nil},
		{"node built at run time", "js", "require(path.join(__dirname, '../lib'))\nimport(`../${name}.js`)\nrequire(x)\n",
			nil, []string{"require(path.join(__dirname, '../lib')", "import(`../${name}.js`)"}},
		{"python relative imports", "py", "from .. import a, b as c\nfrom ..pkg.mod import y\nfrom . import z\nfrom ...top import q\nfrom os import path\n",
			[]string{"py:/r/__init__", "py:/r/a", "py:/r/b", "py:/r/pkg/mod", "py:/r/tools/__init__", "py:/r/tools/z", "py:/top"}, nil},
		{"python sys.path", "py", "import sys, os\nsys.path.insert(0, os.path.join(os.path.dirname(__file__), '..'))\nsys.path.append('x')\n",
			nil, []string{"sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..'))"}},
		{"ruby", "rb", "require_relative '../x'\nrequire_relative(\"helper\")\nrequire 'json'\n$LOAD_PATH.unshift File.expand_path('../lib', __dir__)\nrequire_relative \"../#{n}\"\n",
			[]string{"rb:/r/x", "rb:/r/tools/helper"}, []string{"$LOAD_PATH.unshift File.expand_path('../lib', __dir__)", `require_relative "../#{n}"`}},
		{"php", "php", "<?php\ninclude __DIR__ . '/../x.php';\nrequire_once(dirname(__FILE__) . \"/../y.php\");\ninclude '../z.php';\nrequire $base . '/../w.php';\n",
			[]string{"php:/r/x.php", "php:/r/y.php"}, []string{"include '../z.php'", "require $base . '/../w.php'"}},
		{"perl", "pl", "use FindBin;\nuse lib \"$FindBin::Bin/../lib\";\nuse lib \"${FindBin::RealBin}/../vendor\";\nrequire \"$FindBin::Bin/../conf.pl\";\nuse lib '../other';\nuse strict;\n",
			[]string{"dir:/r/lib", "dir:/r/vendor", "pl:/r/conf.pl"}, []string{"use lib '../other'"}},
		{"not a loader", "", "require('../x')", nil, nil},
		{"a note says no control character", "js", "require('\x1b[2J' + \"../x\")", nil, []string{"require('?[2J' + \"../x\")"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			loads, notes := climbs(tt.lang, []byte(tt.text), "/r/tools")
			var got []string
			for _, l := range loads {
				got = append(got, l.lang+":"+l.path)
			}
			if d := cmp.Diff(tt.loads, got); d != "" {
				t.Errorf("loads (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.notes, notes); d != "" {
				t.Errorf("notes (-want +got):\n%s", d)
			}
		})
	}
}

// TestClimb: a held hook's script that loads code from above its own
// directory: each file it loads is held (and what that loads, in turn),
// not the directories they lie in; the project's own directory is said.
func TestClimb(t *testing.T) {
	project := files{
		"/r/tools/hook.js":           "require('../lib/util')\n",
		"/r/lib/util.js":             "module.exports = require('./deep')\n",
		"/r/lib/deep.js":             "require('../vendor/pkg')\n",
		"/r/vendor/pkg/package.json": `{"main":"m.js"}`,
		"/r/tools/root.js":           "require('..')\n",
		"/r/tools/dyn.js":            "require(`../lib/${x}`)\n",
		"/r/src/app/sub/main.py":     "from .. import helpers\nfrom ..core import db\n",
		"/r/src/app/core.py":         "x = 1\n",
		"/r/tools/x.rb":              "require_relative '../lib/r'\n",
		"/r/tools/x.php":             "<?php include __DIR__ . '/../lib/p.php';\n",
		"/r/bin/x.pl":                "#!/usr/bin/perl\nuse lib \"$FindBin::Bin/../perl5\";\n",
	}
	for _, tt := range []struct {
		name, cmd string
		dirs      []string
		files     []string
		note      string
	}{
		{"node, followed in turn", `node tools/hook.js`, []string{"/r/tools", "/r/vendor/pkg"},
			[]string{"/r/lib/util", "/r/lib/util.js", "/r/lib/deep.js", "/r/vendor/pkg/package.json"}, ""},
		{"node, the project's own directory", `node tools/root.js`, []string{"/r/tools"}, []string{"/r/index.js", "/r/package.json"}, "loads the project's own directory"},
		{"node, built at run time", `node tools/dyn.js`, []string{"/r/tools"}, nil, "tools/dyn.js loads a path it builds as it runs (require(`../lib/${x}`))"},
		{"python -m", `cd src && python3 -m app.sub.main`, []string{"/r/src", "/r/src/app/sub"}, []string{"/r/src/app/__init__.py", "/r/src/app/helpers.py", "/r/src/app/helpers/__init__.py", "/r/src/app/core.py"}, ""},
		{"ruby, php, perl", `ruby tools/x.rb; php tools/x.php; ./bin/x.pl`, []string{"/r/tools", "/r/bin", "/r/perl5"}, []string{"/r/lib/r.rb", "/r/lib/p.php"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n := ClaudeSettings("/r/.claude/settings.json", []byte(hook(tt.cmd)), Project{Read: project.read, Home: "/home/u"})
			if d := cmp.Diff(tt.dirs, n.Dirs); d != "" {
				t.Errorf("dirs (-want +got):\n%s", d)
			}
			for _, f := range tt.files {
				if !strings.Contains(" "+strings.Join(n.Files, " ")+" ", " "+f+" ") {
					t.Errorf("files lack %s: %q", f, n.Files)
				}
			}
			for _, f := range tt.files {
				if filepath.Ext(f) != ".json" && !strings.Contains(" "+strings.Join(n.Programs, " ")+" ", " "+f+" ") {
					t.Errorf("programs lack %s: %q", f, n.Programs)
				}
			}
			all := strings.Join(n.Notes, "\n")
			if tt.note == "" && all != "" || tt.note != "" && (len(n.Notes) != 1 || !strings.Contains(all, tt.note)) {
				t.Errorf("notes, want one with %q:\n%s", tt.note, all)
			}
		})
	}
}

// FuzzClimbs: whatever a box writes into a script, climbs returns
// absolute clean paths and never panics.
func FuzzClimbs(f *testing.F) {
	f.Add([]byte("require('../a')\nimport x from '../b'\nimport(`../${c}`)\n"))
	f.Add([]byte("from ...a.b import (c, d)\nsys.path.insert(0, '..')\n"))
	f.Add([]byte("require_relative '../x'\n<?php include __DIR__ . '/../y';\nuse lib \"$FindBin::Bin/../l\";\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, lang := range []string{"js", "py", "rb", "php", "pl"} {
			loads, _ := climbs(lang, data, "/r/d")
			for _, l := range loads {
				if !filepath.IsAbs(l.path) || filepath.Clean(l.path) != l.path {
					t.Fatalf("%s: %q is not absolute and clean", lang, l.path)
				}
				files, _ := suffixes(l)
				for _, p := range files {
					if !filepath.IsAbs(p) {
						t.Fatalf("%s: %q is not absolute", lang, p)
					}
				}
			}
		}
	})
}

// TestClimbBounded: a script whose every load loads as many again is
// read only so far, and says so.
func TestClimbBounded(t *testing.T) {
	var b strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&b, "require('./m%d/x')\n", i)
	}
	text := []byte(b.String())
	read := func(p string) []byte {
		if strings.HasSuffix(p, ".js") {
			return text
		}
		return nil
	}
	n := ClaudeSettings("/r/.claude/settings.json", []byte(hook("node t/h.js")), Project{Read: read})
	if !strings.Contains(strings.Join(n.Notes, "\n"), "load more files than are followed") {
		t.Errorf("notes: %q", n.Notes)
	}
}

// checkHolds checks that n holds each of files and dirs, and never the
// project's own directory (/r) whole.
func checkHolds(t *testing.T, n Names, files, dirs []string) {
	t.Helper()
	for _, f := range files {
		if !slices.Contains(n.Files, f) {
			t.Errorf("files lack %s: %q", f, n.Files)
		}
	}
	for _, d := range dirs {
		if !slices.Contains(n.Dirs, d) {
			t.Errorf("dirs lack %s: %q", d, n.Dirs)
		}
	}
	if slices.Contains(n.Dirs, "/r") {
		t.Errorf("the project's own directory is held whole: %q", n.Dirs)
	}
}

// listOf lists the files of fs directly in a directory, as Project.List
// does (nil for none).
func listOf(fs files) func(string) []string {
	return func(dir string) []string {
		var out []string
		for p := range fs {
			if filepath.Dir(p) == dir {
				out = append(out, filepath.Base(p))
			}
		}
		return out
	}
}

// TestNodeDeps: a package a script requires by name is held with the
// packages it depends on, in turn, each found as node finds it from the
// package's directory (its own node_modules first, then each above it
// up to the project's); what its package.json does not give, or what
// lies outside the project, is not. Where node looks before the copy
// it finds, or for a name found nowhere, is swept for that name at the
// end, but inside a held package.
func TestNodeDeps(t *testing.T) {
	for _, tt := range []struct {
		name    string
		project files
		dirs    []string
		note    string
		sweep   []protect.ModuleDir
	}{
		{"nested, hoisted, optional, peer, scoped, and in turn", files{
			"/r/node_modules/dep/package.json":                     `{"dependencies": {"nested": "1", "hoisted": "1"}, "optionalDependencies": {"opt": "1"}, "peerDependencies": {"@s/peer": "1"}}`,
			"/r/node_modules/dep/node_modules/nested/index.js":     "",
			"/r/node_modules/dep/node_modules/nested/package.json": `{"dependencies": {"deep": "1"}}`,
			"/r/node_modules/hoisted/package.json":                 `{}`,
			"/r/node_modules/opt/package.json":                     `{}`,
			"/r/node_modules/@s/peer/package.json":                 `{"dependencies": {"@s/deeper": "1"}}`,
			"/r/node_modules/@s/deeper/package.json":               `{}`,
			"/r/node_modules/deep/package.json":                    `{}`,
		}, []string{"/r/node_modules/dep", "/r/node_modules/hoisted", "/r/node_modules/dep/node_modules/nested", "/r/node_modules/opt", "/r/node_modules/@s/peer", "/r/node_modules/deep", "/r/node_modules/@s/deeper"}, "", append(sweep("/r/node_modules", "dep", "hoisted", "opt", "@s/peer", "deep", "@s/deeper"), sweep("/r/node_modules/@s/node_modules", "@s/deeper")...)},
		{"the nearest copy, not the hoisted one", files{
			"/r/node_modules/dep/package.json":                `{"dependencies": {"x": "2"}}`,
			"/r/node_modules/dep/node_modules/x/package.json": `{}`,
			"/r/node_modules/x/package.json":                  `{}`,
		}, []string{"/r/node_modules/dep", "/r/node_modules/dep/node_modules/x"}, "", sweep("/r/node_modules", "dep")},
		{"a scoped package's own node_modules, and its scope's", files{
			"/r/node_modules/dep/package.json":                 `{"dependencies": {"@s/a": "1"}}`,
			"/r/node_modules/@s/a/package.json":                `{"dependencies": {"b": "1", "c": "1"}}`,
			"/r/node_modules/@s/a/node_modules/b/package.json": `{}`,
			"/r/node_modules/@s/node_modules/c/package.json":   `{}`,
			"/r/node_modules/c/package.json":                   `{}`,
		}, []string{"/r/node_modules/dep", "/r/node_modules/@s/a", "/r/node_modules/@s/a/node_modules/b", "/r/node_modules/@s/node_modules/c"}, "", append(sweep("/r/node_modules", "dep", "@s/a"), sweep("/r/node_modules/@s/node_modules", "c")...)},
		{"not node's own modules, paths, devDependencies, node_modules/node_modules, or what is not installed", files{
			"/r/node_modules/dep/package.json":                  `{"dependencies": {"": "1", "fs": "1", "node:fs": "1", "../up": "1", "./x": "1", "a/b": "1", "@s": "1", "missing": "1"}, "devDependencies": {"dev": "1"}}`,
			"/r/node_modules/fs/package.json":                   `{}`,
			"/r/node_modules/dev/package.json":                  `{}`,
			"/r/up/package.json":                                `{}`,
			"/r/node_modules/node_modules/missing/package.json": `{}`,
		}, []string{"/r/node_modules/dep"}, "", sweep("/r/node_modules", "dep", "missing")},
		{"a cycle, each once", files{
			"/r/node_modules/dep/package.json": `{"dependencies": {"a": "1"}}`,
			"/r/node_modules/a/package.json":   `{"dependencies": {"dep": "1", "a": "1"}, "peerDependencies": {"dep": "1"}}`,
		}, []string{"/r/node_modules/dep", "/r/node_modules/a"}, "", sweep("/r/node_modules", "dep", "a")},
		{"not above the project", files{
			"/r/node_modules/dep/package.json": `{"dependencies": {"out": "1"}}`,
			"/node_modules/out/package.json":   `{}`,
		}, []string{"/r/node_modules/dep"}, "", sweep("/r/node_modules", "dep", "out")},
		{"a package.json that does not parse", files{
			"/r/node_modules/dep/package.json": `{"dependencies": ["a"]}`,
			"/r/node_modules/a/package.json":   `{}`,
		}, []string{"/r/node_modules/dep"}, "node_modules/dep/package.json does not parse as a package.json, so the packages node_modules/dep loads by name are not held", sweep("/r/node_modules", "dep")},
		{"no package.json: nothing to follow, and nothing to say", files{
			"/r/node_modules/dep/index.js":   "",
			"/r/node_modules/a/package.json": `{}`,
		}, []string{"/r/node_modules/dep"}, "", sweep("/r/node_modules", "dep")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.project["/r/tools/hook.js"] = "require('dep')\n"
			n := ClaudeSettings("/r/.claude/settings.json", []byte(hook("node tools/hook.js")), Project{Read: tt.project.read, List: listOf(tt.project)})
			if d := cmp.Diff(append([]string{"/r/tools"}, tt.dirs...), n.Dirs); d != "" {
				t.Errorf("dirs (-want +got):\n%s", d)
			}
			all := strings.Join(n.Notes, "\n")
			if tt.note == "" && all != "" || tt.note != "" && (len(n.Notes) != 1 || !strings.Contains(all, tt.note)) {
				t.Errorf("notes, want one with %q:\n%s", tt.note, all)
			}
			if d := cmp.Diff(tt.sweep, n.Modules); d != "" {
				t.Errorf("swept node_modules (-want +got):\n%s", d)
			}
		})
	}
}

// sweep is the node_modules directory nm swept for names.
func sweep(nm string, names ...string) []protect.ModuleDir {
	return []protect.ModuleDir{{Path: nm, Names: names, Node: true}}
}

// TestNodeMissing: where node looks for a package a held script or
// package loads by name and the launch finds none (an optional
// dependency, try { require('x') } catch {}), and before the copy it
// finds, is swept for that name at the end: each node_modules from the
// script's directory up to the project's, but for those in a directory
// held whole (tools/, a package). A file require takes before the
// package's directory (legacy.json) is held instead.
func TestNodeMissing(t *testing.T) {
	project := files{
		"/r/hook.js":                       "try { require('opt') } catch {}\nrequire('dep')\nrequire('legacy')\n",
		"/r/node_modules/legacy.json":      "{}",
		"/r/node_modules/legacy/index.js":  "",
		"/r/tools/x.js":                    "require('@s/gone')\n",
		"/r/node_modules/dep/package.json": `{"optionalDependencies": {"native": "1"}}`,
		"/r/node_modules/dep/index.js":     "",
		"/r/web/hook.mjs":                  "import 'dep'\n",
	}
	n := ClaudeSettings("/r/.claude/settings.json", []byte(hook(`node "$CLAUDE_PROJECT_DIR"/hook.js`, "node tools/x.js", "cd web && node hook.mjs")), Project{Read: project.read, List: listOf(project)})
	want := []protect.ModuleDir{
		{Path: "/r/node_modules", Names: []string{"opt", "dep", "native", "legacy", "@s/gone"}, Node: true},
	}
	if d := cmp.Diff(want, n.Modules); d != "" {
		t.Errorf("swept node_modules (-want +got):\n%s", d)
	}
	// require takes legacy.json before the directory legacy/.
	if !slices.Contains(n.Files, "/r/node_modules/legacy.json") || slices.Contains(n.Dirs, "/r/node_modules/legacy") {
		t.Errorf("files %q, dirs %q: want node_modules/legacy.json held, not legacy/", n.Files, n.Dirs)
	}
}

// TestNodeDepsUnreadable: a package.json listed that cannot be read
// (too large) is said.
func TestNodeDepsUnreadable(t *testing.T) {
	project := files{"/r/tools/hook.js": "require('dep')\n", "/r/node_modules/dep/package.json": ""}
	read := func(p string) []byte {
		if strings.HasSuffix(p, "/package.json") {
			return nil
		}
		return project.read(p)
	}
	n := ClaudeSettings("/r/.claude/settings.json", []byte(hook("node tools/hook.js")), Project{Read: read, List: listOf(project)})
	if len(n.Notes) != 1 || !strings.Contains(n.Notes[0], "node_modules/dep/package.json cannot be read (over 1 MiB, or unreadable), so the packages node_modules/dep loads by name are not held") {
		t.Errorf("notes: %q", n.Notes)
	}
}

// TestNodeDepsNoPackage: a walk that holds no package reads no
// package.json and lists nothing for one.
func TestNodeDepsNoPackage(t *testing.T) {
	project := files{"/r/hook.js": "require('./lib')\nrequire('fs')\n", "/r/lib.js": "\n", "/r/node_modules/x/package.json": `{}`}
	var asked []string
	read := func(p string) []byte {
		asked = append(asked, p)
		return project.read(p)
	}
	list := func(d string) []string {
		asked = append(asked, d+"/")
		return listOf(project)(d)
	}
	ClaudeSettings("/r/.claude/settings.json", []byte(hook("node hook.js")), Project{Read: read, List: list})
	for _, p := range asked {
		if strings.Contains(p, "node_modules") {
			t.Errorf("read or listed %s with no package held", p)
		}
	}
}

// TestNodeDepsBounded: packages that depend on more packages than are
// followed hold so many, look up so many names, and say so once.
func TestNodeDepsBounded(t *testing.T) {
	for _, tt := range []struct {
		name      string
		installed bool
	}{{"installed", true}, {"not installed", false}} {
		t.Run(tt.name, func(t *testing.T) {
			// Sorted, the installed names come first.
			var deps []string
			project := files{"/r/tools/hook.js": "require('dep')\n"}
			for i := range 5000 {
				deps = append(deps, fmt.Sprintf(`"z%d": "1"`, i))
				if tt.installed && i < 400 {
					deps = append(deps, fmt.Sprintf(`"a%03d": "1"`, i))
					project[fmt.Sprintf("/r/node_modules/a%03d/package.json", i)] = `{"dependencies": {"dep": "1"}}`
				}
			}
			project["/r/node_modules/dep/package.json"] = `{"dependencies": {` + strings.Join(deps, ", ") + `}}`
			lists := 0
			list := func(d string) []string {
				lists++
				return listOf(project)(d)
			}
			n := ClaudeSettings("/r/.claude/settings.json", []byte(hook("node tools/hook.js")), Project{Read: project.read, List: list})
			want, note := 1+maxPackages, "depend on more packages than are held (256): node_modules/a255 and those found after it are not held"
			if !tt.installed {
				want, note = 2, "name more packages they depend on than are looked up (1024): z192 of node_modules/dep/package.json and those after it are not held"
			}
			if len(n.Dirs) != want {
				t.Errorf("%d dirs held, want %d", len(n.Dirs), want)
			}
			if lists > 3*4*maxPackages+8 {
				t.Errorf("%d directories listed", lists)
			}
			if len(n.Notes) != 1 || !strings.Contains(n.Notes[0], note) {
				t.Errorf("notes: %q", n.Notes)
			}
		})
	}
}

// TestNodeBinDeps: a package's command from node_modules/.bin (npx, an
// npm script's bare command) is a link into the package, which the
// launch holds; what the package depends on is held here.
func TestNodeBinDeps(t *testing.T) {
	project := files{
		"/r/package.json":                        `{"scripts": {"lint": "probe-lint --fix"}}`,
		"/r/node_modules/probe-cli/package.json": `{"dependencies": {"cli-dep": "1"}}`,
		"/r/node_modules/probe-cli/cli.js":       "",
		"/r/node_modules/@s/lint/package.json":   `{"dependencies": {"lint-dep": "1"}}`,
		"/r/node_modules/@s/lint/bin/lint.js":    "",
		"/r/node_modules/cli-dep/package.json":   `{}`,
		"/r/node_modules/lint-dep/package.json":  `{}`,
		"/r/node_modules/outside/package.json":   `{"dependencies": {"cli-dep": "1"}}`,
	}
	links := map[string]string{
		"/r/node_modules/.bin/probe-cli":  "../probe-cli/cli.js",
		"/r/node_modules/.bin/probe-lint": "../@s/lint/bin/lint.js",
		"/r/node_modules/.bin/up":         "../../../elsewhere/node_modules/outside/x.js",
		"/r/node_modules/.bin/abs":        "/r/node_modules/outside/x.js",
	}
	for _, tt := range []struct {
		name, cmd string
		dirs      []string
	}{
		{"npx", `npx probe-cli`, []string{"/r/node_modules/cli-dep"}},
		{"an npm script's command", `npm run lint`, []string{"/r/node_modules/lint-dep"}},
		{"a link out of the project", `npx up`, nil},
		{"an absolute link", `npx abs`, []string{"/r/node_modules/cli-dep"}},
		{"no link", `npx missing`, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			link := func(p string) string { return links[p] }
			n := ClaudeSettings("/r/.claude/settings.json", []byte(hook(tt.cmd)), Project{Read: project.read, List: listOf(project), Link: link})
			if d := cmp.Diff(tt.dirs, n.Dirs); d != "" {
				t.Errorf("dirs (-want +got):\n%s", d)
			}
			if len(n.Notes) != 0 {
				t.Errorf("notes: %q", n.Notes)
			}
		})
	}
}

// TestPackageOf: the package a file of node_modules lies in.
func TestPackageOf(t *testing.T) {
	for p, want := range map[string]string{
		"/r/node_modules/a/bin/x.js":                        "/r/node_modules/a",
		"/r/node_modules/@s/a/x.js":                         "/r/node_modules/@s/a",
		"/r/node_modules/a/node_modules/b/x.js":             "/r/node_modules/a/node_modules/b",
		"/r/node_modules/.pnpm/a@1/node_modules/a/bin/x.js": "/r/node_modules/.pnpm/a@1/node_modules/a",
		"/r/node_modules/a":                                 "",
		"/r/node_modules/@s/x.js":                           "",
		"/r/node_modules/.bin/x":                            "",
		"/r/lib/x.js":                                       "",
		"/r/node_modules/eslint/bin/eslint.js":              "/r/node_modules/eslint",
		"/r/web/node_modules/@scope/cli/dist/x.js":          "/r/web/node_modules/@scope/cli",
		"/r/node_modules/@scope":                            "",
	} {
		if got := PackageOf(p); got != want {
			t.Errorf("PackageOf(%q) = %q, want %q", p, got, want)
		}
	}
}

// TestNodePnpm: in pnpm's layout a package in node_modules is a link
// into node_modules/.pnpm, where its own dependencies are links beside
// it: node loads the package from where the link leads, and looks for
// what it loads from there; so the walk holds that directory, and
// follows its dependencies the same way. A link that leads out of the
// project, or round, holds nothing.
func TestNodePnpm(t *testing.T) {
	project := files{
		"/r/tools/hook.js": "require('dep')\nrequire('out')\nrequire('loop')\n",
		"/r/node_modules/.pnpm/dep@1.0.0/node_modules/dep/package.json": `{"dependencies": {"sub": "1"}}`,
		"/r/node_modules/.pnpm/sub@1.0.0/node_modules/sub/package.json": `{}`,
	}
	links := map[string]string{
		"/r/node_modules/dep":                              ".pnpm/dep@1.0.0/node_modules/dep",
		"/r/node_modules/.pnpm/dep@1.0.0/node_modules/sub": "../../sub@1.0.0/node_modules/sub",
		"/r/node_modules/out":                              "../../elsewhere/out",
		"/r/node_modules/loop":                             "loop2",
		"/r/node_modules/loop2":                            "loop",
	}
	n := ClaudeSettings("/r/.claude/settings.json", []byte(hook("node tools/hook.js")), Project{Read: project.read, List: listOf(project), Link: func(p string) string { return links[p] }})
	want := []string{"/r/tools", "/r/node_modules/.pnpm/dep@1.0.0/node_modules/dep", "/r/node_modules/.pnpm/sub@1.0.0/node_modules/sub"}
	if d := cmp.Diff(want, n.Dirs); d != "" {
		t.Errorf("dirs (-want +got):\n%s", d)
	}
}

// TestNodeImports: a specifier of the package's own "imports" map
// (#name) leads, through the nearest package.json, to a file of the
// package (read in turn) or to another package (held with what it
// depends on); every target of a conditional entry counts, and a
// pattern's * is filled in.
func TestNodeImports(t *testing.T) {
	project := files{
		"/r/package.json":                        `{"imports": {"#dep": "dep-impl", "#util/*": "./lib/*.js", "#cond": {"node": "cond-node", "default": ["./cond.js"]}, "#out": "../x.js"}}`,
		"/r/hook.js":                             "require('#dep')\nrequire('#util/a')\nimport('#cond')\nrequire('#out')\nrequire('#none')\n",
		"/r/lib/a.js":                            "require('#dep')\n",
		"/r/cond.js":                             "",
		"/r/node_modules/dep-impl/package.json":  `{}`,
		"/r/node_modules/cond-node/package.json": `{}`,
	}
	n := ClaudeSettings("/r/.claude/settings.json", []byte(hook(`node "$CLAUDE_PROJECT_DIR"/hook.js`)), Project{Read: project.read, List: listOf(project)})
	if d := cmp.Diff([]string{"/r/node_modules/dep-impl", "/r/node_modules/cond-node"}, n.Dirs); d != "" {
		t.Errorf("dirs (-want +got):\n%s", d)
	}
	for _, f := range []string{"/r/lib/a.js", "/r/cond.js"} {
		if !slices.Contains(n.Files, f) || !slices.Contains(n.Programs, f) {
			t.Errorf("files %q: want %s held", n.Files, f)
		}
	}
	if slices.Contains(n.Files, "/x.js") {
		t.Errorf("a target out of the package is held: %q", n.Files)
	}
}

// FuzzImportTargets: whatever a box writes into a package.json, the
// targets of its "imports" map are read without panic and bounded.
func FuzzImportTargets(f *testing.F) {
	f.Add([]byte(`{"imports": {"#a/*": {"node": ["./x/*.js", "p"]}, "#b": null}}`), "#a/y")
	f.Fuzz(func(t *testing.T, data []byte, spec string) {
		if ts := importTargets(data, spec); len(ts) > maxPackages {
			t.Fatalf("%d targets", len(ts))
		}
	})
}

// TestPackageMainOutOfPackage: a package held whole whose main leads out
// of its directory (node resolves "../" there as written) has that file
// held and followed too, whether the package is a directory a script
// loads or one node finds in node_modules; a main inside the package or
// outside the project adds nothing.
func TestPackageMainOutOfPackage(t *testing.T) {
	for _, tt := range []struct {
		name, hook string
		project    files
		held       []string
		notHeld    []string
	}{
		{"a dependency's main, then what it loads", "require('dep')\n", files{
			"/r/node_modules/dep/package.json": `{"main": "../../lib/evil.js"}`,
			"/r/lib/evil.js":                   "require('./more')\n",
			"/r/lib/more.js":                   "",
		}, []string{"/r/lib/evil.js", "/r/lib/more.js"}, nil},
		{"a directory's main, without its suffix", "require('../vendor/pkg')\n", files{
			"/r/vendor/pkg/package.json": `{"main": "../../lib/out"}`,
			"/r/lib/out.js":              "",
		}, []string{"/r/lib/out", "/r/lib/out.js"}, nil},
		{"an absolute main", "require('dep')\n", files{
			"/r/node_modules/dep/package.json": `{"main": "/r/lib/abs.js"}`,
		}, []string{"/r/lib/abs.js"}, nil},
		{"a main that leads to another package, and out of it", "require('dep')\n", files{
			"/r/node_modules/dep/package.json": `{"main": "../../pkgs/b"}`,
			"/r/pkgs/b/package.json":           `{"main": "../../tools/c.js"}`,
			"/r/tools/c.js":                    "",
		}, []string{"/r/pkgs/b/package.json", "/r/tools/c.js"}, nil},
		{"a main inside the package", "require('dep')\n", files{
			"/r/node_modules/dep/package.json": `{"main": "./lib/../m.js"}`,
		}, nil, []string{"/r/node_modules/dep/m.js"}},
		{"a main outside the project", "require('dep')\n", files{
			"/r/node_modules/dep/package.json": `{"main": "../../../elsewhere.js"}`,
		}, nil, []string{"/elsewhere.js"}},
		{"a main that is not a string", "require('dep')\n", files{
			"/r/node_modules/dep/package.json": `{"main": ["../../lib/x.js"]}`,
		}, nil, []string{"/r/lib/x.js"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.project["/r/tools/hook.js"] = tt.hook
			n := ClaudeSettings("/r/.claude/settings.json", []byte(hook("node tools/hook.js")), Project{Read: tt.project.read, List: listOf(tt.project)})
			for _, f := range tt.held {
				if !slices.Contains(n.Files, f) {
					t.Errorf("files lack %s: %q", f, n.Files)
				}
				if filepath.Ext(f) != ".json" && !slices.Contains(n.Programs, f) {
					t.Errorf("programs lack %s: %q", f, n.Programs)
				}
			}
			for _, f := range tt.notHeld {
				if slices.Contains(n.Files, f) {
					t.Errorf("files hold %s: %q", f, n.Files)
				}
			}
			if len(n.Notes) != 0 {
				t.Errorf("notes: %q", n.Notes)
			}
		})
	}
}
