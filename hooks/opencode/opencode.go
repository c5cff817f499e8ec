// Package opencode reads opencode's permission rules from every config
// layer opencode reads, and adds aisan's kill rules after them: as
// OPENCODE_PERMISSION for a jailed opencode ([Permission]), and as data
// for a strict box's ([BoxRules]). It edits no file.
//
// It is apart from package hooks so that a deny-list launch of opencode
// reads these rules without linking the shell parser that hooks' editor
// of Claude's and Codex's settings uses.
package opencode

// Rules for the opencode permission (opencode has no command hooks; its
// permission rules are what it offers instead):
//
//   - Never weaken the user's rules. opencode deep-merges
//     OPENCODE_PERMISSION over the permission block it built from its
//     config layers, so a "bash" entry of ours would replace a user's
//     "bash": "ask" and with it the user's catch-all. Ours goes under a
//     key of its own instead, "bash*", which opencode matches against the
//     permission name as a wildcard like any key: every rule of the user's
//     stays where it was, with its value.
//   - Ours comes last. opencode evaluates the rules in order and the last
//     match wins; OPENCODE_PERMISSION is merged after every config layer,
//     and a key new to the merge is appended, so our two rules end the
//     list and decide for a kill command and only for one.
//   - Read what opencode reads, to know where its bash rules end up. When
//     the user's last bash rule is a catch-all deny, opencode hides the
//     bash tool from the model altogether; a rule after it would show the
//     tool again, so then nothing is added (every kill is denied already).
//   - Refuse what cannot be read. A config layer that does not parse, or
//     an OPENCODE_PERMISSION that is not an object, stops the launch with
//     the file and the position: opencode itself refuses most of them, and
//     guessing could lose a rule.
//
// What is out of reach: rules set per agent ("agent": {"build":
// {"permission": …}}, or an agent's markdown file) come after the global
// ones, so such a rule that matches a kill command outranks ours, as it
// would outrank any global rule; remote configs (a server's
// .well-known/opencode, an organisation's account config) are not read,
// nor the TOML config of old opencode releases, which opencode converts to
// config.json on its next start.
// Like the Claude Code and Codex hooks, this is an explanation for the
// agent; the jail is the boundary.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/aisan-dev/aisan/hooks/jsonfile"
	"github.com/aisan-dev/aisan/jail/shared/regfile"
	"github.com/tailscale/hujson"
)

// opencodeDenied are the bash patterns a jailed opencode is refused, in
// opencode's wildcard syntax, where "pkill *" also matches a bare "pkill".
var opencodeDenied = []string{"pkill *", "killall *"}

// Layer is one source of opencode configuration.
type Layer struct {
	// Name is where the layer comes from: a file's path, or
	// OPENCODE_CONFIG_CONTENT.
	Name string
	// Data is the layer's JSONC text as read, before opencode replaces
	// {env:NAME} in it.
	Data []byte
	// Shared is set for a layer in the project (from the directory
	// opencode starts in up to its worktree's root) or in the managed
	// directory: what any opencode started there reads, in a box too.
	Shared bool
}

// Setup is everything opencode builds its permission rules from,
// as [Gather] finds it.
type Setup struct {
	// Layers are the configuration layers in the order opencode merges
	// them; a later one wins.
	Layers []Layer
	// Permission is OPENCODE_PERMISSION, "" when it is unset.
	Permission string
	// Getenv reads the environment opencode will see, for {env:NAME}.
	Getenv func(string) string
}

