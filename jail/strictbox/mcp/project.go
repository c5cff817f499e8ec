package mcp

import (
	"encoding/json"
	"maps"
	"path/filepath"
	"slices"
	"strings"
)

// ProjectPrograms returns the paths that the local servers of a project
// MCP file (Claude's .mcp.json, opencode's opencode.json or
// opencode.jsonc, a trusted project's .codex/config.toml; path is where
// it lies, data its text) name literally: a command given as a path, and
// every argument, as the client started in the project's directory (the
// file's, or the parent of .codex; a Codex server's cwd) would take it. A host client starts these
// servers without asking again when their file is unchanged (Claude
// approves a .mcp.json server by its name, opencode asks nothing, Codex
// trusts the project), so a
// program or script the box could rewrite beside it would run on the
// host at the user's next start of that client.
//
// Arguments that are options, or that hold a variable the client
// expands, name nothing that can be known. The paths are absolute and
// clean, each once; whether each exists, and what it is, is left to the
// caller. A file that does not parse names nothing (its client could
// start no server from it either); nor does a file of another name.
func ProjectPrograms(path string, data []byte) []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range ProjectCommands(path, data) {
		args := c.Argv[1:]
		if strings.Contains(c.Argv[0], "/") {
			args = c.Argv
		}
		for _, a := range args {
			if v, ok := strings.CutPrefix(a, "--"); ok {
				// --script=tools/server.js names a file too.
				_, val, ok := strings.Cut(v, "=")
				if !ok {
					continue
				}
				a = val
			}
			if a == "" || strings.Contains(a, "$") || strings.HasPrefix(a, "-") {
				continue
			}
			if !filepath.IsAbs(a) {
				a = filepath.Join(c.Dir, a)
			}
			a = filepath.Clean(a)
			if !seen[a] {
				seen[a] = true
				out = append(out, a)
			}
		}
	}
	return out
}

// Command is a local server's command line as a project MCP file gives
// it: the program and its arguments (Argv, unexpanded), the directory
// the client starts it in (Dir), and the project's directory (Root).
type Command struct {
	Argv      []string
	Dir, Root string
}

// ProjectCommands returns the command lines of the local servers of a
// project MCP file, read as [ProjectPrograms] reads them, for what the
// programs they start run in turn.
func ProjectCommands(path string, data []byte) []Command {
	var servers []Server
	switch filepath.Base(path) {
	case ".mcp.json":
		var doc struct {
			MCPServers map[string]json.RawMessage `json:"mcpServers"`
		}
		if json.Unmarshal(data, &doc) != nil {
			return nil
		}
		names := slices.Sorted(maps.Keys(doc.MCPServers))
		for _, name := range names {
			if r := claudeEntry(name, doc.MCPServers[name], Source{File: path}); r.server != nil {
				servers = append(servers, *r.server)
			}
		}
	case "opencode.json", "opencode.jsonc":
		imp, err := ParseOpencode([]File{{Path: path, Data: data}}, "")
		if err != nil {
			return nil
		}
		servers = imp.Servers
	case "config.toml":
		// A trusted project's .codex/config.toml: Codex starts its
		// servers in the project's directory, or in their cwd.
		if filepath.Base(filepath.Dir(path)) != ".codex" {
			return nil
		}
		imp, err := ParseCodex(File{Path: path, Data: data}, "")
		if err != nil {
			return nil
		}
		servers = imp.Servers
	default:
		return nil
	}
	base := filepath.Dir(path)
	if filepath.Base(path) == "config.toml" || filepath.Base(base) == ".opencode" {
		// .codex/config.toml; .opencode/opencode.json, whose servers
		// start in the project's directory too.
		base = filepath.Dir(base)
	}
	var out []Command
	for _, s := range servers {
		dir := base
		if cwd, ok := s.Extra["cwd"].(string); ok && cwd != "" && !strings.Contains(cwd, "$") {
			if !filepath.IsAbs(cwd) {
				cwd = filepath.Join(base, cwd)
			}
			dir = filepath.Clean(cwd)
		}
		if s.Command != "" {
			out = append(out, Command{Argv: append([]string{s.Command}, s.Args...), Dir: dir, Root: base})
		}
	}
	return out
}
