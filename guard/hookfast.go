package guard

// The hook input as the agents send it, read without encoding/json's
// reflection. Decoding into a struct costs a fresh process about as much
// as the rest of the hook's own work (encoding/json builds its field
// caches on first use), and the hook is a fresh process on every tool
// call. The fast path takes only input it is sure to read as
// json.Unmarshal would: valid JSON (json.Valid), the three keys spelt
// exactly and without escapes, each once, the strings either plain or
// decoded by json.Unmarshal itself. Anything else (a key that differs
// only in case, which encoding/json also matches; a duplicate; a value
// of another type; a command given as a list) goes to the decoder,
// which also words the errors. FuzzHookInputFast holds the two to the
// same answers.

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// parseHookFast reads data, a trimmed JSON object, or reports false.
func parseHookFast(data []byte) (HookInput, bool) {
	if !json.Valid(data) {
		return HookInput{}, false
	}
	top, ok := members(data, "hook_event_name", "tool_name", "tool_input")
	if !ok {
		return HookInput{}, false
	}
	var in HookInput
	if in.Event, ok = jsonString(top[0]); !ok {
		return HookInput{}, false
	}
	if in.Tool, ok = jsonString(top[1]); !ok {
		return HookInput{}, false
	}
	if top[2] == nil || string(top[2]) == "null" {
		return in, true
	}
	if top[2][0] != '{' {
		return HookInput{}, false
	}
	ti, ok := members(top[2], "command")
	if !ok {
		return HookInput{}, false
	}
	cmd := ti[0]
	if cmd == nil || string(cmd) == "null" {
		return in, true
	}
	if cmd[0] != '"' {
		return HookInput{}, false // a list of words: commandLine quotes them
	}
	if in.Command, ok = jsonString(cmd); !ok {
		return HookInput{}, false
	}
	in.HasCommand = true
	return in, true
}

// members returns the values of the named members of obj, a valid JSON
// object (nil for an absent one). ok is false when a key is escaped,
// names a member twice, or matches one only without regard to case.
func members(obj []byte, names ...string) (vals [][]byte, ok bool) {
	vals = make([][]byte, len(names))
	i := skipSpace(obj, 1)
	if obj[i] == '}' {
		return vals, true
	}
	for {
		end := stringEnd(obj, i)
		key := obj[i+1 : end-1]
		i = skipSpace(obj, end)
		i = skipSpace(obj, i+1) // the colon
		vend := valueEnd(obj, i)
		if bytes.IndexByte(key, '\\') >= 0 {
			return nil, false
		}
		for n, name := range names {
			switch {
			case string(key) == name:
				if vals[n] != nil {
					return nil, false
				}
				vals[n] = obj[i:vend]
			case strings.EqualFold(string(key), name):
				return nil, false
			}
		}
		i = skipSpace(obj, vend)
		if obj[i] == '}' {
			return vals, true
		}
		i = skipSpace(obj, i+1) // the comma
	}
}

// jsonString decodes a JSON string or null; ok is false for any other
// value. A string without escapes and in valid UTF-8 is its own value;
// the others are decoded by encoding/json, which replaces invalid UTF-8.
func jsonString(v []byte) (string, bool) {
	switch {
	case v == nil || string(v) == "null":
		return "", true
	case v[0] != '"':
		return "", false
	}
	body := v[1 : len(v)-1]
	if bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) {
		return string(body), true
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index after the string that starts at b[i].
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(b)
}

// valueEnd returns the index after the JSON value that starts at b[i],
// in valid JSON.
func valueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = stringEnd(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
		j++
	}
	return j
}
