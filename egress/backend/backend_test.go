package backend_test

import (
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aisan-dev/aisan/egress"
	"github.com/aisan-dev/aisan/egress/backend"
	"github.com/aisan-dev/aisan/egress/egresstest"
)

func TestEnvName(t *testing.T) {
	for name, want := range map[string]string{
		"anthropic":                         "AISAN_EGRESS_ANTHROPIC",
		"codex":                             "AISAN_EGRESS_CODEX",
		"openai-compatible:zai-coding-plan": "AISAN_EGRESS_OPENAI_COMPATIBLE_ZAI_CODING_PLAN",
	} {
		if got := backend.EnvName(name); got != want {
			t.Errorf("%s: %s", name, got)
		}
	}
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestNew(t *testing.T) {
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".claude"), 0o700)
	os.MkdirAll(filepath.Join(home, ".local/share/opencode"), 0o700)
	os.MkdirAll(filepath.Join(home, ".cache/opencode"), 0o700)
	os.WriteFile(filepath.Join(home, ".local/share/opencode/auth.json"), []byte(`{"zai":{"type":"api","key":"k"},"gh":{"type":"oauth","refresh":"r"},"anth":{"type":"api","key":"k"}}`), 0o600)
	os.WriteFile(filepath.Join(home, ".cache/opencode/models.json"), []byte(`{"zai":{"api":"https://api.z.example/v4","npm":"@ai-sdk/openai-compatible"},"anth":{"npm":"@ai-sdk/anthropic"},"plain":{"api":"http://insecure.example"}}`), 0o600)

	for _, tc := range []struct {
		name   string
		o      backend.Options
		vars   map[string]string
		errHas string
	}{
		{name: "anthropic", errHas: "no Claude login at " + filepath.Join(home, ".claude/.credentials.json") + ": log in with `claude` on the host, or pass --api-key"},
		{name: "anthropic", o: backend.Options{APIKey: true}, errHas: "set AISAN_ANTHROPIC_KEY_COMMAND"},
		{name: "anthropic", o: backend.Options{APIKey: true}, vars: map[string]string{"ANTHROPIC_API_KEY": "sk-ant-api", "AISAN_ANTHROPIC_UPSTREAM": "http://127.0.0.1:1"}, errHas: "is not https"},
		{name: "codex", o: backend.Options{APIKey: true}, errHas: "--api-key applies to the anthropic backend only"},
		{name: "codex", errHas: "no Codex login at " + filepath.Join(home, ".codex/auth.json") + ": log in with `codex login` on the host"},
		{name: "gemini", errHas: "unknown egress backend"},
		{name: "openai-compatible:../x", errHas: "not an opencode provider id"},
		{name: "openai-compatible:gh", vars: map[string]string{"AISAN_OPENCODE_UPSTREAM_GH": "https://api.gh.example"}, errHas: "OAuth login, which strict mode cannot use"},
		{name: "openai-compatible:anth", errHas: "speaks @ai-sdk/anthropic"},
		{name: "openai-compatible:none", errHas: "set AISAN_OPENCODE_UPSTREAM_NONE"},
		{name: "openai-compatible:plain", errHas: "is not https"},
		{name: "openai-compatible:zai"},
		{name: "anthropic", o: backend.Options{APIKey: true}, vars: map[string]string{"ANTHROPIC_API_KEY": "sk-ant-api"}},
		{name: "openai", vars: map[string]string{"OPENAI_API_KEY": "sk-proj"}},
	} {
		tc.o.Home = home
		tc.o.Getenv = env(tc.vars)
		s, err := backend.New(tc.name, tc.o)
		if tc.errHas != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errHas) {
				t.Errorf("%s %+v: err %v, want %q", tc.name, tc.vars, err, tc.errHas)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		benv := s.BoxEnv("http://127.0.0.1:8713", "")
		if benv[0] != s.EnvName+"=http://127.0.0.1:8713" {
			t.Errorf("%s: box env %q", tc.name, benv)
		}
		for _, e := range benv {
			if strings.Contains(e, "sk-") || strings.Contains(e, `"key":"k"`) {
				t.Errorf("%s: a credential in the box env: %s", tc.name, e)
			}
		}
	}
}

