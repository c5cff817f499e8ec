package projectrun

import (
	"bufio"
	"bytes"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/aisan-dev/aisan/jail/strictbox/protect"
)

// A script run by the python of a virtual environment in the project
// (.venv/bin/python hook.py, uv run hook.py) imports by name what is
// installed in that environment's site-packages, after the script's own
// directory and Python's library: code the box may rewrite as freely as
// the script's. What it imports is held there ([walker.siteImports]),
// with what the distribution it belongs to requires, in turn.

// pySite is the site-packages directory of an environment, with its
// listing, read once for the walk.
type pySite struct {
	dir   string
	files []string
	// dists are its *.dist-info directories by normalised distribution
	// name, listed on first use; provides the same by the names their
	// top_level.txt give, read on first need.
	dists, provides map[string]string
	// paths are the directories of the project its .pth files add to
	// the module path (an editable install's src), and mapping the
	// modules an editable install's finder maps to the project, by
	// name; both read on first need.
	paths    []string
	mapping  map[string]string
	editRead bool
}

// finderMapping matches an entry of the MAPPING an editable install's
// finder module (__editable___NAME_finder.py) writes: 'name': 'path'.
var finderMapping = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`'([A-Za-z_][A-Za-z0-9_]*)':\s*'([^'\\]+)'`)
})

// editable reads, once, what the site-packages s adds of the project to
// Python's module path: the path lines of its .pth files that name a
// directory in the project, and the MAPPING of an editable install's
// finder (setuptools), whose paths lie in the project.
func (w *walker) editable(s *pySite) {
	if s.editRead {
		return
	}
	s.editRead = true
	s.mapping = map[string]string{}
	for _, f := range s.files {
		switch {
		case strings.HasSuffix(f, ".pth"):
			for line := range strings.SplitSeq(string(w.read(filepath.Join(s.dir, f))), "\n") {
				line = strings.TrimSpace(line)
				if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "import ") || strings.HasPrefix(line, "import\t") {
					continue
				}
				d := line
				if !filepath.IsAbs(d) {
					d = filepath.Join(s.dir, d)
				}
				if d = filepath.Clean(d); within(d, w.root) && w.list(d) != nil && !slices.Contains(s.paths, d) {
					s.paths = append(s.paths, d)
				}
			}
		case strings.HasPrefix(f, "__editable__") && strings.HasSuffix(f, "_finder.py"):
			for _, m := range finderMapping().FindAllStringSubmatch(string(w.read(filepath.Join(s.dir, f))), maxPackages) {
				if p := filepath.Clean(m[2]); filepath.IsAbs(p) && within(p, w.root) && p != w.root && s.mapping[m[1]] == "" {
					s.mapping[m[1]] = p
				}
			}
		}
	}
}

// venvAddsRoot reports whether a .pth file of w.venv's site-packages
// adds the project's own directory to the module path.
func (w *walker) venvAddsRoot() bool {
	s := w.site(w.venv)
	if s == nil {
		return false
	}
	w.editable(s)
	return slices.Contains(s.paths, w.root)
}

// editableModule holds the module m where the project's editable
// install of s puts it, and reports whether it found it: in a directory
// a .pth file adds, in order, else where the finder maps it.
func (w *walker) editableModule(s *pySite, m string) bool {
	w.editable(s)
	for _, d := range s.paths {
		if w.holdModule(d, w.list(d), m) {
			return true
		}
	}
	if p := s.mapping[m]; p != "" {
		if w.list(p) != nil {
			w.dirs.add(p, p)
			return true
		}
		if strings.HasSuffix(p, ".py") && w.read(p) != nil {
			w.files.add(p, p)
			w.progs.add(p, p)
			return true
		}
	}
	return false
}

// holdModule holds the module m of the directory dir (whose files are
// files), a package whole or a module's files, and reports whether
// there is one.
func (w *walker) holdModule(dir string, files []string, m string) bool {
	held := false
	if p := filepath.Join(dir, m); w.list(p) != nil {
		w.dirs.add(p, p)
		held = true
	}
	for _, f := range files {
		if n, ok := protect.PyModule(f, false, false); ok && n == m {
			w.files.add(filepath.Join(dir, f), dir)
			w.progs.add(filepath.Join(dir, f), dir)
			held = true
		}
	}
	return held
}

