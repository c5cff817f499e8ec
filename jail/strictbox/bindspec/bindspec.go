// Package bindspec reads strict-mode bind specs: small TOML files that name
// the extra host paths a box may see, and the specs aisan ships for the
// common toolchains.
//
//	include  = ["common.toml"]      # expanded in place, before this file's keys
//	ro       = ["~/.cargo/bin", "/opt/sdk"]
//	rw       = ["~/work/shared-data"]
//	rw_host_exec = ["~/.bashrc"]    # rw that reaches what the host runs, on purpose
//	overlay  = ["~/.cache/pip"]     # writable inside, writes vanish (bwrap >= 0.10)
//	tmpfs    = ["~/.npm"]           # an empty scratch directory
//	cache    = ["~/.cache/go-build"] # the box's own, kept per repository
//	path     = ["~/.cargo/bin"]     # on PATH; must lie under a mount above
//	env      = ["GOFLAGS=-mod=mod", "RUST_LOG"]
//	provides = ["cargo"]            # commands the spec brings, for hints
//
// # Rules
//
//   - Every error names the file, the line and the key, and says what to
//     do. Unknown keys are errors: a typo must not silently drop a mount.
//   - "~" and "~/…" expand to the user's home; a relative path resolves
//     against the directory of the file that names it, so a spec means the
//     same wherever it is used from. {NAME} is a fact of this host
//     (facts.go: GOROOT, the node first on PATH, …); a name that is no fact
//     is an error.
//   - A mount source must exist when the spec is loaded.
//   - An include is read before the including file's own keys, relative to
//     it; a file that includes itself, directly or through others, is
//     refused with the chain.
//   - An rw entry that is, holds or lies in what the host executes
//     (hostexec.go: shell rc files, ~/.config as a whole, user units,
//     commands on PATH, the toolchains' caches) is refused; rw_host_exec
//     says it is meant.
//   - A cache is a directory in the box's home that the box keeps, per
//     repository, in aisan's state: never a host path.
//   - The shipped specs (shipped/*.toml, by name: go, node, python, rust)
//     are read the same way, except that an entry this host has nothing
//     for (a fact it lacks, a source that does not exist, a directory the
//     box shows anyway) is skipped and recorded instead of refused.
//   - Keys the later strict stages own (mcp_env, allow_hosts) are read and
//     passed on as data; this package gives them no meaning.
//   - Whether a source holds a credential is decided by the jail, with the
//     file and line this package records on each entry.
//
// The package reads files and looks at paths, nothing else: no network,
// no commands.
package bindspec

import (
	"embed"
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

	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/shared/fileerr"
	"github.com/aisan-dev/aisan/jail/shared/regfile"
	"github.com/aisan-dev/aisan/jail/shared/secret"
	"github.com/aisan-dev/aisan/jail/shared/tomlpos"
	"github.com/pelletier/go-toml/v2/unstable"
)

// The keys of a bind spec, in the order they are documented.
const (
	KeyInclude    = "include"
	KeyRO         = "ro"
	KeyRW         = "rw"
	KeyRWHostExec = "rw_host_exec"
	KeyOverlay    = "overlay"
	KeyTmpfs      = "tmpfs"
	KeyCache      = "cache"
	KeyPath       = "path"
	KeyEnv        = "env"
	KeyProvides   = "provides"
	KeyMCPEnv     = "mcp_env"
	KeyAllowHosts = "allow_hosts"
)

var knownKeys = []string{KeyInclude, KeyRO, KeyRW, KeyRWHostExec, KeyOverlay, KeyTmpfs, KeyCache, KeyPath, KeyEnv, KeyProvides, KeyMCPEnv, KeyAllowHosts}

// Keys lists the keys a bind spec may hold, for help and hints.
func Keys() []string { return slices.Clone(knownKeys) }

//go:embed shipped/*.toml
var shippedFS embed.FS

// Shipped lists the names of the specs aisan ships.
func Shipped() []string {
	ents, _ := shippedFS.ReadDir("shipped")
	var out []string
	for _, e := range ents {
		out = append(out, strings.TrimSuffix(e.Name(), ".toml"))
	}
	return out
}

// ShippedSource is a shipped spec's text, for the user to read.
func ShippedSource(name string) ([]byte, bool) {
	if !IsShipped(name) {
		return nil, false
	}
	data, err := shippedFS.ReadFile("shipped/" + name + ".toml")
	return data, err == nil
}

// IsShipped reports whether name is a shipped spec's name (as --binds
// takes it: "go", not "go.toml", which is a file).
func IsShipped(name string) bool { return slices.Contains(Shipped(), name) }

