package mcp

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const (
	home    = "/home/u"
	project = "/work/repo"
)

func claudeFiles(global, settings, mcpjson, local string) ClaudeFiles {
	f := ClaudeFiles{
		Global:       File{Path: home + "/.claude.json"},
		UserSettings: File{Path: home + "/.claude/settings.json"},
		ProjectMCP:   File{Path: project + "/.mcp.json"},
		RepoSettings: []File{{Path: project + "/.claude/settings.local.json"}},
	}
	set := func(p *File, s string) {
		if s != "" {
			p.Data = []byte(s)
		}
	}
	set(&f.Global, global)
	set(&f.UserSettings, settings)
	set(&f.ProjectMCP, mcpjson)
	set(&f.RepoSettings[0], local)
	return f
}

// outcome flattens an Import to "name: kept <scope>" / "name: <reason>" lines.
func outcome(imp Import) []string {
	var out []string
	for _, s := range imp.Servers {
		out = append(out, s.Name+": kept "+s.Source.Scope+" "+s.Command+" "+strings.Join(s.Args, " "))
	}
	for _, d := range imp.Dropped {
		out = append(out, d.Name+": "+d.Reason)
	}
	return out
}

func TestParseClaude(t *testing.T) {
	const approvedAB = `{"enabledMcpjsonServers":["a","b"]}`
	tests := []struct {
		name                             string
		global, settings, mcpjson, local string
		want                             []string
	}{
		{name: "empty", want: nil},
		{
			name:   "user scope stdio kept, remote dropped",
			global: `{"mcpServers":{"s":{"command":"srv","args":["--x","${HOME}"]},"t":{"type":"stdio","command":"t"},"h":{"type":"http","url":"https://x"},"e":{"type":"sse","url":"https://x"},"w":{"type":"ws","url":"wss://x"}}}`,
			want:   []string{"s: kept user srv --x ${HOME}", "t: kept user t ", "e: remote (sse)", "h: remote (http)", "w: remote (ws)"},
		},
		{
			name:   "invalid entries are dropped with the reason",
			global: `{"mcpServers":{"u":{"url":"https://x"},"n":{"args":[]},"i":{"command":3},"a":{"command":"x","args":"y"},"v":{"command":"x","env":{"A":1}},"q":{"type":"grpc"},"z":5}}`,
			want: []string{
				"a: invalid: args is not a list of strings", "i: invalid: command is missing or not a string",
				"n: invalid: command is missing or not a string", "q: unknown type \"grpc\"",
				"u: invalid: a url with no type (Claude reads no type as stdio)", "v: invalid: env is not an object of strings",
				"z: invalid: not a JSON object",
			},
		},
		{
			name:    ".mcp.json needs a host approval",
			mcpjson: `{"mcpServers":{"a":{"command":"a"}}}`,
			want:    []string{"a: not approved in host settings (enabledMcpjsonServers in ~/.claude/settings.json)"},
		},
		{
			name:     "approved by name in user settings",
			settings: approvedAB,
			mcpjson:  `{"mcpServers":{"a":{"command":"a"},"c":{"command":"c"}}}`,
			want:     []string{"a: kept project a ", "c: not approved in host settings (enabledMcpjsonServers in ~/.claude/settings.json)"},
		},
		{
			name:     "approval needs the exact name",
			settings: `{"enabledMcpjsonServers":["A"]}`,
			mcpjson:  `{"mcpServers":{"a":{"command":"a"}}}`,
			want:     []string{"a: not approved in host settings (enabledMcpjsonServers in ~/.claude/settings.json)"},
		},
		{
			name:     "enable all in user settings",
			settings: `{"enableAllProjectMcpServers":true}`,
			mcpjson:  `{"mcpServers":{"a":{"command":"a"},"r":{"type":"http","url":"u"}}}`,
			want:     []string{"a: kept project a ", "r: remote (http)"},
		},
		{
			name:    "old approval in the ~/.claude.json project entry",
			global:  `{"projects":{"/work/repo":{"enabledMcpjsonServers":["a"]}}}`,
			mcpjson: `{"mcpServers":{"a":{"command":"a"}}}`,
			want:    []string{"a: kept project a "},
		},
		{
			name:    "another project's approval does not count",
			global:  `{"projects":{"/work/other":{"enableAllProjectMcpServers":true}}}`,
			mcpjson: `{"mcpServers":{"a":{"command":"a"}}}`,
			want:    []string{"a: not approved in host settings (enabledMcpjsonServers in ~/.claude/settings.json)"},
		},
		{
			name:    "an approval in the box-writable settings.local.json does not count",
			local:   `{"enabledMcpjsonServers":["a"],"enableAllProjectMcpServers":true}`,
			mcpjson: `{"mcpServers":{"a":{"command":"a"},"b":{"command":"b"}}}`,
			want: []string{
				"a: approved only in the repository's .claude settings, which the box can write; approve it in ~/.claude/settings.json (enabledMcpjsonServers)",
				"b: approved only in the repository's .claude settings, which the box can write; approve it in ~/.claude/settings.json (enabledMcpjsonServers)",
			},
		},
		{
			name:     "a rejection anywhere wins, case-insensitively",
			settings: `{"enableAllProjectMcpServers":true}`,
			local:    `{"disabledMcpjsonServers":["A"]}`,
			mcpjson:  `{"mcpServers":{"a":{"command":"a"}}}`,
			want:     []string{"a: rejected in disabledMcpjsonServers"},
		},
		{
			name:     "local scope overrides project overrides user",
			global:   `{"mcpServers":{"a":{"command":"user"},"b":{"command":"user"}},"projects":{"/work/repo":{"mcpServers":{"a":{"command":"local"}}}}}`,
			settings: approvedAB,
			mcpjson:  `{"mcpServers":{"a":{"command":"project"},"b":{"command":"project"}}}`,
			want:     []string{"a: kept local local ", "b: kept project project "},
		},
		{
			name:   "a later remote entry shadows an earlier stdio one",
			global: `{"mcpServers":{"a":{"command":"user"}},"projects":{"/work/repo":{"mcpServers":{"a":{"type":"http","url":"u"}}}}}`,
			want:   []string{"a: remote (http)"},
		},
		{
			name:   "disabled for this project",
			global: `{"mcpServers":{"a":{"command":"a"},"b":{"command":"b"}},"projects":{"/work/repo":{"disabledMcpServers":["a","zz"]}}}`,
			want:   []string{"b: kept user b ", "a: disabled for this project (disabledMcpServers in .claude.json)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			imp, err := ParseClaude(claudeFiles(tt.global, tt.settings, tt.mcpjson, tt.local), project, project)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, outcome(imp)); d != "" {
				t.Errorf("outcome (-want +got):\n%s", d)
			}
		})
	}
}

