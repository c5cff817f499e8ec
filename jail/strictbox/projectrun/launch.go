package projectrun

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/pelletier/go-toml/v2"
)

// launcher is how a package manager's command that runs another one is
// called (uv run, npx, poetry run): the subcommands that do (none when
// every call does), its options whose value is the next word, those
// whose value is the directory it runs from, those whose value is a
// shell command line, and its option that runs a module. Where the
// command it runs is looked up is its kind: a Python launcher runs a
// bare name from the project's environment (.venv/bin) or its own
// scripts table, a node one from node_modules/.bin.
type launcher struct {
	subs          []string
	values, chdir []string
	shell         []string
	module        string
	// python: its project is found by pyproject.toml, a .py word runs
	// under python, and a bare name is a script of tables or a command
	// of the environment; else its project is found by package.json and
	// a bare name is a command of node_modules/.bin.
	python bool
	// tables are where its project files define named scripts (file,
	// then the keys to the table), read for a bare name.
	tables [][]string
}

// pyScripts is the entry points a Python project defines.
var pyScripts = []string{"pyproject.toml", "project", "scripts"}

// launchers are the package managers' commands that run a command (and
// what it names) in the project's environment.
var launchers = sync.OnceValue(func() map[string]launcher {
	return map[string]launcher{
		"uv": {subs: []string{"run"}, python: true, module: "-m",
			values: []string{"--with", "--with-editable", "--with-requirements", "-p", "--python", "--package", "--extra", "--group", "--only-group", "--no-group", "--env-file", "--index", "--default-index", "--index-url", "--extra-index-url", "-f", "--find-links", "--config-file", "--cache-dir", "--color", "-P", "--upgrade-package", "--index-strategy", "--keyring-provider", "--resolution", "--prerelease", "--exclude-newer", "--link-mode", "--python-preference", "--python-platform", "--refresh-package", "--reinstall-package", "--no-binary-package", "--only-binary-package", "--no-build-package", "--no-build-isolation-package", "--config-setting", "-C"},
			chdir:  []string{"--directory", "--project"},
			tables: [][]string{pyScripts}},
		"poetry": {subs: []string{"run"}, python: true, values: []string{"--ansi"}, chdir: []string{"-C", "--directory", "-P", "--project"}, tables: [][]string{pyScripts, {"pyproject.toml", "tool", "poetry", "scripts"}}},
		"pipenv": {subs: []string{"run"}, python: true, values: []string{"--python"}, tables: [][]string{{"Pipfile", "scripts"}, pyScripts}},
		"pdm":    {subs: []string{"run"}, python: true, values: []string{"-v", "--venv"}, chdir: []string{"-p", "--project"}, tables: [][]string{{"pyproject.toml", "tool", "pdm", "scripts"}, pyScripts}},
		"rye":    {subs: []string{"run"}, python: true, values: []string{"--pyproject"}, tables: [][]string{{"pyproject.toml", "tool", "rye", "scripts"}, pyScripts}},
		"hatch":  {subs: []string{"run"}, python: true, values: []string{"-e", "--env"}, tables: [][]string{{"pyproject.toml", "tool", "hatch", "envs", "*", "scripts"}, {"hatch.toml", "envs", "*", "scripts"}, pyScripts}},
		"npx":    {values: []string{"-p", "--package", "--workspace", "-w", "--userconfig", "--cache"}, shell: []string{"-c", "--call"}, chdir: []string{"--prefix"}},
		"bunx":   {values: []string{"-p", "--package"}},
		"pnpx":   {values: []string{"-p", "--package"}},
	}
})

// pythonVenv is where a Python launcher's environment keeps its
// commands, relative to the project.
const pythonVenv = ".venv/bin"

// pythonProject are the files of a Python project a launcher reads, and
// builds it by (its build backend runs them) before it runs a command.
var pythonProject = []string{"pyproject.toml", "setup.py", "setup.cfg", "uv.lock", "poetry.lock", "pdm.lock", "Pipfile", "Pipfile.lock", "hatch.toml", "requirements.lock"}

// known reports whether a bare command name is one the reader follows
// itself (or a shell's own), not one a launcher looks up.
func known(name string) bool {
	_, loads := loaderOf(name)
	_, launches := launchers()[name]
	return loads || launches || interpreters()[name] != nil || wrappers()[name] || slices.Contains(shells, name) ||
		slices.Contains([]string{"npm", "pnpm", "yarn", "make", "gmake", "just", "go", "cargo", "composer", "terraform", "tofu", "task", "go-task", "poe", "mise", "eval", "source", "."}, name)
}

