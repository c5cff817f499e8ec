package strictbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/agent"
	"github.com/aisan-dev/aisan/jail/shared/atomicfile"
	"github.com/aisan-dev/aisan/jail/shared/regfile"
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
	// Flag is the settings the user gave Claude with --settings (Claude
	// takes one, so they join the rules file), nil for none.
	Flag map[string]json.RawMessage
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
		// write the one holding the user's rules would drop them for the
		// rest of its run. They go in a file of their own, read-only, that
		// Claude takes with --settings and never writes; its settings.json
		// stays writable for what the user changes in it (/model, /config).
		// Claude takes one --settings: one of the user's joins the
		// rules file in its place.
		flag, rest, err := takeSettingsFlag(o.Command, h.Cwd)
		if err != nil {
			return "", jail.WithHints(err, "--settings takes a JSON object or the path of a file holding one")
		}
		o.Command, r.Flag = rest, flag
		o.StateRules = append(o.StateRules, claudeRulesFile)
		o.AgentArgs = append(o.AgentArgs, "--settings", filepath.Join(o.StateDir, claudeRulesFile))
	}
	o.ExtraEnv = append(o.ExtraEnv, r.Env...)
	if r.OpencodePermission != nil && b.mcp != nil {
		b.mcp.OpencodePermission = r.OpencodePermission
	}
	b.rules = &r
	return rulesNote(o.Kind, r), nil
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
		if v, ok := r.Settings[k]; ok && !slices.Contains(claudeRuleKeys, k) {
			m[k] = v
		}
	}
}

// claudeRulesFile is the file in a Claude box's state directory that
// holds the user's rules, which the box sees read-only; claudeRuleKeys
// are the keys of the user's settings that go there, not into the
// box's settings.json.
const claudeRulesFile = "aisan-rules.json"

var claudeRuleKeys = []string{"permissions", "hooks", "disableAllHooks"}

// writeClaudeRules writes the user's rules r (nil for none) as the
// whole of the box's rules file, replacing what was there. Unless the
// user switched their own hooks off, it says disableAllHooks false: the
// box writes its settings.json and its copy of the project's
// .claude/settings.local.json, both of which Claude rereads while it
// runs, and settings given with --settings rank above both.
func writeClaudeRules(dir string, r *BoxRules) error {
	m := map[string]json.RawMessage{}
	var settings map[string]json.RawMessage
	if r != nil {
		for k, v := range r.Flag {
			m[k] = v
		}
		settings = r.Settings
	}
	for _, k := range claudeRuleKeys {
		v, ok := settings[k]
		if !ok {
			continue
		}
		flag, both := m[k]
		switch {
		case !both:
			m[k] = v
		case k == "permissions":
			m[k] = mergeObjects(v, flag, func(k string) bool { return slices.Contains(ruleListKeys, k) })
		case k == "hooks":
			m[k] = mergeObjects(v, flag, func(string) bool { return true })
		}
		// Otherwise (disableAllHooks) the --settings value ranks higher.
	}
	if _, ok := m["disableAllHooks"]; !ok {
		m["disableAllHooks"] = json.RawMessage("false")
	}
	env, err := pinHookSwitches(m["env"])
	if err != nil {
		return err
	}
	m["env"] = env
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the user's rules for the box: %w", err)
	}
	return atomicfile.Write(filepath.Join(dir, claudeRulesFile), append(b, '\n'), atomicfile.Options{Mode: 0o600})
}

// claudeHookSwitches are the variables that turn every hook of the
// user's off in a running Claude: CLAUDE_CODE_SIMPLE is --bare (no
// settings hooks at all), CLAUDE_CODE_SAFE_MODE keeps only managed
// ones. Claude applies the env of its user settings and its global
// config (.claude.json) as it reads them, at launch and again when the
// file changes, and both are files of the box's: one line there would
// drop the kill guard for the rest of the run. The rules file ranks
// above both, so it names each of them with an empty value, which
// Claude takes as off.
var claudeHookSwitches = []string{"CLAUDE_CODE_SAFE_MODE", "CLAUDE_CODE_SIMPLE"}

// pinHookSwitches is the rules file's env: the user's own from
// --settings (raw, nil for none), with each hook switch it leaves out
// set empty. A switch the user set there is theirs.
func pinHookSwitches(raw json.RawMessage) (json.RawMessage, error) {
	env := map[string]json.RawMessage{}
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &env); err != nil {
			return nil, fmt.Errorf("the env of the settings Claude is given (--settings) is not an object: %w", err)
		}
	}
	for _, k := range claudeHookSwitches {
		if _, ok := env[k]; !ok {
			env[k] = json.RawMessage(`""`)
		}
	}
	return json.Marshal(env)
}

// ruleListKeys are the permission lists Claude joins across its
// settings sources.
var ruleListKeys = []string{"allow", "deny", "ask"}

// mergeObjects joins two JSON objects as Claude joins two settings
// sources, low then high: a key for which list says so is a list of both
// (low's entries first), any other key is high's. What does not decode
// as an object of that shape is high's whole.
func mergeObjects(low, high json.RawMessage, list func(string) bool) json.RawMessage {
	var lo, hi map[string]json.RawMessage
	if json.Unmarshal(low, &lo) != nil || json.Unmarshal(high, &hi) != nil {
		return high
	}
	out := make(map[string]json.RawMessage, len(lo)+len(hi))
	for k, v := range lo {
		out[k] = v
	}
	for k, hv := range hi {
		lv, ok := lo[k]
		var la, ha []json.RawMessage
		if ok && list(k) && json.Unmarshal(lv, &la) == nil && json.Unmarshal(hv, &ha) == nil {
			joined, _ := json.Marshal(append(la, ha...))
			out[k] = joined
			continue
		}
		out[k] = hv
	}
	b, err := json.Marshal(out)
	if err != nil {
		return high
	}
	return b
}

// maxSettingsFlag caps a --settings file read for the box.
const maxSettingsFlag = 4 << 20

// takeSettingsFlag removes each --settings of command (Claude's words,
// its name first) and returns what they set, later ones over earlier
// ones as Claude would take the last: a JSON object given as it is, or
// read from the file it names (relative to cwd).
func takeSettingsFlag(command []string, cwd string) (map[string]json.RawMessage, []string, error) {
	if len(command) == 0 {
		return nil, command, nil
	}
	rest := []string{command[0]}
	var out map[string]json.RawMessage
	for i := 1; i < len(command); i++ {
		a := command[i]
		if a == "--" {
			rest = append(rest, command[i:]...)
			break
		}
		v, ok := strings.CutPrefix(a, "--settings=")
		if !ok && a == "--settings" && i+1 < len(command) {
			v, ok = command[i+1], true
			i++
		}
		if !ok {
			rest = append(rest, a)
			continue
		}
		data := []byte(v)
		if !strings.HasPrefix(strings.TrimSpace(v), "{") {
			p := v
			if !filepath.IsAbs(p) {
				p = filepath.Join(cwd, p)
			}
			var err error
			if data, err = regfile.Read(p, maxSettingsFlag); err != nil {
				return nil, nil, fmt.Errorf("reading the settings file Claude is given (--settings %s): %w", v, err)
			}
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(data, &m); err != nil || m == nil {
			return nil, nil, fmt.Errorf("the settings Claude is given (--settings %s) are not a JSON object: %v", v, err)
		}
		out = m
	}
	return out, rest, nil
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
