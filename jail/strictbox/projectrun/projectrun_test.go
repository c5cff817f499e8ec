package projectrun

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestClaudeSettings(t *testing.T) {
	for _, tt := range []struct {
		name, path, data string
		want             []string
	}{
		{"hooks: project dir, relative, sh -c, an option's value", "/r/.claude/settings.json",
			`{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "bash -c 'python3 tools/b.py'"}]}],
			  "PreToolUse": [{"matcher": "Bash", "hooks": [
			    {"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/scripts/check.sh --conf=etc/c.json -v", "timeout": 5},
			    {"type": "command", "command": "node ${CLAUDE_PROJECT_DIR}/hooks/x.js && ./run.sh < in/data"},
			    {"type": "prompt", "prompt": "scripts/not.sh"}]}]}}`,
			[]string{"/r/scripts/check.sh", "/r/etc/c.json", "/r/hooks/x.js", "/r/in/data", "/r/run.sh", "/r/tools/b.py"}},
		{"the status line and a helper", "/r/sub/.claude/settings.local.json",
			`{"statusLine": {"type": "command", "command": "sh .claude/status.sh"}, "apiKeyHelper": "../key.sh"}`,
			[]string{"/r/sub/.claude/status.sh", "/r/key.sh"}},
		{"every other setting that runs a command", "/r/.claude/settings.json",
			`{"subagentStatusLine": {"type": "command", "command": "./a.sh"}, "fileSuggestion": {"type": "command", "command": "./b.sh"},
			  "gcpAuthRefresh": "./c.sh", "proxyAuthHelper": "./d.sh", "processWrapper": "./e.sh --wrap", "awsAuthRefresh": "./f.sh",
			  "awsCredentialExport": "./g.sh", "otelHeadersHelper": "./h.sh"}`,
			[]string{"/r/a.sh", "/r/b.sh", "/r/f.sh", "/r/g.sh", "/r/c.sh", "/r/h.sh", "/r/d.sh", "/r/e.sh"}},
		{"expansions hold what their literal end names; bare commands name nothing", "/r/.claude/settings.json",
			`{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "jq . $HOME/x \"$(pwd)/y\" ~/z; uvx tool"}]}]}}`,
			[]string{"/r", "/r/x", "/r/y", "/r/tool"}},
		{"comments and a trailing comma are read too", "/r/.claude/settings.json",
			"{\n // mine\n \"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"./h.sh\"},]}]}}", []string{"/r/h.sh"}},
		{"an absolute path", "/r/.claude/settings.json",
			`{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "/opt/x/hook"}]}]}}`,
			[]string{"/opt/x/hook"}},
		{"a command that does not parse", "/r/.claude/settings.json",
			`{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "sh scripts/a.sh \""}]}]}}`, nil},
		{"a file that does not parse", "/r/.claude/settings.json", `{"hooks":`, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, ClaudeSettings(tt.path, []byte(tt.data), Project{}).Files); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestVSCodeTasks(t *testing.T) {
	for _, tt := range []struct {
		name, data string
		want       []string
	}{
		{"folder open: shell, process, a cwd, JSONC", `{
			// mine
			"version": "2.0.0",
			"tasks": [
				{"label": "a", "type": "shell", "command": "./scripts/open.sh && bash tools/x.sh", "args": ["--conf=c.json", "-q"], "runOptions": {"runOn": "folderOpen"}},
				{"label": "b", "type": "process", "command": "${workspaceFolder}/bin/watch", "args": ["w.js"], "options": {"cwd": "sub"}, "runOptions": {"runOn": "folderOpen"}},
				{"label": "c", "type": "shell", "command": "./not/run.sh"},
				{"label": "d", "command": "echo", "linux": {"command": "sh lin.sh"}, "runOptions": {"runOn": "folderOpen"},},
			],
		}`, []string{"/r/scripts/open.sh", "/r/tools/x.sh", "/r/c.json", "/r/bin/watch", "/r/sub/w.js", "/r/lin.sh"}},
		{"unknown variables: what their literal end names", `{"tasks": [{"type": "shell", "command": "${env:HOME}/x.sh", "args": ["${file}"], "runOptions": {"runOn": "folderOpen"}}]}`, []string{"/r/x.sh"}},
		{"a file that does not parse", `{"tasks": [`, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, VSCodeTasks("/r/.vscode/tasks.json", []byte(tt.data), Project{}).Files); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestDevcontainer(t *testing.T) {
	for _, tt := range []struct {
		name, path, data string
		want             []string
	}{
		{"a string: the shell", "/r/.devcontainer/devcontainer.json",
			`{"image": "x", /* c */ "initializeCommand": "bash .devcontainer/init.sh; ${localWorkspaceFolder}/scripts/pre.sh"}`,
			[]string{"/r/.devcontainer/init.sh", "/r/scripts/pre.sh"}},
		{"a list: exec'd", "/r/.devcontainer.json", `{"initializeCommand": ["python3", "tools/init.py", "--x"]}`, []string{"/r/tools/init.py"}},
		{"an object, in a folder of .devcontainer", "/r/.devcontainer/py/devcontainer.json",
			`{"initializeCommand": {"b": "./b.sh", "a": ["./a"]}}`, []string{"/r/a", "/r/b.sh"}},
		{"none", "/r/.devcontainer.json", `{"postCreateCommand": "./in-container.sh"}`, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, Devcontainer(tt.path, []byte(tt.data), Project{}).Files); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestCodexHooks(t *testing.T) {
	for _, tt := range []struct {
		name, path, data string
		want             []string
	}{
		{"hooks.json", "/r/.codex/hooks.json",
			`{"hooks": {"SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "python3 scripts/start.py --hook SessionStart"}]}]}}`,
			[]string{"/r/scripts/start.py", "/r/SessionStart"}},
		{"config.toml's [hooks]", "/r/.codex/config.toml",
			"model = \"x\"\n[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = \"command\"\ncommand = \"./tools/stop.sh\"\n",
			[]string{"/r/tools/stop.sh"}},
		{"config.toml without hooks", "/r/.codex/config.toml", "[mcp_servers.a]\ncommand = \"./s\"\n", nil},
		{"config.toml's notify", "/r/.codex/config.toml", "notify = [\"python3\", \"tools/notify.py\", \"--x\"]\n", []string{"/r/tools/notify.py"}},
		{"a notify that is no argv", "/r/.codex/config.toml", "notify = \"./n.sh\"\n[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ncommand = \"./s.sh\"\n", []string{"/r/s.sh"}},
		{"another name", "/r/.codex/other.json", `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "./s"}]}]}}`, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, CodexHooks(tt.path, []byte(tt.data), Project{}).Files); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}
