package mcp

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPrepare(t *testing.T) {
	root := t.TempDir()
	H := root + "/home"
	writeTree(t, root, map[string]string{
		"home/.claude.json":                   `{"mcpServers":{"a":{"command":"tool","args":["--token=abcdef"],"env":{"GH_TOKEN":"x","MODE":"1"}},"w":{"type":"sse","url":"u"}}}`,
		"home/.codex/config.toml":             "[mcp_servers.a]\ncommand = \"tool\"\n[mcp_servers.w]\nurl = \"u\"\n",
		"home/.config/opencode/opencode.json": `{"mcp":{"a":{"type":"local","command":["tool"]},"w":{"type":"remote","url":"u"}}}`,
		"home/bin/tool":                       "\x7fELF",
		"state/":                              "",
	})
	rh := ResolveHost{PATH: H + "/bin", Home: H}
	for _, c := range []Client{Claude, Codex, Opencode} {
		t.Run(string(c), func(t *testing.T) {
			state := root + "/state/" + string(c)
			os.MkdirAll(state, 0o700)
			o := Options{Client: c, Host: Host{Home: H}, AllowEnv: []string{"GH_TOKEN"}, StateDir: state, BoxStateDir: "/box/state", Resolve: rh, DryRun: true}
			p, err := Prepare(o)
			if err != nil {
				t.Fatal(err)
			}
			if entries, _ := os.ReadDir(state); len(entries) != 0 || p.ConfigPath != "" {
				t.Errorf("a dry run wrote %v", entries)
			}
			if d := cmp.Diff([]string{H + "/bin/tool"}, p.Binds); d != "" {
				t.Errorf("binds (-want +got):\n%s", d)
			}
			if len(p.Lines) == 0 || !strings.Contains(p.Lines[0], `"w"`) {
				t.Errorf("lines do not report the dropped remote server: %q", p.Lines)
			}
			switch c {
			case Claude:
				if d := cmp.Diff([]string{"--mcp-config", "/box/state/" + ClaudeFile, "--strict-mcp-config"}, p.Args); d != "" {
					t.Errorf("args (-want +got):\n%s", d)
				}
				want := []string{
					`claude mcp server "w" from ` + H + `/.claude.json not imported: remote (sse): it is served over the network, which the box does not reach`,
					`claude mcp server "a" from ` + H + `/.claude.json: argument 1 looks like a secret and is copied as written; move it into env and allow it with mcp_env`,
					`claude mcp server "a" from ` + H + `/.claude.json receives env GH_TOKEN (allowed by mcp_env)`,
				}
				if d := cmp.Diff(want, p.Lines); d != "" {
					t.Errorf("lines (-want +got):\n%s", d)
				}
				if want := `claude: 1 mcp server(s) start in the box (a); not imported: w (remote (sse); ` + H + `/.claude.json)`; p.Summary != want {
					t.Errorf("summary %q, want %q", p.Summary, want)
				}
				want = []string{`claude mcp server "a" from ` + H + `/.claude.json: ["tool" "[redacted]"] GH_TOKEN="[redacted]" MODE="1"`}
				if d := cmp.Diff(want, Explain(p.Import)); d != "" {
					t.Errorf("explain (-want +got):\n%s", d)
				}
			case Opencode:
				if d := cmp.Diff([]string{"OPENCODE_CONFIG=/box/state/" + OpencodeFile}, p.Env); d != "" {
					t.Errorf("env (-want +got):\n%s", d)
				}
			}
			o.DryRun = false
			if p, err = Prepare(o); err != nil {
				t.Fatal(err)
			}
			if filepath.Dir(p.ConfigPath) != state {
				t.Errorf("wrote %q, not into the state dir", p.ConfigPath)
			}
			if b, err := os.ReadFile(p.ConfigPath); err != nil || !strings.Contains(string(b), H+"/bin/tool") && !strings.Contains(string(b), `"tool"`) && !strings.Contains(string(b), `'tool'`) {
				t.Errorf("config %s: %v\n%s", p.ConfigPath, err, b)
			}
		})
	}
	if _, err := Prepare(Options{Client: "vim", StateDir: "/s", BoxStateDir: "/s"}); err == nil {
		t.Error("an unknown client was accepted")
	}
	if _, err := Prepare(Options{Client: Claude, Host: Host{Home: H}, StateDir: "s", BoxStateDir: "/s"}); err == nil {
		t.Error("a relative state dir was accepted")
	}
	// A command that is not on the box PATH drops its server, with the
	// server, its file and the bind spec lines that would bring it; the
	// launch goes on with an empty config.
	hostBin := root + "/hostbin"
	writeTree(t, root, map[string]string{"hostbin/tool": "\x7fELF"})
	p, err := Prepare(Options{Client: Claude, Host: Host{Home: H}, StateDir: root + "/state", BoxStateDir: "/s", Resolve: ResolveHost{PATH: "/nonexistent", HostPATH: hostBin}})
	if err != nil {
		t.Fatalf("a server that cannot run stopped the import: %v", err)
	}
	if len(p.Import.Servers) != 0 || !strings.Contains(p.Summary, "a (cannot run in the box; "+H+"/.claude.json)") {
		t.Errorf("import %+v, summary %q", p.Import, p.Summary)
	}
	want := `claude mcp server "a" from ` + H + `/.claude.json not imported: cannot run in the box: command "tool" is not on the box PATH (/nonexistent); tool is in ` + hostBin + ` on the host: ro = ["` + hostBin + `"] and path = ["` + hostBin + `"] in a bind spec (--binds FILE) let the box run it`
	if !slices.Contains(p.Lines, want) {
		t.Errorf("lines %q\nlack %q", p.Lines, want)
	}
	if b, err := os.ReadFile(p.ConfigPath); err != nil || strings.Contains(string(b), "tool") {
		t.Errorf("the written config: %v\n%s", err, b)
	}
	// A host file that does not parse imports nothing, and says so.
	writeTree(t, root, map[string]string{"home/.claude.json": `{"mcpServers": `})
	p, err = Prepare(Options{Client: Claude, Host: Host{Home: H}, StateDir: root + "/state", BoxStateDir: "/s", Resolve: rh})
	if err != nil || len(p.Import.Servers) != 0 || len(p.Lines) != 1 || !strings.Contains(p.Lines[0], H+"/.claude.json") || !strings.Contains(p.Lines[0], "no mcp server imported") {
		t.Errorf("a broken ~/.claude.json: %v, lines %q", err, p.Lines)
	}
	// --no-mcp imports nothing, and still gives Claude its empty config.
	writeTree(t, root, map[string]string{"home/.claude.json": `{"mcpServers":{"a":{"command":"tool"}}}`})
	p, err = Prepare(Options{Client: Claude, Host: Host{Home: H}, StateDir: root + "/state", BoxStateDir: "/s", Resolve: rh, None: true})
	if err != nil || len(p.Import.Servers) != 0 || p.Summary != "" || len(p.Lines) != 0 || len(p.Args) != 3 || len(p.Binds) != 0 {
		t.Errorf("--no-mcp: %v, %+v", err, p)
	}
	// A server that fetches its package at start says it needs the
	// network, unless the box has it.
	writeTree(t, root, map[string]string{"home/.claude.json": `{"mcpServers":{"e":{"command":"sh","args":["-c","npx -y x"]},"n":{"command":"npx","args":["-y","@scope/server"]}}}`, "home/bin/npx": "\x7fELF", "home/bin/sh": "\x7fELF"})
	p, _ = Prepare(Options{Client: Claude, Host: Host{Home: H}, StateDir: root + "/state", BoxStateDir: "/s", Resolve: rh, DryRun: true})
	if len(p.Lines) != 1 || !strings.Contains(p.Lines[0], `mcp server "n"`) || !strings.Contains(p.Lines[0], "runs npx") || !strings.Contains(p.Lines[0], "--allow-host") {
		t.Errorf("npx: lines %q", p.Lines)
	}
	if p, _ = Prepare(Options{Client: Claude, Host: Host{Home: H}, StateDir: root + "/state", BoxStateDir: "/s", Resolve: rh, DryRun: true, Net: true}); len(p.Lines) != 0 {
		t.Errorf("npx with the host network: lines %q", p.Lines)
	}
}