// launch reads a launcher's call (name, l; rest its words after its
// name) and reports whether it runs a command: a call of another
// subcommand is the caller's to read as words.
func (w *walker) launch(name string, l launcher, rest []word, dirs []string, depth int) bool {
	i := 0
	// opts skips the launcher's options from i, and reports whether
	// one of them ran what the call runs (a command line, a module).
	opts := func() bool {
		for i < len(rest) && rest[i].ok {
			a := rest[i]
			v, val, eq := strings.Cut(a.s, "=")
			switch {
			case a.s == "--":
				i++
				return false
			case slices.Contains(l.chdir, v) && (eq || i+1 < len(rest)):
				if eq {
					dirs = w.cd(lit(val), dirs)
					i++
				} else {
					dirs = w.cd(rest[i+1], dirs)
					i += 2
				}
				continue
			case slices.Contains(l.shell, v) && (eq || i+1 < len(rest)):
				code := lit(val)
				if !eq {
					code = rest[i+1]
				}
				if code.ok {
					w.shell(code.s, dirs, depth+1)
				} else {
					w.unsure(dirs, name+" "+v+" runs a command line it does not set")
				}
				return true
			case l.module != "" && a.s == l.module && i+1 < len(rest):
				w.pyProject(dirs)
				saved := w.venv
				if l.python && len(dirs) > 0 {
					w.venv = w.venvOf(filepath.Join(projectDir(w, dirs[0], "pyproject.toml"), pythonVenv, "python"), "")
				}
				w.module(name, rest[i+1], rest[i+2:], dirs)
				w.venv = saved
				return true
			case slices.Contains(l.values, v) && !eq:
				i += 2
				continue
			case strings.HasPrefix(a.s, "-"):
				i++
				continue
			}
			return false
		}
		return false
	}
	if len(l.subs) > 0 {
		if opts() {
			return true
		}
		if i >= len(rest) || !rest[i].ok || !slices.Contains(l.subs, rest[i].s) {
			return false
		}
		i++
	}
	if opts() {
		return true
	}
	w.launched(name, l, rest[i:], dirs, depth)
	return true
}

// venvCommands are the paths of the command name in the environment of
// the project of each of dirs, or nil unless each is there.
func (w *walker) venvCommands(name string, dirs []string) []string {
	var out []string
	for _, d := range dirs {
		p := filepath.Join(projectDir(w, d, "pyproject.toml"), pythonVenv, name)
		if w.read(p) == nil {
			return nil
		}
		out = append(out, p)
	}
	return out
}

// launched reads the command a launcher runs (cmd), in dirs.
func (w *walker) launched(name string, l launcher, cmd []word, dirs []string, depth int) {
	if l.python {
		w.pyProject(dirs)
	}
	if len(cmd) == 0 {
		return
	}
	first := cmd[0]
	if !first.ok {
		w.unknown(first, dirs)
		for _, a := range cmd[1:] {
			w.quietArg(a, dirs)
		}
		return
	}
	saved, venv := w.cmd, w.venv
	defer func() { w.cmd, w.venv = saved, venv }()
	if l.python && len(dirs) > 0 {
		// It runs its command with the project's environment's python.
		w.venv = w.venvOf(filepath.Join(projectDir(w, dirs[0], "pyproject.toml"), pythonVenv, "python"), "")
	}
	switch {
	case l.python && (strings.HasSuffix(first.s, ".py") || strings.HasSuffix(first.s, ".pyw")):
		w.exec(append([]word{lit("python")}, cmd...), dirs, depth+1)
	case strings.Contains(first.s, "/") || l.python && known(first.s):
		w.exec(cmd, dirs, depth+1)
	case l.python:
		if w.pyScript(name, l, first.s, cmd[1:], dirs, depth) {
			return
		}
		// A command of the environment: an entry point there (pip's and
		// uv's, whose #! line is the environment's python) is read as
		// running it by its path is, for what it imports.
		if bins := w.venvCommands(first.s, dirs); bins != nil {
			for i, p := range bins {
				w.exec(append([]word{lit(p)}, cmd[1:]...), dirs[i:i+1], depth+1)
			}
			return
		}
		// One missing at launch loads a package the reader cannot tell
		// (the project's own, or one installed).
		for _, d := range dirs {
			p := filepath.Join(projectDir(w, d, "pyproject.toml"), pythonVenv, first.s)
			w.files.add(p, d)
			w.progs.add(p, d)
		}
		w.unsure(dirs, name+" runs "+first.s+" from the project's environment, whose code is not followed")
		for _, a := range cmd[1:] {
			w.quietArg(a, dirs)
		}
	default:
		// A package's command from node_modules/.bin: the package it
		// links into is held whole by the caller; one missing would be
		// fetched, and one the box adds there is held.
		for _, d := range dirs {
			for _, b := range []string{d, projectDir(w, d, "package.json")} {
				p := filepath.Join(b, "node_modules", ".bin", first.s)
				w.files.add(p, d)
				w.progs.add(p, d)
				w.binPackage(p)
			}
		}
		w.exec(cmd, dirs, depth+1)
	}
}

