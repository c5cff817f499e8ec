package guard

// The judging of code: which call sites start a command and how, what
// their arguments make, and what is refused when the command is built out
// of sight or when the code lists processes and signals them (code.go has
// the languages and the lexer).

import (
	"fmt"
	"slices"
	"strings"
)

// callKind is how a call site runs a command.
type callKind int

const (
	callNone     callKind = iota
	callShell             // the first argument is a shell command line
	callShellOr           // one argument: a shell command line; more, or a list: the words of a command
	callSubproc           // Python's subprocess: a shell command line with shell=True, else a program and its arguments
	callSpawn             // a program, then a list of its arguments (a shell command line with shell: true)
	callExecv             // os.exec*/os.spawn*: a program, then its argv with argv[0]
	callCode              // code of the same language (exec, eval)
	callArgv              // a list of words: Bun.spawn(["pkill", "x"])
	callPipeOpen          // Perl's open: "-|" or "|-" then a command, or "cmd |" as one string
)

// callSite classifies a name followed by its arguments.
func callSite(l lang, name string) callKind {
	last := name[strings.LastIndexAny(name, ".:>")+1:]
	for _, g := range langs[l].calls {
		if !strings.HasPrefix(name, g.prefix) {
			continue
		}
		want := last
		if g.whole {
			want = name
		}
		if slices.Contains(g.names, want) {
			return g.kind
		}
	}
	return callNone
}

// codeArg is one argument of a call: its tokens, and what they make.
type codeArg struct {
	toks []codeTok
}

// str is the argument as a string: the literal parts joined with run-time
// parts standing for unknown values. ok is false without any literal.
func (a codeArg) str() (string, bool) {
	var b strings.Builder
	lit := false
	depth := 0
	toks := a.toks
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch t.kind {
		case tokString, tokTemplate:
			if i+2 < len(toks) && toks[i+1].is("%") {
				// "kill %d" % pid: the directives take the value that
				// follows when it is a literal, else a run-time one.
				f, n := printfDirectives(t.text, toks[i+2:])
				b.WriteString(f)
				lit = true
				i += 1 + n
				continue
			}
			b.WriteString(t.text)
			lit = true
		case tokPunct:
			switch t.text {
			case "(", "[", "{":
				if depth == 0 && lit {
					b.WriteString(codeVar)
				}
				depth++
			case ")", "]", "}":
				depth--
			}
		case tokName:
			if depth == 0 && !isKeywordOp(t.text) {
				b.WriteString(codeVar)
			}
		}
	}
	return b.String(), lit
}

// printfDirectives fills the %-directives of a format with the literal
// after the % operator (a number, -1, a string), or with a run-time value.
func printfDirectives(format string, rest []codeTok) (string, int) {
	val, used := codeVar, 0
	switch {
	case len(rest) > 0 && rest[0].kind == tokString:
		val, used = rest[0].text, 1
	case len(rest) > 0 && rest[0].kind == tokName && isDigits(rest[0].text):
		val, used = rest[0].text, 1
	case len(rest) > 1 && rest[0].text == "-" && rest[1].kind == tokName && isDigits(rest[1].text):
		val, used = "-"+rest[1].text, 2
	}
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		if format[i] != '%' || i+1 >= len(format) {
			b.WriteByte(format[i])
			continue
		}
		j := i + 1
		if format[j] == '%' {
			b.WriteByte('%')
			i = j
			continue
		}
		if format[j] == '(' {
			j = matchClose(format, j, '(', ')')
		}
		for j < len(format) && strings.IndexByte("-+ #0123456789.*", format[j]) >= 0 {
			j++
		}
		if j < len(format) {
			b.WriteString(val)
			i = j
			continue
		}
		b.WriteString(format[i:])
		break
	}
	return b.String(), used
}

func isKeywordOp(s string) bool {
	switch s {
	case "str", "String", "int", "format", "join", "toString", "shlex", "quote":
		return true
	}
	return false
}

// list returns the elements of a list literal argument ([…], or qw-less
// Perl lists), each as a word.
func (a codeArg) list() ([]arg, bool) {
	if len(a.toks) < 2 || !a.toks[0].is("[") {
		return nil, false
	}
	var out []arg
	for _, el := range splitCallArgs(a.toks[1:]) {
		out = append(out, el.word())
	}
	return out, true
}

