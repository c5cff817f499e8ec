package guard

// Tcl and expect code, and makefiles: each has a shape of its own (a
// command per line with braced bodies; recipes and $(shell …)), so they
// are read here rather than by the token lexer in code.go.

import (
	"fmt"
	"strings"
)

// tcl judges Tcl and expect code: exec and spawn run a program with
// their words, system and open "|…" hand text to a shell, send types text
// into what spawn started (often a shell). Braced bodies and [command]
// substitutions are read as code too.
func (c *checker) tcl(st site, src string, depth int) {
	// A word only known at run time may be a PID the script's input
	// listed, or one it listed itself (foreach p [exec pgrep node]
	// {exec kill $p}): judged as bash's kill $(pgrep node) is.
	c.tclIn(st, src, depth, st.in.pids || tclLists(src, 0))
}

// tclIn is tcl with listed: the script lists processes.
func (c *checker) tclIn(st site, src string, depth int, listed bool) {
	if depth > 8 || !c.step(st.text, 1+len(src)/16) {
		return
	}
	for _, words := range tclCommands(src) {
		if c.stopped() {
			return
		}
		for _, w := range words {
			if w.body != "" {
				c.tclIn(st, w.body, depth+1, listed)
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
				a.pids = a.pids || !a.known && listed
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

// tclLists reports whether Tcl code runs a command that lists PIDs
// (exec pgrep, open "|ps ..."), in it or in its bodies.
func tclLists(src string, depth int) bool {
	if depth > 8 {
		return false
	}
	for _, words := range tclCommands(src) {
		for _, w := range words {
			if w.body != "" && tclLists(w.body, depth+1) {
				return true
			}
		}
		if len(words) < 2 || !words[0].a.known {
			continue
		}
		switch words[0].a.text {
		case "exec", "spawn", "open":
			for _, w := range words[1:] {
				if !w.a.known || strings.HasPrefix(w.a.text, "-") && w.a.text != "-" {
					continue
				}
				if f := strings.Fields(strings.TrimPrefix(w.a.text, "|")); len(f) > 0 && isPidLister(baseName(f[0])) {
					return true
				}
				break
			}
		}
	}
	return false
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
