package openai

import (
	"encoding/json"

	"github.com/aisan-dev/aisan/egress/audit"
)

// Both OpenAI APIs count the prompt's cached tokens inside its input
// count; the tokens read afresh are the difference.
func tokens(in, cached, out int64) audit.Tokens {
	in, cached, out = max(in, 0), max(cached, 0), max(out, 0)
	cached = min(cached, in)
	return audit.Tokens{Input: in - cached, Output: out, CacheRead: cached}
}

type responsesUsage struct {
	Input        int64 `json:"input_tokens"`
	Output       int64 `json:"output_tokens"`
	InputDetails struct {
		Cached int64 `json:"cached_tokens"`
	} `json:"input_tokens_details"`
}

// ResponsesUsage reads the tokens a Responses API call used (an
// egress.UsageFunc): from the usage of a JSON answer, or of the response
// a stream's last event carries (response.completed, or
// response.incomplete or response.failed). The events before carry a
// usage of null.
func ResponsesUsage(doc []byte) (audit.Tokens, bool) {
	var d struct {
		Usage    *responsesUsage `json:"usage"`
		Response *struct {
			Usage *responsesUsage `json:"usage"`
		} `json:"response"`
	}
	if json.Unmarshal(doc, &d) != nil {
		return audit.Tokens{}, false
	}
	u := d.Usage
	if d.Response != nil && d.Response.Usage != nil {
		u = d.Response.Usage
	}
	if u == nil {
		return audit.Tokens{}, false
	}
	return tokens(u.Input, u.InputDetails.Cached, u.Output), true
}

// ChatUsage reads the tokens a Chat Completions call used (an
// egress.UsageFunc): from the usage of a JSON answer, or of the chunk of
// a stream that carries one (sent when the client asks for it with
// stream_options.include_usage, as opencode does).
func ChatUsage(doc []byte) (audit.Tokens, bool) {
	var d struct {
		Usage *struct {
			Prompt        int64 `json:"prompt_tokens"`
			Completion    int64 `json:"completion_tokens"`
			PromptDetails *struct {
				Cached int64 `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
		} `json:"usage"`
	}
	if json.Unmarshal(doc, &d) != nil || d.Usage == nil {
		return audit.Tokens{}, false
	}
	var cached int64
	if d.Usage.PromptDetails != nil {
		cached = d.Usage.PromptDetails.Cached
	}
	return tokens(d.Usage.Prompt, cached, d.Usage.Completion), true
}

// ResponsesOutputCaps and ChatOutputCaps are the request fields that cap
// the tokens of an answer (Chat Completions' max_tokens is the older
// name of max_completion_tokens).
var (
	ResponsesOutputCaps = []string{"max_output_tokens"}
	ChatOutputCaps      = []string{"max_completion_tokens", "max_tokens"}
)
