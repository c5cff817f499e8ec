package protect

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"

	"golang.org/x/sys/unix"
)

// A script a host tool runs with Python from the project's own directory
// (a hook's python3 hook.py at the root) finds its modules there first:
// sys.path starts with the script's directory, and with python -m with
// the one it runs in. That directory is where the agent works, and is
// not held whole: the root entries the script imports by name are held
// (jail/strictbox/projectrun), and a module or package the box adds
// there (json.py, gettext.pyc, a re/ package, an extension) would be
// what the script, or the standard library it imports, runs next on the
// host. Such a directory is a [ModuleDir]: at the end, each entry Python
// could import from it that was not there at launch is swept into the
// review; what was there at launch (main.py, edited) stays the box's
// direct work.

// ModuleDir is a directory a held script's Python loads modules from by
// name that is not held whole.
type ModuleDir struct {
	Path string
	// Names are the modules the scripts import by name: a directory new
	// by one of these names is swept whether or not it holds an
	// __init__.py (a namespace package), and so is its cached bytecode
	// in __pycache__.
	Names []string `json:",omitempty"`
	// Entries are the importable entries there at launch ([pyEntries]).
	Entries []string `json:",omitempty"`
	// Links are the targets at launch of those that are links: one the
	// box points elsewhere is swept.
	Links map[string]string `json:",omitempty"`
	Why   string            `json:",omitempty"`
	// Site is set for a virtual environment's site-packages, where the
	// packages the box installs are its own: only what Python runs as it
	// starts there (a .pth file, sitecustomize, usercustomize) and what
	// is named in Names are swept, not every new entry.
	Site bool `json:",omitempty"`
	// Node is set for a node_modules directory (which need not exist at
	// launch) where node looks for the packages in Names, which a held
	// script or package loads by name: what the box adds there that
	// require takes for one of them (NAME or @SCOPE/NAME, a directory or
	// a file, or NAME.js, .json or .node, which it tries before the
	// directory) is swept.
	Node bool `json:",omitempty"`
	// Files is set for a directory (which need not exist at launch) in
	// which a held command's tool looks for files by the exact names in
	// Names, none of them there at launch: its configs, its lock files,
	// a file its words name. A mount point for each would be an empty
	// file in the user's repository while the box runs (an empty
	// .prettierrc or yarn.lock breaks the user's own tools meanwhile),
	// so what the box creates by one of those names is swept instead.
	Files bool `json:",omitempty"`
}

// entries are the entries of d that a sweep compares (see [pyEntries]
// and [nodeEntries]).
func (d ModuleDir) entries() []string {
	if d.Node {
		return nodeEntries(d.Path, d.Names)
	}
	if d.Files {
		return fileEntries(d.Path, d.Names)
	}
	return pyEntries(d.Path, d.Names, d.Site)
}

// NodeSuffixes are what node's require adds to a name to find a file in
// node_modules, which it tries before the package's directory.
var NodeSuffixes = []string{".js", ".json", ".node"}

// nodeEntries are the entries of the node_modules directory dir that
// node's require takes for one of names: the package's directory, or a
// file of that name with or without NodeSuffixes.
func nodeEntries(dir string, names []string) []string {
	var out []string
	for _, n := range names {
		for _, suffix := range append([]string{""}, NodeSuffixes...) {
			if _, err := os.Lstat(filepath.Join(dir, n+suffix)); err == nil {
				out = append(out, n+suffix)
			}
		}
	}
	return out
}

