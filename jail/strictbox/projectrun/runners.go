package projectrun

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// runner is how a program that runs a command line given in its words
// is called (watch CMD, script -c CMD, nix-shell --run CMD): its options
// whose value is the next word, those whose value is a command line it
// runs, and what its other words are (see [walker.lineRunner]).
type runner struct {
	values, lines []string
	// exec are its flags that make its words a command, not a line
	// (watch -x); shell those that make them a line (entr -s).
	exec, shell []string
	// words is what the words after its options are: "line" (one
	// command line, joined), "lines" (each a command line), "exec" (a
	// command), "data" (none it runs), "parallel" (a command line up to
	// :::, else each word after it).
	words string
	// files are the files it reads for what it runs when no word names
	// them (nix-shell's shell.nix).
	files []string
}

// lineRunners are the programs that run command lines their words give.
var lineRunners = sync.OnceValue(func() map[string]*runner {
	return map[string]*runner{
		"watch":  {values: []string{"-n", "--interval", "-q", "--equexit"}, exec: []string{"-x", "--exec"}, words: "line"},
		"script": {values: []string{"-E", "--echo", "-I", "--log-in", "-O", "--log-out", "-B", "--log-io", "-T", "--log-timing", "-m", "--logging-format", "-o", "--output-limit"}, lines: []string{"-c", "--command"}, words: "data"},
		"entr":   {shell: []string{"-s"}, words: "exec"},
		"hyperfine": {values: []string{"-w", "--warmup", "-m", "--min-runs", "-M", "--max-runs", "-r", "--runs", "-S", "--shell", "-u", "--time-unit", "-n", "--command-name", "--export-asciidoc", "--export-csv", "--export-json", "--export-markdown", "--export-orgmode", "--style", "--sort", "--output", "--input", "-D", "--parameter-step-size"},
			lines: []string{"-s", "--setup", "-p", "--prepare", "-c", "--cleanup", "--conclude"}, words: "lines"},
		"nix-shell": {values: []string{"-I", "--include", "-A", "--attr", "-j", "--max-jobs", "--cores", "-o", "--out-link", "--arg", "--argstr", "--option"},
			lines: []string{"--run", "--command"}, words: "data", files: []string{"shell.nix", "default.nix"}},
		"parallel": {values: []string{"-j", "--jobs", "-P", "--max-procs", "-S", "--sshlogin", "--joblog", "-a", "--arg-file", "--tmpdir", "--results", "--res", "-I", "--delay", "--timeout", "--retries", "-N", "-n", "--max-args", "-L", "--max-lines", "--colsep", "-C", "-d", "--delimiter", "-E", "--workdir", "--wd", "--env", "--tag-string", "--tagstring"}, words: "parallel"},
		"sem":      {values: []string{"-j", "--jobs", "--id", "--semaphore-timeout", "--st"}, words: "line"},
	}
})

// twoValues are the options of a runner whose value is the next two
// words (nix-shell --arg NAME EXPR).
var twoValues = []string{"--arg", "--argstr", "--option"}