// projectDir is the directory of the nearest file named marker from d
// upwards within the project, else d.
func projectDir(w *walker, d, marker string) string {
	for dd := d; within(dd, w.root); dd = filepath.Dir(dd) {
		if w.read(filepath.Join(dd, marker)) != nil {
			return dd
		}
		if dd == w.root {
			break
		}
	}
	return d
}

// pyProject holds the files a Python launcher reads and builds the
// project by, in the nearest project of each of dirs.
func (w *walker) pyProject(dirs []string) {
	for _, d := range dirs {
		w.pyProjectAt(projectDir(w, d, "pyproject.toml"))
	}
}

// pyProjectAt holds the files of the Python project in pd.
func (w *walker) pyProjectAt(pd string) {
	for _, f := range pythonProject {
		w.files.add(filepath.Join(pd, f), pd)
	}
}

// pyScript reads the script named name of a Python launcher's tables,
// as its project defines it; it reports whether one does.
func (w *walker) pyScript(launcher string, l launcher, name string, args []word, dirs []string, depth int) bool {
	found := false
	for _, d := range dirs {
		pd := projectDir(w, d, "pyproject.toml")
		for _, t := range l.tables {
			p := filepath.Join(pd, t[0])
			data := w.read(p)
			if data == nil {
				continue
			}
			var doc map[string]any
			if toml.Unmarshal(data, &doc) != nil {
				continue
			}
			key := name
			if launcher == "hatch" {
				// ENV:SCRIPT: a script of any environment is followed.
				if i := strings.LastIndex(name, ":"); i >= 0 {
					key = name[i+1:]
				}
			}
			for _, v := range tableValues(doc, t[1:], key) {
				found = true
				w.files.add(p, pd)
				w.cmd = launcher + " run " + name
				w.pyEntry(t, v, []string{pd}, depth)
			}
			if found {
				break
			}
		}
	}
	if found {
		for _, a := range args {
			w.quietArg(a, dirs)
		}
	}
	return found
}

// tableValues are the values of key in the table at keys of doc ("*"
// matches each key there).
func tableValues(doc map[string]any, keys []string, key string) []any {
	if len(keys) == 0 {
		if v, ok := doc[key]; ok {
			return []any{v}
		}
		return nil
	}
	var out []any
	for k, v := range doc {
		if m, ok := v.(map[string]any); ok && (keys[0] == "*" || keys[0] == k) {
			out = append(out, tableValues(m, keys[1:], key)...)
		}
	}
	return out
}

