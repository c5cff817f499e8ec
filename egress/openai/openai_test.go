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

// responsesCases are bodies and the refusal each gets ("" passes),
// among them the three the predecessor refused that an earlier policy
// passed (a tool container without tools, an include of a server-side
// tool's sources, an input item for a capability no client here uses)
// and the hosted shell container.
var responsesCases = []struct{ body, want string }{
	{`{"model":"m","input":"hi","stream":true,"store":false}`, ""},
	{`{"model":"m:online","input":"hi","store":false}`, `model: must not end with ":online"`},
	{`{"store":false,"tools":[{"type":"function","name":"f"},{"type":"custom","name":"apply_patch"},{"type":"tool_search","execution":"client"}]}`, ""},
	{`{"store":false,"tools":[{"type":"namespace","name":"n","tools":[{"type":"function","name":"f"}]}]}`, ""},
	{`{"store":false,"tools":[{"type":"namespace","name":"n","description":"d"}]}`, `tools[0]: a namespace tool needs the field "tools"`},
	{`{"store":false,"tools":[{"type":"namespace","name":"n","tools":[{"type":"web_search"}]}]}`, `tools[0].tools[0].type: a tool type "web_search" is refused: the provider runs it`},
	{`{"store":false,"tools":[{"type":"web_search_preview"}]}`, `a tool type "web_search_preview" is refused`},
	{`{"store":false,"tools":[{"type":"code_interpreter","container":{"type":"auto"}}]}`, `a tool type "code_interpreter" is refused`},
	{`{"store":false,"tools":[{"type":"mcp","server_url":"https://x"}]}`, `a tool type "mcp" is refused: it drives MCP servers`},
	{`{"store":false,"tools":[{"type":"image_generation"}]}`, "is refused"},
	{`{"store":false,"tools":[{"type":"file_search"}]}`, "is refused"},
	{`{"store":false,"tools":[{"type":"computer_use_preview"}]}`, "is refused"},
	{`{"store":false,"tools":[{"type":"shell"}]}`, ""},
	{`{"store":false,"tools":[{"type":"shell","environment":{"type":"local"}}]}`, ""},
	{`{"store":false,"tools":[{"type":"shell","environment":{"type":"container_auto"}}]}`, `tools[0].environment.type: a shell environment type "container_auto" is refused: a hosted container`},
	{`{"store":false,"tools":[{"type":"shell","environment":{"type":"container_reference","container_id":"c"}}]}`, "a hosted container"},
	{`{"store":false,"tools":[{"type":"tool_search"}]}`, `tools[0]: a tool search tool needs the field "execution"`},
	{`{"store":false,"tools":[{"type":"tool_search","execution":"server"}]}`, `tools[0].execution: must be client: a tool search the provider runs`},
	{`{"store":false,"tools":[{"type":"quantum_2027"}]}`, `tools[0].type: "quantum_2027" is not a tool type aisan knows here`},
	{`{"store":false,"tools":[{"name":"f"}]}`, `tools[0]: a tool needs a "type" field`},
	{`{"store":false,"tools":"x"}`, "tools: must be a list of tool, not a string"},
	{`{"store":true}`, "store: must be false: stored responses"},
	{`{"model":"m","input":"hi","stream":true}`, `a body needs the field "store"`},
	{`{"model":"m","input":"hi","store":null}`, "store: must be false"},
	{`{"store":false,"background":true}`, "background: this field is refused"},
	{`{"store":false,"previous_response_id":"resp_1"}`, "stored on the provider's servers"},
	{`{"store":false,"conversation":"conv_1"}`, "stored on the provider's servers"},
	{`{"store":false,"include":["reasoning.encrypted_content"]}`, ""},
	{`{"store":false,"include":["web_search_call.action.sources"]}`, `include[0]: "web_search_call.action.sources" is not one of "reasoning.encrypted_content"`},
	{`{"store":false,"include":["code_interpreter_call.outputs"]}`, "is not one of"},
	{`{"store":false,"input":[{"type":"item_reference","id":"x"}]}`, `input[0].type: an input item type "item_reference" is refused`},
	// A typed item that names only its id reads a stored item as
	// item_reference does: each must be whole.
	{`{"store":false,"input":[{"type":"function_call","id":"fc_1"}]}`, `input[0]: a function call needs the field "call_id"`},
	{`{"store":false,"input":[{"type":"function_call_output","id":"fco_1"}]}`, `input[0]: a function call output needs the field "call_id"`},
	{`{"store":false,"input":[{"type":"reasoning","id":"rs_1"}]}`, `input[0]: a reasoning item needs the field "summary"`},
	{`{"store":false,"input":[{"type":"custom_tool_call","id":"ctc_1","call_id":"c"}]}`, `input[0]: a custom tool call needs the field "name"`},
	{`{"store":false,"input":[{"type":"custom_tool_call_output","id":"x","call_id":"c"}]}`, `input[0]: a custom tool call output needs the field "output"`},
	{`{"store":false,"input":[{"type":"local_shell_call","id":"lsc_1"}]}`, `input[0]: a local shell call needs the field "action"`},
	{`{"store":false,"input":[{"type":"tool_search_call","id":"tsc_1"}]}`, `input[0]: a tool search call needs the field "arguments"`},
	{`{"store":false,"input":[{"type":"compaction","id":"cmp_1"}]}`, `input[0]: a compaction needs the field "encrypted_content"`},
	{`{"store":false,"input":[{"type":"function_call","id":"fc_1","call_id":"c","name":"shell","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"ok"},{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"e"},{"type":"compaction","encrypted_content":"e"}]}`, ""},
	{`{"store":false,"input":[{"type":"mcp_approval_response","approve":true}]}`, "drives MCP servers"},
	{`{"store":false,"input":[{"type":"computer_call_output","call_id":"c","output":{}}]}`, `an input item type "computer_call_output" is refused`},
	{`{"store":false,"input":[{"type":"local_shell_call_output","call_id":"c","output":"x"}]}`, `"local_shell_call_output" is not an input item type aisan knows here`},
	{`{"store":false,"input":[{"type":"additional_tools","id":"at_1","role":"developer","tools":[{"type":"web_search"}]}]}`, `input[0].tools[0].type: a tool type "web_search" is refused`},
	{`{"store":false,"input":[{"type":"additional_tools","id":"at_1","role":"developer","tools":[{"type":"function","name":"f"}]}]}`, ""},
	{`{"store":false,"input":[{"type":"additional_tools","id":"at_1","role":"developer"}]}`, `needs the field "tools"`},
	{`{"store":false,"input":[{"type":"tool_search_output","call_id":"c","execution":"client","tools":[{"type":"mcp","server_url":"https://x"}]}]}`, `input[0].tools[0].type: a tool type "mcp" is refused`},
	{`{"store":false,"input":[{"type":"message","role":"user","content":[{"type":"input_image","image_url":"data:image/png;base64,AA=="}]}]}`, ""},
	{`{"store":false,"input":[{"role":"user","content":"untagged"}]}`, ""},
	{`{"store":false,"input":[{"id":"msg_1"}]}`, `input[0]: an untagged message needs the field "role"`},
	{`{"store":false,"input":[{"id":"msg_1","role":"user","content":"x"}]}`, `input[0].id: not a field aisan knows in an untagged message`},
	{`{"store":false,"input":[{"type":"message","id":"msg_1"}]}`, `input[0]: a message needs the field "role"`},
	{`{"store":false,"input":[{"type":"message","role":"user","content":[{"type":"input_image","image_url":"https://evil.example/p.png"}]}]}`, `input[0].content[0].image_url: must start with "data:": only inline (data:) images`},
	{`{"store":false,"input":[{"type":"message","role":"user","content":[{"type":"input_image","file_id":"file_1"}]}]}`, `input[0].content[0].file_id: this field is refused: it names a file`},
	{`{"store":false,"input":[{"type":"message","role":"user","content":[{"type":"input_file","file_id":"file_1"}]}]}`, `input[0].content[0].type: a content part type "input_file" is refused`},
	{`{"store":false,"input":[{"type":"message","role":"user","content":[{"type":"input_file","file_url":"https://x"}]}]}`, "input_file"},
	{`{"store":false,"input":[{"type":"function_call_output","call_id":"c","output":[{"type":"input_image","image_url":"http://x"}]}]}`, `input[0].output[0].image_url: must start with "data:"`},
	{`{"store":false,"input":[{"type":"web_search_call","action":{"type":"open_page","url":"https://x"}}]}`, `"web_search_call" is refused`},
	{`{"store":false,"input":[1]}`, "input[0]: must be an input item (an object), not a number"},
	{`{"store":false,"input":7}`, "input: must be string or list of input item, not a number"},
}