// word is the argument as one word of a command.
func (a codeArg) word() arg {
	s, ok := a.str()
	if ok && len(a.toks) == 1 && !a.toks[0].dyn {
		return knownArg(s)
	}
	if !ok {
		s = codeVar
	}
	return arg{text: s, src: s}
}

// keyword reports whether an argument is name=True or name: true.
func (a codeArg) keyword(name string) bool {
	for i := 0; i+2 < len(a.toks); i++ {
		if a.toks[i].kind == tokName && a.toks[i].text == name && (a.toks[i+1].text == "=" || a.toks[i+1].text == ":") {
			v := strings.ToLower(a.toks[i+2].text)
			return v == "true" || v == "1"
		}
	}
	return false
}

// hasKeyword reports whether any argument is name=True (or name: true).
func hasKeyword(args []codeArg, name string) bool {
	for _, a := range args {
		if a.keyword(name) {
			return true
		}
	}
	return false
}

// argWords turns each argument into one word of a command.
func argWords(args []codeArg) []arg {
	words := make([]arg, 0, len(args))
	for _, a := range args {
		words = append(words, a.word())
	}
	return words
}

// splitCallArgs splits tokens at the commas at depth 0, up to the bracket
// that closes the list.
func splitCallArgs(toks []codeTok) []codeArg {
	var out []codeArg
	var cur []codeTok
	depth := 0
	for _, t := range toks {
		if t.kind == tokPunct {
			switch t.text {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				if depth == 0 {
					if len(cur) > 0 {
						out = append(out, codeArg{cur})
					}
					return out
				}
				depth--
			case ",":
				if depth == 0 {
					out = append(out, codeArg{cur})
					cur = nil
					continue
				}
			case ";":
				if depth == 0 {
					if len(cur) > 0 {
						out = append(out, codeArg{cur})
					}
					return out
				}
				continue
			}
		}
		cur = append(cur, t)
	}
	if len(cur) > 0 {
		out = append(out, codeArg{cur})
	}
	return out
}

// callArgs returns the arguments of the call whose name is toks[i]: in
// parentheses, or for Perl and Ruby, without them up to the end of the
// statement.
func callArgs(l lang, toks []codeTok, i int) ([]codeArg, bool) {
	if i+1 >= len(toks) {
		return nil, false
	}
	next := toks[i+1]
	if next.is("(") {
		return splitCallArgs(toks[i+2:]), true
	}
	if langs[l].bareCalls && (next.kind == tokString || next.kind == tokName && next.text[0] == '$') {
		return splitCallArgs(toks[i+1:]), true
	}
	return nil, false
}

// codeRun is one piece of code being judged: where it runs, what the
// commands it starts read, and what its call sites have shown so far.
type codeRun struct {
	c          *checker
	st         site
	l          lang
	fromStdin  bool // the code itself came from standard input
	depth      int  // code run by exec or eval of the code around it
	cmdIn      feed // what the commands it starts read
	resolved   int  // call sites whose command the guard saw
	unresolved bool // a call site runs a command built out of sight
}

