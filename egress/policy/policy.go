// Package policy is the egress proxy's body policy as data: for each API,
// a table of the shapes a request body may take, and a checker that
// refuses anything the table does not name.
//
// # Rules
//
//   - A table is an allow-list. Every object has its known fields; every
//     tagged object (a content block, a tool, an input item, a source) has
//     its known tags, each naming the object it is. A field, tag, or JSON
//     kind the table does not name at that position is refused: the
//     checker never skips what it cannot classify.
//   - Some rows refuse by name, with the reason (a URL source, a
//     provider-run tool): those read better than "not known", and show in
//     the printed table what was decided and why.
//   - Free-form data (a tool's input, a JSON schema, text) is declared as
//     such at its position; nothing else is free.
//   - A refusal names the JSON path of what it refused (messages[2].
//     content[0].source.type) and why; it never quotes a value but a tag,
//     so a secret in a body never reaches a log.
//   - The checker is pure and walks the body once; it never recurses
//     deeper than the parser allowed.
//   - A request header whose values switch the provider's features on (a
//     list of betas) is a row too: each of its comma-separated values must
//     be one the table names, or the request is refused, naming the header
//     and the value. A header the table does not list is not checked
//     here; the backend's forward list decides whether it passes at all.
package policy

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Table is one API's body policy.
type Table struct {
	// Name is the API ("Anthropic Messages").
	Name string
	// Root names the shape of a whole body.
	Root string
	// Shapes are the objects, Unions the tagged objects.
	Shapes []Shape
	Unions []Union
	// Headers are the request headers whose values the table lists.
	Headers []HeaderList

	shapes  map[string]*Shape
	unions  map[string]*Union
	headers map[string]map[string]bool
}

// HeaderList is a request header of comma-separated values, each a
// feature switch (Anthropic's anthropic-beta): only the values it names
// pass.
type HeaderList struct {
	// Name is the header's name in lower case.
	Name string
	// Values are the values known, each a reviewed decision.
	Values []string
	// Note says what the header is, for the printed table.
	Note string
}

// Shape is an object and its known fields.
type Shape struct {
	Name   string
	Fields []Field
	// Required names the fields it must have (a tool container's tools:
	// one without makes the provider fill it in).
	Required []string
	// Note says what the object is, for the printed table.
	Note string

	fields map[string]*Field
}

// Field is one known field of a shape: its type, or (Refused set) the
// reason it is refused whenever present.
type Field struct {
	Name    string
	Type    Type
	Refused string
}

// Union is a family of objects told apart by a tag field ("type").
type Union struct {
	Name string
	// Tag is the tag field's name.
	Tag string
	// Members map a tag value to the shape it names.
	Members []Member
	// Untagged is the shape of a member without the tag ("" refuses one).
	Untagged string
	// Nullable accepts null in place of a member (as fields allow no
	// nulls otherwise, this is where a client's explicit null lands).
	Nullable bool

	members map[string]*Member
}

// Member is one tag of a union: the shape it names, or the reason it is
// refused. A refused member with Prefix set refuses every tag that starts
// with Tag (a family of dated tool versions).
type Member struct {
	Tag     string
	Shape   string
	Refused string
	Prefix  bool
}

// Fields builds a field list from name, type pairs; a shorthand for the
// tables.
func Fields(pairs ...any) []Field {
	if len(pairs)%2 != 0 {
		panic("policy.Fields: odd argument count")
	}
	out := make([]Field, 0, len(pairs)/2)
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, Field{Name: pairs[i].(string), Type: pairs[i+1].(Type)})
	}
	return out
}

