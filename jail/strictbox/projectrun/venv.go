package projectrun

import (
	"bufio"
	"bytes"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

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

// site is the site-packages of the environment venv, or nil when it
// cannot be told or there is none.
func (w *walker) site(venv string) *pySite {
	if s, ok := w.sites[venv]; ok {
		return s
	}
	if w.sites == nil {
		w.sites = map[string]*pySite{}
	}
	var s *pySite
	if ver := venvVersion(w.read(filepath.Join(venv, "pyvenv.cfg"))); ver != "" && w.list != nil {
		dir := filepath.Join(venv, "lib", "python"+ver, "site-packages")
		if files := w.list(dir); files != nil {
			s = &pySite{dir: dir, files: files}
		}
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
		if !slices.Contains(w.siteMods[s.dir], m) {
			w.siteMods[s.dir] = append(w.siteMods[s.dir], m)
		}
		// held: m is there (not, say, a module of Python's own).
		held := false
		if w.list(key) != nil {
			w.dirs.add(key, key)
			held = true
		}
		for _, f := range s.files {
			if n, ok := protect.PyModule(f, false, false); ok && n == m {
				w.files.add(filepath.Join(s.dir, f), s.dir)
				w.progs.add(filepath.Join(s.dir, f), s.dir)
				held = true
			}
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
