package policy

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// toy is a small table with every kind of row.
func toy() *Table {
	return (&Table{
		Name: "toy",
		Root: "body",
		Shapes: []Shape{
			{Name: "body", Fields: append(Fields(
				"name", Str,
				"n", Num,
				"on", Bool,
				"mode", Enum("a", "b"),
				"img", Prefixed("inline only", "data:"),
				"store", Lit(false, "stored on the provider"),
				"items", List(Obj("item")),
				"blob", Any,
				"labels", Map(Str),
				"either", Or(Str, List(Str)),
				"box", Obj("box"),
			), Field{Name: "danger", Refused: "it acts outside"})},
			{Name: "text item", Fields: Fields("type", Enum("text"), "text", Str)},
			{Name: "plain", Fields: Fields("text", Str)},
			{Name: "box", Fields: Fields("inner", List(Obj("item"))), Required: []string{"inner"}},
		},
		Unions: []Union{{Name: "item", Tag: "type", Untagged: "plain", Members: []Member{
			{Tag: "text", Shape: "text item"},
			{Tag: "url", Refused: "it is fetched"},
			{Tag: "server_", Refused: "it runs there", Prefix: true},
		}}},
	}).MustCompile()
}

func check(t *Table, body string) error {
	var m map[string]any
	d := json.NewDecoder(strings.NewReader(body))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		panic(err)
	}
	return t.Check(m)
}

func TestCheck(t *testing.T) {
	tb := toy()
	for _, tc := range []struct{ body, want string }{
		{`{}`, ""},
		{`{"name":"x","n":1,"on":true,"mode":"a","img":"data:x","store":false,"blob":{"any":["thing",{"type":"url"}]},"labels":{"k":"v"},"either":["a"],"box":{"inner":[]}}`, ""},
		{`{"items":[{"type":"text","text":"t"},{"text":"untagged"}]}`, ""},
		{`{"nope":1}`, "nope: not a field aisan knows in a body"},
		{`{"danger":null}`, "danger: this field is refused: it acts outside"},
		{`{"name":1}`, "name: must be a string, not a number"},
		{`{"n":"1"}`, "n: must be a number, not a string"},
		{`{"on":null}`, "on: must be a boolean, not null"},
		{`{"mode":"c"}`, `mode: "c" is not one of "a" | "b"`},
		{`{"img":"https://x"}`, `img: must start with "data:": inline only`},
		{`{"store":true}`, "store: must be false: stored on the provider"},
		{`{"items":[{"type":"text","text":"t"},{"type":"url","url":"u"}]}`, `items[1].type: an item type "url" is refused: it is fetched`},
		{`{"items":[{"type":"server_tool_2027"}]}`, `items[0].type: an item type "server_tool_2027" is refused: it runs there`},
		{`{"items":[{"type":"video"}]}`, `items[0].type: "video" is not an item type aisan knows here`},
		{`{"items":[{"type":7}]}`, "items[0].type: the type of an item must be a string, not a number"},
		{`{"items":[{"text":"t","url":"u"}]}`, "items[0].url: not a field aisan knows in a plain"},
		{`{"items":[{"type":"text","text":"t","extra":1}]}`, "items[0].extra: not a field aisan knows in a text item"},
		{`{"items":{}}`, "items: must be a list of item, not an object"},
		{`{"labels":{"k":1}}`, "labels.k: must be a string, not a number"},
		{`{"labels":{"a b":1}}`, `labels["a b"]: must be a string, not a number`},
		{`{"either":{}}`, "either: must be string or list of string, not an object"},
		{`{"box":{}}`, `box: a box needs the field "inner"`},
		{`{"box":{"inner":[{"type":"url"}]}}`, `box.inner[0].type: an item type "url" is refused: it is fetched`},
	} {
		err := check(tb, tc.body)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: refused: %v", tc.body, err)
			}
			continue
		}
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s:\n got  %v\n want %s", tc.body, err, tc.want)
		}
	}
}

// TestFirstRefusalIsStable: a body with several refused fields gets the
// same answer every time (map order must not leak into it).
func TestFirstRefusalIsStable(t *testing.T) {
	tb := toy()
	body := `{"zz":1,"aa":1,"mm":1,"danger":1,"name":2}`
	want := check(tb, body).Error()
	for range 50 {
		if got := check(tb, body).Error(); got != want {
			t.Fatalf("%q then %q", want, got)
		}
	}
	if want != "aa: not a field aisan knows in a body" {
		t.Errorf("first refusal %q", want)
	}
}

func TestCompileRejectsBrokenTables(t *testing.T) {
	for name, tb := range map[string]*Table{
		"no root":          {Name: "x", Root: "body"},
		"undeclared shape": {Name: "x", Root: "b", Shapes: []Shape{{Name: "b", Fields: Fields("f", Obj("nowhere"))}}},
		"twice":            {Name: "x", Root: "b", Shapes: []Shape{{Name: "b"}, {Name: "b"}}},
		"field twice":      {Name: "x", Root: "b", Shapes: []Shape{{Name: "b", Fields: Fields("f", Str, "f", Num)}}},
		"type and refusal": {Name: "x", Root: "b", Shapes: []Shape{{Name: "b", Fields: []Field{{Name: "f", Type: Str, Refused: "no"}}}}},
		"required unknown": {Name: "x", Root: "b", Shapes: []Shape{{Name: "b", Required: []string{"f"}}}},
		"allowed prefix":   {Name: "x", Root: "b", Shapes: []Shape{{Name: "b"}}, Unions: []Union{{Name: "u", Tag: "type", Members: []Member{{Tag: "p_", Shape: "b", Prefix: true}}}}},
		"member undeclared": {Name: "x", Root: "b", Shapes: []Shape{{Name: "b"}},
			Unions: []Union{{Name: "u", Tag: "type", Members: []Member{{Tag: "t", Shape: "nowhere"}}}}},
	} {
		if err := tb.Compile(); err == nil {
			t.Errorf("%s: compiled", name)
		}
	}
}

