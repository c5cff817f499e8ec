package openai

import (
	"testing"

	"github.com/aisan-dev/aisan/egress/audit"
)

type usageCase struct {
	name string
	doc  string
	want audit.Tokens
	ok   bool
}

// responsesUsageCases and chatUsageCases are documents as the two APIs send them;
// they seed the fuzz targets.
var responsesUsageCases = []usageCase{
	{"json answer", `{"id":"resp_1","object":"response","status":"completed","output":[],"usage":{"input_tokens":1200,"input_tokens_details":{"cached_tokens":1000},"output_tokens":40,"output_tokens_details":{"reasoning_tokens":30},"total_tokens":1240}}`,
		audit.Tokens{Input: 200, Output: 40, CacheRead: 1000}, true},
	{"response.created", `{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","status":"in_progress","usage":null}}`, audit.Tokens{}, false},
	{"output delta", `{"type":"response.output_text.delta","item_id":"msg_1","delta":"\"usage\":{}"}`, audit.Tokens{}, false},
	{"response.completed", `{"type":"response.completed","sequence_number":4,"response":{"id":"resp_1","status":"completed","output":[{"type":"message"}],"usage":{"input_tokens":10,"input_tokens_details":{"cached_tokens":0},"output_tokens":5,"total_tokens":15}}}`,
		audit.Tokens{Input: 10, Output: 5}, true},
	{"response.incomplete", `{"type":"response.incomplete","response":{"status":"incomplete","usage":{"input_tokens":10,"output_tokens":64}}}`,
		audit.Tokens{Input: 10, Output: 64}, true},
	{"cached above input", `{"usage":{"input_tokens":10,"input_tokens_details":{"cached_tokens":50},"output_tokens":1}}`,
		audit.Tokens{Input: 0, Output: 1, CacheRead: 10}, true},
}

var chatUsageCases = []usageCase{
	{"json answer", `{"id":"chatcmpl-1","object":"chat.completion","choices":[],"usage":{"prompt_tokens":100,"completion_tokens":20,"total_tokens":120,"prompt_tokens_details":{"cached_tokens":60}}}`,
		audit.Tokens{Input: 40, Output: 20, CacheRead: 60}, true},
	{"content chunk", `{"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"hi"}}]}`, audit.Tokens{}, false},
	{"chunk with null usage", `{"id":"chatcmpl-1","choices":[{"index":0,"delta":{}}],"usage":null}`, audit.Tokens{}, false},
	{"usage chunk", `{"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`,
		audit.Tokens{Input: 10, Output: 5}, true},
	{"done", `[DONE]`, audit.Tokens{}, false},
}

func TestUsageParsers(t *testing.T) {
	for _, c := range responsesUsageCases {
		if got, ok := ResponsesUsage([]byte(c.doc)); got != c.want || ok != c.ok {
			t.Errorf("responses %s: got %+v %v, want %+v %v", c.name, got, ok, c.want, c.ok)
		}
	}
	for _, c := range chatUsageCases {
		if got, ok := ChatUsage([]byte(c.doc)); got != c.want || ok != c.ok {
			t.Errorf("chat %s: got %+v %v, want %+v %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

func fuzzUsage(f *testing.F, cases []usageCase, parse func([]byte) (audit.Tokens, bool)) {
	for _, c := range cases {
		f.Add([]byte(c.doc))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		a, ok := parse(doc)
		if b, ok2 := parse(doc); a != b || ok != ok2 {
			t.Fatalf("two reads differ: %+v %v, %+v %v", a, ok, b, ok2)
		}
		if a.Input < 0 || a.Output < 0 || a.CacheRead < 0 || a.CacheCreation < 0 {
			t.Fatalf("negative count %+v", a)
		}
	})
}

// FuzzResponsesUsage and FuzzChatUsage: any document reads without a
// panic, never to a negative count, and the same each time.
func FuzzResponsesUsage(f *testing.F) { fuzzUsage(f, responsesUsageCases, ResponsesUsage) }

func FuzzChatUsage(f *testing.F) { fuzzUsage(f, chatUsageCases, ChatUsage) }
