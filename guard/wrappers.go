package guard

// How the guard finds the commands that other commands run: shells given a
// script, eval, wrappers such as sudo and timeout, xargs and parallel,
// find -exec, watch, flock, su, ssh. The rules that decide are in rules.go;
// the one refusal made here is the token scan of text that a shell runs
// but the input does not show (see fed).

import (
	"fmt"
	"path"
	"strings"
)

// shell handles sh, bash and their kin: -c runs its operand as a script;
// with no operand (or -s) the shell runs what it reads on stdin.
var shellSpec = optSpec{vals: "oO", plus: true, dashOp: true,
	long: []string{"rcfile=", "init-file=", "norc", "noprofile", "login", "posix", "verbose", "restricted", "noediting", "debugger", "help", "version"}}

func (c *checker) shell(args []arg, in feed, off int) {
	opts, ops := parseOpts(args, shellSpec)
	dashC := false
	for _, o := range opts {
		dashC = dashC || o.name == "c" && !o.long && !o.plus
	}
	dashS := hasOpt(opts, "s")
	switch {
	case dashC:
		if len(ops) > 0 {
			c.runText(ops[0], off, ops[1:], true, in)
		}
	case len(ops) > 0 && !dashS:
		c.scriptFile(ops[0], in, off, ops)
	default:
		c.fed(in, off, append([]arg{knownArg("sh")}, ops...))
	}
}

// runText checks a word that a shell runs as a command line: its text,
// and for a lone $(…) what the substitution prints.
func (c *checker) runText(a arg, off int, params []arg, hasParams bool, in feed) {
	c.script(a.text, off, params, hasParams, in)
	c.runOutput(a, off, params)
}

// runOutput checks what a lone $(…) prints, when a shell runs it.
func (c *checker) runOutput(a arg, off int, params []arg) {
	if a.out != nil {
		c.fed(*a.out, off, params)
	}
}

// scriptFile checks a script a shell reads from a file operand. Only a
// process substitution, standard input, or a file the input itself wrote
// can be looked into.
func (c *checker) scriptFile(file arg, in feed, off int, params []arg) {
	switch {
	case file.feed != nil:
		c.fed(*file.feed, off, params)
	case file.known && (file.text == "/dev/stdin" || file.text == "/dev/fd/0" || file.text == "/proc/self/fd/0"):
		c.fed(in, off, params)
	case file.known:
		if f, ok := c.fileFeed(file.text); ok {
			c.fed(f, off, params)
			return
		}
		fd := strings.TrimPrefix(strings.TrimPrefix(file.text, "/dev/fd/"), "/proc/self/fd/")
		for _, f := range append(in.fds[:len(in.fds):len(in.fds)], c.execFds...) {
			if fd != file.text && f.fd == fd {
				c.fed(f.in, off, params)
			}
		}
	}
}

// fed checks text that a shell reads as commands.
func (c *checker) fed(f feed, off int, params []arg) {
	for _, t := range f.texts {
		c.script(t, off, params, true, feed{})
	}
	if f.opaque != "" {
		if w := coarseKillWord(f.opaque); w != "" {
			c.deny(f.opaque, fmt.Sprintf("its output is run by a shell and %s appears in it as a word", quoteWord(w)))
		}
	}
}

func (c *checker) trap(args []arg, off int) {
	if len(args) > 0 && args[0].known && args[0].text == "--" {
		args = args[1:]
	}
	if len(args) < 2 {
		return
	}
	action := args[0]
	if action.known && (action.text == "-" || strings.HasPrefix(action.text, "-") && len(action.text) == 2) {
		return
	}
	c.runText(action, off, nil, false, feed{})
}

// xargs runs its command with the words it reads appended, or substituted
// for the -I string.
var xargsSpec = optSpec{vals: "adEILnPs", opt: "iel",
	long: []string{"replace", "arg-file=", "delimiter=", "max-args=", "max-procs=", "max-chars=", "process-slot-var=",
		"eof", "max-lines", "null", "no-run-if-empty", "interactive", "verbose", "exit", "show-limits", "open-tty"}}