func TestParseClaudeKeepsEnvAsWritten(t *testing.T) {
	imp, err := ParseClaude(claudeFiles(`{"mcpServers":{"s":{"command":"${BIN}/srv","env":{"B":"${HOME}/x","A":"$TOKEN"}}}}`, "", "", ""), project, project)
	if err != nil {
		t.Fatal(err)
	}
	want := []Server{{Name: "s", Client: Claude, Source: Source{File: home + "/.claude.json", Scope: "user"}, Command: "${BIN}/srv",
		Env: []EnvVar{{"A", "$TOKEN"}, {"B", "${HOME}/x"}}}}
	if d := cmp.Diff(want, imp.Servers); d != "" {
		t.Errorf("servers (-want +got):\n%s", d)
	}
}

func TestParseClaudeMCPJSONInRepo(t *testing.T) {
	imp, err := ParseClaude(claudeFiles("", `{"enableAllProjectMcpServers":true}`, `{"mcpServers":{"a":{"command":"a"}}}`, ""), project, project)
	if err != nil {
		t.Fatal(err)
	}
	if len(imp.Servers) != 1 || !imp.Servers[0].Source.InRepo {
		t.Errorf("want one server marked InRepo, got %+v", imp.Servers)
	}
}

func TestParseErrorsNameTheFile(t *testing.T) {
	tests := []struct {
		name string
		run  func() error
		file string
	}{
		{"claude global", func() error {
			_, err := ParseClaude(claudeFiles(`{"mcpServers":`, "", "", ""), project, project)
			return err
		}, home + "/.claude.json"},
		{"claude mcpServers not an object", func() error {
			_, err := ParseClaude(claudeFiles(`{"mcpServers":[]}`, "", "", ""), project, project)
			return err
		}, home + "/.claude.json"},
		{"claude project entry", func() error {
			_, err := ParseClaude(claudeFiles(`{"projects":{"/work/repo":{"mcpServers":1}}}`, "", "", ""), project, project)
			return err
		}, home + "/.claude.json"},
		{"claude settings", func() error {
			_, err := ParseClaude(claudeFiles("", `{"enabledMcpjsonServers":"a b"}`, "", ""), project, project)
			return err
		}, home + "/.claude/settings.json"},
		{"claude repo settings", func() error {
			_, err := ParseClaude(claudeFiles("", "", "", `nope`), project, project)
			return err
		}, project + "/.claude/settings.local.json"},
		{"codex", func() error {
			_, err := ParseCodex(File{Path: "/c/config.toml", Data: []byte("[mcp_servers\n")}, "")
			return err
		}, "/c/config.toml"},
		{"codex mcp_servers not a table", func() error {
			_, err := ParseCodex(File{Path: "/c/config.toml", Data: []byte("mcp_servers = 1\n")}, "")
			return err
		}, "/c/config.toml"},
		{"opencode", func() error {
			_, err := ParseOpencode([]File{{Path: "/o/opencode.jsonc", Data: []byte(`{"mcp": {`)}}, "")
			return err
		}, "/o/opencode.jsonc"},
		{"opencode mcp not an object", func() error {
			_, err := ParseOpencode([]File{{Path: "/o/opencode.json", Data: []byte(`{"mcp": []}`)}}, "")
			return err
		}, "/o/opencode.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.run()
			if err == nil || !strings.Contains(err.Error(), tt.file) {
				t.Errorf("error %v does not name %s", err, tt.file)
			}
		})
	}
}

