package guard

// The guard's policy. The rules are listed here and applied by the code
// below; wrappers.go only finds the commands that other commands run.
//
//   - pkill, killall, killall5 and skill are refused whatever their
//     arguments: they choose their victims by name, user or terminal.
//   - fuser is refused with -k (or --kill), and so are the port-kill
//     helpers (kill-port, fkill, …), run directly or through npx, pnpm dlx,
//     yarn dlx, bunx or npm exec. Writing to cgroup.kill, cgroup.freeze or
//     /proc/sysrq-trigger (a redirection, tee, cp, dd of=) is refused, and
//     so is writing to a path computed at run time from text that names
//     one of them (killfile.go).
//   - aisan kill --all and --orphans are refused, and so is aisan kill of
//     any slot but the jail the guard runs in (aisan.go).
//   - kill is refused when a target is -1, 0 or a negative process group
//     (read as bash reads a number: surrounding whitespace and a + sign
//     allowed; and for a lone kill -1, which reads like one), when a
//     target comes from a PID listing (pgrep, pidof, ps, lsof but not
//     lsof -p $$, fuser, pstree, ss, netstat, top, a /proc glob or loop,
//     find /proc, a cgroup's cgroup.procs) through $(…), backticks, a
//     variable or array, read,
//     mapfile, a file or function the input fills, or the input of xargs
//     or parallel, and when a target is computed ($((…)) that does not
//     come out positive, $#, $?, expr, what is assigned to a variable
//     declared -i, which bash evaluates as arithmetic) and so may be 0 or
//     negative.
//     Options are read as bash's kill reads them, and the last signal
//     given counts: kill -l and signal 0 are always fine; so are
//     kill <PID>, kill %job and kill "$pid".
//   - systemctl --user stop, kill, restart, isolate and their kin are
//     refused, and so is set-property (MemoryMax=1M kills by effect), and so is starting exit.target and its kin or any job in
//     isolate mode; long options are matched as getopt_long matches them,
//     prefixes included. loginctl terminate-* and kill-* are refused, and
//     so are the same methods called over busctl, dbus-send, gdbus and
//     qdbus, and SetUnitProperties (daemons.go).
//   - tmux kill-server is refused; kill-session unless the session is the
//     agent's own (the input starts it, or it is named after the jail,
//     as written or as "$AISAN_JAIL-…");
//     kill-pane and kill-window with -a; detach-client -P. The shell
//     commands that tmux runs (run-shell, new-session, new-window,
//     split-window, respawn-pane, if-shell, display-popup, pipe-pane,
//     tmux -c) and the tmux commands it runs later (if-shell,
//     confirm-before, bind-key) are checked: the tmux server may run
//     outside the jail. screen -X quit and kill are refused for a session
//     that is not the agent's own, and what screen runs (a new session's
//     command, -X screen, exec, eval, at) is checked. Container engines,
//     pm2, supervisorctl and zellij follow their tables in daemons.go.
//   - What crontab and at install and what systemd-run starts (unless
//     --scope runs it in place) runs later outside the jail, where a PID
//     is the host's: there even kill <PID> is refused, and so is crontab
//     FILE or at -f FILE for a file the input does not write.
//     systemd-run with Conflicts= or a stop-propagating property is
//     refused.
//   - A program the input copies or links (cp, ln, install, mv, rsync,
//     dd) runs, under its new name, as the program it is (track.go).
//   - Unquoted expansions are split into words as bash splits them, at
//     blanks and at whatever the input assigns to IFS (ifs.go).
//   - A command word only known at run time is refused when its text names
//     a kill tool, when it passes a named signal, or when kill with the same
//     arguments would be refused, or when its fixed parts spell pkill,
//     killall or skill with each run-time part empty or filling a gap
//     (pk${X}ill, pk$(true)ill) and its value is not known. Values the
//     input assigns are tried too, through ${x,,}, ${x%pat}, ${x/a/b} and
//     the like; when the values are not known, or the word expands an
//     array, what the input assigns to its variables as written is
//     searched for a kill word instead.
//   - Text that a shell will run is checked as a script: sh -c and its
//     kin, eval, trap, alias, here-documents, here-strings, /dev/fd/N and
//     pipes into a shell (with the output of echo and printf worked out,
//     escapes and formats included), watch, ssh, su -c, script -c,
//     parallel, at, npx -c, tmux send-keys; and the shell text hidden in
//     other programs (hidden.go): git -c and git config values (aliases
//     with !, core.pager, core.sshCommand, …), git rebase --exec and its
//     kin, sed's e command and s///e, vim -c and +cmd, less +cmd, man -P,
//     emacs --eval, and variables that programs run or expand
//     (PROMPT_COMMAND, PS1, GIT_PAGER, EDITOR, …), wherever they are
//     assigned. Wrappers (sudo, env, timeout, nohup, xargs, find -exec,
//     xvfb-run, …) are seen through to the command they start.
//   - A script that the same input writes (cat > run.sh <<EOF, echo … >
//     x.sh, tee) is checked where the input runs it (bash run.sh, ./run.sh,
//     source, sh < run.sh, cat run.sh | sh, python3 x.py).
//   - Code given to an interpreter (python -c, perl -e, node -e, awk's
//     program, expect -c, a program the input writes or pipes in) is
//     judged by what it runs (code.go): a string handed to a shell is
//     checked as a script, a list of words as a command; when the command
//     is built out of sight, each string of the code is checked as a
//     command line. Code that reads a PID listing and calls kill is
//     refused, and so is code that lists processes itself (psutil,
//     ps-list, /proc, a pgrep it runs) and signals what it finds, code
//     whose own kill has a literal target the shell's would be refused
//     for (os.kill(-1, 9), process.kill(0)), code that loads a
//     kill-by-name library (fkill, kill-port) and code that writes a
//     kill file (cgroup.kill). Makefiles that make reads from stdin or from a file the
//     input writes are checked recipe by recipe. Arguments, data and
//     comments are not code.
//   - Text that does not parse is checked up to the error, statement by
//     statement, and then refused if a kill word appears in it as a word
//     ($'…' decoded).
//
// Name sets are switch statements, not maps, so that the package does no
// work at start-up: the hook runs as a fresh process for every tool call.

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// specialNames lists every command name the rules below treat specially.
// A command word that is a glob is matched against it.
var specialNames = []string{
	"adb", "aisan", "alias", "ash", "at", "awk", "bash", "batch", "builtin", "bun", "bunx", "busctl", "busybox", "cd", "chroot", "chrt",
	"command", "cp", "crontab", "csh", "dash", "dbus-run-session", "dbus-send", "dd", "docker", "doas", "env", "eval",
	"exec", "expect", "fd", "fdfind", "find", "fish", "fkill", "flock", "fuser", "gawk", "gdbus", "git", "gmake", "gpg-connect-agent", "gpgconf", "gradle", "gradlew", "install",
	"ionice", "kill", "kill-port", "killall", "killall5", "killport", "ksh", "ksh93", "lksh", "ln", "loginctl", "ltrace",
	"make", "mapfile", "mawk", "mksh", "mv", "nawk", "nerdctl", "nice", "node", "nohup", "npm", "npx", "nsenter",
	"parallel", "perl", "php", "pm2", "pnpm", "podman", "oksh", "pdksh", "pkill", "pnpx", "posh", "printf", "prlimit",
	"python", "python3", "qdbus", "rbash", "read", "readarray", "rsync", "ruby", "runuser", "sccache",
	"screen", "script", "sed", "set", "setpriv", "setsid", "sg", "sh", "shift", "skill", "source", "ssh",
	"stdbuf", "strace", "su", "sudo", "supervisorctl", "systemctl", "systemd-inhibit", "systemd-run", "taskset",
	"tclsh", "tcsh", "tee", "vim", "less", "emacs", "time", "timeout", "tmux", "toybox", "trap", "unbuffer", "unshare", "watch", "watchman",
	"xargs", "xvfb-run", "yarn", "yash", "zellij", "zsh",
}

