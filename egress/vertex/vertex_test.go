package vertex

import (
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aisan-dev/aisan/egress"
	"github.com/aisan-dev/aisan/egress/audit"
	"github.com/aisan-dev/aisan/egress/cred"
	"github.com/aisan-dev/aisan/egress/egresstest"
)

func TestMain(m *testing.M) { os.Exit(egresstest.RunWithCA(m)) }

var cfg = Config{Project: "my-proj", Region: "us-east5", QuotaProject: "billing-proj"}

const model = "/v1/projects/my-proj/locations/us-east5/publishers/anthropic/models/"

func TestResolve(t *testing.T) {
	for _, tc := range []struct {
		method, path, query string
		ok                  bool
	}{
		{"POST", model + "claude-sonnet-5-5@20261001:streamRawPredict", "", true},
		{"POST", model + "claude-opus-5-5:rawPredict", "", true},
		{"POST", model + "count-tokens:rawPredict", "", true},
		{"POST", model + "count-tokens:streamRawPredict", "", false},
		{"GET", model + "claude-opus-5-5:rawPredict", "", false},
		{"POST", model + "claude-opus-5-5:rawPredict", "beta=true", false},
		{"POST", model + "claude-opus-5-5:predict", "", false},
		{"POST", model + "claude-opus-5-5:generateContent", "", false},
		{"POST", model + "../../../google/models/gemini:generateContent", "", false},
		{"POST", model + "Claude%2fx:rawPredict", "", false},
		{"POST", "/v1/projects/other-proj/locations/us-east5/publishers/anthropic/models/claude-opus-5-5:rawPredict", "", false},
		{"POST", "/v1/projects/my-proj/locations/europe-west1/publishers/anthropic/models/claude-opus-5-5:rawPredict", "", false},
		{"POST", "/v1/projects/my-proj/locations/us-east5/publishers/google/models/gemini-3:streamGenerateContent", "", false},
		{"POST", "/v1/projects/my-proj/locations/us-east5/publishers/anthropic/models/claude-opus-5-5:rawPredict/x", "", false},
	} {
		rt, ok := cfg.resolve(tc.method, tc.path, tc.query)
		if ok != tc.ok || ok && rt.Path != tc.path {
			t.Errorf("%s %s?%s: %v %q", tc.method, tc.path, tc.query, ok, rt.Path)
		}
	}
}

// harness serves the backend against a model stand-in and Google
// stand-in, with the ADC file adc, impersonating sa when set.
type harness struct {
	client *http.Client
	model  *egresstest.Upstream
	google *egresstest.Google
	gup    *egresstest.Upstream
}

func newHarness(t *testing.T, adc func(g *egresstest.Google, tokenURL string) []byte, sa string) *harness {
	h := &harness{google: &egresstest.Google{}}
	h.gup = egresstest.NewUpstream(t, h.google)
	h.model = egresstest.NewUpstream(t, egresstest.Anthropic())
	path := filepath.Join(t.TempDir(), "adc.json")
	os.WriteFile(path, adc(h.google, h.gup.URL.String()+"/token"), 0o600)
	a := &ADC{Path: path, TokenURL: h.gup.URL.String() + "/token", Impersonate: sa, IAMURL: h.gup.URL.String(), Transport: egresstest.Transport()}
	h.client = egresstest.Serve(t, New(h.model.URL, cfg, &cred.Minted{Mint: a.Mint}), egress.Options{})
	return h
}

