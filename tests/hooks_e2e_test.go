package tests

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The hook end-to-end tests drive the real Claude Code and Codex CLIs
// (installed by tests/env/npm.sh into $AISAN_NODE_MODULES) against a
// stand-in of the model API on loopback. The stand-in answers the first turn
// with a shell tool call, pkill -f on a marker process the test started,
// and records the tool result the agent sends back. Each test runs the
// agent twice: without the hook the marker dies (so the test can fail),
// and after 'aisan install-hook' it survives and the tool result carries
// the guard's reason.

// agentBin finds an agent CLI installed by tests/env/npm.sh.
func agentBin(t *testing.T, name string) string {
	t.Helper()
	dir := os.Getenv("AISAN_NODE_MODULES")
	if dir == "" {
		need(t, name, errors.New("AISAN_NODE_MODULES is not set (make test installs the agents with tests/env/npm.sh)"))
	}
	bin := filepath.Join(dir, ".bin", name)
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		err = fmt.Errorf("%s --version: %w: %s", bin, err, bytes.TrimSpace(out))
	}
	need(t, name, err)
	t.Logf("%s", bytes.TrimSpace(out))
	return bin
}

// marker is a process whose command line holds a name unique to the test,
// for the agent to try to pkill.
type marker struct {
	name string
	pid  int
}

func startMarker(t *testing.T) marker {
	t.Helper()
	var b [6]byte
	rand.Read(b[:])
	name := "aisanmarker_" + hex.EncodeToString(b[:])
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(sleep)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path, "300")
	background(t, cmd)
	m := marker{name: name, pid: cmd.Process.Pid}
	waitFor(t, 5*time.Second, "the marker process to start", m.alive)
	return m
}

// alive reports whether the marker still runs (a zombie has died).
func (m marker) alive() bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", m.pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	return i > 0 && i+2 < len(stat) && stat[i+2] != 'Z' && stat[i+2] != 'X'
}

// killCommand is the tool call the stand-in model asks for. The brackets
// keep pkill from matching the shell that runs it.
func (m marker) killCommand() string {
	return fmt.Sprintf("pkill -f '[%s]%s'", m.name[:1], m.name[1:])
}

// leanGuard is the aisan-guard installed beside the aisan under test.
func leanGuard(t *testing.T) string {
	t.Helper()
	return beside(t, "aisan-guard")
}

// beside is the program name installed beside the aisan under test (as
// tests/env/build.sh and make install lay them out).
func beside(t *testing.T, name string) string {
	t.Helper()
	bin, err := filepath.EvalSymlinks(aisanBin)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(filepath.Dir(bin), name)
	_, err = os.Stat(p)
	need(t, name+" next to the aisan under test (tests/env/it.sh builds it there)", err)
	return p
}

// guardReasons runs the guard the way an agent would on command and
// returns what it tells the agent: the first line of the deny JSON's reason
// and of its stderr (an agent shows one or the other on exit 2), so the
// tests follow the guard's wording.
func guardReasons(t *testing.T, command string) []string {
	t.Helper()
	return guardReasonsIn(t, "", command)
}

