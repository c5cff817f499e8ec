package policy

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Type is what a field may hold.
type Type interface {
	check(c *checker, v any) error
	resolve(t *Table) error
	// String is the type as the printed table shows it.
	String() string
}

// The scalar types.
var (
	// Str is any string.
	Str Type = scalar{"string", func(v any) bool { _, ok := v.(string); return ok }}
	// Num is any number.
	Num Type = scalar{"number", func(v any) bool {
		switch v.(type) {
		case json.Number, float64:
			return true
		}
		return false
	}}
	// Bool is true or false.
	Bool Type = scalar{"boolean", func(v any) bool { _, ok := v.(bool); return ok }}
	// Null is null alone (in Or, a field a client sends as null).
	Null Type = scalar{"null", func(v any) bool { return v == nil }}
	// Any is free-form data the provider reads but never acts on outside
	// the model (a tool's input, a JSON schema).
	Any Type = anyType{}
)

type scalar struct {
	name string
	ok   func(any) bool
}

func (s scalar) check(c *checker, v any) error {
	if s.ok(v) {
		return nil
	}
	return c.refuse(false, "must be a %s, not %s", s.name, kind(v))
}
func (scalar) resolve(*Table) error { return nil }
func (s scalar) String() string     { return s.name }

type anyType struct{}

func (anyType) check(*checker, any) error { return nil }
func (anyType) resolve(*Table) error      { return nil }
func (anyType) String() string            { return "any JSON (data)" }

// Enum is one of the given strings.
func Enum(vals ...string) Type { return enum(vals) }

type enum []string

func (e enum) check(c *checker, v any) error {
	s, ok := v.(string)
	if !ok {
		return c.refuse(false, "must be one of %s, not %s", e, kind(v))
	}
	for _, x := range e {
		if s == x {
			return nil
		}
	}
	return c.refuse(false, "%s is not one of %s", quote(s), e)
}
func (enum) resolve(*Table) error { return nil }
func (e enum) String() string {
	q := make([]string, len(e))
	for i, s := range e {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, " | ")
}

// Lit is exactly the literal JSON value v (a bool: false, say).
func Lit(v any, why string) Type { return lit{v, why} }

type lit struct {
	v   any
	why string
}

func (l lit) check(c *checker, v any) error {
	if v == l.v {
		return nil
	}
	return c.refuse(true, "must be %v: %s", l.v, l.why)
}
func (lit) resolve(*Table) error { return nil }
func (l lit) String() string     { return fmt.Sprintf("%v only (%s)", l.v, l.why) }

// Prefixed is a string starting with one of the prefixes; why says what
// other strings would make the provider do.
func Prefixed(why string, prefixes ...string) Type { return prefixed{prefixes, why} }

type prefixed struct {
	p   []string
	why string
}

func (p prefixed) check(c *checker, v any) error {
	s, ok := v.(string)
	if !ok {
		return c.refuse(false, "must be a string, not %s", kind(v))
	}
	for _, x := range p.p {
		if strings.HasPrefix(s, x) {
			return nil
		}
	}
	q := make([]string, len(p.p))
	for i, x := range p.p {
		q[i] = strconv.Quote(x)
	}
	return c.refuse(true, "must start with %s: %s", strings.Join(q, " or "), p.why)
}
func (prefixed) resolve(*Table) error { return nil }
func (p prefixed) String() string {
	return fmt.Sprintf("string starting %s (%s)", strings.Join(p.p, " or "), p.why)
}

// StrNotEnding is a string that does not end with any of the suffixes
// (compared without case); why says what such a string would make the
// provider do (a model name ending ":online" turns on a router's web
// search, say).
func StrNotEnding(why string, suffixes ...string) Type { return notEnding{suffixes, why} }

type notEnding struct {
	s   []string
	why string
}

func (n notEnding) check(c *checker, v any) error {
	s, ok := v.(string)
	if !ok {
		return c.refuse(false, "must be a string, not %s", kind(v))
	}
	for _, x := range n.s {
		if len(s) >= len(x) && strings.EqualFold(s[len(s)-len(x):], x) {
			return c.refuse(true, "must not end with %s: %s", strconv.Quote(x), n.why)
		}
	}
	return nil
}
func (notEnding) resolve(*Table) error { return nil }
func (n notEnding) String() string {
	q := make([]string, len(n.s))
	for i, x := range n.s {
		q[i] = strconv.Quote(x)
	}
	return fmt.Sprintf("string not ending %s (%s)", strings.Join(q, " or "), n.why)
}

// Obj is an object of the named shape, or a member of the named union.
func Obj(name string) Type { return &ref{name: name} }

