package guard

// The guard's policy. The rules are listed here and applied by the code
// below; wrappers.go only finds the commands that other commands run.
//
//   - pkill, killall, killall5 and skill are refused whatever their
//     arguments: they choose their victims by name, user or terminal.
//   - fuser is refused with -k (or --kill).
//   - kill is refused when a target is -1, 0 or a negative process group
//     (and for a lone kill -1, which reads like one), or when a target comes
//     from a PID listing (pgrep, pidof, ps, lsof, fuser, pstree) through
//     $(…), backticks, a variable or array, read, mapfile, or the input of
//     xargs or parallel. kill -l and signal 0 are always fine; so are
//     kill <PID>, kill %job and kill "$pid".
//   - systemctl --user stop, kill, restart, isolate and their kin are
//     refused; so are loginctl terminate-* and kill-*, tmux kill-server and
//     kill-session, and screen -X quit.
//   - A command word only known at run time is refused when its text names
//     a kill tool, when it passes a named signal, or when kill with the same
//     arguments would be refused. Values the input assigns are tried too.
//   - Text that a shell will run is checked as a script: sh -c and its
//     kin, eval, trap, alias, here-documents, here-strings and pipes into a
//     shell, watch, ssh, su -c, script -c, parallel, tmux send-keys.
//     Wrappers (sudo, env, timeout, nohup, xargs, find -exec, …) are seen
//     through to the command they start.
//   - A script that the same input writes (cat > run.sh <<EOF, echo … >
//     x.sh, tee) is checked where the input runs it (bash run.sh, ./run.sh,
//     source, python3 x.py).
//   - Inline code given to an interpreter (python -c, perl -e, awk, …) is
//     refused if it names pkill or killall, or names kill while reading a
//     PID listing.
//   - Text that does not parse is refused if a kill word appears in it as
//     a word.
//
// Name sets are switch statements, not maps, so that the package does no
// work at start-up: the hook runs as a fresh process for every tool call.

import (
	"fmt"
	"strconv"
	"strings"
)

// specialNames lists every command name the rules below treat specially.
// A command word that is a glob is matched against it.
var specialNames = []string{
	"alias", "ash", "awk", "bash", "builtin", "busybox", "chroot", "chrt", "command", "csh",
	"dash", "doas", "env", "eval", "exec", "fd", "fdfind", "find", "fish", "flock", "fuser",
	"gawk", "ionice", "kill", "killall", "killall5", "ksh", "ksh93", "lksh", "loginctl",
	"ltrace", "mapfile",
	"mawk", "mksh", "nawk", "nice", "node", "nohup", "nsenter", "parallel", "perl", "php",
	"oksh", "pdksh", "pkill", "posh", "prlimit", "python", "python3", "rbash", "read",
	"readarray", "ruby", "runuser",
	"screen", "script", "setpriv", "setsid", "sg", "sh", "skill", "source", "ssh", "stdbuf",
	"strace", "su", "sudo", "systemctl", "systemd-run", "taskset", "tcsh", "tee", "time",
	"timeout", "tmux", "toybox", "trap", "unbuffer", "unshare", "watch", "xargs", "yash",
	"zsh",
}

// Why clauses, completing "aisan guard refused `cmd`: …".
const (
	whyPidList = "it takes its targets from a process listing (pgrep, pidof, ps, lsof), which kills by name in two steps"
	whyFuser   = "fuser -k kills every process that has the file, mount or port open, whoever started it"
	whyScreen  = "screen -X %s ends terminal sessions that may belong to the user"
	whyTmux    = "tmux %s ends terminal sessions that may belong to the user"
)

