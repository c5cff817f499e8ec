package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/aisan-dev/aisan/hooks/jsonfile"
	"github.com/aisan-dev/aisan/jail/shared/sibling"

	"mvdan.cc/sh/v3/syntax"
)

// DefaultTimeout is the hook timeout, in seconds, that install-hook writes.
// The guard answers in milliseconds; the agents let a tool call through
// when a hook times out, so the limit only has to be long enough never to
// be reached on a loaded machine.
const DefaultTimeout = 30

// Matcher is the tool matcher of the group we add: the Bash tool, which is
// what both Claude Code and Codex call their shell tool in hooks.
const Matcher = "Bash"

// GuardName is the file name of the lean guard binary (cmd/aisan-guard):
// the hook alone, without the rest of aisan, so that it starts fast.
const GuardName = sibling.GuardName

// Hook is the handler aisan installs: the lean guard binary when there is
// one, or else the guard subcommand of the aisan binary.
type Hook struct {
	// Binary is the absolute path of the aisan binary that installs the
	// hook. Its guard subcommand is the hook when Guard is empty.
	Binary string
	// Guard is the absolute path of the lean guard binary the agent runs
	// instead of Binary's guard subcommand, or "" (see [LeanGuard]).
	Guard string
	// Timeout is how long the agent waits for the guard, in seconds.
	Timeout int
}

// Command is the hook's command line: the quoted path of Guard, or of
// Binary followed by "guard". Both agents run it with sh -c, so the path
// is quoted when it needs to be.
func (h Hook) Command() (string, error) {
	bin, suffix := h.Binary, " guard"
	if h.Guard != "" {
		bin, suffix = h.Guard, ""
	}
	if !filepath.IsAbs(bin) {
		return "", fmt.Errorf("hook binary %q is not an absolute path", bin)
	}
	q, err := syntax.Quote(bin, syntax.LangPOSIX)
	if err != nil {
		return "", fmt.Errorf("quoting hook binary %q: %w", bin, err)
	}
	return q + suffix, nil
}

// LeanGuard returns the lean guard binary beside the aisan binary at
// aisan (an absolute path, symlinks resolved): <dir>/aisan-guard, when it
// passes the rule every helper beside aisan must (see sibling.Binary). It
// returns "" and a nil error when there is no such file, and "" with the
// reason when the file is there but does not qualify; the hook then runs
// aisan's guard subcommand, which decides the same but starts slower.
func LeanGuard(aisan string) (string, error) {
	return sibling.Binary(aisan, GuardName)
}

// handler is a hook handler as the agents read it; the field order is the
// order written.
type handler struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Timeout int    `json:"timeout"`
}

// group is a matcher group: a tool matcher and its handlers.
type group struct {
	Matcher string    `json:"matcher"`
	Hooks   []handler `json:"hooks"`
}

func (h Hook) handler() (handler, error) {
	cmd, err := h.Command()
	if err != nil {
		return handler{}, err
	}
	if h.Timeout <= 0 {
		return handler{}, fmt.Errorf("hook timeout %d is not positive", h.Timeout)
	}
	return handler{Type: "command", Command: cmd, Timeout: h.Timeout}, nil
}

// Install returns src with h registered as a PreToolUse hook for Bash, and
// whether that changed anything. A nil or blank src is an absent file.
//
// A hook of ours already in src (another binary, the other of the two
// forms, another timeout, the exec form) is updated where it is, keeping
// any key the user added to it and the matcher of its group, provided that
// matcher selects Bash; every other copy is removed. With none left, a group {"matcher": "Bash", "hooks":
// [...]} is appended to PreToolUse.
// When src already holds exactly h, it is returned as is. Everything else
// is kept (see the package rules). Errors are a [*ParseError] or a file
// whose shape is not that of agent settings; src is never modified.
func Install(src []byte, h Hook) (out []byte, changed bool, err error) {
	want, err := h.handler()
	if err != nil {
		return nil, false, err
	}
	d, err := openDoc(src)
	if err != nil {
		return nil, false, err
	}
	d.hook = h
	kept, err := d.edit(&want)
	if err != nil {
		return nil, false, err
	}
	if !kept {
		g, err := d.l.value(group{Matcher: Matcher, Hooks: []handler{want}}, 3)
		if err != nil {
			return nil, false, err
		}
		d.groups = append(d.groups, g)
		d.changed = true
	}
	if !d.changed {
		return src, false, nil
	}
	return d.encode(false), true, nil
}

