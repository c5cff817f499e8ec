package projectrun

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/aisan-dev/aisan/jail/strictbox/protect"
	"go.yaml.in/yaml/v3"
	"mvdan.cc/sh/v3/syntax"
)

// Reader returns the text of a file of the project a command makes its
// tool read (a package.json, a Makefile), or nil when there is none or
// it cannot be read as a regular file.
type Reader func(path string) []byte

// Project is what the readers are given of the host besides the file:
// how to read the project files a command makes its tool read, and the
// user's home, which $HOME and ~ name ("" for unknown).
type Project struct {
	Read Reader
	Home string
	// List names the regular files of a directory of the project (nil
	// when there is none), for a build that compiles each (go run).
	List func(dir string) []string
	// Dirs names the directories in a directory of the project (not
	// links), for the *.dist-info of a Python environment.
	Dirs func(dir string) []string
	// Link is the target of a symlink of the project as it is written
	// ("" for none), for a package's command in node_modules/.bin.
	Link func(path string) string
}

// Names is what a project file makes its tool run besides itself.
type Names struct {
	// Files are the files in its commands: the programs and scripts
	// they run, the files their words name, and the files that say
	// what npm, make or just run for them (package.json, a Makefile,
	// a justfile, each with what their scripts or recipes name).
	Files []string
	// Dirs are directories a command runs in whose program could not
	// be told: each is held whole (the project's own root never is).
	Dirs []string
	// Looked are the files among Files that a command's tool looks
	// for by name, there or not: its configs, its lock files. One
	// missing at launch is the box's to create only into the review.
	Looked []string
	// Programs are the files among Files that a command runs (its
	// command word with a slash, the script a shell, an interpreter or
	// source is given): one missing at launch is run too once something
	// creates it ([ -x ./local.sh ] && ./local.sh).
	Programs []string
	// Notes say, for each command that could not be followed, where it
	// is, what could not be told, and what was held for it instead.
	Notes []string
	// Modules are the directories a script's Python loads modules from
	// by name that are not held whole (the project's own), with the
	// names its scripts import, and the node_modules directories node
	// looks in for the packages a held script or package loads by name:
	// what the box adds there that Python may import, or that node's
	// require takes for those names, is swept into the review at the
	// end.
	Modules []protect.ModuleDir
}

// maxDepth bounds how deep commands that run commands (sh -c, eval, npm
// scripts, make recipes) are followed; maxSteps how many commands of a
// file are read, maxDirs in how many directories one may run (after
// branches that cd).
const (
	maxDepth = 4
	maxSteps = 20000
	maxDirs  = 16
)

// walker reads the shell commands of one project file.
type walker struct {
	files, dirs, progs, looked paths
	// notes are what could not be followed, by command and why, with
	// what was held for each.
	notes []note
	// root is the project's directory; where names the project file
	// (and the entry in it) for notes.
	root, where string
	vars        map[string]string
	// home is the user's home, for a word that starts with ~/.
	home string
	// scripts are the shell scripts read already.
	scripts map[string]bool
	// loaded are the files read for what they load (see [walker.climb]).
	loaded map[string]bool
	// climbs counts the loads they name that are held.
	climbs int
	// path0 is the directory Python's module path starts with for the
	// script being followed; mods are the module names imported by name
	// from each such directory that is not held whole (the project's
	// own), see [walker.pyPath0].
	path0 string
	mods  map[string][]string
	// pkgs are the node packages held whole, by directory, each with
	// what it depends on (see [walker.nodeDeps]); npmLooks counts the
	// names looked up for them, and npmFull is set once the walk has
	// said it stops short.
	pkgs     map[string]bool
	npmLooks int
	npmFull  bool
	// nodeMods are the node_modules directories node looks in for a
	// package a held script or package loads by name, each with those
	// names (see [walker.findPackage]); nmFiles the regular files of
	// each directory there listed.
	nodeMods map[string][]string
	nmFiles  map[string][]string
	// rootList is the listing of the project's own directory and its
	// __pycache__, for [walker.pyPath0].
	rootList *[2][]string
	// gitVars are the GIT_CONFIG_KEY_n and GIT_CONFIG_VALUE_n set, by n.
	gitVars map[string][2]*string
	// gitFiles are the git configuration files read already.
	gitFiles map[string]bool
	// pytestRead are the directories whose pytest configuration, and
	// the plugins, read already.
	pytestRead map[string]bool
	read       Reader
	list       func(dir string) []string
	// tfRead are the directories whose terraform configuration was read.
	tfRead  map[string]bool
	subdirs func(dir string) []string
	link    func(path string) string
	// venv is the Python environment whose python runs the script
	// being followed (see [walker.siteImports]); sites are the
	// environments' site-packages, read once; siteSeen the names held
	// from them, and siteFull is set once the walk has said it stops
	// short.
	venv     string
	sites    map[string]*pySite
	siteSeen map[string]bool
	// siteMods are the site-packages directories followed, each with
	// the module names imported from it: swept at the end for what
	// runs as Python starts, and for those names.
	siteMods map[string][]string
	siteFull bool
	// cmd is the command being read, for notes.
	cmd string
	// steps counts the commands read.
	steps int
}

func newWalker(root, where string, vars map[string]string, pr Project) *walker {
	read := pr.Read
	if read == nil {
		read = func(string) []byte { return nil }
	}
	known := map[string]string{}
	if pr.Home != "" {
		known["HOME"] = pr.Home
	}
	maps.Copy(known, vars)
	return &walker{root: root, where: where, vars: known, home: pr.Home, read: read, list: pr.List, subdirs: pr.Dirs, link: pr.Link}
}

// note is a command that could not be followed.
type note struct {
	where, cmd, why string
	held            []string
	// root is set when it runs in the project's own directory.
	root bool
}

func (w *walker) names() Names {
	n := Names{Files: w.files.out, Dirs: w.dirs.out, Programs: w.progs.out, Looked: w.looked.out}
	for _, d := range slices.Sorted(maps.Keys(w.siteMods)) {
		n.Modules = append(n.Modules, protect.ModuleDir{Path: d, Names: w.siteMods[d], Site: true})
	}
	for _, nm := range slices.Sorted(maps.Keys(w.nodeMods)) {
		// One inside a directory held whole, or a package the launch
		// holds, is held with it.
		if !w.heldWhole(filepath.Dir(nm)) && !w.inPackage(nm) {
			n.Modules = append(n.Modules, protect.ModuleDir{Path: nm, Names: w.nodeMods[nm], Node: true})
		}
	}
	for _, d := range slices.Sorted(maps.Keys(w.mods)) {
		n.Modules = append(n.Modules, protect.ModuleDir{Path: d, Names: w.mods[d]})
		held := "none"
		if ms := w.mods[d]; len(ms) > 8 {
			held = strings.Join(ms[:8], ", ") + ", ..."
		} else if len(ms) > 0 {
			held = strings.Join(ms, ", ")
		}
		n.Notes = append(n.Notes, fmt.Sprintf("%s: Python starts the module path of the scripts it runs with the project's own directory, which is not held whole: what is there of the modules they import by name (%s) is held, and a module or package the box adds there (*.py, *.pyc, *.so, a directory with __init__.py) is held for review when it ends.", w.where, held))
	}
	for _, x := range w.notes {
		say := "nothing could be held for it"
		if held := slices.Compact(x.held); len(held) > 6 {
			say = "held for review instead: " + strings.Join(held[:6], ", ") + ", ..."
		} else if len(held) > 0 {
			say = "held for review instead: " + strings.Join(held, ", ")
		}
		if x.root {
			say += "; the project's own directory, where it runs, is not held whole"
		}
		n.Notes = append(n.Notes, fmt.Sprintf("%s: cannot tell what %q runs (%s); %s. Check it before the host runs it.", x.where, x.cmd, x.why, say))
	}
	return n
}

// rel is p relative to the project's root when it lies in it.
func (w *walker) rel(p string) string {
	if r, err := filepath.Rel(w.root, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}

// from is the path p names for a command run in the directory d:
// absolute and clean.
func from(d, p string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(d, p)
	}
	return filepath.Clean(p)
}

// unsure records a command that could not be followed (why), holds
// candidates (files) and the directories it runs in, and says so.
func (w *walker) unsure(dirs []string, why string, candidates ...string) {
	var held []string
	for _, c := range candidates {
		for _, d := range dirs {
			p := from(d, c)
			w.files.add(p, d)
			held = append(held, w.rel(p))
		}
	}
	for _, d := range dirs {
		if d != w.root && within(d, w.root) {
			w.dirs.add(d, d)
			held = append(held, w.rel(d)+"/ (all of it)")
		}
	}
	root := slices.Contains(dirs, w.root)
	for i := range w.notes {
		if x := &w.notes[i]; x.where == w.where && x.cmd == w.cmd && x.why == why {
			for _, h := range held {
				if !slices.Contains(x.held, h) {
					x.held = append(x.held, h)
				}
			}
			x.root = x.root || root
			return
		}
	}
	w.notes = append(w.notes, note{where: w.where, cmd: w.cmd, why: why, held: held, root: root})
}

// within reports whether p is dir or lies in it.
func within(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

// word is a word of a command: its value when literal, else the literal
// text after its last expansion (tail).
type word struct {
	s    string
	ok   bool
	tail string
}

func lit(s string) word { return word{s: s, ok: true} }

// shell reads a shell command line run in dirs.
func (w *walker) shell(cmd string, dirs []string, depth int) {
	if depth > maxDepth {
		w.unsure(dirs, "commands run by commands nest too deep to follow")
		return
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(cmd), "")
	if err != nil {
		return // the shell could run nothing from it either
	}
	w.stmts(f.Stmts, dirs, depth)
}

func (w *walker) stmts(list []*syntax.Stmt, dirs []string, depth int) []string {
	for _, s := range list {
		dirs = w.stmt(s, dirs, depth)
	}
	return dirs
}

func (w *walker) stmt(s *syntax.Stmt, dirs []string, depth int) []string {
	if s == nil {
		return dirs
	}
	for _, r := range s.Redirs {
		w.substs(r.Word, dirs, depth)
		if r.Op == syntax.RdrIn && r.Word != nil {
			if a := w.word(r.Word); a.ok && stdinShell(s) {
				// bash < FILE: the file is its script.
				w.runsFile(a, nil, dirs, depth, true)
			} else {
				w.arg(a, dirs)
			}
		}
	}
	return w.shcmd(s.Cmd, dirs, depth)
}

// stdinShell reports whether s runs a shell that reads its script from
// its input: no -c and no script file given, or -s.
func stdinShell(s *syntax.Stmt) bool {
	c, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(c.Args) == 0 || !slices.Contains(shells, filepath.Base(c.Args[0].Lit())) {
		return false
	}
	for _, a := range c.Args[1:] {
		l := a.Lit()
		switch {
		case l == "-s" || strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "--") && strings.Contains(l, "s"):
			return true
		case strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "--") && strings.Contains(l, "c"):
			return false
		case !strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "+"):
			return false
		}
	}
	return true
}