// examine decides about one simple command, given as resolved words.
func (c *checker) examine(fr *frame, args []arg, in feed, text string, off int) {
	if len(args) == 0 || !c.step(text, len(args)) {
		return
	}
	name := args[0]
	if !name.known {
		c.dynamic(fr, args, in, text, off)
		return
	}
	if name.meta {
		if alts := nameAlternatives(name); len(alts) > 0 {
			for _, alt := range alts {
				c.examine(fr, append(alt, args[1:]...), in, text, off)
			}
			return
		}
	}
	c.record(name.text, args[1:], false, off)
	if def, ok := c.funcs[name.text]; ok {
		c.callFunc(def, name.text, args[1:], in)
	}
	if strings.Contains(name.text, "/") {
		// A script written earlier in the same input, run as ./run.sh.
		for _, t := range c.written(name.text) {
			c.script(t, off, args, true, in)
		}
	}
	c.byName(fr, baseName(name.text), args[1:], in, text, off)
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
func (c *checker) dynamic(fr *frame, args []arg, in feed, text string, off int) {
	n := args[0]
	c.record(n.text, args[1:], true, off)
	if w := mentionedKillWord(n.src + " " + n.text); w != "" {
		c.deny(text, fmt.Sprintf("its command name is computed at run time and its text names %s", w))
		return
	}
	if s := signalOption(args[1:]); s != "" {
		c.deny(text, fmt.Sprintf("its command name is computed at run time and it passes the signal option %s, as kill would", s))
		return
	}
	if why := killWhy(args[1:]); why != "" {
		c.deny(text, "its command name is computed at run time, and if it is kill, "+why)
		return
	}
	if len(n.cands) == 0 {
		// Nothing in the input says what the word holds. It may be a
		// wrapper ($SUDO pkill …) or a shell ($SHELL -c …).
		c.examine(fr, args[1:], in, text, off)
		for _, a := range args[1:] {
			if a.known && a.text == "-c" {
				c.shell(args[1:], in, off)
				break
			}
		}
		return
	}
	for _, cand := range n.cands {
		words := []string{cand}
		if n.split {
			words = strings.Fields(cand)
		}
		if len(words) == 0 {
			continue
		}
		alt := make([]arg, 0, len(words)+len(args)-1)
		for _, w := range words {
			alt = append(alt, knownArg(w))
		}
		c.examine(fr, append(alt, args[1:]...), in, text, off)
	}
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
func (c *checker) byName(fr *frame, name string, rest []arg, in feed, text string, off int) {
	switch name {
	case "pkill", "killall", "killall5", "skill":
		c.deny(text, name+" picks its victims by name or attribute, not by PID, so it can hit processes that are not yours")
	case "kill":
		if why := killWhy(rest); why != "" {
			c.deny(text, why)
		}
	case "fuser":
		if fuserKills(rest) {
			c.deny(text, whyFuser)
		}
	case "systemctl":
		if verb := systemctlVerb(rest); verb != "" {
			c.deny(text, fmt.Sprintf("systemctl --user %s acts on the user's own services, outside this jail", verb))
		}
	case "loginctl":
		if verb := loginctlVerb(rest); verb != "" {
			c.deny(text, fmt.Sprintf("loginctl %s ends login sessions, the user's included", verb))
		}
	case "tmux":
		c.tmux(rest, text, off)
	case "screen":
		c.screen(rest, text, off)
	case "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh", "fish",
		"rbash", "lksh", "pdksh", "ksh93", "oksh", "csh", "tcsh":
		c.shell(rest, in, off)
	case "eval":
		c.script(joinTexts(rest), off, fr.params, fr.hasParams, in)
		for _, a := range rest {
			c.runOutput(a, off, fr.params)
		}
	case "trap":
		c.trap(rest, off)
	case "alias":
		for _, a := range rest {
			if _, v, ok := strings.Cut(a.text, "="); ok && !strings.HasPrefix(a.text, "-") {
				c.script(v, off, nil, false, feed{})
			}
		}
	case "source", ".":
		if len(rest) > 0 {
			c.scriptFile(rest[0], in, off, append([]arg{knownArg(name)}, rest[1:]...))
		}
	case "xargs":
		c.xargs(fr, rest, in, text, off)
	case "parallel":
		c.parallel(rest, in, text, off)
	case "find":
		c.find(fr, rest, text, off)
	case "fd", "fdfind":
		c.fdExec(fr, rest, text, off)
	case "watch":
		c.watch(fr, rest, in, text, off)
	case "flock":
		c.flock(fr, rest, in, text, off)
	case "su", "runuser", "script":
		c.dashC(fr, name, rest, in, text, off)
	case "sg":
		if len(rest) > 1 {
			cmd := rest[1:]
			if cmd[0].known && cmd[0].text == "-c" {
				cmd = cmd[1:]
			}
			c.script(joinTexts(cmd), off, nil, false, in)
		}
	case "ssh":
		c.ssh(rest, off)
	case "busybox", "toybox":
		c.examine(fr, rest, in, text, off)
	case "read", "mapfile", "readarray":
		c.read(name, rest, in)
	case "tee":
		for _, a := range rest {
			if a.known && !strings.HasPrefix(a.text, "-") {
				c.writeFile(a.text, in.texts)
			}
		}
	default:
		if isInterpreter(name) {
			c.interpreter(rest, in, text)
			return
		}
		if spec, ok := wrapper(name); ok {
			for _, inner := range unwrap(rest, spec) {
				c.examine(fr, inner, in, text, off)
			}
		}
	}
}

// killWhy returns why kill with these arguments is refused, or "".
// Only the first argument may be an option, as in bash's kill; -- may
// follow it.
func killWhy(args []arg) string {
	if len(args) == 0 {
		return ""
	}
	i, sig, sigSet := 0, "", false
	first := args[0]
	switch t := first.text; {
	case !first.known:
		if strings.HasPrefix(first.lead, "-") { // kill -$SIG …
			i, sig, sigSet = 1, "?", true
		}
	case t == "-l" || t == "-L" || t == "--list" || t == "--table" || strings.HasPrefix(t, "--list="):
		return ""
	case t == "-s" || t == "-n" || t == "--signal":
		i, sigSet = 2, true
		if len(args) > 1 && args[1].known {
			sig = args[1].text
		} else {
			sig = "?"
		}
	case strings.HasPrefix(t, "--signal="):
		i, sig, sigSet = 1, strings.TrimPrefix(t, "--signal="), true
	case t == "--":
	case len(t) > 1 && t[0] == '-':
		i, sig, sigSet = 1, t[1:], true
	}
	if sigSet && isZeroSignal(sig) {
		return ""
	}
	if i < len(args) && args[i].known && args[i].text == "--" {
		i++
	}
	if i >= len(args) {
		if first.known && first.text == "-1" {
			return "it reads -1, which kill takes as \"every process you may signal\" where a target belongs"
		}
		return ""
	}
	for _, t := range args[i:] {
		if why := targetWhy(t); why != "" {
			return why
		}
	}
	return ""
}

func targetWhy(t arg) string {
	if t.pids {
		return whyPidList
	}
	if t.known {
		return pidWhy(t.text)
	}
	if strings.HasPrefix(t.lead, "-") {
		return fmt.Sprintf("it signals a whole process group (negative target %s)", t.text)
	}
	for _, cand := range t.cands {
		for _, f := range strings.Fields(cand) {
			if why := pidWhy(f); why != "" {
				return why
			}
		}
	}
	return ""
}

// pidWhy explains what is wrong with a literal kill target, or returns "".
func pidWhy(s string) string {
	neg := strings.HasPrefix(s, "-")
	digits := strings.TrimLeft(strings.TrimPrefix(s, "-"), "0")
	if !isDigits(strings.TrimPrefix(s, "-")) {
		return ""
	}
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
	for _, a := range args {
		t := a.text
		if !a.known || len(t) < 2 || t[0] != '-' {
			continue
		}
		if t == "--kill" {
			return true
		}
		if t[1] != '-' && strings.IndexByte(t, 'k') > 0 {
			return true
		}
	}
	return false
}

// systemctlVerb returns the refused verb of a systemctl --user command, or
// "". A verb only known at run time is refused too: the guard cannot tell
// status from stop.
func systemctlVerb(args []arg) string {
	user, now := false, false
	verb, haveVerb, dynamicVerb := "", false, false
	for i := 0; i < len(args); i++ {
		a := args[i]
		t := a.text
		switch {
		case !a.known:
			if !haveVerb {
				verb, haveVerb, dynamicVerb = t, true, true
			}
		case t == "--user":
			user = true
		case t == "--now":
			now = true
		case strings.HasPrefix(t, "--"):
			if !strings.Contains(t, "=") && systemctlLongArg(t[2:]) {
				i++
			}
		case len(t) > 1 && t[0] == '-':
			if strings.IndexByte("tpPsHMno", t[len(t)-1]) >= 0 {
				i++
			}
		case !haveVerb:
			verb, haveVerb = t, true
		}
	}
	if !user || !haveVerb {
		return ""
	}
	if dynamicVerb {
		return verb
	}
	switch verb {
	case "stop", "kill", "restart", "try-restart", "reload-or-restart", "try-reload-or-restart",
		"condrestart", "force-reload", "isolate", "exit", "halt", "poweroff", "reboot",
		"kexec", "soft-reboot", "freeze":
		return verb
	case "disable", "mask":
		if now {
			return verb + " --now"
		}
	}
	return ""
}

func systemctlLongArg(name string) bool {
	switch name {
	case "type", "property", "state", "signal", "kill-whom", "kill-value", "host", "machine",
		"lines", "output", "job-mode", "root", "image", "what", "timestamp", "preset-mode",
		"message", "boot-loader-entry", "boot-loader-menu", "reboot-argument", "drop-in",
		"when", "check-inhibitors", "image-policy", "legend":
		return true
	}
	return false
}

// loginctlVerb returns a refused loginctl verb, or "".
func loginctlVerb(args []arg) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		t := a.text
		if !a.known {
			return ""
		}
		if strings.HasPrefix(t, "-") {
			if t == "-p" || t == "-P" || t == "-s" || t == "-H" || t == "-M" || t == "-n" || t == "-o" ||
				t == "--property" || t == "--signal" || t == "--host" || t == "--machine" ||
				t == "--lines" || t == "--output" || t == "--kill-whom" || t == "--kill-who" {
				i++
			}
			continue
		}
		if strings.HasPrefix(t, "terminate-") || strings.HasPrefix(t, "kill-") {
			return t
		}
		return ""
	}
	return ""
}

