package projectrun

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aisan-dev/aisan/jail/strictbox/protect"
)

// FuzzProjectFiles: whatever a box writes into a project file, each
// reader returns absolute clean paths and never panics.
func FuzzProjectFiles(f *testing.F) {
	f.Add([]byte(`{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"sh \"$CLAUDE_PROJECT_DIR\"/x.sh -c 'a; ./b'"}]}]},"statusLine":{"command":"./s"}}`))
	f.Add([]byte(`{"version":"2.0.0","tasks":[{"type":"shell","command":"./t.sh","args":["${workspaceFolder}/u"],"runOptions":{"runOn":"folderOpen"}}]}`))
	f.Add([]byte(`{"initializeCommand":["./init.sh","x"]}`))
	f.Add([]byte(`{"hooks":{"Stop":[{"hooks":[{"command":"cd sub && npm run x; make -C b t; node -e 'require(\"./y\")'"}]}]},"scripts":{"x":"cd .. && ./z.sh"}}`))
	f.Add([]byte("all:\n\t./gen.sh $$X $(Y)\ninclude a.mk\n"))
	f.Add([]byte(`{"tasks":{"tasks":[{"label":"a","dependsOn":["b",{"task":"c"}],"runOptions":{"runOn":"folderOpen"}},{"label":"b","type":"npm","script":"w","path":"web"},{"label":"c","command":"x","options":{"cwd":"${env:X}"}}]}}`))
	f.Add([]byte("[hooks]\nStop = [{hooks = [{type = \"command\", command = \"./h.sh\"}]}]\n"))
	f.Add([]byte(`{"hooks":{"Stop":[{"hooks":[{"command":"go run ./cmd/x && go test ./... && cargo run --bin b && uv run -m a.b && poetry run h && npx tsx s.ts && deno task t && bun run x.ts"}]}]}}`))
	f.Add([]byte(`{"hooks":{"Stop":[{"hooks":[{"command":"flock -w 5 . -c './a; git -c alias.x=\"!./b\" x' && script -qc ./c /dev/null && watch -x ./d && parallel ./e ::: 1 && direnv exec s ./f && pytest -p g t/h.py && GIT_CONFIG_KEY_0=core.hooksPath GIT_CONFIG_VALUE_0=i git -c include.path=j.cfg status"}]}]}}`))
	f.Add([]byte("module example.com/m\n\nimport (\n\t\"example.com/m/internal/u\"\n)\n[package]\nbuild = \"b.rs\"\n[workspace]\nmembers = [\"a/*\"]\n"))
	f.Add([]byte(`{"hooks":{"Stop":[{"hooks":[{"command":".venv/bin/python h.py; npx x; uv run y.py"}]}]}}`))
	f.Add([]byte(`{"hooks":{"Stop":[{"hooks":[{"command":"perl -I.. -Ilib x.pl; ruby -r ../p.rb -I/ y.rb; node -r ./a --import=dep --require ../b z.js; NODE_OPTIONS='-r ./c --import=@s/d' node w.js"}]}]}}`))
	f.Add([]byte(`{"hooks":{"Stop":[{"hooks":[{"command":"npm ci && yarn && pnpm i && bun install"}]}]},"scripts":{"preinstall":"./p.sh"},"dependencies":{"a":"file:..","b":"link:/","c":"../../x"},"workspaces":["w/*"]}`))
	f.Add([]byte(`{"hooks":{"Stop":[{"hooks":[{"command":"cd a && rake -f ../R; bundle exec nox -f x.py; mvn -f=/p; ./gradlew -p ..; python3 -m pip install -e .. -r r.txt; uv sync; tox"}]}]}}`))
	f.Add([]byte(`{"hooks":{"Stop":[{"hooks":[{"command":"cd w && npx eslint -c ../c.js . && prettier --config=/x -w . && vitest --root .. run"}]}]}}`))
	f.Add([]byte("repos:\n- repo: local\n  hooks:\n  - {id: a, entry: 'sh ./x.sh', language: system, args: [../y]}\n  - {id: b, entry: z.sh, language: script}\n- repo: ../v\n"))
	f.Add([]byte("extends: [../e.yml, x.yml]\nsource_dir: ../s\npre-commit:\n  commands: {a: {run: './a {files}', root: ..}}\n  scripts: {'../b.sh': {runner: 'bash -e'}}\n  jobs: [{group: {jobs: [{script: c.js, runner: node}]}}]\n"))
	f.Add([]byte(`{"hooks":{"Stop":[{"hooks":[{"command":"pnpm i"}]}]},"workspaces":{"packages":["a/*","!a/b","../x","c/**/d"]},"packages":["/y","*"]}`))
	f.Add([]byte(`{"hooks":{"Stop":[{"hooks":[{"command":"mkdocs build -f m.yml; mypy --config-file x.ini; pylint --rcfile=r; sphinx-build -M html ../d o"}]}]},"hooks":["../h.py"],"plugins":"a.b, ./c.py, [d.e]"}`))
	f.Add([]byte(`{"hooks":{"Stop":[{"hooks":[{"command":"composer -d .. install && composer run x"}]}]},"autoload":{"psr-4":{"A\\":["../s",""]}},"scripts":{"x":["@y","@php ../p.php","A\\B::c"],"y":"v"},"config":{"vendor-dir":"../v"},"packages":[{"type":"composer-plugin","install-path":"../../x"}]}`))
	f.Add([]byte("{\"hooks\":{\"Stop\":[{\"hooks\":[{\"command\":\"terraform -chdir=.. validate && tofu plan -var-file=../v\"}]}]}}\nsource = \"../../m\"\n  program = [\"sh\", \"${path.module}/../x.sh\"]\ncommand = \"${path.root}/y\"\n"))
	f.Add([]byte("{\"hooks\":{\"Stop\":[{\"hooks\":[{\"command\":\"task -d .. lint && poe -C ../x fmt\"}]}]}}\nincludes: {a: ../t, b: {taskfile: ../../u.yml, dir: ..}}\ntasks: {lint: {dir: .., cmds: [../l.sh, {cmd: x}]}}\n[tool.poe.tasks]\ns = {script = \"a.b:c\", cwd = \"..\"}\n"))
	f.Add([]byte("[env]\nNODE_OPTIONS = \"-r ../x.js\"\nPATH = \"../b:{{env.PATH}}\"\n_.source = [\"../s.sh\", {path = \"{{config_root}}/../t.sh\"}]\n_.path = \"..\"\n[hooks]\nenter = [{script = \"cd .. && ./e.sh\"}]\n[tools]\nnode = \"path:../n\"\n[tasks.a]\nrun = [\"mise run b\"]\ndir = \"..\"\n"))
	readers := map[string]func(string, []byte, Project) Names{
		"/r/.claude/settings.json":    ClaudeSettings,
		"/r/.codex/hooks.json":        CodexHooks,
		"/r/.codex/config.toml":       CodexHooks,
		"/r/.vscode/tasks.json":       VSCodeTasks,
		"/r/.devcontainer.json":       Devcontainer,
		"/r/p.code-workspace":         VSCodeWorkspace,
		"/r/.pre-commit-config.yaml":  PreCommit,
		"/r/lefthook.yml":             Lefthook,
		"/r/.config/lefthook.toml":    Lefthook,
		"/r/lefthook.json":            Lefthook,
		"/r/.config/mise/config.toml": Mise,
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// Whatever it names, the box may have written too: the
		// package.json and makefiles it reads hold the same bytes.
		same := func(string) []byte { return data }
		// And every directory holds Go files and a terraform configuration of
		// those bytes (go run, terraform plan).
		list := func(string) []string { return []string{"main.go", "x.go", "Cargo.toml", "main.tf"} }
		// Its environment's distributions and its .bin links are its too.
		dirs := func(string) []string { return []string{"a-1.dist-info", string(data) + ".dist-info"} }
		link := func(string) string { return string(data) }
		for path, read := range readers {
			n := read(path, data, Project{Read: same, Home: "/home/u", List: list, Dirs: dirs, Link: link})
			for _, p := range slices.Concat(n.Files, n.Dirs) {
				if !filepath.IsAbs(p) || filepath.Clean(p) != p {
					t.Fatalf("%s: %q is not absolute and clean", path, p)
				}
			}
			for _, d := range n.Dirs {
				if d == "/r" || !strings.HasPrefix(d, "/r/") {
					t.Fatalf("%s: holds %q whole, which is not below the project", path, d)
				}
			}
		}
		for _, p := range ShellPaths(string(data), "/r", map[string]string{"CLAUDE_PROJECT_DIR": "/r"}) {
			if !filepath.IsAbs(p) {
				t.Fatalf("ShellPaths: %q is not absolute", p)
			}
		}
	})
}