// ShippedFile is how entries, errors and Spec.Files name a shipped spec.
func ShippedFile(name string) string { return "aisan:" + name + ".toml" }

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
	// string as written otherwise ({NAME} facts expanded).
	Value string
	// File is the spec file, as the user named it or as an include
	// resolved it; "aisan:NAME.toml" for a shipped spec.
	File string
	// Line is the entry's line in File.
	Line int
}

// Where is "FILE:LINE".
func (e Entry) Where() string { return fmt.Sprintf("%s:%d", e.File, e.Line) }

// Skipped is a shipped spec's entry this host has nothing for.
type Skipped struct {
	Entry
	// Why says what the host lacks.
	Why string
}

// Spec is one or more bind spec files, includes expanded.
type Spec struct {
	// Mounts are the ro, rw, rw_host_exec, overlay and tmpfs entries in
	// the order they apply: includes first, then each file's keys in the
	// order written.
	Mounts []Entry
	// Caches are directories in the box's home the box keeps as its own.
	Caches []Entry
	// Path entries go on PATH, first entry first.
	Path []Entry
	// Env entries are NAME=VALUE, or NAME to pass the host's value.
	Env []Entry
	// Provides are the commands the specs say they bring.
	Provides []Entry
	// MCPEnv and AllowHosts are kept for the strict stages that use them.
	MCPEnv, AllowHosts []Entry
	// Skipped are the shipped specs' entries this host has nothing for.
	Skipped []Skipped
	// Files are the files read, in order.
	Files []string
}

// Error is a problem at a place in a spec file: file, line, key.
type Error = fileerr.Error

// ErrCycle is wrapped by an include cycle's error.
var ErrCycle = errors.New("include cycle")

// Host is what loading reads from the machine. The zero value reads the
// real file system and knows no facts.
type Host struct {
	// Home is the user's home directory, for "~".
	Home string
	// ReadFile reads a spec file; nil opens it, refuses anything but a
	// regular file and caps the size.
	ReadFile func(path string) ([]byte, error)
	// Stat checks that a mount source exists; nil is os.Stat.
	Stat func(path string) (fs.FileInfo, error)
	// RealPath resolves symbolic links; nil is filepath.EvalSymlinks.
	RealPath func(path string) (string, error)
	// ReadDir lists a directory (CheckWorkdir's link scan); nil is
	// os.ReadDir.
	ReadDir func(path string) ([]fs.DirEntry, error)
	// Facts are what {NAME} stands for (GatherFacts).
	Facts Facts
	// PATH are the host's PATH directories: the host runs what is
	// there, so no rw entry may reach them.
	PATH []string
	// System are directories every box shows anyway (/usr, /etc…): a
	// path entry under one needs no mount, and a shipped spec binds
	// nothing under one again.
	System []string
}

// Load reads the spec files in order, as if the later ones were included
// at the end of the first. A name of Shipped() is that shipped spec.
func Load(h Host, files ...string) (Spec, error) {
	if h.ReadFile == nil {
		h.ReadFile = readRegular
	}
	if h.Stat == nil {
		h.Stat = os.Stat
	}
	if h.RealPath == nil {
		h.RealPath = realPath
	}
	l := &loader{h: h, origin: map[string]Entry{}}
	for _, f := range files {
		if data, ok := ShippedSource(f); ok {
			if err := l.loadData(ShippedFile(f), "/", data, nil, true); err != nil {
				return Spec{}, err
			}
			continue
		}
		// "~/…" expands here too: a name from the configuration or a
		// variable met no shell.
		abs, err := expandHome(f, h.Home)
		if err == nil {
			abs, err = filepath.Abs(abs)
		}
		if err != nil {
			return Spec{}, &Error{File: f, Err: err}
		}
		if err := l.load(f, abs, nil); err != nil {
			if errors.Is(err, fs.ErrNotExist) && !strings.ContainsAny(f, "/.") {
				return Spec{}, &Error{File: f, Err: fmt.Errorf("no such file, and aisan ships no spec by that name (it ships %s)", strings.Join(Shipped(), ", "))}
			}
			return Spec{}, err
		}
	}
	return l.out, nil
}

type loader struct {
	h   Host
	out Spec
	// origin is the first mount or cache of each path, for duplicates.
	origin map[string]Entry
	// execs is the host-exec table, expanded on first use.
	execs []hostExec
}

// load reads one file. name is how errors name it, abs its absolute path,
// chain the includes that led here.
func (l *loader) load(name, abs string, chain []string) error {
	data, err := l.h.ReadFile(abs)
	if err != nil {
		return &Error{File: name, Err: fmt.Errorf("reading the bind spec: %w", err)}
	}
	return l.loadData(name, abs, data, chain, false)
}