// pyEntry reads a script of a Python project's table (t names it): an
// entry point ("pkg.mod:func") of [project.scripts] runs the module, a
// tool's script is a command line (or several, or a table of cmd,
// shell, call, composite or chain).
func (w *walker) pyEntry(t []string, v any, dirs []string, depth int) {
	entry := slices.Equal(t, pyScripts) || slices.Equal(t, []string{"pyproject.toml", "tool", "poetry", "scripts"})
	switch v := v.(type) {
	case string:
		if entry {
			// An entry point's wrapper imports the module (from the
			// project, in an src layout or not: both are held) and its
			// package whole.
			mod, _, _ := strings.Cut(v, ":")
			rel := filepath.FromSlash(strings.ReplaceAll(strings.TrimSpace(mod), ".", "/"))
			for _, d := range union(dirs, []string{filepath.Join(dirs[0], "src")}) {
				w.files.add(rel+".py", d)
				w.files.add(filepath.Join(rel, "__init__.py"), d)
				if pkg := filepath.Join(d, filepath.Dir(rel)); filepath.Dir(rel) != "." && within(pkg, w.root) {
					w.dirs.add(pkg, pkg)
				}
			}
			return
		}
		w.shell(v, dirs, depth+1)
	case []any:
		for _, x := range v {
			w.pyEntry(t, x, dirs, depth)
		}
	case map[string]any:
		for _, k := range []string{"cmd", "shell", "composite", "chain"} {
			switch c := v[k].(type) {
			case string:
				w.shell(c, dirs, depth+1)
			case []any:
				var words []word
				for _, x := range c {
					if s, ok := x.(string); ok {
						if k == "cmd" {
							words = append(words, lit(s))
						} else {
							w.shell(s, dirs, depth+1)
						}
					}
				}
				if len(words) > 0 {
					w.exec(words, dirs, depth+1)
				}
			}
		}
		if c, ok := v["call"].(string); ok {
			w.pyEntry(pyScripts, c, dirs, depth)
		}
		if c, ok := v["reference"].(string); ok { // poetry's
			w.pyEntry(pyScripts, c, dirs, depth)
		}
	default:
		w.unsure(dirs, "a script of "+t[0]+" it cannot read")
	}
}

// denoTask reads deno task NAME: the task of the deno.json (or
// deno.jsonc) found from dirs upwards, run in its directory, and the
// tasks it depends on; a name not there is a script of package.json.
func (w *walker) denoTask(rest []word, dirs []string, depth int) {
	var name *word
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a.ok && (a.s == "--cwd" || a.s == "--config" || a.s == "-c") && i+1 < len(rest) {
			if a.s == "--cwd" {
				dirs = w.cd(rest[i+1], dirs)
			} else {
				w.arg(rest[i+1], dirs)
			}
			i++
			continue
		}
		if a.ok && strings.HasPrefix(a.s, "-") {
			continue
		}
		name = &rest[i]
		break
	}
	if name == nil {
		return
	}
	for _, d := range dirs {
		found := false
		for dd := d; within(dd, w.root) && !found; dd = filepath.Dir(dd) {
			for _, f := range []string{"deno.json", "deno.jsonc"} {
				p := filepath.Join(dd, f)
				w.files.add(p, dd)
				data := w.read(p)
				if data == nil {
					continue
				}
				var doc struct {
					Tasks map[string]any `json:"tasks"`
				}
				if !jsonc(data, &doc) {
					continue
				}
				found = true
				names := []string{name.s}
				if !name.ok {
					names = nil
					for k := range doc.Tasks {
						names = append(names, k)
					}
					slices.Sort(names)
					w.unsure([]string{dd}, "deno runs a task whose name it does not set; every task of "+w.rel(p)+" is followed")
				}
				w.denoTasks(doc.Tasks, names, dd, depth, map[string]bool{})
				if name.ok && doc.Tasks[name.s] == nil {
					w.pkg(dd, name, []string{dd}, depth)
				}
				break
			}
			if dd == w.root {
				break
			}
		}
		if !found {
			w.pkg(d, name, []string{d}, depth)
		}
	}
}

// denoTasks reads the tasks names of a deno.json's tasks, and those
// they depend on.
func (w *walker) denoTasks(tasks map[string]any, names []string, dir string, depth int, done map[string]bool) {
	saved := w.cmd
	defer func() { w.cmd = saved }()
	for _, n := range names {
		if done[n] {
			continue
		}
		done[n] = true
		switch t := tasks[n].(type) {
		case string:
			w.cmd = t
			w.shell(t, []string{dir}, depth+1)
		case map[string]any:
			if c, ok := t["command"].(string); ok {
				w.cmd = c
				w.shell(c, []string{dir}, depth+1)
			}
			if deps, ok := t["dependencies"].([]any); ok {
				var ds []string
				for _, x := range deps {
					if s, ok := x.(string); ok {
						ds = append(ds, s)
					}
				}
				w.denoTasks(tasks, ds, dir, depth, done)
			}
		}
	}
}