func (c *checker) xargs(st site, args []arg) {
	src, repl := st.in, ""
	opts, cmd := parseOpts(args, xargsSpec)
	for _, o := range opts {
		switch {
		case o.is("I", "replace", "i"):
			repl = "{}"
			if o.hasVal {
				repl = o.val.text
			}
		case o.is("a", "arg-file"):
			src = feed{}
			if o.val.feed != nil {
				src = *o.val.feed
			}
		}
	}
	if len(cmd) == 0 {
		return // echo
	}
	input := c.inputArg(src)
	out := make([]arg, 0, len(cmd)+1)
	if repl != "" && cmd[0].known && strings.Contains(cmd[0].text, repl) {
		// The command name comes from the input: check what produces it.
		name := cmd[0]
		name.src += " " + input.src
		cmd = append([]arg{name}, cmd[1:]...)
	}
	for _, a := range cmd {
		if repl != "" && a.known && strings.Contains(a.text, repl) {
			a = substitute(a, repl, input)
		}
		out = append(out, a)
	}
	if repl == "" {
		out = append(out, input)
	}
	c.examine(st.withIn(feed{}), out)
}

func substitute(a arg, repl string, input arg) arg {
	out := arg{
		text: strings.ReplaceAll(a.text, repl, input.text),
		lead: a.text[:strings.Index(a.text, repl)],
		pids: input.pids,
		src:  a.src,
		refs: input.refs,
	}
	for _, cand := range input.cands {
		out.cands = append(out.cands, strings.ReplaceAll(a.text, repl, cand))
	}
	return out
}

// parallel (GNU) joins its command words into a shell command line and
// runs it once per input, substituting {} or appending the input.
var parallelSpec = optSpec{vals: "jPSaCdnNLEsI",
	long: []string{"jobs=", "sshlogin=", "arg-file=", "colsep=", "delimiter=", "max-args=", "max-lines=", "joblog=",
		"results=", "tmpdir=", "timeout=", "delay=", "retries=", "memfree=", "load=", "workdir=", "wd=",
		"tagstring=", "tag-string=", "env=", "halt=", "sshloginfile=", "slf=", "basefile=", "bf=",
		"transferfile=", "tf=", "return=", "termseq=", "max-chars=", "limit=", "profile=", "block=",
		"recstart=", "recend=", "header=", "eof=", "replace=", "extensionreplace="}}

func (c *checker) parallel(st site, args []arg) {
	_, rest := parseOpts(args, parallelSpec)
	var cmd, inputs []arg
	sawSep := false
	for _, a := range rest {
		if a.known && strings.HasPrefix(a.text, ":::") {
			sawSep = true
			continue
		}
		if sawSep {
			inputs = append(inputs, a)
		} else {
			cmd = append(cmd, a)
		}
	}
	src := st.in
	if sawSep {
		src = feed{}
		for _, a := range inputs {
			src.pids = src.pids || a.pids
			src.texts = append(src.texts, a.text)
		}
	}
	if len(cmd) == 0 {
		// The inputs are the commands.
		c.fed(src, st.off, nil)
		return
	}
	input := c.inputArg(src)
	line, replaced := replacePlaceholders(joinTexts(cmd), input.text)
	if !replaced {
		line += " " + input.text
	}
	c.script(line, st.off, nil, false, feed{})
}

// replacePlaceholders replaces parallel's replacement strings ({}, {.},
// {/}, {//}, {/.}, {#}, {%}, {1}, …) with s.
func replacePlaceholders(line, s string) (string, bool) {
	var b strings.Builder
	replaced := false
	for i := 0; i < len(line); i++ {
		if line[i] == '{' {
			if j := strings.IndexByte(line[i:min(i+6, len(line))], '}'); j > 0 && strings.Trim(line[i+1:i+j], "./#%0123456789") == "" {
				b.WriteString(s)
				i += j
				replaced = true
				continue
			}
		}
		b.WriteByte(line[i])
	}
	return b.String(), replaced
}

// find runs the commands of -exec, -execdir, -ok and -okdir. A command
// word {} is the file found: it may be any file that the starting points
// and the -name, -path and -regex tests allow.
func (c *checker) find(st site, args []arg) {
	for i := 0; i < len(args); i++ {
		if !args[i].known {
			continue
		}
		switch args[i].text {
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(args) && !(args[j].known && (args[j].text == ";" || args[j].text == "+")) {
				j++
			}
			cmd := args[i+1 : j]
			if len(cmd) > 0 && cmd[0].known && strings.Contains(cmd[0].text, "{}") {
				cmd = append([]arg{foundFile(cmd[0], findNames(args))}, cmd[1:]...)
			}
			if findsPids(args) {
				// find /proc … -exec kill {}: the files found are PIDs.
				cmd = append([]arg(nil), cmd...)
				for k := 1; k < len(cmd); k++ {
					if strings.Contains(cmd[k].text, "{}") {
						cmd[k] = arg{text: cmd[k].text, src: cmd[k].src, pids: true}
					}
				}
			}
			for _, alt := range foundAlternatives(cmd, findNames(args)) {
				c.examine(st.withIn(feed{}), alt)
			}
			i = j
		}
	}
}

