package guard

// Code that an interpreter runs (python -c, perl -e, node -e, awk's
// program, a script the input writes or pipes in) is judged by what it
// would execute, not by the words in it. The code is cut into tokens with
// its comments dropped; the call sites that start a command are found
// (os.system, subprocess.run, execSync, system, backticks, …); a string
// handed to a shell there is checked as a shell script, and a list of
// words (subprocess.run(["git", "grep", "pkill"])) as the command it is.
// Parts of a string only known at run time ("kill " + pid, f"kill {pid}")
// become a variable of unknown value, so they are judged as $pid would be.
// Where a call site's argument is not a literal, the strings of the code
// are each checked as a command line instead. Kills native to the
// language (os.kill(-1, 9), process.kill) are out of reach, except that
// code reading a PID listing and calling kill is refused.

import (
	"fmt"
	"strings"
)

// lang is the syntax family of an interpreter's code.
type lang int

const (
	langPython lang = iota
	langPerl
	langRuby
	langJS
	langPHP
	langAwk
	langLua
	langR
	langTcl
)

func langOf(name string) lang {
	switch name {
	case "perl":
		return langPerl
	case "ruby":
		return langRuby
	case "node", "nodejs", "deno", "bun", "osascript":
		return langJS
	case "php":
		return langPHP
	case "awk", "gawk", "mawk", "nawk":
		return langAwk
	case "lua", "luajit":
		return langLua
	case "Rscript":
		return langR
	case "tclsh", "expect", "wish":
		return langTcl
	}
	return langPython
}

// codeTok is a token of code.
type codeTok struct {
	kind byte   // 'i' name, 's' string, 'x' shell text (backticks, qx), 't' template string, 'p' punctuation
	text string // the name, the string's value, or the punctuation
	dyn  bool   // a string with parts only known at run time
	used bool
}

// codeVar stands for what code computes at run time.
const codeVar = "${__aisan_code}"

// lexCode cuts code into tokens, dropping comments. It is forgiving: an
// unterminated string runs to the end.
func lexCode(l lang, s string) []codeTok {
	var toks []codeTok
	for i := 0; i < len(s); {
		ch := s[i]
		switch {
		case ch == ' ' || ch == '\t' || ch == '\r':
			i++
		case ch == '\n' || ch == ';':
			toks = append(toks, codeTok{kind: 'p', text: ";"})
			i++
		case ch == '#' && l != langJS && l != langLua && !(l == langPerl && i > 0 && s[i-1] == '$'):
			i = skipLine(s, i)
		case ch == '/' && i+1 < len(s) && s[i+1] == '/' && (l == langJS || l == langPHP):
			i = skipLine(s, i)
		case ch == '/' && i+1 < len(s) && s[i+1] == '*' && (l == langJS || l == langPHP):
			if j := strings.Index(s[i+2:], "*/"); j >= 0 {
				i += j + 4
			} else {
				i = len(s)
			}
		case ch == '-' && i+1 < len(s) && s[i+1] == '-' && l == langLua:
			i = skipLine(s, i)
		case ch == '%' && l == langRuby && i+2 < len(s) && s[i+1] == 'x':
			if t, n, ok := quoteOp(l, "%x", s[i+2:]); ok {
				toks = append(toks, t)
				i += 2 + n
				continue
			}
			toks = append(toks, codeTok{kind: 'p', text: "%"})
			i++
		case ch == '\'' || ch == '"' || ch == '`':
			t, n := lexString(l, s[i:])
			toks = append(toks, t)
			i += n
		case isNameByte(ch) || ch == '$' || ch == '@':
			j := i + 1
			for j < len(s) && (isNameByte(s[j]) || s[j] == '.' && j+1 < len(s) && isNameByte(s[j+1]) || s[j] == ':' && j+1 < len(s) && s[j+1] == ':') {
				if s[j] == ':' {
					j++
				}
				j++
			}
			name := s[i:j]
			// String prefixes (r"…", f"…") and quote operators (qx{…}).
			if j < len(s) && (s[j] == '\'' || s[j] == '"') && l == langPython && len(name) <= 2 && strings.Trim(strings.ToLower(name), "rbuf") == "" {
				t, n := lexString(l, s[j:])
				if strings.ContainsAny(name, "fF") {
					t = fstring(t)
				}
				toks = append(toks, t)
				i = j + n
				continue
			}
			if t, n, ok := quoteOp(l, name, s[j:]); ok {
				toks = append(toks, t)
				i = j + n
				continue
			}
			toks = append(toks, codeTok{kind: 'i', text: name})
			i = j
		default:
			toks = append(toks, codeTok{kind: 'p', text: s[i : i+1]})
			i++
		}
	}
	return toks
}

