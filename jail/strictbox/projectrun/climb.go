package projectrun

import (
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/aisan-dev/aisan/jail/strictbox/protect"
)

// A script an interpreter runs loads code from beside it, and its
// directory is held whole ([walker.loadsFrom]); it may also load code
// from above it (require('../lib/util'), from ..pkg import x under -m,
// require_relative '../x', include __DIR__ . '/../x.php', use lib
// "$FindBin::Bin/../lib"). Those are followed file by file: the
// directories they lie in (a package's root, the project's) are what
// the agent edits, and are not held whole.

// load is what a script names to load, relative to its own directory.
type load struct {
	// path is absolute and clean, before the interpreter's suffixes.
	path string
	// lang is how it is resolved: "js", "py" (a module or package),
	// "rb", "php", "pl", or "dir" for a directory it loads from.
	lang string
}

// langOf is the family of the loader name, as [climbs] reads it.
func langOf(name string) string {
	switch strings.TrimRight(name, "0123456789.") {
	case "python", "pypy":
		return "py"
	case "ruby":
		return "rb"
	case "perl":
		return "pl"
	case "php":
		return "php"
	case "node", "nodejs", "tsx", "ts-node", "deno", "bun":
		return "js"
	}
	return ""
}

// maxScan bounds how much of a script is read for what it loads, and
// maxLoads how many files a project file's scripts load are read.
const (
	maxScan  = 1 << 20
	maxLoads = 256
)

// loadREs are the patterns [climbs] reads a script with, built on first
// use: the binary that links this package starts on every launch.
type loadREs struct {
	jsCall, jsStatic, pyFrom, pyPath, rbLoad, plLoad, phpLoad, phpDir, plBin *regexp.Regexp
	pyImport, pyFromAbs, pyDyn                                               *regexp.Regexp
}

var loadRE = sync.OnceValue(func() *loadREs {
	return &loadREs{
		jsCall:   regexp.MustCompile(`\b(?:require|import)\s*\(([^)\n]*)`),
		jsStatic: regexp.MustCompile(`\b(?:from|import)\s*(['"][^'"\n]*['"])`),
		pyFrom:   regexp.MustCompile(`(?m)^[ \t]*from[ \t]+(\.+)([\w.]*)[ \t]+import[ \t]+\(?([^)\n#]*)`),
		pyPath:   regexp.MustCompile(`(?m)^.*\bsys\.path\b.*$`),
		rbLoad:   regexp.MustCompile(`(?m)(?:\brequire_relative\b|\brequire\b|\bload\b|\$LOAD_PATH\b|\$:)[ \t]*\(?([^\n]*)`),
		plLoad:   regexp.MustCompile(`(?m)\b(use[ \t]+lib|require|do)\b[ \t]*\(?([^;\n]*)`),
		phpLoad:  regexp.MustCompile(`\b(?:include|include_once|require|require_once)\b[ \t]*\(?([^;\n]*)`),
		phpDir:   regexp.MustCompile(`^(?:__DIR__|dirname\(__FILE__\))\s*\.\s*(['"])(/[^'"]*)['"]$`),
		plBin:    regexp.MustCompile(`^\$(?:\{FindBin::(?:Real)?Bin\}|FindBin::(?:Real)?Bin)(/.*)?$`),
		// import a.b as c, d
		pyImport: regexp.MustCompile(`^import[ \t]+([\w., \t]+)`),
		// from a.b import c, d
		pyFromAbs: regexp.MustCompile(`^from[ \t]+([A-Za-z_][\w.]*)[ \t]+import\b`),
		// __import__('a'), importlib.import_module('a.b')
		pyDyn: regexp.MustCompile(`\b(?:__import__|import_module)\(\s*['"]([A-Za-z_][\w.]*)['"]`),
	}
})

