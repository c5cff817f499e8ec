package guard

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

func TestParseHookInput(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		want      HookInput
		runsShell bool
	}{
		{
			name: "claude bash",
			in: `{"session_id":"s","transcript_path":"/t.jsonl","cwd":"/p","permission_mode":"default","effort":{"level":"high"},` +
				`"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"npm test","description":"d","timeout":120000,` +
				`"run_in_background":false},"tool_use_id":"toolu_1"}`,
			want:      HookInput{Event: "PreToolUse", Tool: "Bash", Command: "npm test", HasCommand: true},
			runsShell: true,
		},
		{
			name: "codex bash",
			in: `{"session_id":"s","transcript_path":null,"cwd":"/p","hook_event_name":"PreToolUse","model":"gpt-5",` +
				`"permission_mode":"default","turn_id":"t","tool_name":"Bash","tool_use_id":"c1","tool_input":{"command":"ls"}}`,
			want:      HookInput{Event: "PreToolUse", Tool: "Bash", Command: "ls", HasCommand: true},
			runsShell: true,
		},
		{
			name:      "codex argv",
			in:        `{"tool_name":"shell","tool_input":{"command":["bash","-lc","pkill -f 'npm run'"]}}`,
			want:      HookInput{Tool: "shell", Command: `bash -lc "pkill -f 'npm run'"`, HasCommand: true},
			runsShell: true,
		},
		{
			name: "other tool",
			in:   `{"tool_name":"Write","tool_input":{"file_path":"/x","content":"pkill"}}`,
			want: HookInput{Tool: "Write"},
		},
		{
			name: "mcp tool",
			in:   `{"tool_name":"mcp__srv__run","tool_input":{"command":"pkill node"}}`,
			want: HookInput{Tool: "mcp__srv__run", Command: "pkill node", HasCommand: true},
		},
		{
			name:      "no tool name",
			in:        `{"tool_input":{"command":"pkill node"}}`,
			want:      HookInput{Command: "pkill node", HasCommand: true},
			runsShell: true,
		},
		{
			name: "nothing",
			in:   `{}`,
		},
		{
			name:      "null tool input",
			in:        `{"tool_name":"Bash","tool_input":null}`,
			want:      HookInput{Tool: "Bash"},
			runsShell: true,
		},
		{
			name:      "whitespace around",
			in:        "\n  {\"tool_name\":\"bash\",\"tool_input\":{\"command\":\"ls\"}}\n",
			want:      HookInput{Tool: "bash", Command: "ls", HasCommand: true},
			runsShell: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseHookInput([]byte(tt.in))
			if err != nil {
				t.Fatalf("ParseHookInput: %v", err)
			}
			if got != tt.want {
				t.Errorf("ParseHookInput = %+v, want %+v", got, tt.want)
			}
			if got.RunsShell() != tt.runsShell {
				t.Errorf("RunsShell() = %v, want %v", got.RunsShell(), tt.runsShell)
			}
		})
	}
}

func TestParseHookInputErrors(t *testing.T) {
	tests := []struct {
		name, in, wantErr string
	}{
		{"empty", "", "hook input is empty"},
		{"blank", " \n\t", "hook input is empty"},
		{"not json", "pkill node", "hook input is not a JSON object"},
		{"array", `["Bash"]`, "hook input is not a JSON object"},
		{"null", `null`, "hook input is not a JSON object"},
		{"nul after", "{}\x00", "decode hook input: invalid character '\\x00' at offset 2 after the top-level value"},
		{"bad escape", `{"tool_name":"\q"}`, "decode hook input: invalid character 'q' at offset 15"},
		{"short escape", `{"tool_name":"\u12"}`, `decode hook input: invalid character '"' at offset 18`},
		{"too deep", `{"a":` + strings.Repeat("[", 10001), "decode hook input: exceeded max depth"},
		{"truncated", `{"tool_name":"Bash","tool_input":{"command":"ls"`, "decode hook input: unexpected end of JSON input"},
		{"trailing", `{"tool_name":"Bash"} {}`, "decode hook input: invalid character '{' at offset 21 after the top-level value"},
		{"tool name type", `{"tool_name":7}`, `decode hook input: "tool_name" is neither a string nor null`},
		{"tool input type", `{"tool_name":"Bash","tool_input":"ls"}`, "hook input tool_input is not a JSON object"},
		{"command type", `{"tool_name":"Bash","tool_input":{"command":42}}`, "decode hook input tool_input.command: neither a string nor a list of strings"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseHookInput([]byte(tt.in))
			if err == nil {
				t.Fatalf("ParseHookInput(%q) succeeded, want error %q", tt.in, tt.wantErr)
			}
			if err.Error() != tt.wantErr {
				t.Errorf("ParseHookInput(%q) error:\n\tgot  %s\n\twant %s", tt.in, err, tt.wantErr)
			}
		})
	}
}