// FuzzPackageDeps: whatever a package.json holds, the names it gives
// are package names, each once, that lie in the node_modules they are
// looked up in.
func FuzzPackageDeps(f *testing.F) {
	f.Add([]byte(`{"dependencies": {"a": "1", "@s/b": "1"}, "optionalDependencies": {"a": "2"}, "peerDependencies": {"../c": "1", "fs": "1"}}`))
	f.Add([]byte(`{"dependencies": []}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		deps, _ := packageDeps(data)
		seen := map[string]bool{}
		for _, d := range deps {
			p := filepath.Join("/r/node_modules", d)
			if seen[d] || npmName(d) != d || !strings.HasPrefix(p, "/r/node_modules/") || strings.Count(p[len("/r/node_modules/"):], "/") > 1 {
				t.Fatalf("%q: not a package name, or given twice", d)
			}
			seen[d] = true
		}
	})
}

// FuzzSiteFiles: whatever a box writes into a pyvenv.cfg, a METADATA
// or a distribution's name, what is read of them names no path.
func FuzzSiteFiles(f *testing.F) {
	f.Add([]byte("version = 3.11.7\nRequires-Dist: a-b (>=1); extra == \"x\"\nRequires-Dist: ../c\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if v := venvVersion(data); v != "" && (strings.Count(v, ".") != 1 || strings.ContainsAny(v, "/ ")) {
			t.Fatalf("version %q", v)
		}
		for _, n := range requiresDist(data) {
			if n == "" || strings.ContainsAny(n, "/\\ \n") || strings.Contains(n, "..") {
				t.Fatalf("distribution name %q", n)
			}
			if d := distName(n); strings.ContainsAny(d, "/-.") {
				t.Fatalf("distName(%q) = %q", n, d)
			}
		}
	})
}

// FuzzEditable: whatever a box writes into a venv's .pth file or an
// editable install's finder, what the walk takes from them lies in the
// project (never the venv's outside, never a path that climbs out) and
// names a module Python could import.
func FuzzEditable(f *testing.F) {
	f.Add([]byte("/r/src\n# c\nimport os\n../../../../lib\nMAPPING: dict[str, str] = {'a': '/r/pkgs/a', 'b': '/etc/b'}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		w := &walker{root: "/r", read: func(string) []byte { return data }, list: func(string) []string { return []string{} }}
		s := &pySite{dir: "/r/.venv/lib/python3.11/site-packages", files: []string{"_p.pth", "__editable___p_1_0_finder.py"}}
		w.editable(s)
		for _, d := range s.paths {
			if !within(d, "/r") || filepath.Clean(d) != d {
				t.Fatalf(".pth path %q", d)
			}
		}
		for m, p := range s.mapping {
			if !protect.PyName(m) || !within(p, "/r") || p == "/r" || filepath.Clean(p) != p {
				t.Fatalf("mapping %q: %q", m, p)
			}
		}
	})
}