// quoted is the value of a string literal s (spaces and closing
// parentheses around it ignored), when it is one with no expansion.
func quoted(s string, lang string) (string, bool) {
	s = strings.TrimSpace(strings.TrimRight(strings.TrimSpace(s), ")"))
	if len(s) < 2 {
		return "", false
	}
	q := s[0]
	if q != '\'' && q != '"' && !(q == '`' && lang == "js") || s[len(s)-1] != q {
		return "", false
	}
	v := s[1 : len(s)-1]
	if strings.ContainsRune(v, rune(q)) || strings.Contains(v, "\\") || q == '`' && strings.Contains(v, "${") {
		return "", false
	}
	if q == '"' && lang != "js" && lang != "pl" && strings.ContainsAny(v, "$#{") {
		return "", false
	}
	return v, true
}

// relative reports whether a specifier is relative to the script's
// directory (./x, ../x, . or ..).
func relative(s string) bool {
	return s == "." || s == ".." || strings.HasPrefix(s, "./") || strings.HasPrefix(s, "../")
}

// climbs reads the text of a script of the family lang in dir for the
// files it loads relative to its own directory, as literal specifiers
// (its loads), and what names a path that leaves the directory but is
// built at run time (notes, each the text that names it).
func climbs(lang string, text []byte, dir string) (loads []load, notes []string) {
	if len(text) > maxScan {
		text = text[:maxScan]
	}
	src := string(text)
	re := loadRE()
	add := func(lang, rel string) {
		l := load{path: filepath.Join(dir, rel), lang: lang}
		if !slices.Contains(loads, l) {
			loads = append(loads, l)
		}
	}
	note := func(s string) {
		// The box may have written it: said with no control characters.
		r := []rune(strings.Map(func(r rune) rune {
			if unicode.IsPrint(r) {
				return r
			}
			return '?'
		}, strings.TrimSpace(s)))
		if s = string(r); len(r) > 80 {
			s = string(r[:80]) + "..."
		}
		if !slices.Contains(notes, s) {
			notes = append(notes, s)
		}
	}
	climbing := func(s string) bool {
		return strings.Contains(s, "../") || strings.Contains(s, `..'`) || strings.Contains(s, `.."`)
	}
	switch lang {
	case "js":
		for _, m := range re.jsCall.FindAllStringSubmatch(src, -1) {
			if v, ok := quoted(m[1], lang); ok {
				if relative(v) {
					add(lang, v)
				} else if pkg := npmName(v); pkg != "" {
					add("npm", filepath.Join("node_modules", pkg))
				} else if importsKey(v) {
					add("imports", v)
				}
			} else if climbing(m[1]) {
				note(m[0] + ")")
			}
		}
		for _, m := range re.jsStatic.FindAllStringSubmatch(src, -1) {
			if v, ok := quoted(m[1], lang); ok && relative(v) {
				add(lang, v)
			} else if pkg := npmName(v); ok && pkg != "" {
				add("npm", filepath.Join("node_modules", pkg))
			} else if ok && importsKey(v) {
				add("imports", v)
			}
		}
	case "py":
		for _, m := range re.pyFrom.FindAllStringSubmatch(src, -1) {
			base := strings.Repeat("../", len(m[1])-1)
			if mod := strings.Trim(m[2], "."); mod != "" {
				add(lang, base+strings.ReplaceAll(mod, ".", "/"))
				continue
			}
			add("py", base+"__init__")
			for _, n := range strings.Split(m[3], ",") {
				if f := strings.Fields(n); len(f) > 0 && f[0] != "*" {
					add(lang, base+f[0])
				}
			}
		}
		for _, m := range re.pyPath.FindAllString(src, -1) {
			if climbing(m) {
				note(m)
			}
		}
	case "rb":
		for _, m := range re.rbLoad.FindAllStringSubmatch(src, -1) {
			v, ok := quoted(m[1], lang)
			switch {
			case ok && strings.HasPrefix(m[0], "require_relative") && !filepath.IsAbs(v):
				add(lang, v)
			case climbing(m[1]):
				note(m[0])
			}
		}
	case "php":
		for _, m := range re.phpLoad.FindAllStringSubmatch(src, -1) {
			e := strings.TrimSpace(m[1])
			if d := re.phpDir.FindStringSubmatch(strings.TrimSpace(strings.TrimSuffix(e, ")"))); d != nil && !strings.Contains(d[2], "$") {
				add(lang, "."+d[2])
			} else if d := re.phpDir.FindStringSubmatch(e); d != nil && !strings.Contains(d[2], "$") {
				add(lang, "."+d[2])
			} else if climbing(e) {
				note(m[0])
			}
		}
	case "pl":
		for _, m := range re.plLoad.FindAllStringSubmatch(src, -1) {
			v, ok := quoted(m[2], lang)
			var b []string
			if ok {
				b = re.plBin.FindStringSubmatch(v)
			}
			switch {
			case b != nil && strings.HasPrefix(m[1], "use"):
				add("dir", "."+b[1])
			case b != nil && !strings.ContainsAny(b[1], "$@"):
				add(lang, "."+b[1])
			case climbing(m[2]):
				note(m[0])
			}
		}
	}
	return loads, notes
}

