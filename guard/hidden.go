package guard

// Shell hidden in programs that are not shells: git runs aliases that
// start with "!", its pager, editor and ssh command through sh -c; sed's
// e command and s///e flag run a command line; vim, less and emacs run
// shell commands given on their command line; bash runs PROMPT_COMMAND
// and expands its prompts. Each of them is handed a string that a shell
// runs, so the string is checked as a script, as sh -c's operand is.
// Only what is executed is checked: git log --grep=kill, sed
// 's/kill/stop/' and vim file run nothing of the kind.

import (
	"maps"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// hiddenScript checks text that program hands to a shell, and words the
// refusal so that it names the program and quotes the whole command.
func (c *checker) hiddenScript(st site, program, text string) {
	if c.stopped() || strings.TrimSpace(text) == "" {
		return
	}
	c.script(text, st.off, nil, false, feed{})
	if c.found != nil && !strings.HasPrefix(c.found.why, program) {
		c.found.why = program + " runs a shell command that would be refused: " + c.found.why
		c.found.text = st.text
	}
}

// shellVarText returns the shell text that a program runs from the
// environment variable name set to value, and whether it runs any. The
// prompts are expanded, not run: their command substitutions run.
func shellVarText(name, value string) (string, bool) {
	switch name {
	case "PROMPT_COMMAND", "GIT_PAGER", "PAGER", "MANPAGER", "SYSTEMD_PAGER", "GIT_EDITOR", "EDITOR", "VISUAL",
		"GIT_SEQUENCE_EDITOR", "GIT_SSH_COMMAND", "GIT_SSH", "GIT_ASKPASS", "SSH_ASKPASS", "SUDO_ASKPASS",
		"GIT_EXTERNAL_DIFF", "GIT_PROXY_COMMAND", "FCEDIT", "BROWSER", "LESSCLOSE":
		return value, true
	case "LESSOPEN": // "|cmd %s" and "||cmd %s" pipe through cmd
		return strings.TrimLeft(value, "|-"), true
	case "PS0", "PS1", "PS2", "PS4":
		return ": " + value, true
	case "GIT_CONFIG_PARAMETERS", "BASH_ENV", "ENV": // read by shellVar
		return "", true
	}
	if strings.HasPrefix(name, "GIT_CONFIG_VALUE_") {
		return strings.TrimPrefix(value, "!"), true
	}
	return "", false
}

// shellVar checks an assignment to a variable whose value some program
// runs as a shell command (PROMPT_COMMAND='…' bash -i, GIT_PAGER=… git
// log, export EDITOR=…). The assignment is checked where it is made: the
// program that reads it may come later or be started by another.
func (c *checker) shellVar(st site, name string, value arg) {
	switch name {
	case "GIT_CONFIG_PARAMETERS":
		// 'key'='value' 'key=value' …, quoted as the shell quotes, as
		// git -c passes them on.
		for _, w := range c.shellWords(value.text) {
			key, val, _ := strings.Cut(w, "=")
			c.gitConfig(st, key, val, 0)
		}
	case "BASH_ENV", "ENV": // a file bash or sh sources first
		if value.known {
			for _, t := range c.written(value.text) {
				c.hiddenScript(st, name, t)
			}
		}
	default:
		if t, ok := shellVarText(name, value.text); ok {
			c.hiddenScript(st, name, t)
		}
	}
}

// shellWords splits text into words as the shell would, quotes removed.
func (c *checker) shellWords(text string) []string {
	r := c.parse(": " + text)
	if r.err != nil || len(r.file.Stmts) == 0 {
		return strings.Fields(dequote(text))
	}
	call, ok := r.file.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok {
		return nil
	}
	fr := &frame{src: ": " + text, base: -1}
	var out []string
	for _, w := range call.Args[1:] {
		out = append(out, c.word(fr, w).text)
	}
	return out
}

// envAssigns checks the NAME=value words that env and sudo put in the
// environment of the command they run.
func (c *checker) envAssigns(st site, args []arg) {
	for _, a := range args {
		if name, val, ok := strings.Cut(a.text, "="); ok && a.known && isAssignWord(a.text) {
			c.shellVar(st, name, knownArg(val))
		}
	}
}

// gitGlobal reads git's options before its subcommand.
var gitGlobal = optSpec{vals: "cC", long: []string{"config-env=", "exec-path=", "git-dir=", "work-tree=", "namespace=",
	"super-prefix=", "list-cmds=", "attr-source=", "paginate", "no-pager", "bare", "no-replace-objects", "literal-pathspecs",
	"glob-pathspecs", "noglob-pathspecs", "icase-pathspecs", "no-optional-locks", "no-advice", "html-path", "man-path", "info-path", "version", "help"}}

// git checks what git runs through a shell: configuration given with -c
// (aliases that start with "!", core.pager, core.sshCommand, diff and
// filter drivers and every other key that names a command), values that
// git config stores for later, and the subcommands that run a command
// line (rebase --exec, submodule foreach, bisect run, filter-branch's
// filters, difftool --extcmd, grep --open-files-in-pager).
func (c *checker) git(st site, args []arg, depth int) {
	if depth > 4 || !c.step(st.text, len(args)) {
		return
	}
	if depth == 0 && len(c.files) > 0 {
		c.gitConfigFiles(st)
	}
	if !gitMayRun(args) {
		return
	}
	opts, ops := parseOpts(args, gitGlobal)
	for _, o := range opts {
		switch {
		case o.is("c"):
			key, val, _ := strings.Cut(o.val.text, "=")
			c.gitConfig(st, key, val, depth)
		case o.is("config-env"):
			// --config-env=key=VAR takes the value from $VAR.
			key, env, _ := strings.Cut(o.val.text, "=")
			if v := c.vars[env]; v != nil {
				for _, val := range v.values {
					c.gitConfig(st, key, val, depth)
				}
			}
		}
	}
	if len(ops) == 0 || !ops[0].known {
		return
	}
	sub, rest := ops[0].text, ops[1:]
	switch sub {
	case "config":
		sopts, sops := parseOpts(rest, optSpec{vals: "f", permute: true, long: []string{"file=", "blob=", "type=", "default=",
			"comment=", "value=", "url=", "global", "system", "local", "worktree", "add", "replace-all", "append", "all",
			"includes", "no-includes", "show-origin", "show-scope", "null", "name-only", "bool", "int", "bool-or-int",
			"path", "expiry-date", "fixed-value", "get", "get-all", "get-regexp", "get-urlmatch", "unset", "unset-all",
			"list", "edit", "rename-section", "remove-section", "get-color", "get-colorbool"}})
		if hasOpt(sopts, "get", "get-all", "get-regexp", "get-urlmatch", "unset", "unset-all", "list", "edit",
			"rename-section", "remove-section", "get-color", "get-colorbool") {
			return
		}
		if len(sops) > 0 && sops[0].known && sops[0].text == "set" {
			sops = sops[1:]
		}
		if len(sops) >= 2 && sops[0].known {
			c.gitConfig(st, sops[0].text, sops[1].text, depth)
		}
	case "rebase":
		o, _ := parseOpts(rest, optSpec{vals: "xsXCo", permute: true, long: []string{"exec=", "onto=", "strategy=",
			"strategy-option=", "gpg-sign=", "rebase-merges=", "empty=", "whitespace=", "committer-date-is-author-date"}})
		for _, v := range optVals(o, "x", "exec") {
			c.hiddenScript(st, "git rebase --exec", v.text)
		}
	case "submodule":
		for i, a := range rest {
			if a.known && a.text == "foreach" && i+1 < len(rest) {
				_, cmd := parseOpts(rest[i+1:], optSpec{flags: "q", long: []string{"recursive", "quiet"}})
				c.hiddenScript(st, "git submodule foreach", joinTexts(cmd))
				break
			}
		}
	case "bisect":
		if len(rest) > 1 && rest[0].known && rest[0].text == "run" {
			c.examine(st.withIn(feed{}), rest[1:])
		}
	case "filter-branch":
		o, _ := parseOpts(rest, optSpec{vals: "d", permute: true, long: []string{"env-filter=", "tree-filter=", "index-filter=",
			"parent-filter=", "msg-filter=", "commit-filter=", "tag-name-filter=", "subdirectory-filter=", "setup=",
			"original=", "state-branch=", "prune-empty", "force"}})
		for _, o := range o {
			if o.long && o.hasVal && (strings.HasSuffix(o.name, "-filter") && o.name != "subdirectory-filter" || o.name == "setup") {
				c.hiddenScript(st, "git filter-branch --"+o.name, o.val.text)
			}
		}
	case "difftool", "mergetool":
		o, _ := parseOpts(rest, optSpec{vals: "xtX", permute: true, long: []string{"extcmd=", "tool="}})
		for _, v := range optVals(o, "x", "extcmd") {
			c.hiddenScript(st, "git "+sub+" --extcmd", v.text)
		}
	case "grep":
		o, _ := parseOpts(rest, optSpec{vals: "efABCm", opt: "O", permute: true, long: []string{"open-files-in-pager="}})
		for _, v := range optVals(o, "O", "open-files-in-pager") {
			c.hiddenScript(st, "git grep --open-files-in-pager", v.text)
		}
	}
}

// gitMayRun is a quick look for a git command line that git() reads any
// further: one with -c or a subcommand that runs a command line. Most
// calls (git status, git commit -m …) pass it without an allocation.
func gitMayRun(args []arg) bool {
	for _, a := range args {
		switch t := a.text; {
		case !a.known:
			// A word only known at run time is nothing git() can read.
		case strings.HasPrefix(t, "-c"), strings.HasPrefix(t, "--config-env"):
			return true
		case t == "config", t == "rebase", t == "submodule", t == "bisect", t == "filter-branch",
			t == "difftool", t == "mergetool", t == "grep":
			return true
		}
	}
	return false
}

// gitConfigFiles checks the values in git configuration files that the
// input writes (.git/config, ~/.gitconfig, $XDG_CONFIG_HOME/git/config),
// for git reads them whatever its arguments.
func (c *checker) gitConfigFiles(st site) {
	for _, name := range slices.Sorted(maps.Keys(c.files)) { // sorted: the same answer every time
		if !strings.HasSuffix(name, "gitconfig") && !strings.HasSuffix(name, "git/config") {
			continue
		}
		for _, t := range c.files[name].texts {
			for _, line := range strings.Split(t, "\n") {
				if key, val, ok := strings.Cut(line, "="); ok {
					c.gitConfig(st, strings.TrimSpace(key), strings.Trim(strings.TrimSpace(val), `"`), 1)
				}
			}
		}
	}
}

// gitConfig checks one configuration value given to git. An alias that
// starts with "!" is a shell command; any other alias is git arguments.
// Every other value is checked as a command line, "!" dropped: the keys
// whose values git runs (core.pager, core.editor, core.sshCommand,
// core.fsmonitor, pager.*, diff.external, *.textconv, filter.*.clean,
// merge.*.driver, credential.helper, gpg.program, …) are many and grow,
// and a value that is not a command (a name, a colour, a boolean) is
// harmless as one unless it is a kill command.
func (c *checker) gitConfig(st site, key, val string, depth int) {
	k := strings.ToLower(key)
	switch {
	case strings.HasPrefix(k, "alias.") && !strings.HasPrefix(strings.TrimSpace(val), "!"):
		c.git(st, splitArgs(val), depth+1)
	default:
		c.hiddenScript(st, "git "+key, strings.TrimPrefix(strings.TrimSpace(val), "!"))
	}
}

// sedSpec reads sed's options; -i and --in-place take an optional suffix.
var sedSpec = optSpec{vals: "efl", opt: "i", permute: true, long: []string{"expression=", "file=", "line-length=", "in-place",
	"quiet", "silent", "debug", "posix", "regexp-extended", "separate", "sandbox", "unbuffered", "null-data", "zero-terminated",
	"follow-symlinks", "binary", "help", "version"}}

// sed checks the commands that GNU sed's e command and the e flag of s
// run. --sandbox refuses them.
func (c *checker) sed(st site, args []arg) {
	opts, ops := parseOpts(args, sedSpec)
	if hasOpt(opts, "sandbox") {
		return
	}
	// GNU sed joins the -e and -f scripts with newlines: an e command
	// may end one -e and its command line start the next.
	var joined []string
	given := false
	for _, o := range opts {
		switch {
		case o.is("e", "expression"):
			given = true
			joined = append(joined, o.val.text)
		case o.is("f", "file"):
			given = true
			if o.val.known {
				joined = append(joined, c.written(o.val.text)...)
			}
		}
	}
	files := ops
	if !given && len(ops) > 0 {
		joined, files = append(joined, ops[0].text), ops[1:]
	}
	// What e runs of the pattern space: the input's lines, where the
	// input shows them (piped, or a file it writes).
	data := st.in.texts
	for _, f := range files {
		if f.known {
			data = append(data[:len(data):len(data)], c.written(f.text)...)
		}
	}
	scripts := []string{strings.Join(joined, "\n")}
	for _, s := range scripts {
		if c.stopped() {
			return
		}
		runs, ok := sedRuns(s)
		for _, r := range runs {
			// e and s///e run the pattern space, which is the input's
			// line where a bare e or no match leaves it so.
			c.hiddenScript(st, "sed", r)
			for _, t := range data {
				c.hiddenScript(st, "sed", t)
			}
		}
		if !ok && strings.IndexByte(s, 'e') >= 0 {
			if w := coarseKillWord(s); w != "" {
				c.deny(st.text, "sed may run part of a script the guard cannot read as a command, and "+quoteWord(w)+" appears in it as a word")
			}
		}
	}
}

// sedRuns returns the command lines that a sed script runs: the text of
// each e command, and the replacement of each s command with the e flag
// (what it runs is the pattern space after the substitution; the fixed
// part of it is the replacement). ok is false when the script could not
// be read to its end.
func sedRuns(s string) (runs []string, ok bool) {
	i := 0
	toEOL := func() string {
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			j = len(s) - i
		}
		t := s[i : i+j]
		i += j
		return t
	}
	// delimited reads up to the next unescaped delim, with \delim
	// standing for delim and \n for a newline.
	delimited := func(delim byte) (string, bool) {
		var b strings.Builder
		for i < len(s) {
			ch := s[i]
			switch {
			case ch == '\\' && i+1 < len(s):
				switch n := s[i+1]; {
				case n == delim:
					b.WriteByte(n)
				case n == 'n':
					b.WriteByte('\n')
				default:
					b.WriteByte(ch)
					b.WriteByte(n)
				}
				i += 2
			case ch == delim:
				i++
				return b.String(), true
			default:
				b.WriteByte(ch)
				i++
			}
		}
		return b.String(), false
	}
	addr := func() bool {
		if i >= len(s) {
			return true
		}
		switch ch := s[i]; {
		case ch >= '0' && ch <= '9':
			for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '~') {
				i++
			}
		case ch == '$':
			i++
		case ch == '/':
			i++
			if _, closed := delimited('/'); !closed {
				return false
			}
		case ch == '\\' && i+1 < len(s):
			d := s[i+1]
			i += 2
			if _, closed := delimited(d); !closed {
				return false
			}
		default:
			return true
		}
		for i < len(s) && (s[i] == 'I' || s[i] == 'M') {
			i++
		}
		return true
	}
	for steps := 0; steps < len(s)+1; steps++ {
		for i < len(s) && strings.IndexByte(" \t\n;{}", s[i]) >= 0 {
			i++
		}
		if i >= len(s) {
			return runs, true
		}
		if s[i] == '#' {
			toEOL()
			continue
		}
		if !addr() {
			return runs, false
		}
		if i < len(s) && s[i] == ',' {
			i++
			if i < len(s) && (s[i] == '+' || s[i] == '~') {
				i++
			}
			if !addr() {
				return runs, false
			}
		}
		for i < len(s) && strings.IndexByte(" \t!", s[i]) >= 0 {
			i++
		}
		if i >= len(s) {
			return runs, false
		}
		cmd := s[i]
		i++
		switch cmd {
		case '{', '}':
		case 'e':
			runs = append(runs, toEOL())
		case 's', 'y':
			// Both take two delimited parts; only s has flags after.
			if i >= len(s) {
				return runs, false
			}
			d := s[i]
			i++
			if _, closed := delimited(d); !closed {
				return runs, false
			}
			repl, closed := delimited(d)
			if !closed {
				return runs, false
			}
			if cmd == 'y' {
				break
			}
			for i < len(s) && strings.IndexByte(";\n}", s[i]) < 0 {
				switch s[i] {
				case 'e':
					runs = append(runs, repl)
				case 'w':
					i++
					toEOL()
					continue
				}
				i++
			}
		case 'a', 'i', 'c', 'r', 'R', 'w', 'W':
			for {
				t := toEOL()
				if !strings.HasSuffix(t, "\\") || i >= len(s) {
					break
				}
				i++
			}
		case ':', 'b', 't', 'T':
			for i < len(s) && strings.IndexByte(";\n", s[i]) < 0 {
				i++
			}
		case 'q', 'Q', 'l', 'L':
			for i < len(s) && (s[i] == ' ' || s[i] >= '0' && s[i] <= '9') {
				i++
			}
		case 'v':
			for i < len(s) && strings.IndexByte(";\n}", s[i]) < 0 {
				i++
			}
		case '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		default:
			return runs, false
		}
	}
	return runs, false
}