// catScripts are the files cat gives a shell to read as its script (cat
// FILE | sh), when s is such a pipe.
func (w *walker) catScripts(c *syntax.BinaryCmd) []word {
	x, ok := c.X.Cmd.(*syntax.CallExpr)
	if !ok || len(x.Args) < 2 || x.Args[0].Lit() != "cat" || !stdinShell(c.Y) {
		return nil
	}
	var out []word
	for _, a := range x.Args[1:] {
		if v := w.word(a); v.ok && !strings.HasPrefix(v.s, "-") {
			out = append(out, v)
		}
	}
	return out
}

// union is the directories of each list, each once.
func union(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		for _, d := range l {
			if !slices.Contains(out, d) {
				out = append(out, d)
			}
		}
	}
	return out
}

// assign records the values of assignments as far as they are known: a
// variable set to what cannot be told is unknown from then on.
func (w *walker) assign(as []*syntax.Assign) {
	for _, a := range as {
		if a.Name == nil || a.Naked {
			continue
		}
		name := a.Name.Value
		if a.Value == nil || a.Append || a.Index != nil || a.Array != nil {
			delete(w.vars, name)
			continue
		}
		if v := w.word(a.Value); v.ok {
			w.vars[name] = v.s
		} else {
			delete(w.vars, name)
		}
	}
}

// shcmd reads c run in dirs and returns the directories the next
// command runs in (cd changes them; after a branch, either).
func (w *walker) shcmd(c syntax.Command, dirs []string, depth int) []string {
	switch c := c.(type) {
	case nil:
	case *syntax.CallExpr:
		for _, a := range c.Assigns {
			w.substs(a, dirs, depth)
		}
		if len(c.Args) == 0 {
			// NAME=VALUE alone sets a variable the words after it use
			// (here="$(cd "$(dirname "$0")" && pwd)").
			w.assign(c.Assigns)
			return dirs
		}
		return w.call(c, dirs, depth)
	case *syntax.DeclClause:
		w.substs(c, dirs, depth)
		if v := c.Variant.Value; v == "export" || v == "local" || v == "readonly" {
			if v == "export" {
				w.envVars(c.Args, dirs, depth)
			}
			w.assign(c.Args)
		}
	case *syntax.BinaryCmd:
		switch c.Op {
		case syntax.AndStmt:
			return w.stmt(c.Y, w.stmt(c.X, dirs, depth), depth)
		case syntax.OrStmt:
			x := w.stmt(c.X, dirs, depth)
			return union(x, w.stmt(c.Y, union(dirs, x), depth))
		default: // a pipe: each side in a subshell
			w.stmt(c.X, dirs, depth)
			w.stmt(c.Y, dirs, depth)
			for _, f := range w.catScripts(c) {
				w.runsFile(f, nil, dirs, depth, true)
			}
		}
	case *syntax.Subshell:
		w.stmts(c.Stmts, dirs, depth)
	case *syntax.Block:
		return w.stmts(c.Stmts, dirs, depth)
	case *syntax.IfClause:
		cond := w.stmts(c.Cond, dirs, depth)
		then := w.stmts(c.Then, cond, depth)
		out := union(dirs, cond, then)
		if c.Else != nil {
			out = union(out, w.shcmd(c.Else, cond, depth))
		}
		return out
	case *syntax.WhileClause:
		cond := w.stmts(c.Cond, dirs, depth)
		return union(dirs, cond, w.stmts(c.Do, union(dirs, cond), depth))
	case *syntax.ForClause:
		w.substs(c.Loop, dirs, depth)
		return union(dirs, w.stmts(c.Do, dirs, depth))
	case *syntax.CaseClause:
		w.substs(c.Word, dirs, depth)
		out := dirs
		for _, it := range c.Items {
			out = union(out, w.stmts(it.Stmts, dirs, depth))
		}
		return out
	case *syntax.FuncDecl:
		w.stmt(c.Body, dirs, depth)
	case *syntax.TimeClause:
		return w.stmt(c.Stmt, dirs, depth)
	case *syntax.CoprocClause:
		w.stmt(c.Stmt, dirs, depth)
	default: // declarations, tests, arithmetic: their substitutions
		w.substs(c, dirs, depth)
	}
	return dirs
}

// substs reads the command substitutions in n.
func (w *walker) substs(n syntax.Node, dirs []string, depth int) {
	if n == nil {
		return
	}
	syntax.Walk(n, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst:
			w.stmts(n.Stmts, dirs, depth)
			return false
		case *syntax.ProcSubst:
			w.stmts(n.Stmts, dirs, depth)
			return false
		}
		return true
	})
}

// word reads a shell word.
func (w *walker) word(x *syntax.Word) word {
	if x == nil {
		return word{}
	}
	var b bytes.Buffer
	ok := true
	var part func(p syntax.WordPart)
	part = func(p syntax.WordPart) {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			if p.Dollar {
				ok = false
				b.Reset()
				return
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				part(q)
			}
		case *syntax.ParamExp:
			if v, known := w.vars[paramName(p)]; known {
				b.WriteString(v)
				return
			}
			if v, known := w.vars["0"]; known && scriptPathParam(p) {
				b.WriteString(v)
				return
			}
			ok = false
			b.Reset()
		case *syntax.CmdSubst:
			if v, known := w.dirSubst(p); known {
				b.WriteString(v)
				return
			}
			ok = false
			b.Reset()
		default:
			ok = false
			b.Reset()
		}
	}
	for i, p := range x.Parts {
		if l, isLit := p.(*syntax.Lit); i == 0 && isLit && w.home != "" && (l.Value == "~" || strings.HasPrefix(l.Value, "~/")) {
			b.WriteString(w.home + l.Value[1:])
			continue
		}
		part(p)
	}
	if !ok {
		return word{tail: b.String()}
	}
	return word{s: b.String(), ok: true}
}

// scriptPathParam reports whether p is ${BASH_SOURCE[0]} or
// ${BASH_SOURCE}: in a script, its own path, as $0 is.
func scriptPathParam(p *syntax.ParamExp) bool {
	if p.Param == nil || p.Param.Value != "BASH_SOURCE" || p.Exp != nil || p.Slice != nil || p.Repl != nil || p.Length || p.Excl || p.Width || p.Names != 0 {
		return false
	}
	if p.Index == nil {
		return true
	}
	w, ok := p.Index.(*syntax.Word)
	return ok && w.Lit() == "0"
}

// dirSubst is the value of the command substitutions scripts use to
// find their own directory, when their word is known: $(dirname W),
// $(cd W && pwd), $(cd W; pwd), each with -P or -- allowed.
func (w *walker) dirSubst(c *syntax.CmdSubst) (string, bool) {
	var calls [][]*syntax.Word
	var walk func(st *syntax.Stmt) bool
	walk = func(st *syntax.Stmt) bool {
		if st.Negated || st.Background || len(st.Redirs) > 0 {
			return false
		}
		switch x := st.Cmd.(type) {
		case *syntax.CallExpr:
			if len(x.Assigns) > 0 {
				return false
			}
			calls = append(calls, x.Args)
			return true
		case *syntax.BinaryCmd:
			return x.Op == syntax.AndStmt && walk(x.X) && walk(x.Y)
		}
		return false
	}
	for _, st := range c.Stmts {
		if !walk(st) {
			return "", false
		}
	}
	arg := func(args []*syntax.Word) (string, bool) {
		var words []string
		for _, a := range args[1:] {
			if l := a.Lit(); l == "-P" || l == "-L" || l == "--" {
				continue
			}
			v := w.word(a)
			if !v.ok {
				return "", false
			}
			words = append(words, v.s)
		}
		if len(words) != 1 {
			return "", false
		}
		return words[0], true
	}
	switch {
	case len(calls) == 1 && len(calls[0]) > 1 && calls[0][0].Lit() == "dirname":
		v, ok := arg(calls[0])
		return filepath.Dir(v), ok && v != ""
	case len(calls) == 2 && len(calls[0]) > 1 && calls[0][0].Lit() == "cd" && len(calls[1]) == 1 && calls[1][0].Lit() == "pwd":
		v, ok := arg(calls[0])
		return filepath.Clean(v), ok && filepath.IsAbs(v)
	}
	return "", false
}

// paramName is the variable a plain $NAME or ${NAME} expands, else "".
func paramName(p *syntax.ParamExp) string {
	if p.Param == nil || p.Exp != nil || p.Index != nil || p.Slice != nil || p.Repl != nil || p.Length || p.Excl || p.Width || p.Names != 0 {
		return ""
	}
	return p.Param.Value
}

// arg adds what a word of a command names.
func (w *walker) arg(a word, dirs []string) {
	if !a.ok {
		w.unknown(a, dirs)
		return
	}
	s := a.s
	if v, ok := strings.CutPrefix(s, "--"); ok {
		if _, val, ok := strings.Cut(v, "="); ok {
			s = val
		} else {
			return
		}
	}
	for _, d := range dirs {
		w.files.add(s, d)
	}
}

// unknown holds what can be known of a word with an expansion: the path
// its literal tail names.
func (w *walker) unknown(a word, dirs []string) {
	var c []string
	if t := strings.TrimLeft(a.tail, "/"); t != "" && strings.HasPrefix(a.tail, "/") {
		c = append(c, t)
	}
	w.unsure(dirs, "a word holds a variable or a command's output it does not set", c...)
}

// wrappers run the rest of their words as a command.
var wrappers = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"exec": true, "command": true, "builtin": true, "nohup": true, "nice": true, "time": true, "timeout": true, "env": true, "stdbuf": true, "setsid": true, "xargs": true, "sudo": true, "doas": true, "chronic": true,
		"flock": true, "ionice": true, "taskset": true, "chrt": true, "unbuffer": true, "strace": true, "ltrace": true, "systemd-run": true, "firejail": true,
		"setpriv": true, "unshare": true, "nsenter": true, "prlimit": true, "setarch": true, "linux32": true, "linux64": true, "ssh-agent": true, "dbus-run-session": true,
		"fakeroot": true, "valgrind": true, "catchsegv": true, "xvfb-run": true, "torsocks": true, "proxychains": true, "proxychains4": true, "tini": true, "dumb-init": true,
		"nocache": true, "ccache": true, "systemd-inhibit": true, "faketime": true, "runuser": true, "caffeinate": true, "chpst": true}
})