// code judges code given to an interpreter. st.in is what the
// interpreter reads; fromStdin says the code itself came from there.
func (c *checker) code(st site, l lang, src string, fromStdin bool, depth int) {
	if !c.step(st.text, 1+len(src)/16) || depth > 4 {
		return
	}
	if l == langTcl {
		c.assign("__aisan_code", arg{text: codeVar, src: codeVar, pids: st.in.pids})
		c.tcl(st, src, 0)
		return
	}
	toks := lexCode(l, src)
	// A value only known at run time may be a PID the code's input
	// listed, or one the code listed itself ("pgrep node" | getline p,
	// then system("kill " p)): a command it builds of it is judged as
	// bash's kill $(pgrep node) is.
	names := codeNames(toks)
	listed := st.in.pids || processListing(toks, names) != ""
	c.assign("__aisan_code", arg{text: codeVar, src: codeVar, pids: listed})
	r := &codeRun{c: c, st: st, l: l, fromStdin: fromStdin, depth: depth, cmdIn: st.in}
	if fromStdin {
		r.cmdIn = feed{}
	}
	for i := range toks {
		if c.stopped() {
			return
		}
		r.token(toks, i)
	}
	if c.stopped() {
		return
	}
	if why := killsListed(toks, names, st.in.pids); why != "" {
		c.deny(st.text, why)
		return
	}
	if lib := loadsPortKiller(toks, names); lib != "" {
		c.denyInstead(st.text, fmt.Sprintf("its code loads %s, which kills whatever holds a port or matches a name, not a process of its own by PID", lib), insteadPort)
		return
	}
	if why := writesKillFile(toks, names); why != "" {
		c.denyInstead(st.text, "its code writes a file that kills: "+why, insteadKernel)
		return
	}
	if why := codeKillsGroup(l, toks); why != "" {
		c.deny(st.text, "its code calls kill on a literal target: "+why)
		return
	}
	if r.unresolved || r.resolved == 0 && runsCommands(strings.Join(nameList(toks), " ")) {
		r.unseen(toks)
	}
}

// runText checks a command line the code hands to a shell.
func (r *codeRun) runText(s string) {
	r.resolved++
	r.c.script(s, r.st.off, nil, false, r.cmdIn)
}

// runArgv checks the words of a command the code starts; a word only
// known at run time carries PIDs when the code's input does.
func (r *codeRun) runArgv(words []arg) {
	r.resolved++
	for i := range words {
		words[i].pids = words[i].pids || !words[i].known && r.st.in.pids
	}
	r.c.examine(r.st.withIn(r.cmdIn), words)
}

// token judges the token at toks[i]: shell text runs, a name may be a
// call site.
func (r *codeRun) token(toks []codeTok, i int) {
	t := &toks[i]
	switch t.kind {
	case tokShell:
		t.used = true
		r.runText(t.text)
	case tokTemplate:
		// zx's $`…` and sh`…` tags run the template as a command line.
		if i > 0 && toks[i-1].kind == tokName && (toks[i-1].text == "$" || strings.HasSuffix(toks[i-1].text, ".$") || toks[i-1].text == "sh") {
			t.used = true
			r.runText(t.text)
		}
	case tokPunct:
		// awk: "cmd" | getline, print … | "cmd".
		if r.l == langAwk && t.text == "|" {
			if i > 0 && toks[i-1].kind == tokString && i+1 < len(toks) && toks[i+1].text == "getline" {
				toks[i-1].used = true
				r.runText(toks[i-1].text)
			} else if i+1 < len(toks) && toks[i+1].kind == tokString {
				toks[i+1].used = true
				r.runText(toks[i+1].text)
			}
		}
	case tokName:
		kind := callSite(r.l, t.text)
		if kind == callNone {
			return
		}
		args, ok := callArgs(r.l, toks, i)
		if !ok || len(args) == 0 {
			return
		}
		markUsed(toks, i+1, args)
		if r.l == langRuby && len(args[0].toks) > 0 && args[0].toks[0].text == "{" && len(args) > 1 {
			args = args[1:] // an environment hash
		}
		r.call(kind, args)
	}
}

// call judges one call site by how it runs its command.
func (r *codeRun) call(kind callKind, args []codeArg) {
	first := args[0]
	switch kind {
	case callShell:
		if s, ok := first.str(); ok {
			r.runText(s)
		} else if words, ok := first.list(); ok {
			r.runArgv(words)
		} else {
			r.unresolved = true
		}
	case callShellOr:
		if words, ok := first.list(); ok {
			r.runArgv(words)
		} else if len(args) > 1 {
			r.runArgv(argWords(args))
		} else if s, ok := first.str(); ok {
			r.runText(s)
		} else {
			r.unresolved = true
		}
	case callSubproc:
		shell := hasKeyword(args[1:], "shell")
		words, isList := first.list()
		s, isStr := first.str()
		switch {
		case shell && isList && len(words) > 0:
			r.runText(words[0].text)
		case shell && isStr:
			r.runText(s)
		case isList:
			r.runArgv(words)
		case isStr:
			r.runArgv([]arg{first.word()})
		default:
			r.unresolved = true
		}
	case callSpawn:
		words, ok := spawnWords(args)
		switch {
		case !ok:
			r.unresolved = true
		case hasKeyword(args[1:], "shell"):
			r.runText(joinTexts(words))
		default:
			r.runArgv(words)
		}
	case callExecv:
		if words := execvWords(args); len(words) > 0 {
			r.runArgv(words)
		} else {
			r.unresolved = true
		}
	case callArgv:
		if words, ok := first.list(); ok {
			r.runArgv(words)
		} else {
			r.unresolved = true
		}
	case callPipeOpen:
		r.pipeOpen(args)
	case callCode:
		if s, ok := first.str(); ok {
			r.resolved++
			r.c.code(r.st, r.l, s, r.fromStdin, r.depth+1)
		}
	}
}