// man runs its pager (-P, --pager) through a shell.
func (c *checker) man(st site, args []arg) {
	opts, _ := parseOpts(args, optSpec{vals: "CMPpELmSesr", permute: true, long: []string{"config-file=", "manpath=",
		"pager=", "preprocessor=", "locale=", "systems=", "sections=", "extension=", "prompt=", "html=", "encoding="}})
	for _, v := range optVals(opts, "P", "pager", "html") {
		c.hiddenScript(st, "man --pager", v.text)
	}
}

// vim checks the Ex commands vim, nvim, ex and view run at start-up (-c,
// --cmd, +cmd): ! and :r !, :w !, :{range}! hand the rest to a shell,
// and system(), :terminal and the job functions run their strings.
func (c *checker) vim(st site, name string, args []arg) {
	// In Ex mode (ex, vim -e, -E, -es) what vim reads on stdin is Ex
	// commands; with - it is the text to edit.
	exMode, edit := name == "ex", false
	for _, a := range args {
		exMode = exMode || a.known && len(a.text) > 1 && a.text[0] == '-' && a.text[1] != '-' && strings.ContainsAny(a.text, "eE")
		edit = edit || a.known && a.text == "-"
	}
	if exMode && !edit {
		for _, t := range st.in.texts {
			for _, line := range strings.Split(t, "\n") {
				c.exCommand(st, name, line)
			}
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.known {
			continue
		}
		switch {
		case a.text == "--":
			return
		case (a.text == "-c" || a.text == "--cmd") && i+1 < len(args):
			i++
			c.exCommand(st, "vim", args[i].text)
		case strings.HasPrefix(a.text, "+"):
			c.exCommand(st, "vim", a.text[1:])
		case (a.text == "-S" || a.text == "-s") && i+1 < len(args):
			i++
			if args[i].known {
				for _, t := range c.written(args[i].text) {
					for _, line := range strings.Split(t, "\n") {
						c.exCommand(st, "vim", line)
					}
				}
			}
		}
	}
}

// exCommand checks one Ex command line (vim's, or less's after +): what
// follows each ! runs in a shell, and the strings of a call that runs a
// process are checked as command lines.
func (c *checker) exCommand(st site, program, cmd string) {
	for rest := cmd; !c.stopped(); {
		i := strings.IndexByte(rest, '!')
		if i < 0 {
			break
		}
		rest = rest[i+1:]
		c.hiddenScript(st, program, rest)
	}
	for _, f := range [...]string{"system", "term", "job", "spawn", "popen", "shell", "exec"} {
		if strings.Contains(cmd, f) {
			for _, s := range quotedStrings(cmd) {
				c.hiddenScript(st, program, s)
			}
			if j := strings.Index(cmd, "term"); j >= 0 {
				// :terminal cmd and :term cmd run the rest of the line.
				_, after, _ := strings.Cut(cmd[j:], " ")
				c.hiddenScript(st, program, after)
			}
			return
		}
	}
}

// quotedStrings returns the "…" and '…' strings in Ex or Lisp code, with
// backslash escapes in "…" read.
func quotedStrings(s string) []string {
	var out []string
	for i := 0; i < len(s); i++ {
		q := s[i]
		if q != '"' && q != '\'' {
			continue
		}
		var b strings.Builder
		j := i + 1
		for ; j < len(s) && s[j] != q; j++ {
			if s[j] == '\\' && q == '"' && j+1 < len(s) {
				j++
			}
			b.WriteByte(s[j])
		}
		if j < len(s) && len(out) < maxCands {
			out = append(out, b.String())
		}
		i = j
	}
	return out
}

// less checks the commands that less runs at start-up (+cmd, ++cmd):
// !cmd runs a shell command, and |Xcmd pipes to one.
func (c *checker) less(st site, args []arg) {
	for _, a := range args {
		if !a.known || !strings.HasPrefix(a.text, "+") {
			if a.known && a.text == "--" {
				return
			}
			continue
		}
		t := strings.TrimLeft(a.text, "+")
		c.exCommand(st, "less", t)
		for rest := t; !c.stopped(); {
			i := strings.IndexByte(rest, '|')
			if i < 0 || i+1 >= len(rest) {
				break
			}
			rest = rest[i+2:]
			c.hiddenScript(st, "less", rest)
		}
	}
}

// emacs checks Lisp given to emacs or emacsclient on the command line
// (--eval, -e for emacsclient, a file it loads that the input writes):
// when the code calls something that starts a process (shell-command,
// call-process, start-process, make-process, compile, …), each of its
// strings is checked as a command line.
func (c *checker) emacs(st site, name string, args []arg) {
	var code []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.known {
			continue
		}
		t := a.text
		if v, ok := strings.CutPrefix(t, "--eval="); ok {
			code = append(code, v)
			continue
		}
		if v, ok := strings.CutPrefix(t, "--load="); ok {
			code = append(code, c.written(v)...)
			continue
		}
		switch {
		case (t == "--eval" || t == "-eval" || t == "--execute" || t == "-execute" ||
			name == "emacsclient" && t == "-e") && i+1 < len(args):
			i++
			code = append(code, args[i].text)
		case (t == "-l" || t == "--load" || t == "-load" || t == "--script" || t == "-script" || t == "-x") && i+1 < len(args):
			i++
			if args[i].known {
				code = append(code, c.written(args[i].text)...)
			}
		}
	}
	if name == "emacsclient" && len(code) == 0 {
		// emacsclient --eval reads every operand as an expression.
		for _, a := range args {
			if a.known && (a.text == "--eval" || a.text == "-e") {
				for _, b := range args {
					code = append(code, b.text)
				}
				break
			}
		}
	}
	for _, src := range code {
		if c.stopped() {
			return
		}
		if !lispRuns(src) {
			continue
		}
		for _, s := range quotedStrings(lispStrings(src)) {
			c.hiddenScript(st, name, s)
		}
	}
}

// lispRuns reports whether Lisp code calls something that may start a
// process or a shell.
func lispRuns(src string) bool {
	for _, f := range [...]string{"shell", "process", "compil", "term", "eshell", "exec", "spawn"} {
		if strings.Contains(src, f) {
			return true
		}
	}
	return false
}

// lispStrings drops what in Lisp source is not a string or code: ;
// comments and ?x character literals, so that a ' (quote) or a "
// character does not start a string.
func lispStrings(src string) string {
	var b strings.Builder
	for i := 0; i < len(src); i++ {
		ch := src[i]
		switch {
		case ch == '"':
			j := i + 1
			for ; j < len(src) && src[j] != '"'; j++ {
				if src[j] == '\\' {
					j++
				}
			}
			j = min(j, len(src)-1)
			b.WriteString(src[i : j+1])
			i = j
		case ch == ';':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case ch == '?' && i+1 < len(src):
			i++
			if src[i] == '\\' {
				i++
			}
		case ch == '\'':
		default:
			b.WriteByte(ch)
		}
	}
	return b.String()
}
