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
// language (os.kill, process.kill) are out of reach, except on a literal
// target the shell's kill is refused for (-1, 0, a negative group), and
// except that code that lists processes (a PID listing on its input,
// psutil, ps-list, /proc, pgrep) and signals what it finds is refused.
//
// This file holds the languages and the lexer; codecall.go the judging,
// codetcl.go Tcl and makefiles, which have shapes of their own.

import (
	"strings"
)

// lang is the syntax family of an interpreter's code, an index into langs.
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

// langSpec is what the lexer and the judge need to know of a language.
type langSpec struct {
	hashComments  bool // # starts a comment (not right after $, as in Perl's $#a)
	slashComments bool // // and /* … */ are comments
	dashComments  bool // -- starts a comment
	rawStrings    bool // "…" has no run-time parts
	pyStrings     bool // """…""" and the r, b, u, f prefixes; f"…" has run-time {…}
	templates     bool // `…` is a template string, and ${…} in a string is a run-time part
	hashBraces    bool // #{…} in a string is a run-time part
	sigils        bool // $ in a "…" string starts a run-time part
	bareCalls     bool // a call may go without parentheses: system "cmd"
	// quoteOps are the quote operators that start with a name: Perl's
	// qx{…}, q{…}, qq{…} (Ruby's %x(…) starts with punctuation and is
	// read by the lexer itself).
	quoteOps []quoteOp
	// calls are the call sites that start a command.
	calls []callGroup
}

type quoteOp struct {
	name string
	kind tokKind
}

// callGroup is a set of functions that run a command the same way.
type callGroup struct {
	kind   callKind
	names  []string // the called name's last part (after . : or ->), or the whole name when whole is set
	whole  bool
	prefix string // the whole name must start with this (pty.spawn, Bun.spawn)
}

// langs is indexed by lang. Its entries are constant data: building the
// table costs nothing at start-up, which the hook pays on every tool call.
var langs = [...]langSpec{
	langPython: {hashComments: true, rawStrings: true, pyStrings: true, calls: []callGroup{
		{kind: callShell, names: []string{"system", "popen", "popen2", "popen3", "popen4", "getoutput", "getstatusoutput", "create_subprocess_shell"}},
		{kind: callSubproc, names: []string{"run", "call", "check_call", "check_output", "Popen"}},
		{kind: callExecv, names: []string{"execl", "execle", "execlp", "execlpe", "execv", "execve", "execvp", "execvpe", "spawnl", "spawnle",
			"spawnlp", "spawnlpe", "spawnv", "spawnve", "spawnvp", "spawnvpe", "posix_spawn", "posix_spawnp"}},
		{kind: callShellOr, names: []string{"create_subprocess_exec"}},
		{kind: callArgv, names: []string{"spawn"}, prefix: "pty"},
		{kind: callCode, names: []string{"exec", "eval"}},
	}},
	langPerl: {hashComments: true, sigils: true, bareCalls: true,
		quoteOps: []quoteOp{{"qx", tokShell}, {"q", tokString}, {"qq", tokString}},
		calls: []callGroup{
			{kind: callShellOr, names: []string{"system", "exec"}},
			{kind: callPipeOpen, names: []string{"open"}},
			{kind: callShell, names: []string{"readpipe"}},
		}},
	langRuby: {hashComments: true, hashBraces: true, bareCalls: true, calls: []callGroup{
		{kind: callShellOr, names: []string{"system", "exec", "spawn", "popen", "capture2", "capture2e", "capture3", "popen2", "popen2e", "popen3", "pipeline"}},
	}},
	langJS: {slashComments: true, templates: true, calls: []callGroup{
		{kind: callShell, names: []string{"execSync", "exec", "execaCommand", "execaCommandSync"}},
		{kind: callArgv, names: []string{"execFile", "execFileSync", "spawn", "spawnSync", "execa", "execaSync"}, prefix: "Bun."},
		{kind: callSpawn, names: []string{"execFile", "execFileSync", "spawn", "spawnSync", "execa", "execaSync", "Command"}},
	}},
	langPHP: {hashComments: true, slashComments: true, sigils: true, calls: []callGroup{
		{kind: callShell, names: []string{"system", "exec", "shell_exec", "passthru", "popen", "proc_open"}},
		{kind: callSpawn, names: []string{"pcntl_exec"}},
	}},
	langAwk: {hashComments: true, rawStrings: true, bareCalls: true, calls: []callGroup{
		{kind: callShell, names: []string{"system"}},
	}},
	langLua: {dashComments: true, rawStrings: true, calls: []callGroup{
		{kind: callShell, names: []string{"os.execute", "io.popen"}, whole: true},
	}},
	langR: {hashComments: true, calls: []callGroup{
		{kind: callShell, names: []string{"system", "shell"}},
		{kind: callSpawn, names: []string{"system2"}},
		{kind: callSpawn, names: []string{"processx::run"}, whole: true},
	}},
	langTcl: {}, // read by tclCommands
}

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

// tokKind is what a token of code is.
type tokKind uint8

