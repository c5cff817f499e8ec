package openai

import (
	"context"
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

func fixtures(t testing.TB, prefix string) map[string][]byte {
	files, _ := filepath.Glob("testdata/" + prefix + "*.json")
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
		t.Fatalf("no captured %s requests in testdata", prefix)
	}
	return out
}

func run(check func(egress.Route, map[string]any) error, body string) error {
	obj, err := egress.ParseObject([]byte(body))
	if err != nil {
		return err
	}
	return check(egress.Route{}, obj)
}

func TestGenuineRequestsPass(t *testing.T) {
	for name, b := range fixtures(t, "codex") {
		if err := run(CheckResponses, string(b)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	for name, b := range fixtures(t, "opencode") {
		if err := run(CheckChat, string(b)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

var responsesCases = []struct{ body, want string }{
	{`{"model":"m","input":"hi","stream":true,"store":false}`, ""},
	{`{"tools":[{"type":"function","name":"f"},{"type":"custom","name":"apply_patch"},{"type":"tool_search","execution":"client"}]}`, ""},
	{`{"tools":[{"type":"namespace","name":"n","tools":[{"type":"function","name":"f"}]}]}`, ""},
	{`{"tools":[{"type":"namespace","name":"n","tools":[{"type":"web_search"}]}]}`, "tool type 'web_search' runs on the provider's servers"},
	{`{"tools":[{"type":"web_search_preview"}]}`, "runs on the provider's servers"},
	{`{"tools":[{"type":"code_interpreter","container":{"type":"auto"}}]}`, "runs on the provider's servers"},
	{`{"tools":[{"type":"mcp","server_url":"https://x"}]}`, "runs on the provider's servers"},
	{`{"tools":[{"type":"image_generation"}]}`, "runs on the provider's servers"},
	{`{"tools":[{"type":"file_search"}]}`, "runs on the provider's servers"},
	{`{"tools":[{"type":"computer_use_preview"}]}`, "runs on the provider's servers"},
	{`{"tools":[{"type":"tool_search"}]}`, "must run in the client"},
	{`{"tools":[{"type":"tool_search","execution":"server"}]}`, "must run in the client"},
	{`{"tools":[{"type":"quantum_2027"}]}`, "not a client-side tool aisan knows"},
	{`{"tools":[{"name":"f"}]}`, "has no type"},
	{`{"tools":"x"}`, "must be a list"},
	{`{"store":true}`, "'store' must be false"},
	{`{"background":true}`, "background responses"},
	{`{"previous_response_id":"resp_1"}`, "stored on the provider's servers"},
	{`{"conversation":"conv_1"}`, "stored on the provider's servers"},
	{`{"input":[{"type":"item_reference","id":"x"}]}`, "item_reference"},
	{`{"input":[{"type":"mcp_approval_response","approve":true}]}`, "MCP"},
	{`{"input":[{"type":"additional_tools","id":"at_1","role":"developer","tools":[{"type":"web_search"}]}]}`, "runs on the provider's servers"},
	{`{"input":[{"type":"additional_tools","id":"at_1","role":"developer","tools":[{"type":"function","name":"f"}]}]}`, ""},
	{`{"input":[{"type":"message","role":"user","content":[{"type":"input_image","image_url":"data:image/png;base64,AA=="}]}]}`, ""},
	{`{"input":[{"type":"message","role":"user","content":[{"type":"input_image","image_url":"https://evil.example/p.png"}]}]}`, "image given by URL"},
	{`{"input":[{"type":"message","role":"user","content":[{"type":"input_file","file_id":"file_1"}]}]}`, "'file_id'"},
	{`{"input":[{"type":"message","role":"user","content":[{"type":"input_file","file_url":"https://x"}]}]}`, "'file_url'"},
	{`{"input":[{"type":"function_call_output","call_id":"c","output":[{"type":"input_image","image_url":"http://x"}]}]}`, "image given by URL"},
	{`{"input":[1]}`, "item 0 of 'input' is not an object"},
	{`{"input":7}`, "'input' must be a list"},
}

var chatCases = []struct{ body, want string }{
	{`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true}`, ""},
	{`{"tools":[{"type":"function","function":{"name":"f"}}]}`, ""},
	{`{"tools":[{"type":"web_search","web_search":{}}]}`, "runs on the provider's servers"},
	{`{"tools":[{"type":"retrieval"}]}`, "not a client-side tool"},
	{`{"tools":[{"function":{"name":"f"}}]}`, "has no type"},
	{`{"web_search_options":{}}`, "'web_search_options'"},
	{`{"plugins":[{"id":"web"}]}`, "'plugins'"},
	{`{"enable_search":true}`, "'enable_search'"},
	{`{"enable_search":false}`, ""},
	{`{"store":true}`, "'store' must be false"},
	{`{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://x/y.png"}}]}]}`, "image given by URL"},
	{`{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,AA=="}}]}]}`, ""},
	{`{"messages":[{"role":"user","content":[{"type":"file","file":{"file_id":"f"}}]}]}`, "'file_id'"},
	{`{"messages":"x"}`, "must be a list"},
}

func TestCheckResponses(t *testing.T) { table(t, CheckResponses, responsesCases) }

func TestCheckChat(t *testing.T) { table(t, CheckChat, chatCases) }

func table(t *testing.T, check func(egress.Route, map[string]any) error, cases []struct{ body, want string }) {
	t.Helper()
	for _, tc := range cases {
		err := run(check, tc.body)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: refused: %v", tc.body, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "aisan strict mode: ") {
			t.Errorf("%s: got %v, want %q", tc.body, err, tc.want)
		}
	}
}

func TestCodexRewrite(t *testing.T) {
	up, _ := url.Parse("https://chatgpt.com/backend-api/codex")
	b := NewCodex(up, nil)
	b.Credential = func(context.Context) (egress.Credential, error) {
		return egress.Credential{
			{Name: "Authorization", Value: cred.NewSecret("Bearer real")},
			{Name: "ChatGPT-Account-Id", Value: cred.NewSecret("acct")},
		}, nil
	}
	in := httptest.NewRequest("POST", "/responses", strings.NewReader(`{}`))
	in.Header = http.Header{
		"Authorization":      {"Bearer " + Placeholder},
		"Chatgpt-Account-Id": {"box-chosen"},
		"Originator":         {"codex_exec"},
		"Session-Id":         {"s"},
		"X-Codex-Window-Id":  {"w"},
		"Openai-Beta":        {"responses_websockets=2026-02-06"},
		"User-Agent":         {"codex_exec/0.171.0 (Debian 12.0.0; x86_64) xterm"},
	}
	pr := &httputil.ProxyRequest{In: in, Out: in.Clone(in.Context())}
	c, _ := b.Credential(in.Context())
	b.Rewrite(pr, ResponsesRoutes[0], []byte(`{}`), c)
	h := pr.Out.Header
	if pr.Out.URL.String() != "https://chatgpt.com/backend-api/codex/responses" {
		t.Errorf("URL %s", pr.Out.URL)
	}
	if !slices.Equal(h.Values("Authorization"), []string{"Bearer real"}) || !slices.Equal(h.Values("Chatgpt-Account-Id"), []string{"acct"}) {
		t.Errorf("credential headers %v", h)
	}
	if h.Get("Originator") != "codex_exec" || h.Get("Version") != "0.171.0" || h.Get("Session-Id") != "s" || h.Get("X-Codex-Window-Id") != "w" || h.Get("Openai-Beta") != "" {
		t.Errorf("forwarded headers %v", h)
	}
	delete(in.Header, "Originator")
	pr = &httputil.ProxyRequest{In: in, Out: in.Clone(in.Context())}
	b.Rewrite(pr, ResponsesRoutes[0], []byte(`{}`), c)
	if pr.Out.Header.Get("Originator") != "codex_cli_rs" {
		t.Error("no originator set")
	}
}

func TestErrorBody(t *testing.T) {
	var v struct {
		Error struct {
			Message, Type, Code string
			Param               *string
		}
	}
	if err := json.Unmarshal(ErrorBody(400, egress.KindPolicy, "m"), &v); err != nil || v.Error.Message != "m" || v.Error.Type != "invalid_request_error" {
		t.Errorf("%+v %v", v, err)
	}
}

func TestCodexConfig(t *testing.T) {
	args := CodexConfigArgs("http://127.0.0.1:8714")
	for _, want := range []string{
		`model_provider="aisan"`, `model_providers.aisan.base_url="http://127.0.0.1:8714"`,
		`model_providers.aisan.env_key="AISAN_CODEX_API_KEY"`, `model_providers.aisan.wire_api="responses"`,
		`model_providers.aisan.requires_openai_auth=false`, `features.plugins=false`, `analytics.enabled=false`,
	} {
		if i := slices.Index(args, want); i < 1 || args[i-1] != "-c" {
			t.Errorf("missing -c %s in %q", want, args)
		}
	}
	const want = `model_provider = "aisan"
check_for_update_on_startup = false
web_search = "disabled"

[model_providers.aisan]
name = "aisan"
base_url = "http://127.0.0.1:8714"
env_key = "AISAN_CODEX_API_KEY"
wire_api = "responses"
requires_openai_auth = false
supports_websockets = false

[analytics]
enabled = false

[feedback]
enabled = false

[features]
plugins = false
apps = false
`
	if got := CodexConfigTOML("http://127.0.0.1:8714"); got != want {
		t.Errorf("TOML:\n%s", got)
	}
	if env := CodexBoxEnv("http://x", ""); !slices.Contains(env, CodexKeyVar+"="+Placeholder) {
		t.Errorf("env %q", env)
	}
}

func TestOpencodeEnv(t *testing.T) {
	env := Opencode{Provider: "zai-coding-plan", Model: "glm-5.3"}.BoxEnv("http://127.0.0.1:8715", "tok")
	var cfg, auth map[string]any
	for _, e := range env {
		k, v, _ := strings.Cut(e, "=")
		switch k {
		case "OPENCODE_CONFIG_CONTENT":
			json.Unmarshal([]byte(v), &cfg)
		case "OPENCODE_AUTH_CONTENT":
			json.Unmarshal([]byte(v), &auth)
		}
	}
	if cfg["model"] != "zai-coding-plan/glm-5.3" || cfg["provider"].(map[string]any)["zai-coding-plan"].(map[string]any)["options"].(map[string]any)["baseURL"] != "http://127.0.0.1:8715" {
		t.Errorf("config %v", cfg)
	}
	if auth["zai-coding-plan"].(map[string]any)["key"] != "tok" {
		t.Errorf("auth %v", auth)
	}
	for _, want := range []string{"OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_AUTOUPDATE=1", "npm_config_offline=true"} {
		if !slices.Contains(env, want) {
			t.Errorf("missing %s", want)
		}
	}
}

func FuzzCheckResponses(f *testing.F) {
	for _, tc := range responsesCases {
		f.Add([]byte(tc.body))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		obj, err := egress.ParseObject(b)
		if err != nil {
			return
		}
		if CheckResponses(egress.Route{}, obj) != nil {
			return
		}
		if v, ok := obj["store"]; ok && v != false && v != nil {
			t.Fatal("store passed")
		}
		tools, _ := obj["tools"].([]any)
		for _, tv := range tools {
			if ty, _ := tv.(map[string]any)["type"].(string); !responsesTools[ty] {
				t.Fatalf("tool type %q passed", ty)
			}
		}
	})
}

func FuzzCheckChat(f *testing.F) {
	for _, tc := range chatCases {
		f.Add([]byte(tc.body))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		obj, err := egress.ParseObject(b)
		if err != nil {
			return
		}
		if CheckChat(egress.Route{}, obj) != nil {
			return
		}
		tools, _ := obj["tools"].([]any)
		for _, tv := range tools {
			if ty, _ := tv.(map[string]any)["type"].(string); ty != "function" {
				t.Fatalf("tool type %q passed", ty)
			}
		}
	})
}

func TestChatRefusalsDoNotReadAsTransient(t *testing.T) {
	for in, want := range map[string]string{
		"tool type 'web_search_20250305' runs": "tool type 'web_search_2\u20600\u20602\u20605\u20600\u20603\u20600\u20605' runs",
		"limit of 33554432 bytes":              "limit of 3\u20603\u20605\u20605\u20604\u20604\u20603\u20602 bytes",
		"tool 12 has no type":                  "tool 12 has no type",
		"no digits":                            "no digits",
	} {
		if got := breakDigitRuns(in); got != want {
			t.Errorf("%q: %q", in, got)
		}
	}
	var v struct{ Error struct{ Message string } }
	json.Unmarshal(ChatErrorBody(403, egress.KindPolicy, "x 503 y"), &v)
	if strings.Contains(v.Error.Message, "503") || strings.ReplaceAll(v.Error.Message, "\u2060", "") != "x 503 y" {
		t.Errorf("%q", v.Error.Message)
	}
	json.Unmarshal(ChatErrorBody(429, egress.KindRate, "x 503 y"), &v)
	if v.Error.Message != "x 503 y" {
		t.Errorf("rate limit changed: %q", v.Error.Message)
	}
}
