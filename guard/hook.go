package guard

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// MaxHookInput is the largest hook input, in bytes, that the guard reads.
// Larger input is refused, not truncated.
const MaxHookInput = 1 << 20

// ErrHookInputTooLarge is returned for input over [MaxHookInput] bytes.
var ErrHookInputTooLarge = fmt.Errorf("hook input is larger than %d bytes", MaxHookInput)

// HookInput is what the guard reads from a PreToolUse hook's JSON input.
// Claude Code and Codex send the same core fields; every one is optional.
type HookInput struct {
	// Event is hook_event_name, such as "PreToolUse".
	Event string
	// Tool is tool_name: "Bash" for Claude Code and Codex, "shell" and
	// similar for older Codex builds.
	Tool string
	// Command is tool_input.command. A command given as an argv list is
	// joined into one bash command line with each word quoted.
	Command string
	// HasCommand reports whether tool_input.command was present.
	HasCommand bool
}

// RunsShell reports whether the tool call runs a shell command, so that
// the guard should check Command. A call without a tool name is checked
// if it carries a command: the guard does not guess in favour of allowing.
func (in HookInput) RunsShell() bool {
	switch strings.ToLower(in.Tool) {
	case "":
		return in.HasCommand
	case "bash", "shell", "local_shell", "exec_command", "container.exec", "shell_command":
		return true
	}
	return false
}

// ParseHookInput decodes a PreToolUse hook input. Unknown fields are
// ignored; fields of the wrong type, input that is not one JSON object, and
// input over MaxHookInput bytes are errors.
func ParseHookInput(data []byte) (HookInput, error) {
	if len(data) > MaxHookInput {
		return HookInput{}, ErrHookInputTooLarge
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return HookInput{}, errors.New("hook input is empty")
	}
	if trimmed[0] != '{' {
		return HookInput{}, errors.New("hook input is not a JSON object")
	}
	var raw struct {
		Event     string          `json:"hook_event_name"`
		Tool      string          `json:"tool_name"`
		ToolInput json.RawMessage `json:"tool_input"`
	}
	if err := json.Unmarshal(trimmed, &raw); err != nil {
		return HookInput{}, fmt.Errorf("decode hook input: %w", err)
	}
	in := HookInput{Event: raw.Event, Tool: raw.Tool}
	if len(raw.ToolInput) == 0 || string(raw.ToolInput) == "null" {
		return in, nil
	}
	if raw.ToolInput[0] != '{' {
		return HookInput{}, errors.New("hook input tool_input is not a JSON object")
	}
	var ti struct {
		Command json.RawMessage `json:"command"`
	}
	if err := json.Unmarshal(raw.ToolInput, &ti); err != nil {
		return HookInput{}, fmt.Errorf("decode hook input tool_input: %w", err)
	}
	if len(ti.Command) == 0 || string(ti.Command) == "null" {
		return in, nil
	}
	cmd, err := commandLine(ti.Command)
	if err != nil {
		return HookInput{}, err
	}
	in.Command, in.HasCommand = cmd, true
	return in, nil
}

// commandLine turns tool_input.command, a string or a list of strings,
// into one bash command line.
func commandLine(raw json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var argv []string
	if err := json.Unmarshal(raw, &argv); err != nil {
		return "", errors.New("decode hook input tool_input.command: neither a string nor a list of strings")
	}
	words := make([]string, len(argv))
	for i, w := range argv {
		q, err := syntax.Quote(w, syntax.LangBash)
		if err != nil {
			return "", fmt.Errorf("quote argv word %q: %w", w, err)
		}
		words[i] = q
	}
	return strings.Join(words, " "), nil
}

// DenyOutput returns the PreToolUse hook output that refuses the tool call
// with reason, followed by a newline. Claude Code and Codex both accept it;
// it holds no other keys, since Codex rejects unknown ones.
func DenyOutput(reason string) []byte {
	type specific struct {
		HookEventName            string `json:"hookEventName"`
		PermissionDecision       string `json:"permissionDecision"`
		PermissionDecisionReason string `json:"permissionDecisionReason"`
	}
	out := struct {
		HookSpecificOutput specific `json:"hookSpecificOutput"`
	}{specific{"PreToolUse", "deny", reason}}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // keep <PID> readable
	if err := enc.Encode(out); err != nil {
		// Three strings always encode; keep the fallback valid anyway.
		return []byte(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"aisan guard refused this command"}}` + "\n")
	}
	return b.Bytes()
}