// suffixes are the files an interpreter tries for a specifier, in its
// order: node's exact name, its extensions, then the directory's
// package.json and index; Python's package, then its module; Ruby's
// .rb. The last is the directory itself, when it is one it may load.
func suffixes(l load) (files []string, dir bool) {
	p := l.path
	switch l.lang {
	case "js":
		if slices.Contains([]string{".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx", ".json", ".node"}, filepath.Ext(p)) {
			return []string{p}, false
		}
		files = []string{p}
		for _, e := range []string{".js", ".mjs", ".cjs", ".ts", ".json"} {
			files = append(files, p+e)
		}
		files = append(files, filepath.Join(p, "package.json"))
		for _, e := range []string{".js", ".mjs", ".cjs", ".ts", ".json"} {
			files = append(files, filepath.Join(p, "index"+e))
		}
		return files, true
	case "py":
		if filepath.Base(p) == "__init__" {
			return []string{p + ".py"}, false
		}
		return []string{filepath.Join(p, "__init__.py"), p + ".py"}, false
	case "rb":
		if filepath.Ext(p) == "" {
			return []string{p + ".rb"}, false
		}
	case "dir":
		return nil, true
	}
	return []string{p}, false
}

// climb holds what the script at p, run by the loader name, loads from
// outside its own directory (see [climbs]), and follows what each file
// it loads loads in turn; its own directory is held by
// [walker.loadsFrom].
func (w *walker) climb(name, p string, depth int) {
	lang := langOf(name)
	if lang == "" {
		return
	}
	p = filepath.Clean(p)
	if w.loaded == nil {
		w.loaded = map[string]bool{}
	}
	if w.loaded[p] || !within(p, w.root) {
		return
	}
	if len(w.loaded) >= maxLoads {
		w.unsure([]string{filepath.Dir(p)}, "its scripts load more files than are followed")
		return
	}
	w.loaded[p] = true
	data := w.read(p)
	if data == nil {
		return
	}
	dir := filepath.Dir(p)
	if depth > maxDepth {
		w.unsure([]string{dir}, "the files "+w.rel(p)+" loads load others too deep to follow")
		return
	}
	if lang == "py" && w.path0 == w.root {
		w.pyPath0(name, data, depth)
	}
	if lang == "py" && w.venv != "" {
		w.siteImports(data)
		if w.path0 != w.root && w.venvAddsRoot() {
			// An editable install of a flat layout puts the project's
			// own directory on the module path after site-packages.
			w.pyPath0(name, data, depth)
		}
	}
	loads, notes := climbs(lang, data, dir)
	for _, n := range notes {
		w.unsure([]string{dir}, w.rel(p)+" loads a path it builds as it runs ("+n+"), which is not followed")
	}
	for _, l := range loads {
		if l.lang == "npm" {
			w.nodePackage(dir, strings.TrimPrefix(l.path, filepath.Join(dir, "node_modules")+"/"))
			continue
		}
		if l.lang == "imports" {
			w.nodeImports(name, dir, strings.TrimPrefix(l.path, dir+"/"), depth)
			continue
		}
		if !w.follow(name, p, l, depth) {
			return
		}
	}
}

