package hooks

// The user's Claude Code rules for a strict box. The box's Claude reads
// its settings from the box's own state directory, so the rules of the
// user's settings.json come in as data: the permissions and the hooks
// whose commands the box can run. What cannot hold inside is named, one
// phrase each, for the launch's note; nothing is dropped silently.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/aisan-dev/aisan/jail/shared/secret"

	"mvdan.cc/sh/v3/syntax"
)

// BoxView is what a strict box shows of the host, for [ClaudeBoxRules].
// Every function is the host's answer; none may be nil.
type BoxView struct {
	// Shows reports whether the box shows the host's path p at p.
	Shows func(p string) bool
	// LookPath finds a command name on the box's PATH, "" when it is
	// not there; HostLookPath the same on the host's PATH.
	LookPath, HostLookPath func(name string) string
	// Mountable is nil when the host file p may be bound into the box
	// read-only, or why not (a credential path).
	Mountable func(p string) error
	// Home is the user's home, which the box hides; Project the
	// directory Claude starts in ($CLAUDE_PROJECT_DIR).
	Home, Project string
}

// ClaudeBox is what a strict box's Claude gets of the user's settings.
type ClaudeBox struct {
	// Settings are the keys the box's settings take from the
	// user's ("permissions", "hooks", "disableAllHooks"), as JSON; a key
	// of ClaudeBoxKeys absent here is absent in the box too.
	Settings map[string]json.RawMessage
	// Binds are host files a kept hook runs that the box must bind
	// read-only at the same path: aisan's guard.
	Binds []string
	// Left names what stays on the host, and why, one phrase each.
	Left []string
	// AutoMode is set when the user's defaultMode is "auto", whose
	// classifier the box cannot reach: it is left out, and not in Left.
	AutoMode bool
}

// ClaudeBoxKeys are the keys of Claude's settings that a box takes from
// the user's file, and only from it: the box's own copy of each is
// replaced at every launch. Besides the rules themselves they are the
// keys that switch them off: disableAllHooks, and env, whose variables
// Claude sets on itself before it reads its hooks (CLAUDE_CODE_SAFE_MODE
// runs none). The user's env is never brought (it may hold secrets), so
// the box's is dropped at every launch, and so are the keys of
// claudeCommands and claudePlugins.
var ClaudeBoxKeys = slices.Concat([]string{"permissions", "hooks", "disableAllHooks", "env"}, claudeCommands, claudePlugins, slices.Sorted(maps.Keys(claudePreferences)))

// claudePlugins are the settings that load code whose hooks Claude runs
// itself, outside its permission rules: enabledPlugins and the
// marketplaces they come from (a box that names a marketplace of its own,
// a directory in the repository, and enables a plugin of it would have
// its hooks run at the next launch), and agent, which runs the main
// thread as an agent of the box's own agents directory, frontmatter
// hooks and all. The user's plugins are not brought into a box (their
// files live in the user's Claude directory, which no box shows), so the
// box has none to keep.
var claudePlugins = []string{"enabledPlugins", "extraKnownMarketplaces", "agent"}

// claudeCommands are the settings whose value is a command Claude runs
// itself, outside its permission rules, the helpers (Claude 2.1's own
// list of them) at its next start or request even in -p mode: one a box
// left in its settings.json would run at its next launch what the
// user's deny rules refuse it. The user's are not brought either: they
// fetch credentials, or draw the interface.
var claudeCommands = []string{"apiKeyHelper", "awsAuthRefresh", "awsCredentialExport", "gcpAuthRefresh",
	"otelHeadersHelper", "proxyAuthHelper", "statusLine", "fileSuggestion"}

// claudePreferences are the user's plain Claude preferences a box takes
// as they are, each with the JSON type it must have: the model and how
// Claude answers, nothing that runs a command, names a credential or
// reaches the network (statusLine, apiKeyHelper, env stay out).
var claudePreferences = map[string]string{
	"model":                  "string",
	"effortLevel":            "string",
	"outputStyle":            "string",
	"alwaysThinkingEnabled":  "bool",
	"includeCoAuthoredBy":    "bool",
	"includeGitInstructions": "bool",
	"spinnerTipsEnabled":     "bool",
	"prefersReducedMotion":   "bool",
	"cleanupPeriodDays":      "number",
}

