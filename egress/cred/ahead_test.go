package cred

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestAheadRenewsInBackground(t *testing.T) {
	dir := t.TempDir()
	count := filepath.Join(dir, "count")
	script := filepath.Join(dir, "helper")
	// The second run is slow: a caller that had to wait for it would see.
	os.WriteFile(script, []byte("#!/bin/sh\necho x >> "+count+"\nn=$(wc -l < "+count+")\n[ \"$n\" -gt 1 ] && sleep 0.5\necho tok$n\n"), 0o755)
	c, err := NewCommand("test", script)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	now := time.Unix(1_000_000, 0)
	c.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	a := Ahead{C: c, Margin: 2 * time.Minute}
	ctx := context.Background()
	if s, err := a.Token(ctx); err != nil || s.Reveal() != "tok1" {
		t.Fatalf("first: %q %v", s.Reveal(), err)
	}
	mu.Lock()
	now = now.Add(PlainTTL - time.Minute) // inside the margin, still valid
	mu.Unlock()
	start := time.Now()
	if s, err := a.Token(ctx); err != nil || s.Reveal() != "tok1" {
		t.Fatalf("inside the margin: %q %v", s.Reveal(), err)
	}
	if d := time.Since(start); d > 300*time.Millisecond {
		t.Errorf("a valid token waited %v for its renewal", d)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		s, err := a.Token(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if s.Reveal() == "tok2" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the background renewal never landed")
		}
		time.Sleep(20 * time.Millisecond)
	}
	b, _ := os.ReadFile(count)
	if n := strings.Count(string(b), "x"); n != 2 {
		t.Errorf("helper ran %d times, want 2", n)
	}
}
