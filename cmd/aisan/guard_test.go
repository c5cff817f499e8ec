package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aisan-dev/aisan/jail/jailtest"
	"github.com/creack/pty"
)

// buildAisan builds the aisan binary into a temporary directory.
func buildAisan(t *testing.T) string {
	t.Helper()
	return buildCmd(t, ".", "aisan")
}

// buildCmd builds the command in pkg (a directory relative to this one)
// into a temporary directory, as name.
func buildCmd(t *testing.T, pkg, name string) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	jailtest.Need(t, "the go command, to build "+name, err)
	bin := filepath.Join(t.TempDir(), name)
	if out, err := exec.Command(gobin, "build", "-o", bin, pkg).CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// TestGuardCLI runs the real binaries the way Claude Code and Codex do:
// 'aisan guard' and the lean aisan-guard must answer alike.
func TestGuardCLI(t *testing.T) {
	bin := buildAisan(t)
	lean := buildCmd(t, "../aisan-guard", "aisan-guard")
	for _, argv := range [][]string{{bin, "guard"}, {lean}} {
		name := filepath.Base(strings.Join(argv, " "))
		t.Run(name, func(t *testing.T) {
			t.Run("hook", func(t *testing.T) { testGuardHook(t, argv) })
			t.Run("terminal", func(t *testing.T) { testGuardTerminal(t, argv) })
		})
	}
	t.Run("usage", func(t *testing.T) { testGuardUsage(t, bin) })
	t.Run("lean usage", func(t *testing.T) { testLeanGuardUsage(t, lean) })
}

func testGuardHook(t *testing.T, argv []string) {
	claude := func(cmd string) string {
		b, _ := json.Marshal(map[string]any{
			"session_id": "abc", "transcript_path": "/home/u/.claude/projects/p/abc.jsonl", "cwd": "/home/u/p",
			"permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Bash",
			"tool_input":  map[string]any{"command": cmd, "description": "run it", "timeout": 120000, "run_in_background": false},
			"tool_use_id": "toolu_01",
		})
		return string(b)
	}
	tests := []struct {
		name       string
		stdin      string
		env        []string
		wantCode   int
		wantReason string // substring of the reason; "" for allow
	}{
		{name: "claude allow", stdin: claude("go test ./..."), wantCode: 0},
		{name: "claude deny", stdin: claude("pkill -f 'npm run dev'"), wantCode: 2,
			wantReason: "aisan guard refused `pkill -f 'npm run dev'`: pkill picks its victims by name"},
		{name: "claude nested deny", stdin: claude("cd web && sudo bash -c 'kill -9 -1'"), wantCode: 2,
			wantReason: "refused `kill -9 -1`: it signals every process you may signal (target -1)"},
		{name: "slot named", stdin: claude("killall node"), env: []string{"AISAN_JAIL=claude-7"}, wantCode: 2,
			wantReason: "ask the user to run `aisan kill claude-7` from their own shell"},
		{name: "slot generic", stdin: claude("killall node"), wantCode: 2,
			wantReason: "ask the user to run `aisan kill <slot>` from their own shell"},
		{name: "codex allow", stdin: `{"session_id":"s","transcript_path":null,"cwd":"/p","hook_event_name":"PreToolUse","model":"gpt-5","permission_mode":"default","turn_id":"t1","tool_name":"Bash","tool_use_id":"call_1","tool_input":{"command":"kill 4242"}}`,
			wantCode: 0},
		{name: "codex deny", stdin: `{"session_id":"s","transcript_path":null,"cwd":"/p","hook_event_name":"PreToolUse","model":"gpt-5","permission_mode":"default","turn_id":"t1","tool_name":"Bash","tool_use_id":"call_1","tool_input":{"command":"pgrep node | xargs kill"}}`,
			wantCode: 2, wantReason: "refused `xargs kill`: it takes its targets from a process listing"},
		{name: "codex argv deny", stdin: `{"tool_name":"shell","tool_input":{"command":["bash","-lc","killall node"]}}`,
			wantCode: 2, wantReason: "refused `killall node`"},
		{name: "write ignored", stdin: `{"hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"/p/x.sh","content":"pkill node"}}`,
			wantCode: 0},
		{name: "apply_patch ignored", stdin: `{"tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch\n+pkill node\n"}}`,
			wantCode: 0},
		{name: "malformed", stdin: `{"tool_name":"Bash","tool_input":{"command":"ls"`, wantCode: 2,
			wantReason: "aisan guard could not understand the hook input (decode hook input: unexpected end of JSON input) and refuses what it cannot check"},
		{name: "not json", stdin: "pkill node", wantCode: 2,
			wantReason: "could not understand the hook input (hook input is not a JSON object)"},
		{name: "empty", stdin: "", wantCode: 2,
			wantReason: "could not understand the hook input (hook input is empty)"},
		{name: "too large", stdin: claude(strings.Repeat("x", 1<<20)), wantCode: 2,
			wantReason: "could not read the hook input (hook input is larger than 1048576 bytes)"},
		{name: "bad command type", stdin: `{"tool_name":"Bash","tool_input":{"command":{"argv":["ls"]}}}`, wantCode: 2,
			wantReason: "tool_input.command: neither a string nor a list of strings"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Env = append(withoutEnv(os.Environ(), "AISAN_JAIL"), tt.env...)
			cmd.Stdin = strings.NewReader(tt.stdin)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatalf("run %s: %v", argv, err)
			}
			if code != tt.wantCode {
				t.Fatalf("exit code %d, want %d\nstdout: %s\nstderr: %s", code, tt.wantCode, &stdout, &stderr)
			}
			if tt.wantCode == 0 {
				if stdout.Len() != 0 || stderr.Len() != 0 {
					t.Errorf("allow printed something\nstdout: %s\nstderr: %s", &stdout, &stderr)
				}
				return
			}
			reason := checkDenyJSON(t, stdout.Bytes())
			if !strings.Contains(reason, tt.wantReason) {
				t.Errorf("reason %q does not contain %q", reason, tt.wantReason)
			}
			if got := strings.TrimSuffix(stderr.String(), "\n"); got != reason {
				t.Errorf("stderr is not the reason:\n\tstderr %q\n\treason %q", got, reason)
			}
		})
	}
}