// guardReasonsIn is guardReasons for a guard running in slot (as
// $AISAN_JAIL), or outside any jail for "".
func guardReasonsIn(t *testing.T, slot, command string) []string {
	t.Helper()
	var env []string
	if slot != "" {
		env = []string{"AISAN_JAIL=" + slot}
	}
	in, _ := json.Marshal(map[string]any{
		"session_id":      "e2e",
		"cwd":             t.TempDir(),
		"hook_event_name": "PreToolUse",
		"tool_name":       "Bash",
		"tool_input":      map[string]any{"command": command},
	})
	r := aisan(t, env, string(in), "guard")
	// The lean binary, which the installed hook runs, answers the same.
	if lean := runCmd(t, "", env, string(in), leanGuard(t)); lean != r {
		t.Fatalf("aisan-guard and aisan guard differ on %q:\naisan guard: %+v\naisan-guard: %+v", command, r, lean)
	}
	if r.code != 2 {
		t.Fatalf("aisan guard on %q: exit %d, want 2 (deny)\nstdout: %s\nstderr: %s", command, r.code, r.stdout, r.stderr)
	}
	var out struct {
		HookSpecificOutput struct {
			PermissionDecision       string `json:"permissionDecision"`
			PermissionDecisionReason string `json:"permissionDecisionReason"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("aisan guard printed no deny JSON: %v\nstdout: %s", err, r.stdout)
	}
	reason := firstLine(out.HookSpecificOutput.PermissionDecisionReason)
	if out.HookSpecificOutput.PermissionDecision != "deny" || reason == "" {
		t.Fatalf("aisan guard on %q: %s, want a deny with a reason", command, r.stdout)
	}
	reasons := []string{reason}
	if line := firstLine(r.stderr); line != "" && line != reason {
		reasons = append(reasons, line)
	}
	return reasons
}

// firstLine is the part of a reason the tests look for in a tool result:
// agents may wrap or trim what follows.
func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(s)
}

func carriesReason(result string, reasons []string) bool {
	for _, r := range reasons {
		if strings.Contains(result, r) {
			return true
		}
	}
	return false
}

// standIn is a stand-in model API: it asks for shell tool calls, one
// command per turn in order, then ends the turn, and keeps what the agent
// sent back for each.
type standIn struct {
	t        *testing.T
	commands []string
	srv      *httptest.Server

	mu      sync.Mutex
	results []*string // the agent's answer to each call, once it came
	seen    []string
}

// callID is the id of the stand-in's tool call i (from 0).
func callID(i int) string { return fmt.Sprintf("toolu_aisan_e2e_%d", i+1) }

// newStandIn is a stand-in that asks for one tool call, command.
func newStandIn(t *testing.T, command string, api func(s *standIn, w http.ResponseWriter, r *http.Request, body []byte)) *standIn {
	return newScriptedStandIn(t, []string{command}, api)
}

// newScriptedStandIn is a stand-in that asks for one tool call per command,
// each after the result of the one before came back.
func newScriptedStandIn(t *testing.T, commands []string, api func(s *standIn, w http.ResponseWriter, r *http.Request, body []byte)) *standIn {
	s := &standIn{t: t, commands: commands, results: make([]*string, len(commands))}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.seen = append(s.seen, r.Method+" "+r.URL.Path)
		s.mu.Unlock()
		api(s, w, r, body)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// note adds a remark to the request log.
func (s *standIn) note(remark string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.seen); n > 0 {
		s.seen[n-1] += " " + remark
	}
}

// result is the agent's answer to the first call.
func (s *standIn) result() (string, bool) { return s.resultOf(0) }

// resultOf is the agent's answer to call i.
func (s *standIn) resultOf(i int) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.results[i] == nil {
		return "", false
	}
	return *s.results[i], true
}

// record keeps the result of the call with the given id, if it is ours.
func (s *standIn) record(id, result string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.results {
		if callID(i) == id {
			s.results[i] = &result
		}
	}
}

// next is the index of the first call not answered yet, and its command;
// ok is false once every call was answered.
func (s *standIn) next() (i int, command string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, r := range s.results {
		if r == nil {
			return i, s.commands[i], true
		}
	}
	return len(s.results), "", false
}

func (s *standIn) requests() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.seen, ", ")
}

// sse writes server-sent events, one per (event, data) pair.
func sse(w http.ResponseWriter, events ...any) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	for i := 0; i+1 < len(events); i += 2 {
		data, _ := json.Marshal(events[i+1])
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", events[i], data)
	}
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// anthropicAPI speaks the Anthropic Messages API as Claude Code uses it:
// HEAD / as a connectivity check, then streamed POST /v1/messages.
func anthropicAPI(s *standIn, w http.ResponseWriter, r *http.Request, body []byte) {
	if r.Method == http.MethodHead || r.Method == http.MethodGet && r.URL.Path == "/" {
		return
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		http.NotFound(w, r)
		return
	}
	var req struct {
		Stream   bool `json:"stream"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	// Our tool result, if this request carries it.
	for _, m := range req.Messages {
		var blocks []struct {
			Type      string          `json:"type"`
			ToolUseID string          `json:"tool_use_id"`
			Content   json.RawMessage `json:"content"`
			IsError   bool            `json:"is_error"`
		}
		if m.Role != "user" || json.Unmarshal(m.Content, &blocks) != nil {
			continue
		}
		for _, b := range blocks {
			if b.Type == "tool_result" {
				s.record(b.ToolUseID, fmt.Sprintf("is_error=%v %s", b.IsError, contentText(b.Content)))
			}
		}
	}
	step, command, pending := s.next()
	// A command "tool:NAME {json}" calls tool NAME (an MCP server's, say)
	// with that input instead of running a shell command.
	toolName := "Bash"
	input, _ := json.Marshal(map[string]string{"command": command, "description": "Run the given command"})
	if rest, ok := strings.CutPrefix(command, "tool:"); ok {
		n, in, _ := strings.Cut(rest, " ")
		toolName, input = n, []byte(in)
	}
	hasBash := false
	for _, tool := range req.Tools {
		hasBash = hasBash || tool.Name == toolName
	}
	id := "msg_aisan_e2e"
	usage := map[string]any{"input_tokens": 10, "output_tokens": 1}
	start := map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage,
	}}
	if hasBash && pending {
		if !req.Stream {
			writeJSON(w, map[string]any{"id": id, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
				"content":     []any{map[string]any{"type": "tool_use", "id": callID(step), "name": toolName, "input": json.RawMessage(input)}},
				"stop_reason": "tool_use", "stop_sequence": nil, "usage": usage})
			return
		}
		sse(w,
			"message_start", start,
			"content_block_start", map[string]any{"type": "content_block_start", "index": 0,
				"content_block": map[string]any{"type": "tool_use", "id": callID(step), "name": toolName, "input": map[string]any{}}},
			"content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": string(input)}},
			"content_block_stop", map[string]any{"type": "content_block_stop", "index": 0},
			"message_delta", map[string]any{"type": "message_delta",
				"delta": map[string]any{"stop_reason": "tool_use", "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 20}},
			"message_stop", map[string]any{"type": "message_stop"},
		)
		return
	}
	const text = "Done."
	if !req.Stream {
		writeJSON(w, map[string]any{"id": id, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
			"content":     []any{map[string]any{"type": "text", "text": text}},
			"stop_reason": "end_turn", "stop_sequence": nil, "usage": usage})
		return
	}
	sse(w,
		"message_start", start,
		"content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "text", "text": ""}},
		"content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "text_delta", "text": text}},
		"content_block_stop", map[string]any{"type": "content_block_stop", "index": 0},
		"message_delta", map[string]any{"type": "message_delta",
			"delta": map[string]any{"stop_reason": "end_turn", "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 2}},
		"message_stop", map[string]any{"type": "message_stop"},
	)
}

// contentText flattens a tool result as both APIs send it back: a string,
// or a list of blocks with text (Anthropic's tool_result content, the
// Responses API's function_call_output output).
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Text string `json:"text"`
	}
	json.Unmarshal(raw, &blocks)
	var parts []string
	for _, b := range blocks {
		parts = append(parts, b.Text)
	}
	return strings.Join(parts, "\n")
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// responsesAPI speaks the OpenAI Responses API as Codex uses it: streamed
// POST /v1/responses. The tool call uses whichever shell tool the request
// offers.
func responsesAPI(s *standIn, w http.ResponseWriter, r *http.Request, body []byte) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/responses" {
		http.NotFound(w, r)
		return
	}
	var req struct {
		Input []struct {
			Type   string          `json:"type"`
			CallID string          `json:"call_id"`
			Output json.RawMessage `json:"output"`
		} `json:"input"`
		Tools []struct {
			Type string `json:"type"`
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	for _, item := range req.Input {
		if item.Type == "function_call_output" {
			s.record(item.CallID, contentText(item.Output))
		}
	}
	step, command, pending := s.next()
	var tools []string
	for _, tool := range req.Tools {
		tools = append(tools, tool.Name)
	}
	call := shellCall(tools, callID(step), command)
	if call != nil && pending {
		s.note(fmt.Sprintf("(called %s)", call["name"]))
	}
	id := "resp_aisan_e2e"
	created := map[string]any{"type": "response.created", "response": map[string]any{"id": id}}
	completed := map[string]any{"type": "response.completed", "response": map[string]any{"id": id,
		"usage": map[string]any{"input_tokens": 10, "input_tokens_details": nil, "output_tokens": 1, "output_tokens_details": nil, "total_tokens": 11}}}
	if call != nil && pending {
		sse(w,
			"response.created", created,
			"response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": call},
			"response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": call},
			"response.completed", completed,
		)
		return
	}
	msg := map[string]any{"type": "message", "role": "assistant", "id": "msg_aisan_e2e",
		"content": []any{map[string]any{"type": "output_text", "text": "Done."}}}
	sse(w,
		"response.created", created,
		"response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": msg},
		"response.completed", completed,
	)
}