// spawnWords is the command of spawn(program, [args…]) or its object
// form ({args: […]}); ok is false when the program is not a literal.
func spawnWords(args []codeArg) ([]arg, bool) {
	if _, isStr := args[0].str(); !isStr {
		return nil, false
	}
	words := []arg{args[0].word()}
	if len(args) > 1 {
		if rest, ok := args[1].list(); ok {
			words = append(words, rest...)
		} else if ks := keyList(args[1], "args"); ks != nil {
			words = append(words, ks...)
		}
	}
	return words, true
}

// execvWords is the command of os.execv(path, argv) and its kin: the
// program, then the argument list without its argv[0].
func execvWords(args []codeArg) []arg {
	var words []arg
	for _, a := range args {
		if list, ok := a.list(); ok {
			if len(list) > 0 {
				list = list[1:]
			}
			words = append(words, list...)
			break
		}
		if _, ok := a.str(); ok {
			words = append(words, a.word())
		}
	}
	if len(words) > 1 && (words[1].text == words[0].text || baseName(words[1].text) == baseName(words[0].text)) {
		words = append(words[:1], words[2:]...)
	}
	return words
}

// pipeOpen judges Perl's open with a pipe: a mode of "-|" or "|-" and
// the command after it, or a command with | at either end.
func (r *codeRun) pipeOpen(args []codeArg) {
	if len(args) < 2 {
		return
	}
	mode, _ := args[1].str()
	mode = strings.TrimSpace(mode)
	switch {
	case len(args) > 2 && (mode == "-|" || mode == "|-"):
		if len(args) == 3 {
			if s, ok := args[2].str(); ok {
				r.runText(s)
				return
			}
		}
		r.runArgv(argWords(args[2:]))
	case strings.HasPrefix(mode, "|") || strings.HasSuffix(mode, "|"):
		r.runText(strings.Trim(mode, "|"))
	}
}

// unseen handles code that runs commands it builds where the guard cannot
// see them: every string in the code might be the command, and so might
// the code's input.
func (r *codeRun) unseen(toks []codeTok) {
	c, st := r.c, r.st
	for _, t := range toks {
		if !t.kind.isText() || t.used || strings.TrimSpace(t.text) == "" {
			continue
		}
		if c.parse(t.text).err != nil {
			// Prose, not a command line ("kill failed (x"): only the
			// tools that kill by name count.
			if w := mentionedKillWord(t.text); w != "" && w != "kill" {
				c.deny(st.text, fmt.Sprintf("its code runs commands it builds at run time, and one of its strings names %s", w))
				return
			}
			continue
		}
		c.script(t.text, st.off, nil, false, feed{})
		if c.found != nil {
			c.found.why = "its code runs commands it builds at run time, and one of its strings would be refused: " + c.found.why
			c.found.text = st.text
			return
		}
	}
	if !r.fromStdin {
		for _, t := range st.in.texts {
			if w := mentionedKillWord(t); w != "" && w != "kill" {
				c.deny(st.text, fmt.Sprintf("its code runs commands it builds at run time and its input names %s", w))
				return
			}
		}
	}
}

