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
	text  string   // value after quote removal; a dynamic part keeps its source text
	known bool     // text is exactly the value the command will get
	lead  string   // the fixed text before the first dynamic part
	pids  bool     // part of the value comes from a PID-listing command
	cands []string // values the word may take, as far as the input shows
	pat   string   // text with quoted characters backslash-escaped, for globs and braces
	meta  bool     // has unquoted glob or brace characters
	split bool     // a lone unquoted expansion, so field splitting applies
	src   string   // the word as written
	feed  *feed    // for a lone <(…), what the substitution writes
	out   *feed    // for a lone $(…), what the substitution prints
}

func knownArg(s string) arg {
	return arg{text: s, known: true, lead: s, pat: escapeGlob(s), src: s}
}

// fields resolves the words of a command. "$@" and $* expand to the known
// positional parameters.
func (c *checker) fields(fr *frame, words []*syntax.Word) []arg {
	out := make([]arg, 0, len(words))
	for _, w := range words {
		if ps, ok := c.spread(fr, w); ok {
			out = append(out, ps...)
			continue
		}
		out = append(out, c.word(fr, w))
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
				addDyn(fr.slice(p), c.paramValues(fr, p))
			case *syntax.CmdSubst:
				a.pids = a.pids || c.pidSource(fr, listNode(p.Stmts))
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
				if s, ok := arithmLiteral(p.X); ok {
					vals = []string{s}
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
	if !a.known {
		a.cands = cands
	}
	c.lone(fr, w, &a)
	return a
}

// paramValues returns the values a parameter expansion may take as far as
// the input shows: what was assigned to the variable, and the word of
// ${X:-word} and its kin. Other operators give nil.
func (c *checker) paramValues(fr *frame, p *syntax.ParamExp) []string {
	if p.Param == nil || p.Excl || p.Length || p.Index != nil || p.Slice != nil || p.Repl != nil || p.Names != 0 {
		return nil
	}
	var vals []string
	if v := c.vars[p.Param.Value]; v != nil {
		vals = append(vals, v.values...)
	}
	if p.Exp != nil {
		switch p.Exp.Op {
		case syntax.DefaultUnset, syntax.DefaultUnsetOrNull, syntax.AssignUnset,
			syntax.AssignUnsetOrNull, syntax.AlternateUnset, syntax.AlternateUnsetOrNull:
			if p.Exp.Word == nil {
				vals = append(vals, "")
				break
			}
			d := c.word(fr, p.Exp.Word)
			if d.known {
				vals = append(vals, d.text)
			}
			vals = append(vals, d.cands...)
		default:
			return nil
		}
	}
	return vals
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

// arithmLiteral returns the value of a constant arithmetic expression made
// of a number and unary signs, such as $((-1)).
func arithmLiteral(x syntax.ArithmExpr) (string, bool) {
	switch x := x.(type) {
	case *syntax.Word:
		return staticWord(x)
	case *syntax.UnaryArithm:
		if x.Post || (x.Op != syntax.Minus && x.Op != syntax.Plus) {
			return "", false
		}
		s, ok := arithmLiteral(x.X)
		if !ok {
			return "", false
		}
		if x.Op == syntax.Minus {
			if strings.HasPrefix(s, "-") {
				return s[1:], true
			}
			return "-" + s, true
		}
		return s, true
	case *syntax.ParenArithm:
		return arithmLiteral(x.X)
	}
	return "", false
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
		if j >= len(p) || len(commas) == 0 {
			continue
		}
		pre, post := p[:i], p[j+1:]
		var out []string
		start := i + 1
		for _, end := range append(commas, j) {
			for _, e := range expandBraces(pre+p[start:end]+post, limit-len(out)) {
				out = append(out, e)
				if len(out) >= limit {
					return out
				}
			}
			start = end + 1
		}
		return out
	}
	return []string{p}
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

// echoText is roughly what echo or printf writes for args: the words
// joined by spaces with \n, \t and \\ decoded. Options are dropped.
func echoText(args []arg) string {
	words := make([]string, 0, len(args))
	for i, a := range args {
		if i == len(words) && a.known && isEchoOption(a.text) {
			continue
		}
		words = append(words, a.text)
	}
	s := strings.Join(words, " ")
	if strings.Contains(s, `\`) {
		s = strings.NewReplacer(`\n`, "\n", `\t`, "\t", `\\`, `\`).Replace(s)
	}
	return s + "\n"
}

func isEchoOption(s string) bool {
	if len(s) < 2 || s[0] != '-' {
		return false
	}
	return strings.Trim(s[1:], "neE") == ""
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