// findsPids reports whether find starts from /proc or a cgroup, so
// that the names it finds are PIDs.
func findsPids(args []arg) bool {
	for _, a := range args {
		if !a.known || strings.HasPrefix(a.text, "-") || a.text == "(" || a.text == "!" {
			return false
		}
		if pidPath(a.text) || strings.HasPrefix(path.Clean(a.text), "/sys/fs/cgroup") {
			return true
		}
	}
	return false
}

// findNames are the operands that find's file names come from: starting
// points (before the first test) and the values of -name and its kin.
func findNames(args []arg) []string {
	var names []string
	tests := false
	for i := 0; i < len(args); i++ {
		t := args[i].text
		switch {
		case !args[i].known:
			tests = true
		case t == "-exec" || t == "-execdir" || t == "-ok" || t == "-okdir":
			return names
		case t == "-name" || t == "-iname" || t == "-path" || t == "-ipath" || t == "-wholename" ||
			t == "-iwholename" || t == "-regex" || t == "-iregex" || t == "-lname" || t == "-ilname":
			if i+1 < len(args) {
				names = append(names, args[i+1].text)
				i++
			}
			tests = true
		case strings.HasPrefix(t, "-") || t == "(" || t == "!" || t == ")":
			tests = true
		case !tests:
			names = append(names, t)
		}
	}
	return names
}

// foundFile stands for a command word that find -exec or fd -x fills with
// the file found ({}): it may be any file the names allow.
func foundFile(word arg, names []string) arg {
	a := arg{text: word.text, src: word.src}
	for _, n := range names {
		a.src += " " + n
		cands := []string{strings.ToLower(n)}
		if hasGlob(n) {
			cands = globNames(strings.ToLower(n))
		}
		for _, cand := range cands {
			if len(a.cands) < maxCands {
				a.cands = append(a.cands, strings.ReplaceAll(word.text, "{}", cand))
			}
		}
	}
	return a
}

// foundAlternatives is cmd as it runs for each file find may find: {} in
// a later word (sh -c 'echo 1 > {}') stands for one of the names at a
// time. cmd itself comes first.
func foundAlternatives(cmd []arg, names []string) [][]arg {
	alts := [][]arg{cmd}
	has := false
	for _, a := range cmd[min(1, len(cmd)):] {
		has = has || strings.Contains(a.text, "{}")
	}
	if !has {
		return alts
	}
	for _, n := range names[:min(len(names), maxCands)] {
		alt := append([]arg(nil), cmd...)
		for k := 1; k < len(alt); k++ {
			if strings.Contains(alt[k].text, "{}") && (alt[k].known || alt[k].pids) {
				alt[k] = knownArg(strings.ReplaceAll(alt[k].text, "{}", n))
			}
		}
		alts = append(alts, alt)
	}
	return alts
}

// fdExec runs the command of fd -x / -X.
func (c *checker) fdExec(st site, args []arg) {
	for i, a := range args {
		if a.known && (a.text == "-x" || a.text == "--exec" || a.text == "-X" || a.text == "--exec-batch") {
			j := i + 1
			for j < len(args) && !(args[j].known && args[j].text == ";") {
				j++
			}
			cmd := args[i+1 : j]
			if len(cmd) > 0 && cmd[0].known && strings.Contains(cmd[0].text, "{") {
				var names []string
				for _, o := range args[:i] {
					if o.known && !strings.HasPrefix(o.text, "-") {
						names = append(names, o.text)
					}
				}
				cmd = append([]arg{foundFile(cmd[0], names)}, cmd[1:]...)
			}
			c.examine(st.withIn(feed{}), cmd)
			return
		}
	}
}

// watch joins its command words and runs them with sh -c, or runs them
// directly with -x.
var watchSpec = optSpec{vals: "nq", flags: "bcdegptwxhv",
	long: []string{"interval=", "equexit=", "exec", "differences", "beep", "errexit", "chgexit", "no-title", "precise",
		"color", "no-color", "no-wrap", "no-rerun", "help", "version"}}

