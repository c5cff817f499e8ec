package anthropic

import (
	"testing"

	"github.com/aisan-dev/aisan/egress/audit"
)

// usageCases are documents as the Messages API sends them, with what
// each counts; they seed FuzzUsage.
var usageCases = []struct {
	name string
	doc  string
	want audit.Tokens
	ok   bool
}{
	{"json answer", `{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"hi"}],"usage":{"input_tokens":12,"cache_creation_input_tokens":100,"cache_read_input_tokens":2000,"output_tokens":7,"service_tier":"standard"}}`,
		audit.Tokens{Input: 12, Output: 7, CacheRead: 2000, CacheCreation: 100}, true},
	{"message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"m","usage":{"input_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":30,"output_tokens":1,"cache_creation":{"ephemeral_5m_input_tokens":0}}}}`,
		audit.Tokens{Input: 10, Output: 1, CacheRead: 30}, true},
	{"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":15}}`,
		audit.Tokens{Output: 15}, true},
	{"message_delta with running input", `{"type":"message_delta","delta":{},"usage":{"input_tokens":10,"cache_read_input_tokens":30,"output_tokens":15}}`,
		audit.Tokens{Input: 10, Output: 15, CacheRead: 30}, true},
	{"count_tokens answer", `{"input_tokens":12}`, audit.Tokens{}, false},
	{"text delta quoting usage", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"the \"usage\": field"}}`, audit.Tokens{}, false},
	{"null usage", `{"type":"message_delta","usage":null}`, audit.Tokens{}, false},
	{"negative counts", `{"type":"message","usage":{"input_tokens":-5,"output_tokens":3}}`, audit.Tokens{Output: 3}, true},
	{"not json", `usage`, audit.Tokens{}, false},
	{"fractional count", `{"usage":{"input_tokens":1.5}}`, audit.Tokens{}, false},
}

func TestUsage(t *testing.T) {
	for _, c := range usageCases {
		got, ok := Usage([]byte(c.doc))
		if got != c.want || ok != c.ok {
			t.Errorf("%s: got %+v %v, want %+v %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

// FuzzUsage: any document reads without a panic, never to a negative
// count, and the same each time.
func FuzzUsage(f *testing.F) {
	for _, c := range usageCases {
		f.Add([]byte(c.doc))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		a, ok := Usage(doc)
		b, ok2 := Usage(doc)
		if a != b || ok != ok2 {
			t.Fatalf("two reads differ: %+v %v, %+v %v", a, ok, b, ok2)
		}
		if a.Input < 0 || a.Output < 0 || a.CacheRead < 0 || a.CacheCreation < 0 {
			t.Fatalf("negative count %+v", a)
		}
		if !ok && a != (audit.Tokens{}) {
			t.Fatalf("counts without usage: %+v", a)
		}
	})
}
