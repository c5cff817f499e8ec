package mcp

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// ClaudeFiles are the host files [ParseClaude] reads. A File with nil Data
// is absent.
type ClaudeFiles struct {
	// Global is ~/.claude.json ($CLAUDE_CONFIG_DIR/.claude.json when set):
	// top-level mcpServers (user scope) and projects[<project>]
	// (local scope, its disabledMcpServers, and old approval lists).
	Global File
	// UserSettings is ~/.claude/settings.json: approvals and rejections
	// of .mcp.json servers.
	UserSettings File
	// ProjectMCP is <project>/.mcp.json (project scope).
	ProjectMCP File
	// RepoSettings are <project>/.claude/settings.json and
	// settings.local.json. They are box-writable, so only their rejections
	// (disabledMcpjsonServers) count.
	RepoSettings []File
}

// claudeRemote are the "type" values of Claude's non-stdio transports.
var claudeRemote = []string{"http", "sse", "ws", "sse-ide", "ws-ide", "sdk", "claudeai-proxy", "streamable-http"}

type claudeApproval struct {
	EnableAll *bool    `json:"enableAllProjectMcpServers"`
	Enabled   []string `json:"enabledMcpjsonServers"`
	Disabled  []string `json:"disabledMcpjsonServers"`
}

type claudeProject struct {
	claudeApproval
	MCPServers      map[string]json.RawMessage `json:"mcpServers"`
	DisabledServers []string                   `json:"disabledMcpServers"`
}

type claudeGlobal struct {
	MCPServers map[string]json.RawMessage `json:"mcpServers"`
	Projects   map[string]json.RawMessage `json:"projects"`
}

// ParseClaude decides which of Claude's declarations to import for a box
// whose agent starts in project (repo is the repository root).
//
// Scopes are read as Claude reads them, later overriding earlier by name:
// user (top-level mcpServers), project (.mcp.json), local
// (projects[project].mcpServers). A server in projects[project]
// .disabledMcpServers is dropped.
//
// A .mcp.json server is imported only when host-only settings approve it:
// its exact name in enabledMcpjsonServers, or enableAllProjectMcpServers,
// in the user settings or in the project's entry of ~/.claude.json (where
// older Claude versions kept approvals). A name in any
// disabledMcpjsonServers list, the repository's settings included, rejects
// it. Claude's own approval dialog records approvals in the repository's
// .claude/settings.local.json; since the box can write that file, such an
// approval is reported as not approved, and the user approves the server
// in ~/.claude/settings.json instead.
func ParseClaude(f ClaudeFiles, project, repo string) (Import, error) {
	imp := Import{Client: Claude}
	var g claudeGlobal
	if err := unmarshalJSON(f.Global, &g); err != nil {
		return imp, err
	}
	var proj claudeProject
	if raw, ok := g.Projects[project]; ok {
		if err := json.Unmarshal(raw, &proj); err != nil {
			return imp, fmt.Errorf("parsing %s: projects[%q]: %w", f.Global.Path, project, err)
		}
	}
	var user claudeApproval
	if err := unmarshalJSON(f.UserSettings, &user); err != nil {
		return imp, err
	}
	var mcpjson struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	if err := unmarshalJSON(f.ProjectMCP, &mcpjson); err != nil {
		return imp, err
	}
	rejected := slices.Concat(user.Disabled, proj.Disabled)
	var repoApproved []string
	for _, rf := range f.RepoSettings {
		var a claudeApproval
		if err := unmarshalJSON(rf, &a); err != nil {
			return imp, err
		}
		rejected = append(rejected, a.Disabled...)
		repoApproved = append(repoApproved, a.Enabled...)
		if a.EnableAll != nil && *a.EnableAll {
			repoApproved = append(repoApproved, "*")
		}
	}
	approvedAll := (user.EnableAll != nil && *user.EnableAll) || (proj.EnableAll != nil && *proj.EnableAll)
	approved := slices.Concat(user.Enabled, proj.Enabled)

	results := map[string]result{}
	src := func(file File, scope string) Source {
		return Source{File: file.Path, Scope: scope, InRepo: inRepo(file.Path, repo)}
	}
	for name, raw := range g.MCPServers {
		results[name] = claudeEntry(name, raw, src(f.Global, "user"))
	}
	for name, raw := range mcpjson.MCPServers {
		s := src(f.ProjectMCP, "project")
		switch {
		case slices.ContainsFunc(rejected, func(r string) bool { return strings.EqualFold(r, name) }):
			results[name] = dropped(Claude, name, s, "rejected in disabledMcpjsonServers")
		case approvedAll || slices.Contains(approved, name):
			results[name] = claudeEntry(name, raw, s)
		case slices.Contains(repoApproved, name) || slices.Contains(repoApproved, "*"):
			results[name] = dropped(Claude, name, s, "approved only in the repository's .claude settings, which the box can write; approve it in ~/.claude/settings.json (enabledMcpjsonServers)")
		default:
			results[name] = dropped(Claude, name, s, "not approved in host settings (enabledMcpjsonServers in ~/.claude/settings.json)")
		}
	}
	for name, raw := range proj.MCPServers {
		results[name] = claudeEntry(name, raw, src(f.Global, "local"))
	}
	for _, name := range proj.DisabledServers {
		if r, ok := results[name]; ok && r.server != nil {
			results[name] = dropped(Claude, name, r.server.Source, "disabled for this project (disabledMcpServers in "+filepath.Base(f.Global.Path)+")")
		}
	}
	return collect(imp, results), nil
}

