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
func (c *checker) shell(args []arg, in feed, off int) {
	i, dashC, dashS := 0, false, false
	for i < len(args) {
		a := args[i]
		t := a.text
		if !a.known {
			break
		}
		if t == "--" || t == "-" {
			i++
			break
		}
		if len(t) < 2 || (t[0] != '-' && t[0] != '+') {
			break
		}
		i++
		if strings.HasPrefix(t, "--") {
			if t == "--rcfile" || t == "--init-file" {
				i++
			}
			continue
		}
		for _, ch := range t[1:] {
			switch ch {
			case 'c':
				dashC = dashC || t[0] == '-'
			case 's':
				dashS = true
			case 'o', 'O':
				i++
			}
		}
	}
	i = min(i, len(args)) // an option's value may be missing
	switch {
	case dashC:
		if i < len(args) {
			c.runText(args[i], off, args[i+1:], true, in)
		}
	case i < len(args) && !dashS:
		c.scriptFile(args[i], in, off, args[i:])
	default:
		c.fed(in, off, append([]arg{knownArg("sh")}, args[i:]...))
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
func (c *checker) xargs(fr *frame, args []arg, in feed, text string, off int) {
	src, repl := in, ""
	i := 0
options:
	for i < len(args) {
		a := args[i]
		t := a.text
		if !a.known || len(t) < 2 || t[0] != '-' {
			break
		}
		if t == "--" {
			i++
			break
		}
		if strings.HasPrefix(t, "--") {
			name, val, eq := strings.Cut(t[2:], "=")
			switch name {
			case "replace":
				repl = "{}"
				if eq {
					repl = val
				}
			case "arg-file":
				src = feed{}
				if !eq && i+1 < len(args) {
					if f := args[i+1].feed; f != nil {
						src = *f
					}
					i++
				}
			case "delimiter", "max-args", "max-procs", "max-chars", "process-slot-var":
				if !eq {
					i++
				}
			}
			i++
			continue
		}
		for j := 1; j < len(t); j++ {
			ch := t[j]
			if strings.IndexByte("adEILnPs", ch) >= 0 {
				val := t[j+1:]
				var valArg *arg
				if val == "" && i+1 < len(args) {
					i++
					valArg = &args[i]
					val = valArg.text
				}
				switch ch {
				case 'I':
					repl = val
				case 'a':
					src = feed{}
					if valArg != nil && valArg.feed != nil {
						src = *valArg.feed
					}
				}
				break
			}
			if ch == 'i' || ch == 'e' || ch == 'l' {
				if ch == 'i' {
					repl = t[j+1:]
					if repl == "" {
						repl = "{}"
					}
				}
				break
			}
		}
		i++
		continue options
	}
	cmd := args[min(i, len(args)):]
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
	c.examine(fr, out, feed{}, text, off)
}

// inputArg stands for the words that xargs or parallel read: a variable
// that only this site fills, so that text handed to a shell can refer to it.
func (c *checker) inputArg(src feed) arg {
	c.inputs++
	name := fmt.Sprintf("__aisan_input%d", c.inputs)
	a := arg{text: "${" + name + "}", src: strings.Join(append([]string{src.opaque}, src.texts...), " "), pids: src.pids}
	for _, t := range src.texts {
		for _, f := range strings.Fields(t) {
			if len(a.cands) < maxCands {
				a.cands = append(a.cands, f)
			}
		}
	}
	c.assign(name, a)
	return a
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
func (c *checker) parallel(args []arg, in feed, text string, off int) {
	i := 0
	for i < len(args) {
		a := args[i]
		t := a.text
		if !a.known || len(t) < 2 || t[0] != '-' || strings.HasPrefix(t, ":::") {
			break
		}
		i++
		if t == "--" {
			break
		}
		if strings.HasPrefix(t, "--") {
			if !strings.Contains(t, "=") && parallelLongArg(t[2:]) {
				i++
			}
			continue
		}
		if len(t) == 2 && strings.IndexByte("jPSaCdnNLEsI", t[1]) >= 0 {
			i++
		}
	}
	var cmd, inputs []arg
	sawSep := false
	for ; i < len(args); i++ {
		a := args[i]
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
	src := in
	if sawSep {
		src = feed{}
		for _, a := range inputs {
			src.pids = src.pids || a.pids
			src.texts = append(src.texts, a.text)
		}
	}
	if len(cmd) == 0 {
		// The inputs are the commands.
		c.fed(src, off, nil)
		return
	}
	input := c.inputArg(src)
	line, replaced := replacePlaceholders(joinTexts(cmd), input.text)
	if !replaced {
		line += " " + input.text
	}
	c.script(line, off, nil, false, feed{})
}

func parallelLongArg(name string) bool {
	switch name {
	case "jobs", "sshlogin", "arg-file", "colsep", "delimiter", "max-args", "max-lines", "joblog",
		"results", "tmpdir", "timeout", "delay", "retries", "memfree", "load", "workdir", "wd",
		"tagstring", "tag-string", "env", "halt", "sshloginfile", "slf", "basefile", "bf",
		"transferfile", "tf", "return", "termseq", "max-chars", "limit", "profile", "block",
		"recstart", "recend", "header", "eof", "replace", "extensionreplace":
		return true
	}
	return false
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
func (c *checker) find(fr *frame, args []arg, text string, off int) {
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
			c.examine(fr, cmd, feed{}, text, off)
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

// fdExec runs the command of fd -x / -X.
func (c *checker) fdExec(fr *frame, args []arg, text string, off int) {
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
			c.examine(fr, cmd, feed{}, text, off)
			return
		}
	}
}

// watch joins its command words and runs them with sh -c, or runs them
// directly with -x.
func (c *checker) watch(fr *frame, args []arg, in feed, text string, off int) {
	i, direct := 0, false
	for i < len(args) {
		t := args[i].text
		if !args[i].known || len(t) < 2 || t[0] != '-' {
			break
		}
		i++
		switch {
		case t == "--":
		case t == "-x" || t == "--exec":
			direct = true
			continue
		case t == "--interval" || t == "--equexit":
			i++
			continue
		case strings.HasPrefix(t, "--"):
			continue
		default:
			if strings.IndexByte(t, 'x') > 0 {
				direct = true
			}
			if last := t[len(t)-1]; last == 'n' || last == 'q' {
				i++
			}
			continue
		}
		break
	}
	i = min(i, len(args))
	if direct {
		c.examine(fr, args[i:], in, text, off)
		return
	}
	if i < len(args) {
		c.script(joinTexts(args[i:]), off, nil, false, in)
		if i == len(args)-1 {
			c.runOutput(args[i], off, nil)
		}
	}
}

// flock takes a lock file, then runs a command or the -c text.
func (c *checker) flock(fr *frame, args []arg, in feed, text string, off int) {
	i := 0
	for i < len(args) {
		t := args[i].text
		if !args[i].known || len(t) < 2 || t[0] != '-' {
			break
		}
		i++
		switch t {
		case "--":
		case "-w", "-E", "--timeout", "--conflict-exit-code":
			i++
			continue
		default:
			continue
		}
		break
	}
	i++ // the lock file or descriptor
	if i >= len(args) {
		return
	}
	if args[i].known && (args[i].text == "-c" || args[i].text == "--command") {
		if i+1 < len(args) {
			c.runText(args[i+1], off, nil, false, in)
		}
		return
	}
	c.examine(fr, args[i:], in, text, off)
}

// dashC handles su, runuser and script: the -c (--command) operand is a
// script, and runuser -u runs its remaining words as a command.
func (c *checker) dashC(fr *frame, name string, args []arg, in feed, text string, off int) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		t := a.text
		if !a.known {
			continue
		}
		switch {
		case t == "--":
			if name == "runuser" {
				c.examine(fr, args[i+1:], in, text, off)
			}
			return
		case t == "-c" || t == "--command" || t == "--session-command":
			if i+1 < len(args) {
				c.runText(args[i+1], off, nil, false, in)
			}
			i++
		case strings.HasPrefix(t, "--command=") || strings.HasPrefix(t, "--session-command="):
			_, v, _ := strings.Cut(t, "=")
			c.script(v, off, nil, false, in)
		case (t == "-u" || t == "--user") && name == "runuser":
			j := i + 2
			for j < len(args) && args[j].known && strings.HasPrefix(args[j].text, "-") && args[j].text != "--" {
				j++
			}
			if j < len(args) && args[j].known && args[j].text == "--" {
				j++
			}
			if j < len(args) {
				c.examine(fr, args[j:], in, text, off)
			}
			return
		case len(t) > 2 && t[0] == '-' && t[1] != '-':
			if k := strings.IndexByte(t, 'c'); k > 0 {
				if v := t[k+1:]; v != "" {
					c.script(v, off, nil, false, in)
				} else if i+1 < len(args) {
					c.runText(args[i+1], off, nil, false, in)
					i++
				}
			}
		}
	}
}

// ssh runs its words after the host as a command line on that host, which
// may well be this one.
func (c *checker) ssh(args []arg, off int) {
	sp := optSpec{vals: "BbcDEeFIiJLlmOopQRSWw"}
	_, ops := parseOpts(args, sp)
	if len(ops) == 0 {
		return
	}
	// Options may follow the host.
	if _, cmd := parseOpts(ops[1:], sp); len(cmd) > 0 {
		c.script(joinTexts(cmd), off, nil, false, feed{})
	}
}

// read and mapfile fill variables from stdin: from a PID listing, those
// variables carry PIDs.
func (c *checker) read(name string, args []arg, in feed) {
	value := arg{pids: in.pids}
	for _, t := range in.texts {
		for _, f := range strings.Fields(t) {
			if len(value.cands) < maxCands {
				value.cands = append(value.cands, f)
			}
		}
	}
	var vars []string
	for i := 0; i < len(args); i++ {
		t := args[i].text
		if !args[i].known {
			continue
		}
		if strings.HasPrefix(t, "-") && len(t) > 1 {
			last := t[len(t)-1]
			valued := "adinNptu" // read
			if name != "read" {
				valued = "dnOsuCc" // mapfile
			}
			if strings.IndexByte(valued, last) >= 0 && i+1 < len(args) {
				if last == 'a' && name == "read" {
					vars = append(vars, args[i+1].text)
				}
				i++
			}
			continue
		}
		vars = append(vars, t)
	}
	if len(vars) == 0 {
		vars = []string{"REPLY", "MAPFILE"}
	}
	for _, v := range vars {
		c.assign(v, value)
	}
}

// wrapSpec describes how a wrapper finds the command it runs.
type wrapSpec struct {
	argShort  string   // short options that take a value
	flagShort string   // short options that take none
	argLong   []string // long options that take a value
	flagLong  []string // long options that take none
	skip      int      // operands before the command, such as timeout's duration
	assigns   bool     // NAME=value words may come before the command
	noCommand string   // short options after which no command runs
	split     byte     // env -S: the value is split into words
}

// wrapper returns the spec of a command that runs another command.
func wrapper(name string) (wrapSpec, bool) {
	switch name {
	case "env":
		return wrapSpec{argShort: "uCSa", flagShort: "i0v", split: 'S', assigns: true,
			argLong:  []string{"unset", "chdir", "split-string", "argv0"},
			flagLong: []string{"ignore-environment", "null", "debug", "default-signal", "ignore-signal", "block-signal", "list-signal-handling"}}, true
	case "sudo":
		return wrapSpec{argShort: "aCcDgpRrTtUu", flagShort: "ABbEeHhiKklNnPSsVv", noCommand: "lKVv", assigns: true,
			argLong:  []string{"askpass", "chdir", "close-from", "group", "host", "prompt", "chroot", "role", "type", "command-timeout", "other-user", "user", "login-class"},
			flagLong: []string{"preserve-env", "edit", "set-home", "login", "remove-timestamp", "reset-timestamp", "list", "non-interactive", "preserve-groups", "stdin", "shell", "validate", "background", "bell"}}, true
	case "doas":
		return wrapSpec{argShort: "aCu", flagShort: "Lns"}, true
	case "nohup", "builtin", "unbuffer", "catchsegv", "eatmydata", "fakeroot":
		return wrapSpec{flagShort: "p"}, true
	case "timeout":
		return wrapSpec{argShort: "ks", flagShort: "fpv", skip: 1,
			argLong: []string{"kill-after", "signal"}, flagLong: []string{"foreground", "preserve-status", "verbose"}}, true
	case "nice":
		return wrapSpec{argShort: "n", argLong: []string{"adjustment"}}, true
	case "ionice":
		return wrapSpec{argShort: "cnpPu", flagShort: "t", noCommand: "pPu",
			argLong: []string{"class", "classdata", "pid", "pgid", "uid"}, flagLong: []string{"ignore"}}, true
	case "setsid":
		return wrapSpec{flagShort: "cfw", flagLong: []string{"ctty", "fork", "wait"}}, true
	case "stdbuf":
		return wrapSpec{argShort: "ioe", argLong: []string{"input", "output", "error"}}, true
	case "exec":
		return wrapSpec{argShort: "a", flagShort: "cl"}, true
	case "command":
		return wrapSpec{flagShort: "p", noCommand: "vV"}, true
	case "time":
		return wrapSpec{argShort: "fo", flagShort: "apqvV",
			argLong: []string{"format", "output"}, flagLong: []string{"append", "portability", "quiet", "verbose"}}, true
	case "chrt":
		return wrapSpec{argShort: "TPD", flagShort: "abdefiorRv", noCommand: "pm", skip: 1,
			flagLong: []string{"all-tasks", "batch", "deadline", "fifo", "idle", "other", "rr", "reset-on-fork", "verbose"}}, true
	case "taskset":
		return wrapSpec{flagShort: "acV", noCommand: "p", skip: 1, flagLong: []string{"all-tasks", "cpu-list"}}, true
	case "setpriv":
		return wrapSpec{flagShort: "d",
			argLong: []string{"reuid", "regid", "ruid", "euid", "rgid", "egid", "groups", "inh-caps", "ambient-caps",
				"bounding-set", "securebits", "pdeathsig", "selinux-label", "apparmor-profile", "landlock-access", "landlock-rule"},
			flagLong: []string{"clear-groups", "keep-groups", "init-groups", "no-new-privs", "reset-env", "dump"}}, true
	case "chroot":
		return wrapSpec{skip: 1, argLong: []string{"userspec", "groups"}, flagLong: []string{"skip-chdir"}}, true
	case "strace":
		return wrapSpec{argShort: "abeEIoOpPsSuUX", flagShort: "cCdDfFhikqrtTvVwxyYzZ"}, true
	case "ltrace":
		return wrapSpec{argShort: "aAeDFlnopsuwx", flagShort: "bcCfhiLrStTV"}, true
	case "nsenter":
		return wrapSpec{argShort: "tSG", flagShort: "amuinpUCTrwFZ",
			argLong: []string{"target", "setuid", "setgid"}, flagLong: []string{"all", "preserve-credentials", "no-fork", "follow-context"}}, true
	case "unshare":
		return wrapSpec{argShort: "SGRw", flagShort: "mUuinpCTfrc",
			argLong:  []string{"setgroups", "propagation", "map-user", "map-group", "map-users", "map-groups", "root", "wd", "setuid", "setgid", "monotonic", "boottime"},
			flagLong: []string{"fork", "mount-proc", "map-root-user", "map-current-user", "map-auto", "keep-caps", "kill-child"}}, true
	case "prlimit":
		return wrapSpec{argShort: "po", noCommand: "p", argLong: []string{"pid", "output"}}, true
	case "xvfb-run":
		return wrapSpec{argShort: "efnpsw", flagShort: "adhl",
			argLong:  []string{"error-file", "auth-file", "server-num", "xauth-protocol", "server-args", "wait"},
			flagLong: []string{"auto-servernum", "auto-display", "help", "listen-tcp"}}, true
	case "dbus-run-session":
		return wrapSpec{argLong: []string{"config-file", "dbus-daemon"}, flagLong: []string{"session", "help", "version"}}, true
	case "systemd-inhibit":
		return wrapSpec{argLong: []string{"what", "who", "why", "mode"},
			flagLong: []string{"list", "no-pager", "no-legend", "no-ask-password", "help", "version"}}, true
	case "systemd-run":
		return wrapSpec{argShort: "pEMHu", flagShort: "dGPqrSt",
			argLong: []string{"unit", "property", "description", "slice", "setenv", "uid", "gid", "nice", "working-directory",
				"on-active", "on-boot", "on-startup", "on-unit-active", "on-unit-inactive", "on-calendar", "timer-property",
				"path-property", "socket-property", "service-type", "machine", "host"},
			flagLong: []string{"user", "system", "scope", "remain-after-exit", "send-sighup", "pty", "pipe", "quiet", "wait",
				"collect", "same-dir", "no-ask-password", "no-block", "verbose", "ignore-failure", "shell", "on-clock-change", "on-timezone-change"}}, true
	}
	return wrapSpec{}, false
}

// unwrap finds the command a wrapper runs. Where an unknown option might
// or might not take a value, both readings are returned.
func unwrap(args []arg, sp wrapSpec) [][]arg {
	var out [][]arg
	var walk func(i, branches int)
	walk = func(i, branches int) {
		for i < len(args) {
			a := args[i]
			t := a.text
			if !a.known {
				break
			}
			if sp.assigns && isAssignWord(t) {
				i++
				continue
			}
			if t == "--" {
				i++
				for sp.assigns && i < len(args) && args[i].known && isAssignWord(args[i].text) {
					i++
				}
				break
			}
			if len(t) < 2 || t[0] != '-' {
				break
			}
			if t[1] == '-' {
				name, val, eq := strings.Cut(t[2:], "=")
				switch {
				case sp.split != 0 && name == "split-string":
					value, next := val, i+1
					if !eq && i+1 < len(args) {
						value, next = args[i+1].text, i+2
					}
					out = append(out, unwrap(append(splitArgs(value), args[next:]...), sp)...)
					return
				case eq || contains(sp.flagLong, name):
					i++
				case contains(sp.argLong, name):
					i += 2
				default:
					if branches < 3 {
						walk(i+2, branches+1)
					}
					i++
				}
				continue
			}
			next := i + 1
			for j := 1; j < len(t); j++ {
				ch := t[j]
				if strings.IndexByte(sp.noCommand, ch) >= 0 {
					return
				}
				if sp.split != 0 && ch == sp.split {
					value := t[j+1:]
					if value == "" && i+1 < len(args) {
						value, next = args[i+1].text, i+2
					}
					out = append(out, unwrap(append(splitArgs(value), args[next:]...), sp)...)
					return
				}
				if strings.IndexByte(sp.argShort, ch) >= 0 {
					if j == len(t)-1 {
						next = i + 2
					}
					break
				}
				if strings.IndexByte(sp.flagShort, ch) < 0 && (ch < '0' || ch > '9') && j == len(t)-1 && branches < 3 {
					walk(i+2, branches+1)
				}
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

// setParams returns the positional parameters that set gives, and false
// when it gives none (set -e, set -o pipefail).
func setParams(args []arg) ([]arg, bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		t := a.text
		switch {
		case !a.known:
			return args[i:], true
		case t == "--" || t == "-":
			return args[i+1:], true
		case len(t) > 1 && (t[0] == '-' || t[0] == '+'):
			if strings.IndexByte(t[1:], 'o') >= 0 {
				i++
			}
		default:
			return args[i:], true
		}
	}
	return nil, false
}

// printfVar records the variable that printf -v fills.
func (c *checker) printfVar(args []arg) {
	if len(args) < 2 || !args[0].known || !strings.HasPrefix(args[0].text, "-v") {
		return
	}
	name, rest := args[0].text[2:], args[1:]
	if name == "" {
		if !args[1].known {
			return
		}
		name, rest = args[1].text, args[2:]
	}
	name, _, _ = strings.Cut(name, "[")
	srcs := make([]string, len(rest))
	known := true
	for i, a := range rest {
		srcs[i] = a.src
		known = known && a.known
	}
	v := arg{text: strings.Join(srcs, " "), src: strings.Join(srcs, " ")}
	if t, ok := printfText(rest); ok {
		v.cands = []string{t}
		if known {
			v.text, v.known = t, true
		}
	}
	c.assign(name, v)
}

// at and batch run the commands they read from standard input, or from
// the -f file, later.
func (c *checker) at(args []arg, in feed, off int) {
	for i := 0; i < len(args); i++ {
		t := args[i].text
		if !args[i].known || len(t) < 2 || t[0] != '-' {
			break
		}
		for j := 1; j < len(t); j++ {
			switch t[j] {
			case 'l', 'r', 'd', 'c': // list, remove or show jobs
				return
			case 'f':
				file := knownArg(t[j+1:])
				if j == len(t)-1 && i+1 < len(args) {
					file = args[i+1]
				}
				c.scriptFile(file, in, off, nil)
				return
			case 'q', 't':
				if j == len(t)-1 {
					i++
				}
				j = len(t)
			}
		}
	}
	c.fed(in, off, nil)
}

// npx and its kin run a package's command, or the -c text.
func (c *checker) npx(fr *frame, args []arg, in feed, text string, off int) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		t := a.text
		switch {
		case !a.known:
			c.examine(fr, args[i:], in, text, off)
			return
		case t == "-c" || t == "--call":
			if i+1 < len(args) {
				c.runText(args[i+1], off, nil, false, in)
			}
			return
		case strings.HasPrefix(t, "--call="):
			c.script(t[len("--call="):], off, nil, false, in)
			return
		case t == "-p" || t == "--package" || t == "--registry" || t == "--cache" || t == "--userconfig" ||
			t == "--prefix" || t == "-w" || t == "--workspace":
			i++
		case strings.HasPrefix(t, "-"):
		default:
			// The package spec (kill-port@latest) names its command.
			cmd := append([]arg{knownArg(packageName(t))}, args[i+1:]...)
			c.examine(fr, cmd, in, text, off)
			return
		}
	}
}
