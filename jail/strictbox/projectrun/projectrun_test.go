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
			[]string{"/r/scripts/check.sh", "/r/etc/c.json", "/r/hooks/x.js", "/r/run.sh", "/r/in/data", "/r/tools/b.py"}},
		{"the status line and a helper", "/r/sub/.claude/settings.local.json",
			`{"statusLine": {"type": "command", "command": "sh .claude/status.sh"}, "apiKeyHelper": "../key.sh"}`,
			[]string{"/r/sub/.claude/status.sh", "/r/key.sh"}},
		{"expansions and bare commands name nothing", "/r/.claude/settings.json",
			`{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "jq . $HOME/x \"$(pwd)/y\" ~/z; uvx tool"}]}]}}`,
			[]string{"/r", "/r/tool"}},
		{"an absolute path", "/r/.claude/settings.json",
			`{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "/opt/x/hook"}]}]}}`,
			[]string{"/opt/x/hook"}},
		{"a command that does not parse", "/r/.claude/settings.json",
			`{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "sh scripts/a.sh \""}]}]}}`, nil},
		{"a file that does not parse", "/r/.claude/settings.json", `{"hooks":`, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, ClaudeSettings(tt.path, []byte(tt.data))); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}
