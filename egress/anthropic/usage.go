package anthropic

import (
	"encoding/json"

	"github.com/aisan-dev/aisan/egress/audit"
)

// usage is the Messages API's usage object. input_tokens leaves out the
// prompt tokens read from or written to the cache, which it counts apart.
type usage struct {
	Input         int64 `json:"input_tokens"`
	Output        int64 `json:"output_tokens"`
	CacheRead     int64 `json:"cache_read_input_tokens"`
	CacheCreation int64 `json:"cache_creation_input_tokens"`
}

// Usage reads the tokens a Messages API call used (an egress.UsageFunc):
// from the usage of a JSON answer, of a stream's message_start (under
// "message") and of its message_delta events, whose counts are running
// totals. A count_tokens answer has no usage, and counts nothing.
func Usage(doc []byte) (audit.Tokens, bool) {
	var d struct {
		Type    string `json:"type"`
		Usage   *usage `json:"usage"`
		Message *struct {
			Usage *usage `json:"usage"`
		} `json:"message"`
	}
	if json.Unmarshal(doc, &d) != nil {
		return audit.Tokens{}, false
	}
	u := d.Usage
	if d.Type == "message_start" && d.Message != nil {
		u = d.Message.Usage
	}
	if u == nil {
		return audit.Tokens{}, false
	}
	return audit.Tokens{Input: max(u.Input, 0), Output: max(u.Output, 0), CacheRead: max(u.CacheRead, 0), CacheCreation: max(u.CacheCreation, 0)}, true
}

// OutputCaps is the Messages API's cap on the tokens of an answer.
var OutputCaps = []string{"max_tokens"}
