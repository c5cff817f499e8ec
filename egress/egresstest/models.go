package egresstest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// The canned model servers below answer the way the real APIs stream, so
// the real clients accept them: a first turn asks for one shell tool call
// (when the request offers a shell tool and carries no tool result yet),
// the next turn answers with Answer (and, after a tool ran, the tool's
// output echoed back, so a test sees that the tool really ran in the box).

// ToolMarker is what the requested tool call prints.
const ToolMarker = "aisan-tool-ran"

// Answer is the canned final text.
const Answer = "aisan-egress-ok"

func sse(w http.ResponseWriter, events ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	for _, e := range events {
		io.WriteString(w, e+"\n\n")
		if f != nil {
			f.Flush()
		}
	}
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// Anthropic is a Messages API stand-in: POST /v1/messages (streaming) and
// /v1/messages/count_tokens.
func Anthropic() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.HasPrefix(r.URL.Path, "/v1/messages/count_tokens") {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"input_tokens":12}`)
			return
		}
		var req struct {
			Model string `json:"model"`
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		}
		json.Unmarshal(body, &req)
		hasBash := false
		for _, t := range req.Tools {
			hasBash = hasBash || t.Name == "Bash"
		}
		s := string(body)
		start := func(id string) string {
			return "event: message_start\ndata: " + js(map[string]any{"type": "message_start", "message": map[string]any{
				"id": id, "type": "message", "role": "assistant", "model": req.Model, "content": []any{},
				"stop_reason": nil, "stop_sequence": nil, "usage": map[string]int{"input_tokens": 10, "output_tokens": 1}}})
		}
		end := func(reason string) []string {
			return []string{
				"event: message_delta\ndata: " + js(map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": reason, "stop_sequence": nil}, "usage": map[string]int{"output_tokens": 5}}),
				"event: message_stop\ndata: " + js(map[string]any{"type": "message_stop"}),
			}
		}
		if hasBash && !strings.Contains(s, "tool_result") {
			input := js(map[string]string{"command": "echo " + ToolMarker, "description": "Print a marker"})
			sse(w, append([]string{
				start("msg_tool"),
				"event: content_block_start\ndata: " + js(map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "tool_use", "id": "toolu_01", "name": "Bash", "input": map[string]any{}}}),
				"event: content_block_delta\ndata: " + js(map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "input_json_delta", "partial_json": input}}),
				"event: content_block_stop\ndata: " + js(map[string]any{"type": "content_block_stop", "index": 0}),
			}, end("tool_use")...)...)
			return
		}
		text := Answer
		if strings.Contains(s, ToolMarker) && strings.Contains(s, "tool_result") {
			text = Answer + " after " + ToolMarker
		}
		sse(w, append([]string{
			start("msg_text"),
			"event: content_block_start\ndata: " + js(map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}}),
			"event: content_block_delta\ndata: " + js(map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": text}}),
			"event: content_block_stop\ndata: " + js(map[string]any{"type": "content_block_stop", "index": 0}),
		}, end("end_turn")...)...)
	})
}

// Responses is a Responses API stand-in (POST …/responses, streaming), as
// codex reads it; it always answers with text.
func Responses() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		msg := map[string]any{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": Answer, "annotations": []any{}}}}
		resp := func(status string, out []any) map[string]any {
			return map[string]any{"id": "resp_1", "object": "response", "status": status, "output": out,
				"usage": map[string]any{"input_tokens": 10, "input_tokens_details": map[string]int{"cached_tokens": 0},
					"output_tokens": 5, "output_tokens_details": map[string]int{"reasoning_tokens": 0}, "total_tokens": 15}}
		}
		ev := func(v map[string]any) string { return fmt.Sprintf("event: %s\ndata: %s", v["type"], js(v)) }
		sse(w,
			ev(map[string]any{"type": "response.created", "sequence_number": 0, "response": resp("in_progress", []any{})}),
			ev(map[string]any{"type": "response.output_item.added", "sequence_number": 1, "output_index": 0, "item": map[string]any{"type": "message", "id": "msg_1", "role": "assistant", "status": "in_progress", "content": []any{}}}),
			ev(map[string]any{"type": "response.output_text.delta", "sequence_number": 2, "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": Answer}),
			ev(map[string]any{"type": "response.output_item.done", "sequence_number": 3, "output_index": 0, "item": msg}),
			ev(map[string]any{"type": "response.completed", "sequence_number": 4, "response": resp("completed", []any{msg})}),
		)
	})
}

// Chat is a chat-completions stand-in (POST …/chat/completions, streaming),
// as opencode reads it; it always answers with text.
func Chat() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		chunk := func(delta map[string]any, finish any, usage any) string {
			c := map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1700000000, "model": "m",
				"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
			if usage != nil {
				c["usage"] = usage
			}
			return "data: " + js(c)
		}
		sse(w,
			chunk(map[string]any{"role": "assistant", "content": ""}, nil, nil),
			chunk(map[string]any{"content": Answer}, nil, nil),
			chunk(map[string]any{}, "stop", map[string]int{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}),
			"data: [DONE]",
		)
	})
}
