// Package bindspec reads strict-mode bind specs: small TOML files that name
// the extra host paths a box may see.
//
//	include = ["common.toml"]      # expanded in place, before this file's keys
//	ro      = ["~/.cargo/bin", "/opt/sdk"]
//	rw      = ["~/.cache/go-build"]
//	overlay = ["~/.cache/pip"]     # writable inside, writes vanish (bwrap >= 0.10)
//	tmpfs   = ["~/.npm"]           # an empty scratch directory
//	path    = ["~/.cargo/bin"]     # prepended to PATH; must lie under a mount above
//	env     = ["GOFLAGS=-mod=mod", "RUST_LOG"]
//
// # Rules
//
//   - Every error names the file, the line and the key, and says what to
//     do. Unknown keys are errors: a typo must not silently drop a mount.
//   - "~" and "~/…" expand to the user's home; a relative path resolves
//     against the directory of the file that names it, so a spec means the
//     same wherever it is used from.
//   - A mount source must exist when the spec is loaded.
//   - An include is read before the including file's own keys, relative to
//     it; a file that includes itself, directly or through others, is
//     refused with the chain.
//   - Keys the later strict stages own (mcp_env, allow_hosts) are read and
//     passed on as data; this package gives them no meaning.
//   - Whether a source holds a credential is decided by the jail, with the
//     file and line this package records on each entry.
//
// The package reads files, nothing else: no network, no commands.
package bindspec

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/shared/regfile"
	"github.com/pelletier/go-toml/v2/unstable"
)

// The keys of a bind spec, in the order they are documented.
const (
	KeyInclude    = "include"
	KeyRO         = "ro"
	KeyRW         = "rw"
	KeyOverlay    = "overlay"
	KeyTmpfs      = "tmpfs"
	KeyPath       = "path"
	KeyEnv        = "env"
	KeyMCPEnv     = "mcp_env"
	KeyAllowHosts = "allow_hosts"
)

var knownKeys = []string{KeyInclude, KeyRO, KeyRW, KeyOverlay, KeyTmpfs, KeyPath, KeyEnv, KeyMCPEnv, KeyAllowHosts}

// Keys lists the keys a bind spec may hold, for help and hints.
func Keys() []string { return slices.Clone(knownKeys) }

// maxFile caps a spec file; a bind spec is a handful of lines.
const maxFile = 1 << 20

// maxDepth caps include nesting, cycles aside.
const maxDepth = 16

// TmpfsSize caps a bind spec's tmpfs.
const TmpfsSize = 1 << 30

// Entry is one string of a spec, where it came from, and (for paths) what
// it expanded to.
type Entry struct {
	// Key is the key the entry is listed under.
	Key string
	// Value is the entry: an absolute, cleaned path for path keys, the
	// string as written otherwise.
	Value string
	// File is the spec file, as the user named it or as an include
	// resolved it.
	File string
	// Line is the entry's line in File.
	Line int
}

// Where is "FILE:LINE".
func (e Entry) Where() string { return fmt.Sprintf("%s:%d", e.File, e.Line) }

// Spec is one or more bind spec files, includes expanded.
type Spec struct {
	// Mounts are the ro, rw, overlay and tmpfs entries in the order they
	// apply: includes first, then each file's keys in the order written.
	Mounts []Entry
	// Path entries are prepended to PATH, first entry first.
	Path []Entry
	// Env entries are NAME=VALUE, or NAME to pass the host's value.
	Env []Entry
	// MCPEnv and AllowHosts are kept for the strict stages that use them.
	MCPEnv, AllowHosts []Entry
	// Files are the files read, in order.
	Files []string
}

