package tests

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aisan-dev/aisan/egress/egresstest"
)

// refusalSetup makes one agent's strict launch against upstream: its host
// login or key and config in home, the environment and the aisan
// arguments.
type refusalSetup func(t *testing.T, ca testCA, home, upstream string) (env []string, args []string)

func claudeStrictSetup(t *testing.T, ca testCA, home, upstream string) ([]string, []string) {
	os.MkdirAll(filepath.Join(home, ".claude"), 0o700)
	login := fmt.Sprintf(`{"claudeAiOauth":{"accessToken":"sk-ant-oat01-host-real-subscription-token","refreshToken":"sk-ant-ort01-host-refresh","expiresAt":%d,"scopes":["user:inference"],"subscriptionType":"max"}}`,
		time.Now().Add(24*time.Hour).UnixMilli())
	os.WriteFile(filepath.Join(home, ".claude", ".credentials.json"), []byte(login), 0o600)
	args := []string{"claude", "--strict", "--skip-permissions", "--", "-p", "Say hi."}
	if os.Getenv("AISAN_MEASURE_JSON") != "" {
		args = append(args, "--output-format", "json")
	}
	return []string{"AISAN_ANTHROPIC_UPSTREAM=" + upstream}, args
}

func codexStrictSetup(t *testing.T, ca testCA, home, upstream string) ([]string, []string) {
	os.MkdirAll(filepath.Join(home, ".codex"), 0o700)
	os.WriteFile(filepath.Join(home, ".codex", "config.toml"), []byte("model = \"gpt-5-codex\"\n"), 0o600)
	return []string{"OPENAI_API_KEY=sk-host-openai-key-0123456789", "AISAN_OPENAI_UPSTREAM=" + upstream + "/v1"},
		[]string{"codex", "--strict", "--skip-permissions", "--", "exec", "--skip-git-repo-check", "-c", `web_search="live"`, "Say hi."}
}

// opencodeStrictSetup uses opencode's catalog provider zai-coding-plan
// with the host's model glm-5.3.
func opencodeStrictSetup(t *testing.T, ca testCA, home, upstream string) ([]string, []string) {
	data, _ := json.Marshal(map[string]any{"model": "zai-coding-plan/glm-5.3"})
	os.MkdirAll(filepath.Join(home, ".config", "opencode"), 0o700)
	os.WriteFile(filepath.Join(home, ".config", "opencode", "opencode.json"), data, 0o600)
	os.MkdirAll(filepath.Join(home, ".local", "share", "opencode"), 0o700)
	os.WriteFile(filepath.Join(home, ".local", "share", "opencode", "auth.json"), []byte(`{"zai-coding-plan":{"type":"api","key":"sk-host-opencode-key-0123456789"}}`), 0o600)
	return []string{"AISAN_OPENCODE_UPSTREAM_ZAI_CODING_PLAN=" + upstream + "/v1"},
		[]string{"opencode", "--strict", "--", "run", "Say hi."}
}

// claudeVertexSetup is claude on Vertex AI (--vertex), with an authorized
// user's ADC whose tokens a Google stand-in mints.
func claudeVertexSetup(t *testing.T, ca testCA, home, upstream string) ([]string, []string) {
	g := &egresstest.Google{}
	gsrv := httptest.NewUnstartedServer(g)
	gsrv.TLS = &tls.Config{Certificates: []tls.Certificate{ca.server}}
	gsrv.StartTLS()
	t.Cleanup(gsrv.Close)
	adcPath := filepath.Join(home, ".config", "gcloud", "application_default_credentials.json")
	os.MkdirAll(filepath.Dir(adcPath), 0o700)
	os.WriteFile(adcPath, g.AuthorizedUser("billing-proj"), 0o600)
	return []string{"AISAN_VERTEX_UPSTREAM=" + upstream, "AISAN_VERTEX_TOKEN_URL=" + gsrv.URL + "/token", "AISAN_VERTEX_IAM_URL=" + gsrv.URL,
			"ANTHROPIC_VERTEX_PROJECT_ID=my-proj", "CLOUD_ML_REGION=us-east5"},
		[]string{"claude", "--strict", "--vertex", "--skip-permissions", "--", "-p", "Say hi.", "--model", "claude-sonnet-5-5@20261001"}
}

func clipOut(s string) string {
	if len(s) > 3000 {
		return s[:1500] + "\n…\n" + s[len(s)-1500:]
	}
	return s
}

// refusedCount is how many requests the launch's closing line says the
// proxy refused.
var refusedCount = regexp.MustCompile(`strict mode refused (\d+) requests?\b`)