// follow holds what the load l, made by the script at p (run by the
// loader name), leads to: the file it resolves to, followed in turn, or
// the directory, held whole. It reports false once the walk has followed
// as many loads as it may.
func (w *walker) follow(name, p string, l load, depth int) bool {
	if !within(l.path, w.root) {
		return true
	}
	dir := filepath.Dir(p)
	if w.climbs++; w.climbs > 16*maxLoads {
		w.unsure([]string{dir}, "its scripts load more files than are followed")
		return false
	}
	files, whole := suffixes(l)
	for _, f := range files {
		w.files.add(f, dir)
		w.progs.add(f, dir)
		if w.read(f) == nil {
			continue
		}
		if filepath.Base(f) == "package.json" {
			// A package: its main may be any file of it, or lead out of it.
			w.packageMain(name, filepath.Dir(f), depth+1)
			break
		}
		if filepath.Ext(f) != ".json" {
			w.climb(name, f, depth+1)
		}
		whole = false
		break
	}
	if !whole || w.heldWhole(l.path) {
		return true
	}
	if l.path == w.root {
		w.unsure([]string{w.root}, w.rel(p)+" loads the project's own directory ("+filepath.Base(l.path)+"), whose files it cannot tell")
	} else {
		w.dirs.add(l.path, l.path)
	}
	return true
}

// packageMain follows the main of the package at pkg, held whole, when
// it leads out of the package: node resolves it against the package's
// directory as written, "../" and all, where an export map may not go.
func (w *walker) packageMain(name, pkg string, depth int) {
	main := mainOf(w.read(filepath.Join(pkg, "package.json")))
	if main == "" {
		return
	}
	t := filepath.Clean(main)
	if !filepath.IsAbs(t) {
		t = filepath.Join(pkg, t)
	}
	if within(t, pkg) {
		return
	}
	if depth > maxDepth {
		w.unsure([]string{pkg}, "the main of "+w.rel(pkg)+" leads to files too deep to follow")
		return
	}
	w.follow(name, filepath.Join(pkg, "package.json"), load{path: t, lang: "js"}, depth)
}

// mainOf is the "main" a package.json's text names ("" for none, or
// for text that does not parse).
func mainOf(data []byte) string {
	if len(data) == 0 || len(data) > maxPackageJSON {
		return ""
	}
	var doc struct {
		Main json.RawMessage `json:"main"`
	}
	var main string
	if json.Unmarshal(data, &doc) != nil || json.Unmarshal(doc.Main, &main) != nil {
		return ""
	}
	return main
}

// climbFrom follows the script at p as [walker.climb] does, with path0
// the directory Python's module path starts with for it.
func (w *walker) climbFrom(name, p, path0 string, depth int) {
	saved := w.path0
	w.path0 = path0
	w.climb(name, p, depth)
	w.path0 = saved
}

// heldWhole reports whether p lies in a directory held whole already.
func (w *walker) heldWhole(p string) bool {
	for d := p; within(d, w.root) && d != w.root; d = filepath.Dir(d) {
		if w.dirs.seen[d] {
			return true
		}
	}
	return false
}

// maxModules bounds how many module names a project file's scripts are
// read for.
const maxModules = 512

// pyModules are the top-level names of the modules a Python script
// imports by absolute name (import a.b, from a.b import c, and
// __import__ or importlib.import_module with a literal name), each once,
// in order. Python looks each up first in the directory that starts its
// module path (the script's own, or where python -m runs). A statement
// is read wherever it is (in a function, under try, after a semicolon),
// and text that only looks like one (in a string) is read too: a name
// too many only holds more.
func pyModules(text []byte) []string {
	if len(text) > maxScan {
		text = text[:maxScan]
	}
	re := loadRE()
	var out []string
	add := func(m string) {
		top, _, _ := strings.Cut(strings.TrimSpace(m), ".")
		if top == "" || !protect.PyName(top) || slices.Contains(out, top) || len(out) >= maxModules {
			return
		}
		out = append(out, top)
	}
	for line := range strings.SplitSeq(string(text), "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		for st := range strings.SplitSeq(line, ";") {
			st = strings.TrimSpace(st)
			if m := re.pyImport.FindStringSubmatch(st); m != nil {
				for part := range strings.SplitSeq(m[1], ",") {
					if f := strings.Fields(part); len(f) > 0 {
						add(f[0])
					}
				}
			} else if m := re.pyFromAbs.FindStringSubmatch(st); m != nil {
				add(m[1])
			}
		}
	}
	for _, m := range re.pyDyn.FindAllStringSubmatch(string(text), -1) {
		add(m[1])
	}
	return out
}

