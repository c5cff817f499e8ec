package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"

	"github.com/aisan-dev/aisan/jail/shared/atomicfile"
	"github.com/pelletier/go-toml/v2"
)

// Names of the files the writers create in the caller's directory.
const (
	ClaudeFile   = "aisan-mcp.json"
	CodexFile    = "config.toml"
	OpencodeFile = "aisan-mcp-opencode.json"
)

type claudeOut struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
}

// ClaudeConfig renders servers as a Claude --mcp-config file. With no
// servers it is still a valid, empty config, so that the box can always
// start Claude with --strict-mcp-config.
func ClaudeConfig(servers []Server) ([]byte, error) {
	out := map[string]claudeOut{}
	for _, s := range servers {
		out[s.Name] = claudeOut{Type: "stdio", Command: s.Command, Args: s.Args, Env: envMap(s.Env)}
	}
	return marshalJSON(map[string]any{"mcpServers": out})
}

// ClaudeArgs returns the arguments that make Claude read only the servers
// in the config at path (the path as the box sees it).
func ClaudeArgs(path string) []string {
	return []string{"--mcp-config", path, "--strict-mcp-config"}
}

// Extra keys are client-specific, so each writer copies them only from
// servers imported from its own client.

// CodexConfig returns base (a Codex config.toml, possibly empty) with its
// mcp_servers table replaced by servers. Every other key of base is kept;
// comments and key order are not, so base should be a file aisan wrote.
func CodexConfig(base []byte, servers []Server) ([]byte, error) {
	doc := map[string]any{}
	if err := toml.Unmarshal(base, &doc); err != nil {
		return nil, fmt.Errorf("parsing the box's codex config: %w", err)
	}
	delete(doc, "mcp_servers")
	if len(servers) > 0 {
		tbl := map[string]any{}
		for _, s := range servers {
			e := map[string]any{}
			if s.Client == Codex {
				for k, v := range s.Extra {
					e[k] = v
				}
			}
			e["command"] = s.Command
			if len(s.Args) > 0 {
				e["args"] = s.Args
			}
			if len(s.Env) > 0 {
				e["env"] = envMap(s.Env)
			}
			tbl[s.Name] = e
		}
		doc["mcp_servers"] = tbl
	}
	b, err := toml.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("encoding the box's codex config: %w", err)
	}
	return b, nil
}

type opencodeOut struct {
	Type        string            `json:"type"`
	Command     []string          `json:"command"`
	Environment map[string]string `json:"environment,omitempty"`
	Enabled     bool              `json:"enabled"`
	Timeout     any               `json:"timeout,omitempty"`
}

// OpencodeConfig renders servers as an opencode config file for
// $OPENCODE_CONFIG.
func OpencodeConfig(servers []Server) ([]byte, error) {
	return opencodeConfig(servers, nil, nil)
}

// opencodeConfig is [OpencodeConfig] with the user's permission block
// (nil for none) and the keys of extra (nil for none; the box's own,
// [OpencodeBoxSettings]): the box's first config layer, so that the rules keep
// the host's order (see opencode.Box in hooks/opencode).
func opencodeConfig(servers []Server, permission json.RawMessage, extra map[string]any) ([]byte, error) {
	out := map[string]opencodeOut{}
	for _, s := range servers {
		o := opencodeOut{Type: "local", Command: append([]string{s.Command}, s.Args...), Environment: envMap(s.Env), Enabled: true}
		if t, ok := s.Extra["timeout"]; ok && s.Client == Opencode {
			o.Timeout = t
		}
		out[s.Name] = o
	}
	top := map[string]any{"$schema": "https://opencode.ai/config.json", "mcp": out}
	if permission != nil {
		top["permission"] = permission
	}
	maps.Copy(top, extra)
	return marshalJSON(top)
}

// WriteClaude writes [ClaudeConfig] to dir/[ClaudeFile] and returns its
// path.
func WriteClaude(dir string, servers []Server) (string, error) {
	b, err := ClaudeConfig(servers)
	if err != nil {
		return "", err
	}
	return writeInDir(dir, ClaudeFile, b)
}

// WriteOpencode writes [OpencodeConfig] to dir/[OpencodeFile] and returns
// its path, the value for OPENCODE_CONFIG (as the box sees dir).
func WriteOpencode(dir string, servers []Server) (string, error) {
	return writeOpencode(dir, servers, nil, nil)
}

func writeOpencode(dir string, servers []Server, permission json.RawMessage, extra map[string]any) (string, error) {
	b, err := opencodeConfig(servers, permission, extra)
	if err != nil {
		return "", err
	}
	return writeInDir(dir, OpencodeFile, b)
}

// WriteCodex merges servers into dir/config.toml (the box's CODEX_HOME
// config, created if missing) and returns its path. Call it after
// whatever else writes that file.
func WriteCodex(dir string, servers []Server) (string, error) {
	if err := checkDir(dir); err != nil {
		return "", err
	}
	path := filepath.Join(dir, CodexFile)
	base, err := readHostFile(path)
	if err != nil {
		return "", err
	}
	b, err := CodexConfig(base, servers)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return writeInDir(dir, CodexFile, b)
}

func envMap(env []EnvVar) map[string]string {
	if len(env) == 0 {
		return nil
	}
	m := make(map[string]string, len(env))
	for _, e := range env {
		m[e.Name] = e.Value
	}
	return m
}

func marshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encoding mcp config: %w", err)
	}
	return buf.Bytes(), nil
}

func checkDir(dir string) error {
	if !filepath.IsAbs(dir) {
		return fmt.Errorf("mcp config directory %q is not absolute", dir)
	}
	st, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("mcp config directory: %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("mcp config directory %s is not a directory (%s); aisan refuses symlinks there", dir, st.Mode().Type())
	}
	return nil
}

// writeInDir replaces dir/name with data, mode 0600, through the atomic
// writer, durably (the client reads it at its start). A symlink at
// dir/name is replaced, never followed; anything else that is not a
// regular file is refused.
func writeInDir(dir, name string, data []byte) (string, error) {
	if err := checkDir(dir); err != nil {
		return "", err
	}
	path := filepath.Join(dir, name)
	if st, err := os.Lstat(path); err == nil {
		if !st.Mode().IsRegular() && st.Mode().Type() != fs.ModeSymlink {
			return "", fmt.Errorf("writing %s: a %s is in the way; remove it", path, st.Mode().Type())
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	return path, atomicfile.Write(path, data, atomicfile.Options{Mode: 0o600, Sync: true})
}