// tmux refuses kill-server and kill-session (and their unambiguous
// prefixes) in any command of a tmux invocation, and checks the text that
// send-keys types as a script.
func (c *checker) tmux(args []arg, text string, off int) {
	i := 0
	for i < len(args) {
		t := args[i].text
		if !args[i].known || len(t) < 2 || t[0] != '-' {
			break
		}
		i++
		if t == "--" {
			break
		}
		if strings.IndexByte("LSfcT", t[len(t)-1]) >= 0 && len(t) == 2 {
			i++
		}
	}
	start := true
	for ; i < len(args); i++ {
		a := args[i]
		t := a.text
		if a.known && (t == ";" || t == `\;`) {
			start = true
			continue
		}
		if start && a.known {
			if strings.HasPrefix(t, "kill-s") && (strings.HasPrefix("kill-server", t) || strings.HasPrefix("kill-session", t)) {
				c.deny(text, fmt.Sprintf(whyTmux, t))
				return
			}
			if t == "send-keys" || t == "send" {
				var keys []arg
				for j := i + 1; j < len(args) && !(args[j].known && args[j].text == ";"); j++ {
					k := args[j].text
					if args[j].known && strings.HasPrefix(k, "-") {
						if k == "-t" || k == "-N" || k == "-c" {
							j++
						}
						continue
					}
					keys = append(keys, args[j])
				}
				c.script(joinTexts(keys), off, nil, false, feed{})
			}
		}
		start = false
		if a.known && len(t) > 1 && strings.HasSuffix(t, ";") {
			start = true
		}
	}
}