// goBuildValues are the go build flags whose value is the next word;
// goBuildPrograms those whose value is a program it runs.
var (
	goBuildValues   = []string{"-o", "-p", "-tags", "-ldflags", "-gcflags", "-asmflags", "-mod", "-modfile", "-overlay", "-pgo", "-pkgdir", "-covermode", "-coverpkg", "-compiler", "-gccgoflags", "-installsuffix", "-buildmode", "-buildvcs", "-C", "-exec", "-toolexec"}
	goBuildPrograms = []string{"-exec", "-toolexec"}
)

// maxGoPkgs bounds how many of a module's packages one go run follows.
const maxGoPkgs = 512

// goRun reads go run [build flags] PKG|FILES [args] (sub "run") and go
// test [build flags] [PKGS] (sub "test"): it compiles the package (every
// file of its directory, held whole) and the packages of its module it
// imports in turn, and runs the result; go.mod, go.sum and go.work say
// how. A pattern (./...) holds the directory it starts from whole.
func (w *walker) goRun(sub string, rest []word, dirs []string, depth int) {
	i := 0
	for ; i < len(rest); i++ {
		a := rest[i]
		if !a.ok {
			w.unknown(a, dirs)
			return
		}
		if !strings.HasPrefix(a.s, "-") {
			break
		}
		f := strings.TrimPrefix(a.s, "-")
		f = "-" + strings.TrimPrefix(f, "-")
		name, val, eq := strings.Cut(f, "=")
		if !slices.Contains(goBuildValues, name) {
			continue
		}
		v := lit(val)
		if !eq {
			if i+1 >= len(rest) {
				return
			}
			i++
			v = rest[i]
		}
		switch {
		case name == "-C":
			dirs = w.cd(v, dirs)
		case slices.Contains(goBuildPrograms, name):
			if v.ok {
				w.shell(v.s, dirs, depth+1)
			} else {
				w.unknown(v, dirs)
			}
		case name == "-modfile" || name == "-overlay" || name == "-pgo":
			w.arg(v, dirs)
		}
	}
	if i >= len(rest) && sub != "test" {
		return
	}
	var files []string
	pkgs := rest[i:min(i+1, len(rest))]
	for ; i < len(rest) && rest[i].ok && strings.HasSuffix(rest[i].s, ".go"); i++ {
		files = append(files, rest[i].s)
	}
	if files != nil {
		pkgs = nil
	} else {
		i++
	}
	if sub == "test" {
		// Its packages, then its flags: a path or the module's.
		pkgs = nil
		for _, a := range rest[max(i-1, 0):] {
			if a.ok && (strings.HasPrefix(a.s, ".") || filepath.IsAbs(a.s) || strings.Contains(strings.SplitN(a.s, "/", 2)[0], ".")) {
				pkgs = append(pkgs, a)
			}
		}
		i = len(rest)
	}
	for _, a := range rest[min(i, len(rest)):] {
		w.quietArg(a, dirs)
	}
	for _, d := range dirs {
		mod := projectDir(w, d, "go.mod")
		for _, f := range []string{"go.mod", "go.sum", "go.work", "go.work.sum"} {
			w.files.add(filepath.Join(mod, f), mod)
		}
		modPath := goModule(w.read(filepath.Join(mod, "go.mod")))
		g := goPkgs{w: w, mod: mod, path: modPath, seen: map[string]bool{}, tests: sub == "test"}
		for _, f := range files {
			w.files.add(f, d)
			w.progs.add(f, d)
			p := f
			if !filepath.IsAbs(p) {
				p = filepath.Join(d, p)
			}
			g.imports(w.read(filepath.Clean(p)))
		}
		if sub == "test" && files == nil && len(pkgs) == 0 {
			g.pkg(d) // the package where it runs
		}
		for _, pkg := range pkgs {
			if !pkg.ok {
				w.unknown(pkg, []string{d})
				continue
			}
			p := pkg.s
			dir := ""
			switch {
			case strings.Contains(p, "@"):
				continue // a module at a version: from the module cache, outside
			case p == "." || p == ".." || strings.HasPrefix(p, "./") || strings.HasPrefix(p, "../") || filepath.IsAbs(p):
				dir = filepath.Join(d, p)
			case modPath != "" && (p == modPath || strings.HasPrefix(p, modPath+"/")):
				dir = filepath.Join(mod, strings.TrimPrefix(p, modPath))
			default:
				w.unsure([]string{d}, "go "+sub+" builds a package it cannot find in the project's module", p)
				continue
			}
			if base, _, wild := strings.Cut(dir, "..."); wild {
				// Every package below base: held whole.
				dir = filepath.Clean(base)
				if !strings.HasSuffix(base, "/") {
					dir = filepath.Dir(dir)
				}
				if dir == w.root {
					g.root = true
				} else if within(dir, w.root) {
					w.dirs.add(dir, dir)
				}
				continue
			}
			g.pkg(filepath.Clean(dir))
		}
		if g.over {
			w.unsure([]string{mod}, "go "+sub+" builds more of the module's packages than are followed")
		}
		if g.root {
			saved := w.cmd
			if w.cmd == "" {
				w.cmd = "go " + sub
			}
			w.unsure([]string{w.root}, "go "+sub+" compiles every Go file of a package in the project's own directory: one the box adds there runs with it")
			w.cmd = saved
		}
	}
}

