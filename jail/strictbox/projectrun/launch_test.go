package projectrun

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// list names the files of fs directly in dir, or nil.
func (fs files) list(dir string) []string {
	var out []string
	for p := range fs {
		if filepath.Dir(p) == dir {
			out = append(out, filepath.Base(p))
		}
	}
	slices.Sort(out)
	return out
}

// TestLaunchers: a package manager's command that runs another one (uv
// run, npx, go run, cargo run, deno task) is followed into what it runs,
// compiles or reads, as the command itself would be; what cannot be
// followed is said and held wide.
func TestLaunchers(t *testing.T) {
	project := files{
		"/r/pyproject.toml": "[project]\nname = \"app\"\n[project.scripts]\napp-hook = \"app.hooks.cli:main\"\n" +
			"[tool.pdm.scripts]\ncheck = \"python tools/pdm_check.py\"\nlint = {cmd = [\"python\", \"lint/run.py\"]}\n" +
			"[tool.rye.scripts]\nhook = { call = \"ryetools.hook:main\" }\n" +
			"[tool.hatch.envs.default.scripts]\nhk = [\"python hatchtools/a.py\", \"sh hatchtools/b.sh\"]\n",
		"/r/Pipfile":                    "[scripts]\nhook = \"python pipenvtools/hook.py\"\n",
		"/r/deno.json":                  `{"tasks": {"hook": "deno run -A tasks/hook.ts", "all": {"command": "echo", "dependencies": ["hook"]}}}`,
		"/r/go.mod":                     "module example.com/m\n\ngo 1.21\n",
		"/r/cmd/hook/main.go":           "package main\n\nimport (\n\t\"fmt\"\n\t\"example.com/m/internal/util\"\n)\n\nfunc main() { fmt.Println(util.X) }\n",
		"/r/internal/util/util.go":      "package util\n\nimport \"example.com/m/internal/deep\"\n\nvar X = deep.Y\n",
		"/r/internal/deep/deep.go":      "package deep\n\nvar Y = 1\n",
		"/r/tools/gen.go":               "package main\n\nimport \"example.com/m/internal/util\"\n\nfunc main() { _ = util.X }\n",
		"/r/Cargo.toml":                 "[package]\nname = \"h\"\nbuild = \"tools/build.rs\"\n[dependencies]\nlocal = { path = \"crates/local\" }\n[[bin]]\nname = \"x\"\npath = \"bins/x.rs\"\n",
		"/r/crates/local/Cargo.toml":    "[package]\nname = \"local\"\n",
		"/r/web/package.json":           `{"scripts": {}}`,
		"/r/web/node_modules/.bin/tsx":  "",
		"/r/web/scripts/deep/x.ts":      "",
		"/r/sub/pyproject.toml":         "[project]\nname = \"sub\"\n",
		"/r/ws/Cargo.toml":              "[workspace]\nmembers = [\"a\", \"libs/*\"]\n",
		"/r/ws/a/Cargo.toml":            "[package]\nname = \"a\"\n",
		"/r/unparsed/Cargo.toml":        "[package\n",
		"/r/tools/pdm_check.py":         "",
		"/r/pipenvtools/hook.py":        "",
		"/r/hatchtools/b.sh":            "python3 hatchtools/c.py\n",
		"/r/srcapp/src/app/hooks/x.txt": "",
	}
	for _, tt := range []struct {
		name, cmd string
		dirs      []string // each among the dirs held whole
		files     []string // each among the files held
		note      string   // a part of the one note, or none
	}{
		{"uv run SCRIPT.py: python's, its directory", `uv run --with requests tools/hook.py --flag`, []string{"/r/tools"}, []string{"/r/tools/hook.py", "/r/pyproject.toml", "/r/setup.py", "/r/uv.lock"}, ""},
		{"uv run python -m", `uv run python -m tools.check`, []string{"/r/tools"}, []string{"/r/tools/check.py", "/r/tools/check/__main__.py"}, "Python starts the module path of the scripts it runs with the project's own directory"},
		{"uv run -m, --directory", `uv run --directory sub -m pkg.mod`, []string{"/r/sub", "/r/sub/pkg"}, []string{"/r/sub/pkg/mod.py", "/r/sub/pyproject.toml"}, ""},
		{"uv --project before run", `uv --directory tools run hook.py`, []string{"/r/tools"}, []string{"/r/tools/hook.py"}, ""},
		{"uv run an entry point of the project", `uv run app-hook`, []string{"/r/app/hooks", "/r/src/app/hooks"}, []string{"/r/app/hooks/cli.py", "/r/src/app/hooks/cli.py", "/r/pyproject.toml"}, ""},
		{"uv run a command of the environment: cannot tell", `uv run pytest -q`, nil, []string{"/r/.venv/bin/pytest"}, `uv runs pytest from the project's environment`},
		{"uv run a word it does not set", `uv run "$X"/hook.py`, nil, []string{"/r/hook.py"}, "a variable"},
		{"uv sync: it builds the project", `uv sync`, nil, []string{"/r/pyproject.toml", "/r/uv.lock"}, ""},
		{"poetry run", `poetry run python scripts/p.py`, []string{"/r/scripts"}, []string{"/r/scripts/p.py", "/r/pyproject.toml"}, ""},
		{"poetry -C", `poetry -C tools run python hook.py`, []string{"/r/tools"}, []string{"/r/tools/hook.py"}, ""},
		{"pipenv run: a script of Pipfile", `pipenv run hook`, []string{"/r/pipenvtools"}, []string{"/r/pipenvtools/hook.py", "/r/Pipfile"}, ""},
		{"pdm run: its scripts, a string and a cmd list", `pdm run check && pdm run lint`, []string{"/r/tools", "/r/lint"}, []string{"/r/tools/pdm_check.py", "/r/lint/run.py"}, ""},
		{"rye run: a call", `rye run hook`, []string{"/r/ryetools", "/r/src/ryetools"}, []string{"/r/ryetools/hook.py"}, ""},
		{"hatch run: a list of commands", `hatch run default:hk`, []string{"/r/hatchtools"}, []string{"/r/hatchtools/a.py", "/r/hatchtools/b.sh", "/r/hatchtools/c.py"}, ""},
		{"npx tsx: the bin and the script's directory", `cd web && npx tsx scripts/deep/x.ts`, []string{"/r/web/scripts/deep"}, []string{"/r/web/node_modules/.bin/tsx", "/r/web/scripts/deep/x.ts"}, ""},
		{"npx from a directory under the package", `cd web/scripts && npx --yes some-bin arg`, nil, []string{"/r/web/scripts/node_modules/.bin/some-bin", "/r/web/node_modules/.bin/some-bin"}, ""},
		{"npx -c", `npx -c 'node hooks/h.js'`, []string{"/r/hooks"}, []string{"/r/hooks/h.js"}, ""},
		{"npm exec, pnpm exec, pnpm dlx, yarn exec", `npm exec -- tsx a/x.ts; pnpm exec tsx b/x.ts; pnpm dlx tsx c/x.ts; yarn exec tsx d/x.ts`, []string{"/r/a", "/r/b", "/r/c", "/r/d"}, []string{"/r/node_modules/.bin/tsx", "/r/a/x.ts", "/r/d/x.ts"}, ""},
		{"yarn node", `yarn node y/x.js`, []string{"/r/y"}, []string{"/r/y/x.js"}, ""},
		{"bunx, bun x", `bunx tsx a/x.ts; bun x tsx b/x.ts`, []string{"/r/a", "/r/b"}, []string{"/r/node_modules/.bin/tsx"}, ""},
		{"bun run FILE is the file", `bun run hooks/x.ts`, []string{"/r/hooks"}, []string{"/r/hooks/x.ts"}, ""},
		{"deno task: deno.json's task and its dependencies", `deno task all`, []string{"/r/tasks"}, []string{"/r/deno.json", "/r/tasks/hook.ts"}, ""},
		{"go run ./pkg: the package and its imports in the module", `go run ./cmd/hook`, []string{"/r/cmd/hook", "/r/internal/util", "/r/internal/deep"}, []string{"/r/go.mod", "/r/go.sum"}, ""},
		{"go run by import path, build flags", `go run -tags x -ldflags=-s example.com/m/cmd/hook`, []string{"/r/cmd/hook", "/r/internal/util"}, nil, ""},
		{"go run FILE.go", `go run tools/gen.go -v`, []string{"/r/internal/util", "/r/internal/deep"}, []string{"/r/tools/gen.go"}, ""},
		{"go run -C", `go run -C cmd/hook .`, []string{"/r/cmd/hook"}, nil, ""},
		{"go run -exec", `go run -exec ./bin/runner.sh ./cmd/hook`, []string{"/r/cmd/hook"}, []string{"/r/bin/runner.sh"}, ""},
		{"go run .: the project's own directory", `go run .`, nil, []string{"/r/go.mod"}, "go run compiles every Go file"},
		{"go run a package outside the module", `go run golang.org/x/tools/cmd/stringer`, nil, nil, "cannot find in the project's module"},
		{"go run PKG@version: the module cache", `go run golang.org/x/tools/cmd/stringer@v0.1.0`, nil, nil, ""},
		{"go test: packages and patterns, its flags", `go test -run TestX ./cmd/hook ./internal/... -v`, []string{"/r/cmd/hook", "/r/internal/util", "/r/internal"}, nil, ""},
		{"go test ./... at the project's root", `go test ./...`, nil, nil, "go test compiles every Go file"},
		{"go test where it runs", `cd internal/util && go test`, []string{"/r/internal/util", "/r/internal/deep"}, []string{"/r/go.mod"}, ""},
		{"go generate: cannot tell", `go generate ./...`, nil, nil, "go generate runs"},
		{"cargo run: the crate, its build script, targets, path dependencies", `cargo run --bin x -- a`, []string{"/r/src", "/r/tools", "/r/bins", "/r/examples", "/r/crates/local/src"},
			[]string{"/r/Cargo.toml", "/r/build.rs", "/r/tools/build.rs", "/r/bins/x.rs", "/r/crates/local/Cargo.toml", "/r/crates/local/build.rs", "/r/.cargo/config.toml"}, ""},
		{"cargo +toolchain test --manifest-path", `cargo +nightly test --manifest-path crates/local/Cargo.toml`, []string{"/r/crates/local/src"}, []string{"/r/crates/local/build.rs"}, ""},
		{"cargo run in a workspace: members", `cd ws && cargo run`, []string{"/r/ws/a/src", "/r/ws/libs"}, []string{"/r/ws/a/build.rs", "/r/ws/.cargo/config.toml", "/r/.cargo/config.toml"}, ""},
		{"cargo: a manifest that does not parse", `cd unparsed && cargo r`, []string{"/r/unparsed", "/r/unparsed/src"}, nil, "does not parse"},
		{"npm --prefix DIR run, make -C DIR", `npm --prefix web run x; make -C tools`, nil, []string{"/r/web/package.json", "/r/tools/Makefile"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n := ClaudeSettings("/r/.claude/settings.json", []byte(hook(tt.cmd)), Project{Read: project.read, List: project.list, Home: "/home/u"})
			checkHolds(t, n, tt.files, tt.dirs)
			all := strings.Join(n.Notes, "\n")
			if tt.note == "" && all != "" || tt.note != "" && (len(n.Notes) != 1 || !strings.Contains(all, tt.note)) {
				t.Errorf("notes, want one with %q:\n%s", tt.note, all)
			}
		})
	}
}

// TestLaunchersNoList: without a way to list directories, go run's
// imports cannot be followed: said, and the package held still.
func TestLaunchersNoList(t *testing.T) {
	n := ShellPaths(`go run ./cmd/hook`, "/r", nil)
	_ = n
	w := newWalker("/r", "/r/.claude/settings.json", nil, Project{Read: files{"/r/go.mod": "module m\n"}.read})
	w.run(`go run ./cmd/hook`)
	got := w.names()
	if !slices.Contains(got.Dirs, "/r/cmd/hook") || len(got.Notes) != 1 || !strings.Contains(got.Notes[0], "cannot be listed") {
		t.Errorf("dirs %q, notes %q", got.Dirs, got.Notes)
	}
}