// Permission returns the OPENCODE_PERMISSION for a jailed opencode
// whose setup is s: the user's own value with a "bash*" key appended that
// denies "pkill *" and "killall *" (see the rules at the top of this
// file). set is false when the environment should stay as it is: the
// user's rules deny every bash command already.
//
// The user's value is kept byte for byte, less surrounding space; the key
// is "bash*", or "bash**" and so on when a layer uses that key already.
func Permission(s Setup) (value string, set bool, err error) {
	eff, err := effectivePermission(s)
	if err != nil {
		return "", false, err
	}
	if bashDeniedOutright(eff) {
		return "", false, nil
	}
	ours := `{"` + strings.Join(opencodeDenied, `":"deny","`) + `":"deny"}`
	key, _ := json.Marshal(freeKey(eff))
	member := string(key) + ":" + ours
	user := bytes.TrimSpace([]byte(s.Permission))
	var out []byte
	switch {
	case len(user) == 0:
		out = []byte("{" + member + "}")
	default:
		// The user's object, then ours before its closing brace.
		inner := bytes.TrimSpace(user[1 : len(user)-1])
		out = append([]byte(nil), user[:len(user)-1]...)
		if len(inner) > 0 {
			out = append(out, ',')
		}
		out = append(out, member+"}"...)
	}
	var b bytes.Buffer
	if err := json.Compact(&b, out); err != nil {
		return "", false, bug(err)
	}
	return b.String(), true, nil
}

// bug reports what cannot happen, rather than panic on it.
func bug(err error) error {
	return fmt.Errorf("aisan bug, please report it: %w", err)
}

// effectivePermission is the permission block opencode builds from s,
// keys in the order opencode holds them.
func effectivePermission(s Setup) (*jsObject, error) {
	getenv := s.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	perm, tools := &jsObject{}, &jsObject{}
	for _, l := range s.Layers {
		p, t, err := parseLayer(l, getenv)
		if err != nil {
			return nil, err
		}
		perm = mergeDeep(perm, p)
		tools = mergeDeep(tools, t)
	}
	if user := bytes.TrimSpace([]byte(s.Permission)); len(user) > 0 {
		p, err := parseEnvPermission(user)
		if err != nil {
			return nil, err
		}
		perm = mergeDeep(perm, p)
	}
	if len(tools.keys) > 0 || tools.present {
		// The legacy "tools" switches are the base that permission
		// overrides: {"bash": false} is "bash": "deny".
		base := &jsObject{}
		for _, k := range tools.keys {
			action := "deny"
			if tools.vals[k].truthy() {
				action = "allow"
			}
			if k == "write" || k == "edit" || k == "patch" {
				k = "edit"
			}
			base.set(k, jsValue{kind: '"', str: action})
		}
		perm = mergeDeep(base, perm)
	}
	return perm, nil
}

// parseLayer reads the permission and tools blocks of one config layer,
// as opencode would after replacing {env:NAME} in its text. An empty
// layer is an empty config, as it is to opencode.
func parseLayer(l Layer, getenv func(string) string) (perm, tools *jsObject, err error) {
	perm, tools = &jsObject{}, &jsObject{}
	if len(l.Data) == 0 {
		return perm, tools, nil
	}
	text := envRef().ReplaceAllFunc(l.Data, func(ref []byte) []byte {
		return []byte(getenv(string(ref[len("{env:") : len(ref)-1])))
	})
	if err := checkNesting(text); err != nil {
		return nil, nil, fmt.Errorf("opencode's configuration %s: %w", l.Name, err)
	}
	v, err := hujson.Parse(text)
	if err != nil {
		return nil, nil, fmt.Errorf("opencode's configuration %s: %w", l.Name, err)
	}
	root, err := convert(v.Value, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("opencode's configuration %s: %w", l.Name, err)
	}
	if root.kind != '{' {
		return nil, nil, fmt.Errorf("opencode's configuration %s is %s, want an object", l.Name, kindName(root.kind))
	}
	if p, ok := root.obj.vals["permission"]; ok {
		switch p.kind {
		case '"':
			// A single action for everything is a catch-all.
			if err := checkAction(p, "permission"); err != nil {
				return nil, nil, fmt.Errorf("opencode's configuration %s: %w", l.Name, err)
			}
			perm.set("*", p)
		case '{':
			if err := checkRules(p.obj); err != nil {
				return nil, nil, fmt.Errorf("opencode's configuration %s: %w", l.Name, err)
			}
			perm = p.obj
		default:
			return nil, nil, fmt.Errorf("opencode's configuration %s: permission is %s, want an object or a string", l.Name, kindName(p.kind))
		}
	}
	if t, ok := root.obj.vals["tools"]; ok {
		if t.kind != '{' {
			return nil, nil, fmt.Errorf("opencode's configuration %s: tools is %s, want an object", l.Name, kindName(t.kind))
		}
		for _, k := range t.obj.keys {
			if v := t.obj.vals[k]; v.kind != 't' && v.kind != 'f' {
				return nil, nil, fmt.Errorf("opencode's configuration %s: tools %q is %s, want true or false", l.Name, k, kindName(v.kind))
			}
		}
		tools = t.obj
		tools.present = true
	}
	return perm, tools, nil
}

