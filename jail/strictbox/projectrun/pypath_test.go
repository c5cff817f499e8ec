package projectrun

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPyModules(t *testing.T) {
	for _, tt := range []struct {
		src  string
		want []string
	}{
		{"import json\nimport helpers\n", []string{"json", "helpers"}},
		{"import os.path, sys as system , re\n", []string{"os", "sys", "re"}},
		{"from util import run\nfrom a.b.c import (d,\n e)\n", []string{"util", "a"}},
		{"def f():\n    import lazy\ntry:\n\timport opt\nexcept ImportError:\n    pass\n", []string{"lazy", "opt"}},
		{"import x; import y  # import z\n", []string{"x", "y"}},
		{"from . import sib\nfrom .pkg import x\nfrom __future__ import annotations\n", []string{"__future__"}},
		{"m = __import__('dyn')\nimportlib.import_module(\"plug.in\")\nimport_module(name)\n", []string{"dyn", "plug"}},
		{"important = 1\nimporter.go()\nfromage = 2\n", nil},
		{"import 9bad, ok\n", []string{"ok"}},
	} {
		if got := pyModules([]byte(tt.src)); !slices.Equal(got, tt.want) {
			t.Errorf("pyModules(%q) = %q, want %q", tt.src, got, tt.want)
		}
	}
}

// TestPyPath0: a Python script at the project's root imports modules by
// name from the root, which is not held whole: each root entry that
// Python would take for a name it imports is held (a module's source,
// bytecode, extension and cached bytecode, a package whole), a module
// held is followed in turn, and the root is given as a directory whose
// new modules the end sweeps, with every name imported (those with
// nothing at the root too). Another root file stays the box's.
func TestPyPath0(t *testing.T) {
	project := files{
		"/r/hook.py":            "import json\nimport helpers\nfrom pkg.sub import x\nimport ext, comp\n",
		"/r/check":              "#!/usr/bin/env python3\nimport argparse\nfrom util import run\n",
		"/r/helpers.py":         "import deep\n",
		"/r/deep.py":            "x = 1\n",
		"/r/util.py":            "\n",
		"/r/main.py":            "import helpers\n",
		"/r/pkg/__init__.py":    "\n",
		"/r/tools/hook.py":      "import tool_only\n",
		"/r/ext.cpython-311.so": "",
		"/r/comp.pyc":           "",
		"/r/util/README":        "a namespace package's part, or no package at all\n",
	}
	list := func(dir string) []string {
		var out []string
		for p := range project {
			if filepath.Dir(p) == dir {
				out = append(out, filepath.Base(p))
			}
		}
		if dir == "/r/__pycache__" {
			out = append(out, "helpers.cpython-311.pyc", "main.cpython-311.pyc")
		}
		slices.Sort(out)
		return out
	}
	n := ClaudeSettings("/r/.claude/settings.json", []byte(hook(`python3 hook.py; "$CLAUDE_PROJECT_DIR"/check; python3 tools/hook.py`)), Project{Read: project.read, Home: "/home/u", List: list})
	if d := cmp.Diff([]string{"/r/pkg", "/r/util", "/r/tools"}, n.Dirs); d != "" {
		t.Errorf("dirs (-want +got):\n%s", d)
	}
	for _, f := range []string{"/r/hook.py", "/r/check", "/r/helpers.py", "/r/deep.py", "/r/util.py", "/r/ext.cpython-311.so", "/r/comp.pyc", "/r/__pycache__/helpers.cpython-311.pyc"} {
		if !slices.Contains(n.Files, f) {
			t.Errorf("files lack %s: %q", f, n.Files)
		}
	}
	for _, f := range []string{"/r/main.py", "/r/__pycache__/main.cpython-311.pyc", "/r/json.py", "/r/argparse.py", "/r/tool_only.py"} {
		if slices.Contains(n.Files, f) || slices.Contains(n.Programs, f) {
			t.Errorf("%s is held: %q %q", f, n.Files, n.Programs)
		}
	}
	if len(n.Modules) != 1 || n.Modules[0].Path != "/r" {
		t.Fatalf("modules: %+v", n.Modules)
	}
	if d := cmp.Diff([]string{"json", "helpers", "deep", "pkg", "ext", "comp", "argparse", "util"}, n.Modules[0].Names); d != "" {
		t.Errorf("module names (-want +got):\n%s", d)
	}
	if all := strings.Join(n.Notes, "\n"); len(n.Notes) != 1 || !strings.Contains(all, "Python starts the module path") || !strings.Contains(all, "json, helpers") {
		t.Errorf("notes: %q", n.Notes)
	}
}