// shellCall is a function_call item with the given call id running
// command through the first shell tool offered, or nil.
func shellCall(tools []string, id, command string) map[string]any {
	var args any
	name := ""
	for _, n := range tools {
		switch n {
		case "exec_command":
			args = map[string]any{"cmd": command}
			if rest, ok := strings.CutPrefix(command, "escalate:"); ok {
				// A call that asks the user to run outside Codex's
				// sandbox, offering to keep its first two words as a rule.
				args = map[string]any{"cmd": rest, "sandbox_permissions": "require_escalated",
					"justification": "it writes the repository's git dir", "prefix_rule": strings.Fields(rest)[:2]}
			}
		case "shell_command":
			args = map[string]any{"command": command}
		case "shell":
			args = map[string]any{"command": []string{"bash", "-lc", command}}
		default:
			continue
		}
		name = n
		break
	}
	if name == "" {
		return nil
	}
	a, _ := json.Marshal(args)
	return map[string]any{"type": "function_call", "id": "fc_" + id, "call_id": id, "name": name, "arguments": string(a), "status": "completed"}
}

// agentRun is one run of an agent against a fresh stand-in.
type agentRun struct {
	result   string
	answered bool
	output   string
	took     time.Duration
}

func runAgent(t *testing.T, s *standIn, dir string, env []string, bin string, args ...string) agentRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdin = strings.NewReader("")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	isolate(cmd)
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // helpers it left behind
	}
	if err != nil {
		t.Fatalf("%s: %v\n%s\nrequests: %s", filepath.Base(bin), err, out.String(), s.requests())
	}
	res, ok := s.result()
	t.Logf("%s ran in %v; requests: %s", filepath.Base(bin), took.Round(time.Millisecond), s.requests())
	return agentRun{result: res, answered: ok, output: out.String(), took: took}
}