// Why clauses, completing "aisan guard refused `cmd`: …".
const (
	whyPidList = "it takes its targets from a process listing (pgrep, pidof, ps, lsof, ss, /proc, a cgroup's cgroup.procs), which kills by name in two steps"
	whyFuser   = "fuser -k kills every process that has the file, mount or port open, whoever started it"
	whyScreen  = "screen -X %s ends a terminal session this command line did not start, which may be the user's"
	whyTmux    = "tmux %s ends terminal sessions that may belong to the user"
)

// examine decides about one simple command, given as resolved words.
func (c *checker) examine(st site, args []arg) {
	if len(args) == 0 || !c.step(st.text, len(args)) {
		return
	}
	name := args[0]
	if !name.known {
		c.dynamic(st, args)
		return
	}
	if name.meta {
		if alts := nameAlternatives(name); len(alts) > 0 {
			for _, alt := range alts {
				c.examine(st, append(alt, args[1:]...))
			}
			return
		}
	}
	c.record(name.text, args[1:], false, st.off)
	if def, ok := c.funcs[name.text]; ok {
		c.callFunc(def, name.text, args[1:], st.in)
	}
	if strings.Contains(name.text, "/") {
		// A script written earlier in the same input, run as ./run.sh.
		for _, t := range c.written(name.text) {
			c.script(t, st.off, args, true, st.in)
		}
	}
	if prog := c.copied(name); prog != "" {
		// A program the input copied or linked under this name.
		c.byName(st, prog, args[1:])
		return
	}
	c.byName(st, baseName(name.text), args[1:])
}

// nameAlternatives expands a command word with glob or brace characters
// into the commands it may stand for, as far as the rules care. It returns
// nil when the expansion changes nothing.
func nameAlternatives(name arg) [][]arg {
	fields := expandBraces(name.pat, maxCands)
	var rest []arg
	for _, f := range fields[1:] {
		rest = append(rest, knownArg(unescapePattern(f)))
	}
	var names []string
	if hasGlob(fields[0]) {
		names = globNames(fields[0])
	}
	if len(fields) == 1 && len(names) == 0 {
		return nil
	}
	if len(names) == 0 {
		names = []string{unescapePattern(fields[0])}
	}
	alts := make([][]arg, 0, len(names))
	for _, n := range names {
		alts = append(alts, append([]arg{knownArg(n)}, rest...))
	}
	return alts
}

// dynamic decides about a command whose name is only known at run time.
func (c *checker) dynamic(st site, args []arg) {
	n := args[0]
	c.record(n.text, args[1:], true, st.off)
	if prog := c.copied(n); prog != "" {
		c.byName(st, prog, args[1:])
		return
	}
	if w := mentionedKillWord(n.src + " " + n.text); w != "" {
		c.deny(st.text, fmt.Sprintf("its command name is computed at run time and its text names %s", w))
		return
	}
	if n.cands == nil || n.array || n.partial {
		if w := skeletonKillWord(n.skel); w != "" {
			c.deny(st.text, fmt.Sprintf("its command name is computed at run time, and its fixed parts spell %s if the parts computed at run time are empty or fill the gaps", w))
			return
		}
		if v, w := c.refKillWord(n); w != "" {
			c.deny(st.text, fmt.Sprintf("its command name is computed at run time from $%s, and what the input assigns to %s names %s", v, v, w))
			return
		}
	}
	if s := signalOption(args[1:]); s != "" {
		c.deny(st.text, fmt.Sprintf("its command name is computed at run time and it passes the signal option %s, as kill would", s))
		return
	}
	if why := killWhy(args[1:]); why != "" {
		c.deny(st.text, "its command name is computed at run time, and if it is kill, "+why)
		return
	}
	if len(n.cands) == 0 {
		// Nothing in the input says what the word holds. It may be a
		// wrapper ($SUDO pkill …) or a shell ($SHELL -c …).
		c.examine(st, args[1:])
		for _, a := range args[1:] {
			if a.known && a.text == "-c" {
				c.shell(args[1:], st.in, st.off)
				break
			}
		}
		return
	}
	for _, cand := range n.cands {
		ways := [][]string{{cand}}
		if n.split {
			ways = splitWays(cand, n.seps)
		}
		for _, words := range ways {
			if len(words) == 0 {
				continue
			}
			alt := make([]arg, 0, len(words)+len(args)-1)
			for _, w := range words {
				alt = append(alt, knownArg(w))
			}
			c.examine(st, append(alt, args[1:]...))
		}
	}
}

// refKillWord looks at what the input assigns to the variables a run-time
// command word reads, as written and as values: a kill word there may be
// the command. Through an operator (${x,,}, ${x%X}) "kill" in any case and
// any surroundings counts. It returns the variable and the word, or "".
func (c *checker) refKillWord(n arg) (string, string) {
	for _, r := range n.refs {
		v := c.vars[r]
		switch {
		case v == nil:
		case v.named != "":
			return r, v.named
		case n.opRef && v.namedCI:
			return r, "kill"
		}
	}
	return "", ""
}

func (c *checker) record(name string, rest []arg, dynamic bool, off int) {
	if !c.collect {
		return
	}
	cmd := Command{Name: name, Dynamic: dynamic, Offset: off}
	for _, a := range rest {
		cmd.Args = append(cmd.Args, a.text)
	}
	c.cmds = append(c.cmds, cmd)
}