func (h *harness) post(t *testing.T, path, body string) (int, string) {
	t.Helper()
	resp, err := h.client.Post("http://box"+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

const body = `{"anthropic_version":"vertex-2023-10-16","max_tokens":8,"stream":true,"messages":[{"role":"user","content":"hi"}]}`

// TestMintedTokenReachesTheUpstream: for each kind of ADC, with and
// without impersonation, the model stand-in sees only the token minted
// for the right principal, on the host's project and region.
func TestMintedTokenReachesTheUpstream(t *testing.T) {
	user := func(g *egresstest.Google, _ string) []byte { return g.AuthorizedUser("billing-proj") }
	sa := func(g *egresstest.Google, tokenURL string) []byte {
		return g.ServiceAccount("runner@sa-project.iam.gserviceaccount.com", tokenURL)
	}
	for _, tc := range []struct {
		name        string
		adc         func(*egresstest.Google, string) []byte
		impersonate string
		want        string
	}{
		{"authorized user", user, "", "user"},
		{"service account", sa, "", "service account runner@sa-project.iam.gserviceaccount.com"},
		{"authorized user impersonating", user, "vertex@my-proj.iam.gserviceaccount.com", "impersonating vertex@my-proj.iam.gserviceaccount.com"},
		{"service account impersonating", sa, "vertex@my-proj.iam.gserviceaccount.com", "impersonating vertex@my-proj.iam.gserviceaccount.com"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.adc, tc.impersonate)
			for range 3 {
				if code, b := h.post(t, model+"claude-sonnet-5-5:streamRawPredict", body); code != 200 || !strings.Contains(b, egresstest.Answer) {
					t.Fatalf("%d %s", code, b)
				}
			}
			reqs := h.model.Requests()
			for _, r := range reqs {
				tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
				if got := h.google.MintedFor(tok); got != tc.want {
					t.Errorf("the upstream got a token minted for %q, want %q", got, tc.want)
				}
				if r.Target != model+"claude-sonnet-5-5:streamRawPredict" {
					t.Errorf("upstream target %s", r.Target)
				}
			}
			if len(h.google.Calls()) > 2 {
				t.Errorf("%d mints for three calls: %v", len(h.google.Calls()), h.google.Calls())
			}
		})
	}
}

// TestRefusedBeforeTheMint: a body or path the policy refuses never
// reaches the upstream, and never makes the host mint.
func TestRefusedBeforeTheMint(t *testing.T) {
	h := newHarness(t, func(g *egresstest.Google, _ string) []byte { return g.AuthorizedUser("") }, "")
	for _, tc := range []struct{ path, body, want string }{
		{model + "claude-sonnet-5-5:rawPredict", `{"anthropic_version":"vertex-2023-10-16","messages":[{"role":"user","content":[{"type":"image","source":{"type":"url","url":"https://x"}}]}]}`, `messages[0].content[0].source.type: an image source type \"url\" is refused`},
		{model + "claude-sonnet-5-5:rawPredict", `{"anthropic_version":"bedrock-2023-05-31","messages":[]}`, `anthropic_version: \"bedrock-2023-05-31\" is not one of`},
		{model + "claude-sonnet-5-5:rawPredict", `{"anthropic_version":"vertex-2023-10-16","tools":[{"type":"web_search_20250305","name":"web_search"}]}`, `a tool type \"web_search_20250305\" is refused`},
		{"/v1/projects/my-proj/locations/us-east5/publishers/google/models/gemini-3:generateContent", `{}`, "is not a request this box may send"},
	} {
		code, b := h.post(t, tc.path, tc.body)
		if code != 402 || !strings.Contains(b, `"permission_error"`) || !strings.Contains(b, tc.want) {
			t.Errorf("%s %s: %d %s", tc.path, tc.body, code, b)
		}
	}
	if n := len(h.model.Requests()); n != 0 {
		t.Errorf("the upstream saw %d requests", n)
	}
	if c := h.google.Calls(); len(c) != 0 {
		t.Errorf("refused requests minted: %v", c)
	}
}

