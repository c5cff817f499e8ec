package projectrun

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLoadsFrom: a script an interpreter runs loads code from beside it
// (Python's sys.path[0], node's ./ requires, require_relative...), so its
// directory is held whole; the project's own directory is said instead.
func TestLoadsFrom(t *testing.T) {
	project := files{
		"/r/bin/check":   "#!/usr/bin/env python3\nimport util\n",
		"/r/bin/pinned":  "#!/usr/bin/python3.11 -I\nimport util\n",
		"/r/bin/js":      "#!/usr/bin/env -S node --no-warnings\nrequire('./lib')\n",
		"/r/bin/plain":   "#!/usr/bin/awk -f\n",
		"/r/bin/wrap.sh": "#!/bin/sh\nexec python3 ../lib/run.py\n",
	}
	for _, tt := range []struct {
		name, cmd string
		dirs      []string
		files     []string // each among the files held
		note      string   // a part of the one note, or none
	}{
		{"python3 SCRIPT", `python3 tools/hook.py`, []string{"/r/tools"}, []string{"/r/tools/hook.py"}, ""},
		{"a version, options with values", `python3.12 -X dev -W ignore -u "$CLAUDE_PROJECT_DIR"/tools/hook.py --flag x`, []string{"/r/tools"}, []string{"/r/dev", "/r/ignore", "/r/tools/hook.py", "/r/x"}, ""},
		{"after a cd, through a wrapper", `cd tools && env A=1 timeout 5 python3 hook.py`, []string{"/r/tools"}, []string{"/r/tools/hook.py"}, ""},
		{"-m: the package, and the directory it runs in", `cd src && python3 -m app.main`, []string{"/r/src", "/r/src/app"}, []string{"/r/src/app/main.py", "/r/src/app/main/__main__.py"}, ""},
		{"-m from the project's own directory", `python3 -m tools.hook`, []string{"/r/tools"}, []string{"/r/tools/hook.py"}, "Python starts the module path of the scripts it runs with the project's own directory"},
		{"a script at the project's root", `python3 hook.py`, nil, []string{"/r/hook.py"}, "Python starts the module path of the scripts it runs with the project's own directory"},
		{"node at the project's root", `node hook.js`, nil, []string{"/r/hook.js"}, "here the project's own directory"},
		{"node, a preload", `node -r ./pre.js --no-warnings scripts/hook.js`, []string{"/r/scripts"}, []string{"/r/pre.js", "/r/scripts/hook.js"}, ""},
		{"deno run, tsx, bun, ruby, perl, php", `deno run -A d/x.ts; tsx t/x.ts; bun b/x.ts; ruby -I lib rb/x.rb; perl -Ilib pl/x.pl; php ph/x.php`,
			[]string{"/r/d", "/r/t", "/r/b", "/r/lib", "/r/rb", "/r/pl", "/r/ph"}, []string{"/r/d/x.ts", "/r/rb/x.rb"}, ""},
		{"subcommands of deno and bun run no script", `deno task build; deno fmt; bun install; bun x prettier`, nil, []string{"/r/deno.json", "/r/package.json", "/r/node_modules/.bin/prettier"}, ""},
		{"by its #! line: env, a pinned version, env -S", `./bin/check; bin/pinned; ./bin/js`, []string{"/r/bin"}, []string{"/r/bin/check", "/r/bin/pinned", "/r/bin/js"}, ""},
		{"a shell script that runs one", `cd bin && ./wrap.sh`, []string{"/r/lib"}, []string{"/r/bin/wrap.sh", "/r/lib/run.py"}, ""},
		{"not a loader: awk, lua", `./bin/plain; lua l/x.lua`, nil, []string{"/r/bin/plain", "/r/l/x.lua"}, ""},
		{"outside the project: nothing to hold", `python3 /opt/tool/hook.py; node ~/bin/n.js`, nil, []string{"/opt/tool/hook.py", "/home/u/bin/n.js"}, ""},
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
			all := strings.Join(n.Notes, "\n")
			if tt.note == "" && all != "" || tt.note != "" && (len(n.Notes) != 1 || !strings.Contains(all, tt.note)) {
				t.Errorf("notes, want one with %q:\n%s", tt.note, all)
			}
		})
	}
}