func TestAnthropicSpecs(t *testing.T) {
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".claude"), 0o700)
	os.WriteFile(filepath.Join(home, ".claude/.credentials.json"), []byte(`{"claudeAiOauth":{"accessToken":"sk-ant-oat01-x","refreshToken":"r","expiresAt":9999999999999,"subscriptionType":"pro"}}`), 0o600)
	s, err := backend.New("anthropic", backend.Options{Home: home, Getenv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	e := s.BoxEnv("http://127.0.0.1:8713", "")
	if !slices.Contains(e, "CLAUDE_CODE_SUBSCRIPTION_TYPE=pro") || !slices.Contains(e, "CLAUDE_CODE_OAUTH_TOKEN=aisan-placeholder-not-a-credential") || s.Seed != nil {
		t.Errorf("subscription env %q", e)
	}
	if s.Credential != filepath.Join(home, ".claude/.credentials.json") || s.Backend.Upstream.String() != "https://api.anthropic.com" {
		t.Errorf("%s %s", s.Credential, s.Backend.Upstream)
	}
	// CLAUDE_CONFIG_DIR moves the login.
	other := t.TempDir()
	if _, err := backend.New("anthropic", backend.Options{Home: home, Getenv: env(map[string]string{"CLAUDE_CONFIG_DIR": other})}); err == nil || !strings.Contains(err.Error(), other) {
		t.Errorf("CLAUDE_CONFIG_DIR ignored: %v", err)
	}
	s, err = backend.New("anthropic", backend.Options{APIKey: true, Home: home, Getenv: env(map[string]string{"AISAN_ANTHROPIC_KEY_COMMAND": "printf key", "ANTHROPIC_API_KEY": "ignored"})})
	if err != nil || s.Credential != "AISAN_ANTHROPIC_KEY_COMMAND" || s.Seed == nil {
		t.Fatalf("%v %+v", err, s)
	}
	if e := s.BoxEnv("http://127.0.0.1:8713", "tok"); !slices.Contains(e, "ANTHROPIC_API_KEY=tok") {
		t.Errorf("API key env %q", e)
	}
}

func TestCodexSpec(t *testing.T) {
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".codex"), 0o700)
	os.WriteFile(filepath.Join(home, ".codex/auth.json"), []byte(codexAuth(t, time.Now().Add(time.Hour), "a")), 0o600)
	s, err := backend.New("codex", backend.Options{Home: home, Getenv: env(map[string]string{"AISAN_CODEX_UPSTREAM": "https://127.0.0.1:9/backend-api/codex/"})})
	if err != nil {
		t.Fatal(err)
	}
	if s.Backend.Upstream.String() != "https://127.0.0.1:9/backend-api/codex" || s.ClientArgs == nil || !strings.Contains(s.Config("http://127.0.0.1:8714"), `base_url = "http://127.0.0.1:8714"`) {
		t.Errorf("%s", s.Backend.Upstream)
	}
}

func TestStart(t *testing.T) {
	up := egresstest.NewUpstream(t, egresstest.Anthropic())
	home := t.TempDir()
	s, err := backend.New("anthropic", backend.Options{APIKey: true, Home: home, Getenv: env(map[string]string{"ANTHROPIC_API_KEY": "sk-host", "AISAN_ANTHROPIC_UPSTREAM": up.URL.String()})})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := egress.ListenLoopback()
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	run, benv, err := s.Start(ln, egress.Options{Token: "tok"}, base)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(benv, "ANTHROPIC_API_KEY=tok") || !slices.Contains(benv, "AISAN_EGRESS_ANTHROPIC="+base) {
		t.Errorf("env %q", benv)
	}
	req, _ := http.NewRequest("POST", base+"/v1/messages", strings.NewReader(`{"model":"m","messages":[]}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Api-Key", "tok")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || up.Requests()[0].Header.Get("X-Api-Key") != "sk-host" {
		t.Errorf("status %d", resp.StatusCode)
	}
	run.Stop()
	if _, err := http.DefaultClient.Do(req); err == nil {
		t.Error("still serving after stop")
	}
}
