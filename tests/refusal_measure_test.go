//go:build aisanmeasure

package tests

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// refusalMarker is in every candidate refusal's message, so what the
// client printed can be searched for it.
const refusalMarker = "aisan strict mode refused this request: the marker-reason-xq"

// TestMeasureRefusalRendering is a measurement, not a check: for each
// client and each candidate status and error body, the stand-in upstream
// answers every model call with it (x-should-retry: false, as the
// proxy's refusals carry), through the real proxy and a real strict box,
// and the test logs what the client printed and how many calls reached
// the upstream. Run it with AISAN_MEASURE_REFUSALS=1.
func TestMeasureRefusalRendering(t *testing.T) {
	if os.Getenv("AISAN_MEASURE_REFUSALS") == "" {
		t.Skip("a measurement; set AISAN_MEASURE_REFUSALS=1 to run it")
	}
	anthropicBody := func(typ string) string {
		b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": refusalMarker}})
		return string(b)
	}
	openaiBody := func(typ, code string) string {
		b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": refusalMarker, "type": typ, "param": nil, "code": code}})
		return string(b)
	}
	type candidate struct {
		status int
		body   string
	}
	only := os.Getenv("AISAN_MEASURE_ONLY")
	for _, c := range []struct {
		agent string
		setup refusalSetup
		cands []candidate
	}{
		{"claude", claudeStrictSetup, []candidate{
			{400, anthropicBody("invalid_request_error")},
			{402, anthropicBody("billing_error")},
			{403, anthropicBody("permission_error")},
			{404, anthropicBody("not_found_error")},
			{422, anthropicBody("invalid_request_error")},
			{403, anthropicBody("billing_error")},
			{402, anthropicBody("permission_error")},
			{402, anthropicBody("invalid_request_error")},
			{405, anthropicBody("invalid_request_error")},
			{410, anthropicBody("invalid_request_error")},
			{413, anthropicBody("request_too_large")},
			{451, anthropicBody("permission_error")},
			{402, anthropicBody("authentication_error")},
		}},
		{"vertex", claudeVertexSetup, []candidate{
			{402, anthropicBody("permission_error")},
			{402, anthropicBody("billing_error")},
			{402, anthropicBody("authentication_error")},
			{403, anthropicBody("permission_error")},
			{400, anthropicBody("invalid_request_error")},
		}},
		{"codex", codexStrictSetup, []candidate{
			{400, openaiBody("invalid_request_error", "aisan_strict_mode")},
			{402, openaiBody("invalid_request_error", "aisan_strict_mode")},
			{403, openaiBody("invalid_request_error", "aisan_strict_mode")},
			{404, openaiBody("invalid_request_error", "aisan_strict_mode")},
			{422, openaiBody("invalid_request_error", "aisan_strict_mode")},
		}},
		{"opencode", opencodeStrictSetup, []candidate{
			{400, openaiBody("invalid_request_error", "aisan_strict_mode")},
			{402, openaiBody("invalid_request_error", "aisan_strict_mode")},
			{403, openaiBody("invalid_request_error", "aisan_strict_mode")},
			{404, openaiBody("invalid_request_error", "aisan_strict_mode")},
			{422, openaiBody("invalid_request_error", "aisan_strict_mode")},
		}},
	} {
		if only != "" && only != c.agent {
			continue
		}
		agent := c.agent
		if agent == "vertex" {
			agent = "claude"
		}
		bin := nodeBin(t, agent)
		ca := newTestCA(t, t.TempDir(), "127.0.0.1")
		for _, cand := range c.cands {
			t.Run(fmt.Sprintf("%s/%d-%s", c.agent, cand.status, errType(cand.body)), func(t *testing.T) {
				repo, home, _ := strictRepo(t)
				var calls atomic.Int64
				s, _ := tlsStandIn(t, ca, nil, func(s *standIn, w http.ResponseWriter, r *http.Request, body []byte) {
					if r.Method != http.MethodPost {
						return
					}
					calls.Add(1)
					w.Header().Set("Content-Type", "application/json")
					w.Header().Set("X-Should-Retry", "false")
					w.WriteHeader(cand.status)
					fmt.Fprint(w, cand.body)
				})
				env, args := c.setup(t, ca, home, s.srv.URL)
				env = append(append(jailEnv(home, bin), env...), "SSL_CERT_FILE="+ca.pemPath, "AISAN_NO_SCOPE=1")
				r := runJailed(t, repo, env, args...)
				out := r.stdout + "\n--stderr--\n" + r.stderr
				t.Logf("MEASURE %s %d body=%s: exit %d, %d calls upstream (%s), took %v, marker shown: %v\n%s",
					c.agent, cand.status, cand.body, r.code, calls.Load(), s.requests(), r.took.Round(time.Second), strings.Contains(out, "marker-reason-xq"), clipOut(out))
			})
		}
	}
}

func errType(body string) string {
	var b struct {
		Error struct{ Type string } `json:"error"`
	}
	json.Unmarshal([]byte(body), &b)
	return b.Error.Type
}
