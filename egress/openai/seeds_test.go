package openai

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aisan-dev/aisan/egress"
	"github.com/aisan-dev/aisan/egress/egresstest"
)

// seeds are every body the real client sent in the test suite: the
// fixtures beside this file (egress/backend's real-client tests) and the
// bodies the strict end-to-end tests captured (egress/policy/testdata/api).
func seeds(t testing.TB, prefix, api string) map[string][]byte {
	out := fixtures(t, prefix)
	files, _ := filepath.Glob("../policy/testdata/" + api + "/*.json")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[f] = b
	}
	return out
}

func TestCapturedBodiesPass(t *testing.T) {
	for _, c := range []struct {
		prefix, api string
		check       func(egress.Route, map[string]any) error
	}{{"codex", "responses", CheckResponses}, {"opencode", "chat", CheckChat}} {
		n := 0
		for name, b := range seeds(t, c.prefix, c.api) {
			n++
			if err := run(c.check, string(b)); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
		t.Logf("%s: %d captured bodies pass", c.api, n)
	}
}

func FuzzCheckResponses(f *testing.F) {
	for _, b := range seeds(f, "codex", "responses") {
		f.Add(egresstest.TrimmedBody(f, b))
	}
	for _, tc := range responsesCases {
		f.Add([]byte(tc.body))
	}
	f.Fuzz(egresstest.PolicyFuzz(func(obj map[string]any) error { return CheckResponses(egress.Route{}, obj) }, responsesDanger))
}

func FuzzCheckChat(f *testing.F) {
	for _, b := range seeds(f, "opencode", "chat") {
		f.Add(egresstest.TrimmedBody(f, b))
	}
	for _, tc := range chatCases {
		f.Add([]byte(tc.body))
	}
	f.Fuzz(egresstest.PolicyFuzz(func(obj map[string]any) error { return CheckChat(egress.Route{}, obj) }, chatDanger))
}

// free are the fields whose values are the client's own data.
var free = map[string]bool{"parameters": true, "schema": true, "arguments": true, "annotations": true, "logprobs": true, "client_metadata": true}

// responsesDanger finds what must never pass a Responses body, sharing
// nothing with the table.
func responsesDanger(v any, key string) string {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range []string{"previous_response_id", "conversation", "background", "prompt", "file_id", "file_url", "server_url", "container"} {
			if _, ok := x[k]; ok {
				return "the field " + k
			}
		}
		if s, ok := x["store"]; ok && s != false {
			return "store"
		}
		if e, ok := x["execution"]; ok && e != "client" {
			return "a tool search the provider runs"
		}
		if u, ok := x["image_url"].(string); ok && !strings.HasPrefix(u, "data:") {
			return "an image by URL"
		}
		if ty, _ := x["type"].(string); ty != "" {
			for _, p := range []string{"web_search", "file_search", "code_interpreter", "computer", "image_generation", "mcp", "container", "item_reference", "input_file"} {
				if strings.HasPrefix(ty, p) {
					return "a " + ty
				}
			}
			if ty == "namespace" || ty == "additional_tools" {
				if _, ok := x["tools"]; !ok {
					return "a " + ty + " without tools"
				}
			}
		}
		if inc, ok := x["include"].([]any); ok && key == "" {
			for _, i := range inc {
				if i != "reasoning.encrypted_content" {
					return "include " + i.(string)
				}
			}
		}
		for k, e := range x {
			if free[k] {
				continue
			}
			if why := responsesDanger(e, k); why != "" {
				return why
			}
		}
	case []any:
		for _, e := range x {
			if why := responsesDanger(e, key); why != "" {
				return why
			}
		}
	}
	return ""
}

// chatDanger is the same for a chat-completions body.
func chatDanger(v any, key string) string {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range []string{"web_search_options", "plugins", "search_parameters", "enable_search", "web_search", "search", "file_id"} {
			if _, ok := x[k]; ok {
				return "the field " + k
			}
		}
		if s, ok := x["store"]; ok && s != false {
			return "store"
		}
		if key == "image_url" || key == "file" {
			for _, k := range []string{"url", "file_data"} {
				if u, ok := x[k].(string); ok && !strings.HasPrefix(u, "data:") {
					return "a " + key + " by URL"
				}
			}
		}
		if ty, _ := x["type"].(string); key == "tools" && ty != "function" {
			return "a " + ty + " tool"
		}
		for k, e := range x {
			if free[k] {
				continue
			}
			if why := chatDanger(e, k); why != "" {
				return why
			}
		}
	case []any:
		for _, e := range x {
			if why := chatDanger(e, key); why != "" {
				return why
			}
		}
	}
	return ""
}
