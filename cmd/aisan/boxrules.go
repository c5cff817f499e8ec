//go:build !aisanfront

package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"

	"github.com/aisan-dev/aisan/hooks"
	"github.com/aisan-dev/aisan/hooks/opencode"
	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/agent"
	"github.com/aisan-dev/aisan/jail/shared/regfile"
	"github.com/aisan-dev/aisan/jail/strictbox"
)

// maxSettings caps what is read of the user's Claude settings.
const maxSettings = 4 << 20

// boxRules reads the user's own rules for a strict box of kind (the
// strict box reads no agent settings itself): Claude's settings.json,
// opencode's permission layers. nil for an agent without rules to bring.
func boxRules(kind jail.Kind) strictbox.AgentRules {
	home := os.Getenv("HOME")
	if home == "" {
		if u, err := user.Current(); err == nil {
			home = u.HomeDir
		}
	}
	switch kind {
	case jail.KindClaude:
		file := filepath.Join(agent.Claude.Dir(home, os.Getenv), "settings.json")
		return func(v strictbox.RulesView) (strictbox.BoxRules, error) {
			return claudeBoxRules(file, v)
		}
	case jail.KindCodex:
		dir := agent.Codex.Dir(home, os.Getenv)
		return func(strictbox.RulesView) (strictbox.BoxRules, error) {
			return codexBoxRules(dir), nil
		}
	case jail.KindOpencode:
		return func(v strictbox.RulesView) (strictbox.BoxRules, error) {
			return opencodeBoxRules(home, v.Project, os.Getenv)
		}
	}
	return nil
}

// claudeBoxRules reads the user's Claude settings file for a box.
func claudeBoxRules(file string, v strictbox.RulesView) (strictbox.BoxRules, error) {
	r := strictbox.BoxRules{Source: file, Keys: hooks.ClaudeBoxKeys}
	data, err := regfile.Read(file, maxSettings)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return r, nil
	case err != nil:
		return r, withHint(fmt.Errorf("reading %s: %w", file, err), "the box takes the permissions, hooks and plain preferences (model…) of that file; make it a readable regular file")
	}
	b, err := hooks.ClaudeBoxRules(data, file, hooks.BoxView(v))
	if err != nil {
		return r, withHint(err, "fix the file: the box would run without the rules it holds")
	}
	r.Settings, r.Binds, r.Left, r.AutoMode = b.Settings, b.Binds, b.Left, b.AutoMode
	return r, nil
}

// codexBoxRules says what of Codex's rules in dir stays on the host: its
// rules files are bound into the box (see jail.StrictOptions.CodexRules),
// its hooks are not, since Codex runs a hook only once trusted there.
func codexBoxRules(dir string) strictbox.BoxRules {
	file := filepath.Join(dir, "hooks.json")
	r := strictbox.BoxRules{Source: file}
	if _, err := os.Stat(file); err == nil {
		r.Left = append(r.Left, "its hooks (aisan's kill guard among them, if installed): the box's Codex runs none of them")
	}
	return r
}

// opencodeBoxRules reads opencode's permission rules for a box started
// in cwd.
func opencodeBoxRules(home, cwd string, getenv func(string) string) (strictbox.BoxRules, error) {
	r := strictbox.BoxRules{Source: "opencode's configuration"}
	setup, err := opencode.Gather(home, cwd, getenv)
	if err != nil {
		return r, err
	}
	b, err := opencode.BoxRules(setup)
	if err != nil {
		return r, withHint(err, "fix it, or unset it: the box takes opencode's permission rules from every layer")
	}
	r.OpencodePermission = []byte(b.Rules)
	r.Env = []string{"OPENCODE_PERMISSION=" + b.Permission}
	for _, a := range b.AgentRules {
		r.Left = append(r.Left, fmt.Sprintf("agent %q's own permission block in %s (the box reads the project's configuration, not that file)", a.Agent, a.Layer))
	}
	r.Left = append(r.Left, b.Secret...)
	return r, nil
}
