// Package cred holds the host-side credential sources that egress backends
// attach to requests: a helper command (run without a shell, the way git
// credential helpers are), a file, or a literal from the host environment.
// A [Secret] never prints: its String and GoString are "[redacted]", so a
// stray %v in a log or an error cannot leak it.
package cred

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/aisan-dev/aisan/jail/shared/regfile"
	"github.com/mattn/go-shellwords"
)

// Secret is a credential value. Use Reveal only where it is put on the wire.
type Secret struct{ v string }

// NewSecret wraps s.
func NewSecret(s string) Secret { return Secret{s} }

// Reveal returns the value.
func (s Secret) Reveal() string { return s.v }

// Empty reports whether there is no value.
func (s Secret) Empty() bool { return s.v == "" }

func (Secret) String() string   { return "[redacted]" }
func (Secret) GoString() string { return "[redacted]" }

// MarshalJSON keeps a Secret out of any JSON it ends up in.
func (Secret) MarshalJSON() ([]byte, error) { return []byte(`"[redacted]"`), nil }

// Source yields a credential, refreshing it as needed.
type Source interface {
	Token(ctx context.Context) (Secret, error)
}

// Refresher is a Source whose credential the upstream's refusal (a 401)
// can force to refresh. Refresh returns the token to use instead of
// stale: a refreshed one, or the one in the host's file when that already
// differs from stale (another request, process or the host CLI refreshed
// first). It returns stale itself when refreshing again cannot help (see
// ForceCooldown), so a caller retries only when the token changed.
type Refresher interface {
	Source
	Refresh(ctx context.Context, stale Secret) (Secret, error)
}

// PlainTTL is how long a token printed without an expiry is reused.
const PlainTTL = 5 * time.Minute

// maxOutput caps what a helper command may print: a token is small, and an
// endless helper must not grow our memory.
const maxOutput = 64 << 10

// Command runs a helper command that prints a token: either the token on its
// first line, or a JSON object {"token": "...", "expiry": <unix seconds>}.
// The command string is split into argv with shell-like quoting but never
// run through a shell. Tokens are cached until their expiry (a minute early)
// or for [PlainTTL]; concurrent callers share one run.
type Command struct {
	Argv    []string
	Timeout time.Duration
	// Dir is the directory it runs in; "" is the caller's.
	Dir string
	// Now is time.Now when nil; tests replace it.
	Now func() time.Time

	mu      sync.Mutex
	cached  Secret
	expires time.Time
	running chan struct{}
	lastErr error
}

// NewCommand parses line into argv. name is used in errors (for example
// "AISAN_ANTHROPIC_KEY_COMMAND" or "token_command in reapi.toml").
func NewCommand(name, line string) (*Command, error) {
	p := shellwords.NewParser()
	p.ParseEnv = false
	p.ParseBacktick = false
	argv, err := p.Parse(line)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot split %q into arguments: %w", name, line, err)
	}
	if len(argv) == 0 {
		return nil, fmt.Errorf("%s: empty command", name)
	}
	return &Command{Argv: argv, Timeout: 30 * time.Second}, nil
}

func (c *Command) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// Token returns the cached token or runs the command. Only one run happens
// at a time; callers arriving during a run wait for its result (or their
// context) outside the lock.
func (c *Command) Token(ctx context.Context) (Secret, error) {
	for {
		c.mu.Lock()
		if !c.cached.Empty() && c.now().Before(c.expires) {
			s := c.cached
			c.mu.Unlock()
			return s, nil
		}
		if c.running != nil {
			ch := c.running
			c.mu.Unlock()
			select {
			case <-ch:
			case <-ctx.Done():
				return Secret{}, ctx.Err()
			}
			c.mu.Lock()
			if err := c.lastErr; err != nil && (c.cached.Empty() || !c.now().Before(c.expires)) {
				c.mu.Unlock()
				return Secret{}, err
			}
			c.mu.Unlock()
			continue
		}
		ch := make(chan struct{})
		c.running = ch
		c.mu.Unlock()

		tok, exp, err := c.run(ctx)
		c.mu.Lock()
		c.running = nil
		c.lastErr = err
		if err == nil {
			c.cached, c.expires = tok, exp
		}
		close(ch)
		c.mu.Unlock()
		if err != nil {
			return Secret{}, err
		}
		return tok, nil
	}
}

// Invalidate drops the cached token, for example after the upstream
// answered 401 to it.
func (c *Command) Invalidate() {
	c.mu.Lock()
	c.cached, c.expires = Secret{}, time.Time{}
	c.mu.Unlock()
}

// CommandError is a credential command that failed. Its message names
// the command and how it ended; what the command printed (Output, its
// first line of standard error) is kept apart: it may quote what it was
// given or name host paths, so only the host's own log records it
// ([Detail]), never an answer to the box.
type CommandError struct {
	Name   string // the command's file name
	Err    error
	Output string
}

