package guard

import (
	"path"
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// arg is one word of a command: its value after quote removal where the
// input fixes it, and what is known about it where it does not.
type arg struct {
	text    string   // value after quote removal; a dynamic part keeps its source text
	known   bool     // text is exactly the value the command will get
	lead    string   // the fixed text before the first dynamic part
	pids    bool     // part of the value comes from a PID-listing command
	cands   []string // values the word may take, as far as the input shows
	pat     string   // text with quoted characters backslash-escaped, for globs and braces
	meta    bool     // has unquoted glob or brace characters
	split   bool     // a lone unquoted expansion, so field splitting applies
	src     string   // the word as written
	feed    *feed    // for a lone <(…), what the substitution writes
	out     *feed    // for a lone $(…), what the substitution prints
	zero    bool     // may be 0 or negative though not written so: $#, $?, arithmetic
	refs    []string // variables the word expands
	opRef   bool     // an expansion applies an operator to a variable: ${x,,}, ${x%X}
	array   bool     // expands an array or an element of one
	partial bool     // cands lack values the input assigns: there were too many to keep
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
	var text, pat, lead strings.Builder
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
		if inLead {
			lead.WriteString(v)
		}
		extend([]string{v})
	}
	addDyn := func(src string, vals []string) {
		a.known = false
		inLead = false
		text.WriteString(src)
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
				text.WriteString(s)
				pat.WriteString(s)
				inLead = false
				cands = nil
			default:
				addDyn(fr.slice(p), nil)
			}
		}
	}
	walk(w.Parts, false)
	a.text, a.pat, a.lead = text.String(), pat.String(), lead.String()
	if a.meta && (c.track.inProc || pidPath(a.text)) {
		a.pids = true // a glob over /proc lists PIDs
	}
	if !a.known {
		a.cands = cands
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

// globMatch reports whether a shell pattern matches all of s. The guard
// only uses it on short values; path.Match's special '/' does not matter
// for command names.
func globMatch(pat, s string) bool {
	if !hasGlob(pat) {
		return unescapePattern(pat) == s
	}
	ok, err := path.Match(pat, s)
	return err == nil && ok
}

// maxArithDepth bounds the recursion of arith.
const maxArithDepth = 64

// arith evaluates an arithmetic expression whose value the input fixes.
// ok is false when it depends on something unknown or does not evaluate.
func (c *checker) arith(fr *frame, x syntax.ArithmExpr, depth int) (int64, bool) {
	if depth > maxArithDepth || !c.step("", 1) {
		return 0, false
	}
	switch x := x.(type) {
	case *syntax.Word:
		if s, ok := staticWord(x); ok {
			s = strings.TrimSpace(s)
			if isName(s) {
				return c.varNumber(s)
			}
			return parseArithNum(s)
		}
		a := c.word(fr, x)
		if a.known {
			return parseArithNum(strings.TrimSpace(a.text))
		}
		if len(a.cands) == 1 && !a.zero {
			return parseArithNum(strings.TrimSpace(a.cands[0]))
		}
		return 0, false
	case *syntax.ParenArithm:
		return c.arith(fr, x.X, depth+1)
	case *syntax.UnaryArithm:
		v, ok := c.arith(fr, x.X, depth+1)
		if !ok {
			return 0, false
		}
		switch x.Op {
		case syntax.Minus:
			return -v, true
		case syntax.Plus:
			return v, true
		case syntax.BitNegation:
			return ^v, true
		case syntax.Not:
			return b2i(v == 0), true
		}
		return 0, false
	case *syntax.BinaryArithm:
		if x.Op == syntax.TernQuest {
			cond, ok := c.arith(fr, x.X, depth+1)
			y, isColon := x.Y.(*syntax.BinaryArithm)
			if !ok || !isColon || y.Op != syntax.TernColon {
				return 0, false
			}
			if cond != 0 {
				return c.arith(fr, y.X, depth+1)
			}
			return c.arith(fr, y.Y, depth+1)
		}
		l, ok := c.arith(fr, x.X, depth+1)
		if !ok {
			return 0, false
		}
		r, ok := c.arith(fr, x.Y, depth+1)
		if !ok {
			return 0, false
		}
		return binArith(x.Op, l, r)
	}
	return 0, false
}

func binArith(op syntax.BinAritOperator, l, r int64) (int64, bool) {
	switch op {
	case syntax.Add:
		return l + r, true
	case syntax.Sub:
		return l - r, true
	case syntax.Mul:
		return l * r, true
	case syntax.Quo, syntax.Rem:
		if r == 0 || (l == -1<<63 && r == -1) {
			return 0, false
		}
		if op == syntax.Quo {
			return l / r, true
		}
		return l % r, true
	case syntax.Pow:
		if r < 0 || r > 64 {
			return 0, false
		}
		v := int64(1)
		for ; r > 0; r-- {
			v *= l
		}
		return v, true
	case syntax.Shl:
		return l << (uint64(r) & 63), true
	case syntax.Shr:
		return l >> (uint64(r) & 63), true
	case syntax.And:
		return l & r, true
	case syntax.Or:
		return l | r, true
	case syntax.Xor:
		return l ^ r, true
	case syntax.Eql:
		return b2i(l == r), true
	case syntax.Neq:
		return b2i(l != r), true
	case syntax.Lss:
		return b2i(l < r), true
	case syntax.Leq:
		return b2i(l <= r), true
	case syntax.Gtr:
		return b2i(l > r), true
	case syntax.Geq:
		return b2i(l >= r), true
	case syntax.AndArit:
		return b2i(l != 0 && r != 0), true
	case syntax.OrArit:
		return b2i(l != 0 || r != 0), true
	case syntax.Comma:
		return r, true
	}
	return 0, false
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// varNumber is the value of a variable in arithmetic, when the input
// gives it exactly one.
func (c *checker) varNumber(name string) (int64, bool) {
	v := c.vars[name]
	if v == nil || v.unknown || v.zero || len(v.values) != 1 {
		return 0, false
	}
	return parseArithNum(strings.TrimSpace(v.values[0]))
}

// parseArithNum parses an integer constant as bash arithmetic reads it:
// decimal, 0x hex, leading-zero octal, or base#digits.
func parseArithNum(s string) (int64, bool) {
	if s == "" || strings.ContainsAny(s, "_oObB") && !strings.Contains(s, "#") {
		return 0, false
	}
	if b, digits, ok := strings.Cut(s, "#"); ok {
		base, err := strconv.Atoi(b)
		if err != nil || base < 2 || base > 36 {
			return 0, false
		}
		n, err := strconv.ParseInt(digits, base, 64)
		return n, err == nil
	}
	n, err := strconv.ParseInt(s, 0, 64)
	return n, err == nil
}

func isName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch != '_' && !(ch >= 'a' && ch <= 'z') && !(ch >= 'A' && ch <= 'Z') && !(ch >= '0' && ch <= '9') {
			return false
		}
	}
	return true
}