func isNameByte(ch byte) bool {
	return ch == '_' || ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9'
}

func skipLine(s string, i int) int {
	if j := strings.IndexByte(s[i:], '\n'); j >= 0 {
		return i + j
	}
	return len(s)
}

// lexString reads a string literal at the start of s and returns it with
// its length. Backticks are shell text in Perl, Ruby and PHP, and template
// strings in JavaScript.
func lexString(l lang, s string) (codeTok, int) {
	q := s[0]
	delim := s[:1]
	if l == langPython && len(s) >= 3 && s[1] == q && s[2] == q {
		delim = s[:3]
	}
	kind := byte('s')
	if q == '`' {
		kind = 'x'
		if l == langJS {
			kind = 't'
		}
	}
	interp := q != '\'' && l != langPython && l != langAwk && l != langLua
	var b strings.Builder
	dyn := false
	i := len(delim)
	for i < len(s) && !strings.HasPrefix(s[i:], delim) {
		ch := s[i]
		switch {
		case ch == '\\' && i+1 < len(s):
			if q == '\'' && s[i+1] != '\'' && s[i+1] != '\\' {
				b.WriteByte(ch)
				i++
				continue
			}
			b.WriteString(codeEscape(s[i+1]))
			i += 2
			continue
		case interp && ch == '$' && i+1 < len(s) && s[i+1] == '{' && (l == langJS || kind == 'x'):
			if kind == 'x' {
				b.WriteByte(ch)
				i++
				continue
			}
			j := matchClose(s, i+1, '{', '}')
			b.WriteString(codeVar)
			dyn = true
			i = j
			continue
		case interp && ch == '#' && i+1 < len(s) && s[i+1] == '{' && l == langRuby:
			j := matchClose(s, i+1, '{', '}')
			b.WriteString(codeVar)
			dyn = true
			i = j
			continue
		case interp && ch == '$' && (l == langPerl || l == langPHP) && kind == 's':
			dyn = true
		}
		b.WriteByte(ch)
		i++
	}
	return codeTok{kind: kind, text: b.String(), dyn: dyn}, min(i+len(delim), len(s))
}

// codeEscape decodes the common backslash escapes of string literals.
func codeEscape(ch byte) string {
	switch ch {
	case 'n':
		return "\n"
	case 't':
		return "\t"
	case 'r':
		return "\r"
	case '0':
		return ""
	}
	return string(ch)
}

// matchClose returns the index after the bracket that closes the one at
// s[i], or len(s).
func matchClose(s string, i int, open, close byte) int {
	depth := 0
	for j := i; j < len(s); j++ {
		switch s[j] {
		case open:
			depth++
		case close:
			depth--
			if depth == 0 {
				return j + 1
			}
		}
	}
	return len(s)
}

// fstring turns the {…} fields of a Python f-string into a run-time part.
func fstring(t codeTok) codeTok {
	var b strings.Builder
	s := t.text
	for i := 0; i < len(s); i++ {
		switch {
		case strings.HasPrefix(s[i:], "{{"):
			b.WriteByte('{')
			i++
		case s[i] == '{':
			i = matchClose(s, i, '{', '}') - 1
			b.WriteString(codeVar)
			t.dyn = true
		default:
			b.WriteByte(s[i])
		}
	}
	t.text = b.String()
	return t
}

