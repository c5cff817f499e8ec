package mcp

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestProjectPrograms(t *testing.T) {
	for _, tt := range []struct {
		name, path, data string
		want             []string
	}{
		{"claude: a relative command and a script argument", "/r/.mcp.json",
			`{"mcpServers": {"b": {"command": "./tools/s.sh"}, "a": {"command": "node", "args": ["srv/index.js", "--port", "3", "--config=conf/x.json", "${HOME}/y", "-v"]}}}`,
			[]string{"/r/srv/index.js", "/r/3", "/r/conf/x.json", "/r/tools/s.sh"}},
		{"claude: an absolute command, a remote server", "/r/sub/.mcp.json",
			`{"mcpServers": {"a": {"command": "/opt/x/bin/srv", "args": ["../up.py"]}, "far": {"type": "http", "url": "https://x.invalid"}}}`,
			[]string{"/opt/x/bin/srv", "/r/up.py"}},
		{"claude: a bare command names no path", "/r/.mcp.json", `{"mcpServers": {"a": {"command": "uvx"}}}`, nil},
		{"opencode: JSONC, local and remote", "/r/opencode.jsonc",
			"{\n // mine\n \"mcp\": {\"l\": {\"type\": \"local\", \"command\": [\"python3\", \"mcp/server.py\"]}, \"r\": {\"type\": \"remote\", \"url\": \"https://x.invalid\"}}}",
			[]string{"/r/mcp/server.py"}},
		{"opencode: disabled", "/r/opencode.json", `{"mcp": {"l": {"type": "local", "command": ["./s"], "enabled": false}}}`, nil},
		{"codex: a trusted project's config", "/r/.codex/config.toml",
			"[mcp_servers.a]\ncommand = \"sh\"\nargs = [\"tools/s.sh\"]\n[mcp_servers.b]\ncommand = \"./bin/srv\"\ncwd = \"sub\"\nargs = [\"--config=c.toml\"]\n[mcp_servers.c]\nurl = \"https://x.invalid\"\n",
			[]string{"/r/tools/s.sh", "/r/sub/bin/srv", "/r/sub/c.toml"}},
		{"codex: disabled", "/r/.codex/config.toml", "[mcp_servers.a]\ncommand = \"./s\"\nenabled = false\n", nil},
		{"codex: a config.toml elsewhere", "/r/config.toml", "[mcp_servers.a]\ncommand = \"./s\"\n", nil},
		{"a file that does not parse", "/r/.mcp.json", `{"mcpServers":`, nil},
		{"another name", "/r/settings.json", `{"mcpServers": {"a": {"command": "./s"}}}`, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, ProjectPrograms(tt.path, []byte(tt.data))); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// FuzzProjectPrograms: whatever a box writes into a project MCP file,
// the paths read from it are absolute and clean, and nothing panics.
func FuzzProjectPrograms(f *testing.F) {
	f.Add([]byte(`{"mcpServers": {"a": {"command": "./s.sh", "args": ["--config=c.json", "x.js"]}}}`))
	f.Add([]byte("{\"mcp\": {\"l\": {\"type\": \"local\", \"command\": [\"python3\", \"s.py\"]}}}"))
	f.Add([]byte("[mcp_servers.x]\ncommand = \"sh\"\nargs = [\"t.sh\"]\ncwd = \"sub\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, path := range []string{"/r/.mcp.json", "/r/opencode.jsonc", "/r/.codex/config.toml"} {
			for _, p := range ProjectPrograms(path, data) {
				if !filepath.IsAbs(p) || filepath.Clean(p) != p {
					t.Fatalf("%s: %q is not absolute and clean", path, p)
				}
			}
		}
	})
}

func TestProjectCommands(t *testing.T) {
	got := ProjectCommands("/r/.codex/config.toml", []byte("[mcp_servers.a]\ncommand = \"python3\"\nargs = [\"tools/s.py\"]\n[mcp_servers.b]\ncommand = \"./bin/srv\"\ncwd = \"sub\"\n[mcp_servers.c]\nurl = \"https://x.invalid\"\n"))
	want := []Command{{Argv: []string{"python3", "tools/s.py"}, Dir: "/r", Root: "/r"}, {Argv: []string{"./bin/srv"}, Dir: "/r/sub", Root: "/r"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}
