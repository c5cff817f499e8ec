package main

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// writeMan writes aisan(1) in roff (the man macros): the commands from
// the table, each from its help text, and the environment from the
// README's table (envTable). Nothing in it is written twice by hand.
func writeMan(out io.Writer) error {
	w := bufio.NewWriter(out)
	v := readVersion()
	fmt.Fprintf(w, ".\\\" aisan(1): written by 'aisan help --man' from aisan's own help texts.\n")
	fmt.Fprintf(w, ".TH AISAN 1 %q %q \"User Commands\"\n", v.date, "aisan "+v.module)
	w.WriteString(".SH NAME\naisan \\- run AI coding agents in bubblewrap jails\n")
	w.WriteString(".SH SYNOPSIS\n")
	manSynopsis(w, mainSynopsis)
	w.WriteString(".SH DESCRIPTION\n")
	manBlocks(w, parseHelp(mainIntro).blocks)
	w.WriteString(".PP\nThe commands, each described below; \\fBaisan help\\fR \\fIcommand\\fR and\n\\fBaisan\\fR \\fIcommand\\fR \\fB\\-\\-help\\fR show the same text.\n")
	for _, c := range commands {
		if !c.hidden {
			fmt.Fprintf(w, ".TP\n.B %s\n%s\n", roff(c.name, true), roff(c.short, false))
		}
	}
	w.WriteString(".SH COMMANDS\n")
	for _, c := range commands {
		if c.hidden {
			continue
		}
		d := describe(c)
		fmt.Fprintf(w, ".SS %s\n", roff("aisan "+c.name, true))
		for _, s := range d.synopsis {
			manSynopsis(w, s)
		}
		manBlocks(w, d.blocks)
	}
	w.WriteString(".SH ENVIRONMENT\n")
	for _, e := range envTable {
		fmt.Fprintf(w, ".TP\n%s\n%s\n", markdownRoff(e.names), markdownRoff(e.effect))
	}
	w.WriteString(manTail)
	return w.Flush()
}

// manTail closes the page.
const manTail = `.SH FILES
.TP
.I $AISAN_HOME
aisan's state, ~/.aisan by default: slots/ holds one record per slot,
transcripts/ each slot's kept launches; read-only inside every jail.
.TP
.I /run/user/UID/aisan/locks
the locks aisan takes: each slot's, for as long as it runs, and those
around its state; out of reach of every jail and box. Without that
directory they are in run/locks of the state dir, which every jail
sees empty.
.SH EXIT STATUS
A launcher exits with the status of what it ran (128+N when a signal N
ended it; 126 and 127 when the command cannot run in the jail). Other
commands exit 0 on success, 2 on a usage error and 1 on any other error,
which they explain in an "aisan: error:" line followed by "aisan: hint:"
lines.
.SH SEE ALSO
.BR bwrap (1),
.BR xdg\-dbus\-proxy (1),
.BR systemd\-run (1)
`

// manSynopsis writes one synopsis line: the command in bold, the rest as
// written.
func manSynopsis(w *bufio.Writer, s string) {
	words := strings.Fields(s)
	n := 1
	if len(words) > 1 && !strings.ContainsAny(words[1][:1], "[<-") && words[1] == strings.ToLower(words[1]) && !strings.Contains(words[1], "|") {
		n = 2
	}
	n = min(n, len(words))
	fmt.Fprintf(w, ".PP\n.B %s\n", roff(strings.Join(words[:n], " "), true))
	if rest := strings.Join(words[n:], " "); rest != "" {
		fmt.Fprintf(w, "%s\n", roff(rest, true))
	}
}

// manBlocks writes the paragraphs, option lists and verbatim blocks of a
// help text.
func manBlocks(w *bufio.Writer, blocks []helpBlock) {
	for _, b := range blocks {
		switch b.kind {
		case prose:
			w.WriteString(".PP\n")
			for _, l := range b.lines {
				fmt.Fprintf(w, "%s\n", roff(l, false))
			}
		case optList:
			for _, o := range b.options {
				var tag []string
				for _, n := range o.names {
					tag = append(tag, "\\fB"+roff(n, true)+"\\fR")
				}
				t := strings.Join(tag, ", ")
				if o.metavar != "" {
					t += " \\fI" + roff(o.metavar, true) + "\\fR"
				}
				fmt.Fprintf(w, ".TP\n%s\n%s\n", t, roff(o.text, false))
			}
		case verbatim:
			indent := len(b.lines[0])
			for _, l := range b.lines {
				indent = min(indent, len(l)-len(strings.TrimLeft(l, " ")))
			}
			w.WriteString(".PP\n.RS 4\n.nf\n")
			for _, l := range b.lines {
				fmt.Fprintf(w, "%s\n", roff(l[indent:], true))
			}
			w.WriteString(".fi\n.RE\n")
		}
	}
}

// roff escapes text for a roff line: backslashes, a leading dot or
// quote, characters outside ASCII (as \[uXXXX], so no input encoding
// is assumed), and the hyphens of option names (every hyphen in code,
// the hyphens of words that begin with one in prose), which must stay
// minus signs to be copied.
func roff(s string, code bool) string {
	var b strings.Builder
	wordStart, optionWord := true, false
	for _, r := range s {
		switch {
		case r == ' ' || r == '\t':
			wordStart, optionWord = true, false
			b.WriteRune(r)
			continue
		case wordStart && r == '-':
			optionWord = true
		case wordStart && (r == '(' || r == '\'' || r == '"' || r == '`' || r == '['):
			// Still at the start of the word.
			b.WriteString(roffRune(r))
			continue
		}
		wordStart = false
		if r == '-' && (code || optionWord) {
			b.WriteString("\\-")
			continue
		}
		b.WriteString(roffRune(r))
	}
	out := b.String()
	if strings.HasPrefix(out, ".") || strings.HasPrefix(out, "'") {
		out = "\\&" + out
	}
	return out
}

// roffRune is one character for roff. Those outside ASCII that help
// texts use become groff's named glyphs, which every output device (ASCII
// too) can show.
func roffRune(r rune) string {
	switch r {
	case '\\':
		return "\\e"
	case '…':
		return "..."
	case '—':
		return "\\(em"
	case '–':
		return "\\(en"
	case '→':
		return "\\(->"
	case '←':
		return "\\(<-"
	case '×':
		return "\\(mu"
	case '“':
		return "\\(lq"
	case '”':
		return "\\(rq"
	case '‘':
		return "\\(oq"
	case '’':
		return "\\(cq"
	case '•':
		return "\\(bu"
	case '\u00a0':
		return "\\~"
	}
	switch {
	case r >= utf8.RuneSelf:
		return fmt.Sprintf("\\[u%04X]", r)
	case r < ' ' || r == 0x7f:
		return ""
	}
	return string(r)
}

// markdownRoff turns a README table cell into roff: `code` becomes
// bold, the rest is text.
func markdownRoff(s string) string {
	var b strings.Builder
	for i, part := range strings.Split(s, "`") {
		if i%2 == 1 {
			b.WriteString("\\fB" + roff(part, true) + "\\fR")
			continue
		}
		b.WriteString(strings.TrimPrefix(roff(part, false), "\\&"))
	}
	out := b.String()
	if strings.HasPrefix(out, ".") || strings.HasPrefix(out, "'") {
		out = "\\&" + out
	}
	return out
}

// envVar is one row of the README's environment table, as markdown.
type envVar struct{ names, effect string }
