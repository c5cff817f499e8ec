package projectrun

import (
	"encoding/json"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/aisan-dev/aisan/jail/strictbox/protect"
)

// definer is a task runner or build tool that runs what files in the
// directory it runs in define: Python or Ruby code it loads (a noxfile,
// a Rakefile, a Gemfile), or a build it configures (Gradle, Maven). The
// box could change what such a command runs without touching the
// command.
type definer struct {
	// files are the names it looks for in the directory it runs in or,
	// when none is there, the nearest one above; dirs, what it loads
	// from there whole.
	files, dirs []string
	// code is the interpreter its files of that language are loaded
	// as ("python3" for .py, "node" for JavaScript and TypeScript,
	// "ruby" for the rest), "" for none.
	code string
	// config is set for a tool its files configure (a linter, a test
	// runner, a bundler): what it runs is what they load, followed; a
	// task runner's files (config unset) build commands that are not,
	// and the launch says so.
	config bool
	// fileOpts are its options whose value names another file of its.
	fileOpts []string
	// exec is its subcommand that runs the rest of its words as a
	// command (bundle exec).
	exec string
	// sub, when set, is the subcommand that makes a call of it one
	// (docker compose): other calls of it read no files.
	sub string
	// operand is set for a tool that looks for its files in the
	// directory its first operand names (sphinx-build SOURCEDIR);
	// valueOpts are its options that take a value, skipped to find it.
	operand   bool
	valueOpts []string
	// pkgKey is the key of package.json its configuration may sit
	// under instead of a file of its own ("eslintConfig", "lint-staged").
	pkgKey string
}