// Compile indexes the table and checks that every name it uses is
// declared; it is called once, before the first Check.
func (t *Table) Compile() error {
	t.shapes = make(map[string]*Shape, len(t.Shapes))
	t.unions = make(map[string]*Union, len(t.Unions))
	for i := range t.Shapes {
		s := &t.Shapes[i]
		if _, dup := t.shapes[s.Name]; dup {
			return fmt.Errorf("policy %s: shape %q declared twice", t.Name, s.Name)
		}
		t.shapes[s.Name] = s
		s.fields = make(map[string]*Field, len(s.Fields))
		for j := range s.Fields {
			f := &s.Fields[j]
			if _, dup := s.fields[f.Name]; dup {
				return fmt.Errorf("policy %s: %s: field %q declared twice", t.Name, s.Name, f.Name)
			}
			if (f.Type == nil) == (f.Refused == "") {
				return fmt.Errorf("policy %s: %s.%s: a field has a type or a refusal, not both or neither", t.Name, s.Name, f.Name)
			}
			s.fields[f.Name] = f
		}
		for _, r := range s.Required {
			if s.fields[r] == nil {
				return fmt.Errorf("policy %s: %s: the required field %q is not declared", t.Name, s.Name, r)
			}
		}
	}
	for i := range t.Unions {
		u := &t.Unions[i]
		if _, dup := t.unions[u.Name]; dup {
			return fmt.Errorf("policy %s: union %q declared twice", t.Name, u.Name)
		}
		if _, clash := t.shapes[u.Name]; clash {
			return fmt.Errorf("policy %s: %q is both a shape and a union", t.Name, u.Name)
		}
		t.unions[u.Name] = u
		u.members = make(map[string]*Member, len(u.Members))
		for j := range u.Members {
			m := &u.Members[j]
			if _, dup := u.members[m.Tag]; dup {
				return fmt.Errorf("policy %s: %s: tag %q declared twice", t.Name, u.Name, m.Tag)
			}
			if (m.Shape == "") == (m.Refused == "") {
				return fmt.Errorf("policy %s: %s: tag %q names a shape or a refusal, not both or neither", t.Name, u.Name, m.Tag)
			}
			if m.Prefix && m.Refused == "" {
				return fmt.Errorf("policy %s: %s: only a refusal may match tags by prefix (%q)", t.Name, u.Name, m.Tag)
			}
			if m.Shape != "" && t.shapes[m.Shape] == nil {
				return fmt.Errorf("policy %s: %s: tag %q names the undeclared shape %q", t.Name, u.Name, m.Tag, m.Shape)
			}
			u.members[m.Tag] = m
		}
		if u.Untagged != "" && t.shapes[u.Untagged] == nil {
			return fmt.Errorf("policy %s: %s: untagged members name the undeclared shape %q", t.Name, u.Name, u.Untagged)
		}
	}
	if t.shapes[t.Root] == nil {
		return fmt.Errorf("policy %s: the root shape %q is not declared", t.Name, t.Root)
	}
	t.headers = make(map[string]map[string]bool, len(t.Headers))
	for _, h := range t.Headers {
		if h.Name == "" || h.Name != strings.ToLower(h.Name) {
			return fmt.Errorf("policy %s: header %q must be named in lower case", t.Name, h.Name)
		}
		if t.headers[h.Name] != nil {
			return fmt.Errorf("policy %s: header %q declared twice", t.Name, h.Name)
		}
		set := make(map[string]bool, len(h.Values))
		for _, v := range h.Values {
			if v == "" || v != strings.TrimSpace(v) || strings.Contains(v, ",") || set[v] {
				return fmt.Errorf("policy %s: header %s: value %q is empty, padded, holds a comma or is declared twice", t.Name, h.Name, v)
			}
			set[v] = true
		}
		t.headers[h.Name] = set
	}
	var err error
	visit := func(ty Type) {
		if err == nil {
			err = ty.resolve(t)
		}
	}
	for _, s := range t.Shapes {
		for _, f := range s.Fields {
			if f.Type != nil {
				visit(f.Type)
			}
		}
	}
	if err != nil {
		return fmt.Errorf("policy %s: %w", t.Name, err)
	}
	return nil
}

// MustCompile is Compile for the built-in tables, whose mistakes are
// programming errors the tests catch.
func (t *Table) MustCompile() *Table {
	if err := t.Compile(); err != nil {
		panic(err)
	}
	return t
}

// Refusal is a body the table refuses: where and why.
type Refusal struct {
	// Path is the JSON path of what was refused ("" for the body).
	Path string
	// Why says what is wrong there.
	Why string
	// Known is true when a row refused it by name (a reviewed decision),
	// false when the table simply does not know it.
	Known bool
}

