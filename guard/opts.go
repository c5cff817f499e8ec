package guard

import "strings"

// optSpec describes a command's options the way getopt and getopt_long
// read them, so that every program the guard knows is read by one parser
// driven by a table instead of a loop of its own.
type optSpec struct {
	flags string   // short options that take no value
	vals  string   // short options that take a value: the rest of the word, or else the next word
	long  []string // long options; a trailing '=' marks one that takes a value
	// permute lets options follow operands, as GNU getopt does by
	// default; otherwise the first operand ends the options.
	permute bool
	// plus reads +x as an option too (sh, set).
	plus bool
	// dashOp makes a lone "-" an operand that ends the options (as for
	// the shells); otherwise "-" is an operand like any other.
	dashOp bool
}

// opt is one option found on a command line.
type opt struct {
	name   string // the letter, or the long name as spelled in the spec
	long   bool
	plus   bool // written +x
	val    arg
	hasVal bool
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

// parseOpts splits args into options and operands. A long option is
// matched as getopt_long matches it: an exact name, or else every option
// the name is a prefix of, leaning towards the reading that takes a
// value. A word only known at run time is an operand. Letters and long
// names not in the spec are read as options without a value.
func parseOpts(args []arg, sp optSpec) (opts []opt, ops []arg) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		t := a.text
		isOpt := a.known && len(t) > 1 && (t[0] == '-' || sp.plus && t[0] == '+')
		if !isOpt {
			if a.known && t == "-" && sp.dashOp {
				return opts, append(ops, args[i+1:]...)
			}
			ops = append(ops, a)
			if !sp.permute {
				return opts, append(ops, args[i+1:]...)
			}
			continue
		}
		if t == "--" {
			return opts, append(ops, args[i+1:]...)
		}
		if strings.HasPrefix(t, "--") {
			name, val, eq := strings.Cut(t[2:], "=")
			names, takes := longOption(sp.long, name)
			o := opt{name: name, long: true}
			if len(names) > 0 {
				o.name = names[0]
			}
			switch {
			case eq:
				o.val, o.hasVal = knownArg(val), true
			case takes && i+1 < len(args):
				i++
				o.val, o.hasVal = args[i], true
			}
			for _, n := range names {
				o.name = n
				opts = append(opts, o)
			}
			if len(names) == 0 {
				opts = append(opts, o)
			}
			continue
		}
		for j := 1; j < len(t); j++ {
			o := opt{name: t[j : j+1], plus: t[0] == '+'}
			if strings.IndexByte(sp.vals, t[j]) >= 0 {
				o.val, o.hasVal = knownArg(t[j+1:]), true
				if j == len(t)-1 {
					o.hasVal = false
					if i+1 < len(args) {
						i++
						o.val, o.hasVal = args[i], true
					}
				}
				opts = append(opts, o)
				break
			}
			opts = append(opts, o)
		}
	}
	return opts, ops
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

// longOption resolves --name as getopt_long does: an exact option name,
// or else every option the name is a prefix of (getopt_long refuses an
// ambiguous prefix, but the guard leans towards the worse reading). opts
// lists the names, with '=' after those that take a value; takesValue is
// true when every match does.
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