// TestPyPath0Program: an MCP server a host client starts as python3
// server.py, or python3 -m server, from the project's own directory
// imports by name from it as a hook does.
func TestPyPath0Program(t *testing.T) {
	project := files{"/r/server.py": "import helpers\n", "/r/helpers.py": "import json\n"}
	pr := Project{Read: project.read, List: func(string) []string { return nil }}
	for _, argv := range [][]string{{"python3", "server.py"}, {"python3", "-m", "server"}} {
		n := Program("/r/.mcp.json", argv, "/r", "/r", pr)
		if !slices.Contains(n.Files, "/r/helpers.py") {
			t.Errorf("%q: files lack helpers.py: %q", argv, n.Files)
		}
		if len(n.Modules) != 1 || !slices.Equal(n.Modules[0].Names, []string{"helpers", "json"}) {
			t.Errorf("%q: modules %+v", argv, n.Modules)
		}
	}
}

func TestNpmName(t *testing.T) {
	for spec, want := range map[string]string{
		"dep": "dep", "dep/lib/x.js": "dep", "@scope/pkg": "@scope/pkg", "@scope/pkg/sub": "@scope/pkg",
		"fs": "", "node:fs": "", "fs/promises": "", "npm:dep": "", "https://x/y.js": "", "./x": "", "../x": "", "/abs": "", "#internal": "", "@scope": "", "": "",
	} {
		if got := npmName(spec); got != want {
			t.Errorf("npmName(%q) = %q, want %q", spec, got, want)
		}
	}
}

// TestNodePackages: a script node runs that requires or imports a
// package by name holds the first node_modules/NAME found from its
// directory up to the project's own, whole.
func TestNodePackages(t *testing.T) {
	project := files{
		"/r/hook.js":                                "require('dep').run()\nconst fs = require('node:fs')\n",
		"/r/tools/check.mjs":                        "import { run } from '@scope/esdep/sub.js'\nimport 'near'\n",
		"/r/node_modules/dep/package.json":          "{}",
		"/r/node_modules/@scope/esdep/package.json": "{}",
		"/r/node_modules/near/package.json":         "{}",
		"/r/tools/node_modules/near/package.json":   "{}",
	}
	list := func(dir string) []string {
		var out []string
		for p := range project {
			if filepath.Dir(p) == dir {
				out = append(out, filepath.Base(p))
			}
		}
		return out
	}
	n := ClaudeSettings("/r/.claude/settings.json", []byte(hook(`node hook.js; node tools/check.mjs`)), Project{Read: project.read, List: list})
	if d := cmp.Diff([]string{"/r/node_modules/dep", "/r/tools", "/r/node_modules/@scope/esdep", "/r/tools/node_modules/near"}, n.Dirs); d != "" {
		t.Errorf("dirs (-want +got):\n%s", d)
	}
}

// TestPyPath0Inline: python3 -c CODE run in the project's own directory
// imports by name from it too.
func TestPyPath0Inline(t *testing.T) {
	project := files{"/r/helpers.py": "\n"}
	n := ClaudeSettings("/r/.claude/settings.json", []byte(hook(`python3 -c 'import helpers, json; helpers.run()'`)), Project{Read: project.read, List: func(string) []string { return nil }})
	if !slices.Contains(n.Files, "/r/helpers.py") {
		t.Errorf("files lack helpers.py: %q", n.Files)
	}
	if len(n.Modules) != 1 || !slices.Equal(n.Modules[0].Names, []string{"helpers", "json"}) {
		t.Errorf("modules %+v", n.Modules)
	}
}