// Uninstall returns src without any hook of ours, and whether there was
// one. Matcher groups left without handlers are dropped when they hold
// nothing else, and so are a PreToolUse list and a hooks object that end up
// empty, so that uninstalling undoes installing.
func Uninstall(src []byte) (out []byte, changed bool, err error) {
	d, err := openDoc(src)
	if err != nil {
		return nil, false, err
	}
	if _, err := d.edit(nil); err != nil {
		return nil, false, err
	}
	if !d.changed {
		return src, false, nil
	}
	return d.encode(true), true, nil
}

// doc is a settings file opened along the path to PreToolUse.
type doc struct {
	l        layout
	root     *object
	hooks    *object // root.hooks, or a new empty object
	hooksAt  int     // index of hooks in root, or -1
	groups   []json.RawMessage
	groupsAt int // index of PreToolUse in hooks, or -1
	changed  bool
	hook     Hook // the hook being installed, whose handler is ours whatever its binaries are called
}

// ShapeError is a settings file that is valid JSON of a shape the agents
// do not read: it is left untouched.
type ShapeError struct{ Why string }

func (e *ShapeError) Error() string { return e.Why }

func openDoc(src []byte) (*doc, error) {
	d := &doc{l: detectLayout(src), root: &object{}, hooks: &object{}, hooksAt: -1, groupsAt: -1}
	if len(bytes.TrimSpace(src)) > 0 {
		if err := jsonfile.CheckSyntax(src); err != nil {
			return nil, err
		}
		raw := bytes.TrimSpace(src)
		if raw[0] != '{' {
			return nil, &ShapeError{Why: fmt.Sprintf("the top level is %s, want an object", kind(raw))}
		}
		var err error
		if d.root, err = parseObject(raw); err != nil {
			return nil, err
		}
	}
	var err error
	if d.hooksAt, err = d.root.lookup("hooks"); err != nil {
		return nil, err
	}
	if d.hooksAt >= 0 {
		v := d.root.members[d.hooksAt].value
		switch {
		case isNull(v):
		case v[0] == '{':
			if d.hooks, err = parseObject(v); err != nil {
				return nil, err
			}
		default:
			return nil, &ShapeError{Why: fmt.Sprintf(`"hooks" is %s, want an object`, kind(v))}
		}
	}
	if d.groupsAt, err = d.hooks.lookup("PreToolUse"); err != nil {
		return nil, fmt.Errorf(`in "hooks": %w`, err)
	}
	if d.groupsAt >= 0 {
		v := d.hooks.members[d.groupsAt].value
		switch {
		case isNull(v):
		case v[0] == '[':
			if d.groups, err = parseArray(v); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf(`"hooks.PreToolUse" is %s, want an array`, kind(v))
		}
	}
	return d, nil
}

// groupHooks is a PreToolUse matcher group opened down to its handlers.
type groupHooks struct {
	o        *object
	at       int // index of "hooks" in o
	handlers []json.RawMessage
	bash     bool // the matcher selects the Bash tool
}