func (r *Refusal) Error() string {
	if r.Path == "" {
		return r.Why
	}
	return r.Path + ": " + r.Why
}

// Check checks a parsed body (as egress.ParseObject returns it) against
// the table.
func (t *Table) Check(body map[string]any) error {
	c := checker{t: t}
	return c.object(t.shapes[t.Root], body)
}

// CheckHeaders checks the request headers the table lists; get returns a
// header's values by name, as http.Header.Values does. Every
// comma-separated value, with the spaces and tabs HTTP allows around it
// trimmed (no other character, so what passes is read alike by any
// parser), must be one the table names; empty ones are refused too, so
// what passes is exactly a list of known values.
func (t *Table) CheckHeaders(get func(name string) []string) error {
	for _, h := range t.Headers {
		known := t.headers[h.Name]
		for _, line := range get(h.Name) {
			for _, v := range strings.Split(line, ",") {
				v = strings.Trim(v, " \t")
				if !known[v] {
					where := "the " + h.Name + " header"
					if v == "" {
						return &Refusal{Path: where, Why: "an empty value is not one aisan knows"}
					}
					return &Refusal{Path: where, Why: fmt.Sprintf("%s is not a value aisan knows", quote(v))}
				}
			}
		}
	}
	return nil
}

// checker walks one body; path is the position being checked, built up
// and torn down as the walk goes and rendered only for a refusal, so a
// pass allocates nothing for it.
type checker struct {
	t    *Table
	path []step
}

// step is one element of a path: an object key, or (key "") a list index.
type step struct {
	key string
	idx int
}

func (c *checker) push(k string) { c.path = append(c.path, step{key: k}) }
func (c *checker) index(i int)   { c.path = append(c.path, step{idx: i}) }
func (c *checker) pop()          { c.path = c.path[:len(c.path)-1] }

func (c *checker) at() string {
	var b strings.Builder
	for _, p := range c.path {
		if p.key == "" {
			fmt.Fprintf(&b, "[%d]", p.idx)
			continue
		}
		n := fieldName(p.key)
		if n[0] != '[' && b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(n)
	}
	return b.String()
}

func (c *checker) refuse(known bool, format string, args ...any) error {
	return &Refusal{Path: c.at(), Why: fmt.Sprintf(format, args...), Known: known}
}

func (c *checker) object(s *Shape, m map[string]any) error {
	for _, r := range s.Required {
		if _, ok := m[r]; !ok {
			return c.refuse(true, "%s needs the field %s", article(s.Name), quote(r))
		}
	}
	for k, v := range m {
		if c.field(s, k, v) != nil {
			// Report the first refused key in sorted order, so the same
			// body gets the same answer every time.
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if err := c.field(s, k, m[k]); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// field checks the value v of key k of an object of shape s.
func (c *checker) field(s *Shape, k string, v any) error {
	n := len(c.path)
	c.push(k)
	f := s.fields[k]
	var err error
	switch {
	case f == nil:
		err = c.refuse(false, "not a field aisan knows in %s", article(s.Name))
	case f.Refused != "":
		err = c.refuse(true, "this field is refused: %s", f.Refused)
	default:
		err = f.Type.check(c, v)
	}
	c.path = c.path[:n] // an error leaves the inner steps behind
	return err
}

// fieldName is how a key appears in a path.
func fieldName(k string) string {
	if k != "" && strings.IndexFunc(k, func(r rune) bool {
		return !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) < 0 {
		return k
	}
	return "[" + strconv.Quote(k) + "]"
}

// quote shows a name from the body: quoted, and cut short, so a refusal
// line stays one readable line whatever the box sent.
func quote(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	return strconv.Quote(s)
}

func article(name string) string {
	if name == "" {
		return "this object"
	}
	switch name[0] {
	case 'a', 'e', 'i', 'o', 'u':
		return "an " + name
	}
	return "a " + name
}

// kind names a JSON value's kind for a refusal.
func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case json.Number, float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("a %T", v)
}
