package tests

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aisan-dev/aisan/egress/egresstest"
)

// vertexAPI speaks Anthropic's API on Vertex AI as the Claude CLI calls
// it (the model in the path, the version in the body): the Messages
// stand-in behind the Vertex paths.
func vertexAPI(s *standIn, w http.ResponseWriter, r *http.Request, body []byte) {
	path := r.URL.Path
	switch {
	case strings.HasSuffix(path, "/count-tokens:rawPredict"):
		writeJSON(w, map[string]int{"input_tokens": 12})
		return
	case strings.Contains(path, "/publishers/anthropic/models/") && (strings.HasSuffix(path, ":streamRawPredict") || strings.HasSuffix(path, ":rawPredict")):
		r.URL.Path = "/v1/messages"
		anthropicAPI(s, w, r, body)
	default:
		http.NotFound(w, r)
	}
}

// TestStrictClaudeVertex: the real claude in a strict box reaches
// Anthropic's models on Vertex AI (--vertex) with no Google credential in
// the box; the host mints the tokens from its Application Default
// Credentials, an authorized user's or a service account key, with and
// without impersonating a service account, at loopback stand-ins for
// Google's token endpoint and IAM; the model stand-in sees only minted
// tokens, for the right principal, on the host's project and region.
func TestStrictClaudeVertex(t *testing.T) {
	bin := nodeBin(t, "claude")
	ca := newTestCA(t, t.TempDir(), "127.0.0.1")
	const sa = "vertex-runner@my-proj.iam.gserviceaccount.com"
	for _, tc := range []struct {
		name, adc, impersonate string
	}{
		{"user", "user", ""},
		{"service account", "sa", ""},
		{"user impersonating", "user", sa},
		{"service account impersonating", "sa", sa},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo, home, _ := strictRepo(t)
			g := &egresstest.Google{}
			gsrv := httptest.NewUnstartedServer(g)
			gsrv.TLS = &tls.Config{Certificates: []tls.Certificate{ca.server}}
			gsrv.StartTLS()
			t.Cleanup(gsrv.Close)
			adc := g.AuthorizedUser("billing-proj")
			if tc.adc == "sa" {
				adc = g.ServiceAccount("key-holder@sa-proj.iam.gserviceaccount.com", gsrv.URL+"/token")
			}
			adcPath := filepath.Join(home, ".config", "gcloud", "application_default_credentials.json")
			os.MkdirAll(filepath.Dir(adcPath), 0o700)
			os.WriteFile(adcPath, adc, 0o600)
			probe := `echo from-the-box; env | grep -ci -e google_application -e refresh_token -e token-; ls -a "$HOME/.config/gcloud" 2>&1; grep -rls -e user-refresh-token -e PRIVATE "$HOME" /proc/1/environ 2>/dev/null; true`
			s, creds := tlsStandIn(t, ca, []string{probe}, vertexAPI)
			env := append(jailEnv(home, bin), "AISAN_NO_SCOPE=1", "SSL_CERT_FILE="+ca.pemPath,
				"AISAN_VERTEX_UPSTREAM="+s.srv.URL, "AISAN_VERTEX_TOKEN_URL="+gsrv.URL+"/token", "AISAN_VERTEX_IAM_URL="+gsrv.URL,
				"ANTHROPIC_VERTEX_PROJECT_ID=my-proj", "CLOUD_ML_REGION=us-east5", "AISAN_VERTEX_IMPERSONATE="+tc.impersonate)
			r := runJailed(t, repo, env, "claude", "--strict", "--vertex", "--skip-permissions", "--",
				"-p", "Run the shell commands you are given.", "--output-format", "json", "--model", "claude-sonnet-5-5@20261001")
			if err := claudeDone(r.stdout); err != nil {
				t.Fatalf("claude on Vertex in the strict box: %v\nexit %d\nstdout %s\nstderr %s\nrequests: %s\nGoogle: %v", err, r.code, r.stdout, r.stderr, s.requests(), g.Calls())
			}
			res, ok := s.result()
			if !ok || !strings.HasPrefix(res, "is_error=false from-the-box\n0\n") || !strings.Contains(res, "No such file") {
				t.Errorf("in the box (want no Google credential anywhere):\n%s", res)
			}
			want := "user"
			switch {
			case tc.impersonate != "":
				want = "impersonating " + tc.impersonate
			case tc.adc == "sa":
				want = "service account key-holder@sa-proj.iam.gserviceaccount.com"
			}
			seen := creds()
			if len(seen) == 0 {
				t.Fatal("nothing reached the model")
			}
			for _, c := range seen {
				_, auth, _ := strings.Cut(c, `authorization="Bearer `)
				auth, _, _ = strings.Cut(auth, `"`)
				if got := g.MintedFor(auth); got != want || !strings.Contains(c, "/v1/projects/my-proj/locations/us-east5/publishers/anthropic/models/") {
					t.Errorf("the model got %s, a token minted for %q; want one for %q", c, got, want)
				}
			}
			calls := g.Calls()
			if tc.impersonate != "" && !strings.Contains(strings.Join(calls, "\n"), "generateAccessToken "+tc.impersonate) {
				t.Errorf("no impersonation: %v", calls)
			}
			if len(calls) > 2 {
				t.Errorf("the host minted %d times for one session: %v", len(calls), calls)
			}
		})
	}
}