// TestMintNeverFollowsARedirect: a token endpoint that redirects gets the
// refresh token once, its target never; the box is told the mint failed,
// the host's egress log why.
func TestMintNeverFollowsARedirect(t *testing.T) {
	elsewhere := egresstest.NewUpstream(t, &egresstest.Google{})
	redirecting := egresstest.NewUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL.String()+"/token", http.StatusTemporaryRedirect)
	}))
	path := filepath.Join(t.TempDir(), "adc.json")
	os.WriteFile(path, (&egresstest.Google{}).AuthorizedUser(""), 0o600)
	a := &ADC{Path: path, TokenURL: redirecting.URL.String() + "/token", Transport: egresstest.Transport()}
	model := egresstest.NewUpstream(t, egresstest.Anthropic())
	logPath := filepath.Join(t.TempDir(), "egress.log")
	log, err := audit.Open(logPath)
	if err != nil {
		t.Fatal(err)
	}
	client := egresstest.Serve(t, New(model.URL, cfg, &cred.Minted{Mint: a.Mint}), egress.Options{Audit: log})
	resp, err := client.Post("http://box/v1/projects/my-proj/locations/us-east5/publishers/anthropic/models/claude-x:rawPredict", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	why := "a redirect to " + elsewhere.URL.Host + ", which aisan does not follow"
	if resp.StatusCode != 503 && resp.StatusCode != 402 || !strings.Contains(string(b), "minting a Google access token") || strings.Contains(string(b), why) {
		t.Errorf("%d %s", resp.StatusCode, b)
	}
	log.Close()
	if logged, _ := os.ReadFile(logPath); !strings.Contains(string(logged), why) {
		t.Errorf("the egress log lacks %q: %s", why, logged)
	}
	if n := len(elsewhere.Requests()); n != 0 || len(model.Requests()) != 0 {
		t.Errorf("the redirect target saw %d requests, the model %d", n, len(model.Requests()))
	}
}

func TestBoxEnvHoldsNoGoogleCredential(t *testing.T) {
	env := strings.Join(BoxEnv("http://127.0.0.1:8711", "", cfg), "\n")
	for _, want := range []string{"CLAUDE_CODE_USE_VERTEX=1", "CLAUDE_CODE_SKIP_VERTEX_AUTH=1", "ANTHROPIC_VERTEX_BASE_URL=http://127.0.0.1:8711/v1", "ANTHROPIC_VERTEX_PROJECT_ID=my-proj", "CLOUD_ML_REGION=us-east5"} {
		if !strings.Contains(env, want) {
			t.Errorf("no %s in\n%s", want, env)
		}
	}
	if strings.Contains(env, "GOOGLE_APPLICATION_CREDENTIALS") || strings.Contains(env, "Authorization") {
		t.Errorf("a credential in the box env:\n%s", env)
	}
	if !strings.Contains(strings.Join(BoxEnv("http://127.0.0.1:1", "aisan-box-tok", cfg), "\n"), "ANTHROPIC_CUSTOM_HEADERS=Authorization: Bearer aisan-box-tok") {
		t.Error("a --net box does not send its per-box token")
	}
	if _, err := url.Parse(DefaultUpstream("us-east5")); err != nil || DefaultUpstream("global") != "https://aiplatform.googleapis.com" {
		t.Error(DefaultUpstream("global"))
	}
}

// TestUnknownBetaRefusedBeforeTheMint: on Vertex too the anthropic-beta
// header holds only betas the Claude CLI knows; another is refused, naming
// it, before the host mints, and the known ones reach the upstream.
func TestUnknownBetaRefusedBeforeTheMint(t *testing.T) {
	h := newHarness(t, func(g *egresstest.Google, _ string) []byte { return g.AuthorizedUser("") }, "")
	post := func(beta string) (int, string) {
		req, _ := http.NewRequest("POST", "http://box"+model+"claude-sonnet-5-5:rawPredict", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Anthropic-Beta", beta)
		resp, err := h.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, b := post("claude-code-20250219,skills-2025-10-02")
	if code != 402 || !strings.Contains(b, `"permission_error"`) || !strings.Contains(b, `the anthropic-beta header: \"skills-2025-10-02\" is not a value aisan knows`) {
		t.Errorf("%d %s", code, b)
	}
	if n := len(h.model.Requests()); n != 0 || len(h.google.Calls()) != 0 {
		t.Errorf("the refused beta reached the upstream (%d) or minted (%v)", n, h.google.Calls())
	}
	if code, b := post("claude-code-20250219,interleaved-thinking-2025-05-14"); code != 200 {
		t.Errorf("known betas: %d %s", code, b)
	}
	if r := h.model.Requests(); len(r) != 1 || r[0].Header.Get("Anthropic-Beta") != "claude-code-20250219,interleaved-thinking-2025-05-14" {
		t.Errorf("the upstream got %v", r)
	}
}