// computesNumber reports whether a command substitution runs a calculator
// (expr, bc, …) whose result may be 0 or negative.
func computesNumber(list []*syntax.Stmt) bool {
	found := false
	syntax.Walk(listNode(list), func(n syntax.Node) bool {
		if call, ok := n.(*syntax.CallExpr); ok && len(call.Args) > 0 {
			if s, ok := staticWord(call.Args[0]); ok {
				switch baseName(s) {
				case "expr", "bc", "dc", "seq", "numfmt", "calc", "qalc":
					found = true
				}
			}
		}
		return !found
	})
	return found
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

// unescapeBare removes backslashes from an unquoted literal. It also returns
// the literal as a pattern (escaped characters stay escaped) and whether it
// has glob or brace characters.
func unescapeBare(raw string) (value, pattern string, meta bool) {
	if !strings.ContainsAny(raw, `\*?[{`) {
		return raw, raw, false
	}
	var v, p strings.Builder
	for i := 0; i < len(raw); i++ {
		ch := raw[i]
		if ch == '\\' {
			if i+1 < len(raw) {
				i++
				v.WriteByte(raw[i])
				p.WriteByte('\\')
				p.WriteByte(raw[i])
			} else {
				v.WriteByte('\\')
				p.WriteString(`\\`)
			}
			continue
		}
		switch ch {
		case '*', '?', '[', '{':
			meta = true
		}
		v.WriteByte(ch)
		p.WriteByte(ch)
	}
	return v.String(), p.String(), meta
}

// unescapeDouble removes the backslashes that are special inside double
// quotes.
func unescapeDouble(raw string) string {
	return unescapeSet(raw, "$`\"\\\n")
}

// unescapeHdoc removes the backslashes that are special in the body of a
// here-document with an unquoted delimiter.
func unescapeHdoc(raw string) string {
	return unescapeSet(raw, "$`\\")
}

func unescapeSet(raw, special string) string {
	if !strings.Contains(raw, `\`) {
		return raw
	}
	var b strings.Builder
	for i := 0; i < len(raw); i++ {
		if raw[i] == '\\' && i+1 < len(raw) && strings.IndexByte(special, raw[i+1]) >= 0 {
			i++
		}
		b.WriteByte(raw[i])
	}
	return b.String()
}

// ansiC decodes the body of a $'…' string.
func ansiC(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch != '\\' || i+1 >= len(s) {
			b.WriteByte(ch)
			continue
		}
		i++
		switch e := s[i]; e {
		case 'a':
			b.WriteByte(7)
		case 'b':
			b.WriteByte(8)
		case 'e', 'E':
			b.WriteByte(27)
		case 'f':
			b.WriteByte(12)
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte(11)
		case 'c':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i] & 0x1f)
			}
		case 'x', 'u', 'U':
			max := 2
			switch e {
			case 'u':
				max = 4
			case 'U':
				max = 8
			}
			j := i + 1
			for j < len(s) && j-i-1 < max && isHex(s[j]) {
				j++
			}
			if j == i+1 {
				b.WriteByte('\\')
				b.WriteByte(e)
				continue
			}
			n, _ := strconv.ParseUint(s[i+1:j], 16, 32)
			if e == 'x' {
				b.WriteByte(byte(n))
			} else if r := rune(n); utf8.ValidRune(r) {
				b.WriteRune(r)
			}
			i = j - 1
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j-i < 3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			n, _ := strconv.ParseUint(s[i:j], 8, 16)
			b.WriteByte(byte(n))
			i = j - 1
		case '\\', '\'', '"', '?':
			b.WriteByte(e)
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return b.String()
}

func isHex(ch byte) bool {
	return ch >= '0' && ch <= '9' || ch >= 'a' && ch <= 'f' || ch >= 'A' && ch <= 'F'
}

// escapeGlob backslash-escapes the characters that globs and brace
// expansion give a meaning to.
func escapeGlob(s string) string {
	if !strings.ContainsAny(s, `\*?[]{},`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(`\*?[]{},`, s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unescapePattern turns a pattern back into the literal it spells.
func unescapePattern(p string) string {
	if !strings.Contains(p, `\`) {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] == '\\' && i+1 < len(p) {
			i++
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

// hasGlob reports whether a pattern has an unescaped glob character.
func hasGlob(p string) bool {
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '*', '?', '[':
			return true
		}
	}
	return false
}

// expandBraces performs bash brace expansion of the comma form on a
// pattern, giving at most limit words.
func expandBraces(p string, limit int) []string {
	if len(p) > 1024 {
		return []string{p} // no command name is this long; keep the scan linear
	}
	for i := 0; i < len(p); i++ {
		if p[i] == '\\' {
			i++
			continue
		}
		if p[i] != '{' {
			continue
		}
		depth, j := 0, i
		var commas []int
	scan:
		for ; j < len(p); j++ {
			switch p[j] {
			case '\\':
				j++
			case '{':
				depth++
			case '}':
				depth--
				if depth == 0 {
					break scan
				}
			case ',':
				if depth == 1 {
					commas = append(commas, j)
				}
			}
		}
		if j >= len(p) {
			continue
		}
		pre, post := p[:i], p[j+1:]
		var items []string
		if len(commas) == 0 {
			var ok bool
			if items, ok = braceSequence(p[i+1:j], limit); !ok {
				continue
			}
		} else {
			start := i + 1
			for _, end := range append(commas, j) {
				items = append(items, p[start:end])
				start = end + 1
			}
		}
		var out []string
		for _, item := range items {
			for _, e := range expandBraces(pre+item+post, limit-len(out)) {
				out = append(out, e)
				if len(out) >= limit {
					return out
				}
			}
		}
		return out
	}
	return []string{p}
}

// braceSequence expands the body of {a..b} and {a..b..step}: integers or
// single letters. A long integer sequence keeps its ends and any 0 or -1
// in it, the values that matter to kill, before the rest.
func braceSequence(body string, limit int) ([]string, bool) {
	parts := strings.Split(body, "..")
	if len(parts) != 2 && len(parts) != 3 {
		return nil, false
	}
	step := int64(1)
	if len(parts) == 3 {
		n, err := strconv.ParseInt(parts[2], 10, 64)
		if err != nil {
			return nil, false
		}
		if n < 0 {
			n = -n
		}
		if n != 0 {
			step = n
		}
	}
	a, errA := strconv.ParseInt(parts[0], 10, 64)
	b, errB := strconv.ParseInt(parts[1], 10, 64)
	if errA == nil && errB == nil {
		width := 0
		for _, p := range parts[:2] {
			if d := strings.TrimPrefix(p, "-"); len(d) > 1 && d[0] == '0' {
				width = max(width, len(p))
			}
		}
		format := func(n int64) string {
			s := strconv.FormatInt(n, 10)
			for len(s) < width {
				if s[0] == '-' {
					s = "-0" + s[1:]
				} else {
					s = "0" + s
				}
			}
			return s
		}
		lo, hi := min(a, b), max(a, b)
		var out []string
		seen := make(map[int64]bool)
		add := func(n int64) {
			if n >= lo && n <= hi && (n-a)%step == 0 && !seen[n] && len(out) < limit {
				seen[n] = true
				out = append(out, format(n))
			}
		}
		if (hi-lo)/step >= int64(limit) {
			add(a)
			add(a + (b-a)/step*step)
			add(0)
			add(-1)
		}
		dir := step
		if b < a {
			dir = -step
		}
		for n, i := a, 0; i < limit && n >= lo && n <= hi; n, i = n+dir, i+1 {
			add(n)
		}
		return out, true
	}
	if len(parts[0]) != 1 || len(parts[1]) != 1 || !isLetter(parts[0][0]) || !isLetter(parts[1][0]) {
		return nil, false
	}
	x, y := int64(parts[0][0]), int64(parts[1][0])
	dir := step
	if y < x {
		dir = -step
	}
	var out []string
	for n := x; len(out) < limit && (dir > 0 && n <= y || dir < 0 && n >= y); n += dir {
		out = append(out, string(rune(n)))
	}
	return out, true
}

func isLetter(ch byte) bool {
	return ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z'
}

// globNames returns the names in specialNames that a command-word pattern
// could match by basename.
func globNames(p string) []string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		p = p[i+1:]
	}
	p = strings.ReplaceAll(p, "[!", "[^")
	var out []string
	for _, name := range specialNames {
		if ok, err := path.Match(p, name); err == nil && ok {
			out = append(out, name)
		}
	}
	return out
}

func baseName(s string) string {
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// isAssignWord reports whether s has the form NAME=value.
func isAssignWord(s string) bool {
	name, _, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		ch := name[i]
		if ch != '_' && !(ch >= 'a' && ch <= 'z') && !(ch >= 'A' && ch <= 'Z') && !(i > 0 && ch >= '0' && ch <= '9') {
			return false
		}
	}
	return true
}

// echoTexts is what echo writes for args: the words joined by spaces,
// as bash's echo leaves them and with the escapes of echo -e (and of
// dash's echo) decoded, when that differs. Options are dropped.
func echoTexts(args []arg) []string {
	words := make([]string, 0, len(args))
	for i, a := range args {
		if i == len(words) && a.known && isEchoOption(a.text) {
			continue
		}
		words = append(words, a.text)
	}
	s := strings.Join(words, " ")
	if !strings.Contains(s, `\`) {
		return []string{s + "\n"}
	}
	return []string{s + "\n", echoEscapes(s) + "\n"}
}

// echoEscapes decodes the escapes of echo -e and printf %b: those of
// $'…', with octal written \0NNN, and \c ending the output.
func echoEscapes(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	// Rewrite to what $'…' reads: \0NNN becomes \NNN, and \c ends it.
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch e := s[i]; {
		case e == 'c':
			return ansiC(b.String())
		case e == '0' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '7':
			b.WriteByte('\\')
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return ansiC(b.String())
}

func isEchoOption(s string) bool {
	if len(s) < 2 || s[0] != '-' {
		return false
	}
	return strings.Trim(s[1:], "neE") == ""
}

// maxPrintf bounds the text that printfText works out: the hook input is
// at most 1 MiB, and reusing the format or padding must not make more.
const maxPrintf = 1 << 20

// printfText is what printf writes for args, the format first: escapes
// in the format decoded, %s, %b, %c, %q and the numeric conversions
// filled from the arguments, and the format reused while arguments are
// left, as bash's printf does. ok is false when the format is not known.
func printfText(args []arg) (string, bool) {
	if len(args) > 0 && args[0].known && args[0].text == "--" {
		args = args[1:]
	}
	if len(args) == 0 || !args[0].known {
		return "", false
	}
	format, rest := args[0].text, args[1:]
	var b strings.Builder
	for round := 0; round <= maxCands && b.Len() < maxPrintf; round++ {
		used := 0
		next := func() string {
			if used < len(rest) {
				used++
				return rest[used-1].text
			}
			return ""
		}
		lit := 0
		for i := 0; i < len(format) && b.Len() < maxPrintf; i++ {
			if format[i] != '%' {
				continue
			}
			b.WriteString(ansiC(format[lit:i]))
			j := i + 1
			for j < len(format) && strings.IndexByte("-+ #0", format[j]) >= 0 {
				j++
			}
			width := -1
			if j < len(format) && format[j] == '*' {
				width, _ = strconv.Atoi(next())
				j++
			} else if k := j; k < len(format) {
				for j < len(format) && format[j] >= '0' && format[j] <= '9' {
					j++
				}
				if j > k {
					width, _ = strconv.Atoi(format[k:j])
				}
			}
			prec := -1
			if j < len(format) && format[j] == '.' {
				j++
				if j < len(format) && format[j] == '*' {
					prec, _ = strconv.Atoi(next())
					j++
				} else {
					k := j
					for j < len(format) && format[j] >= '0' && format[j] <= '9' {
						j++
					}
					prec, _ = strconv.Atoi(format[k:j])
				}
			}
			if j >= len(format) {
				lit = i
				break
			}
			var out string
			switch format[j] {
			case '%':
				out = "%"
			case 's', 'q', 'Q':
				out = next()
			case 'b':
				out = echoEscapes(next())
			case 'c':
				out = next()
				out = out[:min(1, len(out))]
			case 'd', 'i', 'o', 'u', 'x', 'X', 'e', 'E', 'f', 'F', 'g', 'G', 'a', 'A':
				out = next()
			default:
				out = format[i : j+1]
			}
			if prec >= 0 && prec < len(out) && strings.IndexByte("sbqQ", format[j]) >= 0 {
				out = out[:prec]
			}
			for n := len(out); n < width && n < maxOpLen; n++ {
				out = " " + out
			}
			b.WriteString(out)
			i = j
			lit = j + 1
		}
		if lit < len(format) {
			b.WriteString(ansiC(format[lit:]))
		}
		rest = rest[used:]
		if used == 0 || len(rest) == 0 {
			break
		}
	}
	return b.String(), true
}

// joinTexts joins the words' text the way eval and ssh rebuild a command
// line from their arguments.
func joinTexts(args []arg) string {
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = a.text
	}
	return strings.Join(parts, " ")
}

// tokens splits s into word-like tokens: runs of letters, digits and
// _ . - with the dots and dashes at either end dropped, so that -pkill in
// ${X:-pkill} reads as pkill but kill.sh and kill-port stay whole.
func tokens(s string) []string {
	fields := strings.FieldsFunc(s, func(r rune) bool {
		return !(r == '_' || r == '.' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	})
	for i, f := range fields {
		fields[i] = strings.Trim(f, ".-")
	}
	return fields
}

// dequote drops quotes and backslashes, so that a word split by empty
// quotes or escaped letters reads as one word.
func dequote(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\'' || r == '"' || r == '\\' {
			return -1
		}
		return r
	}, s)
}
