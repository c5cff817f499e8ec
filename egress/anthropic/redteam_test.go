package anthropic_test

// Red-team probes: a box's client sends raw bytes to the Anthropic
// backend's socket, trying to get a request the policy does not classify
// to the upstream with the host's credential. Every probe here must be
// refused before the upstream is reached.

import (
	"bufio"
	"crypto/tls"
	"io"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aisan-dev/aisan/egress"
	"github.com/aisan-dev/aisan/egress/anthropic"
	"github.com/aisan-dev/aisan/egress/egresstest"
)

const rtSecret = "sk-ant-REAL-host-credential-do-not-leak"

type rtFixture struct {
	up   *egresstest.Upstream
	sock string
}

func newRT(t *testing.T) *rtFixture {
	t.Helper()
	up := egresstest.NewUpstream(t, egresstest.JSON(200, `{"type":"message","usage":{"input_tokens":1,"output_tokens":1}}`))
	b := anthropic.New(up.URL, anthropic.APIKey, &egresstest.Source{Value: rtSecret})
	sock := filepath.Join(t.TempDir(), "egress.sock")
	ln, err := egress.ListenUnix(sock)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := egress.NewServer(b, egress.Options{
		Transport: egress.NewUpstreamTransport(egress.UpstreamOptions{TLS: &tls.Config{RootCAs: egresstest.Pool()}}),
		Rate:      1000, Burst: 1000,
	})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close(); ln.Close() })
	return &rtFixture{up: up, sock: sock}
}

// raw sends req as bytes and returns what came back until the server
// closed or went quiet.
func (f *rtFixture) raw(t *testing.T, req string) string {
	t.Helper()
	c, err := net.Dial("unix", f.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, req)
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	b, _ := io.ReadAll(bufio.NewReader(c))
	return string(b)
}

const okBody = `{"model":"claude-x","max_tokens":1,"messages":[{"role":"user","content":"hi"}]}`

func post(target, hdr, body string) string {
	return "POST " + target + " HTTP/1.1\r\nHost: box\r\nContent-Type: application/json\r\n" + hdr +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\nConnection: close\r\n\r\n" + body
}

func TestRedTeamBaselinePasses(t *testing.T) {
	f := newRT(t)
	out := f.raw(t, post("/v1/messages", "", okBody))
	if !strings.HasPrefix(out, "HTTP/1.1 200") || len(f.up.Requests()) != 1 {
		t.Fatalf("the genuine request did not pass: %q", out)
	}
	if got := f.up.Requests()[0].Header.Get("X-Api-Key"); got != rtSecret {
		t.Fatalf("credential not attached: %q", got)
	}
}

