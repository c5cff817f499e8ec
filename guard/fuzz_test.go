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

// FuzzHookInputFast holds the fast reading of the hook input to
// encoding/json's: whatever the fast path accepts, the decoder reads the
// same way, without an error.
func FuzzHookInputFast(f *testing.F) {
	for _, s := range []string{
		`{"tool_name":"Bash","tool_input":{"command":"pkill node"}}`,
		`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"echo \"hi\"\n","description":"x"},"cwd":"/tmp"}`,
		`{"tool_name":"Bash","Tool_Name":"x","tool_input":{"command":"ls"}}`,
		`{"tool_name":"Bash","tool_name":"shell","tool_input":{"command":"ls"}}`,
		`{"tool_name":"Bash","tool_input":{"command":["pkill","node"]}}`,
		`{"tool_name":"Bash","tool_input":{"command":null}}`,
		`{"tool_name":null,"tool_input":null}`,
		`{"tool_name":"Bash","tool_input":"ls"}`,
		`{"tool_name":5}`,
		`{"tool_n\u0061me":"Bash","tool_input":{"command":"ls"}}`,
		`{"tool_name":"Bash","tool_input":{"command":"\u00e9\ud83d\ude00"}}`,
		"{\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"a\xffb\"}}",
		`{"tool_name":"Bash","tool_input":{"nested":{"command":"x"},"command":"ls"}} `,
		`{ "tool_name" : "Bash" , "tool_input" : { "command" : "ls" } }`,
		`{}`,
		`{"a":[1,{"b":"}"}],"tool_name":"Bash","tool_input":{"command":"ls"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		trimmed := bytes.TrimSpace(data)
		if len(trimmed) == 0 || trimmed[0] != '{' {
			return
		}
		fast, ok := parseHookFast(trimmed)
		if !ok {
			return
		}
		slow, err := parseHookJSON(trimmed)
		if err != nil {
			t.Fatalf("the fast path read %q as %+v; encoding/json fails: %v", data, fast, err)
		}
		if fast != slow {
			t.Fatalf("the fast path read %q as %+v; encoding/json as %+v", data, fast, slow)
		}
	})
}