func TestShebang(t *testing.T) {
	for in, want := range map[string]string{
		"#!/usr/bin/env python3\n":        "python3",
		"#!/usr/bin/env -S node -r x\n":   "node",
		"#! /usr/bin/python3.11 -I\nx":    "python3.11",
		"#!/bin/bash":                     "bash",
		"#!\n":                            "",
		"import os\n":                     "",
		"#!/usr/bin/env\n":                "",
		"\n#!/usr/bin/env python3\nx = 1": "",
	} {
		if got := shebang([]byte(in)); got != want {
			t.Errorf("shebang(%q) = %q, want %q", in, got, want)
		}
	}
	for name, want := range map[string]bool{"python3": true, "python3.12": true, "pypy3": true, "perl5.36": true, "nodejs": true, "ts-node": true, "lua": false, "awk": false, "sh": false} {
		if _, got := loaderOf(name); got != want {
			t.Errorf("loaderOf(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestProgram: a program an MCP file starts (argv, no shell) is read as
// a hook's command is: a shell script's sources, the directory a python
// script loads from.
func TestProgram(t *testing.T) {
	project := files{"/r/tools/mcp.sh": "#!/bin/sh\n. \"$(dirname \"$0\")/lib.sh\"\nexec python3 srv/main.py\n"}
	for _, tt := range []struct {
		name  string
		argv  []string
		dir   string
		dirs  []string
		files []string
		note  string
	}{
		{"python3 SCRIPT", []string{"python3", "tools/server.py", "--port", "0"}, "/r", []string{"/r/tools"}, []string{"/r/tools/server.py"}, ""},
		{"a shell script: its sources, what it runs", []string{"sh", "tools/mcp.sh"}, "/r", []string{"/r/srv"}, []string{"/r/tools/mcp.sh", "/r/tools/lib.sh", "/r/srv/main.py"}, ""},
		{"a program by its path, in its cwd", []string{"./mcp.sh"}, "/r/tools", []string{"/r/tools/srv"}, []string{"/r/tools/mcp.sh", "/r/tools/lib.sh"}, ""},
		{"a package runner: its words are data", []string{"npx", "-y", "@scope/server", "${HOME}/data"}, "/r", nil, []string{"/r/@scope/server"}, ""},
		{"the client's variable in a script's path", []string{"node", "${PROJECT}/srv/x.js"}, "/r", nil, []string{"/r/srv/x.js"}, "a word holds a variable"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n := Program("/r/.mcp.json", tt.argv, tt.dir, "/r", Project{Read: project.read, Home: "/home/u"})
			if d := cmp.Diff(tt.dirs, n.Dirs); d != "" {
				t.Errorf("dirs (-want +got):\n%s", d)
			}
			for _, f := range tt.files {
				if !strings.Contains(" "+strings.Join(n.Files, " ")+" ", " "+f+" ") {
					t.Errorf("files lack %s: %q", f, n.Files)
				}
			}
			all := strings.Join(n.Notes, "\n")
			if tt.note == "" && all != "" || tt.note != "" && !strings.Contains(all, tt.note) {
				t.Errorf("notes, want %q:\n%s", tt.note, all)
			}
		})
	}
}

// TestLoaderOptions: an interpreter's options that make it load code
// besides the script count as the script does: a module directory
// (perl and ruby -I, joined or not) is held whole, a module loaded first
// (node -r, --require=, --import, bun --preload, ruby -r, NODE_OPTIONS)
// is held and followed into what it loads, or, named as a package, the
// package node finds is held whole.
func TestLoaderOptions(t *testing.T) {
	project := files{
		"/r/tools/hook.js":                 "",
		"/r/tools/x.pl":                    "",
		"/r/tools/x.rb":                    "",
		"/r/lib/pre.js":                    "require('../more/m.js')\n",
		"/r/lib/pre.rb":                    "require_relative '../more/r'\n",
		"/r/more/m.js":                     "",
		"/r/node_modules/dep/package.json": `{}`,
	}
	for _, tt := range []struct {
		name, cmd string
		dirs      []string
		files     []string
	}{
		{"perl -Ilib", `perl -Ilib tools/x.pl`, []string{"/r/lib", "/r/tools"}, nil},
		{"perl -I lib", `perl -I lib tools/x.pl`, []string{"/r/lib", "/r/tools"}, nil},
		{"ruby -Ilib and -r ./lib/pre.rb", `ruby -Ilib -r ./lib/pre.rb tools/x.rb`, []string{"/r/lib", "/r/tools"}, []string{"/r/lib/pre.rb", "/r/more/r.rb"}},
		{"node -r, followed", `node -r ./lib/pre.js tools/hook.js`, []string{"/r/tools"}, []string{"/r/lib/pre.js", "/r/more/m.js"}},
		{"node --require=", `node --require=./lib/pre.js tools/hook.js`, []string{"/r/tools"}, []string{"/r/lib/pre.js", "/r/more/m.js"}},
		{"node --import a package", `node --import dep tools/hook.js`, []string{"/r/node_modules/dep", "/r/tools"}, nil},
		{"bun --preload", `bun --preload ./lib/pre.js tools/hook.js`, []string{"/r/tools"}, []string{"/r/lib/pre.js", "/r/more/m.js"}},
		{"NODE_OPTIONS, both forms", `NODE_OPTIONS="--require ./lib/pre.js --import=dep --max-old-space-size=4096" node tools/hook.js`, []string{"/r/node_modules/dep", "/r/tools"}, []string{"/r/lib/pre.js", "/r/more/m.js"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n := ClaudeSettings("/r/.claude/settings.json", []byte(hook(tt.cmd)), Project{Read: project.read, List: listOf(project), Home: "/home/u"})
			if d := cmp.Diff(tt.dirs, n.Dirs); d != "" {
				t.Errorf("dirs (-want +got):\n%s", d)
			}
			for _, f := range tt.files {
				if !slices.Contains(n.Files, f) || !slices.Contains(n.Programs, f) {
					t.Errorf("files or programs lack %s: %q, %q", f, n.Files, n.Programs)
				}
			}
			if len(n.Notes) != 0 {
				t.Errorf("notes: %q", n.Notes)
			}
		})
	}
}

// TestInstallWorkspaces: an install runs each workspace's install
// scripts too, whether the package names them as npm does, as Yarn's
// {"packages": [...]} or in pnpm-workspace.yaml; a pattern's * matches
// a directory of the project, ! leaves one out, ** holds its directory
// whole.
func TestInstallWorkspaces(t *testing.T) {
	ws := files{
		"/r/packages/a/package.json":   `{"scripts": {"postinstall": "node ./setup.js"}}`,
		"/r/packages/b/package.json":   `{"scripts": {"prepare": "./build.sh"}, "dependencies": {"c": "file:../../vendor/c"}}`,
		"/r/packages/off/package.json": `{"scripts": {"postinstall": "./never.sh"}}`,
		"/r/apps/web/package.json":     `{"scripts": {"preinstall": "./pre.sh"}}`,
	}
	dirsOf := func(dir string) []string {
		var out []string
		for p := range ws {
			if rel, ok := strings.CutPrefix(p, dir+"/"); ok && strings.Count(rel, "/") == 1 {
				out = append(out, strings.Split(rel, "/")[0])
			}
		}
		return out
	}
	for _, tt := range []struct{ name, root, pnpm string }{
		{"npm", `{"workspaces": ["packages/*", "!packages/off", "apps/web", "tools/**"]}`, ""},
		{"yarn", `{"workspaces": {"packages": ["packages/*", "!packages/off", "apps/web", "tools/**"]}}`, ""},
		{"pnpm", `{}`, "packages:\n  - 'packages/*'\n  - '!packages/off'\n  - apps/web\n  - 'tools/**'\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			project := files{"/r/package.json": tt.root}
			maps.Copy(project, ws)
			if tt.pnpm != "" {
				project["/r/pnpm-workspace.yaml"] = tt.pnpm
			}
			n := ClaudeSettings("/r/.claude/settings.json", []byte(hook("npm install")), Project{Read: project.read, Dirs: dirsOf})
			checkHolds(t, n, []string{"/r/packages/a/setup.js", "/r/packages/b/build.sh", "/r/apps/web/pre.sh", "/r/packages/a/package.json"}, []string{"/r/vendor/c", "/r/tools"})
			if slices.Contains(n.Files, "/r/packages/off/never.sh") {
				t.Errorf("followed a workspace a ! pattern leaves out: %q", n.Files)
			}
			if len(n.Notes) != 0 {
				t.Errorf("notes: %q", n.Notes)
			}
		})
	}
}

// TestInstallScripts: an install (npm install and ci, pnpm i, yarn
// alone, bun install) runs the install scripts of the package.json it
// finds: what they run is followed, the lock files that say where each
// package comes from are held, and a dependency in the project (file:,
// link:, a path) is held whole.
func TestInstallScripts(t *testing.T) {
	pj := `{"scripts": {"preinstall": "./pre.sh", "postinstall": "./post.sh", "prepare": "./prep.sh", "lint": "./lint.sh"},
		"dependencies": {"local": "file:./vendor/local", "reg": "^1.0.0", "out": "file:../../elsewhere"},
		"devDependencies": {"linked": "link:packages/linked"}}`
	for _, tt := range []struct {
		name, cmd string
		project   files
		note      string
	}{
		{"npm install", `npm install --offline`, nil, ""},
		{"npm ci in a subdirectory", `cd web && npm ci`, nil, ""},
		{"pnpm i", `pnpm i --frozen-lockfile`, nil, ""},
		{"yarn alone", `yarn`, nil, ""},
		{"bun install", `bun install`, nil, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			project := tt.project
			if project == nil {
				project = files{"/r/package.json": pj}
			}
			n := ClaudeSettings("/r/.claude/settings.json", []byte(hook(tt.cmd)), Project{Read: project.read, Home: "/home/u"})
			for _, p := range []string{"/r/pre.sh", "/r/post.sh", "/r/prep.sh"} {
				if !slices.Contains(n.Programs, p) {
					t.Errorf("programs lack %s: %q", p, n.Programs)
				}
			}
			if slices.Contains(n.Programs, "/r/lint.sh") {
				t.Errorf("programs hold a script an install does not run: %q", n.Programs)
			}
			for _, f := range []string{"/r/package.json", "/r/package-lock.json", "/r/yarn.lock", "/r/pnpm-lock.yaml"} {
				if !slices.Contains(n.Files, f) {
					t.Errorf("files lack %s: %q", f, n.Files)
				}
			}
			if d := cmp.Diff([]string{"/r/vendor/local", "/r/packages/linked"}, n.Dirs); d != "" {
				t.Errorf("dirs (-want +got):\n%s", d)
			}
			all := strings.Join(n.Notes, "\n")
			if tt.note == "" && all != "" || tt.note != "" && (len(n.Notes) != 1 || !strings.Contains(all, tt.note)) {
				t.Errorf("notes, want one with %q:\n%s", tt.note, all)
			}
		})
	}
}
