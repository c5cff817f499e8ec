package mcp

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/aisan-dev/aisan/jail/jailtest"
)

// The probe server is for the in-box end-to-end test; this keeps it
// speaking MCP's stdio framing (one JSON-RPC message per line).
func TestProbeServer(t *testing.T) {
	_, err := exec.LookPath("sh")
	jailtest.Need(t, "sh", err)
	log := t.TempDir() + "/log"
	cmd := exec.Command("testdata/mcp-probe.sh")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "MCP_PROBE_LOG=" + log, "ONLY_THIS=1"}
	cmd.Stdin = strings.NewReader(strings.Join([]string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":"two","method":"tools/call","params":{"name":"env","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read","arguments":{"path":"/nonexistent/file"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"net","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"nope","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":7,"method":"resources/list"}`,
		`{"jsonrpc":"2.0","id":8,"method":"ping"}`,
	}, "\n") + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	type reply struct {
		ID     any
		Result struct {
			ProtocolVersion string
			Tools           []struct{ Name string }
			Content         []struct{ Text string }
		}
		Error *struct{ Code int }
	}
	var got []reply
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		var r reply
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("not JSON: %q: %v", sc.Text(), err)
		}
		got = append(got, r)
	}
	if len(got) != 9 {
		t.Fatalf("%d replies, want 9 (a notification gets none):\n%s", len(got), out)
	}
	text := func(i int) string {
		if len(got[i].Result.Content) == 0 {
			return ""
		}
		return got[i].Result.Content[0].Text
	}
	checks := []struct {
		ok   bool
		what string
	}{
		{got[0].Result.ProtocolVersion == "2025-11-25", "initialize echoes the client's version"},
		{len(got[1].Result.Tools) == 4, "four tools"},
		{got[2].ID == "two" && strings.Contains(text(2), "ONLY_THIS") && strings.Contains(text(2), "MCP_PROBE_LOG"), "env lists names, string id kept"},
		{strings.Contains(text(3), "No such file"), "read reports the error"},
		{text(4) == "hello", "echo"},
		{text(5) != "", "net lists interfaces"},
		{got[6].Error != nil && got[6].Error.Code == -32602, "unknown tool"},
		{got[7].Error != nil && got[7].Error.Code == -32601, "unknown method"},
		{got[8].Error == nil && got[8].ID == float64(8), "ping"},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: got\n%s", c.what, out)
		}
	}
	if b, _ := os.ReadFile(log); strings.Count(string(b), "\n") != 10 {
		t.Errorf("MCP_PROBE_LOG has %q, want the 10 requests", b)
	}
}