// wrapperArgs are how many words a wrapper takes after its options and
// before the command it runs (flock's lock file, taskset's mask).
var wrapperArgs = sync.OnceValue(func() map[string]int {
	return map[string]int{"flock": 1, "taskset": 1, "chrt": 1, "setarch": 1, "faketime": 1}
})

// wrapperChdir are the options of wrappers whose value is the directory
// the command runs in.
var wrapperChdir = sync.OnceValue(func() map[string][]string {
	return map[string][]string{"sudo": {"-D", "--chdir"}, "unshare": {"-w", "--wd"}, "systemd-run": {"--working-directory"}}
})

// wrapperShell are the options of wrappers whose value is a shell
// command line they run (flock -c, runuser -c).
var wrapperShell = sync.OnceValue(func() map[string][]string {
	return map[string][]string{
		"flock": {"-c", "--command"}, "runuser": {"-c", "--command"},
	}
})

// wrapperValues are the options of wrappers whose value is the next
// word (not the command they run).
var wrapperValues = sync.OnceValue(func() map[string][]string {
	return map[string][]string{
		"env":     {"-u", "--unset"},
		"exec":    {"-a"},
		"nice":    {"-n", "--adjustment"},
		"timeout": {"-s", "--signal", "-k", "--kill-after"},
		"stdbuf":  {"-i", "-o", "-e", "--input", "--output", "--error"},
		"time":    {"-f", "--format", "-o", "--output"},
		"xargs":   {"-a", "--arg-file", "-d", "--delimiter", "-E", "-e", "-I", "-i", "-L", "-l", "-n", "--max-args", "-P", "--max-procs", "-s", "--max-chars", "--process-slot-var"},
		"sudo":    {"-u", "--user", "-g", "--group", "-h", "--host", "-p", "--prompt", "-C", "--close-from", "-R", "--chroot", "-r", "--role", "-t", "--type", "-T", "--command-timeout", "-U", "--other-user"},
		"doas":    {"-u", "-C"},
		"flock":   {"-w", "--wait", "--timeout", "-E", "--conflict-exit-code"},
		"ionice":  {"-c", "--class", "-n", "--classdata", "-p", "--pid", "-P", "--pgid", "-u", "--uid"},
		"chrt":    {"-T", "--sched-runtime", "-P", "--sched-period", "-D", "--sched-deadline"},
		"strace":  {"-o", "--output", "-e", "-p", "--attach", "-u", "--user", "-s", "--string-limit", "-a", "--columns", "-O", "-S", "--summary-sort-by", "-E", "--env", "-I", "-P", "--trace-path", "-U", "--summary-columns", "-X", "--const-print-style", "-b", "--detach-on"},
		"ltrace":  {"-o", "--output", "-e", "-p", "-u", "-a", "--align", "-s", "-A", "-n", "--indent", "-l", "--library", "-L", "-x", "-F", "--config", "-D", "--debug", "-w", "--where"},
		"systemd-run": {"-u", "--unit", "-p", "--property", "-H", "--host", "-M", "--machine", "--description", "--slice", "-E", "--setenv", "--uid", "--gid", "--nice",
			"--on-active", "--on-boot", "--on-startup", "--on-unit-active", "--on-unit-inactive", "--on-calendar", "--path-property", "--socket-property", "--timer-property", "--service-type"},
		"setpriv":          {"--reuid", "--regid", "--ruid", "--euid", "--rgid", "--egid", "--groups", "--inh-caps", "--ambient-caps", "--bounding-set", "--securebits", "--pdeathsig", "--selinux-label", "--apparmor-profile", "--landlock-access", "--landlock-rule", "--seccomp-filter"},
		"unshare":          {"-S", "--setuid", "-G", "--setgid", "-R", "--root", "--map-user", "--map-group", "--map-users", "--map-groups", "--propagation", "--monotonic", "--boottime"},
		"nsenter":          {"-t", "--target", "-S", "--setuid", "-G", "--setgid"},
		"prlimit":          {"-p", "--pid", "-o", "--output"},
		"ssh-agent":        {"-a", "-E", "-O", "-P", "-t"},
		"dbus-run-session": {"--config-file", "--dbus-daemon"},
		"fakeroot":         {"-l", "--lib", "--faked", "-s", "-i", "-b"},
		"xvfb-run":         {"-n", "--server-num", "-e", "--error-file", "-f", "--auth-file", "-s", "--server-args", "-p", "--xauth-protocol", "-w", "--wait"},
		"torsocks":         {"-u", "--user", "-p", "--pass", "-a", "--address", "-P", "--port"},
		"proxychains":      {"-f"},
		"proxychains4":     {"-f"},
		"tini":             {"-e", "-p"},
		"dumb-init":        {"-r", "--rewrite"},
		"systemd-inhibit":  {"--what", "--who", "--why", "--mode"},
		"runuser":          {"-u", "--user", "-g", "--group", "-G", "--supp-group", "-s", "--shell", "-w", "--whitelist-environment"},
		"caffeinate":       {"-t", "-w"},
		"chpst":            {"-u", "-U", "-e", "-/", "-n", "-l", "-L", "-m", "-d", "-o", "-p", "-f", "-c"},
	}
})

// splitOptions are env's options whose value is itself a command line,
// split into the words it runs (env -S 'node --flag', as a #! line
// gives it).
var splitOptions = []string{"-S", "--split-string"}

// interpreters are programs whose option runs code given inline.
var interpreters = sync.OnceValue(func() map[string][]string {
	return map[string][]string{
		"python": {"-c"}, "python2": {"-c"}, "python3": {"-c"}, "pypy": {"-c"}, "pypy3": {"-c"},
		"node": {"-e", "--eval", "-p", "--print"}, "nodejs": {"-e", "--eval", "-p", "--print"}, "deno": {"eval"},
		"perl": {"-e", "-E"}, "ruby": {"-e"}, "php": {"-r"}, "lua": {"-e"}, "Rscript": {"-e"}, "osascript": {"-e"},
	}
})

// shells are the shells whose -c argument is a script of its own.
var shells = []string{"sh", "bash", "dash", "zsh", "ksh", "mksh", "busybox"}

// envVars reads assignments a command's environment is given (see
// [walker.envVar]).
func (w *walker) envVars(as []*syntax.Assign, dirs []string, depth int) {
	for _, a := range as {
		if a.Name == nil || a.Naked || a.Value == nil || a.Index != nil || a.Array != nil {
			continue
		}
		w.envVar(a.Name.Value, w.word(a.Value), dirs, depth)
	}
}

// call reads a simple command.
func (w *walker) call(c *syntax.CallExpr, dirs []string, depth int) []string {
	w.envVars(c.Assigns, dirs, depth)
	args := make([]word, len(c.Args))
	for i, a := range c.Args {
		w.substs(a, dirs, depth)
		args[i] = w.word(a)
	}
	return w.exec(args, dirs, depth)
}