// callFunc examines the body of a function defined in the input, with its
// arguments bound to $1….
func (c *checker) callFunc(def funcDef, name string, rest []arg, in feed) {
	if c.active[name] {
		return
	}
	if c.depth >= maxDepth {
		c.deny(name, "commands nest deeper than the guard is willing to follow")
		return
	}
	c.active[name] = true
	c.depth++
	params := append([]arg{knownArg(name)}, rest...)
	c.stmt(&frame{src: def.fr.src, base: def.fr.base, params: params, hasParams: true}, def.body, in)
	c.depth--
	delete(c.active, name)
}

// byName applies the rules for a command whose name is known.
func (c *checker) byName(st site, name string, rest []arg) {
	switch name {
	case "pkill", "killall", "killall5", "skill":
		c.deny(st.text, name+" picks its victims by name or attribute, not by PID, so it can hit processes that are not yours")
	case "kill":
		if why := killWhy(rest); why != "" {
			c.deny(st.text, why)
		} else if c.outside > 0 && killSignals(rest) {
			c.denyInstead(st.text, "it runs later, outside this jail, where a PID names one of the host's processes and not one the agent started", insteadLater)
		}
	case "kill-port", "killport", "kill-port-process", "fkill", "fkill-cli", "port-kill", "kill-ports", "portkill":
		c.denyInstead(st.text, name+" kills whatever holds the port or matches the name, whoever started it", insteadPort)
	case "gpgconf", "gpg-connect-agent":
		c.gpgAgent(st, name, rest)
	case "gradle", "gradlew", "sccache", "adb", "watchman":
		c.sharedServer(st, name, rest)
	case "docker", "podman", "nerdctl", "pm2", "supervisorctl", "zellij":
		d, _ := daemonOf(name)
		c.daemonCommand(st, name, d, rest)
	case "aisan":
		c.aisan(st, rest)
	case "crontab":
		c.crontab(st, rest)
	case "make", "gmake":
		c.make(st, rest)
	case "systemd-run":
		c.systemdRun(st, rest)
	case "busctl", "dbus-send", "gdbus", "qdbus", "qdbus6", "qdbus-qt5", "qdbus-qt6":
		c.busCall(name, rest, st.text)
	case "npm", "pnpm", "yarn", "bun":
		c.packageRunner(st, name, rest)
	case "cp", "mv", "ln", "install", "rsync":
		c.copies(name, rest)
		c.writeArgs(rest, st.text)
	case "dd":
		for _, a := range rest {
			if out, ok := ddOutput(a); ok {
				if why := c.fileTargetWhy(out); why != "" {
					c.denyInstead(st.text, why, insteadKernel)
				}
			}
			if a.known && strings.HasPrefix(a.text, "if=") && len(rest) > 0 {
				for _, b := range rest {
					if b.known && strings.HasPrefix(b.text, "of=") {
						c.addCopy(knownArg(a.text[3:]), knownArg(b.text[3:]))
					}
				}
			}
		}
	case "cd", "pushd":
		for _, a := range rest {
			if a.known && (path.Clean(a.text) == "/proc") {
				c.track.inProc = true
			}
		}
	case "fuser":
		if fuserKills(rest) {
			c.deny(st.text, whyFuser)
		}
	case "systemctl":
		if verb := systemctlVerb(rest); verb != "" {
			c.deny(st.text, fmt.Sprintf("systemctl --user %s acts on the user's own services, outside this jail", verb))
		}
	case "loginctl":
		if verb := loginctlVerb(rest); verb != "" {
			c.deny(st.text, fmt.Sprintf("loginctl %s ends login sessions, the user's included", verb))
		}
	case "tmux":
		c.tmux(st, rest)
	case "screen":
		c.screen(st, rest)
	case "set":
		if params, ok := setParams(rest); ok {
			zero := arg{text: "$0", src: "$0"}
			if st.fr.hasParams && len(st.fr.params) > 0 {
				zero = st.fr.params[0]
			}
			st.fr.params = append([]arg{zero}, params...)
			st.fr.hasParams, st.fr.shifted, st.fr.paramPids = true, false, false
		}
	case "shift":
		if st.fr.hasParams && !st.fr.shifted {
			st.fr.shifted = true
			for _, p := range st.fr.params[1:] {
				st.fr.paramPids = st.fr.paramPids || p.pids
			}
		}
	case "printf":
		c.printfVar(rest)
	case "at", "batch":
		c.later(func() { c.at(rest, st.in, st.off) })
	case "npx", "bunx", "pnpx":
		c.npx(st, rest)
	case "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh", "fish",
		"rbash", "lksh", "pdksh", "ksh93", "oksh", "csh", "tcsh":
		c.shell(rest, st.in, st.off)
	case "eval":
		c.script(joinTexts(rest), st.off, st.fr.params, st.fr.hasParams, st.in)
		for _, a := range rest {
			c.runOutput(a, st.off, st.fr.params)
		}
	case "trap":
		c.trap(rest, st.off)
	case "alias":
		for _, a := range rest {
			if _, v, ok := strings.Cut(a.text, "="); ok && !strings.HasPrefix(a.text, "-") {
				c.script(v, st.off, nil, false, feed{})
			}
		}
	case "source", ".":
		if len(rest) > 0 {
			c.scriptFile(rest[0], st.in, st.off, append([]arg{knownArg(name)}, rest[1:]...))
		}
	case "xargs":
		c.xargs(st, rest)
	case "parallel":
		c.parallel(st, rest)
	case "find":
		c.find(st, rest)
	case "fd", "fdfind":
		c.fdExec(st, rest)
	case "watch":
		c.watch(st, rest)
	case "flock":
		c.flock(st, rest)
	case "su", "runuser", "script":
		c.dashC(st, name, rest)
	case "sg":
		if len(rest) > 1 {
			cmd := rest[1:]
			if cmd[0].known && cmd[0].text == "-c" {
				cmd = cmd[1:]
			}
			c.script(joinTexts(cmd), st.off, nil, false, st.in)
		}
	case "ssh":
		c.ssh(st, rest)
	case "busybox", "toybox":
		c.examine(st, rest)
	case "read", "mapfile", "readarray":
		c.read(name, rest, st.in)
	case "git":
		c.git(st, rest, 0)
	case "sed", "gsed":
		c.sed(st, rest)
	case "vim", "vi", "nvim", "ex", "view", "vimdiff", "gvim", "gview", "nvi", "evim":
		c.vim(st, name, rest)
	case "man":
		c.man(st, rest)
	case "less", "more":
		c.less(st, rest)
	case "emacs", "emacsclient", "emacs-nox", "emacs-gtk":
		c.emacs(st, name, rest)
	case "tee":
		for _, a := range rest {
			if a.known && !strings.HasPrefix(a.text, "-") {
				c.writeFile(a.text, feed{texts: st.in.texts, pids: st.in.pids, opaque: st.in.opaque})
			}
		}
		c.writeArgs(rest, st.text)
	default:
		if isInterpreter(name) {
			c.interpreter(st, name, rest)
			return
		}
		if spec, ok := wrapper(name); ok {
			if spec.assigns {
				c.envAssigns(st, rest)
			}
			for _, inner := range unwrap(rest, spec) {
				c.examine(st, inner)
			}
		}
	}
}