// checkDenyJSON asserts that out is exactly the PreToolUse deny object and
// returns its reason.
func checkDenyJSON(t *testing.T, out []byte) string {
	t.Helper()
	var got struct {
		HookSpecificOutput map[string]string `json:"hookSpecificOutput"`
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("stdout is not the deny JSON: %v\n%s", err, out)
	}
	if _, err := dec.Token(); err != io.EOF {
		t.Errorf("stdout holds more than one JSON value: %s", out)
	}
	h := got.HookSpecificOutput
	if len(h) != 3 || h["hookEventName"] != "PreToolUse" || h["permissionDecision"] != "deny" || h["permissionDecisionReason"] == "" {
		t.Errorf("unexpected deny JSON: %s", out)
	}
	return h["permissionDecisionReason"]
}

func withoutEnv(env []string, name string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// testGuardTerminal: with a terminal on stdin the guard must deny at once
// instead of waiting for input that will never come.
func testGuardTerminal(t *testing.T, argv []string) {
	ptmx, tty, err := pty.Open()
	jailtest.Need(t, "a pseudo-terminal", err)
	defer ptmx.Close()
	defer tty.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin = tty
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err = cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Fatalf("%s with a terminal on stdin: %v, want exit status 2\nstderr: %s", argv, err, &stderr)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v; the guard must not wait on a terminal", d)
	}
	if reason := checkDenyJSON(t, stdout.Bytes()); !strings.Contains(reason, "stdin is a terminal") {
		t.Errorf("reason does not say stdin is a terminal: %s", reason)
	}
}

func testGuardUsage(t *testing.T, bin string) {
	out, err := exec.Command(bin, "guard", "--help").Output()
	if err != nil {
		t.Fatalf("aisan guard --help: %v", err)
	}
	if !strings.HasPrefix(string(out), "Usage: aisan guard < hook-input.json\n") {
		t.Errorf("unexpected usage:\n%s", out)
	}
	cmd := exec.Command(bin, "guard", "extra")
	cmd.Stdin = strings.NewReader(`{"tool_name":"Bash","tool_input":{"command":"ls"}}`)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Errorf("aisan guard extra: %v, want exit status 2 (a hook misconfiguration must still block)", err)
	}
	want := "aisan: error: guard: unexpected argument \"extra\"\naisan: hint: run 'aisan guard --help' for usage\n"
	if stderr.String() != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", &stderr, want)
	}
}

func testLeanGuardUsage(t *testing.T, lean string) {
	for _, flag := range []string{"-h", "-help", "--help"} {
		out, err := exec.Command(lean, flag).Output()
		if err != nil {
			t.Fatalf("aisan-guard %s: %v", flag, err)
		}
		if !strings.HasPrefix(string(out), "Usage: aisan-guard < hook-input.json\n") {
			t.Errorf("unexpected usage from %s:\n%s", flag, out)
		}
	}
	for _, args := range [][]string{{"guard"}, {"--help", "x"}, {"-x"}} {
		bad := args[len(args)-1]
		cmd := exec.Command(lean, args...)
		cmd.Stdin = strings.NewReader(`{"tool_name":"Bash","tool_input":{"command":"ls"}}`)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 {
			t.Errorf("aisan-guard %q: %v, want exit status 2 (a hook misconfiguration must still block)", args, err)
		}
		want := "aisan-guard: error: unexpected argument \"" + bad + "\"\naisan-guard: hint: run 'aisan-guard --help' for usage\n"
		if stderr.String() != want || stdout.Len() != 0 {
			t.Errorf("aisan-guard %q: stdout %q, stderr:\n%s\nwant:\n%s", args, &stdout, &stderr, want)
		}
	}
}
