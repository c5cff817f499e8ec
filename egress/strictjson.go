package egress

import (
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Rules for request bodies. The proxy forwards the exact bytes it checked,
// so what it decides must be what the upstream will read. Every point where
// JSON parsers are known to disagree is therefore refused, not resolved:
//   - a duplicate key at any depth (first-wins and last-wins parsers differ);
//   - anything after the top-level value but whitespace;
//   - a top level that is not an object;
//   - invalid UTF-8, and \u escapes that name a lone surrogate (some parsers
//     replace them, some keep them, some fail);
//   - nesting deeper than MaxDepth.
// Numbers are kept as their literal text: the policies never compute with
// them, and a float round trip is one more place to disagree.

// MaxDepth bounds nesting so a hostile body cannot exhaust the stack.
const MaxDepth = 512

// SyntaxError reports where a body stopped being acceptable JSON.
type SyntaxError struct {
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("the request body is not strict JSON at byte %d: %s", e.Offset, e.Msg)
}

// ParseObject parses b under the rules above into map[string]any, []any,
// string, json.Number, bool and nil values.
func ParseObject(b []byte) (map[string]any, error) {
	if !utf8.Valid(b) {
		return nil, &SyntaxError{firstInvalidUTF8(b), "invalid UTF-8"}
	}
	p := parser{b: b}
	p.space()
	if p.i >= len(p.b) || p.b[p.i] != '{' {
		if p.i >= len(p.b) {
			return nil, p.fail("empty body")
		}
		return nil, p.fail("the body must be a JSON object")
	}
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(p.b) {
		return nil, p.fail("data after the JSON object")
	}
	return v.(map[string]any), nil
}

func firstInvalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}

type parser struct {
	b []byte
	i int
}

func (p *parser) fail(msg string) error { return &SyntaxError{p.i, msg} }

func (p *parser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) (any, error) {
	if depth > MaxDepth {
		return nil, p.fail("nested too deeply")
	}
	p.space()
	if p.i >= len(p.b) {
		return nil, p.fail("unexpected end of body")
	}
	switch c := p.b[p.i]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		return p.str()
	case c == 't':
		return true, p.lit("true")
	case c == 'f':
		return false, p.lit("false")
	case c == 'n':
		return nil, p.lit("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	default:
		return nil, p.fail(fmt.Sprintf("unexpected character %q", c))
	}
}

func (p *parser) lit(s string) error {
	if len(p.b)-p.i < len(s) || string(p.b[p.i:p.i+len(s)]) != s {
		return p.fail("invalid literal")
	}
	p.i += len(s)
	return nil
}

func (p *parser) object(depth int) (any, error) {
	p.i++ // {
	m := map[string]any{}
	p.space()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return m, nil
	}
	for {
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != '"' {
			return nil, p.fail("expected a string key")
		}
		at := p.i
		k, err := p.str()
		if err != nil {
			return nil, err
		}
		if _, dup := m[k]; dup {
			return nil, &SyntaxError{at, fmt.Sprintf("duplicate key %q", k)}
		}
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return nil, p.fail("expected ':'")
		}
		p.i++
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		m[k] = v
		p.space()
		if p.i >= len(p.b) {
			return nil, p.fail("unexpected end of body")
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return m, nil
		default:
			return nil, p.fail("expected ',' or '}'")
		}
	}
}

func (p *parser) array(depth int) (any, error) {
	p.i++ // [
	a := []any{}
	p.space()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		return a, nil
	}
	for {
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		p.space()
		if p.i >= len(p.b) {
			return nil, p.fail("unexpected end of body")
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return a, nil
		default:
			return nil, p.fail("expected ',' or ']'")
		}
	}
}

func (p *parser) str() (string, error) {
	p.i++ // opening quote
	start := p.i
	// Fast path: no escapes.
	for p.i < len(p.b) {
		c := p.b[p.i]
		if c == '"' {
			s := string(p.b[start:p.i])
			p.i++
			return s, nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return "", p.fail("control character in string")
		}
		p.i++
	}
	buf := append([]byte(nil), p.b[start:p.i]...)
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			return string(buf), nil
		case c < 0x20:
			return "", p.fail("control character in string")
		case c != '\\':
			buf = append(buf, c)
			p.i++
			continue
		}
		if p.i+1 >= len(p.b) {
			return "", p.fail("unexpected end of body")
		}
		e := p.b[p.i+1]
		p.i += 2
		switch e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, err := p.hex4()
			if err != nil {
				return "", err
			}
			if utf16.IsSurrogate(r) {
				if r >= 0xdc00 || p.i+6 > len(p.b) || p.b[p.i] != '\\' || p.b[p.i+1] != 'u' {
					return "", p.fail("lone surrogate in \\u escape")
				}
				p.i += 2
				r2, err := p.hex4()
				if err != nil {
					return "", err
				}
				r = utf16.DecodeRune(r, r2)
				if r == utf8.RuneError {
					return "", p.fail("lone surrogate in \\u escape")
				}
			}
			buf = utf8.AppendRune(buf, r)
		default:
			return "", p.fail(fmt.Sprintf("invalid escape \\%c", e))
		}
	}
	return "", p.fail("unterminated string")
}

func (p *parser) hex4() (rune, error) {
	if p.i+4 > len(p.b) {
		return 0, p.fail("short \\u escape")
	}
	n, err := strconv.ParseUint(string(p.b[p.i:p.i+4]), 16, 32)
	if err != nil {
		return 0, p.fail("invalid \\u escape")
	}
	p.i += 4
	return rune(n), nil
}

func (p *parser) number() (any, error) {
	start := p.i
	if p.b[p.i] == '-' {
		p.i++
	}
	digits := func() int {
		n := 0
		for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.i < len(p.b) && p.b[p.i] == '0' {
		p.i++
	} else if digits() == 0 {
		return nil, p.fail("invalid number")
	}
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return nil, p.fail("invalid number")
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return nil, p.fail("invalid number")
		}
	}
	return json.Number(p.b[start:p.i]), nil
}