// lineRunner reads a call of a program of lineRunners (name; rest its
// words after its name), run in dirs.
func (w *walker) lineRunner(name string, rest []word, dirs []string, depth int) {
	r := lineRunners()[name]
	words := r.words
	line := func(a word, what string) {
		if !a.ok {
			w.unsure(dirs, name+" "+what+" runs a command line it does not set")
			return
		}
		w.shell(a.s, dirs, depth+1)
	}
	i := 0
	// named is set once a word names the file it reads (nix-shell
	// FILE, or -p PKGS for none); data are its words that are data,
	// among which its options go on (nix-shell dev.nix --run CMD).
	named := false
	var data []word
	for ; i < len(rest); i++ {
		a := rest[i]
		if !a.ok || !strings.HasPrefix(a.s, "-") || a.s == "-" {
			if words == "data" {
				named = true
				data = append(data, a)
				continue
			}
			break
		}
		if a.s == "--" {
			i++
			break
		}
		opt, val, eq := strings.Cut(a.s, "=")
		if len(a.s) > 2 && a.s[1] != '-' && !eq && slices.Contains(r.lines, "-"+a.s[len(a.s)-1:]) {
			// The option last of a group of one-letter ones (-qc).
			opt = "-" + a.s[len(a.s)-1:]
		}
		switch {
		case slices.Contains(r.lines, opt) && (eq || i+1 < len(rest)):
			v := lit(val)
			if !eq {
				i++
				v = rest[i]
			}
			line(v, opt)
			named = true
		case slices.Contains(r.values, opt) && !eq && i+1 < len(rest):
			if slices.Contains(twoValues, opt) {
				i++
			}
			i++
			if name == "parallel" && (opt == "-a" || opt == "--arg-file") {
				w.arg(rest[i], dirs)
			}
		case opt == "-p" || opt == "--packages":
			named = named || name == "nix-shell"
		case slices.Contains(r.exec, a.s):
			words = "exec"
		case slices.Contains(r.shell, a.s):
			words = "line"
		}
	}
	rest = rest[min(i, len(rest)):]
	switch words {
	case "line":
		var b []string
		for _, a := range rest {
			if !a.ok {
				w.unsure(dirs, name+" runs a command line it does not set")
				return
			}
			b = append(b, a.s)
		}
		if len(b) > 0 {
			w.shell(strings.Join(b, " "), dirs, depth+1)
		}
	case "lines":
		for _, a := range rest {
			line(a, "")
		}
	case "exec":
		w.exec(rest, dirs, depth+1)
	case "parallel":
		j := slices.IndexFunc(rest, func(a word) bool { return a.ok && strings.HasPrefix(a.s, ":::") })
		if j < 0 {
			j = len(rest)
		}
		cmd, args := rest[:j], rest[j:]
		if len(cmd) > 0 {
			w.lineRunner("sem", cmd, dirs, depth)
			for _, a := range args {
				if !a.ok || !strings.HasPrefix(a.s, ":::") {
					w.quietArg(a, dirs)
				}
			}
			return
		}
		for _, a := range args {
			switch {
			case a.ok && strings.HasPrefix(a.s, ":::"):
			case a.ok:
				line(a, ":::")
			default:
				w.unsure(dirs, name+" runs a command line it does not set")
			}
		}
	default:
		for _, a := range append(data, rest...) {
			w.quietArg(a, dirs)
		}
		if !named {
			for _, f := range r.files {
				for _, d := range dirs {
					w.files.add(f, d)
				}
			}
		}
	}
}

// direnvExec reads direnv exec DIR CMD...: the .envrc (or .env) direnv
// finds from DIR upwards, which bash runs first, and the command, run in
// DIR.
func (w *walker) direnvExec(dir word, cmd []word, dirs []string, depth int) {
	dirs = w.cd(dir, dirs)
	for _, d := range dirs {
		for dd := d; within(dd, w.root); dd = filepath.Dir(dd) {
			found := false
			for _, f := range []string{".envrc", ".env"} {
				p := filepath.Join(dd, f)
				w.files.add(p, dd)
				if f == ".envrc" {
					w.progs.add(p, dd)
				}
				if !found && w.read(p) != nil {
					found = true
					if f == ".envrc" {
						w.script(p, dd, depth, true)
					}
				}
			}
			if found || dd == w.root {
				break
			}
		}
	}
	w.exec(cmd, dirs, depth+1)
}