func (c *checker) watch(st site, args []arg) {
	opts, cmd := parseOpts(args, watchSpec)
	if hasOpt(opts, "x", "exec") {
		c.examine(st, cmd)
		return
	}
	if len(cmd) > 0 {
		c.script(joinTexts(cmd), st.off, nil, false, st.in)
		if len(cmd) == 1 {
			c.runOutput(cmd[0], st.off, nil)
		}
	}
}

// flock takes a lock file, then runs a command or the -c text.
var flockSpec = optSpec{vals: "wE", flags: "sxunoFhV",
	long: []string{"timeout=", "conflict-exit-code=", "shared", "exclusive", "unlock", "nonblock", "close", "no-fork", "verbose", "help", "version"}}

func (c *checker) flock(st site, args []arg) {
	_, ops := parseOpts(args, flockSpec)
	if len(ops) < 2 {
		return // the lock file or descriptor alone
	}
	rest := ops[1:]
	if rest[0].known && (rest[0].text == "-c" || rest[0].text == "--command") {
		if len(rest) > 1 {
			c.runText(rest[1], st.off, nil, false, st.in)
		}
		return
	}
	if rest[0].known && strings.HasPrefix(rest[0].text, "--command=") {
		c.script(rest[0].text[len("--command="):], st.off, nil, false, st.in)
		return
	}
	c.examine(st, rest)
}

// dashC handles su, runuser and script: the -c (--command) operand is a
// script, and runuser -u runs its remaining words as a command.
func (c *checker) dashC(st site, name string, args []arg) {
	sp := optSpec{vals: "cgGsw", flags: "flmpPhV", permute: true,
		long: []string{"command=", "session-command=", "group=", "supp-group=", "shell=", "whitelist-environment=",
			"login", "preserve-environment", "pty", "fast", "help", "version"}}
	switch name {
	case "runuser":
		sp.vals += "u"
		sp.long = append(sp.long[:len(sp.long):len(sp.long)], "user=")
		// runuser -u runs the words after its options as a command.
		nsp := sp
		nsp.permute = false
		if opts, cmd := parseOpts(args, nsp); hasOpt(opts, "u", "user") {
			c.examine(st, cmd)
			return
		}
	case "script":
		sp = optSpec{vals: "cEIOBTm", flags: "aefqhV", permute: true,
			long: []string{"command=", "echo=", "log-in=", "log-out=", "log-io=", "log-timing=", "logging-format=",
				"output-limit=", "append", "flush", "force", "quiet", "return", "help", "version"}}
	}
	opts, _ := parseOpts(args, sp)
	for _, v := range optVals(opts, "c", "command", "session-command") {
		c.runText(v, st.off, nil, false, st.in)
	}
}

// ssh runs its words after the host as a command line on that host, which
// may well be this one.
func (c *checker) ssh(st site, args []arg) {
	sp := optSpec{vals: "BbcDEeFIiJLlmOopQRSWw"}
	gopts, ops := parseOpts(args, sp)
	var after []opt
	if len(ops) > 0 {
		// Options may follow the host.
		var cmd []arg
		after, cmd = parseOpts(ops[1:], sp)
		if len(cmd) > 0 {
			c.script(joinTexts(cmd), st.off, nil, false, feed{})
		}
	}
	// -O exit and -O stop end the control master that every connection
	// to the host shares: the user's own sessions and the other agents'.
	for _, o := range optVals(append(gopts, after...), "O") {
		if o.known && (o.text == "exit" || o.text == "stop") {
			c.denyInstead(st.text, "ssh -O "+o.text+" ends the control master every connection of the user's to that host shares, their own sessions and the other agents' included", insteadServer)
			return
		}
	}
}

// wrapSpec describes how a wrapper finds the command it runs.
type wrapSpec struct {
	opts      optSpec
	skip      int    // operands before the command, such as timeout's duration
	assigns   bool   // NAME=value words may come before the command
	noCommand string // short options after which no command runs
	split     bool   // env -S and --split-string: the value is split into words
}

