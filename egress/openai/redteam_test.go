package openai_test

// Red-team probes of the Responses and chat-completions body policies:
// each body would make the provider act outside the box (fetch a URL,
// run a hosted tool, read stored state) and must be refused.

import (
	"testing"

	"github.com/aisan-dev/aisan/egress"
	"github.com/aisan-dev/aisan/egress/openai"
)

func TestRedTeamResponsesRefused(t *testing.T) {
	bodies := map[string]string{
		"no store":             `{"model":"gpt-5","input":"hi"}`,
		"store true":           `{"model":"gpt-5","store":true,"input":"hi"}`,
		"web search preview":   `{"model":"gpt-5","store":false,"tools":[{"type":"web_search_preview"}]}`,
		"mcp tool":             `{"model":"gpt-5","store":false,"tools":[{"type":"mcp","server_url":"https://x"}]}`,
		"nested namespace mcp": `{"model":"gpt-5","store":false,"tools":[{"type":"namespace","name":"n","tools":[{"type":"mcp"}]}]}`,
		"hosted shell":         `{"model":"gpt-5","store":false,"tools":[{"type":"shell","environment":{"type":"container_auto"}}]}`,
		"server tool search":   `{"model":"gpt-5","store":false,"tools":[{"type":"tool_search"}]}`,
		"url image":            `{"model":"gpt-5","store":false,"input":[{"role":"user","content":[{"type":"input_image","image_url":"https://x/a.png"}]}]}`,
		"url image in output":  `{"model":"gpt-5","store":false,"input":[{"type":"function_call_output","call_id":"c","output":[{"type":"input_image","image_url":"http://metadata.invalid/"}]}]}`,
		"input file":           `{"model":"gpt-5","store":false,"input":[{"role":"user","content":[{"type":"input_file","file_url":"https://x"}]}]}`,
		"item reference":       `{"model":"gpt-5","store":false,"input":[{"type":"item_reference","id":"msg_1"}]}`,
		"bare id item":         `{"model":"gpt-5","store":false,"input":[{"id":"msg_1"}]}`,
		"prev response":        `{"model":"gpt-5","store":false,"previous_response_id":"resp_1"}`,
		"online model":         `{"model":"gpt-5:ONLINE","store":false}`,
		"include file search":  `{"model":"gpt-5","store":false,"include":["file_search_call.results"]}`,
		"metadata":             `{"model":"gpt-5","store":false,"metadata":{"a":"b"}}`,
	}
	for name, b := range bodies {
		obj, err := egress.ParseObject([]byte(b))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := openai.CheckResponses(openai.ResponsesRoutes[0], obj); err == nil {
			t.Errorf("%s: passed", name)
		}
	}
}

func TestRedTeamChatRefused(t *testing.T) {
	models := []string{"m"}
	bodies := map[string]string{
		"other model":   `{"model":"sonar","messages":[]}`,
		"plugins":       `{"model":"m","messages":[],"plugins":[{"id":"web"}]}`,
		"models list":   `{"model":"m","models":["perplexity/sonar"],"messages":[]}`,
		"url image":     `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://x"}}]}]}`,
		"file id":       `{"model":"m","messages":[{"role":"user","content":[{"type":"file","file":{"file_id":"f"}}]}]}`,
		"builtin tool":  `{"model":"m","messages":[],"tools":[{"type":"builtin_function","function":{"name":"$web_search"}}]}`,
		"stream no use": `{"model":"m","messages":[],"stream":true}`,
		"extra body":    `{"model":"m","messages":[],"extra_body":{"enable_search":true}}`,
	}
	for name, b := range bodies {
		obj, err := egress.ParseObject([]byte(b))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		err = openai.CheckChat(openai.ChatRoutes[0], obj)
		if err == nil {
			err = openai.CheckModel(obj, models)
		}
		if err == nil {
			t.Errorf("%s: passed", name)
		}
	}
}