// envRef is opencode's {env:NAME} reference, replaced in a layer's text
// before it is parsed.
var envRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{env:[^}]+\}`) })

// parseEnvPermission reads OPENCODE_PERMISSION, which opencode parses as
// strict JSON and merges as it is: anything but an object would turn into
// junk keys there, so it is refused.
func parseEnvPermission(src []byte) (*jsObject, error) {
	if err := jsonfile.CheckSyntax(src); err != nil {
		return nil, fmt.Errorf("parsing OPENCODE_PERMISSION: %w", err)
	}
	if err := checkNesting(src); err != nil {
		return nil, fmt.Errorf("parsing OPENCODE_PERMISSION: %w", err)
	}
	v, err := hujson.Parse(src)
	if err != nil {
		return nil, bug(err)
	}
	root, err := convert(v.Value, 0)
	if err != nil {
		return nil, fmt.Errorf("in OPENCODE_PERMISSION: %w", err)
	}
	if root.kind != '{' {
		return nil, fmt.Errorf(`OPENCODE_PERMISSION is %s, want an object such as {"bash":"ask"}`, kindName(root.kind))
	}
	if err := checkRules(root.obj); err != nil {
		return nil, fmt.Errorf("in OPENCODE_PERMISSION: %w", err)
	}
	return root.obj, nil
}

// checkRules checks a permission block: each key's value an action, or
// an object of pattern → action.
func checkRules(o *jsObject) error {
	for _, k := range o.keys {
		v := o.vals[k]
		switch v.kind {
		case '"':
			if err := checkAction(v, strconv.Quote(k)); err != nil {
				return err
			}
		case '{':
			for _, p := range v.obj.keys {
				if err := checkAction(v.obj.vals[p], strconv.Quote(k)+" "+strconv.Quote(p)); err != nil {
					return err
				}
			}
		default:
			return fmt.Errorf("permission %q is %s, want an object or a string", k, kindName(v.kind))
		}
	}
	return nil
}

func checkAction(v jsValue, where string) error {
	switch {
	case v.kind != '"':
		return fmt.Errorf(`permission %s is %s, want "ask", "allow" or "deny"`, where, kindName(v.kind))
	case v.str == "ask" || v.str == "allow" || v.str == "deny":
		return nil
	}
	return fmt.Errorf(`permission %s is %q, want "ask", "allow" or "deny"`, where, v.str)
}

// opencodeRule is one rule as opencode lists them from a permission
// block: a permission name and a pattern, both wildcards, and an action.
type opencodeRule struct {
	Permission, Pattern, Action string
}

// opencodeRules flattens a permission block in opencode's order: a string
// value is a rule for the pattern "*".
func opencodeRules(o *jsObject) []opencodeRule {
	var rules []opencodeRule
	for _, k := range o.keys {
		v := o.vals[k]
		if v.kind == '"' {
			rules = append(rules, opencodeRule{k, "*", v.str})
			continue
		}
		for _, p := range v.obj.keys {
			rules = append(rules, opencodeRule{k, p, v.obj.vals[p].str})
		}
	}
	return rules
}

// bashDeniedOutright reports whether the last rule for the bash
// permission is a deny of "*": opencode then hides the tool.
func bashDeniedOutright(perm *jsObject) bool {
	rules := opencodeRules(perm)
	for i := len(rules) - 1; i >= 0; i-- {
		if r := rules[i]; wildcardMatch("bash", r.Permission) {
			return r.Pattern == "*" && r.Action == "deny"
		}
	}
	return false
}

// freeKey is the first of "bash*", "bash**", … that perm does not use,
// so that ours is a new key, appended after all of the user's.
func freeKey(perm *jsObject) string {
	k := "bash*"
	for perm.has(k) {
		k += "*"
	}
	return k
}

// wildcardMatch is opencode's Wildcard.match: "*" is any run of
// characters, "?" one, a trailing " *" also matches nothing, backslashes
// count as slashes, and the whole string must match.
func wildcardMatch(s, pattern string) bool {
	s = strings.ReplaceAll(s, `\`, "/")
	pattern = strings.ReplaceAll(pattern, `\`, "/")
	var re strings.Builder
	for _, r := range pattern {
		switch r {
		case '*':
			re.WriteString(".*")
		case '?':
			re.WriteString(".")
		default:
			re.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	expr := re.String()
	if strings.HasSuffix(expr, " .*") {
		expr = strings.TrimSuffix(expr, " .*") + "( .*)?"
	}
	m, err := regexp.MatchString(`(?s)^(?:`+expr+`)$`, s)
	return err == nil && m
}

// jsValue is a JSON value as opencode's JavaScript holds it. Strings,
// booleans and objects are what permission blocks use; other kinds are
// only named.
type jsValue struct {
	kind byte // '"', '{', 't', 'f', 'n', '0' or '['
	str  string
	obj  *jsObject
}

func (v jsValue) truthy() bool { return v.kind == 't' }

// jsObject is a JavaScript object: keys that are array indices come first
// in numeric order, the others in the order they were added; setting a
// key again keeps its place.
type jsObject struct {
	keys []string
	vals map[string]jsValue
	// present marks a block the config named, even empty: opencode's
	// legacy tools conversion runs for an empty "tools" too.
	present bool
}

func (o *jsObject) has(k string) bool { _, ok := o.vals[k]; return ok }

func (o *jsObject) set(k string, v jsValue) {
	if o.vals == nil {
		o.vals = map[string]jsValue{}
	}
	if !o.has(k) {
		i := len(o.keys)
		if n, ok := arrayIndex(k); ok {
			i = 0
			for i < len(o.keys) {
				m, ok := arrayIndex(o.keys[i])
				if !ok || m > n {
					break
				}
				i++
			}
		}
		o.keys = slices.Insert(o.keys, i, k)
	}
	o.vals[k] = v
}

// arrayIndex reports whether k is a canonical array index, which
// JavaScript orders before every other key.
func arrayIndex(k string) (uint64, bool) {
	n, err := strconv.ParseUint(k, 10, 32)
	return n, err == nil && n < 1<<32-1 && strconv.FormatUint(n, 10) == k
}

// mergeDeep is the merge opencode applies between config layers: a's keys
// over r's, objects merged key by key, anything else replaced.
func mergeDeep(r, a *jsObject) *jsObject {
	out := &jsObject{present: r.present || a.present}
	for _, k := range r.keys {
		out.set(k, r.vals[k])
	}
	for _, k := range a.keys {
		av := a.vals[k]
		if rv, ok := r.vals[k]; ok && rv.kind == '{' && av.kind == '{' {
			av = jsValue{kind: '{', obj: mergeDeep(rv.obj, av.obj)}
		}
		out.set(k, av)
	}
	return out
}

// maxDepth bounds nesting, so a hostile layer cannot exhaust the stack.
const maxDepth = 64

// checkNesting refuses text nested deeper than maxDepth before it is
// parsed: the parser recurses once per level.
func checkNesting(text []byte) error {
	depth := 0
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case c == '"':
			for i++; i < len(text) && text[i] != '"'; i++ {
				if text[i] == '\\' {
					i++
				}
			}
		case c == '/' && i+1 < len(text) && text[i+1] == '/':
			for i < len(text) && text[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(text) && text[i+1] == '*':
			end := bytes.Index(text[i+2:], []byte("*/"))
			if end < 0 {
				return nil // the parser reports it
			}
			i += 2 + end + 1
		case c == '{' || c == '[':
			if depth++; depth > maxDepth {
				return fmt.Errorf("nested more than %d levels deep", maxDepth)
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return nil
}

// convert turns a parsed JSONC value into a jsValue, as JSON.parse would:
// a repeated key keeps its first place and takes its last value.
func convert(v hujson.ValueTrimmed, depth int) (jsValue, error) {
	if depth > maxDepth {
		return jsValue{}, fmt.Errorf("nested more than %d levels deep", maxDepth)
	}
	switch v := v.(type) {
	case *hujson.Object:
		o := &jsObject{vals: map[string]jsValue{}}
		for _, m := range v.Members {
			name, ok := m.Name.Value.(hujson.Literal)
			if !ok {
				return jsValue{}, bug(errors.New("object name is not a literal"))
			}
			val, err := convert(m.Value.Value, depth+1)
			if err != nil {
				return jsValue{}, err
			}
			o.set(name.String(), val)
		}
		return jsValue{kind: '{', obj: o}, nil
	case *hujson.Array:
		for _, e := range v.Elements {
			if _, err := convert(e.Value, depth+1); err != nil {
				return jsValue{}, err
			}
		}
		return jsValue{kind: '['}, nil
	case hujson.Literal:
		switch k := v.Kind(); k {
		case '"':
			return jsValue{kind: '"', str: v.String()}, nil
		case 't', 'f', 'n', '0':
			return jsValue{kind: byte(k)}, nil
		}
	}
	return jsValue{}, bug(fmt.Errorf("unknown JSONC value %T", v))
}

func kindName(k byte) string {
	switch k {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// maxLayerSize caps what is read of one config file: configs are small,
// and a file that is not must not hold up a launch.
const maxLayerSize = 1 << 20

// Gather reads the config layers opencode reads, in its order:
// the global directory ($XDG_CONFIG_HOME/opencode, default
// ~/.config/opencode: config.json, opencode.json, opencode.jsonc), the
// file OPENCODE_CONFIG names, opencode.json and opencode.jsonc in every
// directory from the git worktree's root (or /) down to cwd, the
// .opencode directories from cwd up, then ~/.opencode and
// OPENCODE_CONFIG_DIR, OPENCODE_CONFIG_CONTENT, and the managed
// directory /etc/opencode. OPENCODE_DISABLE_PROJECT_CONFIG skips the
// project's files as it does for opencode. home is $HOME as opencode will
// see it, cwd the real path it starts in, getenv its environment.
//
// A file is read only when it is a regular file no larger than 1 MiB: a
// symlink is followed to its end (dotfile managers link configs) and the
// end opened without following; a FIFO, a device or a directory where a
// config should be is an error.
func Gather(home, cwd string, getenv func(string) string) (Setup, error) {
	// Relative, they would name files of whatever directory we run in.
	if !filepath.IsAbs(cwd) {
		return Setup{}, bug(fmt.Errorf("opencode's directory %q is not an absolute path", cwd))
	}
	if !filepath.IsAbs(home) {
		return Setup{}, fmt.Errorf("HOME %q is not an absolute path, so opencode's config files cannot be found", home)
	}
	s := Setup{Permission: getenv("OPENCODE_PERMISSION"), Getenv: getenv}
	shared := map[string]bool{}
	add := func(path string) error {
		data, ok, err := readLayer(path)
		if err != nil {
			return err
		}
		if ok {
			s.Layers = append(s.Layers, Layer{Name: path, Data: data, Shared: shared[path]})
		}
		return nil
	}
	abs := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(cwd, p)
	}
	var paths []string
	global := filepath.Join(home, ".config", "opencode")
	if x := getenv("XDG_CONFIG_HOME"); x != "" {
		global = filepath.Join(abs(x), "opencode")
	}
	for _, f := range []string{"config.json", "opencode.json", "opencode.jsonc"} {
		paths = append(paths, filepath.Join(global, f))
	}
	if p := getenv("OPENCODE_CONFIG"); p != "" {
		paths = append(paths, abs(p))
	}
	flag := strings.ToLower(getenv("OPENCODE_DISABLE_PROJECT_CONFIG"))
	project := flag != "true" && flag != "1"
	stop := worktreeRoot(cwd)
	if project {
		found := up(cwd, stop, "opencode.jsonc", "opencode.json")
		slices.Reverse(found)
		paths = append(paths, found...)
		for _, p := range found {
			shared[p] = true
		}
	}
	dirs := []string{global}
	if project {
		for _, d := range up(cwd, stop, ".opencode") {
			dirs = append(dirs, d)
			shared[filepath.Join(d, "opencode.json")], shared[filepath.Join(d, "opencode.jsonc")] = true, true
		}
	}
	ocHome := home
	if h := getenv("OPENCODE_TEST_HOME"); h != "" {
		ocHome = h
	}
	dirs = append(dirs, up(ocHome, ocHome, ".opencode")...)
	configDir := getenv("OPENCODE_CONFIG_DIR")
	if configDir != "" {
		dirs = append(dirs, configDir)
	}
	seen := map[string]bool{}
	for _, d := range dirs {
		if seen[d] {
			continue
		}
		seen[d] = true
		if strings.HasSuffix(d, ".opencode") || d == configDir {
			paths = append(paths, filepath.Join(abs(d), "opencode.json"), filepath.Join(abs(d), "opencode.jsonc"))
		}
	}
	for _, p := range paths {
		if err := add(p); err != nil {
			return Setup{}, err
		}
	}
	if c := getenv("OPENCODE_CONFIG_CONTENT"); c != "" {
		s.Layers = append(s.Layers, Layer{Name: "OPENCODE_CONFIG_CONTENT", Data: []byte(c)})
	}
	managed := "/etc/opencode"
	if m := getenv("OPENCODE_TEST_MANAGED_CONFIG_DIR"); m != "" {
		managed = m
	}
	if exists(managed) {
		for _, f := range []string{"opencode.json", "opencode.jsonc"} {
			shared[filepath.Join(managed, f)] = true
			if err := add(filepath.Join(managed, f)); err != nil {
				return Setup{}, err
			}
		}
	}
	return s, nil
}

// worktreeRoot is where opencode stops looking up for project files: the
// nearest directory holding .git, or / outside a repository.
func worktreeRoot(cwd string) string {
	for d := cwd; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if d == filepath.Dir(d) {
			return d
		}
	}
}

// up lists the targets that exist in start and each parent up to stop
// (or /), innermost first, as opencode's FileSystem.up does.
func up(start, stop string, targets ...string) []string {
	var found []string
	for d := start; ; d = filepath.Dir(d) {
		for _, t := range targets {
			if p := filepath.Join(d, t); exists(p) {
				found = append(found, p)
			}
		}
		if d == stop || d == filepath.Dir(d) {
			return found
		}
	}
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// readLayer reads the config file at path; ok is false when there is
// none, as for opencode.
func readLayer(path string) (data []byte, ok bool, err error) {
	target, err := jsonfile.Resolve(path)
	if err != nil {
		return nil, false, fmt.Errorf("opencode's configuration %s: %w", path, err)
	}
	data, err = regfile.Read(target, maxLayerSize)
	var nr *regfile.NotRegularError
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return nil, false, nil
	case errors.As(err, &nr):
		return nil, false, fmt.Errorf("opencode's configuration %s is not a regular file (%s): remove it, or put a config there", path, nr.Mode.Type())
	case errors.Is(err, regfile.ErrTooLarge):
		return nil, false, fmt.Errorf("opencode's configuration %s is larger than %d bytes", path, maxLayerSize)
	case err != nil:
		return nil, false, fmt.Errorf("opencode's configuration %s: %w", path, err)
	}
	return data, true, nil
}