// goModule is the module path a go.mod declares, or "".
func goModule(data []byte) string {
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && f[0] == "module" {
			if s, err := strconv.Unquote(f[1]); err == nil {
				return s
			}
			return f[1]
		}
	}
	return ""
}

// goPkgs follows the packages of one module a go run builds.
type goPkgs struct {
	w          *walker
	mod, path  string
	seen       map[string]bool
	over, root bool
	// tests: its tests are built too (go test).
	tests bool
}

// pkg holds a package's directory whole and follows its imports.
func (g *goPkgs) pkg(dir string) {
	if g.seen[dir] {
		return
	}
	if len(g.seen) >= maxGoPkgs {
		g.over = true
		return
	}
	g.seen[dir] = true
	switch {
	case dir == g.w.root:
		g.root = true
	case within(dir, g.w.root):
		g.w.dirs.add(dir, dir)
	}
	if g.w.list == nil {
		g.w.unsure([]string{g.mod}, "go run builds the module's packages its package imports, which cannot be listed here")
		return
	}
	for _, f := range g.w.list(dir) {
		if strings.HasSuffix(f, ".go") && (g.tests || !strings.HasSuffix(f, "_test.go")) {
			g.imports(g.w.read(filepath.Join(dir, f)))
		}
	}
}

// imports follows the imports of a Go file (src) within the module, and
// into its vendor directory.
func (g *goPkgs) imports(src []byte) {
	if src == nil {
		return
	}
	f, err := parser.ParseFile(token.NewFileSet(), "", src, parser.ImportsOnly)
	if err != nil {
		return
	}
	for _, im := range f.Imports {
		p, err := strconv.Unquote(im.Path.Value)
		if err != nil {
			continue
		}
		switch {
		case g.path != "" && (p == g.path || strings.HasPrefix(p, g.path+"/")):
			g.pkg(filepath.Join(g.mod, strings.TrimPrefix(p, g.path)))
		case strings.Contains(strings.SplitN(p, "/", 2)[0], "."):
			if v := filepath.Join(g.mod, "vendor", p); g.w.list != nil && g.w.list(v) != nil {
				g.pkg(v)
			}
		}
	}
}

// cargoRun reads cargo run [options] [-- args]: it builds the package
// (its manifest, build script and sources, and those of the packages it
// depends on by path) and runs the result; cargo's configuration files
// from where it runs upwards say how (a runner, a rustc wrapper).
func (w *walker) cargoRun(rest []word, dirs []string) {
	var manifest *word
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if !a.ok {
			w.quiet(a, dirs)
			continue
		}
		if a.s == "--" {
			for _, x := range rest[i+1:] {
				w.quietArg(x, dirs)
			}
			break
		}
		name, val, eq := strings.Cut(a.s, "=")
		switch name {
		case "--manifest-path":
			m := lit(val)
			if !eq && i+1 < len(rest) {
				i++
				m = rest[i]
			}
			manifest = &m
		case "-C":
			if i+1 < len(rest) {
				i++
				dirs = w.cd(rest[i], dirs)
			}
		case "--config":
			if !eq && i+1 < len(rest) {
				i++
				w.quietArg(rest[i], dirs)
			}
		}
	}
	for _, d := range dirs {
		for dd := d; within(dd, w.root); dd = filepath.Dir(dd) {
			w.files.add(filepath.Join(dd, ".cargo", "config.toml"), dd)
			w.files.add(filepath.Join(dd, ".cargo", "config"), dd)
			if dd == w.root {
				break
			}
		}
		pd := projectDir(w, d, "Cargo.toml")
		if manifest != nil {
			if !manifest.ok {
				w.unknown(*manifest, dirs)
				continue
			}
			m := manifest.s
			if !filepath.IsAbs(m) {
				m = filepath.Join(d, m)
			}
			pd = filepath.Dir(filepath.Clean(m))
		}
		w.crate(pd, map[string]bool{})
	}
}