// wrapper returns the spec of a command that runs another command.
func wrapper(name string) (wrapSpec, bool) {
	switch name {
	case "env":
		return wrapSpec{opts: optSpec{flags: "i0v", vals: "uCSa",
			long: []string{"unset=", "chdir=", "split-string=", "argv0=", "ignore-environment", "null", "debug", "default-signal", "ignore-signal", "block-signal", "list-signal-handling"}}, assigns: true, split: true}, true
	case "sudo":
		return wrapSpec{opts: optSpec{flags: "ABbEeHhiKklNnPSsVv", vals: "aCcDgpRrTtUu",
			long: []string{"askpass=", "chdir=", "close-from=", "group=", "host=", "prompt=", "chroot=", "role=", "type=", "command-timeout=", "other-user=", "user=", "login-class=", "preserve-env", "edit", "set-home", "login", "remove-timestamp", "reset-timestamp", "list", "non-interactive", "preserve-groups", "stdin", "shell", "validate", "background", "bell"}}, noCommand: "lKVv", assigns: true}, true
	case "doas":
		return wrapSpec{opts: optSpec{flags: "Lns", vals: "aCu"}}, true
	case "nohup", "builtin", "unbuffer", "catchsegv", "eatmydata", "fakeroot":
		return wrapSpec{opts: optSpec{flags: "p"}}, true
	case "timeout":
		return wrapSpec{opts: optSpec{flags: "fpv", vals: "ks",
			long: []string{"kill-after=", "signal=", "foreground", "preserve-status", "verbose"}}, skip: 1}, true
	case "nice":
		return wrapSpec{opts: optSpec{vals: "n", long: []string{"adjustment="}}}, true
	case "ionice":
		return wrapSpec{opts: optSpec{flags: "t", vals: "cnpPu",
			long: []string{"class=", "classdata=", "pid=", "pgid=", "uid=", "ignore"}}, noCommand: "pPu"}, true
	case "setsid":
		return wrapSpec{opts: optSpec{flags: "cfw", long: []string{"ctty", "fork", "wait"}}}, true
	case "stdbuf":
		return wrapSpec{opts: optSpec{vals: "ioe", long: []string{"input=", "output=", "error="}}}, true
	case "exec":
		return wrapSpec{opts: optSpec{flags: "cl", vals: "a"}}, true
	case "command":
		return wrapSpec{opts: optSpec{flags: "p"}, noCommand: "vV"}, true
	case "time":
		return wrapSpec{opts: optSpec{flags: "apqvV", vals: "fo",
			long: []string{"format=", "output=", "append", "portability", "quiet", "verbose"}}}, true
	case "chrt":
		return wrapSpec{opts: optSpec{flags: "abdefiorRv", vals: "TPD",
			long: []string{"all-tasks", "batch", "deadline", "fifo", "idle", "other", "rr", "reset-on-fork", "verbose"}}, noCommand: "pm", skip: 1}, true
	case "taskset":
		return wrapSpec{opts: optSpec{flags: "acV", long: []string{"all-tasks", "cpu-list"}}, noCommand: "p", skip: 1}, true
	case "setpriv":
		return wrapSpec{opts: optSpec{flags: "d",
			long: []string{"reuid=", "regid=", "ruid=", "euid=", "rgid=", "egid=", "groups=", "inh-caps=", "ambient-caps=", "bounding-set=", "securebits=", "pdeathsig=", "selinux-label=", "apparmor-profile=", "landlock-access=", "landlock-rule=", "clear-groups", "keep-groups", "init-groups", "no-new-privs", "reset-env", "dump"}}}, true
	case "chroot":
		return wrapSpec{opts: optSpec{long: []string{"userspec=", "groups=", "skip-chdir"}}, skip: 1}, true
	case "strace":
		return wrapSpec{opts: optSpec{flags: "cCdDfFhikqrtTvVwxyYzZ", vals: "abeEIoOpPsSuUX"}}, true
	case "ltrace":
		return wrapSpec{opts: optSpec{flags: "bcCfhiLrStTV", vals: "aAeDFlnopsuwx"}}, true
	case "nsenter":
		return wrapSpec{opts: optSpec{flags: "amuinpUCTrwFZ", vals: "tSG",
			long: []string{"target=", "setuid=", "setgid=", "all", "preserve-credentials", "no-fork", "follow-context"}}}, true
	case "unshare":
		return wrapSpec{opts: optSpec{flags: "mUuinpCTfrc", vals: "SGRw",
			long: []string{"setgroups=", "propagation=", "map-user=", "map-group=", "map-users=", "map-groups=", "root=", "wd=", "setuid=", "setgid=", "monotonic=", "boottime=", "fork", "mount-proc", "map-root-user", "map-current-user", "map-auto", "keep-caps", "kill-child"}}}, true
	case "prlimit":
		return wrapSpec{opts: optSpec{vals: "po", long: []string{"pid=", "output="}}, noCommand: "p"}, true
	case "xvfb-run":
		return wrapSpec{opts: optSpec{flags: "adhl", vals: "efnpsw",
			long: []string{"error-file=", "auth-file=", "server-num=", "xauth-protocol=", "server-args=", "wait=", "auto-servernum", "auto-display", "help", "listen-tcp"}}}, true
	case "dbus-run-session":
		return wrapSpec{opts: optSpec{long: []string{"config-file=", "dbus-daemon=", "session", "help", "version"}}}, true
	case "systemd-inhibit":
		return wrapSpec{opts: optSpec{long: []string{"what=", "who=", "why=", "mode=", "list", "no-pager", "no-legend", "no-ask-password", "help", "version"}}}, true
	}
	return wrapSpec{}, false
}

