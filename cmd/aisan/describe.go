package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
)

// A command's help text is the one description of it: --help prints it,
// and completion and the man page read their options, option values and
// arguments from it (with the flag set the command parses, for which
// options take a value). describe gets both by running the command with
// --help while a capture is set, so a new command in the table is
// completed and documented with nothing else to write.

// helpCapture, while set, receives the help a command would print and
// the flag sets it made, instead of stdout.
var helpCapture *capturedHelp

type capturedHelp struct {
	text     string
	flagSets []*flag.FlagSet
}

// hiddenFlag is the usage string of a flag that is no user's business
// (aisan passes it to itself): help does not list it, completion does
// not offer it.
const hiddenFlag = "internal"

// showHelp prints a command's usage text, or hands it to the capture.
func showHelp(usage string) {
	text := strings.TrimLeft(usage, "\n")
	if helpCapture != nil {
		helpCapture.text = text
		return
	}
	fmt.Fprint(os.Stdout, text)
}

// noteFlagSet lets the capture see a flag set a command made.
func noteFlagSet(fs *flag.FlagSet) {
	if helpCapture != nil {
		helpCapture.flagSets = append(helpCapture.flagSets, fs)
	}
}

// describe returns c's help, parsed, with what its flag set says of each
// option. It runs c with --help, which every command answers without
// acting.
func describe(c command) helpDoc {
	saved := helpCapture
	helpCapture = &capturedHelp{}
	defer func() { helpCapture = saved }()
	err := c.run(context.Background(), []string{"--help"})
	d := parseHelp(helpCapture.text)
	d.name = c.name
	d.handedOver = errors.Is(err, errHandOver)
	if n := len(helpCapture.flagSets); n > 0 {
		d.flags = helpCapture.flagSets[n-1]
		for i := range d.options {
			o := &d.options[i]
			o.takesValue = takesValue(d.flags, o.names)
			switch {
			case !o.takesValue && o.metavar != "":
				// A switch whose description starts with a capital.
				o.text = strings.TrimSpace(o.metavar + " " + o.text)
				o.metavar = ""
			case o.takesValue && o.metavar == "":
				o.metavar = "VALUE"
			}
		}
	}
	return d
}

// helpDoc is a help text taken apart.
type helpDoc struct {
	name string
	// synopsis are the "Usage:" lines, from "aisan" on.
	synopsis []string
	blocks   []helpBlock
	// options are those of every option block, in order.
	options []helpOption
	// flags is the flag set the command parses with, when it has one.
	flags *flag.FlagSet
	// handedOver marks a command the front does not link: its help is
	// the full binary's (handover.go).
	handedOver bool
}

// blockKind says what a paragraph of help text is.
type blockKind int

const (
	prose    blockKind = iota // lines at the margin: filled text
	optList                   // indented lines that start with an option
	verbatim                  // other indented lines: examples, tables
)

type helpBlock struct {
	kind    blockKind
	lines   []string
	options []helpOption
}

// helpOption is one line (and its continuation) of an option block.
type helpOption struct {
	names   []string // "-f", "--follow"
	metavar string   // "N", "FILE", "NAME[=VALUE]", "on-failure"; "" for a switch
	text    string
	// takesValue is the flag set's word on it (the metavar's otherwise).
	takesValue bool
}