// Error is a problem at a place in a spec file.
type Error struct {
	File string
	Line int    // 0 when the problem is the file as a whole
	Key  string // "" when no key is involved
	Err  error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Key != "" {
		fmt.Fprintf(&b, ": %s", e.Key)
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// ErrCycle is wrapped by an include cycle's error.
var ErrCycle = errors.New("include cycle")

// Host is what loading reads from the machine. The zero value reads the
// real file system.
type Host struct {
	// Home is the user's home directory, for "~".
	Home string
	// ReadFile reads a spec file; nil opens it, refuses anything but a
	// regular file and caps the size.
	ReadFile func(path string) ([]byte, error)
	// Stat checks that a mount source exists; nil is os.Stat.
	Stat func(path string) (fs.FileInfo, error)
}

// Load reads the spec files in order, as if the later ones were included
// at the end of the first.
func Load(h Host, files ...string) (Spec, error) {
	if h.ReadFile == nil {
		h.ReadFile = readRegular
	}
	if h.Stat == nil {
		h.Stat = os.Stat
	}
	l := &loader{h: h}
	for _, f := range files {
		abs, err := filepath.Abs(f)
		if err != nil {
			return Spec{}, &Error{File: f, Err: err}
		}
		if err := l.load(f, abs, nil); err != nil {
			return Spec{}, err
		}
	}
	if err := l.checkDuplicates(); err != nil {
		return Spec{}, err
	}
	return l.out, nil
}

type loader struct {
	h   Host
	out Spec
}

// load reads one file. name is how errors name it, abs its absolute path,
// chain the includes that led here.
func (l *loader) load(name, abs string, chain []string) error {
	data, err := l.h.ReadFile(abs)
	if err != nil {
		return &Error{File: name, Err: fmt.Errorf("reading the bind spec: %w", err)}
	}
	l.out.Files = append(l.out.Files, name)
	kvs, err := parse(name, data)
	if err != nil {
		return err
	}
	dir := filepath.Dir(abs)
	chain = append(chain, abs)
	// Includes first, wherever the key stands in the file.
	for _, kv := range kvs {
		if kv.key != KeyInclude {
			continue
		}
		for _, v := range kv.values {
			p, err := l.expand(v.s, dir)
			if err != nil {
				return &Error{File: name, Line: v.line, Key: kv.key, Err: err}
			}
			for i, c := range chain {
				if c == p {
					cycle := append(append([]string(nil), chain[i:]...), p)
					return &Error{File: name, Line: v.line, Key: kv.key, Err: fmt.Errorf("%w: %s; remove one of these includes", ErrCycle, strings.Join(cycle, " -> "))}
				}
			}
			if len(chain) >= maxDepth {
				return &Error{File: name, Line: v.line, Key: kv.key, Err: fmt.Errorf("includes nest deeper than %d files", maxDepth)}
			}
			if err := l.load(p, p, chain); err != nil {
				return err
			}
		}
	}
	var paths, mounts []Entry
	for _, kv := range kvs {
		for _, v := range kv.values {
			e := Entry{Key: kv.key, Value: v.s, File: name, Line: v.line}
			bad := func(err error) error { return &Error{File: name, Line: v.line, Key: kv.key, Err: err} }
			switch kv.key {
			case KeyInclude:
			case KeyRO, KeyRW, KeyOverlay, KeyTmpfs, KeyPath:
				p, err := l.expand(v.s, dir)
				if err != nil {
					return bad(err)
				}
				e.Value = p
				if kv.key == KeyPath {
					paths = append(paths, e)
					continue
				}
				if kv.key != KeyTmpfs {
					fi, err := l.h.Stat(p)
					if err != nil {
						return bad(fmt.Errorf("source %s: %w; create it or drop the entry", p, err))
					}
					if kv.key == KeyOverlay && !fi.IsDir() {
						return bad(fmt.Errorf("overlay source %s is not a directory", p))
					}
				}
				mounts = append(mounts, e)
			case KeyEnv:
				if !validEnv(v.s) {
					return bad(fmt.Errorf("%q is not NAME or NAME=VALUE (NAME: letters, digits, _)", v.s))
				}
				l.out.Env = append(l.out.Env, e)
			case KeyMCPEnv:
				l.out.MCPEnv = append(l.out.MCPEnv, e)
			case KeyAllowHosts:
				l.out.AllowHosts = append(l.out.AllowHosts, e)
			}
		}
	}
	l.out.Mounts = append(l.out.Mounts, mounts...)
	for _, p := range paths {
		if !l.covered(p.Value) {
			return &Error{File: name, Line: p.Line, Key: KeyPath, Err: fmt.Errorf("%s lies under no mount of this spec; add it to ro (or rw) too", p.Value)}
		}
		l.out.Path = append(l.out.Path, p)
	}
	return nil
}

// covered reports whether p is inside a mount read so far (this file and
// what it included).
func (l *loader) covered(p string) bool {
	for _, m := range l.out.Mounts {
		if p == m.Value || strings.HasPrefix(p, strings.TrimSuffix(m.Value, "/")+"/") {
			return true
		}
	}
	return false
}

func (l *loader) checkDuplicates() error {
	seen := map[string]Entry{}
	for _, m := range l.out.Mounts {
		if first, ok := seen[m.Value]; ok {
			return &Error{File: m.File, Line: m.Line, Key: m.Key,
				Err: fmt.Errorf("%s is already listed under %s at %s; keep one", m.Value, first.Key, first.Where())}
		}
		seen[m.Value] = m
	}
	return nil
}

// expand resolves "~", "~/x" and relative paths.
func (l *loader) expand(p, dir string) (string, error) {
	switch {
	case p == "":
		return "", errors.New("empty path")
	case strings.ContainsRune(p, 0):
		return "", errors.New("path holds a NUL byte")
	case p == "~" || strings.HasPrefix(p, "~/"):
		if l.h.Home == "" || !filepath.IsAbs(l.h.Home) {
			return "", fmt.Errorf("cannot expand %q: no home directory known", p)
		}
		return filepath.Join(l.h.Home, p[1:]), nil
	case strings.HasPrefix(p, "~"):
		return "", fmt.Errorf("%q: only ~ and ~/… expand (not ~user)", p)
	case filepath.IsAbs(p):
		return filepath.Clean(p), nil
	}
	return filepath.Join(dir, p), nil
}

var envName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

func validEnv(s string) bool {
	name, _, _ := strings.Cut(s, "=")
	return envName().MatchString(name)
}

// ValidEnv reports whether s is NAME or NAME=VALUE with a valid NAME.
func ValidEnv(s string) bool { return validEnv(s) }

type value struct {
	s    string
	line int
}

type keyValues struct {
	key    string
	line   int
	values []value
}

// parse reads the top-level keys of a spec file: each must be known, and
// an array of strings.
func parse(name string, data []byte) (out []keyValues, err error) {
	var p unstable.Parser
	p.Reset(data)
	lineOf := func(n *unstable.Node) int {
		if n.Raw.Length == 0 {
			return 0
		}
		return p.Shape(n.Raw).Start.Line
	}
	seen := map[string]int{}
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.KeyValue:
		case unstable.Table, unstable.ArrayTable:
			key, line := keyOf(e, lineOf)
			return nil, &Error{File: name, Line: line, Key: key, Err: errors.New("tables are not part of a bind spec; use top-level keys (" + strings.Join(knownKeys, ", ") + ")")}
		default:
			continue
		}
		key, line := keyOf(e, lineOf)
		known := false
		for _, kk := range knownKeys {
			known = known || kk == key
		}
		if !known {
			return nil, &Error{File: name, Line: line, Key: key, Err: errors.New("unknown key; the keys are " + strings.Join(knownKeys, ", "))}
		}
		if first, dup := seen[key]; dup {
			return nil, &Error{File: name, Line: line, Key: key, Err: fmt.Errorf("listed twice (first on line %d); merge the lists", first)}
		}
		seen[key] = line
		v := e.Value()
		if v.Kind != unstable.Array {
			return nil, &Error{File: name, Line: line, Key: key, Err: fmt.Errorf("must be an array of strings, not %s", v.Kind)}
		}
		kv := keyValues{key: key, line: line}
		it := v.Children()
		for it.Next() {
			n := it.Node()
			if n.Kind != unstable.String {
				l := lineOf(n)
				if l == 0 {
					l = line
				}
				return nil, &Error{File: name, Line: l, Key: key, Err: fmt.Errorf("entries must be strings, not %s", n.Kind)}
			}
			l := lineOf(n)
			if l == 0 {
				l = line
			}
			kv.values = append(kv.values, value{s: string(n.Data), line: l})
		}
		out = append(out, kv)
	}
	if err := p.Error(); err != nil {
		var pe *unstable.ParserError
		if errors.As(err, &pe) {
			return nil, &Error{File: name, Line: highlightLine(&p, pe), Err: fmt.Errorf("not valid TOML: %s", pe.Message)}
		}
		return nil, &Error{File: name, Err: fmt.Errorf("not valid TOML: %w", err)}
	}
	return out, nil
}

