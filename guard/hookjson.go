package guard

// The hook's JSON, read and written without encoding/json. The hook is a
// new process on every tool call, and linking encoding/json alone (its
// reflection tables, encoding/base64's package init) costs it about ten
// page faults at start, some 5 % of an empty Go program's whole run;
// reading four members and writing three strings needs none of it.
//
// The reader takes exactly what encoding/json's decoding into the
// HookInput fields took (FuzzHookInput holds the two to the same answer
// for any input, the errors included): RFC 8259 JSON, nested at most
// 10000 deep; a member is matched with encoding/json's case folding and
// the last of a name wins; strings decode with its replacement of
// invalid UTF-8 and unpaired surrogates by U+FFFD.

import (
	"errors"
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// maxJSONDepth is encoding/json's bound on nesting.
const maxJSONDepth = 10000

// jsonReader reads one JSON text from b; i is the next byte to read.
type jsonReader struct {
	b     []byte
	i     int
	depth int
}

func (r *jsonReader) syntaxError() error {
	if r.i >= len(r.b) {
		return errors.New("unexpected end of JSON input")
	}
	return errors.New("invalid character " + strconv.QuoteRune(rune(r.b[r.i])) + " at offset " + strconv.Itoa(r.i))
}

func (r *jsonReader) space() {
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

// peek skips white space and returns the next byte, 0 at the end.
func (r *jsonReader) peek() byte {
	r.space()
	if r.i < len(r.b) {
		return r.b[r.i]
	}
	return 0
}

// skip checks one value and returns its raw text.
func (r *jsonReader) skip() ([]byte, error) {
	c := r.peek()
	start := r.i
	var err error
	switch c {
	case '{':
		err = r.object(func(string) error { _, err := r.skip(); return err })
	case '[':
		err = r.array(func() error { _, err := r.skip(); return err })
	case '"':
		_, err = r.str()
	case 't':
		err = r.literal("true")
	case 'f':
		err = r.literal("false")
	case 'n':
		err = r.literal("null")
	default:
		err = r.number()
	}
	return r.b[start:r.i], err
}

func (r *jsonReader) literal(word string) error {
	for k := range len(word) {
		if r.i >= len(r.b) || r.b[r.i] != word[k] {
			return r.syntaxError()
		}
		r.i++
	}
	return nil
}

// number checks -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func (r *jsonReader) number() error {
	digits := func() bool {
		n := r.i
		for r.i < len(r.b) && '0' <= r.b[r.i] && r.b[r.i] <= '9' {
			r.i++
		}
		return r.i > n
	}
	if r.i < len(r.b) && r.b[r.i] == '-' {
		r.i++
	}
	switch {
	case r.i < len(r.b) && r.b[r.i] == '0':
		r.i++
	case !digits():
		return r.syntaxError()
	}
	if r.i < len(r.b) && r.b[r.i] == '.' {
		r.i++
		if !digits() {
			return r.syntaxError()
		}
	}
	if r.i < len(r.b) && (r.b[r.i] == 'e' || r.b[r.i] == 'E') {
		r.i++
		if r.i < len(r.b) && (r.b[r.i] == '+' || r.b[r.i] == '-') {
			r.i++
		}
		if !digits() {
			return r.syntaxError()
		}
	}
	return nil
}

// enter steps into an object or array, counting the nesting that
// encoding/json bounds; object and array count the step out.
func (r *jsonReader) enter() error {
	if r.depth++; r.depth > maxJSONDepth {
		return errors.New("exceeded max depth")
	}
	r.i++ // the bracket
	return nil
}

// object reads an object, calling member with each key; member reads
// the value.
func (r *jsonReader) object(member func(key string) error) error {
	if err := r.enter(); err != nil {
		return err
	}
	if r.peek() == '}' {
		r.i++
		r.depth--
		return nil
	}
	for {
		if r.peek() != '"' {
			return r.syntaxError()
		}
		key, err := r.str()
		if err != nil {
			return err
		}
		if r.peek() != ':' {
			return r.syntaxError()
		}
		r.i++
		if err := member(key); err != nil {
			return err
		}
		switch r.peek() {
		case ',':
			r.i++
		case '}':
			r.i++
			r.depth--
			return nil
		default:
			return r.syntaxError()
		}
	}
}

// array reads an array, calling elem to read each element.
func (r *jsonReader) array(elem func() error) error {
	if err := r.enter(); err != nil {
		return err
	}
	if r.peek() == ']' {
		r.i++
		r.depth--
		return nil
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		switch r.peek() {
		case ',':
			r.i++
		case ']':
			r.i++
			r.depth--
			return nil
		default:
			return r.syntaxError()
		}
	}
}

// str reads a string at r.i (its opening quote) and returns its value.
func (r *jsonReader) str() (string, error) {
	r.i++
	start := r.i
	// The common case: no escapes, valid UTF-8, is its own value.
	for r.i < len(r.b) && r.b[r.i] != '"' && r.b[r.i] != '\\' && r.b[r.i] >= 0x20 && r.b[r.i] < utf8.RuneSelf {
		r.i++
	}
	if r.i < len(r.b) && r.b[r.i] == '"' {
		r.i++
		return string(r.b[start : r.i-1]), nil
	}
	out := append([]byte(nil), r.b[start:r.i]...)
	for r.i < len(r.b) {
		c := r.b[r.i]
		switch {
		case c == '"':
			r.i++
			return string(out), nil
		case c < 0x20:
			return "", r.syntaxError()
		case c == '\\':
			rn, ok := r.escape()
			if !ok {
				return "", r.syntaxError()
			}
			out = utf8.AppendRune(out, rn)
		default:
			rn, n := utf8.DecodeRune(r.b[r.i:]) // RuneError, 1 for a bad byte
			out = utf8.AppendRune(out, rn)
			r.i += n
		}
	}
	return "", r.syntaxError()
}

// escape decodes the escape at r.i (its backslash). An unpaired
// surrogate is U+FFFD.
func (r *jsonReader) escape() (rune, bool) {
	if r.i+1 >= len(r.b) {
		r.i = len(r.b)
		return 0, false
	}
	c := r.b[r.i+1]
	r.i += 2
	switch c {
	case '"', '\\', '/':
		return rune(c), true
	case 'b':
		return '\b', true
	case 'f':
		return '\f', true
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	case 'u':
		rn, ok := r.hex4()
		if !ok || !utf16.IsSurrogate(rn) {
			return rn, ok
		}
		if r.i+1 < len(r.b) && r.b[r.i] == '\\' && r.b[r.i+1] == 'u' {
			save := r.i
			r.i += 2
			lo, ok := r.hex4()
			if !ok {
				return 0, false
			}
			if pair := utf16.DecodeRune(rn, lo); pair != unicode.ReplacementChar {
				return pair, true
			}
			r.i = save // not a pair: the second escape stands alone
		}
		return unicode.ReplacementChar, true
	}
	r.i--
	return 0, false
}

// hex4 reads the four hex digits of a \u escape; on a bad one it stops
// there, for the error to name it.
func (r *jsonReader) hex4() (rune, bool) {
	var rn rune
	for range 4 {
		if r.i >= len(r.b) {
			return 0, false
		}
		c := r.b[r.i]
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		rn = rn<<4 | rune(c)
		r.i++
	}
	return rn, true
}

// stringOrNull reads a string or null ("" for null, as encoding/json
// leaves a string it is given null for).
func (r *jsonReader) stringOrNull() (string, bool, error) {
	switch r.peek() {
	case '"':
		s, err := r.str()
		return s, true, err
	case 'n':
		return "", false, r.literal("null")
	}
	_, err := r.skip()
	if err == nil {
		err = errNotString
	}
	return "", false, err
}

var errNotString = errors.New("not a string")

// sameName reports whether encoding/json matches key to a field named
// name: the same after folding each rune to the smallest of its
// unicode.SimpleFold orbit (so the Kelvin sign matches k).
func sameName(key, name string) bool {
	fold := func(r rune) rune {
		for {
			next := unicode.SimpleFold(r)
			if next <= r {
				return next
			}
			r = next
		}
	}
	for _, kr := range key {
		if name == "" {
			return false
		}
		nr, n := utf8.DecodeRuneInString(name)
		if kr != nr && fold(kr) != fold(nr) {
			return false
		}
		name = name[n:]
	}
	return name == ""
}

// jsonQuote appends s as a JSON string, as encoding/json's encoder
// without HTML escaping writes it.
func jsonQuote(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\b':
				b = append(b, '\\', 'b')
			case c == '\f':
				b = append(b, '\\', 'f')
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		rn, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case rn == utf8.RuneError && n == 1:
			b = append(b, `\ufffd`...)
		case rn == '\u2028' || rn == '\u2029':
			// Valid JSON, but not valid JavaScript source.
			b = append(b, '\\', 'u', '2', '0', '2', hex[rn&0xf])
		default:
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return append(b, '"')
}
