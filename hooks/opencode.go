package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// opencodeDenied are the bash permission patterns a jailed opencode is
// refused. opencode's "pkill *" also matches a bare "pkill".
var opencodeDenied = []string{"pkill *", "killall *"}

// OpencodePermission returns the value of OPENCODE_PERMISSION for a jailed
// opencode: existing (the user's value, "" when unset) with the bash
// patterns "pkill *" and "killall *" denied. opencode has no command
// hooks; its permission rules are what it offers instead.
//
// opencode evaluates rules in the order written and the last match wins, so
// the deny patterns go last in the bash rules: a bash action that was a
// single string becomes {"*": action, ...denies}, and patterns of ours the
// user had already set are moved to the end. A string for the whole
// permission becomes {"*": action, "bash": {...}}. Everything else is kept
// in order. The result is compact JSON.
//
// opencode merges this variable over the permission block of its config
// files, keeping their key order, so a config rule placed after "bash" can
// still outrank these denies: like the Claude Code and Codex hooks, this is
// an explanation for the agent, and the jail is the boundary.
//
// An existing value that is not JSON, or not an object or a string, is an
// error: the caller should refuse to start rather than drop the user's
// rules or ours.
func OpencodePermission(existing string) (string, error) {
	src := bytes.TrimSpace([]byte(existing))
	root := &object{}
	bash := &object{}
	if len(src) > 0 {
		if err := checkSyntax(src); err != nil {
			return "", fmt.Errorf("parsing OPENCODE_PERMISSION: %w", err)
		}
		switch src[0] {
		case '"':
			// One action for every tool, bash included: the bash object
			// below would otherwise shadow it wherever opencode's
			// merge puts "*".
			root.set(-1, "*", json.RawMessage(src))
			bash.set(-1, "*", json.RawMessage(src))
		case '{':
			var err error
			if root, err = parseObject(src); err != nil {
				return "", fmt.Errorf("parsing OPENCODE_PERMISSION: %w", err)
			}
		default:
			return "", fmt.Errorf("OPENCODE_PERMISSION is %s, want an object or a string", kind(src))
		}
	}
	at, err := root.lookup("bash")
	if err != nil {
		return "", fmt.Errorf("in OPENCODE_PERMISSION: %w", err)
	}
	switch {
	case at >= 0 && root.members[at].value[0] == '{':
		if bash, err = parseObject(root.members[at].value); err != nil {
			return "", err
		}
		for _, p := range opencodeDenied {
			i, err := bash.lookup(p)
			if err != nil {
				return "", fmt.Errorf(`in OPENCODE_PERMISSION "bash": %w`, err)
			}
			if i >= 0 {
				bash.remove(i)
			}
		}
	case at >= 0 && root.members[at].value[0] == '"':
		bash.set(-1, "*", root.members[at].value)
	case at >= 0:
		return "", fmt.Errorf(`OPENCODE_PERMISSION "bash" is %s, want an object or a string`, kind(root.members[at].value))
	}
	for _, p := range opencodeDenied {
		bash.set(-1, p, json.RawMessage(`"deny"`))
	}
	compact := layout{}
	root.set(at, "bash", compact.encodeObject(bash, 0))
	var b bytes.Buffer
	if err := json.Compact(&b, compact.encodeObject(root, 0)); err != nil {
		return "", err
	}
	return b.String(), nil
}