// exec reads a command given as its words, run in dirs.
func (w *walker) exec(args []word, dirs []string, depth int) []string {
	if w.steps++; w.steps > maxSteps {
		if w.steps == maxSteps+1 {
			w.unsure(dirs, "it runs more commands than are followed")
		}
		return dirs
	}
	if len(dirs) > maxDirs {
		w.unsure(dirs[maxDirs:], "its cds branch into more directories than are followed; those past the first are held whole")
		dirs = dirs[:maxDirs]
	}
	// Wrappers and their options, and env's assignments and -C.
	for len(args) > 0 && args[0].ok && wrappers()[filepath.Base(args[0].s)] && !w.own(args[0].s, dirs) {
		name := filepath.Base(args[0].s)
		args = args[1:]
		positional := wrapperArgs()[name]
	opts:
		for len(args) > 0 && (args[0].ok || positional > 0) {
			a := args[0].s
			opt, val, eq := strings.Cut(a, "=")
			switch {
			case slices.Contains(wrapperShell()[name], opt) && strings.HasPrefix(a, "-") && (eq || len(args) > 1):
				// flock FILE -c LINE: the value is the command line.
				line := lit(val)
				if !eq {
					line = args[1]
				}
				if !line.ok {
					w.unsure(dirs, name+" "+opt+" runs a command line it does not set")
				} else {
					w.shell(line.s, dirs, depth+1)
				}
				return dirs
			case name == "env" && (a == "-C" || a == "--chdir") && len(args) > 1:
				dirs = w.cd(args[1], dirs)
				args = args[2:]
				continue
			case name == "env" && strings.HasPrefix(a, "--chdir="):
				dirs = w.cd(lit(strings.TrimPrefix(a, "--chdir=")), dirs)
			case name == "env" && strings.Contains(a, "=") && !strings.HasPrefix(a, "-"):
				n, v, _ := strings.Cut(a, "=")
				w.envVar(n, lit(v), dirs, depth)
			case name == "env" && splitOption(a) != nil:
				split, ok := splitOption(a), true
				if *split == "" && len(args) > 1 {
					// -S STRING
					ok = args[1].ok
					*split = args[1].s
					args = args[1:]
				}
				if !ok {
					w.unsure(dirs, "env -S splits a command line it does not set")
					return dirs
				}
				words, ok := w.splitWords(*split)
				if !ok {
					w.unsure(dirs, "env -S splits a command line that does not read as words ("+*split+")")
					return dirs
				}
				args = append(words, args[1:]...)
				continue
			case slices.Contains(wrapperChdir()[name], opt) && (eq || len(args) > 1):
				if eq {
					dirs = w.cd(lit(val), dirs)
				} else {
					dirs = w.cd(args[1], dirs)
					args = args[1:]
				}
			case slices.Contains(wrapperValues()[name], a):
				if len(args) > 1 {
					if name == "xargs" && (a == "-a" || a == "--arg-file") {
						w.quietArg(args[1], dirs) // the words it runs
					}
					args = args[1:]
				}
			case strings.HasPrefix(a, "-"):
			case name == "timeout" && a != "" && (a[0] >= '0' && a[0] <= '9'):
			case positional > 0:
				// A word before the command (a lock file, a CPU mask).
				positional--
				w.quietArg(args[0], dirs)
			default:
				break opts
			}
			args = args[1:]
		}
	}
	if len(args) == 0 {
		return dirs
	}
	if !args[0].ok {
		w.unknown(args[0], dirs)
		for _, a := range args[1:] {
			w.arg(a, dirs)
		}
		return dirs
	}
	prog := args[0].s
	if strings.Contains(prog, "/") {
		for _, d := range dirs {
			w.files.add(prog, d)
			w.progs.add(prog, d)
			w.script(prog, d, depth, false)
		}
	}
	name := filepath.Base(prog)
	rest := args[1:]
	if strings.Contains(prog, "/") && langOf(name) == "py" && len(dirs) > 0 {
		// A python of the project's own environment: what its scripts
		// import from there is held too.
		saved := w.venv
		w.venv = w.venvOf(prog, dirs[0])
		defer func() { w.venv = saved }()
	}
	if d, ok := definers()[name]; ok && (d.sub == "" || len(rest) > 0 && rest[0].ok && rest[0].s == d.sub) {
		// Then its words as any program's, and the project's own
		// wrapper (./gradlew) as its file.
		w.definer(name, d, rest, dirs, depth)
	}
	if (name == "pip" || name == "pip3" || launchers()[name].python) && !w.own(prog, dirs) && w.pyInstall(name, rest, dirs, depth) {
		return dirs
	}
	switch {
	case name == "cd" || name == "pushd":
		for len(rest) > 0 && rest[0].ok && strings.HasPrefix(rest[0].s, "-") && rest[0].s != "-" {
			rest = rest[1:]
		}
		if len(rest) == 0 {
			return dirs // $HOME: outside the project
		}
		return w.cd(rest[0], dirs)
	case name == "popd":
		return dirs
	case slices.Contains(shells, name):
		return w.shellCall(name, rest, dirs, depth)
	case name == "eval":
		var b []string
		for _, a := range rest {
			if !a.ok {
				w.unsure(dirs, "eval of a word it does not set")
				return dirs
			}
			b = append(b, a.s)
		}
		w.shell(strings.Join(b, " "), dirs, depth+1)
		return dirs
	case name == "source" || name == ".":
		if len(rest) > 0 && !rest[0].ok {
			w.unknown(rest[0], dirs)
			return dirs
		}
	case name == "bun" && len(rest) > 1 && rest[0].ok && rest[0].s == "run" && rest[1].ok && strings.ContainsAny(rest[1].s, "./"):
		// bun run FILE runs the file, as bun FILE does.
		return w.exec(append([]word{args[0]}, rest[1:]...), dirs, depth)
	case name == "bun" && len(rest) > 0 && rest[0].ok && rest[0].s == "x":
		w.launch("bunx", launchers()["bunx"], rest[1:], dirs, depth)
		return dirs
	case name == "npm" || name == "pnpm" || name == "yarn" || name == "bun" && len(rest) > 0 && rest[0].ok && slices.Contains([]string{"run", "install", "i", "add"}, rest[0].s):
		w.npm(name, rest, dirs, depth)
		return dirs
	case name == "deno" && len(rest) > 0 && rest[0].ok && rest[0].s == "task":
		w.denoTask(rest[1:], dirs, depth)
		return dirs
	case name == "go" && len(rest) > 0 && rest[0].ok && (rest[0].s == "run" || rest[0].s == "test"):
		w.goRun(rest[0].s, rest[1:], dirs, depth)
		return dirs
	case name == "go" && len(rest) > 0 && rest[0].ok && rest[0].s == "generate":
		w.unsure(dirs, "go generate runs the commands the package's Go files name, which are not followed")
		return dirs
	case name == "cargo" && cargoBuilds(rest):
		w.cargoRun(rest, dirs)
		return dirs
	case launchers()[name].subs != nil || name == "npx" || name == "bunx" || name == "pnpx":
		if w.launch(name, launchers()[name], rest, dirs, depth) {
			return dirs
		}
	case interpreters()[name] != nil:
		if w.interp(name, rest, dirs) {
			return dirs
		}
	case name == "composer":
		w.composer(rest, dirs, depth)
		return dirs
	case name == "task" || name == "go-task":
		w.goTask(rest, dirs, depth)
		return dirs
	case name == "poe":
		w.poe(rest, dirs, depth)
		return dirs
	case name == "mise":
		w.mise(rest, dirs, depth)
		return dirs
	case name == "terraform" || name == "tofu":
		w.terraform(name, rest, dirs)
		return dirs
	case name == "make" || name == "gmake":
		w.make(rest, dirs, depth)
		return dirs
	case name == "find":
		w.find(rest, dirs, depth)
		return dirs
	case lineRunners()[name] != nil && !w.own(prog, dirs):
		w.lineRunner(name, rest, dirs, depth)
		return dirs
	case name == "direnv" && len(rest) > 1 && rest[0].ok && rest[0].s == "exec":
		w.direnvExec(rest[1], rest[2:], dirs, depth)
		return dirs
	case (name == "pytest" || name == "py.test") && !w.own(prog, dirs):
		w.pytest(rest, dirs, depth)
		return dirs
	case name == "git" && !w.own(prog, dirs):
		w.git(rest, dirs, depth)
		return dirs
	case name == "just":
		w.just(rest, dirs, depth)
		return dirs
	}
	// An interpreter runs the file a word names; another program is
	// given its words as data (notify-send "$(git branch --show-current)
	// done"): a word it does not set is no program, and what its literal
	// tail names is held without a note.
	sources := name == "source" || name == "."
	l, loads := loaderOf(name)
	runs := interpreters()[name] != nil || sources || loads
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if !a.ok && !runs {
			w.quiet(a, dirs)
			continue
		}
		if loads && a.ok {
			switch {
			case a.s == l.module && l.module != "" && i+1 < len(rest):
				if m := rest[i+1]; m.ok && m.s == "pip" && w.pyInstall("pip", rest[i+2:], dirs, depth) {
					return dirs
				}
				w.module(name, rest[i+1], rest[i+2:], dirs)
				return dirs
			case l.module != "" && len(a.s) > len(l.module) && strings.HasPrefix(a.s, l.module):
				// -mNAME, as pre-commit's installed hook starts it.
				w.module(name, lit(a.s[len(l.module):]), rest[i+1:], dirs)
				return dirs
			case slices.Contains(l.values, a.s) && i+1 < len(rest):
				w.loaderOption(name, l, a.s, rest[i+1], dirs, depth)
				i++
				continue
			case i == 0 && a.s == l.sub && l.sub != "":
				continue
			case l.named && !strings.HasPrefix(a.s, "-") && !strings.ContainsAny(a.s, "./"):
				// A subcommand (bun install, deno task): no script.
				for _, x := range rest[i:] {
					w.quietArg(x, dirs)
				}
				return dirs
			}
		}
		if loads && a.ok {
			if opt, v, ok := l.joined(a.s); ok {
				w.loaderOption(name, l, opt, lit(v), dirs, depth)
				continue
			}
		}
		if runs && a.ok && !strings.HasPrefix(a.s, "-") {
			w.runsFile(a, rest[i+1:], dirs, depth, sources)
			if loads {
				w.loadsFrom(name, scriptDirs(a.s, dirs))
				for _, d := range dirs {
					p := a.s
					if !filepath.IsAbs(p) {
						p = filepath.Join(d, p)
					}
					w.climbFrom(name, p, filepath.Dir(filepath.Clean(p)), depth)
				}
			}
			return dirs
		}
		w.arg(a, dirs)
	}
	return dirs
}

// own reports whether prog, run from dirs, is a file of the project (a
// ./bin/watch of its own), not the program of that name.
func (w *walker) own(prog string, dirs []string) bool {
	if !strings.Contains(prog, "/") {
		return false
	}
	for _, d := range dirs {
		p := prog
		if !filepath.IsAbs(p) {
			p = filepath.Join(d, p)
		}
		if within(filepath.Clean(p), w.root) {
			return true
		}
	}
	return false
}

// loader is how an interpreter that loads code from beside the script
// it runs is called: its options whose value is the next word (not the
// script), the subcommand before the script, if any, and its option
// that runs a module looked up from the directory it runs in; named is
// set for one whose other words before the script are subcommands, so
// its script is told by a dot or a slash in its name.
type loader struct {
	values []string
	// libs are the options of values whose value is a directory it
	// loads modules from (perl -I lib, and -Ilib); preloads, those whose
	// value is a module it loads before the script (node -r ./x.js, or
	// a package's name).
	libs, preloads []string
	sub, module    string
	named          bool
}

// joined splits an option of libs or preloads written with its value in
// the same word (-Ilib, --require=./x.js).
func (l loader) joined(s string) (opt, val string, ok bool) {
	for _, o := range slices.Concat(l.libs, l.preloads) {
		if strings.HasPrefix(o, "--") {
			if v, ok := strings.CutPrefix(s, o+"="); ok {
				return o, v, true
			}
		} else if len(s) > len(o) && strings.HasPrefix(s, o) {
			return o, s[len(o):], true
		}
	}
	return "", "", false
}

// loaders are the interpreters that load code from the directory of
// the script they run: Python puts it first on sys.path, before its own
// library (a json.py there is the json a script imports); node, deno,
// bun, tsx and ts-node resolve ./ imports and node_modules from it;
// Ruby's require_relative, Perl's FindBin and PHP's include find files
// there. The box could change what such a script runs without touching
// the script, so the directory is held whole.
var loaders = sync.OnceValue(func() map[string]loader {
	return map[string]loader{
		"python":  {values: []string{"-W", "-X", "--check-hash-based-pycs"}, module: "-m"},
		"pypy":    {values: []string{"-W", "-X", "--check-hash-based-pycs"}, module: "-m"},
		"node":    {values: []string{"-r", "--require", "--import", "--loader", "--experimental-loader", "-C", "--conditions", "--input-type", "--env-file"}, preloads: nodePreloads},
		"nodejs":  {values: []string{"-r", "--require", "--import", "--loader", "--experimental-loader", "-C", "--conditions", "--input-type", "--env-file"}, preloads: nodePreloads},
		"tsx":     {values: []string{"-r", "--require", "--import", "--tsconfig", "--env-file"}, preloads: []string{"-r", "--require", "--import"}},
		"ts-node": {values: []string{"-r", "--require", "-P", "--project", "-C", "--compiler", "-O", "--compilerOptions"}, preloads: []string{"-r", "--require"}},
		"deno":    {values: []string{"--config", "-c", "--import-map", "--env-file"}, sub: "run", named: true},
		"bun":     {values: []string{"-r", "--preload", "--env-file", "--tsconfig-override"}, preloads: []string{"-r", "--preload"}, named: true},
		"ruby":    {values: []string{"-r", "-I", "-C", "-E", "--encoding"}, libs: []string{"-I"}, preloads: []string{"-r"}},
		"perl":    {values: []string{"-I", "-M", "-m"}, libs: []string{"-I"}},
		"php":     {values: []string{"-c", "-d", "-z"}},
	}
})