// ruleLists are the permission keys that hold rules.
var ruleLists = []string{"allow", "deny", "ask"}

// ClaudeBoxRules reads the user's Claude settings src (the file named
// file) for a strict box that shows what v says. A file that does not
// parse, or whose permissions or hooks are not of Claude's shape, is an
// error: the box would lose rules the user relies on.
func ClaudeBoxRules(src []byte, file string, v BoxView) (ClaudeBox, error) {
	out := ClaudeBox{Settings: map[string]json.RawMessage{}}
	if len(bytes.TrimSpace(src)) == 0 {
		return out, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(src, &top); err != nil {
		return out, fmt.Errorf("%s does not parse: %w", file, err)
	}
	if raw, ok := top["permissions"]; ok && !isNull(raw) {
		p, err := out.permissions(raw, v)
		if err != nil {
			return out, fmt.Errorf("%s: permissions: %w", file, err)
		}
		out.Settings["permissions"] = p
	}
	if raw, ok := top["disableAllHooks"]; ok && !isNull(raw) {
		var off bool
		if err := json.Unmarshal(raw, &off); err != nil {
			return out, fmt.Errorf("%s: disableAllHooks is not true or false: %w", file, err)
		}
		out.Settings["disableAllHooks"] = raw
	}
	for _, k := range slices.Sorted(maps.Keys(claudePreferences)) {
		raw, ok := top[k]
		if !ok || isNull(raw) {
			continue
		}
		if why := badPreference(raw, claudePreferences[k]); why != "" {
			out.Left = append(out.Left, k+": "+why)
			continue
		}
		out.Settings[k] = raw
	}
	if raw, ok := top["hooks"]; ok && !isNull(raw) {
		h, err := out.hooks(raw, v)
		if err != nil {
			return out, fmt.Errorf("%s: hooks: %w", file, err)
		}
		if h != nil {
			out.Settings["hooks"] = h
		}
	}
	return out, nil
}

// badPreference says why a preference's value is not taken ("" when it
// is): not of its type, or a string that looks like it holds a secret.
func badPreference(raw json.RawMessage, typ string) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "it does not parse"
	}
	ok := false
	switch typ {
	case "string":
		var str string
		ok = json.Unmarshal(raw, &str) == nil
		if ok && secret.Text(str) {
			return "it looks like it holds a secret"
		}
	case "bool":
		_, ok = v.(bool)
	case "number":
		_, ok = v.(float64)
	}
	if !ok {
		return "not a " + typ
	}
	return ""
}

// permissions keeps the user's permission block, less the rules that
// look like they hold a secret, an auto defaultMode and the additional
// directories the box does not show.
func (b *ClaudeBox) permissions(raw json.RawMessage, v BoxView) (json.RawMessage, error) {
	var perm map[string]json.RawMessage
	if err := json.Unmarshal(raw, &perm); err != nil {
		return nil, fmt.Errorf("not an object: %w", err)
	}
	out := map[string]any{}
	for k, val := range perm {
		switch {
		case slices.Contains(ruleLists, k):
			var rules []string
			if err := json.Unmarshal(val, &rules); err != nil {
				return nil, fmt.Errorf("%s is not a list of rules: %w", k, err)
			}
			kept := []string{}
			for i, r := range rules {
				if secret.Text(r) {
					b.Left = append(b.Left, fmt.Sprintf("permissions.%s rule %d: it looks like it holds a secret", k, i+1))
					continue
				}
				kept = append(kept, r)
			}
			out[k] = kept
		case k == "defaultMode":
			var mode string
			if err := json.Unmarshal(val, &mode); err != nil {
				return nil, fmt.Errorf("defaultMode is not a string: %w", err)
			}
			if mode == "auto" {
				// The box's note says what to use instead.
				b.AutoMode = true
				continue
			}
			out[k] = mode
		case k == "additionalDirectories":
			var dirs []string
			if err := json.Unmarshal(val, &dirs); err != nil {
				return nil, fmt.Errorf("additionalDirectories is not a list of paths: %w", err)
			}
			kept := []string{}
			for _, d := range dirs {
				p := v.hostPath(d)
				if p == "" || !v.Shows(p) {
					b.Left = append(b.Left, fmt.Sprintf("additionalDirectories %q: the box does not show it (a bind spec's ro or rw entry would)", d))
					continue
				}
				kept = append(kept, p)
			}
			out[k] = kept
		default:
			if secret.Text(string(val)) {
				b.Left = append(b.Left, fmt.Sprintf("permissions.%s: it looks like it holds a secret", k))
				continue
			}
			out[k] = val
		}
	}
	return json.Marshal(out)
}

