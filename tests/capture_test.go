package tests

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// captureDir, when set (-aisan.capture DIR), makes every stand-in model
// API keep the request bodies the real clients send it, one file per
// distinct body under DIR/<api>/: the seeds of egress/policy's tables
// and fuzz corpora (see egress/policy/testdata/README).
var captureDir = flag.String("aisan.capture", "", "keep the model request bodies the stand-ins receive under this directory")

// captureBody keeps body under the API its path names, when capturing.
func captureBody(r *http.Request, body []byte) {
	if *captureDir == "" || r.Method != http.MethodPost || len(body) == 0 {
		return
	}
	api := captureAPI(r.URL.Path)
	if api == "" {
		return
	}
	dir := filepath.Join(*captureDir, api)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return
	}
	sum := sha256.Sum256(body)
	os.WriteFile(filepath.Join(dir, hex.EncodeToString(sum[:8])+".json"), body, 0o644)
}

// captureAPI names the API a request path belongs to, "" for none.
func captureAPI(path string) string {
	switch {
	case strings.HasSuffix(path, ":rawPredict"), strings.HasSuffix(path, ":streamRawPredict"):
		return "vertex"
	case strings.HasSuffix(path, "/messages/count_tokens"):
		return "count_tokens"
	case strings.HasSuffix(path, "/messages"):
		return "messages"
	case strings.HasSuffix(path, "/responses"), strings.HasSuffix(path, "/responses/compact"):
		return "responses"
	case strings.HasSuffix(path, "/chat/completions"):
		return "chat"
	}
	return ""
}
