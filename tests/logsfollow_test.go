package tests

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// echoAnthropicAPI answers every message with "Echo: " and the user's
// last words in capitals, so each turn's answer is its own.
func echoAnthropicAPI(s *standIn, w http.ResponseWriter, r *http.Request, body []byte) {
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
	last := ""
	for _, m := range req.Messages {
		if m.Role == "user" {
			last = contentText(m.Content)
		}
	}
	if i := strings.LastIndex(last, "\n"); i >= 0 {
		last = last[i+1:]
	}
	text := "Echo: " + strings.ToUpper(strings.TrimSpace(last))
	id := "msg_aisan_follow"
	sse(w,
		"message_start", map[string]any{"type": "message_start", "message": map[string]any{
			"id": id, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
			"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 10, "output_tokens": 1},
		}},
		"content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}},
		"content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": text}},
		"content_block_stop", map[string]any{"type": "content_block_stop", "index": 0},
		"message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": "end_turn", "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 2}},
		"message_stop", map[string]any{"type": "message_stop"},
	)
}

// follower is a running 'aisan logs -f', its output so far.
type follower struct {
	mu  sync.Mutex
	out strings.Builder
	cmd *exec.Cmd
}

func (f *follower) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.out.Write(p)
}

func (f *follower) String() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.ReplaceAll(f.out.String(), "\u00a0", " ")
}

// follow starts 'aisan logs -f slot'.
func follow(t *testing.T, env []string, slot string) *follower {
	t.Helper()
	f := &follower{}
	f.cmd = exec.Command(aisanBin, "logs", "-f", slot)
	f.cmd.Env = append(os.Environ(), env...)
	f.cmd.Stdout = f
	f.cmd.Stderr = f
	background(t, f.cmd)
	return f
}

// wait waits until the follower has printed each of want.
func (f *follower) wait(t *testing.T, d time.Duration, want ...string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		out := f.String()
		missing := ""
		for _, w := range want {
			if !strings.Contains(out, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("'aisan logs -f' has not printed %q after %v:\n%s", missing, d, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestLogsFollowClaudeTUI: 'aisan logs -f' beside a real, jailed Claude
// Code on a terminal prints each turn's answer while the agent runs (the
// agent's screen settles; nothing scrolls), and prints no line twice.
func TestLogsFollowClaudeTUI(t *testing.T) {
	requireJail(t)
	bin := nodeBin(t, "claude")
	home := t.TempDir()
	dir := worktree(t)
	env := claudeTUIHome(t, home, bin, dir, newScriptedStandIn(t, nil, echoAnthropicAPI))
	slot := slotName(dir, "claude")

	term, cmd := startTUI(t, dir, env, "claude")
	waitReady(t, env, "claude", slot)
	f := follow(t, env, slot)
	// One word each: Claude Code draws a space by moving the cursor over
	// it, and the terminal emulator does not always hold a blank there.
	turns := []string{"first-question", "second-question", "third-question"}
	for _, q := range turns {
		submit(t, term, env, "claude", slot, q, "Echo: "+strings.ToUpper(q))
		f.wait(t, 30*time.Second, "Echo: "+strings.ToUpper(q))
		// The interface takes keys again once it has drawn the answer.
		time.Sleep(time.Second)
	}
	if cmd.Process.Signal(syscall.Signal(0)) != nil {
		t.Fatalf("claude has exited")
	}
	typeLine(term, "/exit")
	waitExit(t, cmd)
	// The follower ends with the launch.
	done := make(chan error, 1)
	go func() { done <- f.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("aisan logs -f ended with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("aisan logs -f did not end with the launch")
	}
	out := f.String()
	t.Logf("aisan logs -f %s:\n%s", slot, out)
	for _, q := range turns {
		answer := "Echo: " + strings.ToUpper(q)
		if n := strings.Count(out, answer); n != 1 {
			t.Errorf("the answer %q was printed %d times, want once", answer, n)
		}
	}
	checkNoRepeats(t, out)
	if strings.ContainsAny(out, "\x1b\r") {
		t.Errorf("aisan logs -f printed control characters")
	}
}

// checkNoRepeats fails when a line with text follows the same line.
func checkNoRepeats(t *testing.T, out string) {
	t.Helper()
	lines := strings.Split(out, "\n")
	for i := 1; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "" && lines[i] == lines[i-1] {
			t.Errorf("line %d repeats the line before it: %q", i+1, lines[i])
		}
	}
}
