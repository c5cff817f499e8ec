package mcp

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/pelletier/go-toml/v2"
)

// codexRemoteKeys mark a streamable-HTTP server; they are also never
// copied into Extra, since they can name or carry credentials.
var codexRemoteKeys = []string{"url", "bearer_token", "bearer_token_env_var", "http_headers", "env_http_headers", "http_headers_helper"}

// ParseCodex decides which [mcp_servers.<name>] tables of a Codex
// config.toml to import: a table with a string command is a stdio server
// and is kept unless enabled = false; a table with a url is remote and is
// dropped. Keys other than command, args, env and enabled (timeouts,
// env_vars, cwd, tool tables) are copied verbatim into [Server.Extra].
func ParseCodex(f File, repo string) (Import, error) {
	imp := Import{Client: Codex}
	if f.Data == nil {
		return imp, nil
	}
	var doc map[string]any
	if err := toml.Unmarshal(f.Data, &doc); err != nil {
		return imp, fmt.Errorf("parsing %s: %w", f.Path, err)
	}
	raw, ok := doc["mcp_servers"]
	if !ok {
		return imp, nil
	}
	table, ok := raw.(map[string]any)
	if !ok {
		return imp, fmt.Errorf("parsing %s: mcp_servers is a %T, not a table", f.Path, raw)
	}
	src := Source{File: f.Path, Scope: "config", InRepo: inRepo(f.Path, repo)}
	results := map[string]result{}
	for name, v := range table {
		results[name] = codexEntry(name, v, src)
	}
	return collect(imp, results), nil
}

func codexEntry(name string, v any, src Source) result {
	e, ok := v.(map[string]any)
	if !ok {
		return dropped(Codex, name, src, "invalid: not a table")
	}
	if r, off := disabled(Codex, name, src, e, "enabled = false"); off {
		return r
	}
	cmd, hasCmd := e["command"]
	_, hasURL := e["url"]
	switch {
	case hasURL && hasCmd:
		return dropped(Codex, name, src, "invalid: both command and url")
	case hasURL:
		return remote(Codex, name, src, "remote (streamable http)")
	}
	s := Server{Name: name, Client: Codex, Source: src}
	if s.Command, ok = cmd.(string); !ok || s.Command == "" {
		return dropped(Codex, name, src, "invalid: command is missing or not a string")
	}
	if a, ok := e["args"]; ok {
		if s.Args, ok = stringList(a); !ok {
			return dropped(Codex, name, src, "invalid: args is not a list of strings")
		}
	}
	if en, ok := e["env"]; ok {
		m, ok := stringMap(en)
		if !ok {
			return dropped(Codex, name, src, "invalid: env is not a table of strings")
		}
		s.Env = sortedEnv(m)
	}
	for k, val := range e {
		if k == "command" || k == "args" || k == "env" || k == "enabled" || slices.Contains(codexRemoteKeys, k) {
			continue
		}
		if s.Extra == nil {
			s.Extra = map[string]any{}
		}
		s.Extra[k] = val
	}
	return result{server: &s}
}

func stringList(v any) ([]string, bool) {
	l, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(l))
	for _, x := range l {
		s, ok := x.(string)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

func stringMap(v any) (map[string]string, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	out := make(map[string]string, len(m))
	for k, x := range m {
		s, ok := x.(string)
		if !ok {
			return nil, false
		}
		out[k] = s
	}
	return out, true
}

// CodexPath returns the config.toml [LoadCodex] reads for h.
func CodexPath(h Host) string {
	if h.CodexHome != "" {
		return filepath.Join(h.CodexHome, "config.toml")
	}
	return filepath.Join(h.Home, ".codex", "config.toml")
}

// LoadCodex reads Codex's host config.toml for h and parses it.
func LoadCodex(h Host) (Import, error) {
	if err := checkHost(h); err != nil {
		return Import{Client: Codex}, err
	}
	p := CodexPath(h)
	b, err := readHostFile(p)
	if err != nil {
		return Import{Client: Codex}, err
	}
	return ParseCodex(File{Path: p, Data: b}, repoOf(h))
}

// disabled reports an entry whose "enabled" key is false (or not a
// boolean) as dropped; how is the client's spelling, for the reason.
func disabled(c Client, name string, src Source, e map[string]any, how string) (result, bool) {
	en, ok := e["enabled"]
	if !ok {
		return result{}, false
	}
	b, isBool := en.(bool)
	if !isBool {
		return dropped(c, name, src, "invalid: enabled is not a boolean"), true
	}
	if !b {
		return dropped(c, name, src, "disabled ("+how+")"), true
	}
	return result{}, false
}
