package strictbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/strictbox/gitpin"
	"github.com/aisan-dev/aisan/jail/strictbox/protect"
)

// TestCodexPreferences: the model settings pass, providers and anything
// else do not.
func TestCodexPreferences(t *testing.T) {
	p := filepath.Join(t.TempDir(), "config.toml")
	os.WriteFile(p, []byte("model = \"gpt-5.5\"\nmodel_provider = \"corp\"\nmodel_reasoning_effort = \"high\"\nmodel_verbosity = \"a\\\"b\"\n[model_providers.corp]\nbase_url = \"https://x\"\nenv_key = \"CORP_KEY\"\n"), 0o600)
	m, _ := readCodexTOML(p)
	got := codexPreferences(m, []string{"model", "model_reasoning_effort", "model_verbosity"})
	if strings.Join(got, " ") != `model="gpt-5.5" model_reasoning_effort="high"` {
		t.Fatalf("%q", got)
	}
}

// TestDecide: a strict box's options from hand-built facts, in a
// directory that does not exist: the git pins become mounts, --env NAME
// takes the host's value (and marks it secret), the state directory is
// per repository and agent, and the bind specs' mounts keep their
// resolved sources.
func TestDecide(t *testing.T) {
	const nowhere = "/nonexistent/aisan-decide"
	h := jail.Host{Cwd: nowhere + "/r/sub", Home: nowhere + "/h", AisanHome: nowhere + "/h/.aisan", RuntimeDir: nowhere + "/run",
		Env: []string{"TOKEN=s3cret", "PATH=/usr/bin"}}
	f := facts{
		repo:   nowhere + "/r",
		git:    gitpin.Plan{Pins: []gitpin.Pin{{Path: nowhere + "/r/.git", Kind: gitpin.RW, Why: "git"}, {Path: nowhere + "/r/.git/hooks", Kind: gitpin.RO, Why: "hooks"}}},
		toolRO: []string{"/opt/tool"}, toolPath: []string{"/opt/tool/bin"}, user: "u",
		binds:     []jail.Mount{{Kind: jail.ROBind, Src: "/real/data", Dst: "/data", Why: "b.toml:1"}},
		gitconfig: []byte("[user]\n"), stateBase: "r-1234-claude", configDir: nowhere + "/h/.claude", instructions: []string{"CLAUDE.md"},
	}
	o := Options{Env: []string{"TOKEN", "PLAIN=1", "UNSET"}, BindPath: []string{"/opt/x"}}
	so, secret := decide(jail.KindClaude, []string{"claude"}, h, "r-1-claude", o, f)
	if strings.Join(so.ExtraEnv, " ") != "TOKEN=s3cret PLAIN=1" || strings.Join(secret, " ") != "TOKEN" {
		t.Errorf("env %q, secret %q", so.ExtraEnv, secret)
	}
	if len(so.GitPins) != 2 || so.GitPins[0].Kind != jail.Bind || so.GitPins[1].Kind != jail.ROBind {
		t.Errorf("pins %+v", so.GitPins)
	}
	if so.GitConfig != filepath.Join(h.SlotDir("r-1-claude"), "gitconfig") || so.Binds[0].Src != "/real/data" {
		t.Errorf("options %+v", so)
	}
	if so.StateDir != h.AisanHome+"/state/r-1234-claude" || so.Instructions[0] != "CLAUDE.md" || so.Command[0] != "claude" {
		t.Errorf("state %s, instructions %q, command %q", so.StateDir, so.Instructions, so.Command)
	}
	if _, err := os.Stat(nowhere); err == nil {
		t.Fatalf("%s exists", nowhere)
	}
}

