package guard

import (
	"errors"
	"fmt"
	"strings"
)

// Verdict is the guard's decision about one command line.
type Verdict struct {
	// Allow is true when nothing in the command was refused.
	Allow bool
	// Reason explains a refusal: what was refused, why, and the sanctioned
	// way to do the same thing. It is empty when Allow is true.
	Reason string
	// Command is the refused command as written (for text handed to
	// another shell, as written in that text). It is empty when Allow is
	// true.
	Command string
}

// Command is one simple command that the guard found would run.
type Command struct {
	// Name is the command word after quote removal. When the word is only
	// known at run time, Name is its source text and Dynamic is true.
	Name string
	// Args are the remaining words, after quote removal where the value is
	// fixed and as written where it is not.
	Args []string
	// Dynamic reports that the command word is only known at run time.
	Dynamic bool
	// Offset is the byte offset in the checked input of the command, or of
	// the word whose text held it (for sh -c and similar).
	Offset int
}

// Guard checks shell commands. The zero value is not usable; call [New].
// A Guard holds no mutable state and is safe for concurrent use.
type Guard struct {
	slot string
}

// Option configures a [Guard].
type Option func(*Guard)

// WithSlot names the aisan slot (the jail) that the checked commands run
// in. Refusals then suggest "aisan kill <slot>" with the real name. An empty
// name keeps the generic text.
func WithSlot(name string) Option {
	return func(g *Guard) { g.slot = name }
}

// New returns a Guard configured by opts.
func New(opts ...Option) *Guard {
	g := &Guard{}
	for _, o := range opts {
		o(g)
	}
	return g
}

// Check is New().Check(cmd).
func Check(cmd string) Verdict {
	return New().Check(cmd)
}

// Check decides whether the bash command line cmd may run. It never panics:
// an internal failure is reported as a refusal that says so.
func (g *Guard) Check(cmd string) (v Verdict) {
	defer func() {
		if r := recover(); r != nil {
			v = Verdict{
				Reason:  fmt.Sprintf("aisan guard hit an internal error (%v) while checking this command, and refuses what it cannot check. %s", r, g.alternative()),
				Command: cmd,
			}
		}
	}()
	return g.check(cmd)
}

// testOnlyBeforeCheck, when set by a test, runs at the start of every check.
var testOnlyBeforeCheck func(cmd string)

// check is Check without the recover, so that tests and fuzzing see panics.
func (g *Guard) check(cmd string) Verdict {
	if testOnlyBeforeCheck != nil {
		testOnlyBeforeCheck(cmd)
	}
	c := newChecker()
	c.slot = g.slot
	// The analysis is flow-insensitive: a variable filled from pgrep at the
	// end of a loop body taints its use at the top. Running the walk twice
	// lets facts learnt late reach uses seen early; facts only grow, so the
	// second pass refuses at least what the first did.
	for pass := 0; pass < 2 && c.found == nil; pass++ {
		c.top(cmd)
	}
	if c.found == nil {
		return Verdict{Allow: true}
	}
	if c.found.text == "" {
		c.found.text = cmd
	}
	return Verdict{
		Reason:  g.reason(c.found),
		Command: c.found.text,
	}
}

// Commands lists every simple command the guard examines in cmd, in the
// order it meets them, including those inside substitutions, wrappers and
// text handed to another shell. A command line that does not parse yields
// the parser's error.
func Commands(cmd string) ([]Command, error) {
	c := newChecker()
	if r := c.parse(cmd); r.err != nil {
		return nil, fmt.Errorf("parse command: %w", r.err)
	}
	c.collect = true
	c.top(cmd)
	// The first pass has already learnt the variables; the second records.
	c.cmds = nil
	c.top(cmd)
	if c.overBudget() {
		return nil, errors.New("command line is too large or too deeply nested to list")
	}
	return c.cmds, nil
}

// reason renders a finding for the agent: what was refused, why, and
// what to do instead.
func (g *Guard) reason(f *finding) string {
	if f.instead == "" {
		return fmt.Sprintf("aisan guard refused `%s`: %s. %s", shorten(f.text), f.why, g.alternative())
	}
	return fmt.Sprintf("aisan guard refused `%s`: %s. %s %s", shorten(f.text), f.why,
		strings.ReplaceAll(f.instead, "<slot>", g.slotName()), g.jailAlternative())
}

// alternative names the sanctioned ways to stop processes.
func (g *Guard) alternative() string {
	return "To stop a process you started, find its PID with `pgrep -a <pattern>` and run `kill <PID>` on that PID alone. " +
		g.jailAlternative()
}

// jailAlternative names the way to stop a whole jail.
func (g *Guard) jailAlternative() string {
	return fmt.Sprintf("To stop everything in this jail, ask the user to run `aisan kill %s` from their own shell.", g.slotName())
}

func (g *Guard) slotName() string {
	if g.slot != "" {
		return g.slot
	}
	return "<slot>"
}

// shorten squeezes whitespace and caps the length of a command for display.
func shorten(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	const max = 200
	if len(s) > max {
		cut := max
		for cut > 0 && s[cut]&0xC0 == 0x80 { // do not split a UTF-8 sequence
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