// openGroup opens a matcher group; nil when it is not an object with a
// hooks array, which leaves nothing of ours to find in it.
func openGroup(g json.RawMessage) (*groupHooks, error) {
	if g[0] != '{' {
		return nil, nil
	}
	o, err := parseObject(g)
	if err != nil {
		return nil, err
	}
	at, err := o.lookup("hooks")
	if err != nil {
		return nil, fmt.Errorf("in a PreToolUse group: %w", err)
	}
	if at < 0 || o.members[at].value[0] != '[' {
		return nil, nil
	}
	hs, err := parseArray(o.members[at].value)
	if err != nil {
		return nil, err
	}
	m, err := o.lookup("matcher")
	if err != nil {
		return nil, fmt.Errorf("in a PreToolUse group: %w", err)
	}
	bash := true // no matcher: every tool
	if m >= 0 {
		bash = selectsBash(o.members[m].value)
	}
	return &groupHooks{o: o, at: at, handlers: hs, bash: bash}, nil
}

// selectsBash reports whether a group's matcher selects the Bash tool, the
// way Claude Code reads it: "" or "*" is every tool; letters, digits and
// _ - , | and space are a list of exact names; anything else is a regular
// expression, unanchored.
func selectsBash(raw json.RawMessage) bool {
	m, ok := stringValue(raw)
	if !ok {
		return false
	}
	if m == "" || m == "*" {
		return true
	}
	if strings.Trim(m, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-,| ") == "" {
		for _, name := range strings.FieldsFunc(m, func(r rune) bool { return r == '|' || r == ',' }) {
			if strings.TrimSpace(name) == "Bash" {
				return true
			}
		}
		return false
	}
	re, err := regexp.Compile(m)
	return err == nil && re.MatchString("Bash")
}

// scan counts our handlers, and those among them identical to want in a
// group that selects Bash.
func (d *doc) scan(want handler) (found, exact int) {
	for _, g := range d.groups {
		gh, err := openGroup(g)
		if err != nil || gh == nil {
			continue
		}
		for _, h := range gh.handlers {
			if isOurs(h, d.hook) {
				found++
				if gh.bash && sameHandler(h, want) {
					exact++
				}
			}
		}
	}
	return found, exact
}

// edit walks the PreToolUse groups. With want, the first handler of ours
// in a group that selects Bash is updated to want where it is, and every
// other handler of ours is removed; without want, all of ours are removed.
// A group left without handlers is dropped when it held nothing but a
// matcher. kept reports whether a handler of ours stays (want must then be
// appended when it does not); d.changed whether anything changed.
func (d *doc) edit(want *handler) (kept bool, err error) {
	var groups []json.RawMessage
	for _, g := range d.groups {
		gh, err := openGroup(g)
		if err != nil {
			return false, err
		}
		if gh == nil {
			groups = append(groups, g)
			continue
		}
		var rest []json.RawMessage
		touched := false
		for _, h := range gh.handlers {
			switch {
			case !isOurs(h, d.hook):
				rest = append(rest, h)
			case want != nil && !kept && gh.bash:
				kept = true
				if !sameHandler(h, *want) {
					if h, err = d.update(h, *want); err != nil {
						return false, err
					}
					touched = true
				}
				rest = append(rest, h)
			default: // a copy, one that never runs for Bash, or uninstall
				touched = true
			}
		}
		switch {
		case !touched:
			groups = append(groups, g)
		case len(rest) == 0 && onlyMatcherAndHooks(gh.o):
			// The group was ours alone; drop it.
		default:
			gh.o.members[gh.at].value = d.l.encodeArray(rest, 4)
			groups = append(groups, d.l.encodeObject(gh.o, 3))
		}
		d.changed = d.changed || touched
	}
	d.groups = groups
	return kept, nil
}

// update rewrites a handler of ours to want, keeping its other keys.
func (d *doc) update(raw json.RawMessage, want handler) (json.RawMessage, error) {
	o, err := parseObject(raw)
	if err != nil {
		return nil, err
	}
	o.removeAll("args") // the exec form becomes the shell form
	for _, f := range []struct {
		key string
		v   any
	}{{"type", want.Type}, {"command", want.Command}, {"timeout", want.Timeout}} {
		i, err := o.lookup(f.key)
		if err != nil {
			return nil, fmt.Errorf("in a hook of ours: %w", err)
		}
		v, err := marshal(f.v, "", "")
		if err != nil {
			return nil, err
		}
		o.set(i, f.key, v)
	}
	return d.l.encodeObject(o, 5), nil
}