// screen refuses -X quit and -X kill, and checks -X stuff text as a script.
func (c *checker) screen(args []arg, text string, off int) {
	for i := 0; i+1 < len(args); i++ {
		if !args[i].known || args[i].text != "-X" {
			continue
		}
		cmd := args[i+1]
		switch {
		case !cmd.known:
		case cmd.text == "quit" || cmd.text == "kill":
			c.deny(text, fmt.Sprintf(whyScreen, cmd.text))
			return
		case cmd.text == "stuff" && i+2 < len(args):
			c.script(ansiC(args[i+2].text), off, nil, false, feed{})
		}
	}
}

func isInterpreter(name string) bool {
	switch name {
	case "perl", "ruby", "node", "nodejs", "deno", "bun", "php", "lua", "luajit",
		"tclsh", "awk", "gawk", "mawk", "nawk", "Rscript", "osascript", "pypy", "pypy3":
		return true
	}
	return strings.HasPrefix(name, "python")
}

// interpreter looks at inline code given to python, perl, awk and the like.
func (c *checker) interpreter(args []arg, in feed, text string) {
	code := make([]string, 0, len(args)+len(in.texts))
	for _, a := range args {
		code = append(code, a.text)
		if a.known {
			code = append(code, c.written(a.text)...)
		}
	}
	code = append(code, in.texts...)
	for _, s := range code {
		for _, tok := range tokens(dequote(s)) {
			switch tok {
			case "pkill", "killall", "killall5", "skill":
				c.deny(text, fmt.Sprintf("its inline code names %s", tok))
				return
			case "kill":
				if in.pids {
					c.deny(text, "it reads a process listing and its inline code calls kill on it")
					return
				}
			}
		}
	}
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
// kill word that appears in it as a word, or "".
func coarseKillWord(s string) string {
	for _, tok := range tokens(dequote(s)) {
		switch baseName(tok) {
		case "kill", "pkill", "killall", "killall5", "skill", "kill-server", "kill-session":
			return tok
		}
	}
	return ""
}

func quoteWord(w string) string {
	return strconv.Quote(w)
}

// isPidLister reports whether a command prints PIDs that a kill could be
// fed with.
func isPidLister(name string) bool {
	switch name {
	case "pgrep", "pidof", "ps", "lsof", "fuser", "pstree", "pidwait":
		return true
	}
	return false
}