type ref struct {
	name  string
	shape *Shape
	union *Union
}

func (r *ref) resolve(t *Table) error {
	r.shape, r.union = t.shapes[r.name], t.unions[r.name]
	if r.shape == nil && r.union == nil {
		return fmt.Errorf("%q is not declared", r.name)
	}
	return nil
}

func (r *ref) String() string { return r.name }

func (r *ref) check(c *checker, v any) error {
	if r.union != nil && v == nil && r.union.Nullable {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return c.refuse(false, "must be %s (an object), not %s", article(r.name), kind(v))
	}
	if r.shape != nil {
		return c.object(r.shape, m)
	}
	u := r.union
	tv, has := m[u.Tag]
	if !has {
		if u.Untagged == "" {
			return c.refuse(false, "%s needs a %q field", article(u.Name), u.Tag)
		}
		return c.object(c.t.shapes[u.Untagged], m)
	}
	tag, ok := tv.(string)
	c.push(u.Tag)
	if !ok {
		err := c.refuse(false, "the %s of %s must be a string, not %s", u.Tag, article(u.Name), kind(tv))
		c.pop()
		return err
	}
	mem := u.members[tag]
	if mem == nil {
		mem = u.prefixed(tag)
	}
	if mem == nil {
		err := c.refuse(false, "%s is not %s %s aisan knows here", quote(tag), article(u.Name), u.Tag)
		c.pop()
		return err
	}
	if mem.Refused != "" {
		err := c.refuse(true, "%s %s %s is refused: %s", article(u.Name), u.Tag, quote(tag), mem.Refused)
		c.pop()
		return err
	}
	c.pop()
	return c.object(c.t.shapes[mem.Shape], m)
}

// List is a list of elem.
func List(elem Type) Type { return list{elem} }

type list struct{ elem Type }

func (l list) check(c *checker, v any) error {
	a, ok := v.([]any)
	if !ok {
		return c.refuse(false, "must be a list of %s, not %s", l.elem, kind(v))
	}
	for i, e := range a {
		c.index(i)
		if err := l.elem.check(c, e); err != nil {
			return err
		}
		c.pop()
	}
	return nil
}
func (l list) resolve(t *Table) error { return l.elem.resolve(t) }
func (l list) String() string         { return "list of " + l.elem.String() }

// Map is an object with any keys, each value of elem (labels, say).
func Map(elem Type) Type { return mapType{elem} }

type mapType struct{ elem Type }

func (m mapType) check(c *checker, v any) error {
	o, ok := v.(map[string]any)
	if !ok {
		return c.refuse(false, "must be an object, not %s", kind(v))
	}
	for k, e := range o {
		c.push(k)
		if err := m.elem.check(c, e); err != nil {
			return err
		}
		c.pop()
	}
	return nil
}
func (m mapType) resolve(t *Table) error { return m.elem.resolve(t) }
func (m mapType) String() string         { return "object of " + m.elem.String() }

// Or is the first of its alternatives whose JSON kind the value has (a
// string, or a list of blocks); alternatives of one kind must not
// overlap, or the first always wins.
func Or(alts ...Type) Type { return or(alts) }

type or []Type

func (o or) check(c *checker, v any) error {
	k := kind(v)
	for _, t := range o {
		if kindOf(t) == k || kindOf(t) == "" {
			return t.check(c, v)
		}
	}
	return c.refuse(false, "must be %s, not %s", o, k)
}

func (o or) resolve(t *Table) error {
	for _, a := range o {
		if err := a.resolve(t); err != nil {
			return err
		}
	}
	return nil
}

func (o or) String() string {
	s := make([]string, len(o))
	for i, t := range o {
		s[i] = t.String()
	}
	return strings.Join(s, " or ")
}

// kindOf is the JSON kind a type accepts, as kind names it ("" for any).
func kindOf(t Type) string {
	switch x := t.(type) {
	case scalar:
		switch x.name {
		case "string":
			return "a string"
		case "number":
			return "a number"
		case "boolean":
			return "a boolean"
		case "null":
			return "null"
		}
	case enum, prefixed:
		return "a string"
	case lit:
		return kind(x.v)
	case list:
		return "a list"
	case *ref, mapType:
		return "an object"
	}
	return ""
}

// prefixed is the refused member whose tag tag starts with, if any.
func (u *Union) prefixed(tag string) *Member {
	for i := range u.Members {
		if m := &u.Members[i]; m.Prefix && strings.HasPrefix(tag, m.Tag) {
			return m
		}
	}
	return nil
}