// definers are the commands that run what their definition files say.
var definers = sync.OnceValue(func() map[string]definer {
	invoke := definer{files: []string{"tasks.py", "invoke.yaml", "invoke.yml", "invoke.json", "invoke.py"}, dirs: []string{"tasks"}, code: "python3", fileOpts: []string{"-c", "--collection", "-f", "--config", "-r", "--search-root"}}
	gradle := definer{files: []string{"build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts", "gradle.properties", "init.gradle", "init.gradle.kts"}, dirs: []string{"gradle", "buildSrc", ".gradle"}, fileOpts: []string{"-b", "--build-file", "-c", "--settings-file", "-I", "--init-script", "-p", "--project-dir"}}
	maven := definer{files: []string{"pom.xml"}, dirs: []string{".mvn"}, fileOpts: []string{"-f", "--file", "-s", "--settings"}}
	js := func(base ...string) []string {
		var out []string
		for _, b := range base {
			for _, e := range []string{".js", ".mjs", ".cjs", ".ts", ".mts", ".cts"} {
				out = append(out, b+e)
			}
		}
		return out
	}
	// The containers docker compose starts, their mounts and privileges,
	// and the variables it puts in them.
	compose := definer{files: []string{"compose.yaml", "compose.yml", "docker-compose.yaml", "docker-compose.yml", "compose.override.yaml", "compose.override.yml", "docker-compose.override.yaml", "docker-compose.override.yml", ".env"}, config: true, fileOpts: []string{"-f", "--file", "--env-file", "--project-directory"}}
	docker := compose
	docker.sub = "compose"
	vitest := definer{files: js("vitest.config", "vitest.workspace", "vite.config"), code: "node", config: true, fileOpts: []string{"-c", "--config", "--root", "--dir", "--workspace"}}
	// Python tools whose configs name code they load: mkdocs' hooks,
	// mypy's and pylint's plugins; Sphinx runs conf.py.
	mypy := definer{files: []string{"mypy.ini", ".mypy.ini", "pyproject.toml", "setup.cfg"}, code: "python3", config: true, fileOpts: []string{"--config-file"}}
	return map[string]definer{
		"eslint":         {pkgKey: "eslintConfig", files: slices.Concat(js("eslint.config", ".eslintrc"), []string{".eslintrc", ".eslintrc.json", ".eslintrc.yml", ".eslintrc.yaml"}), code: "node", config: true, fileOpts: []string{"-c", "--config", "--resolve-plugins-relative-to", "--rulesdir"}},
		"prettier":       {pkgKey: "prettier", files: slices.Concat(js("prettier.config", ".prettierrc"), []string{".prettierrc", ".prettierrc.json", ".prettierrc.yml", ".prettierrc.yaml", ".prettierrc.json5", ".prettierrc.toml"}), code: "node", config: true, fileOpts: []string{"--config", "--plugin"}},
		"jest":           {pkgKey: "jest", files: slices.Concat(js("jest.config", "babel.config", ".babelrc"), []string{"jest.config.json", "babel.config.json", ".babelrc", ".babelrc.json"}), code: "node", config: true, fileOpts: []string{"-c", "--config", "--rootDir", "--setupFiles", "--setupFilesAfterEach"}},
		"vitest":         vitest,
		"vite":           vitest,
		"webpack":        {files: js("webpack.config"), code: "node", config: true, fileOpts: []string{"-c", "--config"}},
		"rollup":         {files: js("rollup.config"), code: "node", config: true, fileOpts: []string{"-c", "--config"}},
		"stylelint":      {pkgKey: "stylelint", files: slices.Concat(js("stylelint.config", ".stylelintrc"), []string{".stylelintrc", ".stylelintrc.json", ".stylelintrc.yml", ".stylelintrc.yaml"}), code: "node", config: true, fileOpts: []string{"-c", "--config"}},
		"mocha":          {pkgKey: "mocha", files: slices.Concat(js(".mocharc"), []string{".mocharc.json", ".mocharc.jsonc", ".mocharc.yml", ".mocharc.yaml"}), code: "node", config: true, fileOpts: []string{"--config", "-r", "--require", "--file"}},
		"playwright":     {files: js("playwright.config"), code: "node", config: true, fileOpts: []string{"-c", "--config"}},
		"lint-staged":    {pkgKey: "lint-staged", files: slices.Concat(js("lint-staged.config", ".lintstagedrc"), []string{".lintstagedrc", ".lintstagedrc.json", ".lintstagedrc.yml", ".lintstagedrc.yaml"}), code: "node", fileOpts: []string{"-c", "--config"}},
		"commitlint":     {pkgKey: "commitlint", files: slices.Concat(js("commitlint.config", ".commitlintrc"), []string{".commitlintrc", ".commitlintrc.json", ".commitlintrc.yml", ".commitlintrc.yaml"}), code: "node", config: true, fileOpts: []string{"-g", "--config"}},
		"nox":            {files: []string{"noxfile.py"}, code: "python3", fileOpts: []string{"-f", "--noxfile"}},
		"tox":            {files: []string{"tox.ini", "tox.toml", "pyproject.toml", "setup.cfg", "setup.py"}, code: "python3", fileOpts: []string{"-c", "--conf"}},
		"invoke":         invoke,
		"inv":            invoke,
		"rake":           {files: []string{"Rakefile", "rakefile", "Rakefile.rb", "rakefile.rb"}, dirs: []string{"rakelib"}, code: "ruby", fileOpts: []string{"-f", "--rakefile", "-R", "--rakelibdir"}},
		"bundle":         {files: []string{"Gemfile", "gems.rb", "Gemfile.lock", "gems.locked"}, dirs: []string{".bundle"}, code: "ruby", fileOpts: []string{"--gemfile"}, exec: "exec"},
		"gradle":         gradle,
		"gradlew":        gradle,
		"mvn":            maven,
		"mvnw":           maven,
		"sbt":            {files: []string{"build.sbt"}, dirs: []string{"project"}},
		"docker-compose": compose,
		"docker":         docker,
		"mkdocs":         {files: []string{"mkdocs.yml", "mkdocs.yaml"}, code: "python3", config: true, fileOpts: []string{"-f", "--config-file"}},
		"mypy":           mypy,
		"dmypy":          mypy,
		"pylint":         {files: []string{"pylintrc", ".pylintrc", "pyproject.toml", "setup.cfg", "tox.ini"}, code: "python3", config: true, fileOpts: []string{"--rcfile"}},
		"sphinx-build":   {files: []string{"conf.py"}, code: "python3", config: true, fileOpts: []string{"-c"}, operand: true, valueOpts: []string{"-b", "-M", "-d", "-D", "-A", "-t", "-j", "-w", "--jobs", "--doctree-dir", "--define", "--tag", "--warning-file"}},
	}
})

