package guard

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// The hook's JSON as encoding/json reads and writes it: the reference
// that FuzzHookInput and FuzzDenyOutput hold hookjson.go to.

func parseHookReference(data []byte) (HookInput, error) {
	if len(data) > MaxHookInput {
		return HookInput{}, ErrHookInputTooLarge
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return HookInput{}, errors.New("not a JSON object")
	}
	var raw struct {
		Event     string          `json:"hook_event_name"`
		Tool      string          `json:"tool_name"`
		ToolInput json.RawMessage `json:"tool_input"`
	}
	if err := json.Unmarshal(trimmed, &raw); err != nil {
		return HookInput{}, err
	}
	in := HookInput{Event: raw.Event, Tool: raw.Tool}
	if len(raw.ToolInput) == 0 || string(raw.ToolInput) == "null" {
		return in, nil
	}
	if raw.ToolInput[0] != '{' {
		return HookInput{}, errors.New("tool_input is not a JSON object")
	}
	var ti struct {
		Command json.RawMessage `json:"command"`
	}
	if err := json.Unmarshal(raw.ToolInput, &ti); err != nil {
		return HookInput{}, err
	}
	if len(ti.Command) == 0 || string(ti.Command) == "null" {
		return in, nil
	}
	var s string
	if err := json.Unmarshal(ti.Command, &s); err == nil {
		in.Command, in.HasCommand = s, true
		return in, nil
	}
	var argv []string
	if err := json.Unmarshal(ti.Command, &argv); err != nil {
		return HookInput{}, err
	}
	for i, w := range argv {
		q, err := syntax.Quote(w, syntax.LangBash)
		if err != nil {
			return HookInput{}, err
		}
		argv[i] = q
	}
	in.Command, in.HasCommand = strings.Join(argv, " "), true
	return in, nil
}

func denyOutputReference(reason string) []byte {
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
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		panic(err)
	}
	return b.Bytes()
}
