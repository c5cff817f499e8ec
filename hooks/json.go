package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/aisan-dev/aisan/hooks/jsonfile"
)

// ParseError is a settings file that is not valid JSON, with the
// position of the first error (package jsonfile).
type ParseError = jsonfile.ParseError

// object is a JSON object opened one level deep: its members in the order
// they were written, each value kept as the bytes it was written as, so an
// edit writes untouched members back byte for byte.
type object struct {
	members []member
}

type member struct {
	key    string          // decoded
	rawKey []byte          // as written, quotes included
	value  json.RawMessage // as written, without surrounding space
}

// parseObject opens raw, which must be valid JSON (see jsonfile.CheckSyntax).
func parseObject(raw []byte) (*object, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if tok != json.Delim('{') {
		return nil, errNotObject
	}
	o := &object{}
	for dec.More() {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("object key is %v, want a string", tok)
		}
		rawKey := bytes.TrimLeft(raw[start:dec.InputOffset()], " \t\r\n,")
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		o.members = append(o.members, member{key: key, rawKey: rawKey, value: v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	return o, nil
}

var errNotObject = errors.New("not an object")

// parseArray opens raw, which must be a valid JSON array, into its
// elements as written.
func parseArray(raw []byte) ([]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if tok != json.Delim('[') {
		return nil, errors.New("not an array")
	}
	var elems []json.RawMessage
	for dec.More() {
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		elems = append(elems, v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	return elems, nil
}

// lookup returns the index of the member named key, or -1. A key written
// twice is an error: readers disagree on which one counts, so an edit
// could change the setting the agent sees.
func (o *object) lookup(key string) (int, error) {
	at := -1
	for i, m := range o.members {
		if m.key == key {
			if at >= 0 {
				return -1, fmt.Errorf("key %q appears more than once", key)
			}
			at = i
		}
	}
	return at, nil
}

// set replaces the value of the member at i, or appends key when i < 0.
func (o *object) set(i int, key string, value json.RawMessage) {
	if i >= 0 {
		o.members[i].value = value
		return
	}
	rawKey, _ := marshal(key, "", "")
	o.members = append(o.members, member{key: key, rawKey: rawKey, value: value})
}

func (o *object) remove(i int) {
	o.members = append(o.members[:i:i], o.members[i+1:]...)
}

func (o *object) removeAll(key string) {
	kept := o.members[:0:0]
	for _, m := range o.members {
		if m.key != key {
			kept = append(kept, m)
		}
	}
	o.members = kept
}

// kind names the JSON type of a valid raw value, for error messages.
func kind(raw json.RawMessage) string {
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

func isNull(raw json.RawMessage) bool { return string(raw) == "null" }

// layout is how a file is written: the indentation unit and whether it
// ends in a newline.
type layout struct {
	indent  string
	newline bool
}

// detectLayout reads the indentation unit off the first member of the root
// object, defaulting to two spaces for a file written on one line.
func detectLayout(src []byte) layout {
	l := layout{indent: "  ", newline: len(bytes.TrimSpace(src)) == 0 || bytes.HasSuffix(src, []byte("\n"))}
	i := bytes.IndexByte(src, '{')
	if i < 0 {
		return l
	}
	rest := src[i+1:]
	ws := rest[:len(rest)-len(bytes.TrimLeft(rest, " \t\r\n"))]
	nl := bytes.LastIndexByte(ws, '\n')
	if nl < 0 {
		return l
	}
	unit := strings.TrimRight(string(ws[nl+1:]), "\r")
	if unit != "" && strings.Trim(unit, " \t") == "" {
		l.indent = unit
	}
	return l
}

// encodeObject writes o one member per line at the given depth; member
// values are written as they are, so they must already be laid out for
// depth+1.
func (l layout) encodeObject(o *object, depth int) json.RawMessage {
	if len(o.members) == 0 {
		return json.RawMessage("{}")
	}
	var b bytes.Buffer
	b.WriteString("{\n")
	for i, m := range o.members {
		b.WriteString(strings.Repeat(l.indent, depth+1))
		b.Write(m.rawKey)
		b.WriteString(": ")
		b.Write(m.value)
		if i < len(o.members)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString(strings.Repeat(l.indent, depth))
	b.WriteByte('}')
	return b.Bytes()
}

// encodeArray is encodeObject for arrays.
func (l layout) encodeArray(elems []json.RawMessage, depth int) json.RawMessage {
	if len(elems) == 0 {
		return json.RawMessage("[]")
	}
	var b bytes.Buffer
	b.WriteString("[\n")
	for i, e := range elems {
		b.WriteString(strings.Repeat(l.indent, depth+1))
		b.Write(e)
		if i < len(elems)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString(strings.Repeat(l.indent, depth))
	b.WriteByte(']')
	return b.Bytes()
}

// value lays out a new value for depth.
func (l layout) value(v any, depth int) (json.RawMessage, error) {
	return marshal(v, strings.Repeat(l.indent, depth), l.indent)
}

// marshal encodes v without HTML escaping (paths and shell commands stay
// readable) and without the encoder's trailing newline.
func marshal(v any, prefix, indent string) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent(prefix, indent)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// stringValue decodes raw if it is a JSON string.
func stringValue(raw json.RawMessage) (string, bool) {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}