// definer holds the definition files of the command name run in dirs
// (rest its words): each, and the directories it loads whole; a file of
// code is followed as its interpreter runs it. bundle exec's command is
// read in turn.
func (w *walker) definer(name string, d definer, rest []word, dirs []string, depth int) {
	var named []word
	operand := false
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if !a.ok {
			continue
		}
		if d.operand && !operand && !strings.HasPrefix(a.s, "-") {
			// Its files are in the directory it names, not where it
			// runs.
			operand = true
			dirs = w.cd(a, dirs)
			continue
		}
		if slices.Contains(d.valueOpts, a.s) {
			i++
			continue
		}
		if d.exec != "" && a.s == d.exec {
			w.exec(rest[i+1:], dirs, depth+1)
			break
		}
		if slices.Contains(d.fileOpts, a.s) && i+1 < len(rest) {
			named = append(named, rest[i+1])
			i++
			continue
		}
		for _, o := range d.fileOpts {
			if v, ok := strings.CutPrefix(a.s, o+"="); ok && strings.HasPrefix(o, "--") {
				named = append(named, lit(v))
			}
		}
	}
	for _, dir := range dirs {
		if d.pkgKey != "" {
			w.pkgConfig(name, dir, d, depth)
		}
		at := w.definedIn(dir, d.files)
		for _, f := range d.files {
			w.defined(name, filepath.Join(at, f), at, d, depth)
		}
		for _, sub := range d.dirs {
			w.holdDir(filepath.Join(at, sub))
		}
		for _, n := range named {
			if !n.ok {
				w.unknown(n, []string{dir})
				continue
			}
			p := from(dir, n.s)
			if w.list != nil && w.list(p) != nil {
				w.holdDir(p) // a directory of its (rakelib, a project dir)
				continue
			}
			w.defined(name, p, dir, d, depth)
		}
	}
}

// pkgConfig holds the package.json that configures name under its key
// (d.pkgKey), the nearest from dir up in the project that has the key,
// and follows the configuration as it does a file of its own: what a
// node tool's loads, the paths a task runner's (lint-staged's) commands
// name. The box could otherwise change the configuration in
// package.json, which is held only where it configures a tool the
// project's hooks run.
func (w *walker) pkgConfig(name, dir string, d definer, depth int) {
	for dd := dir; within(dd, w.root); dd = filepath.Dir(dd) {
		pj := filepath.Join(dd, "package.json")
		var doc map[string]json.RawMessage
		if data := w.read(pj); data != nil && json.Unmarshal(data, &doc) == nil && doc[d.pkgKey] != nil {
			w.files.add(pj, dd)
			conf := []byte(doc[d.pkgKey])
			if d.config {
				w.configModules(pj, conf, depth)
			} else {
				w.unsure([]string{dd}, name+" runs the commands "+w.rel(pj)+"'s "+d.pkgKey+" defines, which are not followed; the words of it that name paths are held", codePaths(string(conf))...)
			}
			return
		}
		if dd == w.root {
			return
		}
	}
}

// holdDir holds the directory p whole, when it lies below the project's
// own (which is never held whole).
func (w *walker) holdDir(p string) {
	if within(p, w.root) && p != w.root {
		w.dirs.add(p, p)
	}
}

