package cred

import (
	"context"
	"time"
)

// Ahead serves a [Command]'s token and renews it before it lapses: once
// less than Margin is left, the next caller starts the helper in the
// background and still gets the current token at once. Only a caller that
// finds no valid token at all waits for the helper, so a stream never
// stalls behind a refresh it did not need.
type Ahead struct {
	C      *Command
	Margin time.Duration
}

// Token returns the cached token, starting a background renewal when it
// is close to its end, or runs the helper when there is none.
func (a Ahead) Token(ctx context.Context) (Secret, error) {
	c := a.C
	c.mu.Lock()
	if !c.cached.Empty() && c.now().Before(c.expires) {
		s := c.cached
		if c.running == nil && c.expires.Sub(c.now()) < a.Margin {
			ch := make(chan struct{})
			c.running = ch
			go c.renew(ch)
		}
		c.mu.Unlock()
		return s, nil
	}
	c.mu.Unlock()
	return c.Token(ctx)
}

// Invalidate drops the cached token.
func (a Ahead) Invalidate() { a.C.Invalidate() }

// renew runs the helper for no caller in particular: a failure keeps the
// old token, which stays good until its own expiry.
func (c *Command) renew(ch chan struct{}) {
	tok, exp, err := c.run(context.Background())
	c.mu.Lock()
	c.running = nil
	c.lastErr = err
	if err == nil {
		c.cached, c.expires = tok, exp
	}
	close(ch)
	c.mu.Unlock()
}