func TestParseHookInputTooLarge(t *testing.T) {
	big := `{"tool_name":"Bash","tool_input":{"command":"` + strings.Repeat("x", MaxHookInput) + `"}}`
	_, err := ParseHookInput([]byte(big))
	if !errors.Is(err, ErrHookInputTooLarge) {
		t.Fatalf("ParseHookInput of %d bytes: error %v, want ErrHookInputTooLarge", len(big), err)
	}
	// The message spells the limit out by hand; keep it the limit.
	if want := fmt.Sprintf("hook input is larger than %d bytes", MaxHookInput); err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}

func TestDenyOutput(t *testing.T) {
	reason := "refused `pkill \"node\"` <slot> & \n more"
	out := DenyOutput(reason)
	if !strings.HasPrefix(string(out), "{") || !strings.HasSuffix(string(out), "}\n") {
		t.Fatalf("DenyOutput is not one JSON object and a newline: %q", out)
	}
	var got map[string]map[string]string
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("DenyOutput is not valid JSON: %v\n%s", err, out)
	}
	want := map[string]map[string]string{"hookSpecificOutput": {
		"hookEventName":            "PreToolUse",
		"permissionDecision":       "deny",
		"permissionDecisionReason": reason,
	}}
	if len(got) != 1 || len(got["hookSpecificOutput"]) != 3 {
		t.Errorf("DenyOutput has extra keys (Codex rejects them): %s", out)
	}
	for k, v := range want["hookSpecificOutput"] {
		if got["hookSpecificOutput"][k] != v {
			t.Errorf("hookSpecificOutput.%s = %q, want %q", k, got["hookSpecificOutput"][k], v)
		}
	}
}