// baseEnv is the environment the agents run with: the test's HOME, PATH
// (node for codex's launcher, pkill for the tool call), and nothing of the
// user's agent configuration.
func baseEnv(home string) []string {
	return []string{
		"HOME=" + home,
		"PATH=" + os.Getenv("PATH"),
		"TMPDIR=" + os.TempDir(),
		"LANG=C.UTF-8",
	}
}

// checkRun asserts what happened to the marker and what the agent was told.
func checkRun(t *testing.T, what string, run agentRun, m marker, hooked bool, reasons []string) {
	t.Helper()
	if !run.answered {
		t.Fatalf("%s: the agent never sent the result of the tool call\n%s", what, run.output)
	}
	t.Logf("%s: tool result: %q", what, run.result)
	if !hooked {
		waitFor(t, 5*time.Second, what+": the marker to die of the unguarded pkill", func() bool { return !m.alive() })
		if carriesReason(run.result, reasons) {
			t.Fatalf("%s: the tool result carries the guard's reason without the hook", what)
		}
		return
	}
	if !m.alive() {
		t.Fatalf("%s: the marker died: the guard did not stop %q\n%s", what, m.killCommand(), run.output)
	}
	if !carriesReason(run.result, reasons) {
		t.Fatalf("%s: the tool result does not carry the guard's reason %q:\n%s", what, reasons, run.result)
	}
}

func TestHookClaude(t *testing.T) {
	claude := agentBin(t, "claude")
	for _, hooked := range []bool{false, true} {
		name := map[bool]string{false: "without-hook", true: "with-hook"}[hooked]
		t.Run(name, func(t *testing.T) {
			home, env := testEnv(t)
			m := startMarker(t)
			reasons := guardReasons(t, m.killCommand())
			s := newStandIn(t, m.killCommand(), anthropicAPI)
			agentEnv := claudeSetup(t, home, s)
			settings := filepath.Join(home, ".claude", "settings.json")
			if hooked {
				r := aisan(t, env, "", "install-hook", "--claude")
				if r.code != 0 {
					t.Fatalf("install-hook: exit %d\n%s%s", r.code, r.stdout, r.stderr)
				}
				data, _ := os.ReadFile(settings)
				t.Logf("settings.json after install-hook:\n%s", data)
				if lean := leanGuard(t); !bytes.Contains(data, []byte(`"command": "`+lean+`"`)) {
					t.Fatalf("the hook does not run the lean guard beside the aisan under test (%s)", lean)
				}
			}
			env = append(baseEnv(home), agentEnv...)
			run := runAgent(t, s, t.TempDir(), env, claude,
				"-p", "Run the shell command you are given.", "--output-format", "json", "--allowedTools", "Bash")
			checkRun(t, "claude "+name, run, m, hooked, reasons)
		})
	}
}