// nodePreloads are node's options that load a module before the script.
var nodePreloads = []string{"-r", "--require", "--import", "--loader", "--experimental-loader"}

// loaderOption holds what the option opt of the interpreter name (its
// loader l), with the value v, makes it load: a directory of modules,
// held whole, a module loaded first, followed as its script is, or a
// path, held.
func (w *walker) loaderOption(name string, l loader, opt string, v word, dirs []string, depth int) {
	libs, preloads := slices.Contains(l.libs, opt), slices.Contains(l.preloads, opt)
	switch {
	case !libs && !preloads:
		w.arg(v, dirs)
	case !v.ok:
		w.unknown(v, dirs)
	case libs:
		var ds []string
		for _, d := range dirs {
			ds = union(ds, []string{from(d, v.s)})
		}
		w.loadsFrom(name, ds)
	default:
		w.preload(name, v.s, dirs, depth)
	}
}

// preload holds the module spec that the interpreter name loads before
// its script: a file (./x.js, /abs/x.rb), held and followed into what it
// loads in turn, or, for node and its kin, a package found as node finds
// it, held whole.
func (w *walker) preload(name, spec string, dirs []string, depth int) {
	if !strings.HasPrefix(spec, "./") && !strings.HasPrefix(spec, "../") && !filepath.IsAbs(spec) {
		if pkg := npmName(spec); pkg != "" && langOf(name) == "js" {
			for _, d := range dirs {
				w.nodePackage(d, pkg)
			}
		}
		return
	}
	for _, d := range dirs {
		p := from(d, spec)
		w.files.add(p, d)
		w.progs.add(p, d)
		w.climbFrom(name, p, filepath.Dir(p), depth)
	}
}

// loaderOf is the loader of the interpreter name, with a version after
// it (python3.12, perl5.36) or not.
func loaderOf(name string) (loader, bool) {
	l, ok := loaders()[strings.TrimRight(name, "0123456789.")]
	return l, ok
}

// scriptDirs are the directories of the script p run from each of
// dirs.
func scriptDirs(p string, dirs []string) []string {
	var out []string
	for _, d := range dirs {
		if !filepath.IsAbs(p) {
			out = union(out, []string{filepath.Dir(filepath.Join(d, p))})
		} else {
			out = union(out, []string{filepath.Dir(filepath.Clean(p))})
		}
	}
	return out
}

// loadsFrom holds the directories (ds) an interpreter (name) loads a
// script's code from, whole, as far as they lie in the project: what the
// box adds or changes there runs with the script. The project's own
// directory is not held whole, and the launch says so.
func (w *walker) loadsFrom(name string, ds []string) {
	root := false
	for _, d := range ds {
		switch {
		case d == w.root:
			root = true
		case within(d, w.root):
			w.dirs.add(d, d)
		}
	}
	if root && langOf(name) == "py" {
		// Followed by name instead: [walker.pyPath0].
		if w.mods == nil {
			w.mods = map[string][]string{}
		}
		if _, ok := w.mods[w.root]; !ok {
			w.mods[w.root] = []string{}
		}
		return
	}
	if root {
		saved := w.cmd
		if w.cmd == "" {
			w.cmd = name
		}
		w.unsure([]string{w.root}, name+" loads modules from beside the script it runs (with -m, from where it runs), here the project's own directory: one the box adds or changes there runs with it")
		w.cmd = saved
	}
}

// module reads python -m NAME: the module's file or package, looked up
// from the directory it runs in, which comes first on sys.path and is
// held as a script's directory is; the module's package is held whole.
func (w *walker) module(name string, m word, after []word, dirs []string) {
	if !m.ok {
		w.unknown(m, dirs)
		return
	}
	if w.venv != "" {
		// A module of the environment's site-packages (w.venv is set
		// only for a python of one).
		w.siteImports([]byte("import " + m.s))
	}
	rel := filepath.FromSlash(strings.ReplaceAll(m.s, ".", "/"))
	ds := slices.Clone(dirs)
	for _, d := range dirs {
		w.files.add(rel+".py", d)
		if w.read(filepath.Join(d, rel+".py")) != nil {
			// One missing at launch gets no mount point: an empty
			// NAME.py where Python looks first would be the module
			// the host's own python -m NAME imports while the box
			// runs. What the box adds is swept at the end instead, as
			// a module new in the directory (loadsFrom below).
			w.progs.add(rel+".py", d)
		}
		w.files.add(filepath.Join(rel, "__main__.py"), d)
		// Under -m, from .. import x is relative to its package.
		w.climbFrom(name, filepath.Join(d, rel+".py"), d, 0)
		w.climbFrom(name, filepath.Join(d, rel, "__main__.py"), d, 0)
		if pkg := filepath.Dir(rel); pkg != "." {
			ds = union(ds, []string{filepath.Join(d, pkg)})
		}
	}
	if m.s == "pytest" || m.s == "py.test" {
		w.pytest(after, dirs, 0)
	} else {
		for _, x := range after {
			w.quietArg(x, dirs)
		}
	}
	w.loadsFrom(name, ds)
}

// runsFile adds the file a shell, an interpreter or source is given (a),
// read as a shell script when shell is set, and the words after it,
// which are that file's data.
func (w *walker) runsFile(a word, after []word, dirs []string, depth int, shell bool) {
	w.arg(a, dirs)
	for _, d := range dirs {
		w.progs.add(a.s, d)
	}
	if shell {
		for _, d := range dirs {
			w.script(a.s, d, depth, true)
		}
	}
	for _, x := range after {
		w.quietArg(x, dirs)
	}
}

// quiet holds the path a data word's literal tail names, as [unknown]
// does, and says nothing.
func (w *walker) quiet(a word, dirs []string) {
	t := strings.TrimLeft(a.tail, "/")
	if t == "" || !strings.HasPrefix(a.tail, "/") {
		return
	}
	for _, d := range dirs {
		w.files.add(filepath.Join(d, t), d)
	}
}

// cd is the directories after cd to a.
func (w *walker) cd(a word, dirs []string) []string {
	if !a.ok || a.s == "-" || strings.HasPrefix(a.s, "~") {
		w.unsure(dirs, "cd to a directory it cannot tell; the paths after it are read from the directory before it")
		return dirs
	}
	out := make([]string, 0, len(dirs))
	for _, d := range dirs {
		p := a.s
		if !filepath.IsAbs(p) {
			p = filepath.Join(d, p)
		}
		out = union(out, []string{filepath.Clean(p)})
	}
	return out
}

// shellCall reads sh [options] -c SCRIPT [args] or sh FILE [args].
func (w *walker) shellCall(name string, rest []word, dirs []string, depth int) []string {
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if !a.ok {
			w.unknown(a, dirs)
			continue
		}
		if a.s == "-o" || a.s == "+o" || a.s == "-O" || a.s == "+O" {
			i++
			continue
		}
		if strings.HasPrefix(a.s, "-") && !strings.HasPrefix(a.s, "--") && strings.Contains(a.s, "c") {
			if i+1 < len(rest) {
				if s := rest[i+1]; s.ok {
					w.shell(s.s, dirs, depth+1)
				} else {
					w.unsure(dirs, name+" -c runs a script it does not set")
				}
			}
			for _, x := range rest[min(i+2, len(rest)):] {
				w.arg(x, dirs)
			}
			return dirs
		}
		if strings.HasPrefix(a.s, "--") {
			w.arg(a, dirs)
			continue
		}
		if strings.HasPrefix(a.s, "-") || strings.HasPrefix(a.s, "+") {
			continue
		}
		w.runsFile(a, rest[i+1:], dirs, depth, true)
		return dirs
	}
	return dirs
}

// script reads the shell script at p (from dir) that a command runs, for
// what it runs in turn, from the directory the command runs in: a held
// hook that runs ./hooks/check.sh also runs whatever check.sh sources or
// calls, which the box could rewrite as well. A file that is not a
// shell script (by its first line or its name) is left as it is, unless
// shell says a shell reads it (sh FILE, source FILE).
func (w *walker) script(p, dir string, depth int, shell bool) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	p = filepath.Clean(p)
	if w.scripts[p] {
		return
	}
	data := w.read(p)
	if data == nil {
		return
	}
	if !shell && !shellScript(p, data) {
		// A script run by its #! line through an interpreter that loads
		// code from beside it.
		if name := shebang(data); name != "" {
			if _, ok := loaderOf(name); ok {
				// An entry point of an environment's bin names its
				// python on its #! line, and imports its package from
				// that environment's site-packages.
				saved := w.venv
				if langOf(name) == "py" {
					w.venv = w.venvOf(shebangProg(data), filepath.Dir(p))
				}
				w.loadsFrom(name, []string{filepath.Dir(p)})
				w.climbFrom(name, p, filepath.Dir(p), depth)
				w.venv = saved
			}
		}
		return
	}
	if w.scripts == nil {
		w.scripts = map[string]bool{}
	}
	w.scripts[p] = true
	// In it, $0 and ${BASH_SOURCE[0]} are its path, and what it sets
	// stays in it.
	saved := w.vars
	w.vars = maps.Clone(saved)
	w.vars["0"] = p
	w.shell(string(data), []string{dir}, depth+1)
	w.vars = saved
}

// shellScript reports whether the file at p, whose text is data, is one
// a shell runs: a #! line naming sh, bash, dash, zsh or ksh (through env
// or not), or no #! line and a name ending in .sh or .bash.
func shellScript(p string, data []byte) bool {
	if bytes.HasPrefix(data, []byte("#!")) {
		return slices.Contains(shells, shebang(data))
	}
	return strings.HasSuffix(p, ".sh") || strings.HasSuffix(p, ".bash")
}

// shebang is the base name of the program a script's #! line runs
// (through env or not, past env's options), or "".
func shebang(data []byte) string {
	line, _, _ := strings.Cut(string(data), "\n")
	rest, ok := strings.CutPrefix(line, "#!")
	if !ok {
		return ""
	}
	fields := strings.Fields(rest)
	if len(fields) > 0 && filepath.Base(fields[0]) == "env" {
		fields = fields[1:]
		for len(fields) > 0 && strings.HasPrefix(fields[0], "-") {
			fields = fields[1:]
		}
	}
	if len(fields) == 0 {
		return ""
	}
	return filepath.Base(fields[0])
}

