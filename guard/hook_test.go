package guard

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
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
		{"truncated", `{"tool_name":"Bash","tool_input":{"command":"ls"`, "decode hook input: unexpected end of JSON input"},
		{"trailing", `{"tool_name":"Bash"} {}`, "decode hook input: invalid character '{' after top-level value"},
		{"tool name type", `{"tool_name":7}`, "decode hook input: json: cannot unmarshal number into Go struct field .tool_name of type string"},
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