// pyPath0 holds what the Python script at p (read by climb) imports by
// name from the project's own directory, which starts its module path
// and cannot be held whole: each root entry Python would take for one
// of those names (a module's source, bytecode or extension, its cached
// bytecode in __pycache__, a package's directory, held whole) is held,
// and a source file is followed in turn. A name with nothing at the root
// is held by the end's sweep ([Names.Modules]), as is any module or
// package new at the root that a module of the standard library imports
// in its turn.
func (w *walker) pyPath0(name string, data []byte, depth int) {
	mods := pyModules(data)
	if w.mods == nil {
		w.mods = map[string][]string{}
	}
	if w.list == nil {
		w.list = func(string) []string { return nil }
	}
	if len(mods) > 0 && w.rootList == nil {
		// Listed once: each file followed asks again.
		w.rootList = &[2][]string{w.list(w.root), w.list(filepath.Join(w.root, "__pycache__"))}
	}
	var root, cache []string
	if w.rootList != nil {
		root, cache = w.rootList[0], w.rootList[1]
	}
	for _, m := range mods {
		if slices.Contains(w.mods[w.root], m) {
			continue
		}
		if len(w.mods[w.root]) >= maxModules {
			w.unsure([]string{w.root}, "its scripts import more modules than are followed")
			return
		}
		w.mods[w.root] = append(w.mods[w.root], m)
		// A directory by the name is a package, or a namespace package's
		// part: held whole when there (namedSteers keeps what is).
		if pkg := filepath.Join(w.root, m); w.list(pkg) != nil {
			w.dirs.add(pkg, pkg)
		}
		for _, f := range root {
			if s, ok := protect.PyModule(f, false, false); ok && s == m {
				w.files.add(filepath.Join(w.root, f), w.root)
				w.progs.add(filepath.Join(w.root, f), w.root)
			}
		}
		for _, f := range cache {
			if strings.HasPrefix(f, m+".") && strings.HasSuffix(f, ".pyc") {
				w.files.add(filepath.Join(w.root, "__pycache__", f), w.root)
			}
		}
		if p := filepath.Join(w.root, m+".py"); w.read(p) != nil {
			w.files.add(p, w.root)
			w.progs.add(p, w.root)
			w.climb(name, p, depth+1)
		}
	}
}

// npmName is the package a bare specifier (require('dep/sub'), import
// from '@scope/pkg') names, or "" for one that names none: a path, a
// URL or scheme (node:fs, npm:x, https://), or one of node's own
// modules.
func npmName(spec string) string {
	if spec == "" || strings.ContainsAny(spec, ":\\") || strings.HasPrefix(spec, "/") || strings.HasPrefix(spec, ".") || strings.HasPrefix(spec, "#") {
		return ""
	}
	parts := strings.Split(spec, "/")
	n := 1
	if strings.HasPrefix(parts[0], "@") {
		n = 2
	}
	if len(parts) < n || slices.Contains(parts[:n], "") || slices.Contains(parts[:n], "..") {
		return ""
	}
	if n == 1 && slices.Contains(nodeBuiltins, parts[0]) {
		return ""
	}
	return strings.Join(parts[:n], "/")
}

// nodeBuiltins are node's own modules, which no package shadows.
var nodeBuiltins = []string{"assert", "async_hooks", "buffer", "child_process", "cluster", "console", "constants", "crypto", "dgram", "diagnostics_channel", "dns", "domain", "events", "fs", "http", "http2", "https", "inspector", "module", "net", "os", "path", "perf_hooks", "process", "punycode", "querystring", "readline", "repl", "stream", "string_decoder", "sys", "timers", "tls", "trace_events", "tty", "url", "util", "v8", "vm", "wasi", "worker_threads", "zlib"}

