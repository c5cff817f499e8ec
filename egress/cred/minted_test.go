package cred_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aisan-dev/aisan/egress/cred"
)

// clock is a settable time.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestMintedRenewsAhead: a token near its expiry is renewed in the
// background while callers keep getting the current one at once; no
// caller waits for a mint while a usable token exists, and concurrent
// callers share one mint.
func TestMintedRenewsAhead(t *testing.T) {
	c := &clock{t: time.Unix(1_000_000, 0)}
	var mints atomic.Int64
	release := make(chan struct{}, 10)
	m := &cred.Minted{Now: c.now, Margin: 5 * time.Minute, Mint: func(ctx context.Context) (cred.Secret, time.Time, error) {
		n := mints.Add(1)
		if n > 1 {
			<-release // a slow mint: nobody may wait for it
		}
		return cred.NewSecret("tok-" + string(rune('0'+n))), c.now().Add(time.Hour), nil
	}}
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if tok, err := m.Token(context.Background()); err != nil || tok.Reveal() != "tok-1" {
				t.Errorf("%q %v", tok.Reveal(), err)
			}
		})
	}
	wg.Wait()
	if n := mints.Load(); n != 1 {
		t.Fatalf("%d mints for 20 callers", n)
	}
	c.add(56 * time.Minute) // 4 minutes left: inside the margin
	start := time.Now()
	for range 5 {
		if tok, err := m.Token(context.Background()); err != nil || tok.Reveal() != "tok-1" {
			t.Errorf("during the renewal: %q %v", tok.Reveal(), err)
		}
	}
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Errorf("callers waited %v for a background mint", d)
	}
	release <- struct{}{}
	deadline := time.Now().Add(5 * time.Second)
	for {
		tok, _ := m.Token(context.Background())
		if tok.Reveal() == "tok-2" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the renewed token never came")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := mints.Load(); n != 2 {
		t.Errorf("%d mints, want 2", n)
	}
}

// TestMintedFailure: with no usable token a failed mint is the caller's
// error; with one, a failed renewal keeps serving it.
func TestMintedFailure(t *testing.T) {
	c := &clock{t: time.Unix(1_000_000, 0)}
	fail := errors.New("no credentials")
	var bad atomic.Bool
	bad.Store(true)
	m := &cred.Minted{Now: c.now, Mint: func(ctx context.Context) (cred.Secret, time.Time, error) {
		if bad.Load() {
			return cred.Secret{}, time.Time{}, fail
		}
		return cred.NewSecret("tok"), c.now().Add(time.Hour), nil
	}}
	if _, err := m.Token(context.Background()); !errors.Is(err, fail) {
		t.Fatalf("got %v", err)
	}
	bad.Store(false)
	if tok, err := m.Token(context.Background()); err != nil || tok.Reveal() != "tok" {
		t.Fatalf("%q %v", tok.Reveal(), err)
	}
	bad.Store(true)
	c.add(58 * time.Minute)
	for range 3 {
		if tok, err := m.Token(context.Background()); err != nil || tok.Reveal() != "tok" {
			t.Errorf("a failed renewal lost the usable token: %q %v", tok.Reveal(), err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// A refused token is replaced at once.
	bad.Store(false)
	if tok, err := m.Refresh(context.Background(), cred.NewSecret("tok")); err != nil || tok.Reveal() != "tok" {
		t.Errorf("%q %v", tok.Reveal(), err)
	}
}