// killsListed returns why code that signals processes it finds in a
// process listing is refused, or "": a listing on its input (ps aux |
// python3 -c …), or one the code makes itself (psutil.process_iter,
// ps-list, /proc, a pgrep it runs). Signalling by PID alone, or listing
// without signalling, is fine.
func killsListed(toks []codeTok, names map[string]bool, inPids bool) string {
	if inPids && names["kill"] {
		return "it reads a process listing and its code calls kill on it"
	}
	signal := ""
	for _, s := range [...]string{"kill", "killpg", "posix_kill", "terminate", "send_signal"} {
		if names[s] {
			signal = s
			break
		}
	}
	if signal == "" {
		return ""
	}
	if what := processListing(toks, names); what != "" {
		return fmt.Sprintf("its code lists processes (%s) and calls %s on what it finds, which kills by name in two steps", what, signal)
	}
	return ""
}

// loadsPortKiller names a kill-by-name or kill-by-port library that code
// loads (require('fkill'), import killPort from 'kill-port'), or returns
// "": a module name as a string beside require or import.
func loadsPortKiller(toks []codeTok, names map[string]bool) string {
	if !names["require"] && !names["import"] && !names["from"] {
		return ""
	}
	for _, t := range toks {
		if !t.kind.isText() {
			continue
		}
		if m := strings.TrimSpace(t.text); isPortKiller(packageName(m)) {
			return m
		}
	}
	return ""
}

// codeKillsGroup returns why code whose kill call has a literal target
// that bash's kill is refused for (-1, 0, a negative process group) is
// refused, or "": os.kill(-1, 9), process.kill(0), os.killpg(0, 9),
// posix_kill(-1, 9), Ruby's Process.kill(9, -1), Perl's kill 9, -1. A
// target the code computes (a child's PID) is not judged.
func codeKillsGroup(l lang, toks []codeTok) string {
	for i, t := range toks {
		if t.kind != tokName {
			continue
		}
		group := false
		switch t.text[strings.LastIndexAny(t.text, ".:")+1:] {
		case "kill", "posix_kill":
		case "killpg":
			group = true
		default:
			continue
		}
		args := codeCallArgs(toks[i+1:], l == langPerl)
		targets := args[:min(1, len(args))]
		if t.text == "Process.kill" || l == langPerl && t.text == "kill" {
			targets = args[min(1, len(args)):] // the signal comes first
		}
		for _, a := range targets {
			if group && isDigits(a) {
				a = "-" + a // killpg(N) signals group N, as kill -N does
			}
			if why := pidWhy(a); why != "" {
				return why
			}
		}
	}
	return ""
}

// codeCallArgs returns the arguments of the call whose tokens follow its
// name, each as its tokens' text joined: in parentheses, or, for Perl's
// list operators (bare), up to the statement's end.
func codeCallArgs(toks []codeTok, bare bool) []string {
	if len(toks) == 0 || !toks[0].is("(") && !bare {
		return nil
	}
	start := 0
	if toks[0].is("(") {
		start = 1
	}
	var out []string
	var cur strings.Builder
	depth := 0
	for _, t := range toks[start:] {
		switch {
		case t.is("(") || t.is("[") || t.is("{"):
			depth++
		case t.is(")") || t.is("]") || t.is("}"):
			if depth == 0 {
				return append(out, cur.String())
			}
			depth--
		case depth == 0 && t.is(","):
			out = append(out, cur.String())
			cur.Reset()
			continue
		case depth == 0 && t.is(";"):
			return append(out, cur.String())
		}
		cur.WriteString(t.text)
		if len(out) > 8 {
			return out
		}
	}
	return append(out, cur.String())
}

// writesKillFile returns why code that opens or writes a file naming a
// kill file (cgroup.kill, cgroup.freeze, the SysRq trigger) in a string
// is refused, or "". Naming one without a call that writes is a mention.
func writesKillFile(toks []codeTok, names map[string]bool) string {
	if !slices.ContainsFunc([]string{"open", "write", "writeFile", "writeFileSync", "appendFile", "appendFileSync",
		"createWriteStream", "write_text", "write_bytes", "WriteFile", "OpenFile", "binwrite", "syswrite"},
		func(w string) bool { return names[w] }) {
		return ""
	}
	for _, t := range joinedTexts(toks) {
		if why := killFile(strings.TrimSpace(t)); why != "" {
			return why
		}
	}
	return ""
}