// unwrap finds the command a wrapper runs. Where an option the spec does
// not know might or might not take a value, both readings are returned.
func unwrap(args []arg, sp wrapSpec) [][]arg {
	var out [][]arg
	var walk func(i, branches int)
	walk = func(i, branches int) {
		for i < len(args) {
			if sp.assigns && args[i].known && isAssignWord(args[i].text) {
				i++
				continue
			}
			opts, next, kind := readOpt(args, i, sp.opts)
			if kind == wordEnd {
				i = next
				for sp.assigns && i < len(args) && args[i].known && isAssignWord(args[i].text) {
					i++
				}
				break
			}
			if kind == wordOperand {
				break
			}
			for _, o := range opts {
				if !o.long && strings.Contains(sp.noCommand, o.name) {
					return
				}
				if sp.split && o.is("S", "split-string") {
					out = append(out, unwrap(append(splitArgs(o.val.text), args[next:]...), sp)...)
					return
				}
			}
			if last := opts[len(opts)-1]; last.unknown && !last.hasVal && !isDigits(last.name) && branches < 3 {
				walk(next+1, branches+1)
			}
			i = next
		}
		i += sp.skip
		if i < len(args) {
			out = append(out, args[i:])
		}
	}
	walk(0, 0)
	return out
}

func splitArgs(s string) []arg {
	words := strings.Fields(s)
	out := make([]arg, len(words))
	for i, w := range words {
		out[i] = knownArg(w)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// at and batch run the commands they read from standard input, or from
// the -f file, later.
func (c *checker) at(args []arg, in feed, off int) {
	opts, _ := parseOpts(args, optSpec{vals: "fqt", flags: "lrdcmMvVb"})
	if hasOpt(opts, "l", "r", "d", "c") {
		return // list, remove or show jobs
	}
	if f, ok := optVal(opts, "f"); ok {
		_, seen := c.fileFeed(f.text)
		if !seen && f.feed == nil && !(f.known && (strings.HasPrefix(f.text, "/dev/") || strings.HasPrefix(f.text, "/proc/self/fd/"))) {
			// The guard reads no files, and the job runs later outside
			// every jail, where the guard is the only check.
			c.denyInstead(joinTexts(append([]arg{knownArg("at")}, args...)), "it schedules a job from a file the guard cannot see, which runs later outside every jail", insteadLater)
			return
		}
		c.scriptFile(f, in, off, nil)
		return
	}
	c.fed(in, off, nil)
}

// npx and its kin run a package's command, or the -c text.
var npxSpec = optSpec{vals: "pcw", long: []string{"package=", "call=", "registry=", "cache=", "userconfig=", "prefix=",
	"workspace=", "yes", "no", "quiet", "include-workspace-root", "workspaces"}}

func (c *checker) npx(st site, args []arg) {
	opts, ops := parseOpts(args, npxSpec)
	if v, ok := optVal(opts, "c", "call"); ok {
		c.runText(v, st.off, nil, false, st.in)
		return
	}
	if len(ops) == 0 {
		return
	}
	if ops[0].known {
		// The package spec (kill-port@latest) names its command.
		ops = append([]arg{knownArg(packageName(ops[0].text))}, ops[1:]...)
	}
	c.examine(st, ops)
}