// crate holds what building the package whose Cargo.toml is in dir
// runs: the manifest and lock file, the build script, src/ and the
// other targets' paths whole, and the same of its path dependencies and
// (at a workspace's root) its members.
func (w *walker) crate(dir string, seen map[string]bool) {
	if seen[dir] || len(seen) > maxGoPkgs || !within(dir, w.root) {
		return
	}
	seen[dir] = true
	m := filepath.Join(dir, "Cargo.toml")
	w.files.add(m, dir)
	w.files.add(filepath.Join(dir, "Cargo.lock"), dir)
	w.files.add(filepath.Join(dir, "build.rs"), dir)
	hold := func(p string) {
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		p = filepath.Clean(p)
		if p == w.root {
			w.unsure([]string{w.root}, "cargo builds a target whose sources are the project's own directory")
			return
		}
		if within(p, w.root) {
			w.dirs.add(p, p)
		}
	}
	hold("src")
	data := w.read(m)
	if data == nil {
		return
	}
	var doc map[string]any
	if toml.Unmarshal(data, &doc) != nil {
		w.unsure([]string{dir}, "cargo reads a Cargo.toml that does not parse here")
		return
	}
	if p, ok := doc["package"].(map[string]any); ok {
		if b, ok := p["build"].(string); ok {
			w.files.add(b, dir)
			hold(filepath.Dir(b))
		}
	}
	for _, k := range []string{"lib", "bin", "example", "test", "bench"} {
		var ts []any
		switch t := doc[k].(type) {
		case map[string]any:
			ts = []any{t}
		case []any:
			ts = t
		}
		for _, t := range ts {
			if m, ok := t.(map[string]any); ok {
				if p, ok := m["path"].(string); ok {
					w.files.add(p, dir)
					hold(filepath.Dir(p))
				}
			}
		}
	}
	hold("examples")
	deps := func(t any) {
		m, _ := t.(map[string]any)
		for _, v := range m {
			if d, ok := v.(map[string]any); ok {
				if p, ok := d["path"].(string); ok {
					w.crate(filepath.Clean(filepath.Join(dir, p)), seen)
				}
			}
		}
	}
	for _, k := range []string{"dependencies", "build-dependencies", "patch", "replace"} {
		if k == "patch" {
			if m, ok := doc[k].(map[string]any); ok {
				for _, v := range m {
					deps(v)
				}
			}
			continue
		}
		deps(doc[k])
	}
	if ws, ok := doc["workspace"].(map[string]any); ok {
		deps(ws["dependencies"])
		if ms, ok := ws["members"].([]any); ok {
			for _, x := range ms {
				s, _ := x.(string)
				if s == "" {
					continue
				}
				if strings.ContainsAny(s, "*?[") {
					base := s[:strings.IndexAny(s, "*?[")]
					p := filepath.Clean(filepath.Join(dir, filepath.Dir(base+"x")))
					if p == w.root || !within(p, w.root) {
						w.unsure([]string{dir}, "cargo builds workspace members by a pattern ("+s+") that is not followed")
					} else {
						w.dirs.add(p, p)
					}
					continue
				}
				w.crate(filepath.Clean(filepath.Join(dir, s)), seen)
			}
		}
	}
}

// cargoBuilds reports whether cargo's words (past its +toolchain and
// options) are a subcommand that builds the package, which runs its
// build script and, for run, test and bench, what it built.
func cargoBuilds(rest []word) bool {
	for _, a := range rest {
		if !a.ok {
			return false
		}
		if strings.HasPrefix(a.s, "-") || strings.HasPrefix(a.s, "+") {
			continue
		}
		return slices.Contains([]string{"run", "r", "build", "b", "check", "c", "test", "t", "bench", "clippy", "doc", "d"}, a.s)
	}
	return false
}