// keyOf is an expression's dotted key and the line it starts on.
func keyOf(e *unstable.Node, lineOf func(*unstable.Node) int) (string, int) {
	k := e.Key()
	var parts []string
	line := 0
	for k.Next() {
		parts = append(parts, string(k.Node().Data))
		if line == 0 {
			line = lineOf(k.Node())
		}
	}
	return strings.Join(parts, "."), line
}

// highlightLine is the line a parser error points at, or 0. The
// parser's highlights are slices of its input; should one not be, the
// line is unknown rather than a crash.
func highlightLine(p *unstable.Parser, pe *unstable.ParserError) (line int) {
	if len(pe.Highlight) == 0 {
		return 0
	}
	defer func() {
		if recover() != nil {
			line = 0
		}
	}()
	return p.Shape(p.Range(pe.Highlight)).Start.Line
}

// readRegular reads a spec file through the safe reader: a regular file,
// capped, so that a FIFO or a device named by mistake cannot hang or
// flood the launch. A final symlink is followed (see regfile.ReadNamed):
// bind specs are the user's own files, often linked from a dotfiles
// repository.
func readRegular(path string) ([]byte, error) { return regfile.ReadNamed(path, maxFile) }

// JailMounts turns the spec's mount entries into jail mounts, each saying
// which file and line asked for it.
func (s Spec) JailMounts() []jail.Mount {
	var out []jail.Mount
	for _, e := range s.Mounts {
		m := jail.Mount{Src: e.Value, Dst: e.Value, Why: "bind spec " + e.Where()}
		switch e.Key {
		case KeyRO:
			m.Kind = jail.ROBind
		case KeyRW:
			m.Kind = jail.Bind
		case KeyOverlay:
			m.Kind = jail.Overlay
		case KeyTmpfs:
			m.Kind, m.Src, m.Size = jail.Tmpfs, "", TmpfsSize
		}
		out = append(out, m)
	}
	return out
}

// PathDirs are the path entries, in order.
func (s Spec) PathDirs() []string {
	var out []string
	for _, e := range s.Path {
		out = append(out, e.Value)
	}
	return out
}

// EnvEntries are the env entries, in order.
func (s Spec) EnvEntries() []string {
	var out []string
	for _, e := range s.Env {
		out = append(out, e.Value)
	}
	return out
}