// definedIn is the directory a definer finds its files from dir in:
// dir when one of files is there (or none is anywhere), else the
// nearest one above it in the project that has one.
func (w *walker) definedIn(dir string, files []string) string {
	for d := dir; within(d, w.root); d = filepath.Dir(d) {
		for _, f := range files {
			if w.read(filepath.Join(d, f)) != nil {
				return d
			}
		}
		if d == w.root {
			break
		}
	}
	return dir
}

// defined holds the definition file p of the command name (d; found
// from dir): a file of code (.py for python3, JavaScript or TypeScript
// for node, any for ruby) is followed as its interpreter loads it;
// another is held as one a program reads. A task runner's tasks run
// commands its own language builds: the launch says so, and holds what
// the words of the file name.
func (w *walker) defined(name, p, dir string, d definer, depth int) {
	if !within(p, w.root) {
		return
	}
	// It looks for the file by this name, there or not.
	w.looked.add(p, dir)
	ext := filepath.Ext(p)
	lock := ext == ".lock" || ext == ".locked"
	data := w.read(p)
	if data == nil {
		// One of the names it looks for that is not there: named as a
		// file it reads, which holds no missing file (a mount point for
		// each name a tool might look for would be an empty file in the
		// user's repository while the box runs).
		w.files.add(p, dir)
		return
	}
	if !d.config && !lock {
		w.unsure([]string{dir}, name+" runs the tasks or build "+w.rel(p)+" defines, whose commands are not followed; the words of it that name paths are held", codePaths(string(data))...)
	}
	switch {
	case d.code == "python3" && ext == ".py":
		w.exec([]word{lit("python3"), lit(p)}, []string{dir}, depth+1)
	case d.code == "python3" && d.config:
		w.files.add(p, dir)
		w.pyConfig(name, p, data, depth)
	case d.code == "node" && slices.Contains([]string{".js", ".mjs", ".cjs", ".ts", ".mts", ".cts"}, ext),
		d.code == "ruby" && !lock:
		w.files.add(p, dir)
		w.progs.add(p, dir)
		w.climbFrom(d.code, p, filepath.Dir(p), depth)
	case d.code == "node":
		// A JSON or YAML config names its plugins, presets and the
		// configs it extends: local files by path, packages by name.
		w.files.add(p, dir)
		w.configModules(p, data, depth)
	default:
		w.files.add(p, dir)
	}
}