// shebangProg is the program a #! line names itself ("" for env's).
func shebangProg(data []byte) string {
	line, _, _ := strings.Cut(string(data), "\n")
	rest, ok := strings.CutPrefix(line, "#!")
	if fields := strings.Fields(rest); ok && len(fields) > 0 && filepath.Base(fields[0]) != "env" {
		return fields[0]
	}
	return ""
}

// quietArg is arg for a word that is data: one it does not set says
// nothing (see [walker.quiet]).
func (w *walker) quietArg(a word, dirs []string) {
	if !a.ok {
		w.quiet(a, dirs)
		return
	}
	w.arg(a, dirs)
}

// interp reads an interpreter's inline code: the words of the code that
// may name files are held, and the launch says so. It reports whether
// the command runs inline code.
func (w *walker) interp(name string, rest []word, dirs []string) bool {
	for i, a := range rest {
		// The option alone, or last of a group of one-letter ones (-Bc).
		grouped := len(a.s) > 2 && a.s[0] == '-' && a.s[1] != '-' && slices.Contains(interpreters()[name], "-"+a.s[len(a.s)-1:])
		if !a.ok || !slices.Contains(interpreters()[name], a.s) && !grouped {
			continue
		}
		if i+1 >= len(rest) {
			return false
		}
		code := rest[i+1]
		if !code.ok {
			w.unsure(dirs, name+" "+a.s+" runs code it does not set")
			return true
		}
		for _, x := range rest[i+2:] {
			w.arg(x, dirs)
		}
		w.unsure(dirs, name+" "+a.s+" runs inline code, whose files are not followed; the words of it that name paths are held", codePaths(code.s)...)
		if langOf(name) == "py" && slices.Contains(dirs, w.root) {
			// Its module path starts with where it runs: what it imports
			// by name from the project's own directory is followed.
			w.loadsFrom(name, []string{w.root})
			saved := w.path0
			w.path0 = w.root
			w.pyPath0(name, []byte(code.s), 0)
			w.path0 = saved
		}
		return true
	}
	return false
}

// codePaths are the words of inline code that may name a file: runs of
// the characters of a path holding a slash or a dot, each once.
func codePaths(code string) []string {
	isPath := func(r rune) bool {
		return r == '/' || r == '.' || r == '_' || r == '-' || r == '+' || r == '@' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
	}
	var out []string
	for _, f := range strings.FieldsFunc(code, func(r rune) bool { return !isPath(r) }) {
		if f == "." || f == ".." || strings.Trim(f, "./") == "" || !strings.ContainsAny(f, "/.") || slices.Contains(out, f) {
			continue
		}
		out = append(out, f)
	}
	return out
}

// npm reads npm/pnpm/yarn/bun run NAME: the package.json it reads (in
// dirs or above, as npm finds it) and what its scripts run; and an
// install, which runs the package's own install scripts (see
// [walker.install]).
func (w *walker) npm(name string, rest []word, dirs []string, depth int) {
	var script *word
	sub := ""
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a.ok && (a.s == "--prefix" || a.s == "-C" || a.s == "--dir" || a.s == "--cwd") && i+1 < len(rest) {
			dirs = w.cd(rest[i+1], dirs)
			i++
			continue
		}
		if a.ok {
			for _, o := range []string{"--prefix=", "--dir=", "--cwd="} {
				if v, ok := strings.CutPrefix(a.s, o); ok {
					dirs = w.cd(lit(v), dirs)
				}
			}
			if strings.HasPrefix(a.s, "-") {
				continue
			}
		}
		if sub == "" && a.ok {
			sub = a.s
			switch sub {
			case "run", "run-script", "rum", "urn":
				continue
			case "test", "t", "tst", "start", "stop", "restart":
				s := map[string]string{"t": "test", "tst": "test"}[sub]
				if s == "" {
					s = sub
				}
				script = &word{s: s, ok: true}
			case "exec", "x", "dlx":
				// a package's bin, from node_modules/.bin, and what it
				// runs in turn
				w.launch(name+" "+sub, launchers()["npx"], rest[i+1:], dirs, depth)
				return
			case "install", "i", "in", "ins", "inst", "insta", "instal", "isnt", "isnta", "isntal", "isntall", "add",
				"ci", "clean-install", "ic", "install-clean", "isntall-clean", "rebuild", "rb":
				for _, d := range dirs {
					w.install(d, depth)
				}
				return
			case "node":
				if name == "yarn" {
					w.exec(rest[i:], dirs, depth+1)
					return
				}
				script = &word{s: sub, ok: true}
			default:
				if name == "npm" {
					return // install and the rest: npm's own business
				}
				script = &word{s: sub, ok: true} // yarn NAME, pnpm NAME
			}
			break
		}
		script = &a
		break
	}
	if sub == "" && name == "yarn" {
		// yarn alone installs.
		for _, d := range dirs {
			w.install(d, depth)
		}
	}
	if script == nil {
		return
	}
	for _, d := range dirs {
		w.pkg(d, script, dirs, depth)
	}
}

// findPackageJSON is the package.json npm finds from dir (the nearest
// in dir or above it, in the project), held, and its text (nil for
// none).
func (w *walker) findPackageJSON(dir string) (string, []byte) {
	var data []byte
	pj := ""
	for d := dir; within(d, w.root); d = filepath.Dir(d) {
		pj = filepath.Join(d, "package.json")
		w.files.add(pj, d)
		if data = w.read(pj); data != nil || d == w.root {
			break
		}
	}
	return pj, data
}

// pkg reads the package.json npm finds from dir for script.
func (w *walker) pkg(dir string, script *word, dirs []string, depth int) {
	pj, data := w.findPackageJSON(dir)
	var doc struct {
		Scripts map[string]any `json:"scripts"`
	}
	if data == nil || json.Unmarshal(data, &doc) != nil {
		return
	}
	pdir := filepath.Dir(pj)
	var names []string
	if script.ok {
		names = []string{"pre" + script.s, script.s, "post" + script.s}
	} else {
		names = slices.Sorted(maps.Keys(doc.Scripts))
		w.unsure([]string{pdir}, "npm runs a script whose name it does not set; every script of "+w.rel(pj)+" is followed")
	}
	w.npmScripts(pdir, doc.Scripts, names, depth)
}

// lifecycle are the scripts of its own package.json that an install
// runs (npm, pnpm, yarn and bun alike, each a subset).
var lifecycle = []string{"preinstall", "install", "postinstall", "prepublish", "preprepare", "prepare", "postprepare"}

// lockFiles are the files beside a package.json that tell an install
// where each package comes from: a changed one fetches and runs another
// package's install scripts.
var lockFiles = []string{"package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml", "pnpm-workspace.yaml", "bun.lock", "bun.lockb", ".yarnrc.yml", ".pnpmfile.cjs"}

// install reads an install in dir (npm install or ci, pnpm install,
// yarn): the package.json it finds and its lock files are held, what its
// install scripts run is followed, and a dependency of it that lies in
// the project (file:, link:, a path), whose install scripts run too, is
// held whole. Workspaces' packages are not followed, and the launch
// says so.
func (w *walker) install(dir string, depth int) {
	pj, data := w.findPackageJSON(dir)
	if data == nil {
		return
	}
	pdir := filepath.Dir(pj)
	for _, f := range lockFiles {
		w.files.add(filepath.Join(pdir, f), pdir)
		w.looked.add(filepath.Join(pdir, f), pdir)
	}
	ws := w.installPackage(pj, data, depth)
	if b := w.read(filepath.Join(pdir, "pnpm-workspace.yaml")); b != nil {
		ws = append(ws, pnpmWorkspaces(b)...)
	}
	// npm, yarn, pnpm and bun install each workspace's package too,
	// running its install scripts.
	for _, d := range w.workspaceDirs(pdir, ws) {
		p := filepath.Join(d, "package.json")
		if data := w.read(p); data != nil {
			w.files.add(p, d)
			w.installPackage(p, data, depth)
		}
	}
}

// installPackage follows what installing the package of the
// package.json pj (its text data) runs: its install scripts, and the
// dependencies it names in the project, held whole. It returns the
// patterns of its workspaces.
func (w *walker) installPackage(pj string, data []byte, depth int) []string {
	pdir := filepath.Dir(pj)
	var doc struct {
		Scripts    map[string]any             `json:"scripts"`
		Deps       map[string]json.RawMessage `json:"dependencies"`
		Dev        map[string]json.RawMessage `json:"devDependencies"`
		Optional   map[string]json.RawMessage `json:"optionalDependencies"`
		Workspaces json.RawMessage            `json:"workspaces"`
	}
	if json.Unmarshal(data, &doc) != nil {
		w.unsure([]string{pdir}, w.rel(pj)+" does not parse as a package.json, so what installing it runs cannot be told")
		return nil
	}
	w.npmScripts(pdir, doc.Scripts, lifecycle, depth)
	for _, deps := range []map[string]json.RawMessage{doc.Deps, doc.Dev, doc.Optional} {
		for _, name := range slices.Sorted(maps.Keys(deps)) {
			var spec string
			if json.Unmarshal(deps[name], &spec) != nil {
				continue
			}
			p, ok := localDep(spec)
			if !ok {
				continue
			}
			if !filepath.IsAbs(p) {
				p = filepath.Join(pdir, p)
			}
			if p = filepath.Clean(p); within(p, w.root) && p != w.root {
				w.dirs.add(p, p)
			}
		}
	}
	// An array of patterns, or Yarn's {"packages": [...]}.
	var patterns []string
	if json.Unmarshal(doc.Workspaces, &patterns) != nil {
		var yarn struct {
			Packages []string `json:"packages"`
		}
		json.Unmarshal(doc.Workspaces, &yarn)
		patterns = yarn.Packages
	}
	return patterns
}

// pnpmWorkspaces are the package patterns of a pnpm-workspace.yaml.
func pnpmWorkspaces(data []byte) []string {
	var doc struct {
		Packages []string `yaml:"packages"`
	}
	yaml.Unmarshal(data, &doc)
	return doc.Packages
}

// maxWorkspaces bounds the workspace packages an install is followed
// into.
const maxWorkspaces = 256