// venvOf is the virtual environment a python the command word prog
// names (run in dir) belongs to: the directory above its bin, within
// the project, with a pyvenv.cfg; else "".
func (w *walker) venvOf(prog, dir string) string {
	if !filepath.IsAbs(prog) {
		prog = filepath.Join(dir, prog)
	}
	bin := filepath.Dir(filepath.Clean(prog))
	v := filepath.Dir(bin)
	if filepath.Base(bin) != "bin" || !within(v, w.root) || v == w.root || w.read(filepath.Join(v, "pyvenv.cfg")) == nil {
		return ""
	}
	return v
}

// venvVersion is the major.minor version of Python a pyvenv.cfg's text
// names (venv's version, uv's and virtualenv's version_info), or "".
func venvVersion(cfg []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(cfg))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if k = strings.TrimSpace(k); !ok || k != "version" && k != "version_info" {
			continue
		}
		parts := strings.SplitN(strings.TrimSpace(v), ".", 3)
		if len(parts) < 2 || !digits(parts[0]) || !digits(parts[1]) {
			return ""
		}
		return parts[0] + "." + parts[1]
	}
	return ""
}

func digits(s string) bool {
	return s != "" && len(s) <= 4 && strings.Trim(s, "0123456789") == ""
}

// site is the site-packages of the environment venv, whether or not it
// is there, or nil when it cannot be told (no Python version in its
// pyvenv.cfg).
func (w *walker) site(venv string) *pySite {
	if s, ok := w.sites[venv]; ok {
		return s
	}
	if w.sites == nil {
		w.sites = map[string]*pySite{}
	}
	var s *pySite
	if ver := venvVersion(w.read(filepath.Join(venv, "pyvenv.cfg"))); ver != "" && w.list != nil {
		// One missing at launch is the environment's too: the box could
		// make it, and the python would import from it.
		dir := filepath.Join(venv, "lib", "python"+ver, "site-packages")
		s = &pySite{dir: dir, files: w.list(dir)}
	}
	w.sites[venv] = s
	return s
}

// distName is a distribution's name as its *.dist-info directory and
// the packaging specifications compare it: lower case, each run of -, _
// and . one _.
func distName(s string) string {
	var b strings.Builder
	sep := false
	for _, r := range strings.ToLower(s) {
		if r == '-' || r == '_' || r == '.' {
			sep = true
			continue
		}
		if sep && b.Len() > 0 {
			b.WriteByte('_')
		}
		sep = false
		b.WriteRune(r)
	}
	return b.String()
}

// dist is the *.dist-info directory of the distribution name in s, or "".
func (w *walker) dist(s *pySite, name string) string {
	if s.dists == nil {
		s.dists = map[string]string{}
		if w.subdirs != nil {
			for _, d := range w.subdirs(s.dir) {
				if n, ok := strings.CutSuffix(d, ".dist-info"); ok {
					n, _, _ = strings.Cut(n, "-")
					s.dists[distName(n)] = filepath.Join(s.dir, d)
				}
			}
		}
	}
	return s.dists[distName(name)]
}

// provider is the *.dist-info directory of the distribution that
// installs the module m in s when its name is not m's (yaml is
// PyYAML's), by the top_level.txt files of at most maxPackages
// distributions; "" for none.
func (w *walker) provider(s *pySite, m string) string {
	if s.provides == nil {
		w.dist(s, "")
		s.provides = map[string]string{}
		for i, n := range slices.Sorted(maps.Keys(s.dists)) {
			if i >= maxPackages {
				break
			}
			di := s.dists[n]
			for l := range strings.SplitSeq(string(w.read(filepath.Join(di, "top_level.txt"))), "\n") {
				if l = strings.TrimSpace(l); protect.PyName(l) && s.provides[l] == "" {
					s.provides[l] = di
				}
			}
		}
	}
	return s.provides[m]
}

