package guard

// Word resolution: what each word of a command may expand to. The guard
// does this itself rather than through mvdan.cc/sh/v3/expand. expand
// computes the one value a word has in a given environment, and runs
// command substitutions through a callback; the guard has no environment,
// must never run anything, and needs more than one value: every value the
// input may give the word (the candidates), whether part of it comes from
// a PID listing, and the text as written where the value is unknown. It
// also needs a bound on the work that a value-at-a-time expander does not
// give.

import (
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// arg is one word of a command: its value after quote removal where the
// input fixes it, and what is known about it where it does not.
type arg struct {
	text    string   // value after quote removal; a dynamic part keeps its source text
	known   bool     // text is exactly the value the command will get
	lead    string   // the fixed text before the first dynamic part
	tail    string   // the fixed text after the last dynamic part
	pids    bool     // part of the value comes from a PID-listing command
	cands   []string // values the word may take, as far as the input shows
	pat     string   // text with quoted characters backslash-escaped, for globs and braces
	meta    bool     // has unquoted glob or brace characters
	split   bool     // a lone unquoted expansion, so field splitting applies
	seps    string   // for a split word: what IFS may hold besides blanks (ifs.go)
	src     string   // the word as written
	feed    *feed    // for a lone <(…), what the substitution writes
	out     *feed    // for a lone $(…), what the substitution prints
	zero    bool     // may be 0 or negative though not written so: $#, $?, arithmetic
	refs    []string // variables the word expands
	opRef   bool     // an expansion applies an operator to a variable: ${x,,}, ${x%X}
	array   bool     // expands an array or an element of one
	partial bool     // cands lack values the input assigns: there were too many to keep
	// skel is the fixed text of a word with dynamic parts, cut at each
	// of them: pk${X}ill gives ["pk", "ill"]. A command word that is not
	// resolved is matched against the kill tools through it (skeleton).
	skel []string
}

func knownArg(s string) arg {
	return arg{text: s, known: true, lead: s, pat: escapeGlob(s), src: s}
}

// maxFields bounds the words that brace expansion makes of one word.
const maxFields = 64

// fields resolves the words of a command. "$@" and $* expand to the known
// positional parameters, and brace expansion applies to words the input
// fixes.
func (c *checker) fields(fr *frame, words []*syntax.Word) []arg {
	out := make([]arg, 0, len(words))
	for _, w := range words {
		if ps, ok := c.spread(fr, w); ok {
			out = append(out, ps...)
			continue
		}
		a := c.word(fr, w)
		if a.split {
			a.seps = c.ifsSeps()
			if ws := splitKnown(a); ws != nil {
				out = append(out, ws...)
				continue
			}
		}
		if a.meta && a.known && strings.IndexByte(a.pat, '{') >= 0 {
			if ws := expandBraces(a.pat, maxFields); len(ws) > 1 || ws[0] != a.pat {
				for _, p := range ws {
					v := unescapePattern(p)
					if v == "" {
						continue // bash drops a word that brace expansion empties
					}
					out = append(out, arg{text: v, known: true, lead: v, pat: p, meta: hasGlob(p), src: a.src})
				}
				continue
			}
		}
		out = append(out, a)
	}
	return out
}

func (c *checker) spread(fr *frame, w *syntax.Word) ([]arg, bool) {
	if !fr.hasParams {
		return nil, false
	}
	p, _ := lonePart(w)
	pe, ok := p.(*syntax.ParamExp)
	if !ok || !plainParam(pe) || (pe.Param.Value != "@" && pe.Param.Value != "*") {
		return nil, false
	}
	if len(fr.params) <= 1 {
		return nil, true
	}
	return append([]arg(nil), fr.params[1:]...), true
}

// lonePart returns the single part of w, looking inside one pair of double
// quotes, and whether it was quoted.
func lonePart(w *syntax.Word) (syntax.WordPart, bool) {
	if len(w.Parts) != 1 {
		return nil, false
	}
	if dq, ok := w.Parts[0].(*syntax.DblQuoted); ok {
		if len(dq.Parts) != 1 {
			return nil, true
		}
		return dq.Parts[0], true
	}
	return w.Parts[0], false
}

// plainParam reports whether p is $name or ${name} with no operator.
func plainParam(p *syntax.ParamExp) bool {
	return p.Param != nil && !p.Excl && !p.Length && !p.Width && !p.IsSet &&
		p.Index == nil && p.Slice == nil && p.Repl == nil && p.Exp == nil &&
		p.Names == 0 && len(p.Modifiers) == 0 && p.NestedParam == nil && p.Flags == nil
}

// positional resolves $0…$N against the frame's known parameters.
func (c *checker) positional(fr *frame, p *syntax.ParamExp) (arg, bool) {
	if !fr.hasParams || !plainParam(p) {
		return arg{}, false
	}
	i, ok := paramIndex(p.Param.Value)
	if !ok {
		return arg{}, false
	}
	if fr.shifted && i > 0 {
		// After shift, $i may be any parameter from the i-th on, or none.
		a := arg{text: "$" + p.Param.Value, src: "$" + p.Param.Value, cands: []string{""}, pids: fr.paramPids}
		for _, pa := range fr.params[min(i, len(fr.params)):] {
			if pa.known {
				a.cands = append(a.cands, pa.text)
			} else {
				a.cands = append(a.cands, pa.cands...)
			}
			if !pa.known && pa.cands == nil || len(a.cands) > maxCands {
				a.cands = nil
				break
			}
		}
		return a, true
	}
	if i >= len(fr.params) {
		return knownArg(""), true
	}
	return fr.params[i], true
}

func paramIndex(name string) (int, bool) {
	if name == "" || len(name) > 4 {
		return 0, false
	}
	for i := 0; i < len(name); i++ {
		if name[i] < '0' || name[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(name)
	return n, err == nil
}

// word resolves one word.
func (c *checker) word(fr *frame, w *syntax.Word) arg {
	a := arg{known: true, src: fr.slice(w)}
	if !c.step(a.src, 1) && c.overBudget() {
		return arg{text: a.src, src: a.src, pids: true}
	}
	var text, pat, lead, tail strings.Builder
	// The pieces of fixed text between dynamic parts, as offsets into
	// text, kept on the stack: most words need no skeleton. Past the
	// array's end the middle pieces are dropped, which lets the skeleton
	// match more, never less.
	var pieces [16][2]int
	npieces, segStart := 0, 0
	inLead := true
	// cands is every value the word may take, as far as the input shows;
	// nil once a part has no known values or there are too many.
	cands := []string{""}
	extend := func(vals []string) {
		if cands == nil {
			return
		}
		if len(vals) == 0 || len(cands)*len(vals) > maxCands {
			cands = nil
			return
		}
		next := make([]string, 0, len(cands)*len(vals))
		for _, p := range cands {
			for _, v := range vals {
				next = append(next, p+v)
			}
		}
		cands = next
	}
	addLit := func(v, p string) {
		text.WriteString(v)
		pat.WriteString(p)
		tail.WriteString(v)
		if inLead {
			lead.WriteString(v)
		}
		extend([]string{v})
	}
	cut := func() {
		pieces[min(npieces, len(pieces)-1)] = [2]int{segStart, text.Len()}
		npieces = min(npieces+1, len(pieces))
	}
	addDyn := func(src string, vals []string) {
		a.known = false
		inLead = false
		tail.Reset()
		cut()
		text.WriteString(src)
		segStart = text.Len()
		pat.WriteString(escapeGlob(src))
		extend(vals)
	}
	var walk func(parts []syntax.WordPart, quoted bool)
	walk = func(parts []syntax.WordPart, quoted bool) {
		for _, p := range parts {
			switch p := p.(type) {
			case *syntax.Lit:
				if quoted {
					v := unescapeDouble(p.Value)
					addLit(v, escapeGlob(v))
				} else {
					v, pt, meta := unescapeBare(p.Value)
					a.meta = a.meta || meta
					addLit(v, pt)
				}
			case *syntax.SglQuoted:
				v := p.Value
				if p.Dollar {
					v = ansiC(v)
				}
				addLit(v, escapeGlob(v))
			case *syntax.DblQuoted:
				walk(p.Parts, true)
			case *syntax.ParamExp:
				if pa, ok := c.positional(fr, p); ok {
					if pa.known {
						addLit(pa.text, escapeGlob(pa.text))
						continue
					}
					a.pids = a.pids || pa.pids
					if inLead {
						lead.WriteString(pa.lead)
					}
					// The caller's text, not "$1": a nested shell that
					// re-reads it has parameters of its own.
					addDyn(pa.text, pa.cands)
					continue
				}
				a.pids = a.pids || c.paramPids(fr, p)
				c.paramFacts(fr, p, &a)
				addDyn(fr.slice(p), c.paramValues(fr, p))
			case *syntax.CmdSubst:
				a.pids = a.pids || c.pidSource(fr, listNode(p.Stmts))
				a.zero = a.zero || computesNumber(p.Stmts)
				f := c.produce(fr, p.Stmts)
				var vals []string
				if f.opaque == "" {
					for _, t := range f.texts {
						vals = append(vals, strings.TrimSpace(t))
					}
				}
				addDyn(fr.slice(p), vals)
			case *syntax.ArithmExp:
				var vals []string
				if n, ok := c.arith(fr, p.X, 0); ok {
					vals = []string{strconv.FormatInt(n, 10)}
				} else {
					a.zero = true
				}
				addDyn(fr.slice(p), vals)
			case *syntax.ExtGlob:
				a.meta = true
				s := fr.slice(p)
				cut()
				text.WriteString(s)
				segStart = text.Len()
				pat.WriteString(s)
				inLead = false
				tail.Reset()
				cands = nil
			default:
				addDyn(fr.slice(p), nil)
			}
		}
	}
	walk(w.Parts, false)
	a.text, a.pat, a.lead, a.tail = text.String(), pat.String(), lead.String(), tail.String()
	if a.meta && (c.track.inProc || pidPath(a.text)) {
		a.pids = true // a glob over /proc lists PIDs
	}
	if !a.known {
		a.cands = cands
		cut()
		t, fixed := text.String(), 0
		for _, p := range pieces[:npieces] {
			fixed += p[1] - p[0]
		}
		if fixed > 0 {
			a.skel = make([]string, npieces)
			for i, p := range pieces[:npieces] {
				a.skel[i] = t[p[0]:p[1]]
			}
		}
	}
	c.lone(fr, w, &a)
	return a
}

// paramFacts notes what a parameter expansion tells about the word: the
// variable it reads, whether an operator or an array is involved, and
// whether the value may be 0 ($#, $?, ${#x}, a variable set by arithmetic).
func (c *checker) paramFacts(fr *frame, p *syntax.ParamExp, a *arg) {
	if p.Param == nil {
		return
	}
	name := p.Param.Value
	if len(a.refs) < maxCands {
		a.refs = append(a.refs, name)
	}
	v := c.vars[name]
	if p.Index != nil || (v != nil && v.array) {
		a.array = true
	}
	if v != nil && v.partial {
		a.partial = true
	}
	if p.Excl || p.Slice != nil || p.Repl != nil || len(p.Modifiers) > 0 || p.Exp != nil && !isDefaultOp(p.Exp.Op) {
		a.opRef = true
	}
	if p.Length || (v != nil && v.zero) || (plainParam(p) && (name == "#" || name == "?")) {
		a.zero = true
	}
	if p.Exp != nil && p.Exp.Word != nil && isDefaultOp(p.Exp.Op) {
		d := c.word(fr, p.Exp.Word)
		a.zero = a.zero || d.zero
		for _, r := range d.refs {
			if len(a.refs) < maxCands {
				a.refs = append(a.refs, r)
			}
		}
	}
}

func isDefaultOp(op syntax.ParExpOperator) bool {
	switch op {
	case syntax.DefaultUnset, syntax.DefaultUnsetOrNull, syntax.AssignUnset,
		syntax.AssignUnsetOrNull, syntax.AlternateUnset, syntax.AlternateUnsetOrNull,
		syntax.ErrorUnset, syntax.ErrorUnsetOrNull:
		return true
	}
	return false
}

// paramValues returns the values a parameter expansion may take as far as
// the input shows: what was assigned to the variable (any element, for an
// array), the word of ${X:-word} and its kin, and the result of the
// string operators (${x,,}, ${x%pat}, ${x/a/b}, ${x:1}, …) applied to
// those. It returns nil when the values are not known.
func (c *checker) paramValues(fr *frame, p *syntax.ParamExp) []string {
	if p.Param == nil || p.Excl || p.Length || p.Width || p.IsSet || p.Names != 0 ||
		p.NestedParam != nil || p.Flags != nil || len(p.Modifiers) > 0 {
		return nil
	}
	v := c.vars[p.Param.Value]
	if v != nil && v.unknown {
		return nil
	}
	var vals []string
	if v != nil {
		vals = append(vals, v.values...)
	}
	switch {
	case p.Slice != nil:
		return c.sliceValues(fr, p.Slice, vals)
	case p.Repl != nil:
		return c.replValues(fr, p.Repl, vals)
	case p.Exp == nil:
		return vals
	case isDefaultOp(p.Exp.Op):
		if p.Exp.Op == syntax.ErrorUnset || p.Exp.Op == syntax.ErrorUnsetOrNull {
			return vals
		}
		if p.Exp.Word == nil {
			return append(vals, "")
		}
		d := c.word(fr, p.Exp.Word)
		if d.known {
			vals = append(vals, d.text)
		}
		return append(vals, d.cands...)
	}
	return c.opValues(fr, p.Exp, vals)
}

// maxOpLen bounds the values that pattern operators are applied to.
const maxOpLen = 256

// opPattern resolves the pattern word of an operator, as a glob.
func (c *checker) opPattern(fr *frame, w *syntax.Word) (string, bool) {
	if w == nil {
		return "", true
	}
	a := c.word(fr, w)
	if !a.known {
		return "", false
	}
	return a.pat, true
}

// opValues applies ${x#pat}, ${x%pat}, ${x^^}, ${x,,}, ${x@U} and their
// kin to each value.
func (c *checker) opValues(fr *frame, e *syntax.Expansion, vals []string) []string {
	if len(vals) == 0 {
		return nil
	}
	pat, ok := c.opPattern(fr, e.Word)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(vals))
	for _, v := range vals {
		if len(v) > maxOpLen || !c.step("", 1+len(v)) {
			return nil
		}
		var r string
		switch e.Op {
		case syntax.RemSmallPrefix, syntax.RemLargePrefix:
			r = v
			for n := 0; n <= len(v); n++ {
				i := n
				if e.Op == syntax.RemLargePrefix {
					i = len(v) - n
				}
				if globMatch(pat, v[:i]) {
					r = v[i:]
					break
				}
			}
		case syntax.RemSmallSuffix, syntax.RemLargeSuffix:
			r = v
			for n := 0; n <= len(v); n++ {
				i := len(v) - n
				if e.Op == syntax.RemLargeSuffix {
					i = n
				}
				if globMatch(pat, v[i:]) {
					r = v[:i]
					break
				}
			}
		case syntax.UpperFirst, syntax.UpperAll, syntax.LowerFirst, syntax.LowerAll:
			conv := strings.ToUpper
			if e.Op == syntax.LowerFirst || e.Op == syntax.LowerAll {
				conv = strings.ToLower
			}
			all := e.Op == syntax.UpperAll || e.Op == syntax.LowerAll
			var b strings.Builder
			for i, ch := range v {
				s := string(ch)
				if (all || i == 0) && (pat == "" || globMatch(pat, s)) {
					s = conv(s)
				}
				b.WriteString(s)
			}
			r = b.String()
		case syntax.OtherParamOps:
			switch pat {
			case "U":
				r = strings.ToUpper(v)
			case "L":
				r = strings.ToLower(v)
			case "u":
				r = strings.ToUpper(v[:min(1, len(v))]) + v[min(1, len(v)):]
			case "E":
				r = ansiC(v)
			default:
				return nil
			}
		default:
			return nil
		}
		out = append(out, r)
	}
	return out
}

// replValues applies ${x/pat/rep}, ${x//pat/rep}, ${x/#pat/rep} and
// ${x/%pat/rep} to each value.
func (c *checker) replValues(fr *frame, r *syntax.Replace, vals []string) []string {
	if len(vals) == 0 {
		return nil
	}
	pat, ok := c.opPattern(fr, r.Orig)
	if !ok {
		return nil
	}
	with := ""
	if r.With != nil {
		w := c.word(fr, r.With)
		if !w.known {
			return nil
		}
		with = w.text
	}
	anchor := byte(0)
	if pat != "" && (pat[0] == '#' || pat[0] == '%') {
		anchor, pat = pat[0], pat[1:]
	}
	out := make([]string, 0, len(vals))
	for _, v := range vals {
		if len(v) > maxOpLen || hasGlob(pat) && len(v) > maxGlobReplLen {
			return nil // not worth the cubic scan; the caller falls back to the text
		}
		cost := 1 + len(v)
		if hasGlob(pat) {
			cost += len(v) * len(v) / 2
		}
		if !c.step("", cost) {
			return nil
		}
		out = append(out, replace(v, pat, with, anchor, r.All))
	}
	return out
}

func replace(v, pat, with string, anchor byte, all bool) string {
	switch {
	case anchor == '#':
		for j := len(v); j >= 0; j-- { // the longest match
			if globMatch(pat, v[:j]) {
				return with + v[j:]
			}
		}
		return v
	case anchor == '%':
		for i := 0; i <= len(v); i++ {
			if globMatch(pat, v[i:]) {
				return v[:i] + with
			}
		}
		return v
	case pat == "":
		return v
	case !hasGlob(pat):
		lit := unescapePattern(pat)
		if all {
			return strings.ReplaceAll(v, lit, with)
		}
		return strings.Replace(v, lit, with, 1)
	}
	var b strings.Builder
	for i := 0; i < len(v); {
		match := -1
		for j := len(v); j > i; j-- { // the longest non-empty match
			if globMatch(pat, v[i:j]) {
				match = j
				break
			}
		}
		if match < 0 {
			b.WriteByte(v[i])
			i++
			continue
		}
		b.WriteString(with)
		i = match
		if !all {
			b.WriteString(v[i:])
			break
		}
	}
	return b.String()
}

// maxGlobReplLen bounds the values that ${x/glob/rep} is worked out for.
const maxGlobReplLen = 64

// sliceValues applies ${x:offset:length} to each value.
func (c *checker) sliceValues(fr *frame, sl *syntax.Slice, vals []string) []string {
	if len(vals) == 0 || sl.Offset == nil {
		return nil
	}
	off, ok := c.arith(fr, sl.Offset, 0)
	if !ok {
		return nil
	}
	length, hasLen := int64(0), sl.Length != nil
	if hasLen {
		if length, ok = c.arith(fr, sl.Length, 0); !ok {
			return nil
		}
	}
	out := make([]string, 0, len(vals))
	for _, v := range vals {
		n := int64(len(v))
		start := off
		if start < 0 {
			start += n
		}
		if start < 0 || start > n {
			out = append(out, "")
			continue
		}
		end := n
		if hasLen {
			end = length
			if length < 0 {
				end = n + length
			} else {
				end = min(n, start+length)
			}
		}
		if end < start {
			end = start
		}
		out = append(out, v[start:end])
	}
	return out
}

// lone fills in what is known about a word made of one expansion: whether
// field splitting applies, and what a process or command substitution
// produces.
func (c *checker) lone(fr *frame, w *syntax.Word, a *arg) {
	p, quoted := lonePart(w)
	switch p := p.(type) {
	case *syntax.ParamExp:
		a.split = !quoted
	case *syntax.CmdSubst:
		a.split = !quoted
		f := c.produce(fr, p.Stmts)
		a.out = &f
	case *syntax.ProcSubst:
		if p.Op == syntax.CmdIn {
			f := c.produce(fr, p.Stmts)
			a.feed = &f
		}
	}
}

// staticWord returns the value of a word that has no expansions.
func staticWord(w *syntax.Word) (string, bool) {
	var b strings.Builder
	var walk func(parts []syntax.WordPart, quoted bool) bool
	walk = func(parts []syntax.WordPart, quoted bool) bool {
		for _, p := range parts {
			switch p := p.(type) {
			case *syntax.Lit:
				if quoted {
					b.WriteString(unescapeDouble(p.Value))
				} else {
					v, _, _ := unescapeBare(p.Value)
					b.WriteString(v)
				}
			case *syntax.SglQuoted:
				if p.Dollar {
					b.WriteString(ansiC(p.Value))
				} else {
					b.WriteString(p.Value)
				}
			case *syntax.DblQuoted:
				if !walk(p.Parts, true) {
					return false
				}
			default:
				return false
			}
		}
		return true
	}
	if !walk(w.Parts, false) {
		return "", false
	}
	return b.String(), true
}