const (
	tokPunct    tokKind = iota // punctuation; a line end reads as ";"
	tokName                    // a name: os.system, $x, @a, processx::run
	tokString                  // a string literal, by its value
	tokShell                   // text for a shell: backticks, qx{…}, %x(…)
	tokTemplate                // a JavaScript template string
)

func (k tokKind) String() string {
	switch k {
	case tokName:
		return "name"
	case tokString:
		return "string"
	case tokShell:
		return "shell"
	case tokTemplate:
		return "template"
	}
	return "punct"
}

// isText reports whether the token is a string or a template string.
func (k tokKind) isText() bool { return k == tokString || k == tokTemplate }

// codeTok is a token of code.
type codeTok struct {
	kind tokKind
	text string // the name, the string's value, or the punctuation
	dyn  bool   // a string with parts only known at run time
	used bool   // a call site's argument, judged as such
}

// is reports whether the token is the punctuation p.
func (t codeTok) is(p string) bool { return t.kind == tokPunct && t.text == p }

// codeVar stands for what code computes at run time.
const codeVar = "${__aisan_code}"

// lexCode cuts code into tokens, dropping comments. It is forgiving: an
// unterminated string runs to the end.
func lexCode(l lang, s string) []codeTok {
	sp := &langs[l]
	var toks []codeTok
	for i := 0; i < len(s); {
		ch := s[i]
		switch {
		case ch == ' ' || ch == '\t' || ch == '\r':
			i++
		case ch == '\n' || ch == ';':
			toks = append(toks, codeTok{kind: tokPunct, text: ";"})
			i++
		case sp.hashComments && ch == '#' && !(i > 0 && s[i-1] == '$'),
			sp.slashComments && strings.HasPrefix(s[i:], "//"),
			sp.dashComments && strings.HasPrefix(s[i:], "--"):
			i = skipLine(s, i)
		case sp.slashComments && strings.HasPrefix(s[i:], "/*"):
			if j := strings.Index(s[i+2:], "*/"); j >= 0 {
				i += j + 4
			} else {
				i = len(s)
			}
		case ch == '%' && l == langRuby && strings.HasPrefix(s[i:], "%x"):
			if t, n, ok := quoteBody(tokShell, s[i+2:]); ok {
				toks = append(toks, t)
				i += 2 + n
				continue
			}
			toks = append(toks, codeTok{kind: tokPunct, text: "%"})
			i++
		case ch == '\'' || ch == '"' || ch == '`':
			t, n := lexString(sp, s[i:])
			toks = append(toks, t)
			i += n
		case isNameByte(ch) || ch == '$' || ch == '@':
			t, n := lexName(sp, s[i:])
			toks = append(toks, t)
			i += n
		default:
			toks = append(toks, codeTok{kind: tokPunct, text: s[i : i+1]})
			i++
		}
	}
	return toks
}

// lexName reads a name at the start of s (with . and :: inside it), or
// the string or quote operator that it prefixes (r"…", qx{…}).
func lexName(sp *langSpec, s string) (codeTok, int) {
	j := 1
	for j < len(s) && (isNameByte(s[j]) || s[j] == '.' && j+1 < len(s) && isNameByte(s[j+1]) || s[j] == ':' && j+1 < len(s) && s[j+1] == ':') {
		if s[j] == ':' {
			j++
		}
		j++
	}
	name := s[:j]
	if sp.pyStrings && j < len(s) && (s[j] == '\'' || s[j] == '"') && len(name) <= 2 && strings.Trim(strings.ToLower(name), "rbuf") == "" {
		t, n := lexString(sp, s[j:])
		if strings.ContainsAny(name, "fF") {
			t = fstring(t)
		}
		return t, j + n
	}
	for _, op := range sp.quoteOps {
		if name == op.name {
			if t, n, ok := quoteBody(op.kind, s[j:]); ok {
				return t, j + n
			}
		}
	}
	return codeTok{kind: tokName, text: name}, j
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
// its length. Backticks are shell text, except in JavaScript, where they
// are template strings.
func lexString(sp *langSpec, s string) (codeTok, int) {
	q := s[0]
	delim := s[:1]
	if sp.pyStrings && len(s) >= 3 && s[1] == q && s[2] == q {
		delim = s[:3]
	}
	kind := tokString
	if q == '`' {
		kind = tokShell
		if sp.templates {
			kind = tokTemplate
		}
	}
	interp := q != '\'' && !sp.rawStrings
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
		case interp && kind == tokShell && ch == '$':
			// ${…} in shell text is the shell's own.
		case interp && strings.HasPrefix(s[i:], "${") && sp.templates,
			interp && strings.HasPrefix(s[i:], "#{") && sp.hashBraces:
			i = matchClose(s, i+1, '{', '}')
			b.WriteString(codeVar)
			dyn = true
			continue
		case interp && ch == '$' && sp.sigils && kind == tokString:
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

// quoteBody reads the delimited body of a quote operator (qx{…}, %x(…)).
func quoteBody(kind tokKind, rest string) (codeTok, int, bool) {
	if rest == "" {
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
