package anthropic

import (
	"os"
	"testing"

	"github.com/aisan-dev/aisan/egress"
)

// BenchmarkCheck is the body policy on a genuine Claude request (about
// 50 KB: its system prompt, tools and a tool turn), parsed once.
func BenchmarkCheck(b *testing.B) {
	raw, err := os.ReadFile("testdata/claude-p-2.json")
	if err != nil {
		b.Fatal(err)
	}
	obj, err := egress.ParseObject(raw)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if err := Check(Routes[0], obj); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckGenuine is what a request pays in all for a genuine
// Claude TUI request: strict parsing and the policy.
func BenchmarkCheckGenuine(b *testing.B) {
	body, err := os.ReadFile("testdata/claude-tui-2.json")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		obj, err := egress.ParseObject(body)
		if err != nil {
			b.Fatal(err)
		}
		if err := Check(Routes[0], obj); err != nil {
			b.Fatal(err)
		}
	}
}