// fileEntries are those of names that are entries of dir.
func fileEntries(dir string, names []string) []string {
	var out []string
	for _, n := range names {
		if _, err := os.Lstat(filepath.Join(dir, n)); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// siteStartup are the modules the site module imports from every
// site-packages directory as Python starts, before any script runs.
var siteStartup = []string{"sitecustomize", "usercustomize"}

// PyName reports whether s is a name Python could import.
func PyName(s string) bool {
	for i, r := range s {
		if r != '_' && !unicode.IsLetter(r) && (i == 0 || !unicode.IsDigit(r)) {
			return false
		}
	}
	return s != ""
}

// PyModule is the module Python may import a directory entry (name) as,
// from a directory on its module path: a source or bytecode file, an
// extension module (x.so, x.abi3.so, x.cpython-311-x86_64-linux-gnu.so)
// or, with dir, a package (init says it holds an __init__.py or .pyc).
func PyModule(name string, dir, init bool) (string, bool) {
	if dir {
		return name, init && PyName(name)
	}
	for _, ext := range []string{".py", ".pyc", ".so"} {
		if stem, ok := strings.CutSuffix(name, ext); ok {
			if ext == ".so" {
				stem, _, _ = strings.Cut(stem, ".")
			}
			return stem, PyName(stem)
		}
	}
	return "", false
}

// pyEntries are the entries of dir that Python may import (see
// [PyModule]), a directory by one of names too, and the files of its
// __pycache__ cached for one of names (as __pycache__/NAME...). For a
// site-packages (site), only those of names and those Python runs as
// it starts (a .pth file, sitecustomize, usercustomize).
func pyEntries(dir string, names []string, site bool) []string {
	var out []string
	if site {
		// A .pth file's import lines run as Python starts.
		names = append(slices.Clone(names), siteStartup...)
	}
	// Every entry: one the box adds is in the repository already, which
	// the end walks whole.
	es, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	for _, e := range es {
		n := e.Name()
		isDir := e.IsDir()
		if e.Type()&os.ModeSymlink != 0 {
			// A link to a directory is a package as well.
			st, err := os.Stat(filepath.Join(dir, n))
			isDir = err == nil && st.IsDir()
		}
		init := isDir && PyName(n) && hasInit(filepath.Join(dir, n))
		m, ok := PyModule(n, isDir, init)
		if site {
			switch {
			case !isDir && strings.HasSuffix(n, ".pth"):
				out = append(out, n)
			case isDir && !init && slices.Contains(names, n):
				// A directory of a name that is no package yet: an
				// __init__ the box adds there is told from one it made.
				out = append(out, n+"/")
			case (ok || isDir) && slices.Contains(names, m):
				out = append(out, n)
			}
			continue
		}
		if ok || isDir && slices.Contains(names, m) {
			out = append(out, n)
		} else if isDir && PyName(n) {
			// A directory that is no package: one the box makes one of
			// by adding an __init__ is told from one it made.
			out = append(out, n+"/")
		}
	}
	if len(names) > 0 {
		if es, err := os.ReadDir(filepath.Join(dir, "__pycache__")); err == nil {
			for _, e := range es {
				if m, _, _ := strings.Cut(e.Name(), "."); slices.Contains(names, m) {
					out = append(out, filepath.Join("__pycache__", e.Name()))
				}
			}
		}
	}
	return out
}

// ModuleDirs returns ds with the importable entries of each at launch.
func ModuleDirs(ds []ModuleDir) []ModuleDir {
	out := slices.Clone(ds)
	for i := range out {
		out[i].Entries, out[i].Links = launchEntries(out[i])
	}
	return out
}

// launchEntries are d's entries at launch, and the targets of those
// that are links.
func launchEntries(d ModuleDir) ([]string, map[string]string) {
	es := d.entries()
	var links map[string]string
	for _, e := range es {
		if t, err := os.Readlink(filepath.Join(d.Path, strings.TrimSuffix(e, "/"))); err == nil {
			if links == nil {
				links = map[string]string{}
			}
			links[e] = t
		}
	}
	return es, links
}

// SweepModules are the importable entries of ds new since launch (not
// in their Entries, nor among known), left alone when changed after
// run.End (the user's, after the box).
func SweepModules(ds []ModuleDir, known []string, run Span) []string {
	var out []string
	fresh := func(p string) bool {
		var st unix.Stat_t
		return unix.Lstat(p, &st) == nil && (run.End.IsZero() || !time.Unix(st.Ctim.Unix()).After(run.End))
	}
	for _, d := range ds {
		for _, e := range d.entries() {
			p := filepath.Join(d.Path, e)
			if t, ok := d.Links[e]; ok {
				// A link there at launch: swept once it leads elsewhere,
				// or is a link no more.
				if now, err := os.Readlink(p); (err != nil || now != t) && fresh(p) {
					out = append(out, p)
				}
				continue
			}
			if strings.HasSuffix(e, "/") || slices.Contains(d.Entries, e) || slices.Contains(known, p) {
				continue
			}
			if slices.Contains(d.Entries, e+"/") {
				// A directory there at launch, made a package: its
				// __init__ is swept, the rest of it is the user's.
				for _, i := range inits(p) {
					if fresh(filepath.Join(p, i)) {
						out = append(out, filepath.Join(p, i))
					}
				}
				continue
			}
			if fresh(p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// inits are the entries of the directory d that make it a package: an
// __init__ Python imports (__init__.py, .pyc, an extension).
func inits(d string) []string {
	es, err := os.ReadDir(d)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range es {
		if m, ok := PyModule(e.Name(), false, false); ok && m == "__init__" {
			out = append(out, e.Name())
		}
	}
	return out
}

// hasInit reports whether the directory d is a package.
func hasInit(d string) bool { return len(inits(d)) > 0 }