// gitKeys are the keys of git's configuration whose value git runs (a
// command line: a pager, an editor, a driver, a helper, a hook), a
// directory it runs hooks or copies them from, or a file it reads for
// more of its configuration; a * stands for a subsection.
var gitKeys = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"core.pager": "line", "core.editor": "line", "sequence.editor": "line", "core.sshcommand": "line",
		"core.fsmonitor": "line", "core.askpass": "line", "core.gitproxy": "line", "core.alternaterefscommand": "line",
		"diff.external": "line", "gpg.program": "line", "gpg.*.program": "line", "gpg.ssh.defaultkeycommand": "line",
		"interactive.difffilter": "line", "credential.helper": "line", "credential.*.helper": "line",
		"pager.*": "line", "diff.*.textconv": "line", "diff.*.command": "line",
		"filter.*.clean": "line", "filter.*.smudge": "line", "filter.*.process": "line", "merge.*.driver": "line",
		"mergetool.*.cmd": "line", "difftool.*.cmd": "line", "browser.*.cmd": "line", "web.browser": "line",
		"remote.*.receivepack": "line", "remote.*.uploadpack": "line",
		"sendemail.tocmd": "line", "sendemail.cccmd": "line", "sendemail.sendmailcmd": "line",
		"trailer.*.command": "line", "trailer.*.cmd": "line", "hook.*.command": "line", "uploadpack.packobjectshook": "line",
		"alias.*":        "alias",
		"core.hookspath": "dir", "init.templatedir": "dir",
		"include.path": "file", "includeif.*.path": "file",
	}
})

// gitKey is what git does with the value of key (see gitKeys), or "".
func gitKey(key string) string {
	first, rest, ok := strings.Cut(key, ".")
	if !ok {
		return ""
	}
	first = strings.ToLower(first)
	last := rest
	if i := strings.LastIndex(rest, "."); i >= 0 {
		last = rest[i+1:]
		if k := gitKeys()[first+".*."+strings.ToLower(last)]; k != "" {
			return k
		}
	}
	if k := gitKeys()[first+"."+strings.ToLower(rest)]; k != "" {
		return k
	}
	if !strings.Contains(rest, ".") {
		return gitKeys()[first+".*"]
	}
	return ""
}

// gitValues are git's own options whose value is the next word.
var gitValues = []string{"--git-dir", "--work-tree", "--namespace", "--exec-path", "--super-prefix", "--list-cmds", "--attr-source"}

// git reads git's words: -C moves where it runs, and the configuration
// -c and --config-env give it may name what it runs (see gitKeys); the
// rest are data.
func (w *walker) git(rest []word, dirs []string, depth int) {
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if !a.ok || !strings.HasPrefix(a.s, "-") {
			if a.ok && a.s == "config" {
				w.gitSet(rest[i+1:], dirs, depth)
			}
			for _, x := range rest[i:] {
				w.quietArg(x, dirs)
			}
			return
		}
		opt, val, eq := strings.Cut(a.s, "=")
		switch {
		case a.s == "-C" && i+1 < len(rest):
			i++
			dirs = w.cd(rest[i], dirs)
		case a.s == "-c" && i+1 < len(rest):
			i++
			w.gitConfig(rest[i], dirs, depth)
		case opt == "--config-env" && (eq || i+1 < len(rest)):
			v := lit(val)
			if !eq {
				i++
				v = rest[i]
			}
			// KEY=ENVVAR: the value is the variable's.
			key, env, _ := strings.Cut(v.s, "=")
			if x, known := w.vars[env]; v.ok && known {
				w.gitConfig(lit(key+"="+x), dirs, depth)
			} else if !v.ok || gitKey(key) != "" {
				w.unsure(dirs, "git --config-env sets configuration from a variable it does not set")
			}
		case opt == "--exec-path" && eq:
			// Where git finds its own commands (git-NAME).
			w.holdDirs("--exec-path", w.cd(lit(val), dirs), dirs)
		case opt == "--git-dir" && (eq || i+1 < len(rest)):
			// Its config and hooks say what git runs.
			v := lit(val)
			if !eq {
				i++
				v = rest[i]
			}
			if !v.ok {
				w.unknown(v, dirs)
			} else {
				w.holdDirs("--git-dir", w.cd(v, dirs), dirs)
			}
		case slices.Contains(gitValues, a.s) && i+1 < len(rest):
			i++
			w.quietArg(rest[i], dirs)
		}
	}
}

