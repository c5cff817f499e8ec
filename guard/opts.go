package guard

import "strings"

// optSpec describes a command's options the way getopt and getopt_long
// read them, so that every program the guard knows is read by one parser
// driven by a table instead of a loop of its own. Only kill keeps a reader
// of its own (see killTargets): bash's kill counts the last signal given
// and reads -1 as a signal or a target by position, which getopt does not.
type optSpec struct {
	flags string   // short options that take no value (others not in vals are read so too)
	vals  string   // short options that take a value: the rest of the word, or else the next word
	opt   string   // short options whose value, if any, is the rest of the word (xargs -i{}, perl -Ilib)
	long  []string // long options; a trailing '=' marks one that takes a value
	// stop lists the options after which the rest are operands even if
	// they look like options (python -c code args…, python -m mod args…).
	stop string
	// permute lets options follow operands, as GNU getopt does by
	// default; otherwise the first operand ends the options.
	permute bool
	// plus reads +x as an option too (sh, set).
	plus bool
	// dashOp makes a lone "-" end the options (the shells, set).
	dashOp bool
}

// opt is one option found on a command line.
type opt struct {
	name    string // the letter, or the long name as spelled in the spec
	long    bool
	plus    bool // written +x
	val     arg
	hasVal  bool
	alts    int  // for a long option given by a prefix: how many names it matched
	unknown bool // not in the spec: it might take a value that the parser did not read
}

// is reports whether the option is one of names: letters for short
// options, words for long ones.
func (o opt) is(names ...string) bool {
	for _, n := range names {
		if o.name == n {
			return true
		}
	}
	return false
}

// Kinds of word, for readOpt.
const (
	wordOperand = iota // not an option
	wordOption         // one or more options
	wordEnd            // "--" (or a lone "-" with dashOp): the options end here
	wordStop           // options whose value ends the options (optSpec.stop)
)

// readOpt reads the word at args[i]. It returns the options the word holds
// and the index of the next word to read (after any value taken from the
// words that follow). A word only known at run time is an operand. A long
// option is matched as getopt_long matches it: an exact name, or else
// every option the name is a prefix of (getopt_long refuses an ambiguous
// prefix, but the guard leans towards the reading that takes a value).
func readOpt(args []arg, i int, sp optSpec) (opts []opt, next int, kind int) {
	a := args[i]
	t := a.text
	if !a.known || len(t) < 2 || !(t[0] == '-' || sp.plus && t[0] == '+') {
		if a.known && t == "-" && sp.dashOp {
			return nil, i + 1, wordEnd
		}
		return nil, i, wordOperand
	}
	if t == "--" {
		return nil, i + 1, wordEnd
	}
	next, kind = i+1, wordOption
	if strings.HasPrefix(t, "--") {
		name, val, eq := strings.Cut(t[2:], "=")
		names, takes := longOption(sp.long, name)
		o := opt{name: name, long: true, alts: len(names), unknown: len(names) == 0}
		switch {
		case eq:
			o.val, o.hasVal = knownArg(val), true
		case takes && next < len(args):
			o.val, o.hasVal = args[next], true
			next++
		}
		if len(names) == 0 {
			return []opt{o}, next, kind
		}
		for _, n := range names {
			o.name = n
			opts = append(opts, o)
		}
		return opts, next, kind
	}
	for j := 1; j < len(t); j++ {
		ch := t[j]
		o := opt{name: t[j : j+1], plus: t[0] == '+'}
		switch {
		case strings.IndexByte(sp.vals, ch) >= 0:
			if j < len(t)-1 {
				o.val, o.hasVal = knownArg(t[j+1:]), true
			} else if next < len(args) {
				o.val, o.hasVal = args[next], true
				next++
			}
		case strings.IndexByte(sp.opt, ch) >= 0:
			if j < len(t)-1 {
				o.val, o.hasVal = knownArg(t[j+1:]), true
			}
		default:
			o.unknown = strings.IndexByte(sp.flags, ch) < 0
			opts = append(opts, o)
			continue
		}
		opts = append(opts, o)
		if strings.IndexByte(sp.stop, ch) >= 0 {
			kind = wordStop
		}
		break
	}
	return opts, next, kind
}

// parseOpts splits args into options and operands.
func parseOpts(args []arg, sp optSpec) (opts []opt, ops []arg) {
	opts, ops, _ = parseOptsEnd(args, sp)
	return opts, ops
}

// parseOptsEnd is parseOpts that also reports whether "--" (or another
// end of the options) was given, which set needs.
func parseOptsEnd(args []arg, sp optSpec) (opts []opt, ops []arg, ended bool) {
	for i := 0; i < len(args); {
		o, next, kind := readOpt(args, i, sp)
		opts = append(opts, o...)
		switch kind {
		case wordEnd, wordStop:
			return opts, append(ops, args[next:]...), true
		case wordOperand:
			if !sp.permute {
				return opts, append(ops, args[i:]...), false
			}
			ops = append(ops, args[i])
			next = i + 1
		}
		i = next
	}
	return opts, ops, false
}

// optVal returns the value of the last option among names, and whether
// one was given.
func optVal(opts []opt, names ...string) (arg, bool) {
	for i := len(opts) - 1; i >= 0; i-- {
		if opts[i].is(names...) {
			return opts[i].val, opts[i].hasVal
		}
	}
	return arg{}, false
}

// hasOpt reports whether any option among names was given.
func hasOpt(opts []opt, names ...string) bool {
	for _, o := range opts {
		if o.is(names...) {
			return true
		}
	}
	return false
}

// optVals returns the values of every option among names, in order.
func optVals(opts []opt, names ...string) []arg {
	var out []arg
	for _, o := range opts {
		if o.is(names...) && o.hasVal {
			out = append(out, o.val)
		}
	}
	return out
}

// longOption resolves --name against opts, which lists the names with '='
// after those that take a value; takesValue is true when every match
// does.
func longOption(opts []string, name string) (names []string, takesValue bool) {
	takesValue = true
	for _, o := range opts {
		n := strings.TrimSuffix(o, "=")
		if n == name {
			return []string{n}, len(o) > len(n)
		}
		if name != "" && strings.HasPrefix(n, name) {
			names = append(names, n)
			takesValue = takesValue && len(o) > len(n)
		}
	}
	return names, takesValue && len(names) > 0
}
