package tests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// thinkingAPI is the Messages stand-in whose tool turns also think: each
// tool call comes after a thinking block (with its signature) and a
// redacted one, which Claude sends back in the turns that follow, as it
// does with the real model.
func thinkingAPI(bodies *[][]byte, mu *sync.Mutex) func(s *standIn, w http.ResponseWriter, r *http.Request, body []byte) {
	return func(s *standIn, w http.ResponseWriter, r *http.Request, body []byte) {
		mu.Lock()
		*bodies = append(*bodies, body)
		mu.Unlock()
		if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
			anthropicAPI(s, w, r, body)
			return
		}
		var req struct {
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		json.Unmarshal(body, &req)
		for _, m := range req.Messages {
			var blocks []struct {
				Type      string          `json:"type"`
				ToolUseID string          `json:"tool_use_id"`
				Content   json.RawMessage `json:"content"`
				IsError   bool            `json:"is_error"`
			}
			if json.Unmarshal(m.Content, &blocks) != nil {
				continue
			}
			for _, b := range blocks {
				if b.Type == "tool_result" {
					s.record(b.ToolUseID, fmt.Sprintf("is_error=%v %s", b.IsError, b.Content))
				}
			}
		}
		step, command, pending := s.next()
		if !pending || !strings.Contains(string(body), `"name":"Read"`) {
			anthropicAPI(s, w, r, body)
			return
		}
		input := strings.TrimPrefix(command, "tool:Read ")
		start := map[string]any{"type": "message_start", "message": map[string]any{
			"id": "msg_think", "type": "message", "role": "assistant", "model": "claude-sonnet-5-5",
			"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 10, "output_tokens": 1}}}
		sse(w,
			"message_start", start,
			"content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "thinking", "thinking": "", "signature": ""}},
			"content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "thinking_delta", "thinking": "The user wants the file read."}},
			"content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "signature_delta", "signature": "c2lnbmF0dXJlLW9mLXRoZS10aGlua2luZw=="}},
			"content_block_stop", map[string]any{"type": "content_block_stop", "index": 0},
			"content_block_start", map[string]any{"type": "content_block_start", "index": 1, "content_block": map[string]any{"type": "redacted_thinking", "data": "cmVkYWN0ZWQtdGhpbmtpbmc="}},
			"content_block_stop", map[string]any{"type": "content_block_stop", "index": 1},
			"content_block_start", map[string]any{"type": "content_block_start", "index": 2, "content_block": map[string]any{"type": "tool_use", "id": callID(step), "name": "Read", "input": map[string]any{}}},
			"content_block_delta", map[string]any{"type": "content_block_delta", "index": 2, "delta": map[string]any{"type": "input_json_delta", "partial_json": input}},
			"content_block_stop", map[string]any{"type": "content_block_stop", "index": 2},
			"message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": "tool_use", "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 30}},
			"message_stop", map[string]any{"type": "message_stop"},
		)
	}
}

// onePDF is a one-page PDF with a line of text.
const onePDF = "%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n" +
	"3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 100]/Contents 4 0 R/Resources<</Font<</F1 5 0 R>>>>>>endobj\n" +
	"4 0 obj<</Length 44>>stream\nBT /F1 12 Tf 20 50 Td (aisan pdf) Tj ET\nendstream endobj\n" +
	"5 0 obj<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n"

// TestStrictClaudeThinkingImagesPDF: the real claude in a strict box runs
// turns whose history carries thinking and redacted thinking, an image
// and a PDF it read with its Read tool (base64, inside tool results):
// every turn passes the egress policy, and each of those shapes reached
// the model stand-in.
func TestStrictClaudeThinkingImagesPDF(t *testing.T) {
	bin := nodeBin(t, "claude")
	repo, home, _ := strictRepo(t)
	ca := newTestCA(t, t.TempDir(), "127.0.0.1")
	img := image.NewRGBA(image.Rect(0, 0, 8, 8))
	for i := range 8 {
		img.Set(i, i, color.RGBA{200, 0, 0, 255})
	}
	var pngData bytes.Buffer
	png.Encode(&pngData, img)
	os.WriteFile(filepath.Join(repo, "pic.png"), pngData.Bytes(), 0o644)
	os.WriteFile(filepath.Join(repo, "doc.pdf"), []byte(onePDF), 0o644)
	os.MkdirAll(filepath.Join(home, ".claude"), 0o700)
	os.WriteFile(filepath.Join(home, ".claude", ".credentials.json"), []byte(fmt.Sprintf(`{"claudeAiOauth":{"accessToken":"sk-ant-oat01-host","refreshToken":"r","expiresAt":%d,"scopes":["user:inference"],"subscriptionType":"max"}}`,
		time.Now().Add(24*time.Hour).UnixMilli())), 0o600)
	var mu sync.Mutex
	var bodies [][]byte
	reads := []string{
		`tool:Read {"file_path":"` + filepath.Join(repo, "pic.png") + `"}`,
		`tool:Read {"file_path":"` + filepath.Join(repo, "doc.pdf") + `"}`,
	}
	s, _ := tlsStandIn(t, ca, reads, thinkingAPI(&bodies, &mu))
	env := append(jailEnv(home, bin), "AISAN_ANTHROPIC_UPSTREAM="+s.srv.URL, "SSL_CERT_FILE="+ca.pemPath, "AISAN_NO_SCOPE=1")
	r := runJailed(t, repo, env, "claude", "--strict", "--skip-permissions", "--", "-p", "Read the files you are given.", "--output-format", "json")
	if err := claudeDone(r.stdout); err != nil {
		t.Fatalf("claude in the strict box: %v\nexit %d\nstdout %s\nstderr %s\nrequests: %s", err, r.code, r.stdout, r.stderr, s.requests())
	}
	for i := range reads {
		if res, ok := s.resultOf(i); !ok || !strings.HasPrefix(res, "is_error=false") {
			t.Errorf("read %d: %q (%v)", i, res, ok)
		}
	}
	mu.Lock()
	all := string(bytes.Join(bodies, nil))
	mu.Unlock()
	for _, want := range []string{`"type":"thinking"`, `"type":"redacted_thinking"`, `"type":"image"`, `"media_type":"image/png"`, `"type":"document"`, `"media_type":"application/pdf"`} {
		if !strings.Contains(all, want) {
			t.Errorf("no request carried %s", want)
		}
	}
	if strings.Contains(r.stderr, "strict mode refused") {
		t.Errorf("the egress refused a turn:\n%s", r.stderr)
	}
}
