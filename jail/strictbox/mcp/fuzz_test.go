package mcp

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func seed(f *testing.F, name string) []byte {
	b, err := os.ReadFile(filepath.Join("testdata", "seed", name))
	if err != nil {
		f.Fatal(err)
	}
	return b
}

// checkImport asserts what every parser promises: kept servers have a
// command, and each name appears once.
func checkImport(t *testing.T, imp Import) {
	seen := map[string]bool{}
	for _, s := range imp.Servers {
		if s.Command == "" {
			t.Fatalf("server %q kept without a command", s.Name)
		}
		if seen[s.Name] {
			t.Fatalf("name %q twice", s.Name)
		}
		seen[s.Name] = true
	}
	for _, d := range imp.Dropped {
		if seen[d.Name] || d.Reason == "" {
			t.Fatalf("dropped %q twice or without a reason", d.Name)
		}
		seen[d.Name] = true
	}
}

// sameServers compares what a writer's output must preserve.
func sameServers(t *testing.T, what string, a, b []Server) {
	if len(a) != len(b) {
		t.Fatalf("%s: %d servers became %d", what, len(a), len(b))
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Command != b[i].Command || !reflect.DeepEqual(nonNil(a[i].Args), nonNil(b[i].Args)) || !reflect.DeepEqual(nonNilEnv(a[i].Env), nonNilEnv(b[i].Env)) {
			t.Fatalf("%s: %+v became %+v", what, a[i], b[i])
		}
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nonNilEnv(s []EnvVar) []EnvVar {
	if s == nil {
		return []EnvVar{}
	}
	return s
}

func FuzzParseClaude(f *testing.F) {
	f.Add(seed(f, "claude.json"), seed(f, "settings.json"), seed(f, "mcp.json"), []byte(`{"enableAllProjectMcpServers":true}`))
	f.Add([]byte(`{"mcpServers":{"a":{"command":"a"}}}`), []byte(``), []byte(`{"mcpServers":{"a":{"url":"x"}}}`), []byte(`{}`))
	f.Add([]byte(`{"projects":{"/work/repo":{"enableAllProjectMcpServers":true}}}`), []byte(`null`), []byte(`{"mcpServers":{"b":{"command":"b"}}}`), []byte(`{"disabledMcpjsonServers":["B"]}`))
	f.Fuzz(func(t *testing.T, global, settings, mcpjson, local []byte) {
		files := ClaudeFiles{
			Global: File{Path: "/h/.claude.json", Data: global}, UserSettings: File{Path: "/h/.claude/settings.json", Data: settings},
			ProjectMCP: File{Path: project + "/.mcp.json", Data: mcpjson}, RepoSettings: []File{{Path: project + "/.claude/settings.local.json", Data: local}},
		}
		imp, err := ParseClaude(files, project, project)
		if err != nil {
			return
		}
		again, _ := ParseClaude(files, project, project)
		if !reflect.DeepEqual(imp, again) {
			t.Fatal("not deterministic")
		}
		checkImport(t, imp)
		// The box-writable files alone never get a server kept.
		boxOnly, err := ParseClaude(ClaudeFiles{ProjectMCP: files.ProjectMCP, RepoSettings: files.RepoSettings}, project, project)
		if err == nil && len(boxOnly.Servers) != 0 {
			t.Fatalf("repository files alone kept %+v", boxOnly.Servers)
		}
		out, err := ClaudeConfig(imp.Servers)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseClaude(ClaudeFiles{Global: File{Path: "/x", Data: out}}, "", "")
		if err != nil {
			t.Fatal(err)
		}
		sameServers(t, "claude round trip", imp.Servers, back.Servers)
	})
}

func FuzzParseCodex(f *testing.F) {
	f.Add(seed(f, "config.toml"))
	f.Add([]byte("[mcp_servers.a]\ncommand = \"a\"\nargs = [\"x\"]\n[mcp_servers.a.env]\nK = \"v\"\n"))
	f.Add([]byte("mcp_servers = { a = { command = \"a\", enabled = false }, b = { url = \"u\" } }\n"))
	f.Add([]byte("[mcp_servers.t]\ncommand = \"t\"\nwhen = 1979-05-27T07:32:00Z\nnested = [[1, 2], [\"a\"]]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		file := File{Path: "/h/.codex/config.toml", Data: data}
		imp, err := ParseCodex(file, "")
		if err != nil {
			return
		}
		again, _ := ParseCodex(file, "")
		if !reflect.DeepEqual(imp, again) {
			t.Fatal("not deterministic")
		}
		checkImport(t, imp)
		out, err := CodexConfig(nil, imp.Servers)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseCodex(File{Path: "/x", Data: out}, "")
		if err != nil {
			t.Fatalf("%v in\n%s", err, out)
		}
		sameServers(t, "codex round trip", imp.Servers, back.Servers)
	})
}

func FuzzParseOpencode(f *testing.F) {
	f.Add(seed(f, "opencode.jsonc"), []byte(`{"mcp":{"fs":{"enabled":false}}}`))
	f.Add([]byte(`{"mcp":{"a":{"type":"local","command":["a","b"]}}}`), []byte("{/* c */ \"mcp\": {\"a\": {\"environment\": {\"K\": \"v\",},},},}"))
	f.Add([]byte(`{"mcp":{"a":{"type":"remote","url":"u"}}}`), []byte(`{"mcp":null}`))
	f.Fuzz(func(t *testing.T, global, proj []byte) {
		files := []File{{Path: "/h/.config/opencode/opencode.jsonc", Data: global}, {Path: project + "/opencode.json", Data: proj}}
		imp, err := ParseOpencode(files, project)
		if err != nil {
			return
		}
		again, _ := ParseOpencode(files, project)
		if !reflect.DeepEqual(imp, again) {
			t.Fatal("not deterministic")
		}
		checkImport(t, imp)
		out, err := OpencodeConfig(imp.Servers)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseOpencode([]File{{Path: "/x", Data: out}}, "")
		if err != nil {
			t.Fatal(err)
		}
		sameServers(t, "opencode round trip", imp.Servers, back.Servers)
	})
}

func FuzzParseShebang(f *testing.F) {
	for _, s := range []string{"#!/bin/sh\n", "#!/usr/bin/env -S node --x\n", "#! \t\r\n", "#!/usr/bin/env A=1 -i\n", "\x7fELF"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, head []byte) {
		got := ParseShebang(head)
		if strings.ContainsAny(got, " \t\n\r") {
			t.Fatalf("interpreter %q has whitespace", got)
		}
		if got != "" && !bytes.HasPrefix(head, []byte("#!")) {
			t.Fatalf("interpreter %q from a file without #!", got)
		}
	})
}
