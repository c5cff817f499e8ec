package guard

// Field splitting with the input's own IFS. An unquoted expansion is cut
// into words at the characters of IFS, so IFS=, makes c=pkill,node; $c
// run pkill with the argument node. The guard does not follow the control
// flow, so it splits at every character that any assignment in the input
// gives IFS, as well as at the default blank, tab and newline: more
// splitting can only find more commands. When an assignment's value is
// not known (IFS=$OLD after OLD=$IFS, IFS=$1), every punctuation
// character may be a separator too.

import "strings"

// anyIFS stands for the value of an IFS the input sets to something only
// known at run time.
const anyIFS = "!\"#%&'()*+,-./:;<=>?@[\\]^_`{|}~"

// ifsSeps returns the separators other than blank, tab and newline that
// field splitting may use in this input.
func (c *checker) ifsSeps() string {
	v := c.vars["IFS"]
	if v == nil {
		return ""
	}
	var b strings.Builder
	for _, s := range v.values {
		for _, r := range s {
			if r != ' ' && r != '\t' && r != '\n' && !strings.ContainsRune(b.String(), r) {
				b.WriteRune(r)
			}
		}
	}
	if v.unknown || v.partial {
		b.WriteString(anyIFS)
	}
	return b.String()
}

// splitFields cuts s into fields at blanks, tabs, newlines and any of
// seps. Empty fields are dropped: bash keeps those that a non-blank
// separator delimits, but an empty word cannot make a command the guard
// refuses.
func splitFields(s, seps string) []string {
	if seps == "" {
		return strings.Fields(s)
	}
	return strings.FieldsFunc(s, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || strings.ContainsRune(seps, r)
	})
}

// splitWays returns the ways field splitting may cut s: at blanks alone,
// as the default IFS does, and at seps as well when the input sets IFS
// (the guard does not know which assignment is in force where).
func splitWays(s, seps string) [][]string {
	ways := [][]string{strings.Fields(s)}
	if seps != "" && strings.ContainsAny(s, seps) {
		ways = append(ways, splitFields(s, seps))
	}
	return ways
}

// splitKnown returns the words field splitting makes of a lone unquoted
// expansion whose value is known ($1 after set -- a b), or nil when it
// makes a itself. Where the input sets IFS, the split depends on which
// value is in force, and the word becomes one of unknown value whose
// candidate is the text, for the rules to split both ways.
func splitKnown(a arg) []arg {
	if !a.known || !a.split || !strings.ContainsAny(a.text, " \t\n"+a.seps) {
		return nil
	}
	if a.seps != "" {
		a.known, a.cands, a.lead, a.tail = false, []string{a.text}, "", ""
		return []arg{a}
	}
	fields := strings.Fields(a.text)
	out := make([]arg, 0, len(fields))
	for _, f := range fields {
		k := knownArg(f)
		k.src = a.src
		out = append(out, k)
	}
	return out // empty when the value is all blanks: no word at all
}

// splitOnce replaces each word that field splitting cuts at the input's
// IFS, and whose one value the input shows (IFS=,; t=-9,-1; kill $t), by
// the words it makes, so that kill's options are read as bash reads them.
func splitOnce(args []arg) []arg {
	for i, a := range args {
		if a.split && !a.known && a.seps != "" && len(a.cands) == 1 && strings.ContainsAny(a.cands[0], a.seps) {
			out := append([]arg(nil), args[:i]...)
			for _, f := range splitFields(a.cands[0], a.seps) {
				out = append(out, knownArg(f))
			}
			return append(out, splitOnce(args[i+1:])...)
		}
	}
	return args
}
