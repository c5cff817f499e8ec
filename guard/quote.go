package guard

// Quote removal and the small lexical helpers: what a word is once bash
// has removed its quotes and backslashes, $'…' decoding, and the token
// scans used where a text cannot be parsed.

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

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

func isLetter(ch byte) bool {
	return ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z'
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