// optionLine matches the start of an option line: names, then an
// optional metavar, then the description.
// (Compiled on first use: aisan's start stays cheap.)
var optionLine = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(\s+)(-{1,2}[a-zA-Z0-9][-a-zA-Z0-9]*(?:, -{1,2}[a-zA-Z0-9][-a-zA-Z0-9]*)*)(?: (\S+))?(\s*)(.*)$`)
})

// metavarWord is a word that names an option's value in capitals: FILE,
// NAME[=VALUE], NAME=SOCKET. literalValues is a value written out, or a
// list of them (on-failure, a|b): it counts as the metavar only when the
// description is set apart by two spaces or more.
var (
	metavarWord = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[A-Z][A-Z0-9_]*(?:[\[=:][A-Z0-9_=\[\]:.]*)?(?:\.\.\.)?$`)
	})
	literalValues = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[a-z0-9][-a-z0-9]*(?:\|[a-z0-9][-a-z0-9]*)*$`)
	})
)

// parseHelp takes a help text apart: synopsis, then paragraphs, option
// lists and verbatim blocks, each ended by a blank line.
func parseHelp(text string) helpDoc {
	var d helpDoc
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	i := 0
	for i < len(lines) {
		l := lines[i]
		rest, ok := strings.CutPrefix(l, "Usage: ")
		if !ok && len(d.synopsis) > 0 && strings.HasPrefix(strings.TrimSpace(l), "aisan ") && l != strings.TrimSpace(l) {
			rest, ok = strings.TrimSpace(l), true
		}
		if !ok {
			break
		}
		d.synopsis = append(d.synopsis, strings.TrimSpace(rest))
		i++
	}
	var cur *helpBlock
	end := func() {
		if cur != nil {
			d.blocks = append(d.blocks, *cur)
			d.options = append(d.options, cur.options...)
			cur = nil
		}
	}
	for ; i < len(lines); i++ {
		l := strings.TrimRight(lines[i], " ")
		if l == "" {
			end()
			continue
		}
		indented := l[0] == ' ' || l[0] == '\t'
		if !indented {
			if cur != nil && cur.kind != prose {
				end()
			}
			if cur == nil {
				cur = &helpBlock{kind: prose}
			}
			cur.lines = append(cur.lines, l)
			continue
		}
		if cur != nil && cur.kind == prose {
			end()
		}
		m := optionLine().FindStringSubmatch(l)
		if cur == nil {
			cur = &helpBlock{kind: verbatim}
			if m != nil {
				cur.kind = optList
			}
		}
		cur.lines = append(cur.lines, l)
		if cur.kind != optList {
			continue
		}
		indent := 0
		if n := len(cur.options); n > 0 {
			indent = len(cur.lines[0]) - len(strings.TrimLeft(cur.lines[0], " "))
		}
		if m != nil && (len(cur.options) == 0 || len(m[1]) <= indent) {
			o := helpOption{names: strings.Split(m[2], ", ")}
			desc := strings.TrimSpace(m[5])
			switch {
			case metavarWord().MatchString(m[3]):
				o.metavar = m[3]
			case literalValues().MatchString(m[3]) && (len(m[4]) >= 2 || desc == ""):
				o.metavar = m[3]
			case m[3] != "":
				desc = strings.TrimSpace(m[3] + m[4] + desc)
			}
			o.text = desc
			o.takesValue = o.metavar != ""
			cur.options = append(cur.options, o)
			continue
		}
		if n := len(cur.options); n > 0 {
			cur.options[n-1].text = strings.TrimSpace(cur.options[n-1].text + " " + strings.TrimSpace(l))
		}
	}
	end()
	return d
}

// takesValue reports whether the flag named by names needs a value, by
// the flag set.
func takesValue(fs *flag.FlagSet, names []string) bool {
	for _, n := range names {
		if f := fs.Lookup(strings.TrimLeft(n, "-")); f != nil {
			bf, ok := f.Value.(interface{ IsBoolFlag() bool })
			return !ok || !bf.IsBoolFlag()
		}
	}
	return false
}

// positionals lists the argument placeholders of the synopsis lines, in
// order, each line on its own: "aisan kill SLOT..." gives [["SLOT..."]].
// Options and their values, brackets and "--" are left out.
func (d helpDoc) positionals() [][]string {
	var out [][]string
	for _, s := range d.synopsis {
		words := strings.Fields(s)
		var args []string
		skipValue := false
		for _, w := range words[min(2, len(words)):] {
			w = strings.Trim(w, "[]")
			switch {
			case w == "" || w == "--" || w == "options" || w == "..." || w == "|":
				continue
			case strings.HasPrefix(w, "-"):
				// An option in brackets with its value: "[--launch N]".
				skipValue = !strings.Contains(w, "=") && d.optionTakesValue(w)
				continue
			case skipValue:
				skipValue = false
				continue
			case w == "<":
				// Input redirection ("< hook-input.json").
				skipValue = true
				continue
			}
			args = append(args, w)
		}
		out = append(out, args)
	}
	return out
}

// optionTakesValue reports whether the option named w takes a value.
func (d helpDoc) optionTakesValue(w string) bool {
	for _, o := range d.options {
		for _, n := range o.names {
			if n == w {
				return o.takesValue
			}
		}
	}
	return false
}

// option finds the option called name ("-f", "--follow", "--follow=x").
func (d helpDoc) option(name string) (helpOption, bool) {
	name, _, _ = strings.Cut(name, "=")
	for _, o := range d.options {
		for _, n := range o.names {
			if n == name || "-"+n == name || n == "-"+name {
				return o, true
			}
		}
	}
	return helpOption{}, false
}