func TestPrintAndRows(t *testing.T) {
	tb := toy()
	var b strings.Builder
	if err := tb.Print(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"toy: 20 rows; anything not listed",
		"danger  REFUSED  it acts outside",
		`type="server_"…  REFUSED  it runs there`,
		"inner  required  list of item",
		"(no type)  ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the printed table lacks %q:\n%s", want, out)
		}
	}
}

// headerToy is toy with a listed header.
func headerToy() *Table {
	tb := toy()
	tb.Headers = []HeaderList{{Name: "x-switch", Values: []string{"a-1", "b-2"}, Note: "feature switches"}}
	return tb.MustCompile()
}

// TestCheckHeaders: every comma-separated value of a listed header, on
// every line of it, must be one the table names; the refusal names the
// header and the value.
func TestCheckHeaders(t *testing.T) {
	tb := headerToy()
	for _, tc := range []struct {
		lines []string
		want  string
	}{
		{nil, ""},
		{[]string{"a-1"}, ""},
		{[]string{"a-1,b-2"}, ""},
		{[]string{" a-1 , b-2 "}, ""},
		{[]string{"a-1", "b-2"}, ""},
		{[]string{"c-3"}, `the x-switch header: "c-3" is not a value aisan knows`},
		{[]string{"a-1,c-3"}, `the x-switch header: "c-3" is not a value aisan knows`},
		{[]string{"a-1", "b-2, c-3"}, `the x-switch header: "c-3" is not a value aisan knows`},
		{[]string{"A-1"}, `the x-switch header: "A-1" is not a value aisan knows`},
		{[]string{"a-1;q=1"}, `the x-switch header: "a-1;q=1" is not a value aisan knows`},
		{[]string{"a-1 b-2"}, `the x-switch header: "a-1 b-2" is not a value aisan knows`},
		{[]string{"\ta-1\t"}, ""},
		{[]string{"a-1\u00a0"}, `the x-switch header: "a-1\u00a0" is not a value aisan knows`},
		{[]string{"a-1\n"}, `the x-switch header: "a-1\n" is not a value aisan knows`},
		{[]string{"a-1,,b-2"}, "the x-switch header: an empty value is not one aisan knows"},
		{[]string{""}, "the x-switch header: an empty value is not one aisan knows"},
		{[]string{"a-1,"}, "the x-switch header: an empty value is not one aisan knows"},
	} {
		err := tb.CheckHeaders(func(name string) []string {
			if name != "x-switch" {
				t.Fatalf("asked for %q", name)
			}
			return tc.lines
		})
		if tc.want == "" {
			if err != nil {
				t.Errorf("%q: refused: %v", tc.lines, err)
			}
			continue
		}
		var r *Refusal
		if err == nil || err.Error() != tc.want || !errors.As(err, &r) || r.Known {
			t.Errorf("%q:\n got  %v\n want %s (as an unknown)", tc.lines, err, tc.want)
		}
	}
	if err := toy().CheckHeaders(func(string) []string { return []string{"anything"} }); err != nil {
		t.Errorf("a table without header rows refused: %v", err)
	}
}

func TestCompileRejectsBrokenHeaderRows(t *testing.T) {
	for name, h := range map[string][]HeaderList{
		"upper case":   {{Name: "X-Switch", Values: []string{"a"}}},
		"no name":      {{Values: []string{"a"}}},
		"twice":        {{Name: "x", Values: []string{"a"}}, {Name: "x", Values: []string{"b"}}},
		"empty value":  {{Name: "x", Values: []string{""}}},
		"padded value": {{Name: "x", Values: []string{" a"}}},
		"comma value":  {{Name: "x", Values: []string{"a,b"}}},
		"value twice":  {{Name: "x", Values: []string{"a", "a"}}},
	} {
		tb := toy()
		tb.Headers = h
		if err := tb.Compile(); err == nil {
			t.Errorf("%s: compiled", name)
		}
	}
}

func TestPrintHeaderRows(t *testing.T) {
	tb := headerToy()
	var b strings.Builder
	if err := tb.Print(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"toy: 22 rows", "x-switch header (comma-separated; each value must be listed) — feature switches\n  a-1\n  b-2\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("the printed table lacks %q:\n%s", want, out)
		}
	}
}

// FuzzCheckHeaders: whatever a box sends, a header that passes holds
// only listed values, each as the table spells it.
func FuzzCheckHeaders(f *testing.F) {
	for _, s := range []string{"a-1", "a-1, b-2", "a-1,,b-2", "a-1\tb-2", " a-1 ", "a-1,c-3", "\x00", "a-1;b-2", "ａ-1", "a-1\u00a0", "\u0085a-1"} {
		f.Add(s, "b-2")
	}
	tb := headerToy()
	f.Fuzz(func(t *testing.T, l1, l2 string) {
		if tb.CheckHeaders(func(string) []string { return []string{l1, l2} }) != nil {
			return
		}
		for _, l := range []string{l1, l2} {
			for _, v := range strings.Split(l, ",") {
				if v = strings.Trim(v, " \t"); v != "a-1" && v != "b-2" {
					t.Fatalf("%q passed with the value %q", []string{l1, l2}, v)
				}
			}
		}
	})
}