// TestRemountCovered: a git pin that a later protection covers without
// mounting it again is mounted again after it; one mounted again, or
// holding a protection, is not.
func TestRemountCovered(t *testing.T) {
	ptr := jail.Mount{Kind: jail.ROBind, Src: "/r/lib/x/.git", Dst: "/r/lib/x/.git"}
	dotgit := jail.Mount{Kind: jail.Bind, Src: "/r/.git", Dst: "/r/.git"}
	lib := jail.Mount{Kind: jail.Bind, Src: "/r/lib", Dst: "/r/lib"}
	hooks := jail.Mount{Kind: jail.Bind, Src: "/set/work/0", Dst: "/r/.git/hooks"}
	for _, tc := range []struct {
		name          string
		protect, pins []jail.Mount
		want          []string
	}{
		{"covered pointer mounted again", []jail.Mount{lib}, []jail.Mount{dotgit, ptr}, []string{"/r/lib", "/r/lib/x/.git"}},
		{"listed by the plan too", []jail.Mount{lib, ptr}, []jail.Mount{ptr}, []string{"/r/lib", "/r/lib/x/.git"}},
		{"a pin holding a protection stays first", []jail.Mount{hooks}, []jail.Mount{dotgit}, []string{"/r/.git/hooks"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, m := range remountCovered(tc.protect, tc.pins) {
				got = append(got, m.Dst)
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("mounts %q, want %q", got, tc.want)
			}
		})
	}
}

