package projectrun

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// files is a project's files for a Reader.
type files map[string]string

func (fs files) read(p string) []byte {
	if s, ok := fs[p]; ok {
		return []byte(s)
	}
	return nil
}

// hook is a Claude settings file with a Stop hook running each of cmds.
func hook(cmds ...string) string {
	var hs []any
	for _, c := range cmds {
		hs = append(hs, map[string]any{"type": "command", "command": c})
	}
	b, _ := json.Marshal(map[string]any{"hooks": map[string]any{"Stop": []any{map[string]any{"hooks": hs}}}})
	return string(b)
}

// under is each of names in dir.
func under(dir string, names []string) []string {
	var out []string
	for _, n := range names {
		out = append(out, dir+"/"+n)
	}
	return out
}

func TestIndirect(t *testing.T) {
	project := files{
		"/r/package.json":     `{"scripts": {"prelint": "./pre.sh", "lint": "cd tools && eslint . && ./lint.sh", "postlint": "node post.js"}}`,
		"/r/web/package.json": `{"scripts": {"watch": "sh w.sh"}}`,
		"/r/b/Makefile":       "include rules.mk\nall: gen\n\t@./gen.sh $$HOME\ngen:\n\t-cd sub && ./g.sh $(X)\n",
		"/r/justfile":         "import 'more.just'\nbuild:\n    ./build.sh {{arg}}\n",
		"/r/more.just":        "import? 'just/extra.just'\nrelease:\n    ./release.sh\n",
		"/r/just/extra.just":  "deploy:\n    ./deploy.sh\n",
		"/r/Makefile":         "SPHINXBUILD ?= sphinx-build\nSOURCEDIR = docs\nPY := python3\nifdef CI\nOUT = ci\nelse\nOUT = local\nendif\ndocs:\n\t@$(SPHINXBUILD) -M $@ \"$(SOURCEDIR)\" _build\ngen:\n\t$(PY) tools/gen.py $(OUT)\nsub:\n\t$(MAKE) -C m2 x\n",
		"/r/m2/Makefile":      "x:\n\t./m2.sh\n",
		"/r/m3/Makefile":      "MK = mk\ninclude $(MK)/vars.mk\n-include $(MK)/*.rules\nlint:\n\t$(LINT) src\n",
		"/r/m3/mk/vars.mk":    "LINT = ./tools/lint.sh\ninclude mk/vars.mk mk/more.mk\n",
		"/r/m3/mk/more.mk":    "check:\n\t./tools/check.sh\n",
		"/r/m3/mk/a.rules":    "fmt:\n\t./tools/fmt.sh\n",
		"/r/hooks/check.sh":   "#!/usr/bin/env bash\nset -e\nhere=\"$(cd \"$(dirname \"${BASH_SOURCE[0]}\")\" && pwd)\"\nsource \"$here/lib.sh\"\n. \"$(dirname \"$0\")/more.sh\"\n./tools/fmt.sh --check\n",
		"/r/hooks/lib.sh":     "helper() { ./tools/x.sh; }\n",
		"/r/tools/fmt.sh":     "#!/bin/sh\nexec python3 tools/fmt.py \"$@\"\n",
		"/r/tools/loop.sh":    "#!/bin/sh\n./tools/loop.sh\n",
		"/r/hooks/wrap.sh":    "#!/bin/sh\n./hooks/inner.sh\n",
		"/r/sub/.envrc":       "source_env ../lib.sh\n./hooks/envrc.sh\n",
		"/r/git/extra.cfg":    "# more\n[core]\n\tfsmonitor = \"./hooks/fsm.sh\"\n[include]\n\tpath = more.cfg\n",
		"/r/git/more.cfg":     "[alias]\n\tm = !sh ./hooks/m.sh\n[diff \"x\"]\n\ttextconv = ./hooks/tc.sh\n",
	}
	for _, tt := range []struct {
		name, path, data string
		files, dirs      []string
		notes            []string // each a part of one note, in order
	}{
		{"cd moves the paths after it; a subshell's does not last", "/r/.claude/settings.json",
			hook(`cd "$CLAUDE_PROJECT_DIR"/hooks && ./start.sh; (cd x; ./a.sh); ./b.sh`),
			[]string{"/r/hooks/start.sh", "/r/hooks/x/a.sh", "/r/hooks/b.sh"}, nil, nil},
		{"bash -c with a cd, env -C, a wrapper", "/r/.claude/settings.json",
			hook(`bash -lc 'cd tools && sh prompt.sh' && env -C sub FOO=1 timeout 5 ./s.sh`),
			[]string{"/r/tools/prompt.sh", "/r/sub/s.sh"}, nil, nil},
		{"either branch's directory (or more)", "/r/.claude/settings.json",
			hook(`cd a || cd b; ./x.sh`),
			[]string{"/r/a/x.sh", "/r/b/x.sh", "/r/a/b/x.sh"}, nil, nil},
		{"npm run: package.json, pre and post, node_modules/.bin", "/r/.claude/settings.json",
			hook(`npm run --silent lint`),
			slices.Concat([]string{"/r/package.json", "/r/pre.sh"}, under("/r/tools", definers()["eslint"].files), []string{"/r/tools", "/r/tools/lint.sh", "/r/node_modules/.bin/cd", "/r/node_modules/.bin/eslint", "/r/post.js", "/r/node_modules/.bin/node"}), nil,
			[]string{`cannot tell what "node post.js" runs (node loads modules from beside the script it runs`, "the project's own directory"}},
		{"npm found upwards; yarn NAME", "/r/.claude/settings.json",
			hook(`(cd web/src && npm test); yarn --cwd web watch`),
			[]string{"/r/web/src/package.json", "/r/web/package.json", "/r/web/w.sh", "/r/web/node_modules/.bin/sh"}, nil, nil},
		{"make -C: the makefile, its include, every recipe", "/r/.claude/settings.json",
			hook(`make -s -C b gen`),
			[]string{"/r/b/GNUmakefile", "/r/b/makefile", "/r/b/Makefile", "/r/b/rules.mk", "/r/b/gen.sh", "/home/u", "/r/b/sub/g.sh"},
			[]string{"/r/b"}, []string{"b/Makefile use the tool's own variables"}},
		{"make: the makefile's own variables expanded, the rest unknown", "/r/.claude/settings.json",
			hook(`make docs`),
			[]string{"/r/GNUmakefile", "/r/makefile", "/r/Makefile", "/r/docs/conf.py", "/r/docs", "/r/_build", "/r/tools/gen.py", "/r/m2/GNUmakefile", "/r/m2/makefile", "/r/m2/Makefile", "/r/m2/m2.sh"},
			[]string{"/r/tools"}, []string{"Makefile use the tool's own variables"}},
		{"make: the makefiles it includes, their variables and recipes", "/r/.claude/settings.json",
			hook(`make -C m3 lint`),
			[]string{"/r/m3/GNUmakefile", "/r/m3/makefile", "/r/m3/Makefile", "/r/m3/mk/vars.mk", "/r/m3/mk/more.mk", "/r/m3/mk/a.rules", "/r/m3/tools/lint.sh", "/r/m3/src", "/r/m3/tools/check.sh", "/r/m3/tools/fmt.sh"},
			nil, nil},
		{"just: the justfile, its imports (in turn), every recipe", "/r/.claude/settings.json",
			hook(`just build`),
			[]string{"/r/justfile", "/r/more.just", "/r/just/extra.just", "/r/build.sh", "/r/{{arg}}", "/r/release.sh", "/r/deploy.sh"}, nil, []string{"justfile use the tool's own variables"}},
		{"inline code: the words that name paths are held, and said", "/r/.claude/settings.json",
			hook(`node -e "require('child_process').execFileSync('sh', ['inline/x.sh'])"`),
			[]string{"/r/.execFileSync", "/r/inline/x.sh"}, nil,
			[]string{"/r/.claude/settings.json: cannot tell what", "node -e runs inline code", "held for review instead: .execFileSync, inline/x.sh", "the project's own directory"}},
		{"inline code after grouped options", "/r/.claude/settings.json",
			hook(`python3 -Bc 'import runpy; runpy.run_path("tools/h.py")'`),
			[]string{"/r/runpy.run_path", "/r/tools/h.py"}, nil, []string{"python3 -Bc runs inline code", "held for review instead: runpy.run_path, tools/h.py"}},
		{"an unknown variable in a subdirectory: the directory whole", "/r/.claude/settings.json",
			hook(`cd tools && "$TOOL"/run.sh`),
			[]string{"/r/tools/run.sh"}, []string{"/r/tools"}, []string{"held for review instead: tools/run.sh, tools/ (all of it)"}},
		{"$HOME and ~ are the user's home, outside the project: nothing to hold or say", "/r/.claude/settings.json",
			hook(`$HOME/.local/bin/guard --check; ~/bin/notify "$CLAUDE_PROJECT_DIR"`),
			[]string{"/home/u/.local/bin/guard", "/home/u/bin/notify", "/r"}, nil, nil},
		{"a word a program is given as data is no program: no note", "/r/.claude/settings.json",
			hook(`notify-send "$(git rev-parse --abbrev-ref HEAD) done" "$MSG"`),
			[]string{"/r/rev-parse", "/r/HEAD"}, nil, nil},
		{"a shell script the hook runs is read too: its sources, $0's directory, what it calls", "/r/.claude/settings.json",
			hook(`./hooks/check.sh && sh tools/loop.sh`),
			[]string{"/r/hooks/check.sh", "/r/hooks/lib.sh", "/r/tools/x.sh", "/r/hooks/more.sh", "/r/tools/fmt.sh", "/r/tools/fmt.py", "/r/tools/loop.sh"}, []string{"/r/tools"}, nil},
		{"sh -c and eval of what it does not set, a cd to where it cannot tell", "/r/.claude/settings.json",
			hook(`sh -c "$X"; eval "$Y"; cd "$(git rev-parse --show-toplevel)" && ./y.sh`),
			[]string{"/r/rev-parse", "/r/y.sh"}, nil, []string{"sh -c runs a script", "eval of a word", "cd to a directory"}},
		{"env -S: its split string is the command", "/r/.claude/settings.json",
			hook(`env -S './hooks/wrap.sh --x' && env --split-string='FOO=1 sh tools/s.sh' && env -S "$X"`),
			[]string{"/r/hooks/wrap.sh", "/r/hooks/inner.sh", "/r/tools/s.sh"}, nil, []string{"env -S splits a command line it does not set"}},
		{"a wrapper's option values are no program: the script after them is read", "/r/.claude/settings.json",
			hook(`timeout --signal KILL 5 ./hooks/wrap.sh; sudo -u root nice --adjustment 3 stdbuf -o L ./a.sh; exec -a x ./b.sh; xargs -a list -n 1 ./c.sh`),
			[]string{"/r/hooks/wrap.sh", "/r/hooks/inner.sh", "/r/a.sh", "/r/b.sh", "/r/list", "/r/c.sh"}, nil, nil},
		{"the environment names what the program loads", "/r/.claude/settings.json",
			hook(`BASH_ENV=hooks/wrap.sh bash -c true; NODE_OPTIONS='--require ./hooks/r.js --import=./hooks/i.mjs' node -v; PYTHONPATH=lib:/abs python3 -V; env LD_PRELOAD=./hooks/p.so true; export ENV=./hooks/e.sh X=1`),
			[]string{"/r/hooks/wrap.sh", "/r/hooks/inner.sh", "/r/hooks/r.js", "/r/hooks/i.mjs", "/r/hooks/p.so", "/r/hooks/e.sh"}, []string{"/r/lib"}, nil},
		{"find -exec's command; a shell that reads its script from its input", "/r/.claude/settings.json",
			hook(`find . -name '*.go' -exec ./hooks/wrap.sh {} \; -execdir ./d.sh {} +; bash < hooks/wrap.sh; cat tools/fmt.sh | sh -s -- x; bash -c ./x.sh < in.txt`),
			[]string{"/r", "/r/*.go", "/r/hooks/wrap.sh", "/r/hooks/inner.sh", "/r/{}", "/r/d.sh", "/r/tools/fmt.sh", "/r/x", "/r/tools/fmt.py", "/r/in.txt", "/r/x.sh"}, []string{"/r/tools"},
			[]string{"find -execdir runs its command in the directory of each file"}},
		{"programs that run the rest of their words: the script after their options and words is read", "/r/.claude/settings.json",
			hook(`flock -w 5 /tmp/l ./hooks/wrap.sh; ionice -c 3 taskset 0x1 chrt 0 ./a.sh; flock "$L" -c './b.sh x'; strace -o /tmp/t -f ./c.sh; systemd-run --user -d sudo -D tools ./d.sh`),
			[]string{"/tmp/l", "/r/hooks/wrap.sh", "/r/hooks/inner.sh", "/r/0x1", "/r/0", "/r/a.sh", "/r/b.sh", "/r/x", "/r/c.sh", "/r/tools/d.sh"}, nil, nil},
		{"programs that run command lines their words give", "/r/.claude/settings.json",
			hook(`watch -n 1 ./hooks/wrap.sh; script -q -c 'sh tools/s.sh' /dev/null; script -qfc ./sq.sh /dev/null; nix-shell dev.nix --run ./n.sh; nix-shell -p hello --run true; nix-shell; parallel ./p.sh ::: a b; parallel ::: ./q.sh; direnv exec sub ./e.sh; entr -s './en.sh'`),
			[]string{"/r/hooks/wrap.sh", "/r/hooks/inner.sh", "/r/tools/s.sh", "/dev/null", "/r/sq.sh", "/r/n.sh", "/r/dev.nix", "/r/hello", "/r/shell.nix", "/r/default.nix", "/r/p.sh", "/r/a", "/r/b", "/r/q.sh",
				"/r/sub/.envrc", "/r/lib.sh", "/r/sub/hooks/envrc.sh", "/r/sub/.env", "/r/sub/e.sh", "/r/en.sh"}, nil, nil},
		{"git's configuration names what it runs", "/r/.claude/settings.json",
			hook(`git -c alias.x='!./hooks/wrap.sh' x; git -c core.hooksPath=githooks commit; git -c core.pager='./pg.sh' log; git -c diff.external=tools/d.sh diff; git -C sub -c alias.y='-c core.hooksPath=h2 commit' y; GIT_SSH_COMMAND='sh ./ssh.sh' git --exec-path=gx status; git config --local core.hooksPath gh2 && git config core.pager; git config set alias.z '!./z.sh'`),
			[]string{"/r/hooks/wrap.sh", "/r/hooks/inner.sh", "/r/x", "/r/commit", "/r/pg.sh", "/r/log", "/r/tools/d.sh", "/r/diff", "/r/sub/commit", "/r/sub/y", "/r/ssh.sh", "/r/status",
				"/r/config", "/r/core.hooksPath", "/r/gh2", "/r/core.pager", "/r/z.sh", "/r/set", "/r/alias.z", "/r/!./z.sh"},
			[]string{"/r/githooks", "/r/sub/h2", "/r/h2", "/r/gx", "/r/gh2"}, nil},
		{"git's configuration from files it includes and from the environment", "/r/.claude/settings.json",
			hook(`git -c include.path=git/extra.cfg status; GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.hooksPath GIT_CONFIG_VALUE_0=gh git commit; env GIT_CONFIG_PARAMETERS="'core.pager'='./pg.sh'" git log; git --git-dir=meta.git status; GIT_DIR=other git status`),
			[]string{"/r/git/extra.cfg", "/r/git/hooks/fsm.sh", "/r/hooks/fsm.sh", "/r/git/more.cfg", "/r/git/hooks/m.sh", "/r/hooks/m.sh", "/r/git/hooks/tc.sh", "/r/hooks/tc.sh", "/r/more.cfg", "/r/status", "/r/commit", "/r/pg.sh", "/r/log"},
			[]string{"/r/gh", "/r/meta.git", "/r/other"}, nil},
		{"a program of the project named as a wrapper is held; what git or watch cannot tell is said", "/r/.claude/settings.json",
			hook(`./tools/timeout 5 ./x.sh; watch "$X"; git -c "$Y" log; git -c core.hooksPath=. commit`),
			append(append([]string{"/r/tools/timeout", "/r/5", "/r/x.sh", "/r/log"}, under("/r", GitHooks)...), "/r/commit"), nil,
			[]string{"watch runs a command line it does not set", "git -c sets configuration it does not set", "core.hookspath names, here the project's own directory); held for review instead: applypatch-msg"}},
		{"an environment's file it does not set", "/r/.claude/settings.json",
			hook(`BASH_ENV="$X" bash -c true`),
			nil, nil, []string{"a word holds a variable"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n := ClaudeSettings(tt.path, []byte(tt.data), Project{Read: project.read, List: listOf(project), Home: "/home/u"})
			if d := cmp.Diff(tt.files, n.Files); d != "" {
				t.Errorf("files (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.dirs, n.Dirs); d != "" {
				t.Errorf("dirs (-want +got):\n%s", d)
			}
			all := strings.Join(n.Notes, "\n")
			for _, want := range tt.notes {
				if !strings.Contains(all, want) {
					t.Errorf("the notes lack %q:\n%s", want, all)
				}
			}
			if len(tt.notes) == 0 && len(n.Notes) > 0 {
				t.Errorf("notes for what could be followed:\n%s", all)
			}
		})
	}
}

func TestVSCodeIndirect(t *testing.T) {
	project := files{"/r/web/package.json": `{"scripts": {"watch": "node watch.js"}}`}
	tasks := `{"version": "2.0.0", "tasks": [
		{"label": "open", "type": "shell", "command": "cd sub && ./open.sh", "dependsOn": ["dep", {"type": "npm", "task": "web"}, "gone"], "runOptions": {"runOn": "folderOpen"}},
		{"label": "dep", "type": "shell", "command": "./dep.sh", "options": {"cwd": "${workspaceFolder}/tools"}, "dependsOn": "open"},
		{"label": "web", "type": "npm", "script": "watch", "path": "web"},
		{"label": "not run", "command": "./no.sh"},
		{"label": "env", "command": "./e.sh", "options": {"cwd": "${env:X}"}, "runOptions": {"runOn": "folderOpen"}},
		{"label": "ext", "type": "gulp", "task": "x", "options": {"cwd": "g"}, "runOptions": {"runOn": "folderOpen"}},
	]}`
	n := VSCodeTasks("/r/.vscode/tasks.json", []byte(tasks), Project{Read: project.read, Home: "/home/u"})
	want := []string{"/r/sub/open.sh", "/r/tools/dep.sh", "/r/web/package.json", "/r/web/watch.js", "/r/web/node_modules/.bin/node", "/r/e.sh"}
	if d := cmp.Diff(want, n.Files); d != "" {
		t.Errorf("files (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"/r/web", "/r/g"}, n.Dirs); d != "" {
		t.Errorf("dirs (-want +got):\n%s", d)
	}
	all := strings.Join(n.Notes, "\n")
	for _, w := range []string{`"dependsOn gone"`, "options.cwd ${env:X}", `"a task of type gulp"`, "g/ (all of it)"} {
		if !strings.Contains(all, w) {
			t.Errorf("the notes lack %q:\n%s", w, all)
		}
	}
	ws := `{"folders": [{"path": "app"}], "tasks": {"version": "2.0.0", "tasks": [{"label": "ws", "type": "shell", "command": "bash -c 'cd ws && ./ws.sh'", "runOptions": {"runOn": "folderOpen"}}]}}`
	if d := cmp.Diff([]string{"/r/app/ws/ws.sh"}, VSCodeWorkspace("/r/p.code-workspace", []byte(ws), Project{}).Files); d != "" {
		t.Errorf("a workspace file's tasks (-want +got):\n%s", d)
	}
}