var chatCases = []struct{ body, want string }{
	{`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true}}`, ""},
	{`{"model":"m","messages":[{"role":"user","content":"hi"}]}`, ""},
	{`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":false}`, ""},
	{`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true}`, "stream_options: a stream needs stream_options.include_usage true: the box's tokens are counted"},
	{`{"stream":true,"stream_options":{}}`, `stream_options: a stream options needs the field "include_usage"`},
	{`{"stream":true,"stream_options":{"include_usage":false}}`, "stream_options.include_usage: must be true"},
	{`{"tools":[{"type":"function","function":{"name":"f"}}]}`, ""},
	{`{"tools":[{"type":"web_search","web_search":{}}]}`, `tools[0].type: a tool type "web_search" is refused`},
	{`{"tools":[{"type":"retrieval"}]}`, `a tool type "retrieval" is refused`},
	{`{"tools":[{"function":{"name":"f"}}]}`, `tools[0]: a tool needs a "type" field`},
	{`{"tools":[{"type":"function","function":{"name":"f","url":"https://x"}}]}`, `tools[0].function.url: not a field aisan knows in a function definition`},
	{`{"web_search_options":{}}`, "web_search_options: this field is refused: it makes the provider search the web"},
	{`{"plugins":[{"id":"web"}]}`, "plugins: this field is refused"},
	{`{"enable_search":true}`, "enable_search: this field is refused"},
	{`{"model":"openai/gpt-5:online","messages":[{"role":"user","content":"hi"}]}`, `model: must not end with ":online": it makes the provider search the web`},
	{`{"model":"x/y:ONLINE"}`, `must not end with ":online"`},
	{`{"model":"anthropic/claude:nitro"}`, ""},
	{`{"model":"online"}`, ""},
	{`{"model":7}`, "model: must be a string, not a number"},
	{`{"enable_search":false}`, "enable_search: this field is refused"},
	{`{"store":true}`, "store: must be false"},
	{`{"store":false}`, ""},
	{`{"brand_new_option":1}`, "brand_new_option: not a field aisan knows in a body"},
	{`{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://x/y.png"}}]}]}`, `messages[0].content[0].image_url.url: must start with "data:"`},
	{`{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,AA=="}}]}]}`, ""},
	{`{"messages":[{"role":"user","content":[{"type":"file","file":{"file_id":"f"}}]}]}`, "messages[0].content[0].file.file_id: this field is refused"},
	{`{"messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"bash","arguments":"{}"}}]}]}`, ""},
	{`{"messages":"x"}`, "messages: must be a list of message, not a string"},
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
		if err == nil || !strings.Contains(err.Error(), tc.want) {
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

// TestCheckResponsesHeader: codex's switches may hold only the values
// codex 0.171.0 sends, on both Responses backends; its ids and metadata
// are not checked; the refusal names the header and the value and points
// to aisan explain --policy.
func TestCheckResponsesHeader(t *testing.T) {
	for _, tc := range []struct {
		h    http.Header
		want string
	}{
		{http.Header{}, ""},
		{http.Header{"X-Codex-Beta-Features": {strings.Join(BetaFeatures, ",")}}, ""},
		{http.Header{"X-Openai-Internal-Codex-Responses-Lite": {"true"}}, ""},
		{http.Header{"X-Codex-Turn-Metadata": {`{"turn_id":"t","model":"m"}`}, "X-Codex-Window-Id": {"w:0"}, "X-Codex-Turn-State": {"opaque"}}, ""},
		{http.Header{"X-Codex-Beta-Features": {"remote_compaction_v9"}}, `the x-codex-beta-features header: "remote_compaction_v9" is not a value aisan knows`},
		{http.Header{"X-Codex-Beta-Features": {BetaFeatures[0]}, "x-codex-beta-features": {"x"}}, `the x-codex-beta-features header: "x" is not a value aisan knows`},
		{http.Header{"X-Codex-Beta-Features": {""}}, "the x-codex-beta-features header: an empty value is not one aisan knows"},
		{http.Header{"X-Openai-Internal-Codex-Responses-Lite": {"false"}}, `the x-openai-internal-codex-responses-lite header: "false" is not a value aisan knows`},
	} {
		err := CheckResponsesHeader(ResponsesRoutes[0], egress.HeaderValues(tc.h))
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
	up := &url.URL{Scheme: "https", Host: "x"}
	for _, b := range []*egress.Backend{NewCodex(up, nil), NewOpenAI(up, cred.Static{})} {
		if b.CheckHeader == nil {
			t.Errorf("%s checks no header", b.Name)
			continue
		}
		srv, err := egress.NewServer(b, egress.Options{})
		if err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequest("POST", "/responses", strings.NewReader(`{"model":"m","input":"hi","store":false}`))
		r.Header.Set("X-Codex-Beta-Features", "aisan_unknown_switch")
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, r)
		if body := w.Body.String(); w.Code != http.StatusBadRequest || !strings.Contains(body, `the x-codex-beta-features header: \"aisan_unknown_switch\" is not a value aisan knows`) ||
			!strings.Contains(body, "aisan explain --policy "+b.Name) {
			t.Errorf("%s: %d %s", b.Name, w.Code, body)
		}
	}
}

// FuzzCodexHeaders: whatever header a box adds, what reaches the upstream
// holds only the names CodexForward lists (and those the proxy sets), and
// a listed switch only the values the table lists.
func FuzzCodexHeaders(f *testing.F) {
	for _, s := range [][2]string{
		{"X-Codex-Beta-Features", "remote_compaction_v2"},
		{"X-Codex-Beta-Features", "network_proxy, aisan_unknown"},
		{"X-Codex-Routing-Hint", "model=gpt-5;tier=priority"},
		{"OpenAI-Beta", "responses_websockets=2026-02-06"},
		{"x-openai-internal-codex-responses-lite", "false"},
		{"X-Stainless-Os", "Linux"},
		{"X-CODEX-TURN-STATE", "opaque"},
	} {
		f.Add(s[0], s[1])
	}
	up, _ := url.Parse("https://chatgpt.com/backend-api/codex")
	b := NewCodex(up, nil)
	listed := map[string]map[string]bool{}
	for _, h := range ResponsesPolicy().Headers {
		listed[h.Name] = map[string]bool{}
		for _, v := range h.Values {
			listed[h.Name][v] = true
		}
	}
	c := egress.Credential{{Name: "Authorization", Value: cred.NewSecret("Bearer real")}}
	f.Fuzz(func(t *testing.T, name, value string) {
		in, err := http.NewRequest("POST", "http://box/responses", nil)
		if err != nil {
			return
		}
		in.Header[name] = []string{value}
		in.Header["User-Agent"] = []string{"codex_exec/0.171.0"}
		if b.CheckHeader(ResponsesRoutes[0], egress.HeaderValues(in.Header)) != nil {
			return
		}
		pr := &httputil.ProxyRequest{In: in, Out: in.Clone(context.Background())}
		b.Rewrite(pr, ResponsesRoutes[0], nil, c)
		for k, vs := range pr.Out.Header {
			l := strings.ToLower(k)
			if !slices.Contains(CodexForward, l) && l != "authorization" && l != "content-type" {
				t.Fatalf("forwarded %s: %q", k, vs)
			}
			if known := listed[l]; known != nil {
				for _, line := range vs {
					for _, v := range strings.Split(line, ",") {
						if !known[strings.Trim(v, " \t")] {
							t.Fatalf("forwarded %s: %q", k, vs)
						}
					}
				}
			}
		}
	})
}