// policyRefusalShown runs one agent in a strict box whose request the
// proxy's policy refuses, and checks what its user sees: the proxy's
// reason, once, with no retry and nothing that sends them to a login.
func policyRefusalShown(t *testing.T, agent string, setup refusalSetup, extra []string, stdin string, api func(s *standIn, w http.ResponseWriter, r *http.Request, body []byte), reason string) {
	bin := nodeBin(t, agent)
	ca := newTestCA(t, t.TempDir(), "127.0.0.1")
	repo, home, henv := strictRepo(t)
	if agent == "opencode" {
		// The project's own opencode config declares a model the host
		// never named.
		os.WriteFile(filepath.Join(repo, "opencode.json"), []byte(`{"provider":{"zai-coding-plan":{"models":{"glm-unlisted-x":{"name":"unlisted","tool_call":true}}}}}`), 0o644)
		hostGit(t, repo, henv, "add", "opencode.json")
		hostGit(t, repo, henv, "commit", "-q", "-m", "opencode config")
	}
	s, _ := tlsStandIn(t, ca, nil, api)
	env, args := setup(t, ca, home, s.srv.URL)
	env = append(append(jailEnv(home, bin), env...), "SSL_CERT_FILE="+ca.pemPath, "AISAN_NO_SCOPE=1")
	r := runJailedInput(t, repo, env, stdin, append(args, extra...)...)
	out := r.stdout + "\n" + r.stderr
	t.Logf("stdout:\n%s\nupstream saw: %s", clipOut(r.stdout), s.requests())
	if !strings.Contains(out, reason) {
		t.Errorf("the user does not see the proxy's reason %q:\n%s", reason, clipOut(out))
	}
	for _, login := range []string{"/login", "Failed to authenticate", "authentication failed", "log in", "Reconnecting"} {
		if i := strings.Index(out, login); i >= 0 {
			t.Errorf("the refusal reads as %q (a login to renew or a retry): …%s…", login, out[max(i-200, 0):min(i+300, len(out))])
		}
	}
	m := refusedCount.FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("no refusal line at the end of the launch:\n%s", r.stderr)
	}
	if n, _ := strconv.Atoi(m[1]); n != 1 {
		t.Errorf("the proxy refused %d requests; want the one, not retried:\n%s", n, r.stderr)
	}
}

// TestStrictClaudeShowsPolicyRefusal: the real claude in a strict box
// sends a user message with an image by URL (Anthropic's servers would
// fetch it), which the proxy's policy refuses: claude shows the proxy's
// reason, sends the request once, and does not ask for a login (a 403
// read as "Failed to authenticate" / "Please run /login").
func TestStrictClaudeShowsPolicyRefusal(t *testing.T) {
	msg := `{"type":"user","message":{"role":"user","content":[{"type":"text","text":"What is in this picture?"},{"type":"image","source":{"type":"url","url":"https://pictures.invalid/cat.png"}}]}}` + "\n"
	policyRefusalShown(t, "claude", func(t *testing.T, ca testCA, home, upstream string) ([]string, []string) {
		env, _ := claudeStrictSetup(t, ca, home, upstream)
		return env, []string{"claude", "--strict", "--skip-permissions", "--", "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"}
	}, nil, msg, anthropicAPI, `an image source type \"url\" is refused: Anthropic's servers would fetch the URL`)
}

// TestStrictClaudeVertexShowsPolicyRefusal: the same on Vertex AI, where
// Claude shows a 403 as a Google Cloud login to refresh.
func TestStrictClaudeVertexShowsPolicyRefusal(t *testing.T) {
	msg := `{"type":"user","message":{"role":"user","content":[{"type":"text","text":"What is in this picture?"},{"type":"image","source":{"type":"url","url":"https://pictures.invalid/cat.png"}}]}}` + "\n"
	policyRefusalShown(t, "claude", func(t *testing.T, ca testCA, home, upstream string) ([]string, []string) {
		env, _ := claudeVertexSetup(t, ca, home, upstream)
		return env, []string{"claude", "--strict", "--vertex", "--skip-permissions", "--", "-p", "--model", "claude-sonnet-5-5@20261001",
			"--input-format", "stream-json", "--output-format", "stream-json", "--verbose"}
	}, nil, msg, vertexAPI, `an image source type \"url\" is refused: Anthropic's servers would fetch the URL`)
}

// TestStrictCodexShowsPolicyRefusal: the real codex in a strict box with
// its web search switched on offers the model a search the provider
// would run, which the proxy's policy refuses: codex shows the reason,
// once, without reconnecting.
func TestStrictCodexShowsPolicyRefusal(t *testing.T) {
	policyRefusalShown(t, "codex", codexStrictSetup, nil, "", responsesAPI, "is refused")
}

// TestStrictOpencodeShowsPolicyRefusal: the real opencode in a strict box
// asks for a model the host does not name, which the proxy refuses:
// opencode shows the reason, once.
func TestStrictOpencodeShowsPolicyRefusal(t *testing.T) {
	policyRefusalShown(t, "opencode", func(t *testing.T, ca testCA, home, upstream string) ([]string, []string) {
		env, _ := opencodeStrictSetup(t, ca, home, upstream)
		return env, []string{"opencode", "--strict", "--", "run", "-m", "zai-coding-plan/glm-unlisted-x", "Say hi."}
	}, nil, "", chatAPI, `is not a model the host names`)
}