func TestHookCodex(t *testing.T) {
	codex := agentBin(t, "codex")
	for _, hooked := range []bool{false, true} {
		name := map[bool]string{false: "without-hook", true: "with-hook"}[hooked]
		t.Run(name, func(t *testing.T) {
			home, env := testEnv(t)
			m := startMarker(t)
			reasons := guardReasons(t, m.killCommand())
			s := newStandIn(t, m.killCommand(), responsesAPI)
			agentEnv := codexSetup(t, home, s)
			codexHome := filepath.Join(home, ".codex")
			if hooked {
				r := aisan(t, env, "", "install-hook", "--codex")
				if r.code != 0 {
					t.Fatalf("install-hook: exit %d\n%s%s", r.code, r.stdout, r.stderr)
				}
				if !strings.Contains(r.stdout, "/hooks") {
					t.Errorf("install-hook does not tell about trusting the hook in /hooks:\n%s", r.stdout)
				}
				data, _ := os.ReadFile(filepath.Join(codexHome, "hooks.json"))
				if lean := leanGuard(t); !bytes.Contains(data, []byte(`"command": "`+lean+`"`)) {
					t.Fatalf("hooks.json does not run the lean guard beside the aisan under test (%s):\n%s", lean, data)
				}
			}
			env = append(baseEnv(home), agentEnv...)
			run := runAgent(t, s, t.TempDir(), env, codex,
				"exec", "--skip-git-repo-check", "--json", "--sandbox", "danger-full-access",
				"--dangerously-bypass-hook-trust", "Run the shell command you are given.")
			checkRun(t, "codex "+name, run, m, hooked, reasons)
		})
	}
}

