// Package config reads the user's aisan configuration and works out the
// launch options it sets: defaults for every launch, and sections for
// one repository each.
//
//	strict = false                  # defaults for every launch
//	binds  = ["go"]
//
//	[repo."/home/me/src/app"]       # one repository, by its real path
//	strict      = true
//	allow_hosts = ["goproxy.example.com"]
//
// # Rules
//
//   - The keys are the caller's (the launchers' options, [Key]); a key
//     the caller does not know, a value of the wrong type, a table other
//     than repo."PATH" and a section key that is not an absolute path (or
//     ~/…) are errors naming the file and the line.
//   - Precedence, per key: a command-line flag, then the key's AISAN_*
//     variable, then the repository's section, then the defaults.
//     Nothing merges: a flag's list replaces the configured one.
//   - The package reads nothing: the caller reads the file (from outside
//     every box: package trust) and says which flags were given, which
//     variables are set and which section is the repository's.
package config

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/aisan-dev/aisan/jail/shared/fileerr"
	"github.com/aisan-dev/aisan/jail/shared/tomlpos"
	"github.com/pelletier/go-toml/v2/unstable"
)

// Kind is the type of a key's value.
type Kind int

// The kinds of value a key takes.
const (
	// Bool is true or false.
	Bool Kind = iota
	// String is one string (an integer is taken as its text).
	String
	// List is an array of strings (one string is a list of one).
	List
)

func (k Kind) String() string {
	switch k {
	case Bool:
		return "a boolean"
	case String:
		return "a string"
	}
	return "an array of strings"
}

// Key is one setting the file may hold.
type Key struct {
	// Name is the key in the file ("allow_hosts").
	Name string
	// Kind is the type of its value.
	Kind Kind
	// Var is the AISAN_* variable that sets it too; "" for none.
	Var string
}

// From says which of the four places a value came from.
type From int

// The places a value comes from, weakest last.
const (
	Unset From = iota
	FromFlag
	FromEnv
	FromRepo
	FromDefaults
)

// Source is where a setting's value came from.
type Source struct {
	From From
	// Var is the variable (FromEnv).
	Var string
	// File and Line are the line in the configuration (FromRepo,
	// FromDefaults); Repo the section's path (FromRepo).
	File string
	Line int
	Repo string
}

func (s Source) String() string {
	switch s.From {
	case FromFlag:
		return "command line"
	case FromEnv:
		return s.Var
	case FromRepo:
		return fmt.Sprintf("%s:%d [repo.%q]", s.File, s.Line, s.Repo)
	case FromDefaults:
		return fmt.Sprintf("%s:%d", s.File, s.Line)
	}
	return "not set"
}

// Setting is one key's effective value.
type Setting struct {
	Key  string
	Kind Kind
	// Values are the value: "true" or "false" for a Bool, one string for
	// a String, the entries of a List.
	Values []string
	Source Source
}

// Error is a problem at a place in the configuration: file, line, key.
type Error = fileerr.Error

// value is one key's value in one section, and its line.
type value struct {
	values []string
	line   int
}

// section is the defaults (repo "") or one repository's section.
type section struct {
	repo   string
	line   int
	values map[string]value
}

// File is a parsed configuration.
type File struct {
	// Path is the file as read, for sources and errors.
	Path     string
	defaults section
	repos    []section
}

// Repos are the sections' repository paths, as written (~ expanded), in
// the file's order.
func (f *File) Repos() []string {
	var out []string
	for _, s := range f.repos {
		out = append(out, s.repo)
	}
	return out
}

// maxFile caps a configuration; it is a few dozen lines.
const maxFile = 1 << 20

