package guard

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"golang.org/x/sys/unix"
	"mvdan.cc/sh/v3/syntax"
)

// MaxHookInput is the largest hook input, in bytes, that the guard reads.
// Larger input is refused, not truncated.
const MaxHookInput = 1 << 20

// ErrHookInputTooLarge is returned for input over [MaxHookInput] bytes.
// The number is spelt out so that building the error costs nothing at
// start-up, which every hook run pays.
var ErrHookInputTooLarge = errors.New("hook input is larger than 1048576 bytes")

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
// input over MaxHookInput bytes are errors. It reads what encoding/json
// would read into HookInput's fields (hookjson.go).
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
	var in HookInput
	var toolInput []byte // the last tool_input, read once the whole input is known to be JSON
	r := &jsonReader{b: trimmed}
	err := r.object(func(key string) error {
		var field *string
		switch {
		case sameName(key, "hook_event_name"):
			field = &in.Event
		case sameName(key, "tool_name"):
			field = &in.Tool
		case sameName(key, "tool_input"):
			raw, err := r.skip()
			toolInput = raw
			return err
		default:
			_, err := r.skip()
			return err
		}
		s, isString, err := r.stringOrNull()
		if errors.Is(err, errNotString) {
			return fmt.Errorf("%q is neither a string nor null", key)
		}
		if isString { // null leaves the field as it was
			*field = s
		}
		return err
	})
	if r.space(); err == nil && r.i < len(r.b) {
		err = fmt.Errorf("%w after the top-level value", r.syntaxError())
	}
	if err != nil {
		return HookInput{}, fmt.Errorf("decode hook input: %w", err)
	}
	if toolInput == nil || string(toolInput) == "null" {
		return in, nil
	}
	if toolInput[0] != '{' {
		return HookInput{}, errors.New("hook input tool_input is not a JSON object")
	}
	var command []byte
	r = &jsonReader{b: toolInput}
	err = r.object(func(key string) error {
		raw, err := r.skip()
		if sameName(key, "command") {
			command = raw
		}
		return err
	})
	if err != nil {
		return HookInput{}, fmt.Errorf("decode hook input tool_input: %w", err)
	}
	if command == nil || string(command) == "null" {
		return in, nil
	}
	in.Command, err = commandLine(command)
	if err != nil {
		return HookInput{}, err
	}
	in.HasCommand = true
	return in, nil
}

// commandLine turns tool_input.command, a string or a list of strings
// (null for ""), into one bash command line.
func commandLine(raw []byte) (string, error) {
	r := &jsonReader{b: raw}
	if raw[0] == '"' {
		return r.str()
	}
	var words []string
	err := errors.New("decode hook input tool_input.command: neither a string nor a list of strings")
	if raw[0] != '[' || r.array(func() error {
		w, _, err := r.stringOrNull()
		words = append(words, w)
		return err
	}) != nil {
		return "", err
	}
	for i, w := range words {
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
	b := []byte(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":`)
	b = jsonQuote(b, reason)
	return append(b, "}}\n"...)
}

// HookReadTimeout bounds the wait for the hook input in [RunHook]. The
// agents write the input and close stdin at once; the bound only matters
// when something holds the pipe open, and it stays well under the hook's
// own timeout so that the deny lands before the agent gives up on the hook
// (which would let the call through).
const HookReadTimeout = 3 * time.Second

// Exit statuses of [RunHook]: both agents read only 2 as a block.
const (
	HookAllow = 0
	HookDeny  = 2
)

// RunHook is the whole PreToolUse hook: it reads the input from stdin (at
// most [MaxHookInput] bytes, waiting at most [HookReadTimeout] when stdin
// has a descriptor), decides with a guard named after slot ("" for none)
// and answers. On allow it writes nothing and returns [HookAllow]; on deny
// it writes [DenyOutput] to stdout and the reason to stderr and returns
// [HookDeny], the process's exit status. Every failure on the way is a
// deny, panics included, and so is a terminal on stdin, which is never
// read: someone typed the command by hand and would wait on it forever.
func RunHook(stdin io.Reader, stdout, stderr io.Writer, slot string) int {
	return runHook(stdin, stdout, stderr, slot, HookReadTimeout)
}

func runHook(stdin io.Reader, stdout, stderr io.Writer, slot string, timeout time.Duration) (code int) {
	defer func() {
		if r := recover(); r != nil {
			code = deny(stdout, stderr, fmt.Sprintf("aisan guard failed with an internal error (%v) and refuses what it cannot check", r))
		}
	}()
	if isTerminal(stdin) {
		return deny(stdout, stderr, "aisan guard reads a PreToolUse hook's JSON input on stdin, and stdin is a terminal; it is meant to be run by Claude Code or Codex (see 'aisan guard --help')")
	}
	data, err := readHookInput(stdin, timeout)
	if err != nil {
		return deny(stdout, stderr, fmt.Sprintf("aisan guard could not read the hook input (%v) and refuses what it cannot check", err))
	}
	in, err := ParseHookInput(data)
	if err != nil {
		return deny(stdout, stderr, fmt.Sprintf("aisan guard could not understand the hook input (%v) and refuses what it cannot check", err))
	}
	if !in.RunsShell() {
		return HookAllow
	}
	v := New(WithSlot(slot)).Check(in.Command)
	if v.Allow {
		return HookAllow
	}
	return deny(stdout, stderr, v.Reason)
}

// deny writes a deny in both forms the agents read: JSON on stdout, text
// on stderr. A failed write changes nothing: the exit status alone blocks.
func deny(stdout, stderr io.Writer, reason string) int {
	stdout.Write(DenyOutput(reason))
	fmt.Fprintln(stderr, reason)
	return HookDeny
}

// readHookInput reads r to EOF, at most MaxHookInput bytes, and gives up
// after timeout. A reader with a descriptor (stdin) is polled before each
// read, so the wait is bounded without a second goroutine and a timer,
// which measured about 0.1 ms more per hook run (a thread start). A reader
// without a descriptor, which only tests pass, is read with no bound.
func readHookInput(r io.Reader, timeout time.Duration) ([]byte, error) {
	f, ok := r.(interface{ Fd() uintptr })
	if !ok {
		return limitInput(io.ReadAll(io.LimitReader(r, MaxHookInput+1)))
	}
	fd := int32(f.Fd())
	deadline := time.Now().Add(timeout)
	buf := make([]byte, 0, 4096)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return nil, fmt.Errorf("no end of input on stdin after %v", timeout)
		}
		fds := []unix.PollFd{{Fd: fd, Events: unix.POLLIN}}
		// Round up, so that a wait never ends a moment early and spins.
		n, err := unix.Poll(fds, int((left+time.Millisecond-1)/time.Millisecond))
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return nil, fmt.Errorf("wait for stdin: %w", err)
		case n == 0:
			continue // the deadline check above ends it
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		m, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if len(buf) > MaxHookInput {
			return nil, ErrHookInputTooLarge
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read stdin: %w", err)
		}
	}
}

// limitInput turns what io.ReadAll returned into readHookInput's result.
func limitInput(data []byte, err error) ([]byte, error) {
	if err != nil {
		return nil, fmt.Errorf("read stdin: %w", err)
	}
	if len(data) > MaxHookInput {
		return nil, ErrHookInputTooLarge
	}
	return data, nil
}

// isTerminal reports whether r is a file descriptor open on a terminal.
// It never reads from r.
func isTerminal(r io.Reader) bool {
	f, ok := r.(interface{ Fd() uintptr })
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
