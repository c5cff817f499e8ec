package guard

import (
	"bytes"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// FuzzGuard checks, for any input, that the guard does not panic, gives
// the same verdict twice, and never allows a literal pkill or killall
// call (nor killall5, skill or a port-kill helper). The decision table
// seeds it, so every family is a seed both ways.
func FuzzGuard(f *testing.F) {
	for _, cmd := range denyCases {
		f.Add(cmd)
	}
	for _, cmd := range allowCases {
		f.Add(cmd)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		g := New()
		first := g.check(cmd) // not Check: a panic must fail the fuzzer, not turn into a deny
		if second := g.check(cmd); second != first {
			t.Fatalf("verdict changed between runs on %q:\n\t%+v\n\t%+v", cmd, first, second)
		}
		if first.Allow && first.Reason != "" {
			t.Fatalf("allow with a reason on %q: %s", cmd, first.Reason)
		}
		if !first.Allow && first.Reason == "" {
			t.Fatalf("deny without a reason on %q", cmd)
		}
		if first.Allow && hasLiteralKillCall(cmd) {
			t.Fatalf("allowed a literal call of a tool that is always refused: %q", cmd)
		}
	})
}

// hasLiteralKillCall reports whether cmd parses and has a simple command
// whose first word is literally one of the tools that are always refused.
func hasLiteralKillCall(cmd string) bool {
	f, err := syntax.NewParser().Parse(strings.NewReader(cmd), "")
	if err != nil {
		return false
	}
	found := false
	syntax.Walk(f, func(n syntax.Node) bool {
		if call, ok := n.(*syntax.CallExpr); ok && len(call.Args) > 0 {
			switch call.Args[0].Lit() {
			case "pkill", "killall", "killall5", "skill", "kill-port", "fkill":
				found = true
			}
		}
		return !found
	})
	return found
}

// FuzzHookInput holds ParseHookInput to encoding/json's reading of the
// same fields (parseHookReference): for any input both fail, or both
// succeed with the same result.
func FuzzHookInput(f *testing.F) {
	for _, s := range []string{
		`{"tool_name":"Bash","tool_input":{"command":"pkill node"}}`,
		`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"echo \"hi\"\n","description":"x"},"cwd":"/tmp"}`,
		`{"tool_name":"Bash","Tool_Name":"x","tool_input":{"command":"ls"}}`,
		`{"tool_name":"Bash","tool_name":"shell","tool_input":{"command":"ls"}}`,
		`{"tool_name":"Bash","tool_name":null,"tool_input":{"command":"ls"},"tool_input":null}`,
		`{"hoo\u212a_event_name":"x","tool_input":{"COMMAND":"ls","command":null}}`,
		`{"tool_name":"Bash","tool_input":{"command":["pkill",null,"node"]}}`,
		`{"tool_name":"Bash","tool_input":{"command":["pkill",7]}}`,
		`{"tool_name":"Bash","tool_input":{"command":[]}}`,
		`{"tool_name":"Bash","tool_input":{"command":null}}`,
		`{"tool_name":null,"tool_input":null}`,
		`{"tool_name":"Bash","tool_input":"ls"}`,
		`{"tool_name":5}`,
		`{"tool_n\u0061me":"Bash","tool_input":{"command":"ls"}}`,
		`{"tool_name":"Bash","tool_input":{"command":"\u00e9\ud83d\ude00\ud83d\u0041\udc00"}}`,
		"{\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"a\xffb\xed\xa0\x80\"}}",
		`{"tool_name":"Bash","tool_input":{"nested":{"command":"x"},"command":"ls"}} `,
		`{ "tool_name" : "Bash" , "tool_input" : { "command" : "ls" } }`,
		`{}`,
		`{"a":[1,-0.5e+3,true,false,null,{"b":"}"}],"tool_name":"Bash","tool_input":{"command":"ls"}}`,
		`{"a":01}`, `{"a":1.}`, `{"a":-}`, `{"a":1,}`, `{"a":[1,]}`, `{"a" 1}`, `{"a":"\x"}`, `{"a":"\u12"}`,
		`{"tool_name":"Bash","tool_name":7}`, `{"tool_input":{"command":"x"},"tool_input":"ls"}`,
		`{"tool_input":"ls","tool_input":{"command":"x"}}`, `{"tool_input":{"command":["a"],"Command":"b"}}`,
		`{"a":tru}`, `{"tool_name":"Bash"} {}`, "{\"a\":\"\t\"}", `{"a":[[[[[[[[[[[[]]]]]]]]]]]]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := ParseHookInput(data)
		want, refErr := parseHookReference(data)
		if (err == nil) != (refErr == nil) {
			t.Fatalf("ParseHookInput(%q) = %+v, %v; encoding/json: %+v, %v", data, got, err, want, refErr)
		}
		if got != want {
			t.Fatalf("ParseHookInput(%q) = %+v; encoding/json reads %+v", data, got, want)
		}
	})
}

// FuzzDenyOutput holds DenyOutput to encoding/json's encoding of the
// same object.
func FuzzDenyOutput(f *testing.F) {
	for _, s := range []string{"", "use kill <PID> & more", "a\"b\\c\n\t\r\b\f\x00\x1f\x7f", "\u2028\u2029\xff\xed\xa0\x80é😀"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, reason string) {
		if got, want := DenyOutput(reason), denyOutputReference(reason); !bytes.Equal(got, want) {
			t.Fatalf("DenyOutput(%q) =\n%s\nencoding/json writes\n%s", reason, got, want)
		}
	})
}