// hooks keeps the user's hooks whose commands the box can run; nil when
// none is left.
func (b *ClaudeBox) hooks(raw json.RawMessage, v BoxView) (json.RawMessage, error) {
	var events map[string][]map[string]json.RawMessage
	if err := json.Unmarshal(raw, &events); err != nil {
		return nil, fmt.Errorf("not an object of event lists: %w", err)
	}
	out := map[string][]map[string]json.RawMessage{}
	for _, event := range sortedKeys(events) {
		for _, g := range events[event] {
			var handlers []json.RawMessage
			if err := json.Unmarshal(g["hooks"], &handlers); err != nil {
				return nil, fmt.Errorf("%s: a group's hooks are not a list: %w", event, err)
			}
			var kept []json.RawMessage
			for _, h := range handlers {
				why, err := b.handler(h, v)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", event, err)
				}
				if why != "" {
					b.Left = append(b.Left, fmt.Sprintf("%s hook %s", event, why))
					continue
				}
				kept = append(kept, h)
			}
			if len(kept) == 0 {
				continue
			}
			c := make(map[string]json.RawMessage, len(g))
			for k, val := range g {
				c[k] = val
			}
			c["hooks"], _ = json.Marshal(kept)
			out[event] = append(out[event], c)
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return json.Marshal(out)
}

// handler says why one hook handler stays on the host, "" to keep it;
// a guard of aisan's that the box does not show is bound.
func (b *ClaudeBox) handler(raw json.RawMessage, v BoxView) (string, error) {
	var h struct {
		Type    string   `json:"type"`
		Command string   `json:"command"`
		Args    []string `json:"args"`
		URL     string   `json:"url"`
	}
	if err := json.Unmarshal(raw, &h); err != nil {
		return "", fmt.Errorf("a hook handler is not an object: %w", err)
	}
	switch h.Type {
	case "prompt", "agent":
		// They ask the model, which the box reaches through its proxy.
		return "", nil
	case "http":
		return fmt.Sprintf("%q: it posts to a URL, and the box has no network", redactText(h.URL)), nil
	case "command":
	default:
		return fmt.Sprintf("of type %q: aisan does not know what it runs", h.Type), nil
	}
	shown := redactText(h.Command)
	if bin, ok := GuardBinary(h.Command, h.Args); ok {
		if v.Shows(bin) {
			return "", nil
		}
		if err := v.Mountable(bin); err != nil {
			return fmt.Sprintf("%q (aisan's kill guard): %v", shown, err), nil
		}
		if !slices.Contains(b.Binds, bin) {
			b.Binds = append(b.Binds, bin)
		}
		return "", nil
	}
	if secret.Text(h.Command) || slices.ContainsFunc(h.Args, secret.Text) {
		return fmt.Sprintf("%q: it looks like it holds a secret", shown), nil
	}
	argv := h.Command
	if h.Args != nil {
		// The exec form: a program and its arguments, no shell.
		q := make([]string, 0, len(h.Args)+1)
		for _, a := range append([]string{h.Command}, h.Args...) {
			s, err := syntax.Quote(a, syntax.LangPOSIX)
			if err != nil {
				return fmt.Sprintf("%q: aisan cannot read its arguments", shown), nil
			}
			q = append(q, s)
		}
		argv = strings.Join(q, " ")
	}
	missing, err := v.missing(argv)
	if err != nil {
		return fmt.Sprintf("%q: it does not parse as a shell command (%v)", shown, err), nil
	}
	if len(missing) == 0 {
		return "", nil
	}
	return fmt.Sprintf("%q: %s", shown, v.fix(missing[0])), nil
}

// redactText is s, or "[redacted]" when it looks like it holds a secret.
func redactText(s string) string {
	if secret.Text(s) {
		return "[redacted]"
	}
	return s
}

// shellBuiltins run without a file: sh's special and regular builtins.
var shellBuiltins = []string{
	".", ":", "[", "alias", "bg", "break", "cd", "command", "continue", "echo", "eval", "exec", "exit",
	"export", "false", "fc", "fg", "getopts", "hash", "jobs", "kill", "local", "printf", "pwd", "read",
	"readonly", "return", "set", "shift", "test", "times", "trap", "true", "type", "ulimit", "umask",
	"unalias", "unset", "wait",
}

// missing lists what a hook's shell command runs, or reads from the
// user's home, that the box lacks: a command name not on the box PATH
// or a path the box does not show. Words it cannot read without running
// the shell are taken as present: the box's shell says if they are not.
func (v BoxView) missing(cmd string) ([]string, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(cmd), "")
	if err != nil {
		return nil, err
	}
	var out []string
	syntax.Walk(f, func(n syntax.Node) bool {
		call, ok := n.(*syntax.CallExpr)
		if !ok || len(call.Args) == 0 {
			return true
		}
		for i, w := range call.Args {
			s, ok := v.word(w)
			if !ok {
				continue
			}
			if i == 0 && !strings.Contains(s, "/") {
				if !slices.Contains(shellBuiltins, s) && v.LookPath(s) == "" {
					out = append(out, s)
				}
				continue
			}
			p := v.hostPath(s)
			if p == "" || (i > 0 && !within(p, v.Home)) {
				// An argument elsewhere is the command's business.
				continue
			}
			if !v.Shows(p) {
				out = append(out, p)
			}
		}
		return true
	})
	return out, nil
}

