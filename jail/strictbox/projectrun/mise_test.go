package projectrun

import "testing"

// TestMise: what a trusted mise config makes mise run or load on cd:
// sourced scripts (followed as bash runs them), dotenv files, PATH
// directories (a venv's bin, a path: tool), the variables programs load
// files by, hooks' commands; templates it cannot tell are said.
func TestMise(t *testing.T) {
	project := files{
		"/r/scripts/env.sh": "source ./scripts/lib.sh\n",
		"/r/scripts/lib.sh": "",
	}
	for _, tc := range []struct {
		name, path, data string
		files, dirs      []string
		notes            []string
	}{
		{"env directives, hooks, tools", "/r/mise.toml",
			"[env]\nNODE_ENV = \"dev\"\nNODE_OPTIONS = \"--require ./tools/preload.js\"\nGREETING = \"hi {{env.USER}}\"\n_.source = [\"./scripts/env.sh\", { path = \"{{config_root}}/more.sh\" }]\n_.file = \".env\"\n_.path = [\"./bin\", \"{{config_root}}/node_modules/.bin\"]\n_.python.venv = { path = \".venv\", create = true }\n" +
				"[hooks]\nenter = \"./scripts/enter.sh\"\ncd = [{ script = \"sh ./scripts/cd.sh\" }]\n[tools]\nnode = \"path:./vendor/node\"\npython = \"3.12\"\n",
			[]string{"/r/tools/preload.js", "/r/scripts/env.sh", "/r/scripts/lib.sh", "/r/more.sh", "/r/.env", "/r/scripts/cd.sh", "/r/scripts/enter.sh"},
			[]string{"/r/bin", "/r/node_modules/.bin", "/r/.venv/bin", "/r/vendor/node"}, nil},
		{"a config in .config/mise/conf.d starts from the project; [[env]]; legacy keys", "/r/.config/mise/conf.d/a.toml",
			"env_file = \".env.legacy\"\nenv_path = [\"./lbin\"]\n[[env]]\n_.source = \"{{env.HOME}}/x.sh\"\n[[env]]\n_.file = \"b.env\"\n",
			[]string{"/r/b.env", "/r/.env.legacy"}, []string{"/r/lbin"}, []string{"templates it does not set"}},
		{"the project's own directory on PATH is said", "/r/mise.toml",
			"[env]\n_.path = \".\"\nPATH = \"./pbin:{{env.PATH}}\"\n",
			nil, []string{"/r/pbin"}, []string{"puts the project's own directory on PATH"}},
		{"a config that does not parse names nothing", "/r/mise.toml", "[env\n", nil, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := Mise(tc.path, []byte(tc.data), Project{Read: project.read, List: listOf(project), Home: "/home/u"})
			wantNames(t, n, tc.files, tc.dirs, tc.notes)
		})
	}
}

// TestMiseRun: mise run follows every task of the configs it finds from
// where it runs up (run lines in their dir, a file task), holds the file
// tasks' directories, and mise exec runs its command.
func TestMiseRun(t *testing.T) {
	project := files{
		"/r/mise.toml":                "[tasks]\nfmt = \"./tools/fmt.sh\"\n[tasks.lint]\nrun = [\"./tools/lint.sh\", \"npm run x\"]\ndir = \"web\"\n[tasks.gen]\nfile = \"scripts/gen.sh\"\n",
		"/r/.config/mise/config.toml": "[tasks.deploy]\nrun = \"./deploy.sh {{vars.env}}\"\n",
		"/r/mise-tasks/build":         "#!/bin/sh\n",
		"/r/sub/.mise.toml":           "[tasks.s]\nrun = \"./s.sh\"\n",
		"/r/web/package.json":         `{"scripts": {"x": "./x.sh"}}`,
	}
	for _, tc := range []struct {
		name, cmd   string
		files, dirs []string
		notes       []string
	}{
		{"run from a subdirectory: its configs and the root's", "cd sub && mise run lint",
			[]string{"/r/sub/.mise.toml", "/r/sub/s.sh", "/r/.config/mise/config.toml", "/r/deploy.sh", "/r/{{vars.env}}", "/r/mise.toml", "/r/tools/fmt.sh", "/r/scripts/gen.sh", "/r/web/tools/lint.sh", "/r/web/package.json", "/r/web/x.sh"},
			[]string{"/r/mise-tasks"}, []string{"use the tool's own variables"}},
		{"exec runs its command", "mise exec node@20 -- ./tools/x.sh", []string{"/r/tools/x.sh"}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := ClaudeSettings("/r/.claude/settings.json", []byte(hook(tc.cmd)), Project{Read: project.read, List: listOf(project), Home: "/home/u"})
			wantNames(t, n, tc.files, tc.dirs, tc.notes)
		})
	}
}
