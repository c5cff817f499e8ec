package mcp

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadHostFile(t *testing.T) {
	dir := t.TempDir()
	reg := filepath.Join(dir, "reg")
	os.WriteFile(reg, []byte("{}"), 0o600)
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o600)
	link := filepath.Join(dir, "link")
	os.Symlink(reg, link)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big")
	f, _ := os.Create(big)
	f.Truncate(MaxFileSize + 1)
	f.Close()

	tests := []struct {
		path    string
		want    string
		nilData bool
		err     string
	}{
		{path: reg, want: "{}"},
		{path: empty, want: ""},
		{path: filepath.Join(dir, "missing"), nilData: true},
		{path: link, err: "it is a symlink"},
		{path: fifo, err: "not a regular file"},
		{path: dir, err: "not a regular file"},
		{path: big, err: "limit"},
	}
	for _, tt := range tests {
		b, err := readHostFile(tt.path)
		switch {
		case tt.err != "":
			if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), tt.path) {
				t.Errorf("%s: err %v, want one naming the file and %q", tt.path, err, tt.err)
			}
		case err != nil:
			t.Errorf("%s: %v", tt.path, err)
		case tt.nilData != (b == nil) || string(b) != tt.want:
			t.Errorf("%s: got %q (nil %v)", tt.path, b, b == nil)
		}
	}
}

// writeTree creates files (path → content) under root; a content starting
// with "->" makes a symlink, a path ending in "/" a directory.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(root, p)
		if strings.HasSuffix(p, "/") {
			os.MkdirAll(full, 0o755)
			continue
		}
		os.MkdirAll(filepath.Dir(full), 0o755)
		var err error
		if target, ok := strings.CutPrefix(c, "->"); ok {
			err = os.Symlink(target, full)
		} else {
			err = os.WriteFile(full, []byte(c), 0o755)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestLoaders(t *testing.T) {
	root := t.TempDir()
	h := Host{Home: root + "/home", Project: root + "/repo", Repo: root + "/repo"}
	writeTree(t, root, map[string]string{
		"home/.claude.json":                   `{"mcpServers":{"u":{"command":"u"}},"projects":{"` + root + `/repo":{"mcpServers":{"l":{"command":"l"}}}}}`,
		"home/.claude/settings.json":          `{"enabledMcpjsonServers":["p"]}`,
		"repo/.mcp.json":                      `{"mcpServers":{"p":{"command":"p"},"x":{"command":"x"}}}`,
		"home/.codex/config.toml":             "[mcp_servers.c]\ncommand = \"c\"\n",
		"home/.config/opencode/opencode.json": `{"mcp":{"o":{"type":"local","command":["o"]}}}`,
		"repo/opencode.jsonc":                 "{\n// project\n\"mcp\":{\"r\":{\"type\":\"local\",\"command\":[\"r\"]}}}",
		"alt/.claude.json":                    `{"mcpServers":{"alt":{"command":"alt"}}}`,
		"alt/config.toml":                     "[mcp_servers.alt]\ncommand = \"alt\"\n",
	})
	imp, err := LoadClaude(h)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"l: kept local l ", "p: kept project p ", "u: kept user u ", "x: not approved in host settings (enabledMcpjsonServers in ~/.claude/settings.json)"}, outcome(imp)); d != "" {
		t.Errorf("claude (-want +got):\n%s", d)
	}
	imp, err = LoadCodex(h)
	if err != nil || len(imp.Servers) != 1 || imp.Servers[0].Name != "c" {
		t.Errorf("codex: %v %+v", err, imp)
	}
	h.OpencodeConfigContent = `{"mcp":{"env":{"type":"local","command":["e"]}}}`
	imp, err = LoadOpencode(h)
	if d := cmp.Diff([]string{"env: kept global e ", "o: kept global o ", "r: kept project r "}, outcome(imp)); err != nil || d != "" {
		t.Errorf("opencode: %v (-want +got):\n%s", err, d)
	}

	alt := h
	alt.ClaudeConfigDir, alt.CodexHome = root+"/alt", root+"/alt"
	if imp, err := LoadClaude(alt); err != nil || imp.Servers[0].Name != "alt" {
		t.Errorf("CLAUDE_CONFIG_DIR: %v %+v", err, imp)
	}
	if imp, err := LoadCodex(alt); err != nil || imp.Servers[0].Name != "alt" {
		t.Errorf("CODEX_HOME: %v %+v", err, imp)
	}

	// A symlinked host file is an error that names it, for every loader.
	os.Rename(h.Home+"/.claude.json", h.Home+"/claude.real")
	os.Symlink(h.Home+"/claude.real", h.Home+"/.claude.json")
	if _, err := LoadClaude(h); err == nil || !strings.Contains(err.Error(), ".claude.json") {
		t.Errorf("symlinked ~/.claude.json: %v", err)
	}
	if _, err := LoadCodex(Host{Home: "relative"}); err == nil {
		t.Error("a relative home was accepted")
	}
}