// quoteOp reads Perl's qx/q/qq and Ruby's %x/%q/%Q quote operators.
func quoteOp(l lang, name, rest string) (codeTok, int, bool) {
	kind := byte(0)
	switch {
	case l == langPerl && name == "qx", l == langRuby && name == "%x":
		kind = 'x'
	case l == langPerl && (name == "q" || name == "qq"):
		kind = 's'
	}
	if kind == 0 || rest == "" {
		return codeTok{}, 0, false
	}
	open := rest[0]
	close := open
	switch open {
	case '(':
		close = ')'
	case '{':
		close = '}'
	case '[':
		close = ']'
	case '<':
		close = '>'
	case ' ', '\t', '\n', '=', ',', ';', ')':
		return codeTok{}, 0, false
	}
	end := strings.IndexByte(rest[1:], close)
	if end < 0 {
		end = len(rest) - 1
	}
	return codeTok{kind: kind, text: rest[1 : 1+end]}, min(end+2, len(rest)), true
}

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
	switch l {
	case langPython:
		switch last {
		case "system", "popen", "popen2", "popen3", "popen4", "getoutput", "getstatusoutput", "create_subprocess_shell":
			return callShell
		case "run", "call", "check_call", "check_output", "Popen":
			return callSubproc
		case "execl", "execle", "execlp", "execlpe", "execv", "execve", "execvp", "execvpe", "spawnl", "spawnle",
			"spawnlp", "spawnlpe", "spawnv", "spawnve", "spawnvp", "spawnvpe", "posix_spawn", "posix_spawnp":
			return callExecv
		case "create_subprocess_exec":
			return callShellOr
		case "spawn":
			if strings.HasPrefix(name, "pty") {
				return callArgv
			}
		case "exec", "eval":
			return callCode
		}
	case langPerl:
		switch last {
		case "system", "exec":
			return callShellOr
		case "open":
			return callPipeOpen
		case "readpipe":
			return callShell
		}
	case langRuby:
		switch last {
		case "system", "exec", "spawn", "popen", "capture2", "capture2e", "capture3", "popen2", "popen2e", "popen3", "pipeline":
			return callShellOr
		}
	case langJS:
		switch last {
		case "execSync", "exec", "execaCommand", "execaCommandSync":
			return callShell
		case "execFile", "execFileSync", "spawn", "spawnSync", "execa", "execaSync":
			if strings.HasPrefix(name, "Bun.") {
				return callArgv
			}
			return callSpawn
		case "Command":
			return callSpawn
		}
	case langPHP:
		switch last {
		case "system", "exec", "shell_exec", "passthru", "popen", "proc_open":
			return callShell
		case "pcntl_exec":
			return callSpawn
		}
	case langAwk:
		if last == "system" {
			return callShell
		}
	case langLua:
		if name == "os.execute" || name == "io.popen" {
			return callShell
		}
	case langR:
		switch last {
		case "system", "shell":
			return callShell
		case "system2", "processx::run":
			return callSpawn
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
		case 's', 't':
			if i+2 < len(toks) && toks[i+1].kind == 'p' && toks[i+1].text == "%" {
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
		case 'p':
			switch t.text {
			case "(", "[", "{":
				if depth == 0 && lit {
					b.WriteString(codeVar)
				}
				depth++
			case ")", "]", "}":
				depth--
			}
		case 'i':
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
	case len(rest) > 0 && rest[0].kind == 's':
		val, used = rest[0].text, 1
	case len(rest) > 0 && rest[0].kind == 'i' && isDigits(rest[0].text):
		val, used = rest[0].text, 1
	case len(rest) > 1 && rest[0].text == "-" && rest[1].kind == 'i' && isDigits(rest[1].text):
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
	if len(a.toks) < 2 || a.toks[0].kind != 'p' || a.toks[0].text != "[" {
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
		if a.toks[i].kind == 'i' && a.toks[i].text == name && (a.toks[i+1].text == "=" || a.toks[i+1].text == ":") {
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
		if t.kind == 'p' {
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
	if next.kind == 'p' && next.text == "(" {
		return splitCallArgs(toks[i+2:]), true
	}
	if (l == langPerl || l == langRuby || l == langAwk) && (next.kind == 's' || next.kind == 'i' && next.text[0] == '$') {
		return splitCallArgs(toks[i+1:]), true
	}
	return nil, false
}

// code judges code given to an interpreter. in is what the interpreter
// reads; fromStdin says the code itself came from there.
func (c *checker) code(st site, l lang, src string, fromStdin bool, depth int) {
	if !c.step(st.text, 1+len(src)/16) || depth > 4 {
		return
	}
	c.assign("__aisan_code", arg{text: codeVar, src: codeVar, pids: st.in.pids})
	if l == langTcl {
		c.tcl(st, src, 0)
		return
	}
	toks := lexCode(l, src)
	cmdIn := st.in
	if fromStdin {
		cmdIn = feed{}
	}
	resolved, unresolved := 0, false
	runText := func(s string) {
		resolved++
		c.script(s, st.off, nil, false, cmdIn)
	}
	runArgv := func(words []arg) {
		resolved++
		for i := range words {
			words[i].pids = words[i].pids || !words[i].known && st.in.pids
		}
		c.examine(st.withIn(cmdIn), words)
	}
	for i := range toks {
		if c.stopped() {
			return
		}
		t := &toks[i]
		switch t.kind {
		case 'x':
			t.used = true
			runText(t.text)
			continue
		case 't':
			if i > 0 && toks[i-1].kind == 'i' && (toks[i-1].text == "$" || strings.HasSuffix(toks[i-1].text, ".$") || toks[i-1].text == "sh") {
				t.used = true
				runText(t.text)
			}
			continue
		case 'p':
			// awk: "cmd" | getline, print … | "cmd".
			if l == langAwk && t.text == "|" {
				if i > 0 && toks[i-1].kind == 's' && i+1 < len(toks) && toks[i+1].text == "getline" {
					toks[i-1].used = true
					runText(toks[i-1].text)
				} else if i+1 < len(toks) && toks[i+1].kind == 's' {
					toks[i+1].used = true
					runText(toks[i+1].text)
				}
			}
			continue
		case 'i':
		default:
			continue
		}
		kind := callSite(l, t.text)
		if kind == callNone {
			continue
		}
		args, ok := callArgs(l, toks, i)
		if !ok || len(args) == 0 {
			continue
		}
		markUsed(toks, i+1, args)
		first := args[0]
		if l == langRuby && len(first.toks) > 0 && first.toks[0].text == "{" && len(args) > 1 {
			args = args[1:] // an environment hash
			first = args[0]
		}
		switch kind {
		case callShell:
			if s, ok := first.str(); ok {
				runText(s)
			} else if words, ok := first.list(); ok {
				runArgv(words)
			} else {
				unresolved = true
			}
		case callShellOr:
			if words, ok := first.list(); ok {
				runArgv(words)
			} else if len(args) > 1 {
				runArgv(argWords(args))
			} else if s, ok := first.str(); ok {
				runText(s)
			} else {
				unresolved = true
			}
		case callSubproc:
			shell := hasKeyword(args[1:], "shell")
			words, isList := first.list()
			s, isStr := first.str()
			switch {
			case shell && isList && len(words) > 0:
				runText(words[0].text)
			case shell && isStr:
				runText(s)
			case isList:
				runArgv(words)
			case isStr:
				runArgv([]arg{first.word()})
			default:
				unresolved = true
			}
		case callSpawn:
			shell := hasKeyword(args[1:], "shell")
			if _, isStr := first.str(); !isStr {
				unresolved = true
				break
			}
			words := []arg{first.word()}
			if len(args) > 1 {
				if rest, ok := args[1].list(); ok {
					words = append(words, rest...)
				} else if ks := keyList(args[1], "args"); ks != nil {
					words = append(words, ks...)
				}
			}
			if shell {
				runText(joinTexts(words))
			} else {
				runArgv(words)
			}
		case callExecv:
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
			if len(words) > 1 && words[1].text == words[0].text || len(words) > 1 && baseName(words[1].text) == baseName(words[0].text) {
				words = append(words[:1], words[2:]...)
			}
			if len(words) == 0 {
				unresolved = true
				break
			}
			runArgv(words)
		case callArgv:
			if words, ok := first.list(); ok {
				runArgv(words)
			} else {
				unresolved = true
			}
		case callPipeOpen:
			if len(args) < 2 {
				break
			}
			mode, _ := args[1].str()
			switch {
			case len(args) > 2 && (strings.TrimSpace(mode) == "-|" || strings.TrimSpace(mode) == "|-"):
				if len(args) == 3 {
					if s, ok := args[2].str(); ok {
						runText(s)
						break
					}
				}
				runArgv(argWords(args[2:]))
			case strings.HasPrefix(strings.TrimSpace(mode), "|") || strings.HasSuffix(strings.TrimSpace(mode), "|"):
				runText(strings.Trim(strings.TrimSpace(mode), "|"))
			}
		case callCode:
			if s, ok := first.str(); ok {
				resolved++
				c.code(st, l, s, fromStdin, depth+1)
			}
		}
	}
	if c.stopped() {
		return
	}
	names := codeNames(toks)
	if st.in.pids && names["kill"] {
		c.deny(st.text, "it reads a process listing and its code calls kill on it")
		return
	}
	if !unresolved && !(resolved == 0 && runsCommands(strings.Join(nameList(toks), " "))) {
		return
	}
	// Some command is built where the guard cannot see: every string in
	// the code might be it, and so might the input.
	for _, t := range toks {
		if (t.kind == 's' || t.kind == 't') && !t.used && strings.TrimSpace(t.text) != "" {
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
	}
	if !fromStdin {
		for _, t := range st.in.texts {
			if w := mentionedKillWord(t); w != "" && w != "kill" {
				c.deny(st.text, fmt.Sprintf("its code runs commands it builds at run time and its input names %s", w))
				return
			}
		}
	}
}

// keyList returns the list under key in an object argument ({args: […]}).
func keyList(a codeArg, key string) []arg {
	for i := 0; i+2 < len(a.toks); i++ {
		if a.toks[i].kind == 'i' && a.toks[i].text == key && a.toks[i+1].text == ":" {
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
		if toks[k].kind == 's' || toks[k].kind == 't' {
			toks[k].used = true
		}
	}
}

// codeNames is the set of name parts in code (os.kill gives os and kill).
func codeNames(toks []codeTok) map[string]bool {
	out := make(map[string]bool)
	for _, t := range toks {
		if t.kind != 'i' {
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
		if t.kind == 'i' {
			out = append(out, t.text)
		}
	}
	return out
}

// tcl judges Tcl and expect code: exec and spawn run a program with
// their words, system and open "|…" hand text to a shell, send types text
// into what spawn started (often a shell). Braced bodies and [command]
// substitutions are read as code too.
func (c *checker) tcl(st site, src string, depth int) {
	if depth > 8 || !c.step(st.text, 1+len(src)/16) {
		return
	}
	for _, words := range tclCommands(src) {
		if c.stopped() {
			return
		}
		for _, w := range words {
			if w.body != "" {
				c.tcl(st, w.body, depth+1)
			}
		}
		if len(words) == 0 || !words[0].a.known {
			continue
		}
		rest := make([]arg, 0, len(words))
		for _, w := range words[1:] {
			rest = append(rest, w.a)
		}
		switch words[0].a.text {
		case "exec", "spawn":
			i := 0
			for i < len(rest) && rest[i].known && strings.HasPrefix(rest[i].text, "-") {
				if rest[i].text == "--" {
					i++
					break
				}
				if rest[i].text == "-open" || rest[i].text == "-leaveopen" || rest[i].text == "-ignore" {
					i++
				}
				i++
			}
			var cmd []arg
			for _, a := range rest[min(i, len(rest)):] {
				if a.known && (a.text == "|" || a.text == "|&") {
					c.examine(st.withIn(feed{}), cmd)
					cmd = nil
					continue
				}
				if a.known && (strings.HasPrefix(a.text, ">") || strings.HasPrefix(a.text, "<") || strings.HasPrefix(a.text, "2>")) {
					continue
				}
				cmd = append(cmd, a)
			}
			c.examine(st.withIn(feed{}), cmd)
		case "system":
			c.script(joinTexts(rest), st.off, nil, false, feed{})
		case "send", "exp_send":
			for _, a := range rest {
				if !(a.known && strings.HasPrefix(a.text, "-")) {
					c.script(strings.ReplaceAll(a.text, "\r", "\n"), st.off, nil, false, feed{})
				}
			}
		case "open":
			if len(rest) > 0 && strings.HasPrefix(rest[0].text, "|") {
				c.examine(st.withIn(feed{}), splitArgs(rest[0].text[1:]))
			}
		}
	}
}

// tclWord is one word of a Tcl command: its value, and for a braced
// word or a [command], the text to read as code.
type tclWord struct {
	a    arg
	body string
}

// tclCommands splits Tcl code into commands and their words.
func tclCommands(s string) [][]tclWord {
	var cmds [][]tclWord
	var cur []tclWord
	i := 0
	for i < len(s) {
		ch := s[i]
		switch {
		case ch == '\n' || ch == ';':
			if len(cur) > 0 {
				cmds = append(cmds, cur)
			}
			cur = nil
			i++
		case ch == ' ' || ch == '\t' || ch == '\r':
			i++
		case ch == '\\' && i+1 < len(s) && s[i+1] == '\n':
			i += 2
		case ch == '#' && len(cur) == 0:
			i = skipLine(s, i)
		case ch == '{':
			j := matchClose(s, i, '{', '}')
			body := s[i+1 : max(i+1, j-1)]
			cur = append(cur, tclWord{a: knownArg(body), body: body})
			i = j
		default:
			var b strings.Builder
			known, body := true, ""
			quoted := ch == '"'
			if quoted {
				i++
			}
			for i < len(s) {
				ch := s[i]
				if quoted && ch == '"' {
					i++
					break
				}
				if !quoted && (ch == ' ' || ch == '\t' || ch == '\n' || ch == ';' || ch == '\r') {
					break
				}
				switch {
				case ch == '\\' && i+1 < len(s):
					b.WriteString(codeEscape(s[i+1]))
					i += 2
					continue
				case ch == '[':
					j := matchClose(s, i, '[', ']')
					body += s[i+1:max(i+1, j-1)] + "\n"
					b.WriteString(s[i:j])
					known = false
					i = j
					continue
				case ch == '$':
					known = false
				}
				b.WriteByte(ch)
				i++
			}
			w := tclWord{a: knownArg(b.String()), body: body}
			if !known {
				w.a = arg{text: b.String(), src: b.String()}
			}
			cur = append(cur, w)
		}
	}
	if len(cur) > 0 {
		cmds = append(cmds, cur)
	}
	return cmds
}

// makefile judges a makefile that make reads: every recipe line runs in
// a shell, and so does every $(shell …). Make's own references become
// run-time values; $$ is a $ for the shell.
func (c *checker) makefile(st site, src string) {
	if !c.step(st.text, 1+len(src)/16) {
		return
	}
	src = strings.ReplaceAll(src, "\\\n", " ")
	for _, sh := range makeShells(src) {
		c.script(makeRefs(sh), st.off, nil, false, feed{})
	}
	for _, line := range strings.Split(src, "\n") {
		var recipe string
		switch {
		case strings.HasPrefix(line, "\t"):
			recipe = line[1:]
		case !strings.HasPrefix(line, "#") && strings.Contains(line, ":") && strings.Contains(line, ";"):
			_, recipe, _ = strings.Cut(line, ";")
		default:
			continue
		}
		recipe = strings.TrimLeft(recipe, " \t@-+")
		if recipe != "" {
			c.script(makeRefs(recipe), st.off, nil, false, feed{})
		}
		if c.stopped() {
			return
		}
	}
}

// makeShells returns the text of every $(shell …) in a makefile.
func makeShells(s string) []string {
	var out []string
	for {
		i := strings.Index(s, "$(shell ")
		if i < 0 {
			return out
		}
		j := matchClose(s, i+1, '(', ')')
		out = append(out, s[i+8:max(i+8, j-1)])
		s = s[j:]
	}
}

// makeRefs rewrites make's references in a recipe for the shell.
func makeRefs(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			i = matchClose(s, i+1, '(', ')') - 1
			b.WriteString(codeVar)
		case '{':
			i = matchClose(s, i+1, '{', '}') - 1
			b.WriteString(codeVar)
		default:
			b.WriteString(codeVar)
			i++
		}
	}
	return b.String()
}

var makeSpec = optSpec{vals: "CfIoW", permute: true,
	long: []string{"directory=", "file=", "makefile=", "include-dir=", "eval=", "old-file=", "assume-old=",
		"what-if=", "new-file=", "assume-new=", "jobs", "load-average", "debug", "output-sync", "shuffle"}}

// make checks the makefiles that make reads when the input shows them:
// standard input (-f -), a file the input writes, --eval text.
func (c *checker) make(st site, args []arg) {
	opts, _ := parseOpts(args, makeSpec)
	for _, e := range optVals(opts, "eval") {
		c.makefile(st, e.text)
	}
	files := optVals(opts, "f", "file", "makefile")
	dir := ""
	if d, ok := optVal(opts, "C", "directory"); ok && d.known {
		dir = d.text + "/"
	}
	if len(files) == 0 {
		for _, n := range []string{"GNUmakefile", "makefile", "Makefile"} {
			files = append(files, knownArg(dir+n))
		}
	}
	for _, f := range files {
		switch {
		case f.feed != nil:
			c.makefileFeed(st, *f.feed)
		case f.known && (f.text == "-" || f.text == "/dev/stdin"):
			c.makefileFeed(st, st.in)
		case f.known:
			if ff, ok := c.fileFeed(f.text); ok {
				c.makefileFeed(st, ff)
			}
		}
	}
}

func (c *checker) makefileFeed(st site, f feed) {
	for _, t := range f.texts {
		c.makefile(st.withIn(feed{}), t)
	}
	if w := coarseKillWord(f.opaque); w != "" {
		c.deny(st.text, fmt.Sprintf("make reads a makefile the guard cannot see, and %s appears in what produces it", quoteWord(w)))
	}
}

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
