package cred

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"
)

// Minted serves a short-lived token that Mint makes (a Google access
// token, say), cached until shortly before its expiry. Once less than
// Margin is left, the next caller starts a new mint in the background and
// still gets the current token at once: the mint runs outside any lock a
// request waits on, and only a caller that finds no usable token at all
// waits for it (or for its own context). Concurrent callers share one
// mint.
type Minted struct {
	// Mint makes a new token and says when it expires.
	Mint func(ctx context.Context) (Secret, time.Time, error)
	// Margin is how long before the expiry a new token is minted
	// (default 5 minutes).
	Margin time.Duration
	// Now is time.Now when nil; tests replace it.
	Now func() time.Time

	mu      sync.Mutex
	tok     Secret
	exp     time.Time
	running chan struct{}
	err     error
}

// usableFor is how much life a token must have left to be handed out: a
// request must not leave with a token that dies on the way.
const usableFor = 30 * time.Second

// mintTimeout bounds one mint, which no single request owns.
const mintTimeout = time.Minute

func (m *Minted) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

func (m *Minted) margin() time.Duration {
	if m.Margin > 0 {
		return m.Margin
	}
	return 5 * time.Minute
}

// usable reports whether the cached token may be handed out (m.mu held).
func (m *Minted) usable(now time.Time) bool {
	return !m.tok.Empty() && now.Add(usableFor).Before(m.exp)
}

// Token returns a usable token, minting one if there is none.
func (m *Minted) Token(ctx context.Context) (Secret, error) {
	for waited := false; ; waited = true {
		m.mu.Lock()
		now := m.now()
		if m.usable(now) {
			tok := m.tok
			if m.running == nil && m.exp.Sub(now) < m.margin() {
				m.start()
			}
			m.mu.Unlock()
			return tok, nil
		}
		if waited {
			err := m.err
			m.mu.Unlock()
			if err == nil {
				err = errors.New("the minted token expires at once")
			}
			return Secret{}, err
		}
		if m.running == nil {
			m.start()
		}
		ch := m.running
		m.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return Secret{}, ctx.Err()
		}
	}
}

// Refresh replaces stale, a token the upstream refused, with a new one
// (see Refresher); a token that already differs from stale is returned
// as it is.
func (m *Minted) Refresh(ctx context.Context, stale Secret) (Secret, error) {
	m.mu.Lock()
	if m.tok.Reveal() == stale.Reveal() {
		m.tok, m.exp = Secret{}, time.Time{}
	}
	m.mu.Unlock()
	return m.Token(ctx)
}

// start mints in the background (m.mu held).
func (m *Minted) start() {
	ch := make(chan struct{})
	m.running = ch
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), mintTimeout)
		tok, exp, err := m.Mint(ctx)
		cancel()
		m.mu.Lock()
		m.running, m.err = nil, err
		if err == nil {
			m.tok, m.exp = tok, exp
		}
		close(ch)
		m.mu.Unlock()
	}()
}

// NoRedirectTransport is rt (nil: the default transport) turning every
// redirect answer into an error that says so (see [Redirected]): for
// clients a library drives, whose redirect policy aisan does not set.
func NoRedirectTransport(rt http.RoundTripper) http.RoundTripper {
	if rt == nil {
		rt = http.DefaultTransport
	}
	return noRedirectTransport{rt}
}

type noRedirectTransport struct{ rt http.RoundTripper }

func (t noRedirectTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if rerr := Redirected(resp); rerr != nil {
		resp.Body.Close()
		return nil, rerr
	}
	return resp, nil
}