// killWhy returns why kill with these arguments is refused, or "".
func killWhy(args []arg) string {
	targets, lone1, quiet := killTargets(args)
	if quiet {
		return ""
	}
	if len(targets) == 0 && lone1 {
		return "it reads -1, which kill takes as \"every process you may signal\" where a target belongs"
	}
	for _, t := range targets {
		if why := targetWhy(t); why != "" {
			return why
		}
	}
	return ""
}

// killSignals reports whether kill with these arguments sends a signal
// to anything.
func killSignals(args []arg) bool {
	targets, lone1, quiet := killTargets(args)
	return !quiet && (len(targets) > 0 || lone1)
}

// killTargets reads kill's arguments as bash's kill reads them: -l and
// -L list signals; -s and -n take a signal and may repeat, the last one
// counting; -SIG counts only while no signal has been given; -- and
// anything else end the options. quiet is true when nothing is signalled
// (a listing, a usage error, or signal 0, which only tests that the
// targets exist); lone1 when the only word after the options is the
// signal -1, which reads like a target.
func killTargets(args []arg) (targets []arg, lone1, quiet bool) {
	args = splitOnce(args)
	sig, sawSig := "", false
	i := 0
options:
	for ; i < len(args); i++ {
		a := args[i]
		t := a.text
		if !a.known {
			if !sawSig && strings.HasPrefix(a.lead, "-") { // kill -$SIG …
				sig, sawSig = "?", true
				continue
			}
			break
		}
		switch {
		case t == "-l" || t == "-L" || t == "--list" || t == "--table" || strings.HasPrefix(t, "--list="):
			return nil, false, true
		case t == "-s" || t == "-n" || t == "--signal" || t == "-q" || t == "--queue":
			if i+1 >= len(args) {
				return nil, false, true // a usage error: nothing is signalled
			}
			i++
			if t == "-q" || t == "--queue" { // procps kill: a value for sigqueue
				continue
			}
			sig, sawSig = "?", true
			if args[i].known {
				sig = args[i].text
			}
		case strings.HasPrefix(t, "--signal="):
			sig, sawSig = t[len("--signal="):], true
		case len(t) > 2 && t[0] == '-' && (t[1] == 's' && isLetter(t[2]) || t[1] == 'n' && t[2] >= '0' && t[2] <= '9'):
			sig, sawSig = t[2:], true
		case t == "--":
			i++
			break options
		case len(t) > 1 && t[0] == '-' && !sawSig:
			sig, sawSig, lone1 = t[1:], true, t == "-1"
		default:
			break options
		}
	}
	if sawSig && isZeroSignal(sig) {
		return nil, false, true
	}
	return args[min(i, len(args)):], lone1, false
}

// whitespace is what bash skips around a number.
const whitespace = " \t\n\v\f\r"

func targetWhy(t arg) string {
	if t.pids {
		return whyPidList
	}
	if t.known {
		return pidWhy(t.text)
	}
	if strings.HasPrefix(strings.TrimLeft(t.lead, whitespace), "-") {
		return fmt.Sprintf("it signals a whole process group (negative target %s)", t.text)
	}
	for _, cand := range t.cands {
		for _, f := range splitFields(cand, t.seps) { // at every separator: the most fields
			if why := pidWhy(f); why != "" {
				return why
			}
		}
	}
	if t.zero {
		return fmt.Sprintf("its target %s is computed at run time and may be 0 or negative, which kill takes as a process group or as every process", t.text)
	}
	return ""
}