// pyPlugins finds the values of the keys a Python tool's config names
// plugin modules with (mypy's and coverage's plugins, pylint's
// load-plugins), a list in brackets or the rest of the line.
var pyPlugins = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)^[ \t]*(?:plugins|load-plugins|load_plugins)[ \t]*[=:][ \t]*(\[[^\]]*\]|[^\n]*)`)
})

// pyConfig follows what a Python tool's config at p (text data) makes
// it load: a .py file it names (mkdocs' hooks, a mypy plugin given by
// path), run as python runs a script, relative to the config's
// directory; and a plugin module it names, where Python finds it from
// there (a.b is a/b.py or a/b/__init__.py). pylint's init-hook is code
// in the config itself, which is not followed: the launch says so.
func (w *walker) pyConfig(name, p string, data []byte, depth int) {
	dir := filepath.Dir(p)
	for _, s := range codePaths(string(data)) {
		if strings.HasSuffix(s, ".py") {
			w.exec([]word{lit("python3"), lit(from(dir, s))}, []string{dir}, depth+1)
		}
	}
	for _, m := range pyPlugins().FindAllStringSubmatch(string(data), -1) {
		for _, mod := range strings.FieldsFunc(m[1], func(r rune) bool { return strings.ContainsRune(" \t,[]\"'\n", r) }) {
			if strings.HasSuffix(mod, ".py") || !pyDotted(mod) {
				continue
			}
			rel := filepath.FromSlash(strings.ReplaceAll(mod, ".", "/"))
			for _, f := range []string{rel + ".py", filepath.Join(rel, "__init__.py")} {
				w.looked.add(from(dir, f), dir)
				w.files.add(from(dir, f), dir)
				if w.read(from(dir, f)) != nil {
					w.exec([]word{lit("python3"), lit(from(dir, f))}, []string{dir}, depth+1)
				}
			}
		}
	}
	if strings.Contains(string(data), "init-hook") || strings.Contains(string(data), "init_hook") {
		w.unsure([]string{dir}, name+" runs the init-hook "+w.rel(p)+" holds, Python code that is not followed")
	}
}

// pyDotted reports whether s is a dotted Python module name.
func pyDotted(s string) bool {
	for _, part := range strings.Split(s, ".") {
		if !protect.PyName(part) {
			return false
		}
	}
	return s != ""
}

// configModules holds what a node tool's JSON or YAML config at p
// (text data) names that the tool loads as code: a path (./plugin.js,
// ../shared/eslintrc.js), followed as a script is, and a package
// installed in a node_modules node finds from p, held whole.
func (w *walker) configModules(p string, data []byte, depth int) {
	var doc any
	var names []string
	if json.Unmarshal(data, &doc) == nil {
		names = jsonStrings(doc, nil)
	} else {
		names = codePaths(string(data))
	}
	dir := filepath.Dir(p)
	for _, s := range names {
		switch {
		case strings.HasPrefix(s, "./") || strings.HasPrefix(s, "../"):
			w.preload("node", s, []string{dir}, depth)
		default:
			for _, pkg := range configPackages(s) {
				if w.installed(dir, pkg) {
					w.nodePackage(dir, pkg)
				}
			}
		}
	}
}

// configPackages are the packages a config's word may name: itself, and
// the names ESLint and Babel make of a short one (react for
// eslint-plugin-react, @scope for @scope/eslint-plugin).
func configPackages(s string) []string {
	if scope, ok := strings.CutPrefix(s, "@"); ok && scope != "" && npmName(s+"/x") != "" && !strings.Contains(scope, "/") {
		return []string{s + "/eslint-plugin", s + "/eslint-config"}
	}
	name := npmName(s)
	if name == "" {
		return nil
	}
	out := []string{name}
	if !strings.Contains(name, "/") {
		for _, pre := range []string{"eslint-plugin-", "eslint-config-", "babel-plugin-", "babel-preset-", "@babel/plugin-", "@babel/preset-"} {
			out = append(out, pre+name)
		}
	}
	return out
}

// installed reports whether a node_modules node looks in from dir has
// a package named pkg (a word of a config that is one, not a rule's
// name).
func (w *walker) installed(dir, pkg string) bool {
	if w.list == nil {
		return false
	}
	for d := dir; within(d, w.root); d = filepath.Dir(d) {
		if w.list(filepath.Join(d, "node_modules", pkg)) != nil {
			return true
		}
		if d == w.root {
			break
		}
	}
	return false
}

// maxConfigStrings bounds the strings a config is read for.
const maxConfigStrings = 4096

// jsonStrings appends the strings of a JSON value (keys too: ESLint
// names plugins as keys), at most maxConfigStrings.
func jsonStrings(v any, out []string) []string {
	if len(out) >= maxConfigStrings {
		return out
	}
	switch v := v.(type) {
	case string:
		out = append(out, v)
	case []any:
		for _, x := range v {
			out = jsonStrings(x, out)
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			out = append(out, k)
			out = jsonStrings(v[k], out)
		}
	}
	return out
}

// pyInstall reads a Python package manager's call that builds and
// installs a project (pip install ., uv sync, poetry install): the
// build runs the project's setup.py and build backend, so its project
// files are held and its setup.py followed. It reports whether the call
// is one.
func (w *walker) pyInstall(name string, rest []word, dirs []string, depth int) bool {
	var sub string
	var words []word
	for i, a := range rest {
		if a.ok && !strings.HasPrefix(a.s, "-") {
			sub, words = a.s, rest[i+1:]
			if name == "uv" && sub == "pip" && i+1 < len(rest) && rest[i+1].ok {
				sub, words = "pip "+rest[i+1].s, rest[i+2:]
			}
			break
		}
	}
	switch {
	case sub == "install" && (name == "pip" || name == "pip3"), sub == "pip install" && name == "uv":
		// The projects its words name by path, and the requirement
		// files it reads (which name more: -e ./x, an index).
		for i := 0; i < len(words); i++ {
			a := words[i]
			if !a.ok {
				continue
			}
			if slices.Contains([]string{"-r", "--requirement", "-c", "--constraint"}, a.s) && i+1 < len(words) {
				i++
				if r := words[i]; !r.ok {
					w.unknown(r, dirs)
					continue
				}
				for _, d := range dirs {
					w.requirements(words[i].s, d, depth, 0)
				}
				continue
			}
			if a.s == "-e" || a.s == "--editable" || strings.HasPrefix(a.s, "-") {
				continue
			}
			if p, ok := localProject(a.s); ok {
				w.pyBuild(p, dirs, depth)
			}
		}
		return true
	case name == "uv" && slices.Contains([]string{"sync", "lock"}, sub),
		name == "poetry" && slices.Contains([]string{"install", "sync", "lock", "build"}, sub),
		name == "pdm" && slices.Contains([]string{"install", "sync", "lock", "build"}, sub),
		name == "pipenv" && slices.Contains([]string{"install", "sync", "lock"}, sub),
		name == "hatch" && slices.Contains([]string{"build", "env"}, sub):
		w.pyBuild(".", dirs, depth)
		return true
	}
	return false
}

// localProject is the directory a pip requirement names when it is a
// path (., ./x, ".[dev]" with its extras cut), not a package's name.
func localProject(s string) (string, bool) {
	if i := strings.IndexByte(s, '['); i > 0 && strings.HasSuffix(s, "]") {
		s = s[:i]
	}
	if s == "." || s == ".." || strings.HasPrefix(s, "./") || strings.HasPrefix(s, "../") || strings.HasPrefix(s, "/") {
		return s, true
	}
	return "", false
}

// maxRequirements bounds how deep requirement files that include others
// (-r) are read.
const maxRequirements = 4

// requirements follows the requirement file f (from dir) pip reads: the
// projects it names by path (-e ., ./lib) are built, and the files it
// includes read in turn.
func (w *walker) requirements(f, dir string, depth, nest int) {
	f = from(dir, f)
	data := w.read(f)
	if data == nil || !within(f, w.root) || nest > maxRequirements {
		return
	}
	w.files.add(f, dir)
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		opt, val := fields[0], ""
		if len(fields) > 1 {
			val = fields[1]
		}
		if o, v, ok := strings.Cut(opt, "="); ok && strings.HasPrefix(o, "--") {
			opt, val = o, v
		}
		switch opt {
		case "-r", "--requirement", "-c", "--constraint":
			w.requirements(val, filepath.Dir(f), depth, nest+1)
		case "-e", "--editable":
			if p, ok := localProject(val); ok {
				w.pyBuild(p, []string{filepath.Dir(f)}, depth)
			}
		default:
			if p, ok := localProject(opt); ok {
				w.pyBuild(p, []string{filepath.Dir(f)}, depth)
			}
		}
	}
}

// pyBuild holds the Python project at path (from dirs) that a build
// runs: its project files, and its setup.py followed as python runs it.
func (w *walker) pyBuild(path string, dirs []string, depth int) {
	for _, d := range dirs {
		p := from(d, path)
		if !within(p, w.root) {
			continue
		}
		// pip builds the directory it is given; a launcher, the project
		// it finds from there.
		pd := p
		if w.read(filepath.Join(p, "setup.py")) == nil && w.read(filepath.Join(p, "pyproject.toml")) == nil {
			pd = projectDir(w, p, "pyproject.toml")
		}
		w.pyProjectAt(pd)
		if setup := filepath.Join(pd, "setup.py"); w.read(setup) != nil {
			w.exec([]word{lit("python3"), lit(setup)}, []string{pd}, depth+1)
		}
	}
}