// TestHookInstallCLI drives install-hook and uninstall-hook through the
// binary under test: what they print, what they write, what they refuse.
func TestHookInstallCLI(t *testing.T) {
	home, env := testEnv(t)
	lean := leanGuard(t)
	claudeDir := filepath.Join(home, ".claude")
	codexDir := filepath.Join(home, ".codex")
	settings := filepath.Join(claudeDir, "settings.json")
	hooksJSON := filepath.Join(codexDir, "hooks.json")

	expect := func(r result, code int, stdout, stderr string) {
		t.Helper()
		if r.code != code || r.stdout != stdout || r.stderr != stderr {
			t.Fatalf("exit %d, want %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s\nwant:\n%s", r.code, code, r.stdout, stdout, r.stderr, stderr)
		}
	}

	// No agent directory: nothing to guess.
	expect(aisan(t, env, "", "install-hook"), 1, "",
		"aisan: error: install-hook: neither "+claudeDir+" nor "+codexDir+" exists\n"+
			"aisan: hint: to install anyway: aisan install-hook --claude (or --codex)\n")

	// Only ~/.claude exists: the default installs there only, merging.
	if err := os.Mkdir(claudeDir, 0o700); err != nil {
		t.Fatal(err)
	}
	orig := "{\n  \"model\": \"opus\"\n}\n"
	if err := os.WriteFile(settings, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	expect(aisan(t, env, "", "install-hook"), 0,
		"claude: added the guard hook to "+settings+" (previous content in "+settings+".aisan-bak)\n", "")
	installed, _ := os.ReadFile(settings)
	want := "{\n  \"model\": \"opus\",\n  \"hooks\": {\n    \"PreToolUse\": [\n      {\n        \"matcher\": \"Bash\",\n" +
		"        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": \"" + lean + "\",\n" +
		"            \"timeout\": 30\n          }\n        ]\n      }\n    ]\n  }\n}\n"
	if string(installed) != want {
		t.Fatalf("settings.json:\n%s\nwant:\n%s", installed, want)
	}
	if bak, _ := os.ReadFile(settings + ".aisan-bak"); string(bak) != orig {
		t.Fatalf("backup holds %q, want %q", bak, orig)
	}

	// Again: nothing to do, and it says so.
	expect(aisan(t, env, "", "install-hook"), 0,
		"claude: the guard hook is already in "+settings+"; nothing changed\n", "")

	// Codex on request, with the trust note.
	expect(aisan(t, env, "", "install-hook", "--codex"), 0,
		"codex: created "+hooksJSON+" with the guard hook\n"+
			"codex: codex skips a new or changed hook until you trust it: open /hooks in codex and approve it (managed hooks are trusted by policy)\n", "")

	// Uninstall takes ours back out of both.
	expect(aisan(t, env, "", "uninstall-hook"), 0,
		"claude: removed the guard hook from "+settings+" (previous content in "+settings+".aisan-bak)\n"+
			"codex: removed the guard hook from "+hooksJSON+" (previous content in "+hooksJSON+".aisan-bak)\n", "")
	if got, _ := os.ReadFile(settings); string(got) != orig {
		t.Fatalf("after uninstall-hook:\n%s\nwant:\n%s", got, orig)
	}

	// A file that is not JSON is refused, untouched, with where.
	broken := "{\n  \"model\": \"opus\", // mine\n}\n"
	if err := os.WriteFile(settings, []byte(broken), 0o600); err != nil {
		t.Fatal(err)
	}
	refusedClaude := "aisan: error: claude: editing \"" + settings + "\": line 2, column 20: invalid character '/' looking for beginning of object key string\n" +
		"aisan: hint: the file was left untouched: fix it (JSON allows no comments or trailing commas) and run the command again\n"
	expect(aisan(t, env, "", "install-hook", "--claude"), 1, "", refusedClaude)
	untouched := func(path, content string) {
		t.Helper()
		if got, _ := os.ReadFile(path); string(got) != content {
			t.Fatalf("the refused file %s changed:\n%s", path, got)
		}
		if bak, _ := os.ReadFile(path + ".aisan-bak"); string(bak) == content {
			t.Fatalf("a backup of the refused file %s was written", path)
		}
	}
	untouched(settings, broken)

	// Each agent is reported on its own: a broken Claude file does not
	// cost Codex its hook, and the exit status says something failed.
	expect(aisan(t, env, "", "install-hook"), 1,
		"codex: added the guard hook to "+hooksJSON+" (previous content in "+hooksJSON+".aisan-bak)\n"+
			"codex: codex skips a new or changed hook until you trust it: open /hooks in codex and approve it (managed hooks are trusted by policy)\n",
		refusedClaude)
	untouched(settings, broken)
	if data, _ := os.ReadFile(hooksJSON); !bytes.Contains(data, []byte(`"command": "`+lean+`"`)) {
		t.Fatalf("codex's hooks.json has no hook after the run that refused claude's file:\n%s", data)
	}
	expect(aisan(t, env, "", "uninstall-hook"), 1,
		"codex: removed the guard hook from "+hooksJSON+" (previous content in "+hooksJSON+".aisan-bak)\n",
		"aisan: error: claude: editing \""+settings+"\": line 2, column 20: invalid character '/' looking for beginning of object key string\n"+
			"aisan: hint: the file was left untouched: fix it (JSON allows no comments or trailing commas) and run the command again\n")
	untouched(settings, broken)

	// And the other way round: a broken hooks.json, a good settings.json.
	if err := os.WriteFile(settings, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	brokenCodex := "{\"hooks\": {\"PreToolUse\": [],}}\n"
	if err := os.WriteFile(hooksJSON, []byte(brokenCodex), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Remove(hooksJSON + ".aisan-bak")
	expect(aisan(t, env, "", "install-hook"), 1,
		"claude: added the guard hook to "+settings+" (previous content in "+settings+".aisan-bak)\n",
		"aisan: error: codex: editing \""+hooksJSON+"\": line 1, column 29: invalid character '}' looking for beginning of object key string\n"+
			"aisan: hint: the file was left untouched: fix it (JSON allows no comments or trailing commas) and run the command again\n")
	untouched(hooksJSON, brokenCodex)
	if got, _ := os.ReadFile(settings); string(got) != want {
		t.Fatalf("settings.json after the run that refused codex's file:\n%s\nwant:\n%s", got, want)
	}

	expect(aisan(t, env, "", "install-hook", "extra"), 2, "",
		"aisan: error: install-hook: unexpected argument \"extra\"\n"+
			"aisan: hint: run 'aisan install-hook --help' for usage\n")
}

// TestHookInstallForms: install-hook registers the lean guard only when it
// is a usable file beside the installing aisan, and otherwise falls back to
// 'aisan guard' (saying why when a file is there); installing one form over
// the other replaces it, and the installed command refuses a pkill when
// run the way the agents run it.
func TestHookInstallForms(t *testing.T) {
	home, env := testEnv(t)
	lean := leanGuard(t)
	if err := os.Mkdir(filepath.Join(home, ".claude"), 0o700); err != nil {
		t.Fatal(err)
	}
	settings := filepath.Join(home, ".claude", "settings.json")
	dir := t.TempDir()
	alone := filepath.Join(dir, "aisan")
	copyExec(t, aisanBin, alone, 0o755)
	// The front hands install-hook to aisan-full beside it, which
	// registers its own guard subcommand: the hook never goes through the
	// front.
	full := filepath.Join(dir, "aisan-full")
	copyExec(t, beside(t, "aisan-full"), full, 0o755)
	commands := func() []string {
		t.Helper()
		data, err := os.ReadFile(settings)
		if err != nil {
			t.Fatal(err)
		}
		var s struct {
			Hooks struct {
				PreToolUse []struct {
					Hooks []struct{ Command string }
				}
			}
		}
		if err := json.Unmarshal(data, &s); err != nil {
			t.Fatalf("settings.json: %v\n%s", err, data)
		}
		var out []string
		for _, g := range s.Hooks.PreToolUse {
			for _, h := range g.Hooks {
				out = append(out, h.Command)
			}
		}
		return out
	}
	refuses := func(command string) {
		t.Helper()
		r := runCmd(t, "", env, `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"pkill -f node"}}`, "/bin/sh", "-c", command)
		if r.code != 2 || !strings.Contains(r.stdout, `"permissionDecision":"deny"`) {
			t.Fatalf("sh -c %q on a pkill: exit %d, stdout %s, stderr %s; want a deny", command, r.code, r.stdout, r.stderr)
		}
	}
	check := func(r result, stderr string, want ...string) {
		t.Helper()
		if r.code != 0 || r.stderr != stderr {
			t.Fatalf("install-hook: exit %d, stderr %q; want 0, %q", r.code, r.stderr, stderr)
		}
		if got := commands(); !slices.Equal(got, want) {
			t.Fatalf("hook commands %q, want %q", got, want)
		}
	}

	// No lean guard beside this aisan: its guard subcommand.
	r := runCmd(t, "", env, "", alone, "install-hook", "--claude")
	check(r, "", full+" guard")
	refuses(full + " guard")

	// One that is not executable is passed over, and named.
	guardFile := filepath.Join(dir, "aisan-guard")
	copyExec(t, lean, guardFile, 0o644)
	r = runCmd(t, "", env, "", alone, "install-hook", "--claude")
	check(r, "aisan: note: the hook runs 'aisan guard', which starts slower than the lean guard: "+guardFile+" is not executable: permission denied\n", full+" guard")

	// Made executable, it replaces the subcommand in place.
	if err := os.Chmod(guardFile, 0o755); err != nil {
		t.Fatal(err)
	}
	r = runCmd(t, "", env, "", alone, "install-hook", "--claude")
	check(r, "", guardFile)
	refuses(guardFile)

	// Another aisan's install replaces that lean guard with its own.
	check(aisan(t, env, "", "install-hook", "--claude"), "", lean)
	refuses(lean)

	// And the copy without a lean guard takes it back to the subcommand.
	os.Remove(guardFile)
	check(runCmd(t, "", env, "", alone, "install-hook", "--claude"), "", full+" guard")

	if r := aisan(t, env, "", "uninstall-hook", "--claude"); r.code != 0 {
		t.Fatalf("uninstall-hook: exit %d: %s", r.code, r.stderr)
	}
	if got := commands(); len(got) != 0 {
		t.Fatalf("after uninstall-hook: %q", got)
	}
}

// copyExec copies the file src to dst with mode perm.
func copyExec(t *testing.T, src, dst string, perm os.FileMode) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dst, perm); err != nil {
		t.Fatal(err)
	}
}
