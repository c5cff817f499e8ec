package anthropic

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aisan-dev/aisan/egress"
	"github.com/aisan-dev/aisan/egress/egresstest"
)

// seeds are every body the real Claude CLI sent in the test suite: the
// fixtures beside this file (egress/backend's real-client tests) and the
// bodies the strict end-to-end tests captured (egress/policy/testdata).
func seeds(t testing.TB) map[string][]byte {
	out := fixtures(t)
	for _, pat := range []string{"../policy/testdata/messages/*.json", "../policy/testdata/count_tokens/*.json"} {
		files, _ := filepath.Glob(pat)
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			out[f] = b
		}
	}
	return out
}

func TestCapturedBodiesPass(t *testing.T) {
	vertex, _ := filepath.Glob("../policy/testdata/vertex/*.json")
	for _, f := range vertex {
		b, _ := os.ReadFile(f)
		obj, err := egress.ParseObject(b)
		if err == nil {
			err = VertexPolicy().Check(obj)
		}
		if err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	n := len(vertex)
	for name, b := range seeds(t) {
		n++
		if err := check(string(b)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		obj, _ := egress.ParseObject(b)
		obj["anthropic_version"] = "vertex-2023-10-16"
		if err := VertexPolicy().Check(obj); err != nil {
			t.Errorf("%s on Vertex: %v", name, err)
		}
	}
	t.Logf("%d captured bodies pass", n)
}

// FuzzCheck: whatever the policy passes holds nothing an independent
// look finds dangerous (a url or file source, a provider-run tool or
// block, a connector, a container, a stored thread) outside the free
// data positions; and the check is the same on every run.
func FuzzCheck(f *testing.F) {
	// Every captured body with its long lists cut to two elements (whole,
	// they are 50 KB each, which slows mutation to a crawl), and the table.
	for _, b := range seeds(f) {
		f.Add(egresstest.TrimmedBody(f, b))
	}
	for _, tc := range checkCases {
		f.Add([]byte(tc.body))
	}
	f.Fuzz(egresstest.PolicyFuzz(func(obj map[string]any) error { return Check(Routes[0], obj) }, danger))
}

// free are the fields whose values are the client's own data (a tool's
// input and schema, a classifier's context), which nothing interprets as
// a request of the provider.
var free = map[string]bool{"input": true, "input_schema": true, "schema": true, "classifier_context": true, "input_examples": true}

// danger finds what must never pass, by a walk that shares nothing with
// the tables.
func danger(v any, key string) string {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range []string{"mcp_servers", "container", "thread", "file_id", "url"} {
			if _, ok := x[k]; ok {
				return "the field " + k
			}
		}
		if ty, _ := x["type"].(string); ty != "" {
			if key == "source" && (ty == "url" || ty == "file") {
				return "a " + ty + " source"
			}
			for _, p := range []string{"server_tool_use", "mcp_", "container_upload", "web_search", "web_fetch", "code_execution", "tool_search_tool", "bash_code", "text_editor_code"} {
				if strings.HasPrefix(ty, p) {
					return "a " + ty
				}
			}
		}
		for k, e := range x {
			if free[k] {
				continue
			}
			if why := danger(e, k); why != "" {
				return why
			}
		}
	case []any:
		for _, e := range x {
			if why := danger(e, key); why != "" {
				return why
			}
		}
	}
	return ""
}
