package projectrun

import "testing"

// TestTaskRunners: task (go-task's Taskfile and its includes, taskipy's
// table) and poe follow every task's command lines, a poe script's
// module, and say what they cannot follow.
func TestTaskRunners(t *testing.T) {
	project := files{
		"/r/Taskfile.yml":      "version: '3'\nincludes:\n  docs: ./docs\n  ci:\n    taskfile: ci/Tasks.yml\n    dir: ci\ndotenv: ['.env']\ntasks:\n  lint:\n    cmds:\n      - ./tools/lint.sh\n      - task: fmt\n      - cmd: ./tools/vet.sh\n  fmt: ./tools/fmt.sh\n  gen:\n    dir: gen\n    cmds: ['./make.sh {{.CLI_ARGS}}']\n",
		"/r/docs/Taskfile.yml": "version: '3'\ntasks:\n  build: ./build.sh\n",
		"/r/ci/Tasks.yml":      "version: '3'\ntasks:\n  ci: [./ci.sh]\n",
		"/r/pyproject.toml": "[tool.taskipy.tasks]\ntest = \"pytest -q\"\npre_test = { cmd = \"./scripts/pre.sh\" }\n" +
			"[tool.poe.tasks]\nfmt = \"./scripts/fmt.sh\"\nall = { sequence = [\"fmt\", { shell = \"./scripts/all.sh\" }] }\ngen = { script = \"tools.gen:main\" }\ncalc = { expr = \"open('x/y.txt').read()\" }\n",
		"/r/tools/gen.py": "import os\n",
	}
	for _, tc := range []struct {
		name, cmd   string
		files, dirs []string
		notes       []string
	}{
		{"task: every task, its includes, dotenv; taskipy beside it", "task lint",
			[]string{"/r/Taskfile.yml", "/r/.env", "/r/tools/fmt.sh", "/r/gen/make.sh", "/r/gen/{{.CLI_ARGS}}", "/r/tools/lint.sh", "/r/tools/vet.sh", "/r/ci/Tasks.yml", "/r/ci/ci.sh", "/r/docs/Taskfile.yml", "/r/build.sh",
				"/r/pyproject.toml", "/r/scripts/pre.sh", "/r/conftest.py", "/r/pytest.ini", "/r/.pytest.ini", "/r/tox.ini", "/r/setup.cfg"},
			[]string{"/r/tests", "/r/test"}, []string{"Taskfile.yml use the tool's own variables"}},
		{"poe: command lines, a sequence, a script's module, an expr", "poe fmt",
			[]string{"/r/pyproject.toml", "/r/scripts/all.sh", "/r/x/y.txt", "/r/.read", "/r/scripts/fmt.sh", "/r/tools/gen.py", "/r/tools/gen/__init__.py"},
			[]string{"/r/tools"}, []string{"runs Python code (expr)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := ClaudeSettings("/r/.claude/settings.json", []byte(hook(tc.cmd)), Project{Read: project.read, List: listOf(project), Home: "/home/u"})
			wantNames(t, n, tc.files, tc.dirs, tc.notes)
		})
	}
}