// joinedTexts returns the code's literal strings, each run of them that
// the code joins ('cgroup.' + 'kill', Lua's .., Perl's ., Python's
// 'a' 'b') as one, after the strings alone.
func joinedTexts(toks []codeTok) []string {
	var out, runs []string
	var run strings.Builder
	n := 0 // strings in run
	end := func() {
		if n > 1 {
			runs = append(runs, run.String())
		}
		run.Reset()
		n = 0
	}
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if !t.kind.isText() {
			end()
			continue
		}
		out = append(out, t.text)
		run.WriteString(t.text)
		n++
		// The operator between this string and the next one, if any.
		j := i + 1
		for j < len(toks) && j < i+3 && toks[j].kind == tokPunct && (toks[j].text == "+" || toks[j].text == ".") {
			j++
		}
		if j >= len(toks) || !toks[j].kind.isText() {
			end()
			continue
		}
		i = j - 1
	}
	end()
	return append(out, runs...)
}

// processListing names the way code lists processes, or returns "": a
// process-table library (Python's psutil, Node's ps-list, find-process and
// ps-node, Ruby's Sys::ProcTable, Perl's Proc::ProcessTable), a listing
// of /proc or a cgroup, or a PID-listing command that it runs.
func processListing(toks []codeTok, names map[string]bool) string {
	switch {
	case names["psutil"] && (names["process_iter"] || names["pids"] || names["net_connections"] || names["connections"]):
		return "psutil"
	case names["ProcTable"]:
		return "Sys::ProcTable"
	case names["ProcessTable"]:
		return "Proc::ProcessTable"
	}
	for _, t := range toks {
		if !t.kind.isText() && t.kind != tokShell {
			continue
		}
		s := strings.TrimSpace(t.text)
		switch s {
		case "ps-list", "find-process", "ps-node", "process-list":
			return s
		}
		if pidPath(s) {
			return s
		}
		// A command: a call site's argument, text for a shell
		// (backticks, qx{…}, %x(…): it runs), or words with arguments
		// ('top' alone may be anything).
		if f := strings.Fields(s); len(f) > 0 && isPidLister(baseName(f[0])) && (t.used || t.kind == tokShell || len(f) > 1) {
			return f[0]
		}
	}
	return ""
}

// keyList returns the list under key in an object argument ({args: […]}).
func keyList(a codeArg, key string) []arg {
	for i := 0; i+2 < len(a.toks); i++ {
		if a.toks[i].kind == tokName && a.toks[i].text == key && a.toks[i+1].text == ":" {
			if list, ok := (codeArg{a.toks[i+2:]}).list(); ok {
				return list
			}
		}
	}
	return nil
}

// markUsed marks the string tokens of a call's arguments as judged.
func markUsed(toks []codeTok, from int, args []codeArg) {
	n := 0
	for _, a := range args {
		n += len(a.toks) + 1
	}
	for k := from; k < len(toks) && k < from+n+1; k++ {
		if toks[k].kind.isText() {
			toks[k].used = true
		}
	}
}

// codeNames is the set of name parts in code (os.kill gives os and kill).
func codeNames(toks []codeTok) map[string]bool {
	out := make(map[string]bool)
	for _, t := range toks {
		if t.kind != tokName {
			continue
		}
		for _, p := range strings.FieldsFunc(t.text, func(r rune) bool { return r == '.' || r == ':' || r == '$' || r == '@' }) {
			out[p] = true
		}
	}
	return out
}

func nameList(toks []codeTok) []string {
	var out []string
	for _, t := range toks {
		if t.kind == tokName {
			out = append(out, t.text)
		}
	}
	return out
}

// tcl judges Tcl and expect code: exec and spawn run a program with
// runsCommands reports whether code may run a command line: the call
// sites of the usual languages (system, exec, popen, spawn, subprocess,
// child_process, backticks, qx, shell_exec, awk's getline and pipes).
func runsCommands(code string) bool {
	s := strings.ToLower(code)
	for _, m := range []string{"system", "exec", "popen", "spawn", "subprocess", "child_process",
		"`", "qx", "shell", "passthru", "proc_open", "getline", "|\"", "| \"", "\"|", "|&", "call(", "run("} {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}
