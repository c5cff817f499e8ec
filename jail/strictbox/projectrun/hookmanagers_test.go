package projectrun

import (
	"slices"
	"strings"
	"testing"
)

// TestPreCommit: a local hook's entry and args are followed as a
// program pre-commit runs in the repository's root (a script hook's
// entry is a file of it); a pattern or a message is not; a hook
// repository given by path is held whole, one by URL is not.
func TestPreCommit(t *testing.T) {
	project := files{
		"/r/scripts/check.sh": "#!/bin/sh\n./scripts/lib.sh\n",
		"/r/scripts/lib.sh":   "",
		"/r/tools/lint.py":    "",
		"/r/Makefile":         "fmt:\n\t./tools/fmt.sh\n",
		"/r/tools/fmt.sh":     "",
	}
	cfg := `repos:
-   repo: https://github.com/pre-commit/pre-commit-hooks
    rev: v4.6.0
    hooks:
    -   id: trailing-whitespace
-   repo: ./vendor/hooks
    rev: v1
    hooks: [{id: mine}]
-   repo: local
    hooks:
    -   id: check
        name: check
        entry: scripts/check.sh
        language: script
    -   id: lint
        name: lint
        entry: python3 tools/lint.py --strict
        language: system
        args: [--config, lint.cfg]
    -   id: fmt
        entry: make fmt
        language: system
    -   id: no-todo
        entry: 'TODO'
        language: pygrep
    -   id: nope
        entry: ./scripts/never.sh is not allowed
        language: fail
`
	n := PreCommit("/r/.pre-commit-config.yaml", []byte(cfg), Project{Read: project.read, List: listOf(project)})
	checkHolds(t, n, []string{"/r/scripts/check.sh", "/r/scripts/lib.sh", "/r/tools/lint.py", "/r/lint.cfg", "/r/Makefile", "/r/tools/fmt.sh"}, []string{"/r/vendor/hooks"})
	for _, p := range slices.Concat(n.Files, n.Dirs) {
		if strings.Contains(p, "never") || strings.Contains(p, "TODO") || strings.Contains(p, "github") {
			t.Errorf("held %s, which pre-commit does not run from the repository", p)
		}
	}
	if n := PreCommit("/r/.pre-commit-config.yaml", []byte("repos: [unclosed"), Project{}); len(n.Files)+len(n.Dirs) != 0 {
		t.Errorf("a config that does not parse names %q %q", n.Files, n.Dirs)
	}
}

// TestLefthook: a hook's commands run in their root with lefthook's
// placeholders taken out, its scripts from both source directories by
// their runner, its jobs and groups, and the configs it extends; in
// YAML, TOML or JSON, from the root or .config/.
func TestLefthook(t *testing.T) {
	project := files{
		"/r/web/tools/lint.sh":                 "",
		"/r/.lefthook/pre-push/check.js":       "",
		"/r/.lefthook-local/pre-push/check.js": "",
		"/r/ci/extra.yml":                      "pre-commit:\n  commands:\n    more:\n      run: ./ci/more.sh\n",
		"/r/ci/more.sh":                        "",
		"/r/jobs/a.sh":                         "",
		"/r/jobs/b.sh":                         "",
	}
	yml := `extends:
  - ci/extra.yml
pre-commit:
  parallel: true
  commands:
    lint:
      root: web/
      glob: "*.js"
      run: ./tools/lint.sh {staged_files}
pre-push:
  scripts:
    "check.js":
      runner: node
  jobs:
    - run: ./jobs/a.sh
    - group:
        jobs:
          - run: sh jobs/b.sh {push_files}
not-a-hook:
  commands:
    x:
      run: ./never.sh
`
	for _, tt := range []struct{ path, data string }{
		{"/r/lefthook.yml", yml},
		{"/r/.config/lefthook.yml", yml},
	} {
		n := Lefthook(tt.path, []byte(tt.data), Project{Read: project.read, List: listOf(project)})
		checkHolds(t, n, []string{"/r/web/tools/lint.sh", "/r/.lefthook/pre-push/check.js", "/r/.lefthook-local/pre-push/check.js", "/r/ci/extra.yml", "/r/ci/more.sh", "/r/jobs/a.sh", "/r/jobs/b.sh"}, nil)
		for _, p := range n.Files {
			if strings.Contains(p, "never") || strings.Contains(p, "{") {
				t.Errorf("%s: held %s", tt.path, p)
			}
		}
	}
	toml := "[pre-commit.commands.lint]\nrun = \"./web/tools/lint.sh\"\n"
	if n := Lefthook("/r/lefthook.toml", []byte(toml), Project{Read: project.read}); !slices.Contains(n.Files, "/r/web/tools/lint.sh") {
		t.Errorf("TOML: %q", n.Files)
	}
	json := `{"pre-commit": {"commands": {"lint": {"run": "./web/tools/lint.sh"}}}}`
	if n := Lefthook("/r/lefthook.json", []byte(json), Project{Read: project.read}); !slices.Contains(n.Files, "/r/web/tools/lint.sh") {
		t.Errorf("JSON: %q", n.Files)
	}
}

// TestLefthookExtendsLoop: configs that extend each other, many times
// over, are each read once.
func TestLefthookExtendsLoop(t *testing.T) {
	many := "extends: [" + strings.Repeat("a.yml, b.yml, ", 500) + "a.yml]\npre-commit:\n  commands: {x: {run: ./x.sh}}\n"
	reads := 0
	read := func(p string) []byte {
		if strings.HasSuffix(p, ".yml") {
			reads++
		}
		return []byte(many)
	}
	n := Lefthook("/r/lefthook.yml", []byte(many), Project{Read: read})
	if reads > 2 {
		t.Errorf("read the extended configs %d times, want each once", reads)
	}
	if !slices.Contains(n.Files, "/r/x.sh") {
		t.Errorf("files %q lack /r/x.sh", n.Files)
	}
}