func TestRunHook(t *testing.T) {
	tests := []struct {
		name       string
		stdin      io.Reader
		slot       string
		want       int
		wantReason string // substring; "" for allow
	}{
		{name: "allow", stdin: strings.NewReader(`{"tool_name":"Bash","tool_input":{"command":"go test ./..."}}`), want: HookAllow},
		{name: "deny from a file", stdin: tempFile(t, `{"tool_name":"Bash","tool_input":{"command":"kill -9 -1"}}`), want: HookDeny,
			wantReason: "refused `kill -9 -1`"},
		{name: "other tool", stdin: strings.NewReader(`{"tool_name":"Write","tool_input":{"command":"pkill node"}}`), want: HookAllow},
		{name: "deny", stdin: strings.NewReader(`{"tool_name":"Bash","tool_input":{"command":"pkill node"}}`), want: HookDeny,
			wantReason: "aisan guard refused `pkill node`"},
		{name: "slot", stdin: strings.NewReader(`{"tool_name":"Bash","tool_input":{"command":"killall node"}}`), slot: "web-1", want: HookDeny,
			wantReason: "`aisan kill web-1`"},
		{name: "malformed", stdin: strings.NewReader(`{"tool_name":`), want: HookDeny,
			wantReason: "aisan guard could not understand the hook input (decode hook input: unexpected end of JSON input) and refuses what it cannot check"},
		{name: "read error", stdin: iotest.ErrReader(errors.New("EIO")), want: HookDeny,
			wantReason: "aisan guard could not read the hook input (read stdin: EIO) and refuses what it cannot check"},
		{name: "too large", stdin: strings.NewReader(strings.Repeat(" ", MaxHookInput+1)), want: HookDeny,
			wantReason: "could not read the hook input (hook input is larger than 1048576 bytes)"},
		{name: "too large from a file", stdin: tempFile(t, strings.Repeat(" ", MaxHookInput+1)), want: HookDeny,
			wantReason: "could not read the hook input (hook input is larger than 1048576 bytes)"},
		{name: "internal error", stdin: panickyFile{}, want: HookDeny,
			wantReason: "aisan guard failed with an internal error (no descriptor) and refuses what it cannot check"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			got := RunHook(tt.stdin, &stdout, &stderr, tt.slot)
			if got != tt.want {
				t.Fatalf("RunHook = %d, want %d\nstdout: %s\nstderr: %s", got, tt.want, stdout.String(), stderr.String())
			}
			if tt.want == HookAllow {
				if stdout.Len()+stderr.Len() != 0 {
					t.Errorf("allow wrote output\nstdout: %s\nstderr: %s", stdout.String(), stderr.String())
				}
				return
			}
			var out struct {
				HookSpecificOutput struct {
					PermissionDecision       string `json:"permissionDecision"`
					PermissionDecisionReason string `json:"permissionDecisionReason"`
				} `json:"hookSpecificOutput"`
			}
			if err := json.Unmarshal([]byte(stdout.String()), &out); err != nil || out.HookSpecificOutput.PermissionDecision != "deny" {
				t.Fatalf("stdout is not a deny (%v): %s", err, stdout.String())
			}
			reason := out.HookSpecificOutput.PermissionDecisionReason
			if !strings.Contains(reason, tt.wantReason) {
				t.Errorf("reason %q does not contain %q", reason, tt.wantReason)
			}
			if stderr.String() != reason+"\n" {
				t.Errorf("stderr %q is not the reason %q", stderr.String(), reason)
			}
		})
	}
}

// tempFile is an open file holding content, as stdin redirected from a
// file is.
func tempFile(t *testing.T, content string) *os.File {
	t.Helper()
	p := t.TempDir() + "/input.json"
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// panickyFile looks like a file but has no descriptor to give.
type panickyFile struct{}

func (panickyFile) Read([]byte) (int, error) { return 0, io.EOF }
func (panickyFile) Fd() uintptr              { panic("no descriptor") }

// TestHookReadTimeout: a pipe held open ends the wait at the bound, input
// written in pieces is read whole, and the end of input ends the read.
func TestHookReadTimeout(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	w.Write([]byte(`{"tool_name":"Bash"`)) // and never close
	start := time.Now()
	_, err = readHookInput(r, 50*time.Millisecond)
	if err == nil || err.Error() != "no end of input on stdin after 50ms" {
		t.Errorf("readHookInput on a pipe held open: %v", err)
	}
	if d := time.Since(start); d < 50*time.Millisecond || d > 2*time.Second {
		t.Errorf("readHookInput gave up after %v, want 50ms", d)
	}
	var stdout, stderr strings.Builder
	if code := runHook(r, &stdout, &stderr, "", 50*time.Millisecond); code != HookDeny ||
		!strings.Contains(stderr.String(), "could not read the hook input (no end of input on stdin after 50ms)") {
		t.Errorf("runHook on a pipe held open: %d, stderr %q", code, stderr.String())
	}

	r2, w2, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	want := `{"tool_name":"Bash","tool_input":{"command":"` + strings.Repeat("x", 10000) + `"}}`
	go func() {
		for i := 0; i < len(want); i += 3000 {
			w2.Write([]byte(want[i:min(i+3000, len(want))]))
			time.Sleep(5 * time.Millisecond)
		}
		w2.Close()
	}()
	got, err := readHookInput(r2, 5*time.Second)
	if err != nil || string(got) != want {
		t.Errorf("readHookInput of input in pieces: %d bytes, %v; want %d bytes", len(got), err, len(want))
	}
}