func claudeEntry(name string, raw json.RawMessage, src Source) result {
	var e map[string]json.RawMessage
	if err := json.Unmarshal(raw, &e); err != nil || e == nil {
		return dropped(Claude, name, src, "invalid: not a JSON object")
	}
	var typ string
	if t, ok := e["type"]; ok {
		if json.Unmarshal(t, &typ) != nil {
			return dropped(Claude, name, src, "invalid: type is not a string")
		}
	}
	switch {
	case slices.Contains(claudeRemote, typ):
		return remote(Claude, name, src, "remote ("+typ+")")
	case typ != "" && typ != "stdio":
		return dropped(Claude, name, src, fmt.Sprintf("unknown type %q", typ))
	}
	if _, ok := e["url"]; ok && typ == "" {
		return dropped(Claude, name, src, "invalid: a url with no type (Claude reads no type as stdio)")
	}
	s := Server{Name: name, Client: Claude, Source: src}
	if err := decodeField(e, "command", &s.Command); err != nil || s.Command == "" {
		return dropped(Claude, name, src, "invalid: command is missing or not a string")
	}
	if err := decodeField(e, "args", &s.Args); err != nil {
		return dropped(Claude, name, src, "invalid: args is not a list of strings")
	}
	env := map[string]string{}
	if err := decodeField(e, "env", &env); err != nil {
		return dropped(Claude, name, src, "invalid: env is not an object of strings")
	}
	s.Env = sortedEnv(env)
	return result{server: &s}
}

// result is one name's outcome while scopes override each other.
type result struct {
	server  *Server
	dropped *Dropped
}

func dropped(c Client, name string, src Source, reason string) result {
	return result{dropped: &Dropped{Name: name, Client: c, Source: src, Reason: reason}}
}

// remote is a server reached over the network: it stays on the host.
func remote(c Client, name string, src Source, reason string) result {
	r := dropped(c, name, src, reason)
	r.dropped.Detail = "it is served over the network, which the box does not reach"
	return r
}

// collect turns the per-name results into an Import sorted by name, so
// the output does not depend on map order.
func collect(imp Import, results map[string]result) Import {
	names := make([]string, 0, len(results))
	for n := range results {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		r := results[n]
		if r.server != nil {
			imp.Servers = append(imp.Servers, *r.server)
		} else {
			imp.Dropped = append(imp.Dropped, *r.dropped)
		}
	}
	return imp
}

func unmarshalJSON(f File, v any) error {
	if f.Data == nil || len(strings.TrimSpace(string(f.Data))) == 0 {
		return nil
	}
	if err := json.Unmarshal(f.Data, v); err != nil {
		return fmt.Errorf("parsing %s: %w", f.Path, err)
	}
	return nil
}

func decodeField(e map[string]json.RawMessage, key string, v any) error {
	raw, ok := e[key]
	if !ok || string(raw) == "null" {
		return nil
	}
	return json.Unmarshal(raw, v)
}

func sortedEnv(m map[string]string) []EnvVar {
	if len(m) == 0 {
		return nil
	}
	out := make([]EnvVar, 0, len(m))
	for k, v := range m {
		out = append(out, EnvVar{Name: k, Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// ClaudePaths returns the files [LoadClaude] reads for h.
func ClaudePaths(h Host) ClaudeFiles {
	global := filepath.Join(h.Home, ".claude.json")
	settings := filepath.Join(h.Home, ".claude", "settings.json")
	if h.ClaudeConfigDir != "" {
		global = filepath.Join(h.ClaudeConfigDir, ".claude.json")
		settings = filepath.Join(h.ClaudeConfigDir, "settings.json")
	}
	f := ClaudeFiles{Global: File{Path: global}, UserSettings: File{Path: settings}}
	if h.Project != "" {
		f.ProjectMCP = File{Path: filepath.Join(h.Project, ".mcp.json")}
		f.RepoSettings = []File{
			{Path: filepath.Join(h.Project, ".claude", "settings.json")},
			{Path: filepath.Join(h.Project, ".claude", "settings.local.json")},
		}
	}
	return f
}

// LoadClaude reads Claude's host files for h and parses them.
func LoadClaude(h Host) (Import, error) {
	if err := checkHost(h); err != nil {
		return Import{Client: Claude}, err
	}
	f := ClaudePaths(h)
	var err error
	for _, p := range []*File{&f.Global, &f.UserSettings, &f.ProjectMCP} {
		if p.Path == "" {
			continue
		}
		if p.Data, err = readHostFile(p.Path); err != nil {
			return Import{Client: Claude}, err
		}
	}
	for i := range f.RepoSettings {
		if f.RepoSettings[i].Data, err = readHostFile(f.RepoSettings[i].Path); err != nil {
			return Import{Client: Claude}, err
		}
	}
	return ParseClaude(f, h.Project, repoOf(h))
}

func repoOf(h Host) string {
	if h.Repo != "" {
		return h.Repo
	}
	return h.Project
}