// loadData reads one file's content; shipped relaxes what this host may
// lack (see the package's rules).
func (l *loader) loadData(name, abs string, data []byte, chain []string, shipped bool) error {
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
			if shipped {
				return &Error{File: name, Line: v.line, Key: kv.key, Err: errors.New("a shipped spec includes nothing")}
			}
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
	var paths []Entry
	for _, kv := range kvs {
		for _, v := range kv.values {
			e := Entry{Key: kv.key, Value: v.s, File: name, Line: v.line}
			bad := func(err error) error { return &Error{File: name, Line: v.line, Key: kv.key, Err: err} }
			skip := func(why string) { l.out.Skipped = append(l.out.Skipped, Skipped{Entry: e, Why: why}) }
			if kv.key == KeyInclude {
				continue
			}
			s, missing, err := expandFacts(v.s, l.h.Facts)
			if err != nil {
				return bad(err)
			}
			if len(missing) > 0 {
				if shipped {
					skip("this host has no " + strings.Join(missing, ", "))
					continue
				}
				return bad(fmt.Errorf("this host has no {%s}; drop the entry or set what it comes from", strings.Join(missing, "}, {")))
			}
			if shipped {
				if why := l.absentFact(v.s); why != "" {
					skip(why)
					continue
				}
			}
			switch kv.key {
			case KeyRO, KeyRW, KeyRWHostExec, KeyOverlay, KeyTmpfs, KeyPath, KeyCache:
				p, err := l.expand(s, dir)
				if err != nil {
					return bad(err)
				}
				e.Value = p
				switch kv.key {
				case KeyPath:
					paths = append(paths, e)
					continue
				case KeyCache:
					if err := l.addCache(e); err != nil {
						return bad(err)
					}
					continue
				}
				if shipped && l.system(p) {
					skip("every box shows it already")
					continue
				}
				if kv.key != KeyTmpfs {
					fi, err := l.h.Stat(p)
					if err != nil {
						if shipped {
							skip("it does not exist here")
							continue
						}
						return bad(fmt.Errorf("source %s: %w; create it or drop the entry", p, err))
					}
					if kv.key == KeyOverlay && !fi.IsDir() {
						return bad(fmt.Errorf("overlay source %s is not a directory", p))
					}
				}
				if kv.key == KeyRW {
					if err := checkHostExec(e, l.hostExecs(), l.h.RealPath); err != nil {
						return bad(err)
					}
				}
				if first, dup := l.origin[p]; dup {
					if first.Key == e.Key && (shipped || strings.HasPrefix(first.File, "aisan:")) {
						skip("listed already at " + first.Where())
						continue
					}
					return bad(fmt.Errorf("%s is already listed under %s at %s; keep one", p, first.Key, first.Where()))
				}
				l.origin[p] = e
				l.out.Mounts = append(l.out.Mounts, e)
			case KeyEnv:
				if !validEnv(s) {
					return bad(fmt.Errorf("%q is not NAME or NAME=VALUE (NAME: letters, digits, _)", v.s))
				}
				e.Value = s
				l.out.Env = append(l.out.Env, e)
			case KeyProvides:
				if !commandName().MatchString(s) {
					return bad(fmt.Errorf("%q is not a command name", v.s))
				}
				l.out.Provides = append(l.out.Provides, e)
			case KeyMCPEnv:
				name, _, value := strings.Cut(s, "=")
				if value && envName().MatchString(name) && !secret.Value(name) {
					// Never echo a value: it may be the very secret.
					return bad(fmt.Errorf("%s=…: give the variable's name alone", name))
				}
				if value || !envName().MatchString(s) {
					shown := strconv.Quote(v.s)
					// An "=" that follows no NAME is inside a value
					// (a padded base64 key, an address's ?sslmode=).
					if value || secret.Value(v.s) {
						shown = "a value that looks like a credential"
					}
					return bad(fmt.Errorf("%s is not a variable NAME (letters, digits, _)", shown))
				}
				l.out.MCPEnv = append(l.out.MCPEnv, e)
			case KeyAllowHosts:
				l.out.AllowHosts = append(l.out.AllowHosts, e)
			}
		}
	}
	for _, p := range paths {
		if !l.covered(p.Value) {
			if shipped {
				l.out.Skipped = append(l.out.Skipped, Skipped{Entry: p, Why: "no mount of the spec shows it here"})
				continue
			}
			return &Error{File: name, Line: p.Line, Key: KeyPath, Err: fmt.Errorf("%s lies under no mount of this spec; add it to ro (or rw) too", p.Value)}
		}
		l.out.Path = append(l.out.Path, p)
	}
	return nil
}