// Parse reads a configuration's content. keys are the keys it may set;
// home expands "~" in a section's path.
func Parse(path string, data []byte, keys []Key, home string) (*File, error) {
	if len(data) > maxFile {
		return nil, &Error{File: path, Err: fmt.Errorf("larger than %d bytes", maxFile)}
	}
	f := &File{Path: path, defaults: section{values: map[string]value{}}}
	var p unstable.Parser
	p.Reset(data)
	cur := &f.defaults
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table:
			parts, line := tomlpos.Key(&p, e)
			if len(parts) != 2 || parts[0] != "repo" {
				return nil, &Error{File: path, Line: line, Key: strings.Join(parts, "."), Err: errors.New(`the only tables are repository sections, [repo."/path/to/repository"]`)}
			}
			repo, err := sectionPath(parts[1], home)
			if err != nil {
				return nil, &Error{File: path, Line: line, Key: strings.Join(parts, "."), Err: err}
			}
			for _, s := range f.repos {
				if s.repo == repo {
					return nil, &Error{File: path, Line: line, Err: fmt.Errorf("the section of %s is there already (line %d); merge them", repo, s.line)}
				}
			}
			f.repos = append(f.repos, section{repo: repo, line: line, values: map[string]value{}})
			cur = &f.repos[len(f.repos)-1]
		case unstable.ArrayTable:
			parts, line := tomlpos.Key(&p, e)
			return nil, &Error{File: path, Line: line, Key: strings.Join(parts, "."), Err: errors.New("arrays of tables are not part of aisan's configuration")}
		case unstable.KeyValue:
			parts, line := tomlpos.Key(&p, e)
			name := strings.Join(parts, ".")
			k, ok := lookup(keys, name)
			if !ok {
				return nil, &Error{File: path, Line: line, Key: name, Err: unknownKey(keys, name)}
			}
			if first, dup := cur.values[name]; dup {
				return nil, &Error{File: path, Line: line, Key: name, Err: fmt.Errorf("set twice (first on line %d)", first.line)}
			}
			vs, err := values(e.Value(), k)
			if err != nil {
				return nil, &Error{File: path, Line: line, Key: name, Err: err}
			}
			cur.values[name] = value{values: vs, line: line}
		}
	}
	if err := p.Error(); err != nil {
		var pe *unstable.ParserError
		if errors.As(err, &pe) {
			return nil, &Error{File: path, Line: tomlpos.ErrorLine(&p, pe), Err: fmt.Errorf("not valid TOML: %s", pe.Message)}
		}
		return nil, &Error{File: path, Err: fmt.Errorf("not valid TOML: %w", err)}
	}
	return f, nil
}

// sectionPath checks a section's repository path: absolute, or under ~.
func sectionPath(p, home string) (string, error) {
	switch {
	case strings.ContainsRune(p, 0):
		return "", errors.New("the path holds a NUL byte")
	case p == "~" || strings.HasPrefix(p, "~/"):
		if !filepath.IsAbs(home) {
			return "", fmt.Errorf("cannot expand %q: no home directory known", p)
		}
		return filepath.Join(home, p[1:]), nil
	case !filepath.IsAbs(p):
		return "", fmt.Errorf("%q: a repository is named by its absolute path (or ~/…)", p)
	}
	return filepath.Clean(p), nil
}

// values checks a node against the key's kind.
func values(n *unstable.Node, k Key) ([]string, error) {
	switch {
	case k.Kind == Bool && n.Kind == unstable.Bool:
		return []string{string(n.Data)}, nil
	case k.Kind != Bool && n.Kind == unstable.String:
		return []string{string(n.Data)}, nil
	case k.Kind == String && n.Kind == unstable.Integer:
		// A count (budget = 200_000) is the option's text as typed.
		return []string{strings.ReplaceAll(string(n.Data), "_", "")}, nil
	case k.Kind == List && n.Kind == unstable.Array:
		out := []string{}
		it := n.Children()
		for it.Next() {
			c := it.Node()
			if c.Kind != unstable.String {
				return nil, fmt.Errorf("entries must be strings, not %s", c.Kind)
			}
			out = append(out, string(c.Data))
		}
		return out, nil
	}
	return nil, fmt.Errorf("must be %s, not %s", k.Kind, n.Kind)
}

func lookup(keys []Key, name string) (Key, bool) {
	i := slices.IndexFunc(keys, func(k Key) bool { return k.Name == name })
	if i < 0 {
		return Key{}, false
	}
	return keys[i], true
}