func onlyMatcherAndHooks(o *object) bool {
	for _, m := range o.members {
		if m.key != "matcher" && m.key != "hooks" {
			return false
		}
	}
	return true
}

// encode writes the document back. With prune, an empty PreToolUse and
// then an empty hooks object are dropped.
func (d *doc) encode(prune bool) []byte {
	if prune && len(d.groups) == 0 {
		if d.groupsAt >= 0 {
			d.hooks.remove(d.groupsAt)
		}
	} else {
		d.hooks.set(d.groupsAt, "PreToolUse", d.l.encodeArray(d.groups, 2))
	}
	if prune && len(d.hooks.members) == 0 {
		if d.hooksAt >= 0 {
			d.root.remove(d.hooksAt)
		}
	} else {
		d.root.set(d.hooksAt, "hooks", d.l.encodeObject(d.hooks, 1))
	}
	out := d.l.encodeObject(d.root, 0)
	if d.l.newline {
		out = append(out, '\n')
	}
	return out
}

// isOurs reports whether raw is a command handler that runs the guard:
// "<dir>/aisan-guard" or "<dir>/aisan guard" in any quoting, or the exec
// form of either (args [] or ["guard"]). The aisan binary may carry
// another name (a copy installed as aisan-dev) when it is the one running
// or that of installing, and likewise the lean guard: the handler we
// would write is ours.
func isOurs(raw json.RawMessage, installing Hook) bool {
	_, ok := parseOurs(raw, installing)
	return ok
}