// gitSet reads git config [options] KEY VALUE (or git config set KEY
// VALUE): what it sets the git commands after it run, as -c does.
func (w *walker) gitSet(rest []word, dirs []string, depth int) {
	var kv []word
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		switch {
		case a.ok && (a.s == "-f" || a.s == "--file" || a.s == "--blob" || a.s == "--type" || a.s == "--default" || a.s == "--comment" || a.s == "--value") && i+1 < len(rest):
			i++
		case a.ok && strings.HasPrefix(a.s, "-"):
			if a.s == "--get" || a.s == "--get-all" || a.s == "--unset" || a.s == "--unset-all" || a.s == "-l" || a.s == "--list" || a.s == "--get-regexp" {
				return
			}
		case a.ok && len(kv) == 0 && (a.s == "set" || a.s == "get" || a.s == "unset" || a.s == "list"):
			if a.s != "set" {
				return
			}
		default:
			kv = append(kv, a)
		}
	}
	if len(kv) < 2 {
		return
	}
	if !kv[0].ok || !kv[1].ok {
		if !kv[0].ok || gitKey(kv[0].s) != "" {
			w.unsure(dirs, "git config sets configuration it does not set")
		}
		return
	}
	w.gitConfig(lit(kv[0].s+"="+kv[1].s), dirs, depth)
}

// gitConfig reads one KEY=VALUE git -c is given, run in dirs: git runs
// its commands and hooks from the top of the work tree, taken to be the
// project's own directory, or from where it runs.
func (w *walker) gitConfig(kv word, dirs []string, depth int) {
	if !kv.ok {
		w.unsure(dirs, "git -c sets configuration it does not set")
		return
	}
	key, val, _ := strings.Cut(kv.s, "=")
	at := union(dirs, []string{w.root})
	switch gitKey(key) {
	case "alias":
		if cmd, ok := strings.CutPrefix(val, "!"); ok {
			w.shell(cmd, at, depth+1)
			return
		}
		// An alias of git's own words, which may set more.
		if words, ok := w.splitWords(val); ok && depth < maxDepth {
			w.git(words, dirs, depth+1)
		}
	case "line":
		w.shell(strings.TrimPrefix(val, "!"), at, depth+1)
	case "dir":
		w.holdDirs(strings.ToLower(key), w.cd(lit(val), at), at)
	case "file":
		for _, d := range at {
			p := val
			if !filepath.IsAbs(p) {
				p = filepath.Join(d, p)
			}
			w.files.add(p, d)
			w.gitFile(filepath.Clean(p), depth)
		}
	default:
		w.envVar(key, lit(val), dirs, depth)
	}
}

// holdDirs holds each of ds (directories git runs programs from, as
// the configuration key says) whole, as far as they lie in the project;
// the project's own directory is not held whole, and the launch says so.
func (w *walker) holdDirs(key string, ds, dirs []string) {
	for _, d := range ds {
		if d == w.root {
			// Its hooks, by name, at least.
			var hooks []string
			if key == "core.hookspath" || key == "init.templatedir" {
				hooks = GitHooks
			}
			w.unsure(dirs, "git runs programs from the directory "+key+" names, here the project's own directory", hooks...)
		} else if within(d, w.root) {
			w.dirs.add(d, d)
		}
	}
}

// GitHooks are the names of the hooks git runs.
var GitHooks = []string{"applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit", "pre-merge-commit", "prepare-commit-msg", "commit-msg", "post-commit",
	"pre-rebase", "post-checkout", "post-merge", "pre-push", "pre-receive", "update", "proc-receive", "post-receive", "post-update", "reference-transaction",
	"push-to-checkout", "pre-auto-gc", "post-rewrite", "sendemail-validate", "fsmonitor-watchman", "p4-changelist", "p4-prepare-changelist", "p4-post-changelist", "p4-pre-submit", "post-index-change"}

// pytestConfig are the files pytest reads its configuration (addopts,
// the plugins it loads, pythonpath) from, and its conftest.py, which
// it runs: in the directory it runs in and each above it.
var pytestConfig = []string{"pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg", "conftest.py"}

