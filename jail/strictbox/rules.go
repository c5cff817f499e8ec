package strictbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/agent"
)

// RulesView is what a box shows of the host, for [AgentRules]: the
// host's answers, decided from the box's plan so far.
type RulesView struct {
	// Shows reports whether the box shows the host's path p at p.
	Shows func(p string) bool
	// LookPath finds a command name on the box's PATH, "" when it is
	// not there; HostLookPath the same on the host's PATH.
	LookPath, HostLookPath func(name string) string
	// Mountable is nil when the host file p may be bound into the box
	// read-only, or why not (a credential path).
	Mountable func(p string) error
	// Home is the user's home, which the box hides; Project the
	// directory the agent starts in.
	Home, Project string
}

// BoxRules are the user's own rules as a box's agent gets them.
type BoxRules struct {
	// Source names where they were read, for the launch's note.
	Source string
	// Settings are the keys of Claude's settings.json that the box's
	// copy takes from the user's, as JSON; Keys are every key the rules
	// own: one of them absent from Settings is removed from the box's.
	Settings map[string]json.RawMessage
	Keys     []string
	// OpencodePermission is opencode's permission block for the box's
	// first config layer (nil for none), Env variables the agent gets.
	OpencodePermission json.RawMessage
	Env                []string
	// Binds are host files a kept hook runs, bound read-only.
	Binds []string
	// Left names what stays on the host, and why, one phrase each.
	Left []string
	// AutoMode says the user asked for Claude's auto mode.
	AutoMode bool
}

// AgentRules reads the user's rules for a box that shows what the view
// says. cmd/aisan makes it with the hooks package, which reads the
// agents' settings; a strict box edits none.
type AgentRules func(RulesView) (BoxRules, error)

// planRules brings the user's rules into the box planned in o: the
// binds and variables they need go into o, the settings to seed into
// b; the note says what stays on the host ("" for nothing to say).
func (b *Box) planRules(h jail.Host, o *jail.StrictOptions) (string, error) {
	if b.Rules == nil || o.StateDir == "" {
		return "", nil
	}
	shows := boxShows(*o)
	inBox := func(p string) bool { return shows(p) || within(p, o.StateDir) }
	view := RulesView{
		Shows: inBox,
		LookPath: func(name string) string {
			for _, d := range filepath.SplitList(o.PATH()) {
				if p := filepath.Join(d, name); inBox(p) && executable(p) {
					return p
				}
			}
			return ""
		},
		HostLookPath: func(name string) string { p, _ := lookPathIn(name, h.Env); return p },
		Mountable:    func(p string) error { return exposes(p, o.Forbidden) },
		Home:         h.Home, Project: h.Cwd,
	}
	r, err := b.Rules(view)
	if err != nil {
		return "", fmt.Errorf("bringing the user's rules into the box: %w", err)
	}
	for _, bin := range r.Binds {
		src, err := filepath.EvalSymlinks(bin)
		if err != nil {
			// A stale hook fails in the box as it does on the host.
			r.Left = append(r.Left, fmt.Sprintf("aisan's guard %s, which a hook runs, is not there (%v): run 'aisan install-hook' again", bin, errors.Unwrap(err)))
			continue
		}
		o.Binds = append(o.Binds, jail.Mount{Kind: jail.ROBind, Src: src, Dst: bin, Why: "rules: aisan's kill guard, which the user's hooks run, read-only"})
	}
	if string(o.Kind) == agent.Claude.Kind {
		// Claude reads a changed settings file at once: a box that could
		// write it would drop the user's rules for the rest of its run.
		o.StateRules = append(o.StateRules, "settings.json")
		o.AgentArgs = append(o.AgentArgs, claudeHooksOn(r)...)
	}
	o.ExtraEnv = append(o.ExtraEnv, r.Env...)
	if r.OpencodePermission != nil && b.mcp != nil {
		b.mcp.OpencodePermission = r.OpencodePermission
	}
	b.rules = &r
	return rulesNote(o.Kind, r), nil
}

// claudeHooksOn are the options that keep the user's Claude hooks on
// whatever the project's settings say: the box writes its copy of the
// project's .claude/settings.local.json, which Claude also rereads while
// it runs, and a disableAllHooks there would switch them off. Settings
// given on the command line rank above the project's. Where the user
// switched their own hooks off, nothing is added.
func claudeHooksOn(r BoxRules) []string {
	if v, ok := r.Settings["disableAllHooks"]; ok && bytes.Equal(bytes.TrimSpace(v), []byte("true")) {
		return nil
	}
	return []string{"--settings", `{"disableAllHooks":false}`}
}

// rulesNote is the one note a launch gives about the user's rules: what
// stays on the host, and for Claude what cannot work through the proxy.
func rulesNote(kind jail.Kind, r BoxRules) string {
	var parts []string
	if len(r.Left) > 0 {
		parts = append(parts, fmt.Sprintf("not in the box, from %s: %s", r.Source, strings.Join(r.Left, "; ")))
	}
	if string(kind) == agent.Claude.Kind && r.AutoMode {
		parts = append(parts, "Claude's auto mode asks a classifier that the egress proxy does not serve, so the box asks instead: use allow rules (or acceptEdits), or --skip-permissions")
	}
	if len(parts) == 0 {
		return ""
	}
	return "the user's rules: " + strings.Join(parts, "; and ")
}

// seedRules writes the user's rules into the box's Claude settings m:
// each key the rules own is the user's, or absent, whatever the box wrote.
func seedRules(m map[string]any, r *BoxRules) {
	if r == nil {
		return
	}
	for _, k := range r.Keys {
		delete(m, k)
		if v, ok := r.Settings[k]; ok {
			m[k] = v
		}
	}
}

func executable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// resumeNote says where a box's Claude sessions are, for the resume
// command Claude prints at exit; "" for other agents.
func resumeNote(kind jail.Kind, state string) string {
	if string(kind) != agent.Claude.Kind || state == "" {
		return ""
	}
	return fmt.Sprintf("the box's Claude sessions live in %s: resume one with 'aisan claude --strict --resume ID' from this repository ('claude --resume' on the host does not see them)", state)
}
