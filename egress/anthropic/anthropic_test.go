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
		if err == nil || err.Error() != `tools[0].type: a tool type "web_search_20250305" is refused: `+whyServer {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// checkCases are bodies and the refusal each gets ("" passes): every
// refused shape the issues and the predecessor named, each at the depth
// where it was found to hide.
var checkCases = []struct {
	body, want string
}{
	{`{"model":"m","messages":[]}`, ""},
	{`{"tools":[{"name":"Bash","input_schema":{}}]}`, ""},
	{`{"tools":[{"type":"custom","name":"x"}]}`, ""},
	{`{"tools":null}`, "tools: must be a list of tool, not null"},
	{`{"tools":[{"type":"web_fetch_20250910","name":"f"}]}`, `tools[0].type: a tool type "web_fetch_20250910" is refused: it runs on Anthropic's servers`},
	{`{"tools":[{"type":"code_execution_20250825"}]}`, "it runs on Anthropic's servers"},
	{`{"tools":[{"type":"mcp_toolset","mcp_server_name":"x"}]}`, "connect to MCP servers"},
	{`{"tools":[{"type":"tool_search_tool_regex_20251119"}]}`, "it runs on Anthropic's servers"},
	{`{"tools":[{"type":"bash_20250124","name":"bash"}]}`, `tools[0].type: "bash_20250124" is not a tool type aisan knows here`},
	{`{"tools":[{"type":"brand_new_tool_2027"}]}`, `"brand_new_tool_2027" is not a tool type aisan knows here`},
	{`{"tools":[{"type":null}]}`, "tools[0].type: the type of a tool must be a string, not null"},
	{`{"tools":[{"type":7}]}`, "must be a string, not a number"},
	{`{"tools":{"type":"custom"}}`, "tools: must be a list of tool, not an object"},
	{`{"tools":["x"]}`, "tools[0]: must be a tool (an object), not a string"},
	{`{"tools":[{"name":"x","allowed_callers":["code_execution_20250825"]}]}`, `tools[0].allowed_callers: not a field aisan knows in a custom tool`},
	{`{"mcp_servers":[{"type":"url","url":"https://x"}]}`, `mcp_servers: this field is refused: it makes Anthropic's servers connect to MCP servers`},
	{`{"mcp_servers":null}`, `mcp_servers: this field is refused`},
	{`{"container":"cntr_1"}`, `container: this field is refused: it runs code in a container`},
	{`{"thread":{"type":"continue","previous_message_id":"m"}}`, `thread: this field is refused: it continues a conversation stored`},
	{`{"brand_new_field":1}`, `brand_new_field: not a field aisan knows in a body`},
	{`{"messages":"x"}`, "messages: must be a list of message, not a string"},
	{`{"messages":[1]}`, "messages[0]: must be a message (an object), not a number"},
	{`{"messages":[{"role":"user","content":"plain text"}]}`, ""},
	{`{"messages":[{"role":"tool","content":"x"}]}`, `messages[0].role: "tool" is not one of "user" | "assistant" | "system"`},
	{`{"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AA=="}}]}]}`, ""},
	{`{"messages":[{"role":"user","content":[{"type":"image","source":{"type":"url","url":"https://evil.example/x?leak=1"}}]}]}`, `messages[0].content[0].source.type: an image source type "url" is refused: Anthropic's servers would fetch the URL`},
	{`{"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AA==","url":"https://h"}}]}]}`, `messages[0].content[0].source.url: not a field aisan knows in a base64 image`},
	{`{"messages":[{"role":"user","content":[{"type":"document","source":{"type":"file","file_id":"f"}}]}]}`, "Files API"},
	{`{"messages":[{"role":"user","content":[{"type":"document","source":{"type":"url","url":"https://h/a.pdf"}}]}]}`, `messages[0].content[0].source.type: a document source type "url" is refused`},
	{`{"messages":[{"role":"user","content":[{"type":"document","source":{"type":"content","content":[{"type":"image","source":{"type":"url","url":"https://h"}}]}}]}]}`, `messages[0].content[0].source.content[0].source.type: an image source type "url" is refused`},
	{`{"messages":[{"role":"user","content":[{"type":"container_upload","file_id":"f"}]}]}`, `a content block type "container_upload" is refused`},
	{`{"messages":[{"role":"assistant","content":[{"type":"server_tool_use","id":"s","name":"web_search","input":{}}]}]}`, `a content block type "server_tool_use" is refused`},
	{`{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"image","source":{"type":"url","url":"https://h/x"}}]}]}]}`, `messages[0].content[0].content[0].source.type: an image source type "url" is refused`},
	{`{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"search_result","source":"https://h","title":"t","content":[{"type":"text","text":"x"}],"citations":{"enabled":true}}]}]}]}`, ""},
	{`{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"search_result","source":"s","title":"t","content":[{"type":"document","source":{"type":"url","url":"https://h"}}]}]}]}]}`, `content[0].content[0].content[0].source: not a field aisan knows in a text block`},
	{`{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"tool_reference","tool_name":"Grep"}]}]}]}`, ""},
	{`{"messages":[{"role":"system","content":[{"type":"tool_addition","tool":{"type":"tool_definition","definition":{"type":"web_search_20250305","name":"web_search"}}}]}]}`, `messages[0].content[0].tool.definition.type: a tool type "web_search_20250305" is refused`},
	{`{"messages":[{"role":"system","content":[{"type":"tool_addition","tool":{"type":"tool_definition","definition":{"name":"Lint","input_schema":{"type":"object"}}}}]}]}`, ""},
	{`{"messages":[{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"redacted_thinking","data":"d"},{"type":"tool_use","id":"i","name":"Bash","input":{"command":"ls"}}]}]}`, ""},
	{`{"system":[{"type":"text","text":"x"},{"type":"document","source":{"type":"url","url":"https://h"}}]}`, `system[1].type: "document" is not a system block type aisan knows here`},
	{`{"system":"x","metadata":{"user_id":"u","extra":1}}`, `metadata.extra: not a field aisan knows in a metadata`},
	{`{"messages":[{"role":"user","content":[{"type":"text","text":"x","cache_control":{"type":"ephemeral","ttl":"1h"}}]}]}`, ""},
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
		"X-Stainless-Unknown": {"not one the SDK sends"},
		"Host":                {"evil"},
	}
	h := rewrite(t, Subscription, spoof.Clone())
	if got := h.Values("Authorization"); !slices.Equal(got, []string{"Bearer real-secret"}) {
		t.Errorf("Authorization %q", got)
	}
	for _, k := range []string{"X-Api-Key", "Proxy-Authorization", "Cookie", "X-Forwarded-For", "Host", "X-Stainless-Unknown"} {
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

// TestCheckHeader: the anthropic-beta header may hold only the betas the
// Claude CLI knows, and the anthropic-version and browser-access headers
// only the values it sends, on any number of lines, in any case of the
// name.
func TestCheckHeader(t *testing.T) {
	for _, tc := range []struct {
		h    http.Header
		want string
	}{
		{http.Header{}, ""},
		{http.Header{"Anthropic-Beta": {strings.Join(Betas, ",")}}, ""},
		{http.Header{"Anthropic-Beta": {"claude-code-20250219,oauth-2025-04-20", "interleaved-thinking-2025-05-14"}}, ""},
		{http.Header{"Anthropic-Beta": {"claude-code-20250219, mcp-client-2025-04-04"}}, `the anthropic-beta header: "mcp-client-2025-04-04" is not a value aisan knows`},
		{http.Header{"Anthropic-Beta": {"claude-code-20250219"}, "anthropic-beta": {"skills-2025-10-02"}}, `the anthropic-beta header: "skills-2025-10-02" is not a value aisan knows`},
		{http.Header{"Anthropic-Beta": {"Claude-Code-20250219"}}, `the anthropic-beta header: "Claude-Code-20250219" is not a value aisan knows`},
		{http.Header{"Anthropic-Beta": {""}}, "the anthropic-beta header: an empty value is not one aisan knows"},
		{http.Header{"Anthropic-Version": {"2023-06-01"}, "Anthropic-Dangerous-Direct-Browser-Access": {"true"}}, ""},
		{http.Header{"Anthropic-Version": {"2099-01-01"}}, `the anthropic-version header: "2099-01-01" is not a value aisan knows`},
		{http.Header{"Anthropic-Version": {"2023-06-01"}, "anthropic-version": {"2023-01-01"}}, `the anthropic-version header: "2023-01-01" is not a value aisan knows`},
		{http.Header{"Anthropic-Version": {"2023-06-01, 2023-01-01"}}, `the anthropic-version header: "2023-01-01" is not a value aisan knows`},
		{http.Header{"Anthropic-Version": {""}}, "the anthropic-version header: an empty value is not one aisan knows"},
		{http.Header{"Anthropic-Dangerous-Direct-Browser-Access": {"yes"}}, `the anthropic-dangerous-direct-browser-access header: "yes" is not a value aisan knows`},
		// The stainless SDK descriptors are free-form metadata, unchecked.
		{http.Header{"X-Stainless-Runtime": {"anything, at all"}, "X-Stainless-Helper-Method": {"x"}}, ""},
	} {
		err := CheckHeader(Routes[0], egress.HeaderValues(tc.h))
		if tc.want == "" {
			if err != nil {
				t.Errorf("%v: refused: %v", tc.h, err)
			}
			continue
		}
		if err == nil || err.Error() != tc.want {
			t.Errorf("%v:\n got  %v\n want %s", tc.h, err, tc.want)
		}
	}
	if New(&url.URL{Scheme: "https", Host: "x"}, APIKey, cred.Static{}).CheckHeader == nil {
		t.Error("the backend checks no header")
	}
}