// pytestValues are pytest's options whose value is the next word.
var pytestValues = []string{"-k", "-m", "--deselect", "--ignore", "--ignore-glob", "--junitxml", "--junit-xml", "--basetemp", "--rootdir", "--confcutdir", "-o", "--override-ini",
	"--tb", "--log-level", "--log-file", "--durations", "--maxfail", "--import-mode", "-W", "--pythonwarnings", "--cov", "--cov-report", "-n", "--numprocesses", "--capture", "--color"}

// pytestPlugin are the plugins -p names in a configuration's text.
var pytestPlugin = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?:^|[\s"'\[,=])-p\s*["']?([A-Za-z_][\w.]*)`) })

// pytestPaths are the directories a configuration's pythonpath puts on
// the module path.
var pytestPaths = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^\s*pythonpath\s*=\s*(.*)$`) })

// pytest reads pytest's words (run in dirs): the configuration and the
// conftest.py it finds from where it runs upwards, the plugins -p (or
// the configuration's addopts) names, and what it collects tests from:
// a conftest.py of each directory it collects from runs too, so a
// directory it collects from is held whole (the project's own, which
// cannot be, is said).
func (w *walker) pytest(rest []word, dirs []string, depth int) {
	if w.pytestRead == nil {
		w.pytestRead = map[string]bool{}
	}
	// once reports whether key is new to this walker's pytest calls.
	once := func(key string) bool {
		if w.pytestRead[key] {
			return false
		}
		w.pytestRead[key] = true
		return true
	}
	plugin := func(name string, at []string) {
		if name == "" || strings.HasPrefix(name, "no:") || !once("-p "+name+" in "+strings.Join(at, ":")) {
			return
		}
		w.module("python", lit(name), nil, at)
		rel := filepath.FromSlash(strings.ReplaceAll(name, ".", "/"))
		for _, d := range at {
			w.files.add(filepath.Join(rel, "__init__.py"), d)
		}
	}
	paths := 0
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if !a.ok {
			w.quiet(a, dirs)
			continue
		}
		opt, _, eq := strings.Cut(a.s, "=")
		switch {
		case a.s == "-p" && i+1 < len(rest):
			i++
			if rest[i].ok {
				plugin(rest[i].s, dirs)
			} else {
				w.unknown(rest[i], dirs)
			}
		case strings.HasPrefix(a.s, "-p") && !strings.HasPrefix(a.s, "--"):
			plugin(a.s[2:], dirs)
		case (a.s == "-c" || a.s == "--config-file") && i+1 < len(rest):
			i++
			w.arg(rest[i], dirs)
		case slices.Contains(pytestValues, opt) && !eq && i+1 < len(rest):
			i++
		case strings.HasPrefix(a.s, "-"):
		default:
			paths++
			p, _, _ := strings.Cut(a.s, "::")
			for _, d := range dirs {
				t := filepath.Clean(filepath.Join(d, p))
				if filepath.IsAbs(p) {
					t = filepath.Clean(p)
				}
				w.files.add(t, d)
				if strings.HasSuffix(t, ".py") {
					t = filepath.Dir(t)
				}
				w.collects(t)
				// The conftest.py of each directory above it, too.
				for dd := filepath.Dir(t); within(dd, w.root) && dd != w.root && dd != d; dd = filepath.Dir(dd) {
					c := filepath.Join(dd, "conftest.py")
					w.files.add(c, dd)
					w.progs.add(c, dd)
					if w.read(c) != nil {
						w.climbFrom("python", c, dd, depth)
					}
				}
			}
		}
	}
	for _, d := range dirs {
		if paths == 0 {
			w.collects(d)
		}
		for dd := d; within(dd, w.root) && once(dd); dd = filepath.Dir(dd) {
			for _, f := range pytestConfig {
				p := filepath.Join(dd, f)
				w.files.add(p, dd)
				w.looked.add(p, dd)
				data := w.read(p)
				if data == nil {
					continue
				}
				if f == "conftest.py" {
					w.progs.add(p, dd)
					w.climbFrom("python", p, dd, depth)
					continue
				}
				for _, m := range pytestPlugin().FindAllStringSubmatch(string(data), -1) {
					plugin(m[1], []string{dd})
				}
				for _, m := range pytestPaths().FindAllStringSubmatch(string(data), -1) {
					for _, x := range strings.FieldsFunc(m[1], func(r rune) bool { return r == ' ' || r == ',' || r == '"' || r == '\'' || r == '[' || r == ']' }) {
						w.loadsFrom("python", w.cd(lit(x), []string{dd}))
					}
				}
			}
			if dd == w.root {
				break
			}
		}
	}
}

// collects holds the directory pytest collects tests from (and runs
// each conftest.py of) whole; the project's own directory cannot be,
// and the launch says so.
func (w *walker) collects(d string) {
	switch {
	case d == w.root:
		w.unsure([]string{w.root}, "pytest collects tests, and runs the conftest.py of each directory it collects them from, under the project's own directory", "conftest.py")
		for _, t := range []string{"tests", "test"} {
			w.dirs.add(filepath.Join(w.root, t), w.root)
		}
	case within(d, w.root):
		w.dirs.add(d, d)
	}
}

// gitFile reads a git configuration file another includes (at p) for
// what its keys name, as -c's are read; a path it includes is relative
// to it.
func (w *walker) gitFile(p string, depth int) {
	if w.gitFiles[p] || depth > maxDepth {
		return
	}
	if w.gitFiles == nil {
		w.gitFiles = map[string]bool{}
	}
	w.gitFiles[p] = true
	data := w.read(p)
	if data == nil {
		return
	}
	section := ""
	for line := range strings.SplitSeq(string(data), "\n") {
		l := strings.TrimSpace(line)
		if strings.HasPrefix(l, "[") {
			end := strings.IndexByte(l, ']')
			if end < 0 {
				continue
			}
			name, sub, ok := strings.Cut(l[1:end], " ")
			section = name
			if ok {
				section += "." + strings.Trim(strings.TrimSpace(sub), `"`)
			}
			l = strings.TrimSpace(l[end+1:])
		}
		if l == "" || l[0] == '#' || l[0] == ';' || section == "" {
			continue
		}
		k, v, _ := strings.Cut(l, "=")
		v = strings.TrimSpace(v)
		if uq := strings.Trim(v, `"`); len(uq) == len(v)-2 {
			v = uq
		}
		w.gitConfig(lit(section+"."+strings.TrimSpace(k)+"="+v), []string{filepath.Dir(p)}, depth+1)
	}
}