// unknownKey says what the keys are, and which one was meant when a
// flag's spelling was used.
func unknownKey(keys []Key, name string) error {
	var names []string
	for _, k := range keys {
		names = append(names, k.Name)
		if strings.ReplaceAll(name, "-", "_") == k.Name || strings.TrimSuffix(k.Name, "s") == strings.ReplaceAll(name, "-", "_") {
			return fmt.Errorf("unknown key; did you mean %s?", k.Name)
		}
	}
	return errors.New("unknown key; the keys are " + strings.Join(names, ", "))
}

// Inputs are what Resolve weighs besides the file.
type Inputs struct {
	// Flags are the keys the command line set, with their values.
	Flags map[string][]string
	// LookupEnv reads a variable; nil reads none.
	LookupEnv func(string) (string, bool)
	// Repo is the launch's repository (its real path); Same reports
	// whether a section's path names it (nil: equal strings).
	Repo string
	Same func(section, repo string) bool
}

// Resolve works out every key's setting, strongest place first: the
// command line, the key's variable, the repository's section, the
// defaults. f may be nil (no configuration file). A variable whose value
// does not parse is an error naming it.
func Resolve(f *File, keys []Key, in Inputs) ([]Setting, error) {
	same := in.Same
	if same == nil {
		same = func(a, b string) bool { return a == b }
	}
	var repo *section
	if f != nil && in.Repo != "" {
		for i := range f.repos {
			if same(f.repos[i].repo, in.Repo) {
				repo = &f.repos[i]
				break
			}
		}
	}
	var out []Setting
	for _, k := range keys {
		s := Setting{Key: k.Name, Kind: k.Kind}
		if v, ok := in.Flags[k.Name]; ok {
			s.Values, s.Source = slices.Clone(v), Source{From: FromFlag}
			out = append(out, s)
			continue
		}
		if raw, ok := lookupEnv(in.LookupEnv, k.Var); ok {
			vs, err := envValues(k, raw)
			if err != nil {
				return nil, err
			}
			s.Values, s.Source = vs, Source{From: FromEnv, Var: k.Var}
			out = append(out, s)
			continue
		}
		if repo != nil {
			if v, ok := repo.values[k.Name]; ok {
				s.Values, s.Source = slices.Clone(v.values), Source{From: FromRepo, File: f.Path, Line: v.line, Repo: repo.repo}
				out = append(out, s)
				continue
			}
		}
		if f != nil {
			if v, ok := f.defaults.values[k.Name]; ok {
				s.Values, s.Source = slices.Clone(v.values), Source{From: FromDefaults, File: f.Path, Line: v.line}
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// lookupEnv reads name when there is one and it is set (an empty value
// counts as unset, as for AISAN_STRICT before).
func lookupEnv(lookup func(string) (string, bool), name string) (string, bool) {
	if lookup == nil || name == "" {
		return "", false
	}
	v, ok := lookup(name)
	return v, ok && v != ""
}

// envValues parses a variable's value for k: a boolean as strconv reads
// one, a list split at commas and white space.
func envValues(k Key, raw string) ([]string, error) {
	switch k.Kind {
	case Bool:
		b, err := strconv.ParseBool(strings.TrimSpace(raw))
		if err != nil {
			return nil, &EnvError{Var: k.Var, Value: raw, Err: errors.New("not a boolean (1, true, 0, false)")}
		}
		return []string{strconv.FormatBool(b)}, nil
	case List:
		return strings.FieldsFunc(raw, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }), nil
	}
	return []string{raw}, nil
}

// EnvError is a variable whose value does not parse.
type EnvError struct {
	Var, Value string
	Err        error
}

func (e *EnvError) Error() string { return fmt.Sprintf("%s=%q: %v", e.Var, e.Value, e.Err) }

// Hints says how to go on.
func (e *EnvError) Hints() []string {
	return []string{"fix or unset " + e.Var}
}

// Lookup is the setting of key in settings.
func Lookup(settings []Setting, key string) (Setting, bool) {
	i := slices.IndexFunc(settings, func(s Setting) bool { return s.Key == key })
	if i < 0 {
		return Setting{}, false
	}
	return settings[i], true
}

// Bool is a Bool setting's value (false when unset).
func (s Setting) Bool() bool { return len(s.Values) == 1 && s.Values[0] == "true" }