// requiresDist are the distribution names a METADATA file's text
// requires (its Requires-Dist headers), each once, in order.
func requiresDist(data []byte) []string {
	if len(data) > maxScan {
		data = data[:maxScan]
	}
	var out []string
	for line := range strings.SplitSeq(string(data), "\n") {
		line = strings.TrimRight(line, "\r")
		if line == "" {
			break // the headers end; the description follows
		}
		v, ok := strings.CutPrefix(line, "Requires-Dist:")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		n := strings.IndexFunc(v, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.')
		})
		if n < 0 {
			n = len(v)
		}
		if name := v[:n]; name != "" && !strings.Contains(name, "..") && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// topLevel are the names a distribution (its *.dist-info directory di)
// may be imported by: its top_level.txt, else the first part of each
// path its RECORD installs in site-packages, else its own name.
func (w *walker) topLevel(di, name string) []string {
	var out []string
	add := func(n string) {
		if protect.PyName(n) && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	if data := w.read(filepath.Join(di, "top_level.txt")); data != nil {
		for l := range strings.SplitSeq(string(data), "\n") {
			add(strings.TrimSpace(l))
		}
		return out
	}
	if data := w.read(filepath.Join(di, "RECORD")); data != nil {
		for l := range strings.SplitSeq(string(data), "\n") {
			p, _, _ := strings.Cut(l, ",")
			first, rest, sub := strings.Cut(strings.Trim(p, `"`), "/")
			if !sub && rest == "" {
				first, _ = protect.PyModule(first, false, false)
			}
			add(first)
		}
		if len(out) > 0 {
			return out
		}
	}
	add(distName(name))
	return out
}

// siteImports holds what the Python script text (read by climb, run by
// the python of w.venv) imports by name from the environment's
// site-packages: a package's directory whole, a module's files, and in
// turn the same of each distribution its own requires (Requires-Dist;
// its own is the one of its name, else the one whose top_level.txt
// gives it), at most maxPackages names in a walk.
func (w *walker) siteImports(data []byte) {
	s := w.site(w.venv)
	if s == nil {
		return
	}
	if w.siteSeen == nil {
		w.siteSeen = map[string]bool{}
	}
	if w.siteMods == nil {
		w.siteMods = map[string][]string{}
	}
	if _, ok := w.siteMods[s.dir]; !ok {
		// Swept at the end ([Names.Modules]): a module the box adds
		// under a name imported here (an optional import that failed at
		// launch, try: import ujson), and what the environment's python
		// runs as it starts (a sitecustomize package or bytecode; the
		// .pth files and sitecustomize.py are protected names anywhere).
		w.siteMods[s.dir] = nil
	}
	// The directories of the project a .pth file adds are on the module
	// path too, after site-packages: swept the same way, for what
	// Python imports as it starts (sitecustomize is looked for along
	// the whole path) and for the names imported.
	// (The project's own directory, which a flat layout's editable
	// install adds, is held and swept as the root is: climb calls
	// pyPath0 for it.)
	w.editable(s)
	sites := []string{s.dir}
	for _, d := range s.paths {
		if d == w.root {
			continue
		}
		sites = append(sites, d)
		if _, ok := w.siteMods[d]; !ok {
			w.siteMods[d] = nil
		}
	}
	queue := pyModules(data)
	for ; len(queue) > 0; queue = queue[1:] {
		m := queue[0]
		key := filepath.Join(s.dir, m)
		if w.siteSeen[key] {
			continue
		}
		if len(w.siteSeen) >= maxPackages {
			if !w.siteFull {
				w.siteFull = true
				w.unsure(nil, fmt.Sprintf("its Python scripts import more modules from %s, with what they require, than are followed (%d): %s and those after it are not held", w.rel(s.dir), maxPackages, m))
			}
			return
		}
		w.siteSeen[key] = true
		for _, d := range sites {
			if !slices.Contains(w.siteMods[d], m) {
				w.siteMods[d] = append(w.siteMods[d], m)
			}
		}
		// held: m is there (not, say, a module of Python's own).
		held := w.holdModule(s.dir, s.files, m)
		if !held {
			// The project's own package, installed editable (uv's
			// default for the project, pip install -e): its code is the
			// project's, where the agent works.
			held = w.editableModule(s, m)
		}
		di := w.dist(s, m)
		if di == "" && held {
			di = w.provider(s, m)
		}
		if di == "" {
			continue
		}
		for _, req := range requiresDist(w.read(filepath.Join(di, "METADATA"))) {
			if rd := w.dist(s, req); rd != "" {
				queue = append(queue, w.topLevel(rd, req)...)
			}
		}
	}
}