// nodePackage holds whole the package pkg that a script in dir
// requires or imports by name, where node finds it ([walker.findPackage]),
// and the packages it depends on ([walker.nodeDeps]).
func (w *walker) nodePackage(dir, pkg string) {
	if p := w.findPackage(dir, pkg); p != "" {
		w.nodeDeps(p)
	}
}

// importsKey reports whether a specifier names an entry of its
// package's "imports" map (#name, #name/sub): node maps it to a file of
// the package or to another package.
func importsKey(spec string) bool {
	return len(spec) > 1 && spec[0] == '#' && !strings.ContainsAny(spec, "\\ \t\n") && !strings.Contains(spec, "..")
}

// nodeImports holds what the specifier spec (#name), loaded by a
// script in dir, leads to through the "imports" map of the package.json
// of the package the script is in (the nearest one above it, in the
// project): a file of the package (./x.js), read in turn, or a package
// found as node finds it from the package's directory, with what it
// depends on. Every target of a conditional entry is held.
func (w *walker) nodeImports(name, dir, spec string, depth int) {
	for d := dir; within(d, w.root); d = filepath.Dir(d) {
		data := w.read(filepath.Join(d, "package.json"))
		if data == nil {
			if d == w.root {
				return
			}
			continue
		}
		for _, t := range importTargets(data, spec) {
			if strings.HasPrefix(t, "./") {
				if p := filepath.Join(d, t); within(p, d) {
					w.files.add(p, d)
					w.progs.add(p, d)
					w.climb(name, p, depth+1)
				}
			} else if pkg := npmName(t); pkg != "" {
				w.nodePackage(d, pkg)
			}
		}
		return
	}
}

// importTargets are the targets a package.json's text maps the
// specifier spec to in its "imports" (an exact key, else a pattern key
// with one *, whose match is put in the target's *), every one of a
// conditional or listed entry, at most maxPackages.
func importTargets(data []byte, spec string) []string {
	if len(data) > maxPackageJSON {
		return nil
	}
	var doc struct {
		Imports map[string]json.RawMessage `json:"imports"`
	}
	if json.Unmarshal(data, &doc) != nil {
		return nil
	}
	entry, sub := doc.Imports[spec], ""
	if entry == nil {
		for _, k := range slices.Sorted(maps.Keys(doc.Imports)) {
			before, after, ok := strings.Cut(k, "*")
			if ok && !strings.Contains(after, "*") && len(spec) >= len(before)+len(after) && strings.HasPrefix(spec, before) && strings.HasSuffix(spec, after) {
				entry, sub = doc.Imports[k], spec[len(before):len(spec)-len(after)]
				break
			}
		}
	}
	var out []string
	var walk func(raw json.RawMessage, depth int)
	walk = func(raw json.RawMessage, depth int) {
		if depth > 8 || len(out) >= maxPackages {
			return
		}
		var s string
		var list []json.RawMessage
		var cond map[string]json.RawMessage
		switch {
		case json.Unmarshal(raw, &s) == nil:
			if t := strings.ReplaceAll(s, "*", sub); !slices.Contains(out, t) {
				out = append(out, t)
			}
		case json.Unmarshal(raw, &list) == nil:
			for _, r := range list {
				walk(r, depth+1)
			}
		case json.Unmarshal(raw, &cond) == nil:
			for _, k := range slices.Sorted(maps.Keys(cond)) {
				walk(cond[k], depth+1)
			}
		}
	}
	if entry != nil {
		walk(entry, 0)
	}
	return out
}

// binPackage follows a package's command in node_modules/.bin (p), a
// link into the package, to what the package depends on: the package
// itself is held by the launch, which resolves the link.
func (w *walker) binPackage(p string) {
	if w.link == nil {
		return
	}
	p = filepath.Clean(p)
	if !filepath.IsAbs(p) || !within(p, w.root) {
		return
	}
	t := w.link(p)
	if t == "" {
		return
	}
	if !filepath.IsAbs(t) {
		t = filepath.Join(filepath.Dir(p), t)
	}
	d := PackageOf(filepath.Clean(t))
	if d == "" || !within(d, w.root) || w.list(d) == nil {
		return
	}
	if w.pkgs == nil {
		w.pkgs = map[string]bool{}
	}
	if !w.pkgs[d] {
		// Counted, not held here: the launch holds it.
		w.pkgs[d] = true
		w.followDeps(d)
	}
}