// gitEnv reads a variable of the environment that gives git its
// configuration (GIT_CONFIG_KEY_n with GIT_CONFIG_VALUE_n, or
// GIT_CONFIG_PARAMETERS), as -c's are read, and reports whether name is
// one.
func (w *walker) gitEnv(name string, v word, dirs []string, depth int) bool {
	if name == "GIT_CONFIG_PARAMETERS" {
		words, ok := w.splitWords(v.s)
		if !v.ok || !ok {
			w.unsure(dirs, "GIT_CONFIG_PARAMETERS gives git configuration it does not set")
			return true
		}
		for _, x := range words {
			w.gitConfig(x, dirs, depth)
		}
		return true
	}
	i := 0
	n, ok := strings.CutPrefix(name, "GIT_CONFIG_KEY_")
	if !ok {
		if n, ok = strings.CutPrefix(name, "GIT_CONFIG_VALUE_"); !ok {
			return false
		}
		i = 1
	}
	if !v.ok {
		w.unsure(dirs, name+" gives git configuration it does not set")
		return true
	}
	if w.gitVars == nil {
		w.gitVars = map[string][2]*string{}
	}
	kv := w.gitVars[n]
	kv[i] = &v.s
	w.gitVars[n] = kv
	if kv[0] != nil && kv[1] != nil {
		w.gitConfig(lit(*kv[0]+"="+*kv[1]), dirs, depth)
	}
	return true
}