// TestPathDirsHeld: a repository directory on the host's PATH is let
// into a box only when the box sees it as a copy or read-only, with
// nothing below it bound back from the host.
func TestPathDirsHeld(t *testing.T) {
	for _, tc := range []struct {
		name  string
		items []protect.Item
		want  bool
	}{
		{"a copy", []protect.Item{{Path: "/r/bin", How: protect.Copy}}, true},
		{"under a copy", []protect.Item{{Path: "/r", How: protect.Pin}, {Path: "/r", How: protect.Copy}}, true},
		{"read-only", []protect.Item{{Path: "/r/bin", How: protect.ReadOnly}}, true},
		{"not protected", []protect.Item{{Path: "/r/.envrc", How: protect.Copy}}, false},
		{"pinned", []protect.Item{{Path: "/r/bin", How: protect.Pin}}, false},
		{"a shadow", []protect.Item{{Path: "/r/bin", How: protect.Shadow}}, false},
		{"a pin below the copy", []protect.Item{{Path: "/r/bin", How: protect.Copy}, {Path: "/r/bin/sub", How: protect.Pin}}, false},
		{"a copy, then the host's again", []protect.Item{{Path: "/r/bin", How: protect.Copy}, {Path: "/r/bin", How: protect.Pin}}, false},
	} {
		if got := pathDirsHeld([]string{"/r/bin"}, protect.Plan{Items: tc.items}); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if !pathDirsHeld(nil, protect.Plan{}) {
		t.Error("no directories: not held")
	}
}

// TestProjectLoads: the scripts a project's host tools run unasked by
// the name a held config gives them are steering paths, when they are
// regular files: a link or a FIFO is not followed, nor is a config that
// is a link.
func TestProjectLoads(t *testing.T) {
	r, _ := filepath.EvalSymlinks(t.TempDir())
	w := func(p, data string) {
		t.Helper()
		os.MkdirAll(filepath.Dir(filepath.Join(r, p)), 0o755)
		if err := os.WriteFile(filepath.Join(r, p), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w(".claude/settings.json", `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/s/hook.sh; sh s/link.sh; sh s/fifo.sh; sh s/none.sh"}]}]}}`)
	w(".claude/settings.local.json", `{"statusLine": {"type": "command", "command": "s/status.sh"}}`)
	w(".codex/config.toml", "[mcp_servers.a]\ncommand = \"s/codex.sh\"\n[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = \"command\"\ncommand = \"s/stop.sh\"\n")
	w(".codex/hooks.json", `{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "sh s/start.sh"}]}]}}`)
	w(".vscode/tasks.json", `{"tasks": [{"type": "shell", "command": "s/task.sh", "runOptions": {"runOn": "folderOpen"}}]}`)
	w(".devcontainer/devcontainer.json", `{"initializeCommand": "s/init.sh"}`)
	w(".devcontainer/py/devcontainer.json", `{"initializeCommand": ["s/init-py.sh"]}`)
	w("sub/.devcontainer.json", `{"initializeCommand": "./init.sh"}`)
	w("other/.vscode/x", "")
	os.Symlink(filepath.Join(r, ".vscode/tasks.json"), filepath.Join(r, "other/.vscode/tasks.json"))
	for _, f := range []string{"s/hook.sh", "s/status.sh", "s/codex.sh", "s/task.sh", "s/init.sh", "s/init-py.sh", "sub/init.sh", "s/real.sh", "s/stop.sh", "s/start.sh"} {
		w(f, "")
	}
	os.Symlink("real.sh", filepath.Join(r, "s/link.sh"))
	// Through a linked directory: where it lies, in the repository or not.
	os.Symlink("s", filepath.Join(r, "ls"))
	os.Symlink(t.TempDir(), filepath.Join(r, "out"))
	w("out/x.sh", "")
	w(".vscode/tasks.json", `{"tasks": [{"type": "shell", "command": "s/task.sh; ls/real.sh; out/x.sh", "runOptions": {"runOn": "folderOpen"}}]}`)
	syscall.Mkfifo(filepath.Join(r, "s/fifo.sh"), 0o644)
	want := map[string]string{
		".claude":                "s/hook.sh s/none.sh s s/status.sh", // s/link.sh: a link, held with its directory
		".codex":                 "s/codex.sh s/start.sh s/stop.sh",
		".vscode":                "s/task.sh s/real.sh",
		".devcontainer":          "s/init.sh s/init-py.sh",
		"sub/.devcontainer.json": "sub/init.sh",
		"other/.vscode":          "",
	}
	for p, w := range want {
		ls, err := projectLoads(filepath.Join(r, p), "")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, l := range ls {
			if strings.HasPrefix(l.Path, r+"/") {
				got = append(got, strings.TrimPrefix(l.Path, r+"/"))
			}
		}
		if g := strings.Join(got, " "); g != w {
			t.Errorf("%s: %q, want %q", p, g, w)
		}
	}
}

// TestProjectLoadsIndirect: what a hook reaches through a cd, an npm
// script and a package's command in node_modules/.bin is held; a
// command that cannot be followed in a subdirectory holds it whole, and
// says so; a workspace file's folder-open tasks are read too.
func TestProjectLoadsIndirect(t *testing.T) {
	r, _ := filepath.EvalSymlinks(t.TempDir())
	w := func(p, data string) {
		t.Helper()
		os.MkdirAll(filepath.Dir(filepath.Join(r, p)), 0o755)
		if err := os.WriteFile(filepath.Join(r, p), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w(".claude/settings.json", `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "(cd tools && npm run lint); cd sub && \"$X\"/y"}]}]}}`)
	w("tools/package.json", `{"scripts": {"lint": "eslint ."}}`)
	w("tools/node_modules/eslint/bin/e.js", "")
	os.MkdirAll(filepath.Join(r, "tools/node_modules/.bin"), 0o755)
	os.Symlink("../eslint/bin/e.js", filepath.Join(r, "tools/node_modules/.bin/eslint"))
	w("sub/y", "")
	w("p.code-workspace", `{"folders": [{"path": "."}], "tasks": {"tasks": [{"command": "cd ws && ./w.sh", "runOptions": {"runOn": "folderOpen"}}]}}`)
	w("ws/w.sh", "")
	for p, want := range map[string]string{
		".claude":          "tools/package.json sub/y tools/(eslint.config.js,eslint.config.mjs,eslint.config.cjs,eslint.config.ts,eslint.config.mts,eslint.config.cts,.eslintrc.js,.eslintrc.mjs,.eslintrc.cjs,.eslintrc.ts,.eslintrc.mts,.eslintrc.cts,.eslintrc,.eslintrc.json,.eslintrc.yml,.eslintrc.yaml) sub/ tools/node_modules/eslint/",
		"p.code-workspace": "ws/w.sh",
	} {
		ls, err := projectLoads(filepath.Join(r, p), "")
		if err != nil {
			t.Fatal(err)
		}
		var got, notes []string
		for _, l := range ls {
			if l.Note != "" {
				notes = append(notes, l.Note)
				continue
			}
			g := strings.TrimPrefix(l.Path, r+"/")
			if l.Dir {
				g += "/"
			}
			if l.Files {
				g += "(" + strings.Join(l.Names, ",") + ")"
			}
			got = append(got, g)
		}
		if g := strings.Join(got, " "); g != want {
			t.Errorf("%s: %q, want %q", p, g, want)
		}
		if p == ".claude" && (len(notes) != 1 || !strings.Contains(notes[0], `$X`) || !strings.Contains(notes[0], "sub/ (all of it)")) {
			t.Errorf("%s: notes %q, want one for \"$X\"/y holding sub/", p, notes)
		}
	}
}

func TestLinkDirs(t *testing.T) {
	r, _ := filepath.EvalSymlinks(t.TempDir())
	for _, d := range []string{"tools", "lib", "x/node_modules/.bin", "x/node_modules/p"} {
		os.MkdirAll(filepath.Join(r, d), 0o755)
	}
	for _, f := range []string{"lib/real.sh", "tools/plain.sh", "x/node_modules/p/cli.js"} {
		os.WriteFile(filepath.Join(r, f), nil, 0o755)
	}
	os.Symlink("../lib/real.sh", filepath.Join(r, "tools/hook.sh"))
	os.Symlink("../lib", filepath.Join(r, "tools/dir"))
	os.Symlink("gone.sh", filepath.Join(r, "tools/dangling.sh"))
	os.Symlink("../p/cli.js", filepath.Join(r, "x/node_modules/.bin/p"))
	var ps []string
	for _, p := range []string{"tools/hook.sh", "tools/dir", "tools/dangling.sh", "tools/plain.sh", "x/node_modules/.bin/p", "tools/none.sh"} {
		ps = append(ps, filepath.Join(r, p))
	}
	want := []string{filepath.Join(r, "tools"), filepath.Join(r, "lib")}
	if got := linkDirs(ps); !slices.Equal(got, want) {
		t.Errorf("linkDirs = %q, want %q", got, want)
	}
}

// TestProjectLoadsOpencode: an opencode config's local plugins (a path,
// a file URL, a tuple) are held with their directories, a package name
// is not a path; skills.paths are held as directories, present or not;
// .opencode/opencode.json's MCP servers, formatters and language
// servers start in the project's directory, and its plugins lie beside
// it.
func TestProjectLoadsOpencode(t *testing.T) {
	r, _ := filepath.EvalSymlinks(t.TempDir())
	w := func(p, data string) {
		t.Helper()
		os.MkdirAll(filepath.Dir(filepath.Join(r, p)), 0o755)
		if err := os.WriteFile(filepath.Join(r, p), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w("opencode.jsonc", `{
		// comments are allowed
		"plugin": ["opencode-foo@1.2.3", "./plug/a.js", ["file://`+r+`/plug2/b.ts", {"x": 1}]],
		"skills": {"paths": ["docs/skills", "~/mine", "gone"]},
	}`)
	w("plug/a.js", "")
	w("plug2/b.ts", "")
	w("docs/skills/x/SKILL.md", "")
	w(".opencode/opencode.json", `{"mcp": {"s": {"type": "local", "command": ["sh", "tools/m.sh"]}}, "plugin": ["./p.js", "../plug3/c.js"],
		"formatter": {"mine": {"command": ["./tools/fmt.sh", "$FILE"], "extensions": [".go"]}}, "lsp": {"x": {"command": ["node", "lsp/server.js"]}, "off": {"disabled": true}}}`)
	w("tools/m.sh", "")
	w("plug3/c.js", "")
	w("tools/fmt.sh", "")
	w("lsp/server.js", "")
	for p, want := range map[string]string{
		"opencode.jsonc": "plug/a.js plug/ plug2/b.ts plug2/ docs/skills/ gone/",
		// .opencode/ is protected already: Gather drops .opencode/p.js
		// and .opencode/. A formatter's and a language server's
		// commands run in the project's directory.
		".opencode": "tools/m.sh .opencode/p.js .opencode/ plug3/c.js plug3/ tools/fmt.sh lsp/server.js lsp/",
	} {
		ls, err := projectLoads(filepath.Join(r, p), "")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, l := range ls {
			if l.Path == "" {
				continue
			}
			g := strings.TrimPrefix(l.Path, r+"/")
			if l.Dir {
				g += "/"
			}
			if l.Files {
				g += "(" + strings.Join(l.Names, ",") + ")"
			}
			got = append(got, g)
		}
		if g := strings.Join(got, " "); g != want {
			t.Errorf("%s: %q, want %q", p, g, want)
		}
	}
}

// TestHookLoads: what a git hook runs is held, read as git starts it in
// the repository's root; a hook file of another name (a sample) is not
// read; husky's runner directory is left to .husky's own hooks, read as
// husky runs them with sh.
func TestHookLoads(t *testing.T) {
	r, w := projectDir(t)
	w(".git/hooks/pre-push", "#!/bin/sh\n./scripts/push.sh\n")
	w(".git/hooks/pre-commit.sample", "#!/bin/sh\n./scripts/sample.sh\n")
	w(".husky/_/pre-commit", "#!/bin/sh\n./scripts/runner.sh\n")
	w(".husky/pre-commit", "python3 tools/check.py\n")
	for _, f := range []string{"scripts/push.sh", "scripts/sample.sh", "scripts/runner.sh", "tools/check.py"} {
		w(f, "")
	}
	paths := func(ls []gitpin.Steer) string {
		var got []string
		for _, l := range ls {
			if l.Path != "" && !l.Modules {
				got = append(got, strings.TrimPrefix(l.Path, r+"/"))
			}
		}
		return strings.Join(got, " ")
	}
	if got := paths(hookLoads(filepath.Join(r, ".git/hooks"), r, "")); !strings.Contains(got, "scripts/push.sh") || strings.Contains(got, "sample") {
		t.Errorf("git hooks: %q, want scripts/push.sh and not the sample's", got)
	}
	if got := hookLoads(filepath.Join(r, ".husky/_"), r, ""); len(got) != 0 {
		t.Errorf("husky's runner directory read: %q", paths(got))
	}
	if got := paths(huskyLoads(filepath.Join(r, ".husky"), "")); !strings.Contains(got, "tools/check.py") {
		t.Errorf(".husky: %q, want tools/check.py", got)
	}
}

// TestEnvrcNixLoads: an .envrc that uses a flake holds the flake, and
// what it names by a relative path in turn (a nix file it imports and
// what that reads, a local input's flake); not a source tree it names,
// nor a path that is not there.
func TestEnvrcNixLoads(t *testing.T) {
	r, w := projectDir(t)
	w(".envrc", "use flake\n")
	w("flake.nix", `{ inputs.sub.url = "path:./nix/sub"; outputs = _: { devShells.x.default = import ./nix/shell.nix; packages.x.default = { src = ./src; }; gone = ./missing.sh; }; }`)
	w("nix/shell.nix", `{ shellHook = builtins.readFile ./hook.sh; }`)
	w("nix/hook.sh", "echo hi\n")
	w("nix/sub/flake.nix", "{ }\n")
	w("src/main.go", "package main\n")
	loads, err := envrcLoads(filepath.Join(r, ".envrc"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range loads {
		got = append(got, strings.TrimPrefix(l.Path, r+"/"))
	}
	for _, want := range []string{"flake.nix", "flake.lock", "nix/sub/flake.nix", "nix/shell.nix", "nix/hook.sh"} {
		if !slices.Contains(got, want) {
			t.Errorf("loads lack %s: %q", want, got)
		}
	}
	for _, not := range []string{"src", "src/main.go", "missing.sh", "nix/sub"} {
		if slices.Contains(got, not) {
			t.Errorf("loads hold %s: %q", not, got)
		}
	}
}

// projectDir is a fresh project directory (its real path) and a writer of
// executable files in it, by relative path.
func projectDir(t *testing.T) (string, func(p, data string)) {
	r, _ := filepath.EvalSymlinks(t.TempDir())
	return r, func(p, data string) {
		t.Helper()
		os.MkdirAll(filepath.Dir(filepath.Join(r, p)), 0o755)
		if err := os.WriteFile(filepath.Join(r, p), []byte(data), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}
