package mcp

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/aisan-dev/aisan/jail/agent"
	"github.com/tailscale/hujson"
)

// OpencodeFiles lists opencode's config files in the order opencode
// merges them, later over earlier.
func OpencodeFiles(h Host) []string {
	cfg := h.XDGConfigHome
	if cfg == "" {
		cfg = filepath.Join(h.Home, ".config")
	}
	dir := filepath.Join(cfg, "opencode")
	paths := []string{filepath.Join(dir, "config.json"), filepath.Join(dir, "opencode.json"), filepath.Join(dir, "opencode.jsonc")}
	if h.OpencodeConfig != "" {
		paths = append(paths, h.OpencodeConfig)
	}
	dirs := projectDirs(h)
	for _, d := range dirs {
		paths = append(paths, filepath.Join(d, "opencode.json"), filepath.Join(d, "opencode.jsonc"))
	}
	for _, d := range dirs {
		paths = append(paths, filepath.Join(d, ".opencode", "opencode.json"), filepath.Join(d, ".opencode", "opencode.jsonc"))
	}
	return paths
}

// projectDirs returns the directories from the repository root down to
// the project, root first, as opencode walks them.
func projectDirs(h Host) []string {
	if h.Project == "" {
		return nil
	}
	repo := repoOf(h)
	var dirs []string
	for d := filepath.Clean(h.Project); ; d = filepath.Dir(d) {
		dirs = append([]string{d}, dirs...)
		if d == repo || !inRepo(d, repo) || d == filepath.Dir(d) {
			break
		}
	}
	return dirs
}

// ParseOpencode merges the "mcp" objects of opencode's config files (JSONC
// allowed), in the order given, the way opencode does: objects merge key by
// key, other values replace. An entry of type "local" with a non-empty
// command list of strings is kept unless enabled is false; "remote"
// entries are dropped. An entry's source is the last file that set any of
// its keys. The "environment" object is the env; "timeout" is copied
// verbatim into [Server.Extra].
func ParseOpencode(files []File, repo string) (Import, error) {
	imp := Import{Client: Opencode}
	merged := map[string]any{}
	from := map[string]File{}
	for _, f := range files {
		if f.Data == nil {
			continue
		}
		std, err := hujson.Standardize(f.Data)
		if err != nil {
			return imp, fmt.Errorf("parsing %s: %w", f.Path, err)
		}
		var doc struct {
			MCP map[string]any `json:"mcp"`
		}
		if len(strings.TrimSpace(string(std))) == 0 {
			continue
		}
		if err := json.Unmarshal(std, &doc); err != nil {
			return imp, fmt.Errorf("parsing %s: %w", f.Path, err)
		}
		for name, v := range doc.MCP {
			merged[name] = agent.MergeOpencodeConfig(merged[name], v)
			from[name] = f
		}
	}
	results := map[string]result{}
	for name, v := range merged {
		f := from[name]
		src := Source{File: f.Path, Scope: "global", InRepo: inRepo(f.Path, repo)}
		if src.InRepo {
			src.Scope = "project"
		}
		results[name] = opencodeEntry(name, v, src)
	}
	return collect(imp, results), nil
}

func opencodeEntry(name string, v any, src Source) result {
	e, ok := v.(map[string]any)
	if !ok {
		return dropped(Opencode, name, src, "invalid: not an object")
	}
	if r, off := disabled(Opencode, name, src, e, "enabled: false"); off {
		return r
	}
	switch t, _ := e["type"].(string); t {
	case "local":
	case "remote":
		return remote(Opencode, name, src, "remote")
	default:
		return dropped(Opencode, name, src, fmt.Sprintf("unknown type %q", t))
	}
	cmd, ok := stringList(e["command"])
	if !ok || len(cmd) == 0 || cmd[0] == "" {
		return dropped(Opencode, name, src, "invalid: command is not a non-empty list of strings")
	}
	s := Server{Name: name, Client: Opencode, Source: src, Command: cmd[0], Args: cmd[1:]}
	if en, ok := e["environment"]; ok && en != nil {
		m, ok := stringMap(en)
		if !ok {
			return dropped(Opencode, name, src, "invalid: environment is not an object of strings")
		}
		s.Env = sortedEnv(m)
	}
	if t, ok := e["timeout"]; ok {
		s.Extra = map[string]any{"timeout": t}
	}
	return result{server: &s}
}

// LoadOpencode reads opencode's host config files for h (and
// $OPENCODE_CONFIG_CONTENT, merged last) and parses them.
func LoadOpencode(h Host) (Import, error) {
	if err := checkHost(h); err != nil {
		return Import{Client: Opencode}, err
	}
	var files []File
	for _, p := range OpencodeFiles(h) {
		b, err := readHostFile(p)
		if err != nil {
			return Import{Client: Opencode}, err
		}
		files = append(files, File{Path: p, Data: b})
	}
	if h.OpencodeConfigContent != "" {
		files = append(files, File{Path: "$OPENCODE_CONFIG_CONTENT", Data: []byte(h.OpencodeConfigContent)})
	}
	return ParseOpencode(files, repoOf(h))
}