// parseOurs reads raw as a handler of ours (see isOurs).
func parseOurs(raw json.RawMessage, installing Hook) (Handler, bool) {
	if len(raw) == 0 || raw[0] != '{' {
		return Handler{}, false
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil {
		return Handler{}, false
	}
	if t, ok := stringValue(fields["type"]); !ok || t != "command" {
		return Handler{}, false
	}
	cmd, ok := stringValue(fields["command"])
	if !ok {
		return Handler{}, false
	}
	var a []string
	if args, ok := fields["args"]; ok {
		if json.Unmarshal(args, &a) != nil {
			return Handler{}, false
		}
		if a == nil {
			a = []string{}
		}
	}
	return oursCommand(cmd, a, installing)
}

// oursCommand reads a command handler's command and args (nil for the
// shell form) as one of ours (see isOurs).
func oursCommand(cmd string, args []string, installing Hook) (Handler, bool) {
	if args != nil {
		if runsGuard(append([]string{cmd}, args...), installing) {
			return Handler{Command: cmd, Args: args, Binary: cmd, Argv: append([]string{cmd}, args...)}, true
		}
		return Handler{}, false
	}
	if words, ok := simpleCommand(cmd); ok && runsGuard(words, installing) {
		return Handler{Command: cmd, Binary: words[0], Argv: words}, true
	}
	return Handler{}, false
}

// GuardBinary reports whether a command hook handler, its command and
// args (nil for the shell form), runs aisan's guard, and the binary it
// starts as written: what a strict box must be able to run for the
// user's kill guard to hold in it.
func GuardBinary(command string, args []string) (binary string, ok bool) {
	h, ok := oursCommand(command, args, Hook{})
	return h.Binary, ok
}

// runsGuard reports whether argv starts the guard: the lean guard alone,
// or an aisan binary with the one argument guard.
func runsGuard(argv []string, installing Hook) bool {
	switch len(argv) {
	case 1:
		return isLeanGuard(argv[0], installing.Guard)
	case 2:
		return argv[1] == "guard" && isAisan(argv[0], installing.Binary)
	}
	return false
}

// Handler is a hook of ours as a settings file holds it.
type Handler struct {
	// Command is the command line the agent runs with sh -c, or the
	// program of the exec form.
	Command string
	// Args are the exec form's arguments; nil for a command line.
	Args []string
	// Binary is the binary it starts (aisan or the lean aisan-guard), as
	// written: an absolute path, or a name the shell looks up in PATH.
	Binary string
	// Argv is what the agent starts: Binary, then "guard" or nothing.
	// The name says only that the handler claims to be the guard: a jail
	// can write a hook whose program is called aisan-guard, so whoever
	// runs the guard outside the agent identifies Binary as one of
	// aisan's own files first (sibling.Own) and runs that file instead.
	Argv []string
}

// Find returns the hooks of ours in src that run for the Bash tool (their
// group's matcher selects it), in file order. Errors are those of
// [Uninstall].
func Find(src []byte) ([]Handler, error) {
	d, err := openDoc(src)
	if err != nil {
		return nil, err
	}
	var out []Handler
	for _, g := range d.groups {
		gh, err := openGroup(g)
		if err != nil {
			return nil, err
		}
		if gh == nil || !gh.bash {
			continue
		}
		for _, raw := range gh.handlers {
			if h, ok := parseOurs(raw, Hook{}); ok {
				out = append(out, h)
			}
		}
	}
	return out, nil
}

// isAisan reports whether path names an aisan binary: one called aisan, the
// running binary, or installing. A name only: enough to find and edit the
// handlers install-hook wrote, never a reason to run one (see Handler.Argv).
func isAisan(path, installing string) bool {
	if b := filepath.Base(path); b == "aisan" || b == sibling.FullName {
		return true
	}
	if self := selfBinary(); self != "" && filepath.Clean(path) == self {
		return true
	}
	return installing != "" && filepath.Clean(path) == filepath.Clean(installing)
}

// isLeanGuard reports whether path names a lean guard binary: one called
// aisan-guard, or installing.
func isLeanGuard(path, installing string) bool {
	if filepath.Base(path) == GuardName {
		return true
	}
	return installing != "" && filepath.Clean(path) == filepath.Clean(installing)
}

// selfBinary is the path that install-hook run from this process writes
// into the hook: the running executable, symlinks resolved; "" when it
// cannot be found. Tests stand in another binary.
var selfBinary = sync.OnceValue(func() string {
	bin, err := os.Executable()
	if err == nil {
		bin, err = filepath.EvalSymlinks(bin)
	}
	if err != nil {
		return ""
	}
	return filepath.Clean(bin)
})

// sameHandler reports whether raw, one of ours, is want in the shell form.
func sameHandler(raw json.RawMessage, want handler) bool {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil {
		return false
	}
	if _, ok := fields["args"]; ok {
		return false
	}
	cmd, _ := stringValue(fields["command"])
	var timeout json.Number
	if t, ok := fields["timeout"]; !ok || json.Unmarshal(t, &timeout) != nil {
		return false
	}
	n, err := timeout.Int64()
	return err == nil && cmd == want.Command && n == int64(want.Timeout)
}

// simpleCommand splits cmd into its words when it is one simple command
// whose words are all literal (quoted or not); ok is false for anything
// else: pipelines, expansions, redirections, assignments, several commands.
func simpleCommand(cmd string) (words []string, ok bool) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangPOSIX)).Parse(strings.NewReader(cmd), "")
	if err != nil || len(f.Stmts) != 1 {
		return nil, false
	}
	st := f.Stmts[0]
	call, isCall := st.Cmd.(*syntax.CallExpr)
	if !isCall || st.Negated || st.Background || st.Coprocess || len(st.Redirs) > 0 || len(call.Assigns) > 0 {
		return nil, false
	}
	for _, w := range call.Args {
		s, lit := literal(w)
		if !lit {
			return nil, false
		}
		words = append(words, s)
	}
	return words, true
}

// literal is the value of a word made only of literal parts.
func literal(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(unescape(p.Value))
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(unescapeDouble(l.Value))
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// unescape removes the backslashes of an unquoted literal.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unescapeDouble removes the backslashes that escape inside double quotes.
func unescapeDouble(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