// word reads w as a literal, with $CLAUDE_PROJECT_DIR and $HOME (which
// the box has as the host does) filled in.
func (v BoxView) word(w *syntax.Word) (string, bool) {
	if s, ok := literal(w); ok {
		return s, true
	}
	var b strings.Builder
	var part func(p syntax.WordPart) bool
	part = func(p syntax.WordPart) bool {
		switch p := p.(type) {
		case *syntax.ParamExp:
			if p.Short || p.Exp != nil || p.Slice != nil || p.Repl != nil || p.Index != nil || p.Length || p.Excl {
				return false
			}
			switch p.Param.Value {
			case "CLAUDE_PROJECT_DIR":
				b.WriteString(v.Project)
			case "HOME":
				b.WriteString(v.Home)
			default:
				return false
			}
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if !part(q) {
					return false
				}
			}
		default:
			s, ok := literal(&syntax.Word{Parts: []syntax.WordPart{p}})
			if !ok {
				return false
			}
			b.WriteString(s)
		}
		return true
	}
	for _, p := range w.Parts {
		if !part(p) {
			return "", false
		}
	}
	return b.String(), true
}

// hostPath is a path as written in the user's settings, made absolute:
// "~/" is the home, a relative path lies in the project. "" when it is
// neither a path nor resolvable.
func (v BoxView) hostPath(s string) string {
	switch {
	case s == "~":
		return v.Home
	case strings.HasPrefix(s, "~/"):
		return filepath.Join(v.Home, s[2:])
	case filepath.IsAbs(s):
		return filepath.Clean(s)
	case strings.Contains(s, "/") && v.Project != "":
		return filepath.Join(v.Project, s)
	}
	return ""
}

// fix says why a missing command or path keeps a hook on the host, and
// the bind spec line that would bring it when there is one.
func (v BoxView) fix(m string) string {
	dir, path := "", false
	if filepath.IsAbs(m) {
		dir = filepath.Dir(m)
	} else if p := v.HostLookPath(m); p != "" {
		dir, path = filepath.Dir(p), true
	}
	what := m + " is not in the box"
	if !filepath.IsAbs(m) {
		what = m + " is not on the box PATH"
	}
	if dir == "" || v.Mountable(dir) != nil {
		return what
	}
	shown := dir
	if rel, ok := strings.CutPrefix(dir, v.Home+"/"); ok {
		shown = "~/" + rel
	}
	if path {
		return fmt.Sprintf("%s; ro = [%q] and path = [%q] in a bind spec (--binds FILE) bring it", what, shown, shown)
	}
	return fmt.Sprintf("%s; ro = [%q] in a bind spec (--binds FILE) brings it", what, shown)
}

// within reports whether p is dir or lies beneath it.
func within(p, dir string) bool {
	return dir != "" && (p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/"))
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
