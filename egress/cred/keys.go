package cred

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"

	"github.com/aisan-dev/aisan/jail/shared/regfile"
)

// KeyFromEnv picks an API key source in the documented order: the helper
// command named by commandVar, the file named by fileVar, then the key in
// keyVar itself. It returns the source and the name of the variable it
// came from (for messages; never the key). extra, if not nil, is tried
// after keyVar (for example the key in Codex's auth.json).
func KeyFromEnv(getenv func(string) string, commandVar, fileVar, keyVar string, extra Source) (Source, string, error) {
	if line := getenv(commandVar); line != "" {
		c, err := NewCommand(commandVar, line)
		if err != nil {
			return nil, "", err
		}
		return c, commandVar, nil
	}
	if p := getenv(fileVar); p != "" {
		if !filepath.IsAbs(p) {
			return nil, "", fmt.Errorf("%s=%s: the path must be absolute", fileVar, p)
		}
		return File{Path: p}, fileVar, nil
	}
	if k := getenv(keyVar); k != "" {
		if !validToken(k) {
			return nil, "", fmt.Errorf("%s holds spaces or control characters", keyVar)
		}
		return Static{S: NewSecret(k)}, keyVar, nil
	}
	if extra != nil {
		return extra, "", nil
	}
	return nil, "", fmt.Errorf("no API key: set %s (a command printing the key), %s (a file holding it) or %s", commandVar, fileVar, keyVar)
}

// CodexAPIKey is the OPENAI_API_KEY field of Codex's auth.json (an API-key
// login), read on every call.
type CodexAPIKey struct{ Home string }

// Token reads the key.
func (c CodexAPIKey) Token(context.Context) (Secret, error) {
	path := filepath.Join(c.Home, "auth.json")
	b, err := regfile.Read(path, maxCredFile)
	if err != nil {
		return Secret{}, fmt.Errorf("the Codex login: %w", err)
	}
	var v struct {
		Key *string `json:"OPENAI_API_KEY"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return Secret{}, fmt.Errorf("the Codex login %s is not valid JSON: %w", path, err)
	}
	if v.Key == nil || *v.Key == "" || !validToken(*v.Key) {
		return Secret{}, fmt.Errorf("the Codex login %s holds no API key; set OPENAI_API_KEY or AISAN_OPENAI_KEY_COMMAND", path)
	}
	return NewSecret(*v.Key), nil
}

// OpencodeKey is one provider's entry in opencode's auth.json
// ($XDG_DATA_HOME/opencode/auth.json), read on every call. Only "api"
// entries are usable: an OAuth login refreshes itself inside opencode,
// which the box cannot do without the refresh token.
type OpencodeKey struct {
	Path     string
	Provider string
}

// ErrOpencodeOAuth is returned for a provider logged in with OAuth.
var ErrOpencodeOAuth = errors.New("is an OAuth login, which strict mode cannot use: the box never holds a refresh token, and opencode refreshes it itself; use an API key for this provider (`opencode auth login`, choose the API key method) or run without --strict")

// Token reads the key.
func (o OpencodeKey) Token(context.Context) (Secret, error) {
	b, err := regfile.Read(o.Path, maxCredFile)
	if err != nil {
		return Secret{}, fmt.Errorf("the opencode login: %w", err)
	}
	var all map[string]struct {
		Type string `json:"type"`
		Key  string `json:"key"`
	}
	if err := json.Unmarshal(b, &all); err != nil {
		return Secret{}, fmt.Errorf("the opencode login %s is not valid JSON: %w", o.Path, err)
	}
	e, ok := all[o.Provider]
	switch {
	case !ok:
		return Secret{}, fmt.Errorf("the opencode login %s has no entry for provider %q; run `opencode auth login` on the host", o.Path, o.Provider)
	case e.Type != "api":
		return Secret{}, fmt.Errorf("the opencode login for provider %q (type %q) %w", o.Provider, e.Type, ErrOpencodeOAuth)
	case e.Key == "" || !validToken(e.Key):
		return Secret{}, fmt.Errorf("the opencode login %s has no usable key for provider %q", o.Path, o.Provider)
	}
	return NewSecret(e.Key), nil
}

// OpencodeAPIProviders lists, sorted, the providers that opencode's
// auth.json at path holds an API key for (the ones a strict box can be
// served); OAuth entries are left out. A missing file gives none.
func OpencodeAPIProviders(path string) ([]string, error) {
	b, err := regfile.Read(path, maxCredFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var all map[string]struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(b, &all); err != nil {
		return nil, fmt.Errorf("the opencode login %s is not valid JSON: %w", path, err)
	}
	var ids []string
	for id, e := range all {
		if e.Type == "api" {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids, nil
}
