package guard

import (
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