// workspaceDirs are the directories of the project the workspace
// patterns of the package in pdir name: a path, or one whose parts
// match with * and ? (a part ** matches any depth: its directory is
// held whole instead). A pattern starting with ! leaves out what it
// names.
func (w *walker) workspaceDirs(pdir string, patterns []string) []string {
	var out, not []string
	for _, pat := range patterns {
		neg := strings.HasPrefix(pat, "!")
		pat = filepath.Clean(strings.TrimPrefix(pat, "!"))
		if pat == "." || strings.HasPrefix(pat, "..") || filepath.IsAbs(pat) {
			continue
		}
		dirs := []string{pdir}
		for _, part := range strings.Split(pat, "/") {
			var next []string
			for _, d := range dirs {
				switch {
				case part == "**":
					// Any depth: the directory is held whole.
					if d != pdir && within(d, w.root) {
						w.dirs.add(d, d)
					}
				case strings.ContainsAny(part, "*?["):
					if w.subdirs == nil {
						continue
					}
					for _, sub := range w.subdirs(d) {
						if ok, _ := filepath.Match(part, sub); ok && !strings.HasPrefix(sub, ".") && sub != "node_modules" {
							next = append(next, filepath.Join(d, sub))
						}
					}
				default:
					next = append(next, filepath.Join(d, part))
				}
			}
			dirs = next
		}
		if neg {
			not = append(not, dirs...)
		} else {
			out = union(out, dirs)
		}
	}
	out = slices.DeleteFunc(out, func(d string) bool { return slices.Contains(not, d) || !within(d, w.root) })
	if len(out) > maxWorkspaces {
		w.unsure([]string{pdir}, fmt.Sprintf("installing %s runs the install scripts of more workspaces than are followed (%d): %s and those after it are not", w.rel(filepath.Join(pdir, "package.json")), maxWorkspaces, w.rel(out[maxWorkspaces])))
		out = out[:maxWorkspaces]
	}
	return out
}

// localDep is the path a dependency's version spec names in the
// project's tree (file:../x, link:./y, ./z), if it names one.
func localDep(spec string) (string, bool) {
	for _, pre := range []string{"file:", "link:", "portal:"} {
		if p, ok := strings.CutPrefix(spec, pre); ok {
			return p, p != ""
		}
	}
	if strings.HasPrefix(spec, "./") || strings.HasPrefix(spec, "../") || strings.HasPrefix(spec, "/") {
		return spec, true
	}
	return "", false
}

// npmScripts follows what the scripts of a package.json in pdir named
// by names run.
func (w *walker) npmScripts(pdir string, scripts map[string]any, names []string, depth int) {
	saved := w.cmd
	defer func() { w.cmd = saved }()
	for _, n := range names {
		s, _ := scripts[n].(string)
		if s == "" {
			continue
		}
		w.cmd = s
		w.shell(s, []string{pdir}, depth+1)
		// A bare command is looked up in node_modules/.bin first.
		if f, err := syntax.NewParser().Parse(strings.NewReader(s), ""); err == nil {
			syntax.Walk(f, func(n syntax.Node) bool {
				if c, ok := n.(*syntax.CallExpr); ok && len(c.Args) > 0 {
					if p := c.Args[0].Lit(); p != "" && !strings.Contains(p, "/") {
						w.files.add(filepath.Join("node_modules", ".bin", p), pdir)
						w.binPackage(filepath.Join(pdir, "node_modules", ".bin", p))
					}
				}
				return true
			})
		}
	}
}

// make reads make [-C DIR] [-f FILE] ...: the makefile it reads and
// files it includes, and what every recipe of it runs (the targets'
// prerequisites run too; see makeLines for make's own variables).
func (w *walker) make(rest []word, dirs []string, depth int) {
	var file *word
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		switch {
		case a.ok && (a.s == "-C" || a.s == "--directory") && i+1 < len(rest):
			dirs = w.cd(rest[i+1], dirs)
			i++
		case a.ok && strings.HasPrefix(a.s, "--directory="):
			dirs = w.cd(lit(strings.TrimPrefix(a.s, "--directory=")), dirs)
		case a.ok && len(a.s) > 2 && strings.HasPrefix(a.s, "-C"):
			dirs = w.cd(lit(a.s[2:]), dirs)
		case a.ok && (a.s == "-f" || a.s == "--file" || a.s == "--makefile") && i+1 < len(rest):
			f := rest[i+1]
			file = &f
			i++
		case a.ok && strings.HasPrefix(a.s, "--file="):
			f := lit(strings.TrimPrefix(a.s, "--file="))
			file = &f
		case !a.ok:
			w.unknown(a, dirs)
		}
	}
	names := []string{"GNUmakefile", "makefile", "Makefile"}
	if file != nil {
		if !file.ok {
			w.unknown(*file, dirs)
			return
		}
		names = []string{file.s}
	}
	for _, d := range dirs {
		for _, n := range names {
			p := n
			if !filepath.IsAbs(p) {
				p = filepath.Join(d, n)
			}
			w.files.add(p, d)
			if data := w.read(p); data != nil {
				w.recipes(p, w.makeIncludes(data, d, map[string]bool{p: true}), d, depth, makeLines)
				break
			}
		}
	}
}

// just reads just [--justfile F] [-d DIR] ...: the justfile and what its
// recipes run.
func (w *walker) just(rest []word, dirs []string, depth int) {
	names := []string{"justfile", "Justfile", ".justfile", "JUSTFILE"}
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a.ok && (a.s == "-f" || a.s == "--justfile") && i+1 < len(rest) {
			if !rest[i+1].ok {
				w.unknown(rest[i+1], dirs)
				return
			}
			names = []string{rest[i+1].s}
			i++
		} else if a.ok && (a.s == "-d" || a.s == "--working-directory") && i+1 < len(rest) {
			dirs = w.cd(rest[i+1], dirs)
			i++
		}
	}
	for _, d := range dirs {
		// just looks for its file here and upwards.
		for dd := d; within(dd, w.root); dd = filepath.Dir(dd) {
			found := false
			for _, n := range names {
				p := n
				if !filepath.IsAbs(p) {
					p = filepath.Join(dd, n)
				}
				w.files.add(p, dd)
				if data := w.read(p); data != nil {
					w.recipes(p, w.justImports(data, filepath.Dir(p), map[string]bool{p: true}), filepath.Dir(p), depth, justLines)
					found = true
					break
				}
			}
			if found || dd == w.root || len(names) == 1 {
				break
			}
		}
	}
}

// recipes reads the recipe lines of a makefile or justfile (lines gives
// them, and the files it includes) as shell commands run in dir.
func (w *walker) recipes(path string, data []byte, dir string, depth int, lines func([]byte) (cmds, includes []string, vars bool)) {
	cmds, includes, vars := lines(data)
	for _, inc := range includes {
		w.files.add(inc, dir)
	}
	saved := w.cmd
	defer func() { w.cmd = saved }()
	for _, c := range cmds {
		w.cmd = c
		w.shell(c, []string{dir}, depth+1)
	}
	if vars {
		w.cmd = saved
		w.unsure([]string{dir}, "the recipes of "+w.rel(path)+" use the tool's own variables, which are not expanded; their literal words are followed")
	}
}

// maxIncludes bounds the makefiles one makefile's includes read, in
// all.
const maxIncludes = 64

// makeIncludes is the text of a makefile (data, read by make run in dir)
// with that of the makefiles it includes, in turn, appended (their
// rules and variables are make's as much as its own): each is held,
// found from dir, its name's plain variables expanded and a wildcard
// matched. seen are those already read.
func (w *walker) makeIncludes(data []byte, dir string, seen map[string]bool) []byte {
	vars := makeVars(data)
	out := data
	for _, inc := range makeIncludeNames(data) {
		budget := maxMakeLine
		if inc = expandMake(inc, vars, 0, &budget); strings.Contains(inc, "$") {
			w.unsure([]string{dir}, "a makefile includes a file whose name holds the tool's own variables, which are not expanded")
			continue
		}
		paths := []string{from(dir, inc)}
		if strings.ContainsAny(inc, "*?[") && w.list != nil {
			paths = nil
			pat := from(dir, inc)
			for _, f := range slices.Sorted(slices.Values(w.list(filepath.Dir(pat)))) {
				if ok, _ := filepath.Match(filepath.Base(pat), f); ok {
					paths = append(paths, filepath.Join(filepath.Dir(pat), f))
				}
			}
		}
		for _, p := range paths {
			if seen[p] || len(seen) > maxIncludes || !within(p, w.root) {
				continue
			}
			seen[p] = true
			w.files.add(p, dir)
			if b := w.read(p); b != nil {
				out = append(append(slices.Clip(out), '\n'), w.makeIncludes(b, dir, seen)...)
			}
		}
	}
	return out
}

// makeLines are a makefile's recipe lines ($$ read as $, the makefile's
// own plain variables expanded; what else make expands makes a word
// unknown). The files it includes are read with it (makeIncludes).
func makeLines(data []byte) (cmds, includes []string, vars bool) {
	mv := makeVars(data)
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if r, ok := strings.CutPrefix(sc.Text(), "\t"); ok {
			budget := maxMakeLine
			r = expandMake(strings.TrimLeft(r, "@-+ \t"), mv, 0, &budget)
			if strings.Contains(strings.ReplaceAll(r, "$$", ""), "$") {
				vars = true
			}
			cmds = append(cmds, strings.ReplaceAll(r, "$$", "$"))
		}
	}
	return cmds, nil, vars
}

// makeIncludeNames are the names a makefile's include lines give, as
// written.
func makeIncludeNames(data []byte) []string {
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		if len(f) > 1 && (f[0] == "include" || f[0] == "-include" || f[0] == "sinclude") {
			out = append(out, f[1:]...)
		}
	}
	return out
}