// PackageOf is the directory of the package whose file p is (the
// nearest node_modules/NAME or node_modules/@SCOPE/NAME above it), or "".
func PackageOf(p string) string {
	i := strings.LastIndex(p, "/node_modules/")
	if i < 0 {
		return ""
	}
	rest := strings.Split(p[i+len("/node_modules/"):], "/")
	n := 1
	if strings.HasPrefix(rest[0], "@") {
		n = 2
	}
	if len(rest) <= n || rest[0] == ".bin" || slices.Contains(rest[:n], "") || slices.Contains(rest[:n], "..") || slices.Contains(rest[:n], ".") {
		return ""
	}
	return filepath.Join(append([]string{p[:i], "node_modules"}, rest[:n]...)...)
}

// findPackage is the directory of the package pkg as node finds it for
// a file in dir: the first node_modules/pkg in dir or a directory above
// it, up to the project's own (held, the box cannot remove it to leave
// the next one found), or "" for none. A link (a pnpm layout) is
// followed to the package's own directory when it stays in the project
// (node_modules/pkg -> .pnpm/pkg@1/node_modules/pkg), which is what node
// loads and where it looks for what the package loads in turn. A file
// require takes there before the directory (pkg.js, pkg.json, pkg.node)
// is held instead, and "" returned. Each node_modules looked in is
// noted with pkg ([walker.nodeLooked]).
func (w *walker) findPackage(dir, pkg string) string {
	if w.list == nil || pkg == "" {
		return ""
	}
	for d := dir; within(d, w.root); d = filepath.Dir(d) {
		// node looks in no node_modules/node_modules.
		if filepath.Base(d) != "node_modules" {
			nm := filepath.Join(d, "node_modules")
			w.nodeLooked(nm, pkg)
			if f := w.nodeFile(nm, pkg); f != "" {
				w.files.add(f, f)
				return ""
			}
			if p := filepath.Join(nm, pkg); w.list(p) != nil {
				return p
			} else if t := w.linkedDir(p); t != "" {
				return t
			}
		}
		if d == w.root {
			break
		}
	}
	return ""
}

// maxHops bounds how many links in a row [walker.linkedDir] follows.
const maxHops = 8

// linkedDir is the directory of the project the link p leads to, each
// link in the chain read as written, or "" when p is no link, or it
// leads out of the project or to no directory.
func (w *walker) linkedDir(p string) string {
	if w.link == nil {
		return ""
	}
	for range maxHops {
		t := w.link(p)
		if t == "" {
			break
		}
		if !filepath.IsAbs(t) {
			t = filepath.Join(filepath.Dir(p), t)
		}
		if p = filepath.Clean(t); !within(p, w.root) {
			return ""
		}
	}
	if w.link(p) != "" || w.list(p) == nil {
		return ""
	}
	return p
}

// nodeFile is the file in the node_modules directory nm that require
// takes for the package pkg before its directory, or "".
func (w *walker) nodeFile(nm, pkg string) string {
	d := filepath.Dir(filepath.Join(nm, pkg))
	if w.nmFiles == nil {
		w.nmFiles = map[string][]string{}
	}
	fs, ok := w.nmFiles[d]
	if !ok {
		fs = w.list(d)
		w.nmFiles[d] = fs
	}
	for _, s := range protect.NodeSuffixes {
		if slices.Contains(fs, filepath.Base(pkg)+s) {
			return filepath.Join(nm, pkg+s)
		}
	}
	return ""
}

// inPackage reports whether p lies in a node package the walk counts
// as held (those of .bin commands are held by the launch, and are not
// among the directories held whole).
func (w *walker) inPackage(p string) bool {
	for d := range w.pkgs {
		if within(p, d) {
			return true
		}
	}
	return false
}

// nodeLooked notes that node looks for the package pkg in the
// node_modules directory nm: the box could add it there, or a file
// require takes before the directory found (pkg.js beside pkg/), and
// what it adds there by that name is swept at the end
// ([Names.Modules]).
func (w *walker) nodeLooked(nm, pkg string) {
	if w.nodeMods == nil {
		w.nodeMods = map[string][]string{}
	}
	if !slices.Contains(w.nodeMods[nm], pkg) {
		w.nodeMods[nm] = append(w.nodeMods[nm], pkg)
	}
}