func TestParseCodex(t *testing.T) {
	tests := []struct {
		name, toml string
		want       []string
	}{
		{"empty", "", nil},
		{"no servers", "model = \"x\"\n", nil},
		{"kinds", `
[mcp_servers.s]
command = "srv"
args = ["a", "${B}"]
[mcp_servers.off]
command = "x"
enabled = false
[mcp_servers.on]
command = "y"
enabled = true
[mcp_servers.web]
url = "https://x/mcp"
bearer_token_env_var = "T"
[mcp_servers.both]
command = "x"
url = "https://x"
[mcp_servers.bad]
args = ["x"]
[mcp_servers.badargs]
command = "x"
args = "y"
[mcp_servers.badenv]
command = "x"
env = { A = 1 }
[mcp_servers.badenabled]
command = "x"
enabled = "no"
`, []string{
			"on: kept config y ", "s: kept config srv a ${B}",
			"bad: invalid: command is missing or not a string", "badargs: invalid: args is not a list of strings",
			"badenabled: invalid: enabled is not a boolean", "badenv: invalid: env is not a table of strings",
			"both: invalid: both command and url", "off: disabled (enabled = false)", "web: remote (streamable http)",
		}},
		{"not a table", "mcp_servers.x = 3\n", []string{"x: invalid: not a table"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := File{Path: "/h/.codex/config.toml"}
			if tt.toml != "" {
				f.Data = []byte(tt.toml)
			}
			imp, err := ParseCodex(f, project)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, outcome(imp)); d != "" {
				t.Errorf("outcome (-want +got):\n%s", d)
			}
		})
	}
}