func TestRedTeamRawProbesAreRefused(t *testing.T) {
	probes := map[string]string{
		"dup key":            post("/v1/messages", "", `{"model":"m","max_tokens":1,"messages":[],"mcp_servers":[],"mcp_servers":[]}`),
		"escaped key":        post("/v1/messages", "", `{"model":"m","messages":[],"mcp\u005fservers":[{"type":"url","url":"https://x"}]}`),
		"dup escaped key":    post("/v1/messages", "", `{"model":"m","mod\u0065l":"x","messages":[]}`),
		"trailing data":      post("/v1/messages", "", okBody+`{"mcp_servers":[]}`),
		"comment":            post("/v1/messages", "", `{"model":"m"/*x*/,"messages":[]}`),
		"NaN":                post("/v1/messages", "", `{"model":"m","temperature":NaN,"messages":[]}`),
		"lone surrogate":     post("/v1/messages", "", `{"model":"\ud800","messages":[]}`),
		"invalid utf8":       post("/v1/messages", "", "{\"model\":\"\xff\",\"messages\":[]}"),
		"bom":                post("/v1/messages", "", "\ufeff"+okBody),
		"gzip":               post("/v1/messages", "Content-Encoding: gzip\r\n", okBody),
		"two ce":             post("/v1/messages", "Content-Encoding: identity\r\nContent-Encoding: gzip\r\n", okBody),
		"text/plain":         "POST /v1/messages HTTP/1.1\r\nHost: box\r\nContent-Type: text/plain\r\nContent-Length: " + strconv.Itoa(len(okBody)) + "\r\n\r\n" + okBody,
		"ct param":           post("/v1/messages", "X: y\r\nContent-Type: application/json; profile=x\r\n", okBody),
		"query":              post("/v1/messages?beta=true&x=1", "", okBody),
		"empty query":        post("/v1/messages?", "", okBody),
		"batches":            post("/v1/messages/batches", "", okBody),
		"files":              post("/v1/files", "", okBody),
		"double slash":       post("//v1/messages", "", okBody),
		"dot segment":        post("/v1/./messages", "", okBody),
		"dotdot":             post("/v1/x/../messages", "", okBody),
		"pct":                post("/v1/%6dessages", "", okBody),
		"trailing slash":     post("/v1/messages/", "", okBody),
		"case":               post("/V1/messages", "", okBody),
		"absolute form":      post("http://upstream.invalid/v1/messages", "", okBody),
		"method override":    strings.Replace(post("/v1/messages", "X-HTTP-Method-Override: DELETE\r\n", okBody), "POST", "PUT", 1),
		"unknown beta":       post("/v1/messages", "anthropic-beta: code-execution-2025-08-25\r\n", okBody),
		"beta folded":        post("/v1/messages", "anthropic-beta: oauth-2025-04-20\r\n ,code-execution-2025-08-25\r\n", okBody),
		"beta lowercase dup": post("/v1/messages", "anthropic-beta: oauth-2025-04-20\r\nANTHROPIC-BETA: code-execution-2025-08-25\r\n", okBody),
		"beta semicolon":     post("/v1/messages", "anthropic-beta: oauth-2025-04-20;code-execution-2025-08-25\r\n", okBody),
		"version":            post("/v1/messages", "anthropic-version: 2099-01-01\r\n", okBody),
		"url image":          post("/v1/messages", "", `{"model":"m","messages":[{"role":"user","content":[{"type":"image","source":{"type":"url","url":"http://metadata.invalid/"}}]}]}`),
		"url doc in result":  post("/v1/messages", "", `{"model":"m","messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"x","content":[{"type":"document","source":{"type":"url","url":"http://x/"}}]}]}]}`),
		"web fetch tool":     post("/v1/messages", "", `{"model":"m","messages":[],"tools":[{"type":"web_fetch_20250910","name":"web_fetch"}]}`),
		"computer tool":      post("/v1/messages", "", `{"model":"m","messages":[],"tools":[{"type":"computer_20250124","name":"computer"}]}`),
		"tool type null":     post("/v1/messages", "", `{"model":"m","messages":[],"tools":[{"type":null,"name":"web_fetch"}]}`),
		"container":          post("/v1/messages", "", `{"model":"m","messages":[],"container":{"skills":[]}}`),
		"tool def addition":  post("/v1/messages", "", `{"model":"m","messages":[{"role":"user","content":[{"type":"tool_addition","tool":{"type":"tool_definition","definition":{"type":"web_search_20250305","name":"w"}}}]}]}`),
		"trailers": "POST /v1/messages HTTP/1.1\r\nHost: box\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n" +
			strconv.FormatInt(int64(len(okBody)), 16) + "\r\n" + okBody + "\r\n0\r\nContent-Encoding: gzip\r\n\r\n",
		"cl and te": "POST /v1/messages HTTP/1.1\r\nHost: box\r\nContent-Type: application/json\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n" +
			strconv.FormatInt(int64(len(`{"model":"m","mcp_servers":[]}`)), 16) + "\r\n" + `{"model":"m","mcp_servers":[]}` + "\r\n0\r\n\r\n",
		"h2c preface":   "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
		"h2c upgrade":   post("/v1/messages", "Upgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n", `{"model":"m","mcp_servers":[]}`),
		"websocket":     "GET /v1/messages HTTP/1.1\r\nHost: box\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
		"http10 nobody": "POST /v1/messages HTTP/1.0\r\nContent-Type: application/json\r\n\r\n" + `{"model":"m","mcp_servers":[]}`,
	}
	for name, req := range probes {
		t.Run(name, func(t *testing.T) {
			f := newRT(t)
			out := f.raw(t, req)
			if n := len(f.up.Requests()); n != 0 {
				t.Errorf("reached the upstream (%d requests); box saw %q", n, clipS(out))
			}
			if strings.Contains(out, rtSecret) {
				t.Errorf("credential in the answer: %q", out)
			}
		})
	}
}

// TestRedTeamPipelinedSecondRequestIsChecked sends a genuine request and a
// refused one on the same connection: the second must be judged too.
func TestRedTeamPipelinedSecondRequestIsChecked(t *testing.T) {
	f := newRT(t)
	a := strings.Replace(post("/v1/messages", "", okBody), "Connection: close\r\n", "", 1)
	b := post("/v1/messages", "", `{"model":"m","messages":[],"mcp_servers":[{"type":"url","url":"https://x"}]}`)
	out := f.raw(t, a+b)
	if n := len(f.up.Requests()); n != 1 {
		t.Errorf("upstream saw %d requests, want 1: %q", n, clipS(out))
	}
}

func clipS(s string) string {
	if len(s) > 300 {
		return s[:300]
	}
	return s
}
