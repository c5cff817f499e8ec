package anthropic

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aisan-dev/aisan/egress"
	"github.com/aisan-dev/aisan/egress/cred"
)

// fixtures are the genuine request bodies captured from the installed
// Claude CLI (egress/backend's real-client test rewrites them).
func fixtures(t testing.TB) map[string][]byte {
	files, _ := filepath.Glob("testdata/claude-*.json")
	out := map[string][]byte{}
	for _, f := range files {
		if strings.HasSuffix(f, ".shapes.json") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[f] = b
	}
	if len(out) == 0 {
		t.Fatal("no captured Claude requests in testdata")
	}
	return out
}

func check(body string) error {
	obj, err := egress.ParseObject([]byte(body))
	if err != nil {
		return err
	}
	return Check(Routes[0], obj)
}

func TestGenuineRequestsPass(t *testing.T) {
	for name, b := range fixtures(t) {
		if err := check(string(b)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestWebSearchSideCallIsRefused(t *testing.T) {
	// The body Claude sends for its WebSearch tool: the genuine request
	// with the server tool as its only tool.
	for name, b := range fixtures(t) {
		var m map[string]any
		json.Unmarshal(b, &m)
		m["tools"] = []any{map[string]any{"type": "web_search_20250305", "name": "web_search", "max_uses": 8}}
		m["tool_choice"] = map[string]any{"type": "auto"}
		nb, _ := json.Marshal(m)
		err := check(string(nb))
		if err == nil || err.Error() != "aisan strict mode: tool type 'web_search_20250305' runs on the provider's servers; the box has no network" {
			t.Errorf("%s: %v", name, err)
		}
	}
}

var checkCases = []struct {
	body, want string // want "" means allowed
}{
	{`{"model":"m","messages":[]}`, ""},
	{`{"tools":[{"name":"Bash","input_schema":{}}]}`, ""},
	{`{"tools":[{"type":"custom","name":"x"}]}`, ""},
	{`{"tools":null}`, ""},
	{`{"tools":[{"type":"web_fetch_20250910","name":"f"}]}`, "tool type 'web_fetch_20250910' runs on the provider's servers"},
	{`{"tools":[{"type":"code_execution_20250825"}]}`, "runs on the provider's servers"},
	{`{"tools":[{"type":"mcp_toolset","mcp_server_name":"x"}]}`, "runs on the provider's servers"},
	{`{"tools":[{"type":"tool_search_tool_regex_20251119"}]}`, "runs on the provider's servers"},
	{`{"tools":[{"type":"bash_20250124","name":"bash"}]}`, "runs on the provider's servers"},
	{`{"tools":[{"type":"brand_new_tool_2027"}]}`, "tool type 'brand_new_tool_2027' is not a client-side tool aisan knows"},
	{`{"tools":[{"type":null}]}`, "not a string"},
	{`{"tools":[{"type":7}]}`, "not a string"},
	{`{"tools":{"type":"custom"}}`, "must be a list"},
	{`{"tools":["x"]}`, "not an object"},
	{`{"mcp_servers":[{"type":"url","url":"https://x"}]}`, "the field 'mcp_servers'"},
	{`{"mcp_servers":null}`, "the field 'mcp_servers'"},
	{`{"container":"cntr_1"}`, "the field 'container'"},
	{`{"messages":"x"}`, "'messages' must be a list"},
	{`{"messages":[1]}`, "item 0 of 'messages' is not an object"},
	{`{"messages":[{"role":"user","content":"plain text"}]}`, ""},
	{`{"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AA=="}}]}]}`, ""},
	{`{"messages":[{"role":"user","content":[{"type":"image","source":{"type":"url","url":"https://evil.example/x?leak=1"}}]}]}`, "fetch a URL on evil.example"},
	{`{"messages":[{"role":"user","content":[{"type":"document","source":{"type":"file","file_id":"f"}}]}]}`, "Files API"},
	{`{"messages":[{"role":"user","content":[{"type":"container_upload","file_id":"f"}]}]}`, "container_upload"},
	{`{"messages":[{"role":"assistant","content":[{"type":"server_tool_use","id":"s","name":"web_search","input":{}}]}]}`, "server_tool_use"},
	{`{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"image","source":{"type":"url","url":"https://h/x"}}]}]}]}`, "fetch a URL on h"},
	{`{"system":[{"type":"text","text":"x"},{"type":"document","source":{"type":"url","url":"https://h"}}]}`, "fetch a URL"},
}

func TestCheck(t *testing.T) {
	for _, tc := range checkCases {
		err := check(tc.body)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: refused: %v", tc.body, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.body, err, tc.want)
		}
	}
}

func rewrite(t *testing.T, kind Kind, hdr http.Header) http.Header {
	t.Helper()
	up, _ := url.Parse("https://api.anthropic.com/prefix")
	b := New(up, kind, cred.Static{S: cred.NewSecret("real-secret")})
	in := httptest.NewRequest("POST", "/v1/messages?beta=true", strings.NewReader(`{}`))
	in.Header = hdr
	pr := &httputil.ProxyRequest{In: in, Out: in.Clone(in.Context())}
	c, err := b.Credential(in.Context())
	if err != nil {
		t.Fatal(err)
	}
	b.Rewrite(pr, Routes[0], []byte(`{}`), c)
	if got := pr.Out.URL.String(); got != "https://api.anthropic.com/prefix/v1/messages?beta=true" {
		t.Errorf("upstream URL %s", got)
	}
	return pr.Out.Header
}

func TestRewriteStripsThenSets(t *testing.T) {
	spoof := http.Header{
		"Authorization":       {"Bearer box", "Bearer box2"},
		"X-Api-Key":           {"box"},
		"Proxy-Authorization": {"Basic box"},
		"Cookie":              {"s=box"},
		"X-Forwarded-For":     {"127.0.0.9"}, // a header value only; nothing is sent to it
		"Anthropic-Beta":      {"claude-code-20250219"},
		"Anthropic-Version":   {"2023-06-01"},
		"X-Stainless-Os":      {"Linux"},
		"Host":                {"evil"},
	}
	h := rewrite(t, Subscription, spoof.Clone())
	if got := h.Values("Authorization"); !slices.Equal(got, []string{"Bearer real-secret"}) {
		t.Errorf("Authorization %q", got)
	}
	for _, k := range []string{"X-Api-Key", "Proxy-Authorization", "Cookie", "X-Forwarded-For", "Host"} {
		if len(h.Values(k)) != 0 {
			t.Errorf("%s survived: %q", k, h.Values(k))
		}
	}
	if got := strings.Join(h.Values("Anthropic-Beta"), ","); got != "claude-code-20250219,oauth-2025-04-20" {
		t.Errorf("betas %q", got)
	}
	if h.Get("X-Stainless-Os") != "Linux" || h.Get("Anthropic-Version") != "2023-06-01" {
		t.Errorf("identity headers dropped: %v", h)
	}

	withBeta := http.Header{"Anthropic-Beta": {"claude-code-20250219,oauth-2025-04-20"}}
	if got := rewrite(t, Subscription, withBeta).Values("Anthropic-Beta"); len(got) != 1 {
		t.Errorf("oauth beta duplicated: %q", got)
	}

	h = rewrite(t, APIKey, spoof.Clone())
	if got := h.Values("X-Api-Key"); !slices.Equal(got, []string{"real-secret"}) || len(h.Values("Authorization")) != 0 {
		t.Errorf("API key mode: %v", h)
	}
	if strings.Contains(strings.Join(h.Values("Anthropic-Beta"), ","), "oauth") {
		t.Error("API key mode added the OAuth beta")
	}
}

func TestErrorBody(t *testing.T) {
	var v struct {
		Type  string
		Error struct{ Type, Message string }
	}
	json.Unmarshal(ErrorBody(403, egress.KindPolicy, "m"), &v)
	if v.Type != "error" || v.Error.Type != "permission_error" || v.Error.Message != "m" {
		t.Errorf("%+v", v)
	}
	json.Unmarshal(ErrorBody(429, egress.KindRate, "m"), &v)
	if v.Error.Type != "rate_limit_error" {
		t.Errorf("%+v", v)
	}
}

func TestBoxEnv(t *testing.T) {
	env := BoxEnv("http://127.0.0.1:8713", "", Subscription, "max")
	for _, want := range []string{"ANTHROPIC_BASE_URL=http://127.0.0.1:8713", "CLAUDE_CODE_OAUTH_TOKEN=" + Placeholder, "CLAUDE_CODE_SUBSCRIPTION_TYPE=max", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL=1"} {
		if !slices.Contains(env, want) {
			t.Errorf("missing %s in %q", want, env)
		}
	}
	env = BoxEnv("http://127.0.0.1:9", "tok", APIKey, "max")
	if !slices.Contains(env, "ANTHROPIC_API_KEY=tok") || slices.ContainsFunc(env, func(e string) bool {
		return strings.HasPrefix(e, "CLAUDE_CODE_OAUTH_TOKEN=") || strings.HasPrefix(e, "CLAUDE_CODE_SUBSCRIPTION_TYPE=")
	}) {
		t.Errorf("API key env %q", env)
	}
	seed := APIKeySeed(Placeholder)
	b, _ := json.Marshal(seed)
	if want := `{"customApiKeyResponses":{"approved":["` + Placeholder[len(Placeholder)-20:] + `"],"rejected":[]}}`; string(b) != want {
		t.Errorf("seed %s", b)
	}
}

func FuzzCheck(f *testing.F) {
	// The table, not the captured bodies: those are 50 KB each, which
	// slows mutation to a crawl.
	for _, tc := range checkCases {
		f.Add([]byte(tc.body))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		obj, err := egress.ParseObject(b)
		if err != nil {
			return
		}
		err1 := Check(Routes[0], obj)
		if err2 := Check(Routes[0], obj); (err1 == nil) != (err2 == nil) {
			t.Fatal("not deterministic")
		}
		if err1 != nil {
			return
		}
		// Whatever passed has only client-side tools and no mcp_servers.
		if _, ok := obj["mcp_servers"]; ok {
			t.Fatal("mcp_servers passed")
		}
		tools, _ := obj["tools"].([]any)
		for _, tv := range tools {
			if ty, ok := tv.(map[string]any)["type"]; ok && ty != "custom" {
				t.Fatalf("tool type %v passed", ty)
			}
		}
	})
}

// BenchmarkCheckGenuine is the policy's cost on a real request (about
// 50 KB): parsing and checking happen on every model call.
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