// pidWhy explains what is wrong with a literal kill target, or returns "".
// It reads the target as bash does: whitespace around it and one sign are
// allowed.
func pidWhy(s string) string {
	s = strings.Trim(s, whitespace)
	body, neg := s, false
	if body != "" && (body[0] == '-' || body[0] == '+') {
		body, neg = body[1:], body[0] == '-'
	}
	if !isDigits(body) {
		return ""
	}
	digits := strings.TrimLeft(body, "0")
	switch {
	case digits == "":
		return "it signals its own process group (target 0), which takes the agent down with it"
	case neg && digits == "1":
		return "it signals every process you may signal (target -1)"
	case neg:
		return fmt.Sprintf("it signals a whole process group (negative target %s)", s)
	}
	return ""
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isZeroSignal reports whether sig names signal 0, which only tests that
// a process exists.
func isZeroSignal(sig string) bool {
	s := strings.TrimPrefix(strings.ToUpper(sig), "SIG")
	return isDigits(s) && strings.Trim(s, "0") == ""
}

// signalOption returns the first argument that passes a named signal
// (-KILL, -SIGTERM, -s HUP, --signal=INT), or "".
func signalOption(args []arg) string {
	for i, a := range args {
		if !a.known {
			continue
		}
		t := a.text
		switch {
		case t == "-s" || t == "--signal" || t == "-n":
			if i+1 < len(args) && args[i+1].known && isSignalName(args[i+1].text) {
				return t + " " + args[i+1].text
			}
		case strings.HasPrefix(t, "--signal="):
			return t
		case len(t) > 1 && t[0] == '-' && isSignalName(t[1:]):
			return t
		}
	}
	return ""
}

// isSignalName reports whether s names a signal: upper case (KILL), or
// with the SIG prefix in any case (SIGKILL, sigterm).
func isSignalName(s string) bool {
	if len(s) > 3 && strings.EqualFold(s[:3], "SIG") {
		s = strings.ToUpper(s[3:])
	}
	if i := strings.IndexAny(s, "+-"); i > 0 && strings.HasPrefix(s, "RTM") {
		s = s[:i]
	}
	switch s {
	case "HUP", "INT", "QUIT", "ILL", "TRAP", "ABRT", "IOT", "BUS", "FPE", "KILL",
		"USR1", "SEGV", "USR2", "PIPE", "ALRM", "TERM", "STKFLT", "CHLD", "CLD",
		"CONT", "STOP", "TSTP", "TTIN", "TTOU", "URG", "XCPU", "XFSZ", "VTALRM",
		"PROF", "WINCH", "IO", "POLL", "PWR", "SYS", "RTMIN", "RTMAX":
		return true
	}
	return false
}

func fuserKills(args []arg) bool {
	opts, _ := parseOpts(args, optSpec{vals: "n", permute: true, long: []string{"kill", "namespace="}})
	return hasOpt(opts, "k", "kill")
}

// systemctlLongs are systemctl's long options, past and present.
var systemctlLongs = []string{
	"help", "version", "type=", "property=", "all", "reverse", "after", "before", "show-types",
	"failed", "full", "job-mode=", "fail", "irreversible", "ignore-dependencies",
	"ignore-inhibitors", "check-inhibitors=", "value", "user", "system", "global", "capsule=",
	"wait", "no-block", "legend=", "no-legend", "no-pager", "no-wall", "dry-run", "quiet",
	"verbose", "no-warn", "root=", "image=", "image-policy=", "force", "no-reload",
	"kill-whom=", "kill-who=", "kill-value=", "signal=", "no-ask-password", "host=", "machine=",
	"runtime", "lines=", "output=", "plain", "state=", "recursive", "with-dependencies",
	"preset-mode=", "firmware-setup", "boot-loader-menu=", "boot-loader-entry=",
	"reboot-argument=", "kernel-cmdline=", "timestamp=", "read-only", "mkdir", "marked",
	"message=", "show-transaction", "what=", "stdin", "when=", "drop-in=", "now", "privileged",
}

// systemctlVerb returns the refused verb of a systemctl --user command, or
// "". A verb only known at run time is refused too: the guard cannot tell
// status from stop. Options are read as getopt_long reads them, prefixes
// included, wherever they appear.
func systemctlVerb(args []arg) string {
	opts, ops := parseOpts(args, optSpec{vals: "tpPsHMnoC", permute: true, long: systemctlLongs})
	user, now, isolate := false, false, false
	for _, o := range opts {
		switch {
		case o.is("user"):
			user = true
		case o.long && o.is("system", "global"):
			user = user && o.alts > 1
		case o.is("now"):
			now = true
		case o.is("job-mode"):
			isolate = isolate || o.hasVal && (!o.val.known || o.val.text == "isolate")
		}
	}
	if !user || len(ops) == 0 {
		return ""
	}
	verb := ops[0]
	if !verb.known {
		return verb.text
	}
	if isolate {
		return verb.text + " --job-mode=isolate"
	}
	switch verb.text {
	case "stop", "kill", "restart", "try-restart", "reload-or-restart", "try-reload-or-restart",
		"condrestart", "force-reload", "isolate", "exit", "halt", "poweroff", "reboot",
		"kexec", "soft-reboot", "freeze", "default", "rescue", "emergency", "set-property":
		// set-property kills by effect: MemoryMax=1M or TasksMax=1 ends
		// or starves what runs in the unit.
		return verb.text
	case "disable", "mask":
		if now {
			return verb.text + " --now"
		}
	case "start", "enable", "reenable":
		for _, u := range ops[1:] {
			if u.known && endsManager(u.text) {
				return verb.text + " " + u.text
			}
		}
	}
	return ""
}

// endsManager reports whether starting a unit stops the service manager
// and everything it runs.
func endsManager(unit string) bool {
	switch unit {
	case "exit.target", "shutdown.target", "halt.target", "poweroff.target", "reboot.target",
		"kexec.target", "soft-reboot.target", "rescue.target", "emergency.target", "final.target":
		return true
	}
	return false
}

// loginctlLongs are loginctl's long options, past and present.
var loginctlLongs = []string{
	"help", "version", "property=", "value", "all", "full", "no-pager", "no-legend", "json=",
	"no-ask-password", "kill-whom=", "kill-who=", "signal=", "host=", "machine=", "lines=",
	"output=",
}

// loginctlVerb returns a refused loginctl verb, or "".
func loginctlVerb(args []arg) string {
	_, ops := parseOpts(args, optSpec{vals: "pPsHMno", long: loginctlLongs})
	if len(ops) == 0 || !ops[0].known {
		return ""
	}
	return sessionVerb(ops[0].text)
}

func sessionVerb(t string) string {
	if strings.HasPrefix(t, "terminate-") || strings.HasPrefix(t, "kill-") {
		return t
	}
	return ""
}

// tmuxCommands lists tmux's commands, each with its alias, so that a
// command word resolves as tmux resolves it: an exact name or alias, or
// else the commands whose name it is a prefix of.
var tmuxCommands = []string{
	"attach-session attach", "bind-key bind", "break-pane breakp", "capture-pane capturep",
	"choose-buffer", "choose-client", "choose-tree", "clear-history clearhist",
	"clear-prompt-history clearphist", "clock-mode", "command-prompt", "confirm-before confirm",
	"copy-mode", "customize-mode", "delete-buffer deleteb", "detach-client detach",
	"display-menu menu", "display-message display", "display-panes displayp",
	"display-popup popup", "find-window findw", "has-session has", "if-shell if",
	"join-pane joinp", "kill-pane killp", "kill-server", "kill-session", "kill-window killw",
	"last-pane lastp", "last-window last", "link-window linkw", "list-buffers lsb",
	"list-clients lsc", "list-commands lscm", "list-keys lsk", "list-panes lsp",
	"list-sessions ls", "list-windows lsw", "load-buffer loadb", "lock-client lockc",
	"lock-server lock", "lock-session locks", "move-pane movep", "move-window movew",
	"new-session new", "new-window neww", "next-layout nextl", "next-window next",
	"paste-buffer pasteb", "pipe-pane pipep", "previous-layout prevl", "previous-window prev",
	"refresh-client refresh", "rename-session rename", "rename-window renamew",
	"resize-pane resizep", "resize-window resizew", "respawn-pane respawnp",
	"respawn-window respawnw", "rotate-window rotatew", "run-shell run", "save-buffer saveb",
	"select-layout selectl", "select-pane selectp", "select-window selectw", "send-keys send",
	"send-prefix", "server-access", "set-buffer setb", "set-environment setenv", "set-hook",
	"set-option set", "set-window-option setw", "show-buffer showb", "show-environment showenv",
	"show-hooks", "show-messages showmsgs", "show-options show", "show-prompt-history showphist",
	"show-window-options showw", "source-file source", "split-window splitw",
	"start-server start", "suspend-client suspendc", "swap-pane swapp", "swap-window swapw",
	"switch-client switchc", "unbind-key unbind", "unlink-window unlinkw", "wait-for wait",
}

// tmuxCommandNames resolves a tmux command word to the commands it may
// name.
func tmuxCommandNames(t string) []string {
	for _, e := range tmuxCommands {
		name, alias, _ := strings.Cut(e, " ")
		if t == name || t == alias {
			return []string{name}
		}
	}
	var out []string
	for _, e := range tmuxCommands {
		name, _, _ := strings.Cut(e, " ")
		if t != "" && strings.HasPrefix(name, t) {
			out = append(out, name)
		}
	}
	return out
}

// tmuxValueOptions are the options of a tmux command that take a value.
func tmuxValueOptions(name string) string {
	switch name {
	case "new-session":
		return "cefFnstxy"
	case "new-window":
		return "ceFnt"
	case "split-window":
		return "ceFlpt"
	case "respawn-pane", "respawn-window":
		return "cet"
	case "display-popup":
		return "bcdehsStTwxy"
	case "run-shell":
		return "cdt"
	case "confirm-before":
		return "cpt"
	case "command-prompt":
		return "IptT"
	case "bind-key":
		return "NT"
	case "send-keys":
		return "cNt"
	case "pipe-pane", "if-shell", "set-hook":
		return "t"
	}
	return "t" // most commands take a target
}

// tmux checks a tmux invocation. The tmux server may run outside the
// jail, so what it runs is checked as if the input ran it: shell commands
// given to run-shell, new-session, new-window, split-window,
// respawn-pane, if-shell, display-popup and pipe-pane, and the keys
// send-keys types. kill-server and kill-session are refused.
func (c *checker) tmux(st site, args []arg) {
	opts, ops := parseOpts(args, optSpec{vals: "cfLST"})
	for _, v := range optVals(opts, "c") { // tmux -c runs a shell command
		c.runText(v, st.off, nil, false, feed{})
	}
	// A server of the agent's own (tmux -L claude-2-x, or one this
	// command line starts) holds only the agent's sessions.
	server, private := optVal(opts, "L", "S")
	if private && server.known {
		server = knownArg(baseName(server.text))
	}
	was := c.ownTmux
	c.ownTmux = private && c.ownSession(server)
	c.tmuxSequence(st, ops)
	c.ownTmux = was
	if private && tmuxStarts(ops) {
		c.track.addSession(server)
	}
}

// tmuxStarts reports whether a tmux command line starts a session.
func tmuxStarts(ops []arg) bool {
	if len(ops) == 0 || !ops[0].known {
		return false
	}
	names := tmuxCommandNames(ops[0].text)
	return len(names) == 1 && names[0] == "new-session"
}

// tmuxSequence splits a tmux command sequence at its ; separators and
// checks each command.
func (c *checker) tmuxSequence(st site, args []arg) {
	var cmd []arg
	for _, a := range args {
		if c.stopped() {
			return
		}
		t := a.text
		switch {
		case a.known && (t == ";" || t == `\;`):
			c.tmuxCommand(st, cmd)
			cmd = nil
		case a.known && strings.HasSuffix(t, `\;`):
			cmd = append(cmd, knownArg(t[:len(t)-2]+";"))
		case a.known && strings.HasSuffix(t, ";"):
			cmd = append(cmd, knownArg(t[:len(t)-1]))
			c.tmuxCommand(st, cmd)
			cmd = nil
		default:
			cmd = append(cmd, a)
		}
	}
	c.tmuxCommand(st, cmd)
}

func (c *checker) tmuxCommand(st site, words []arg) {
	if len(words) == 0 || !words[0].known || !c.step(st.text, len(words)) {
		return
	}
	names := tmuxCommandNames(words[0].text)
	if len(names) == 0 {
		return
	}
	if len(names) > 1 {
		// Ambiguous: tmux refuses it, unless the server reads it as an
		// older command; lean towards the worse reading.
		kills := true
		for _, n := range names {
			kills = kills && (n == "kill-server" || n == "kill-session")
		}
		if kills {
			c.denyInstead(st.text, fmt.Sprintf(whyTmux, words[0].text), insteadSession)
		}
		return
	}
	name := names[0]
	opts, ops := parseOpts(words[1:], optSpec{vals: tmuxValueOptions(name)})
	flags := ""
	for _, o := range opts {
		if !o.hasVal {
			flags += o.name
		}
	}
	if why := c.tmuxKill(name, opts); why != "" {
		c.denyInstead(st.text, fmt.Sprintf(why, words[0].text), insteadSession)
		return
	}
	switch name {
	case "send-keys":
		c.script(joinTexts(ops), st.off, nil, false, feed{})
	case "run-shell":
		for _, o := range ops[:min(1, len(ops))] {
			if strings.IndexByte(flags, 'C') >= 0 {
				c.tmuxText(st, o)
			} else {
				c.runText(o, st.off, nil, false, feed{})
			}
		}
	case "new-session", "new-window", "split-window", "respawn-pane", "respawn-window",
		"display-popup", "pipe-pane":
		switch {
		case len(ops) == 1:
			c.runText(ops[0], st.off, nil, false, feed{})
		case len(ops) > 1:
			c.examine(st.withIn(feed{}), ops)
		}
	case "if-shell":
		for k, o := range ops {
			if k > 0 {
				c.tmuxText(st, o)
			} else if strings.IndexByte(flags, 'F') < 0 {
				c.runText(o, st.off, nil, false, feed{})
			}
		}
	case "confirm-before", "command-prompt":
		for _, o := range ops {
			c.tmuxText(st, o)
		}
	case "bind-key":
		if len(ops) > 1 {
			c.tmuxSequence(st, ops[1:])
		}
	case "set-hook":
		if len(ops) > 1 {
			c.tmuxText(st, ops[1])
		}
	}
}

// tmuxKill returns why a tmux command ends what is not the agent's own
// (a clause with %s for the command as written), or "". kill-server ends
// every session; kill-session ends one this command line did not start
// (see ownSession); -a on kill-session, kill-window and kill-pane ends
// every other one; detach-client -P hangs up the client's shell. On a
// server of the agent's own, everything is the agent's.
func (c *checker) tmuxKill(name string, opts []opt) string {
	if c.ownTmux && name != "new-session" {
		return ""
	}
	switch name {
	case "kill-server":
		return whyTmux
	case "new-session":
		if s, ok := optVal(opts, "s"); ok {
			c.track.addSession(s)
		}
	case "kill-session":
		if hasOpt(opts, "a") {
			return "tmux %s -a ends every other session, the user's included"
		}
		t, ok := optVal(opts, "t")
		if !ok || !c.ownSession(tmuxSession(c.jailNamed(t))) {
			return "tmux %s ends a session this command line did not start, which may be the user's"
		}
	case "kill-window", "kill-pane":
		if hasOpt(opts, "a") {
			return "tmux %s -a ends every other window or pane, the user's included"
		}
	case "detach-client":
		if hasOpt(opts, "P") {
			return "tmux %s -P hangs up the shell of the client, which may be the user's"
		}
	}
	return ""
}

// tmuxSession is the session part of a tmux target: =name:1.2 -> name.
func tmuxSession(t arg) arg {
	if !t.known {
		return t
	}
	s := strings.TrimPrefix(t.text, "=")
	s, _, _ = strings.Cut(s, ":")
	return knownArg(s)
}

// tmuxText checks a string that tmux parses as commands (if-shell's
// commands, confirm-before, run-shell -C). Its syntax is close enough to
// the shell's to parse it as a script.
func (c *checker) tmuxText(st site, a arg) {
	if !c.step(a.text, 1+len(a.text)/64) {
		return
	}
	if c.depth >= maxDepth {
		c.deny(a.text, "commands nest deeper than the guard is willing to follow")
		return
	}
	c.depth++
	defer func() { c.depth-- }()
	r := c.parse(a.text)
	if r.err != nil {
		if w := coarseKillWord(a.text); w != "" {
			c.deny(st.text, "tmux runs text the guard cannot parse, and "+quoteWord(w)+" appears in it as a word")
		}
		return
	}
	sub := &frame{src: a.text, base: st.off}
	if st.fr.base >= 0 {
		sub.base = st.fr.base
	}
	syntax.Walk(r.file, func(n syntax.Node) bool {
		if call, ok := n.(*syntax.CallExpr); ok && !c.stopped() {
			c.tmuxSequence(st.withFrame(sub), c.fields(sub, call.Args))
		}
		return !c.stopped()
	})
}

// screen refuses -X quit and -X kill (also through eval and at), checks
// what -X screen and -X exec run, checks -X stuff text as a script, and
// checks the command that a new screen session runs.
func (c *checker) screen(st site, args []arg) {
	for _, a := range args {
		if a.known && (a.text == "-ls" || a.text == "-list" || a.text == "-wipe") {
			return
		}
	}
	// -d, -r and -x take the session as an optional next word, which
	// getopt cannot express: take it out first.
	var picked arg
	for i := 0; i+1 < len(args); i++ {
		t, next := args[i], args[i+1]
		if t.known && len(t.text) > 1 && t.text[0] == '-' && strings.ContainsAny(t.text[len(t.text)-1:], "dDrRx") &&
			!(next.known && strings.HasPrefix(next.text, "-")) && hasSend(args[i+2:]) {
			picked = next
			args = append(args[:i+1:i+1], args[i+2:]...)
			break
		}
	}
	opts, cmd := parseOpts(args, optSpec{vals: "pcehtTsS"})
	send := hasOpt(opts, "X", "Q")
	attach := hasOpt(opts, "d", "D", "r", "R", "x")
	session, named := optVal(opts, "S")
	if send {
		if !named {
			session = picked
		}
		c.screenCommand(st, cmd, session, 0)
		return
	}
	if named {
		c.track.addSession(session)
	}
	c.examine(st.withIn(feed{}), cmd)
	if attach && len(cmd) > 1 { // -d, -r and -x may take the first word as a session name
		c.examine(st.withIn(feed{}), cmd[1:])
	}
}

// hasSend reports whether screen's words send a command (-X, -Q).
func hasSend(args []arg) bool {
	for _, a := range args {
		if a.known && len(a.text) > 1 && a.text[0] == '-' && a.text[1] != '-' && strings.ContainsAny(a.text, "XQ") {
			return true
		}
	}
	return false
}

// screenCommand checks a command sent to a screen session with -X.
func (c *checker) screenCommand(st site, words []arg, session arg, depth int) {
	if len(words) == 0 || !c.step(st.text, len(words)) {
		return
	}
	if depth >= maxDepth {
		c.deny(st.text, "commands nest deeper than the guard is willing to follow")
		return
	}
	w := words[0]
	if !w.known {
		c.deny(st.text, "it sends screen a command only known at run time, which may end terminal sessions")
		return
	}
	switch w.text {
	case "quit", "kill", "pow_detach":
		if !c.ownSession(session) {
			c.denyInstead(st.text, fmt.Sprintf(whyScreen, w.text), insteadScreen)
		}
	case "stuff":
		if len(words) > 1 {
			c.script(ansiC(words[1].text), st.off, nil, false, feed{})
		}
	case "screen":
		_, rest := parseOpts(words[1:], optSpec{vals: "htT"})
		if len(rest) > 0 && rest[0].known && isDigits(rest[0].text) {
			rest = rest[1:]
		}
		c.examine(st.withIn(feed{}), rest)
	case "exec":
		i := 1
		if i < len(words) && words[i].known && words[i].text != "" && strings.Trim(words[i].text, ".!|:") == "" {
			i++
		}
		if i < len(words) {
			c.examine(st.withIn(feed{}), words[i:])
		}
	case "eval":
		for _, a := range words[1:] {
			c.screenCommand(st, splitArgs(a.text), session, depth+1)
		}
	case "at":
		if len(words) > 2 {
			c.screenCommand(st, words[2:], session, depth+1)
		}
	}
}

func isInterpreter(name string) bool {
	switch name {
	case "perl", "ruby", "node", "nodejs", "deno", "bun", "php", "lua", "luajit",
		"tclsh", "wish", "expect", "awk", "gawk", "mawk", "nawk", "Rscript", "osascript", "pypy", "pypy3":
		return true
	}
	return strings.HasPrefix(name, "python")
}

// interpSpec describes where an interpreter finds inline code on its
// command line.
type interpSpec struct {
	opts    optSpec
	code    []string // options whose value is code: python -c, perl -e, node --eval
	file    []string // options whose value is a program file: awk -f
	stop    []string // options after which no code follows: python -m
	program bool     // the first operand is the program text (awk)
	sub     string   // a subcommand whose operand is code (deno eval)
}

func interpreterSpec(name string) interpSpec {
	switch name {
	case "perl":
		return interpSpec{opts: optSpec{vals: "eE", opt: "iIMmxCdDFl0"}, code: []string{"e", "E"}}
	case "ruby":
		return interpSpec{opts: optSpec{vals: "eIrC", opt: "EFWTKx0il"}, code: []string{"e"}}
	case "node", "nodejs", "bun":
		return interpSpec{opts: optSpec{vals: "epr", long: []string{"eval=", "print=", "require=", "import=", "loader=",
			"experimental-loader=", "input-type=", "title=", "env-file=", "conditions="}}, code: []string{"e", "p", "eval", "print"}}
	case "deno":
		return interpSpec{sub: "eval"}
	case "php":
		return interpSpec{opts: optSpec{vals: "rBREfcdzt"}, code: []string{"r", "B", "R", "E"}, file: []string{"f"}}
	case "lua", "luajit":
		return interpSpec{opts: optSpec{vals: "el"}, code: []string{"e"}}
	case "Rscript", "osascript":
		return interpSpec{opts: optSpec{vals: "e"}, code: []string{"e"}}
	case "tclsh", "wish":
		return interpSpec{}
	case "expect":
		return interpSpec{opts: optSpec{vals: "cfbD"}, code: []string{"c"}, file: []string{"f", "b"}}
	case "awk", "gawk", "mawk", "nawk":
		return interpSpec{opts: optSpec{vals: "efEvFil", long: []string{"source=", "file=", "exec=", "assign=", "field-separator=", "include=", "load="}},
			code: []string{"e", "source"}, file: []string{"f", "E", "file", "exec"}, program: true}
	}
	return interpSpec{opts: optSpec{vals: "cmWXQ", stop: "m"}, code: []string{"c"}, stop: []string{"m"}} // python
}

// interpreter looks at the code given to python, perl, awk and the like:
// inline code operands (-c, -e, awk's program), a program file the input
// writes, and the program read from standard input. Arguments and input
// data are not code: python3 -m pytest -k killall and awk '/pkill/' log
// run nothing. Code is refused when it runs a command (system, exec,
// popen, subprocess, backticks, …) and names pkill or killall, when its
// input names them and it runs commands, or when it calls kill while
// reading a PID listing.
func (c *checker) interpreter(st site, name string, args []arg) {
	sp := interpreterSpec(name)
	var code []arg
	given, stop := false, false
	addFile := func(f arg) {
		given = true
		if f.known {
			for _, t := range c.written(f.text) {
				code = append(code, knownArg(t))
			}
		}
	}
	opts, ops := parseOpts(args, sp.opts)
	for _, o := range opts {
		switch {
		case o.is(sp.code...):
			given = true
			code = append(code, o.val)
		case o.is(sp.file...):
			addFile(o.val)
		case o.is(sp.stop...):
			stop = true
		}
	}
	stdinCode := false
	switch {
	case given || stop:
	case sp.sub != "":
		if len(ops) > 1 && ops[0].known && ops[0].text == sp.sub {
			code = append(code, ops[1])
		}
	case sp.program:
		if len(ops) > 0 {
			code = append(code, ops[0])
		}
	case len(ops) > 0:
		if f := ops[0]; f.known && (f.text == "-" || f.text == "/dev/stdin") {
			stdinCode = true
		} else {
			addFile(f)
		}
	default:
		stdinCode = true
	}
	if stdinCode {
		for _, t := range st.in.texts {
			code = append(code, knownArg(t))
		}
	}
	for _, a := range code {
		if c.stopped() {
			return
		}
		src := st.in
		src.pids = src.pids || a.pids
		c.code(st.withIn(src), langOf(name), a.text, stdinCode, 0)
	}
}

// skeletonKillWord returns the tool that kills by name which a command
// word of unknown value may spell, given its fixed text cut at each
// dynamic part (arg.skel), or "". Each dynamic part may be empty or hold
// anything, so pk${X}ill and pk$(true)ill spell pkill whatever the
// guard knows of X; failing closed is the point. Only the part after the
// last fixed slash names the program; dynamic parts are taken to hold no
// slash, or ./bin/$tool would match everything. kill itself is left to
// the rule for its arguments (kill <PID> is fine), and fewer than two
// fixed characters say too little to refuse on.
func skeletonKillWord(skel []string) string {
	if len(skel) < 2 {
		return ""
	}
	for i := len(skel) - 1; i >= 0; i-- {
		if j := strings.LastIndexByte(skel[i], '/'); j >= 0 {
			skel = append([]string{skel[i][j+1:]}, skel[i+1:]...)
			break
		}
	}
	n := 0
	for _, s := range skel {
		n += len(s)
	}
	if n < 2 || len(skel) < 2 {
		return ""
	}
	for _, w := range [...]string{"pkill", "killall", "killall5", "skill"} {
		if gapsMatch(w, skel) {
			return w
		}
	}
	return ""
}

// gapsMatch reports whether s is skel's pieces in order with anything
// (or nothing) between them: the glob skel[0]*skel[1]*…*skel[n-1].
func gapsMatch(s string, skel []string) bool {
	first, last := skel[0], skel[len(skel)-1]
	if len(first)+len(last) > len(s) || !strings.HasPrefix(s, first) || !strings.HasSuffix(s, last) {
		return false
	}
	mid := s[len(first) : len(s)-len(last)]
	for _, p := range skel[1 : len(skel)-1] {
		i := strings.Index(mid, p)
		if i < 0 {
			return false
		}
		mid = mid[i+len(p):]
	}
	return true
}

// mentionedKillWord returns a kill tool named in s, or "".
func mentionedKillWord(s string) string {
	for _, tok := range tokens(dequote(s)) {
		switch tok {
		case "kill", "pkill", "killall", "killall5", "skill":
			return tok
		}
	}
	return ""
}

// coarseKillWord is the fallback for text that does not parse: the first
// kill word that appears in it as a word, or "". $'…' strings are decoded
// first.
func coarseKillWord(s string) string {
	if strings.Contains(s, "$'") {
		s += " " + decodeDollarQuotes(s)
	}
	for _, tok := range tokens(dequote(s)) {
		switch baseName(tok) {
		case "kill", "pkill", "killall", "killall5", "skill", "kill-server", "kill-session":
			return tok
		}
	}
	return ""
}

// decodeDollarQuotes replaces each $'…' in s by its decoded value.
func decodeDollarQuotes(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "$'")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		j := i + 2
		for j < len(s) && s[j] != '\'' {
			if s[j] == '\\' {
				j++
			}
			j++
		}
		b.WriteString(ansiC(s[i+2 : min(j, len(s))]))
		s = s[min(j+1, len(s)):]
	}
}

func quoteWord(w string) string {
	return strconv.Quote(w)
}

// isPidLister reports whether a command prints PIDs that a kill could be
// fed with.
func isPidLister(name string) bool {
	switch name {
	case "pgrep", "pidof", "ps", "lsof", "fuser", "pstree", "pidwait", "ss", "netstat", "top", "htop", "atop", "pgrep.exe":
		return true
	}
	return false
}