// maxPackages bounds how many node packages one walk holds, and how
// many names their package.json files give are looked up (four times
// as many: a name may be of a package not installed); maxPackageJSON
// how large a package.json is read for what it depends on.
const (
	maxPackages    = 256
	maxPackageJSON = 1 << 20
)

// nodeDeps holds the package at p whole, and in turn each package it
// depends on, found as node finds it from the package's directory: a
// held package's code loads them by name, and the box could rewrite
// one that lies outside it (hoisted to the project's node_modules).
// Only the names its package.json gives are known.
func (w *walker) nodeDeps(p string) {
	if w.pkgs == nil {
		w.pkgs = map[string]bool{}
	}
	if !w.pkgs[p] && w.holdPackage(p) {
		w.followDeps(p)
	}
}

// followDeps holds, in turn, what the package at p (held) depends on.
func (w *walker) followDeps(p string) {
	for queue := []string{p}; len(queue) > 0; queue = queue[1:] {
		p := queue[0]
		pj := filepath.Join(p, "package.json")
		data := w.read(pj)
		if data == nil {
			if slices.Contains(w.list(p), "package.json") {
				w.unsure([]string{p}, fmt.Sprintf("%s cannot be read (over %d MiB, or unreadable), so the packages %s loads by name are not held", w.rel(pj), maxPackageJSON>>20, w.rel(p)))
			}
			continue
		}
		w.packageMain("node", p, 1)
		deps, ok := packageDeps(data)
		if !ok {
			w.unsure([]string{p}, w.rel(pj)+" does not parse as a package.json, so the packages "+w.rel(p)+" loads by name are not held")
			continue
		}
		for _, d := range deps {
			if w.npmLooks++; w.npmLooks > 4*maxPackages {
				w.packagesBound(fmt.Sprintf("name more packages they depend on than are looked up (%d): %s of %s and those after it are not held", 4*maxPackages, d, w.rel(pj)))
				return
			}
			q := w.findPackage(p, d)
			if q == "" || w.pkgs[q] {
				continue
			}
			if !w.holdPackage(q) {
				return
			}
			queue = append(queue, q)
		}
	}
}

// holdPackage holds the package at p whole, unless the walk holds as
// many as it may already.
func (w *walker) holdPackage(p string) bool {
	if len(w.pkgs) >= maxPackages {
		w.packagesBound(fmt.Sprintf("depend on more packages than are held (%d): %s and those found after it are not held", maxPackages, w.rel(p)))
		return false
	}
	w.pkgs[p] = true
	w.dirs.add(p, p)
	return true
}

// packagesBound says, once, that the node packages a walk holds stop
// short of what they depend on, and where (what).
func (w *walker) packagesBound(what string) {
	if !w.npmFull {
		w.npmFull = true
		w.unsure(nil, "the node packages its scripts load "+what)
	}
}

// packageDeps are the names of the packages a package.json's text says
// its code loads (dependencies, optionalDependencies and
// peerDependencies, in that order, each table's names sorted;
// devDependencies are not installed with it), each once; false when it
// does not parse or is too large. A name
// node could not take from node_modules (a path, one of node's own
// modules) is left out.
func packageDeps(data []byte) ([]string, bool) {
	if len(data) > maxPackageJSON {
		return nil, false
	}
	var doc struct {
		Deps     map[string]json.RawMessage `json:"dependencies"`
		Optional map[string]json.RawMessage `json:"optionalDependencies"`
		Peer     map[string]json.RawMessage `json:"peerDependencies"`
	}
	if json.Unmarshal(data, &doc) != nil {
		return nil, false
	}
	var out []string
	seen := map[string]bool{}
	for _, m := range []map[string]json.RawMessage{doc.Deps, doc.Optional, doc.Peer} {
		for _, n := range slices.Sorted(maps.Keys(m)) {
			if n != "" && npmName(n) == n && !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	return out, true
}