// absentFact names, for a shipped entry, a fact it uses whose path does
// not exist here: the host has no such toolchain, so neither may the box
// be told of it.
func (l *loader) absentFact(s string) string {
	for _, m := range factRef().FindAllStringSubmatch(s, -1) {
		// The home is the box's own, which always exists.
		if v := l.h.Facts[m[1]]; v != "" && m[1] != "HOME" && !settingFact(m[1]) {
			if _, err := l.h.Stat(v); err != nil {
				return "this host has no " + m[1] + " (" + v + " does not exist)"
			}
		}
	}
	return ""
}

// addCache checks a cache entry (a directory in the box's home, neither
// the home itself) and records it.
func (l *loader) addCache(e Entry) error {
	home := filepath.Clean(l.h.Home)
	if l.h.Home == "" || e.Value == home || !within(e.Value, home) {
		return fmt.Errorf("%s: a cache is a directory inside the box's home (~/…)", e.Value)
	}
	if first, dup := l.origin[e.Value]; dup {
		if first.Key == KeyCache {
			return nil // two specs keep the same cache: one directory
		}
		return fmt.Errorf("%s is already listed under %s at %s; keep one", e.Value, first.Key, first.Where())
	}
	l.origin[e.Value] = e
	l.out.Caches = append(l.out.Caches, e)
	return nil
}

// system reports whether p lies in a directory every box shows anyway.
func (l *loader) system(p string) bool {
	return slices.ContainsFunc(l.h.System, func(d string) bool { return within(p, d) })
}

// hostExecs is the host-exec table for this host.
func (l *loader) hostExecs() []hostExec {
	if l.execs == nil {
		l.execs = hostExecPaths(l.h.Home, l.h.Facts, l.h.PATH)
	}
	return l.execs
}

// covered reports whether a box shows p: it lies in a mount read so far
// (this file and what it included, and the specs before it), holds one
// (a bound file's directory), or lies in a system directory.
func (l *loader) covered(p string) bool {
	if l.system(p) {
		return true
	}
	for _, m := range l.out.Mounts {
		if within(p, m.Value) || within(m.Value, p) {
			return true
		}
	}
	return false
}

// expand resolves "~", "~/x" and relative paths.
func (l *loader) expand(p, dir string) (string, error) {
	switch {
	case p == "":
		return "", errors.New("empty path")
	case strings.ContainsRune(p, 0):
		return "", errors.New("path holds a NUL byte")
	}
	p, err := expandHome(p, l.h.Home)
	if err != nil {
		return "", err
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p), nil
	}
	return filepath.Join(dir, p), nil
}

// expandHome expands "~" and "~/…" to home; other paths are returned as
// they are.
func expandHome(p, home string) (string, error) {
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		if home == "" || !filepath.IsAbs(home) {
			return "", fmt.Errorf("cannot expand %q: no home directory known", p)
		}
		return filepath.Join(home, p[1:]), nil
	case strings.HasPrefix(p, "~"):
		return "", fmt.Errorf("%q: only ~ and ~/… expand (not ~user)", p)
	}
	return p, nil
}

var commandName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]*$`) })

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
	seen := map[string]int{}
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.KeyValue:
		case unstable.Table, unstable.ArrayTable:
			parts, line := tomlpos.Key(&p, e)
			key := strings.Join(parts, ".")
			return nil, &Error{File: name, Line: line, Key: key, Err: errors.New("tables are not part of a bind spec; use top-level keys (" + strings.Join(knownKeys, ", ") + ")")}
		default:
			continue
		}
		parts, line := tomlpos.Key(&p, e)
		key := strings.Join(parts, ".")
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
				l := tomlpos.Line(&p, n)
				if l == 0 {
					l = line
				}
				return nil, &Error{File: name, Line: l, Key: key, Err: fmt.Errorf("entries must be strings, not %s", n.Kind)}
			}
			l := tomlpos.Line(&p, n)
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
			return nil, &Error{File: name, Line: tomlpos.ErrorLine(&p, pe), Err: fmt.Errorf("not valid TOML: %s", pe.Message)}
		}
		return nil, &Error{File: name, Err: fmt.Errorf("not valid TOML: %w", err)}
	}
	return out, nil
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
		case KeyRW, KeyRWHostExec:
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

// CachePaths are the cache entries' paths in the box, in order.
func (s Spec) CachePaths() []string {
	var out []string
	for _, e := range s.Caches {
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

// ShippedProvides maps each command a shipped spec provides to the
// spec's name.
var ShippedProvides = sync.OnceValue(func() map[string]string {
	out := map[string]string{}
	for _, name := range Shipped() {
		data, _ := ShippedSource(name)
		kvs, err := parse(ShippedFile(name), data)
		if err != nil {
			continue
		}
		for _, kv := range kvs {
			if kv.key != KeyProvides {
				continue
			}
			for _, v := range kv.values {
				if _, dup := out[v.s]; !dup {
					out[v.s] = name
				}
			}
		}
	}
	return out
})