func (e *CommandError) Error() string {
	return fmt.Sprintf("credential command %s failed: %v", e.Name, e.Err)
}

func (e *CommandError) Unwrap() error { return e.Err }

// RefreshError is a login that could not be refreshed. Its message says
// so and what to do; the cause (the token endpoint's error, which can
// name the host's resolver, the addresses it dialled or what the
// endpoint answered) is kept apart for the host's own log ([Detail]).
type RefreshError struct {
	Msg   string
	Cause error
}

func (e *RefreshError) Error() string { return e.Msg }

func (e *RefreshError) Unwrap() error { return e.Cause }

// Detail is what err says beyond its message for the host's own log: what
// a failed credential command printed, why a refresh failed; "" when
// there is nothing more.
func Detail(err error) string {
	var ce *CommandError
	if errors.As(err, &ce) && ce.Output != "" {
		return "the command said: " + ce.Output
	}
	var re *RefreshError
	if errors.As(err, &re) && re.Cause != nil {
		return re.Cause.Error()
	}
	return ""
}

func (c *Command) run(ctx context.Context) (Secret, time.Time, error) {
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, c.Argv[0], c.Argv[1:]...)
	cmd.Dir = c.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	var out, errb limitedBuffer
	out.max, errb.max = maxOutput, 4<<10
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Stdin = nil
	if err := cmd.Run(); err != nil {
		return Secret{}, time.Time{}, &CommandError{Name: filepath.Base(c.Argv[0]), Err: err, Output: firstLine(strings.TrimSpace(errb.String()))}
	}
	tok, exp, err := ParseToken(out.Bytes(), c.now())
	if err != nil {
		return Secret{}, time.Time{}, fmt.Errorf("credential command %s: %w", filepath.Base(c.Argv[0]), err)
	}
	return tok, exp, nil
}

// ParseToken reads a helper's output: a JSON object with "token" and an
// optional "expiry" (unix seconds), or a plain token on the first line.
// The returned time is when to stop using the token (a minute before its
// expiry, or now + PlainTTL).
func ParseToken(out []byte, now time.Time) (Secret, time.Time, error) {
	trimmed := bytes.TrimSpace(out)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		var v struct {
			Token  string   `json:"token"`
			Expiry *float64 `json:"expiry"`
		}
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		if err := dec.Decode(&v); err != nil {
			return Secret{}, time.Time{}, fmt.Errorf("output is not valid JSON: %v", err)
		}
		if dec.More() {
			return Secret{}, time.Time{}, errors.New("trailing data after the JSON object")
		}
		if v.Token == "" || !validToken(v.Token) {
			return Secret{}, time.Time{}, errors.New(`JSON output has no usable "token"`)
		}
		exp := now.Add(PlainTTL)
		if v.Expiry != nil {
			exp = time.Unix(int64(*v.Expiry), 0).Add(-time.Minute)
			if !exp.After(now) {
				return Secret{}, time.Time{}, errors.New("the token it printed has already expired")
			}
		}
		return NewSecret(v.Token), exp, nil
	}
	line := firstLine(string(trimmed))
	line = strings.TrimSpace(line)
	if line == "" {
		return Secret{}, time.Time{}, errors.New("printed no token")
	}
	if !validToken(line) {
		return Secret{}, time.Time{}, errors.New("printed a token with spaces or control characters")
	}
	return NewSecret(line), now.Add(PlainTTL), nil
}

// validToken refuses what could split or forge a header.
func validToken(s string) bool {
	for _, r := range s {
		if r <= ' ' || r == 0x7f {
			return false
		}
	}
	return true
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// File reads a token from a file on every call (so a rotated file is
// picked up at once), refusing symlinks, FIFOs and large files.
type File struct{ Path string }

// Token reads the file's first line.
func (f File) Token(context.Context) (Secret, error) {
	b, err := regfile.Read(f.Path, maxOutput)
	if err != nil {
		return Secret{}, err
	}
	tok, _, err := ParseToken(b, time.Now())
	if err != nil {
		return Secret{}, fmt.Errorf("credential file %s: %w", f.Path, err)
	}
	return tok, nil
}

// Static is a fixed token (for example the host's ANTHROPIC_API_KEY).
type Static struct{ S Secret }

// Token returns the value.
func (s Static) Token(context.Context) (Secret, error) {
	if s.S.Empty() {
		return Secret{}, errors.New("no credential")
	}
	return s.S, nil
}

type limitedBuffer struct {
	bytes.Buffer
	max int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); room < len(p) {
		if room > 0 {
			b.Buffer.Write(p[:room])
		}
		return len(p), nil
	}
	return b.Buffer.Write(p)
}
