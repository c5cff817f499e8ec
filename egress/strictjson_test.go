package egress

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

var strictCases = []struct {
	in, err string // err "" means accepted
}{
	{`{}`, ""},
	{` {"a":1} `, ""},
	{`{"a":[1,2.5,-3e+2,true,false,null,"x\n\u00e9\ud83d\ude00"],"b":{"c":{}}}`, ""},
	{`{"a":"\/\\\"\b\f\r\t"}`, ""},
	{`{"a":1,"a":1}`, "duplicate key"},
	{`{"a":{"b":1,"b":2}}`, "duplicate key"},
	{`{"a":[{"b":1},{"b":1,"c":1,"b":0}]}`, "duplicate key"},
	{`{"ab":1,"a\u0062":2}`, "duplicate key"},
	{`{"a":"\ud800"}`, "lone surrogate"},
	{`{"a":"\udc00\ud800"}`, "lone surrogate"},
	{`{"\ud800x":1}`, "lone surrogate"},
	{`{} x`, "data after"},
	{`{}{}`, "data after"},
	{`[]`, "must be a JSON object"},
	{`"x"`, "must be a JSON object"},
	{``, "empty body"},
	{`   `, "empty body"},
	{`{"a":01}`, "expected ',' or '}'"},
	{`{"a":1.}`, "invalid number"},
	{`{"a":-}`, "invalid number"},
	{`{"a":NaN}`, "unexpected character"},
	{`{"a":Infinity}`, "unexpected character"},
	{`{"a":tru}`, "invalid literal"},
	{`{"a":1,}`, "expected a string key"},
	{`{"a":[1,]}`, "unexpected character"},
	{`{'a':1}`, "expected a string key"},
	{"{\"a\":\"\x01\"}", "control character"},
	{"{\"a\":\"\xc3\x28\"}", "invalid UTF-8"},
	{`{"a":"\x"}`, "invalid escape"},
	{`{"a":"\u12"}`, "invalid \\u escape"},
	{`{"a":1`, "unexpected end"},
	{`{"a":"x`, "unterminated string"},
	{"\ufeff{}", "must be a JSON object"},
	{strings.Repeat(`{"a":`, MaxDepth+2) + "1" + strings.Repeat("}", MaxDepth+2), "nested too deeply"},
}

func TestParseObject(t *testing.T) {
	for _, tc := range strictCases {
		_, err := ParseObject([]byte(tc.in))
		if tc.err == "" {
			if err != nil {
				t.Errorf("%q: %v", tc.in, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%.60q: got %v, want %q", tc.in, err, tc.err)
		}
	}
}

// FuzzParseObject holds our parser to encoding/json: whatever we accept,
// encoding/json accepts with the same meaning, so the bytes we forward
// mean to the upstream what they meant to our policy.
func FuzzParseObject(f *testing.F) {
	for _, tc := range strictCases {
		f.Add([]byte(tc.in))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := ParseObject(b)
		if err != nil {
			return
		}
		if !json.Valid(b) {
			t.Fatalf("accepted what encoding/json calls invalid: %q", b)
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		var want map[string]any
		if err := dec.Decode(&want); err != nil {
			t.Fatalf("encoding/json: %v", err)
		}
		if !reflect.DeepEqual(normal(got), normal(want)) {
			t.Fatalf("meaning differs for %q:\n%#v\n%#v", b, got, want)
		}
	})
}

func normal(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := map[string]any{}
		for k, e := range x {
			m[k] = normal(e)
		}
		return m
	case []any:
		a := make([]any, len(x))
		for i, e := range x {
			a[i] = normal(e)
		}
		return a
	default:
		return v
	}
}

func FuzzCheckToken(f *testing.F) {
	f.Add("Authorization", "Bearer tok", "", "")
	f.Add("X-Api-Key", "tok", "Authorization", "Bearer tok")
	f.Add("Authorization", "bearer  tok", "", "")
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2 string) {
		h := map[string][]string{}
		if k1 != "" {
			h[k1] = append(h[k1], v1)
		}
		if k2 != "" {
			h[k2] = append(h[k2], v2)
		}
		if checkToken(h, "tok") != nil {
			return
		}
		// Accepted: exactly one token header, and it is the token.
		n := 0
		for _, name := range tokenHeaders {
			n += len(h[name])
		}
		if n != 1 {
			t.Fatalf("accepted %d credential headers: %q", n, h)
		}
		for _, name := range tokenHeaders {
			for _, v := range h[name] {
				if v != "tok" && !strings.EqualFold(v, "bearer tok") {
					t.Fatalf("accepted %s: %q", name, v)
				}
			}
		}
	})
}