// makeVars are the variables a makefile sets that have one value it
// can tell: NAME = value (and :=, ::=, ?=, with export or override),
// += appending, and make's MAKE. One set twice to different values (in
// a conditional's branches, say), set by != (a command's output) or
// defined over lines is not among them: what uses it stays unknown.
func makeVars(data []byte) map[string]string {
	// GNU make's own defaults (make -p): ?= leaves them as they are.
	vars := map[string]string{"MAKE": "make", "AR": "ar", "AS": "as", "CC": "cc", "CXX": "g++", "CPP": "cc -E", "FC": "f77", "F77": "f77", "LD": "ld",
		"LEX": "lex", "YACC": "yacc", "LINT": "lint", "M2C": "m2c", "PC": "pc", "CO": "co", "GET": "get", "MAKEINFO": "makeinfo", "TEX": "tex",
		"TEXI2DVI": "texi2dvi", "WEAVE": "weave", "CWEAVE": "cweave", "TANGLE": "tangle", "CTANGLE": "ctangle", "RM": "rm -f"}
	unknown := map[string]bool{}
	set := map[string]bool{}
	text := strings.ReplaceAll(string(data), "\\\n", " ")
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "\t") {
			continue
		}
		l = strings.TrimSpace(l)
		for _, kw := range []string{"export ", "override "} {
			l = strings.TrimSpace(strings.TrimPrefix(l, kw))
		}
		if f := strings.Fields(l); len(f) > 1 && f[0] == "define" {
			unknown[strings.TrimRight(f[1], ":?+!=")] = true
			continue
		}
		i := strings.IndexByte(l, '=')
		if i <= 0 {
			continue
		}
		name, op := l[:i], "="
		for _, o := range []string{":::", "::", ":", "?", "+", "!"} {
			if n, ok := strings.CutSuffix(name, o); ok {
				name, op = n, o+"="
				break
			}
		}
		name = strings.TrimSpace(name)
		if !makeName(name) {
			continue
		}
		value := strings.TrimSpace(l[i+1:])
		if i := strings.IndexByte(value, '#'); i >= 0 {
			value = value[:i]
		}
		// A continued line's breaks are one space to make.
		value = strings.Join(strings.Fields(value), " ")
		_, had := vars[name]
		switch {
		case op == "!=":
			unknown[name] = true
		case op == "?=" && had:
			// Set before, by the makefile or by make itself.
		case op == "+=":
			if v, ok := vars[name]; ok && v != "" {
				value = v + " " + value
			}
			vars[name] = value
		case set[name] && vars[name] != value:
			unknown[name] = true
		default:
			vars[name] = value
		}
		set[name] = true
	}
	for n := range unknown {
		delete(vars, n)
	}
	return vars
}

// makeName reports whether s is a plain variable name (letters, digits,
// _, ., -), not a rule's target list.
func makeName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r == '.' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// maxMakeDepth bounds how deep a variable's value is expanded in turn
// (a variable defined through itself ends there, unknown), and
// maxMakeLine what one recipe line's values add: variables that name
// each other twice over would otherwise double it at every level.
const (
	maxMakeDepth = 8
	maxMakeLine  = 16 << 10
)

// expandMake expands $(NAME) and ${NAME} in s where vars has NAME, in
// turn, while budget lasts; $$ and everything else (functions,
// automatic variables, one it does not know) are left as they are.
func expandMake(s string, vars map[string]string, depth int, budget *int) string {
	if depth > maxMakeDepth || !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		if s[i+1] == '$' {
			b.WriteString("$$")
			i++
			continue
		}
		if s[i+1] != '(' && s[i+1] != '{' {
			b.WriteByte(s[i])
			continue
		}
		closing := byte(')')
		if s[i+1] == '{' {
			closing = '}'
		}
		end := strings.IndexByte(s[i+2:], closing)
		if end < 0 {
			b.WriteString(s[i:])
			break
		}
		name := s[i+2 : i+2+end]
		if v, ok := vars[name]; ok && depth < maxMakeDepth && *budget >= len(v) {
			*budget -= len(v)
			b.WriteString(expandMake(v, vars, depth+1, budget))
		} else {
			b.WriteString(s[i : i+3+end])
		}
		i += 2 + end
	}
	return b.String()
}

// justImports is the text of a justfile (data, in dir) with that of the
// justfiles it imports, in turn, appended: their recipes are just's as
// much as its own. Each is held; seen are those already read.
func (w *walker) justImports(data []byte, dir string, seen map[string]bool) []byte {
	_, imports, _ := justLines(data)
	out := data
	for _, imp := range imports {
		p := from(dir, imp)
		if seen[p] || len(seen) > maxIncludes || !within(p, w.root) {
			continue
		}
		seen[p] = true
		w.files.add(p, dir)
		if b := w.read(p); b != nil {
			out = append(append(slices.Clip(out), '\n'), w.justImports(b, filepath.Dir(p), seen)...)
		}
	}
	return out
}

// justLines are a justfile's recipe lines (indented, after a recipe's
// line; {{...}} is the tool's own) and the files it imports.
func justLines(data []byte) (cmds, includes []string, vars bool) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if l != "" && (l[0] == ' ' || l[0] == '\t') {
			r := strings.TrimLeft(l, " \t@-")
			if strings.Contains(r, "{{") {
				vars = true
			}
			cmds = append(cmds, r)
			continue
		}
		f := strings.Fields(l)
		if len(f) > 1 && (f[0] == "import" || f[0] == "import?") {
			includes = append(includes, strings.Trim(f[1], `'"`))
		}
	}
	return cmds, includes, vars
}

// splitOption is the command line an env -S option (a) carries: "" for
// one whose value is the next word, nil for another option.
func splitOption(a string) *string {
	for _, o := range splitOptions {
		if a == o {
			s := ""
			return &s
		}
		if v, ok := strings.CutPrefix(a, o+"="); ok {
			return &v
		}
	}
	if v, ok := strings.CutPrefix(a, "-S"); ok && v != "" {
		return &v
	}
	return nil
}

// splitWords are the words env -S splits s into (read as one simple
// command, its assignments as env's words), or false when it is more.
func (w *walker) splitWords(s string) ([]word, bool) {
	f, err := syntax.NewParser().Parse(strings.NewReader(s), "")
	if err != nil || len(f.Stmts) > 1 {
		return nil, false
	}
	if len(f.Stmts) == 0 {
		return nil, true
	}
	st := f.Stmts[0]
	c, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(st.Redirs) > 0 || st.Negated || st.Background {
		return nil, false
	}
	var out []word
	for _, a := range c.Assigns {
		if a.Name == nil || a.Value == nil || a.Append || a.Index != nil || a.Array != nil {
			return nil, false
		}
		v := w.word(a.Value)
		if !v.ok {
			return nil, false
		}
		out = append(out, lit(a.Name.Value+"="+v.s))
	}
	for _, a := range c.Args {
		out = append(out, w.word(a))
	}
	return out, true
}

// envFiles are the variables of a command's environment that make its
// program run or load a file they name: a shell script bash (BASH_ENV)
// or sh (ENV) reads first, node's options (NODE_OPTIONS: --require and
// --import load a module), and the directories an interpreter loads
// modules from before its own (listed with colons).
var envFiles = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"BASH_ENV": "shell", "ENV": "shell",
		"NODE_OPTIONS": "options",
		"PYTHONPATH":   "path", "NODE_PATH": "path", "PERL5LIB": "path", "PERLLIB": "path", "RUBYLIB": "path",
		// A command line git (or another program) runs through the shell,
		// and the directories git runs its commands and hooks from.
		"GIT_PAGER": "line", "GIT_EDITOR": "line", "GIT_SEQUENCE_EDITOR": "line", "GIT_SSH_COMMAND": "line", "GIT_SSH": "line",
		"GIT_EXTERNAL_DIFF": "line", "GIT_ASKPASS": "line", "SSH_ASKPASS": "line", "PAGER": "line", "EDITOR": "line", "VISUAL": "line",
		"GIT_EXEC_PATH": "gitdir", "GIT_TEMPLATE_DIR": "gitdir", "GIT_DIR": "gitdir",
	}
})

// envVar reads a variable (name, value v) set for a command run in
// dirs (NAME=VALUE before it, env NAME=VALUE, export): a path its value
// names is held, and the files of envFiles are followed as its program
// reads them.
func (w *walker) envVar(name string, v word, dirs []string, depth int) {
	if w.gitEnv(name, v, dirs, depth) {
		return
	}
	if !v.ok {
		if envFiles()[name] != "" {
			w.unknown(v, dirs)
		} else {
			w.quiet(v, dirs)
		}
		return
	}
	switch envFiles()[name] {
	case "shell":
		if v.s != "" {
			w.runsFile(v, nil, dirs, depth, true)
		}
	case "line":
		w.shell(v.s, dirs, depth+1)
	case "gitdir":
		w.holdDirs(name, w.cd(v, dirs), dirs)
	case "options":
		node := loaders()["node"]
		fields := strings.Fields(v.s)
		for i := 0; i < len(fields); i++ {
			f := fields[i]
			if opt, val, ok := node.joined(f); ok {
				w.loaderOption("node", node, opt, lit(val), dirs, depth)
				continue
			}
			if slices.Contains(node.preloads, f) && i+1 < len(fields) {
				i++
				w.loaderOption("node", node, f, lit(fields[i]), dirs, depth)
				continue
			}
			if _, val, ok := strings.Cut(f, "="); ok && strings.HasPrefix(f, "-") {
				f = val
			}
			if f == "" || strings.HasPrefix(f, "-") {
				continue
			}
			for _, d := range dirs {
				w.files.add(f, d)
				w.progs.add(f, d)
			}
		}
	case "path":
		var ds []string
		for _, p := range strings.Split(v.s, ":") {
			for _, d := range dirs {
				if p == "" {
					p = "."
				}
				if !filepath.IsAbs(p) {
					p = filepath.Join(d, p)
				}
				ds = union(ds, []string{filepath.Clean(p)})
			}
		}
		saved := w.cmd
		if w.cmd == "" {
			w.cmd = name + "=" + v.s
		}
		w.loadsFrom(name, ds)
		w.cmd = saved
	default:
		// A path (LD_PRELOAD=./x.so, EDITOR=./bin/ed) may be run.
		if strings.Contains(v.s, "/") {
			w.arg(v, dirs)
		}
	}
}

// find reads find's words: the command of each -exec or -ok (up to its
// ; or +) runs in dirs, that of -execdir or -okdir in the directory of
// each file found, which cannot be told; the other words are data.
func (w *walker) find(rest []word, dirs []string, depth int) {
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if !a.ok || a.s != "-exec" && a.s != "-ok" && a.s != "-execdir" && a.s != "-okdir" {
			w.quietArg(a, dirs)
			continue
		}
		j := i + 1
		for j < len(rest) && !(rest[j].ok && (rest[j].s == ";" || rest[j].s == `\;` || rest[j].s == "+")) {
			j++
		}
		if a.s == "-execdir" || a.s == "-okdir" {
			w.unsure(dirs, "find "+a.s+" runs its command in the directory of each file it finds; its paths are read from where find runs")
		}
		w.exec(rest[i+1:j], dirs, depth+1)
		i = j
	}
}