func TestParseCodexExtra(t *testing.T) {
	imp, err := ParseCodex(File{Path: "/c", Data: []byte(`
[mcp_servers.s]
command = "srv"
env = { Z = "1", A = "2" }
env_vars = ["LANG"]
startup_timeout_sec = 20
cwd = "/work/repo"
[mcp_servers.s.tools.t]
approval_mode = "approve"
`)}, "")
	if err != nil {
		t.Fatal(err)
	}
	s := imp.Servers[0]
	wantExtra := map[string]any{"env_vars": []any{"LANG"}, "startup_timeout_sec": int64(20), "cwd": "/work/repo", "tools": map[string]any{"t": map[string]any{"approval_mode": "approve"}}}
	if d := cmp.Diff(wantExtra, s.Extra); d != "" {
		t.Errorf("extra (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]EnvVar{{"A", "2"}, {"Z", "1"}}, s.Env); d != "" {
		t.Errorf("env (-want +got):\n%s", d)
	}
}

func TestParseOpencode(t *testing.T) {
	global := File{Path: "/h/.config/opencode/opencode.jsonc", Data: []byte(`{
  // the user's servers
  "mcp": {
    "s": {"type": "local", "command": ["srv", "--a"], "environment": {"K": "v"}, "timeout": 5000,},
    "r": {"type": "remote", "url": "https://x", "headers": {"Authorization": "Bearer x"}},
    "p": {"type": "local", "command": ["p"]},
    "q": {"type": "local", "command": ["q"], "enabled": false},
    /* broken ones */
    "n": {"type": "local", "command": "n"},
    "e": {"type": "local", "command": []},
    "t": {"command": ["t"]},
    "b": {"type": "local", "command": ["b"], "enabled": "yes"},
    "v": {"type": "local", "command": ["v"], "environment": {"A": 1}},
    "o": 1,
  },
}`)}
	proj := File{Path: project + "/opencode.json", Data: []byte(`{"mcp": {"p": {"enabled": false}, "q": {"enabled": true}, "l": {"type": "local", "command": ["./tool"]}}}`)}
	imp, err := ParseOpencode([]File{global, {Path: "/absent"}, proj}, project)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"l: kept project ./tool ", "q: kept project q ", "s: kept global srv --a",
		"b: invalid: enabled is not a boolean", "e: invalid: command is not a non-empty list of strings",
		"n: invalid: command is not a non-empty list of strings", "o: invalid: not an object",
		"p: disabled (enabled: false)", "r: remote", "t: unknown type \"\"",
		"v: invalid: environment is not an object of strings",
	}
	if d := cmp.Diff(want, outcome(imp)); d != "" {
		t.Errorf("outcome (-want +got):\n%s", d)
	}
	for _, s := range imp.Servers {
		if s.Name == "s" && (s.Extra["timeout"] != float64(5000) || len(s.Env) != 1) {
			t.Errorf("server s lost its timeout or env: %+v", s)
		}
	}
}

func TestOpencodeFiles(t *testing.T) {
	h := Host{Home: home, Project: project + "/sub", Repo: project, OpencodeConfig: "/etc/oc.json"}
	want := []string{
		home + "/.config/opencode/config.json", home + "/.config/opencode/opencode.json", home + "/.config/opencode/opencode.jsonc",
		"/etc/oc.json",
		project + "/opencode.json", project + "/opencode.jsonc", project + "/sub/opencode.json", project + "/sub/opencode.jsonc",
		project + "/.opencode/opencode.json", project + "/.opencode/opencode.jsonc", project + "/sub/.opencode/opencode.json", project + "/sub/.opencode/opencode.jsonc",
	}
	if d := cmp.Diff(want, OpencodeFiles(h)); d != "" {
		t.Errorf("files (-want +got):\n%s", d)
	}
}
