package cred

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestParseToken(t *testing.T) {
	now := time.Unix(1000, 0)
	for _, tc := range []struct {
		in, tok, err string
		exp          time.Time
	}{
		{in: "abc\n", tok: "abc", exp: now.Add(PlainTTL)},
		{in: "abc\nsecond line\n", tok: "abc", exp: now.Add(PlainTTL)},
		{in: `{"token":"t1","expiry":5000}`, tok: "t1", exp: time.Unix(5000-60, 0)},
		{in: `{"token":"t1"}`, tok: "t1", exp: now.Add(PlainTTL)},
		{in: `{"token":"t1","expiry":900}`, err: "expired"},
		{in: `{"token":""}`, err: "usable"},
		{in: `{"token":"a"} x`, err: "trailing"},
		{in: "", err: "no token"},
		{in: "a b\n", err: "spaces"},
	} {
		s, exp, err := ParseToken([]byte(tc.in), now)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || s.Reveal() != tc.tok || !exp.Equal(tc.exp) {
			t.Errorf("%q: got %q %v %v", tc.in, s.Reveal(), exp, err)
		}
	}
}

func TestSecretNeverPrints(t *testing.T) {
	s := NewSecret("hunter2")
	for _, out := range []string{fmt.Sprint(s), fmt.Sprintf("%v %+v %#v %s", s, s, s, s)} {
		if strings.Contains(out, "hunter2") {
			t.Fatalf("secret printed: %s", out)
		}
	}
}

func TestCommandCachesAndSharesOneRun(t *testing.T) {
	dir := t.TempDir()
	count := filepath.Join(dir, "count")
	script := filepath.Join(dir, "helper")
	os.WriteFile(script, []byte("#!/bin/sh\necho x >> "+count+"\nsleep 0.2\necho 'tok en' | tr -d ' '\n"), 0o755)
	c, err := NewCommand("test", "'"+script+"' --flag")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := c.Token(context.Background())
			if err != nil || s.Reveal() != "token" {
				t.Errorf("got %q %v", s.Reveal(), err)
			}
		}()
	}
	wg.Wait()
	if _, err := c.Token(context.Background()); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(count)
	if n := strings.Count(string(b), "x"); n != 1 {
		t.Fatalf("helper ran %d times, want 1", n)
	}
}

func TestCommandFailure(t *testing.T) {
	c, err := NewCommand("test", `sh -c 'echo nope >&2; exit 3'`)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Token(context.Background())
	// What the command printed is for the host's log only: an error's
	// message may reach the box.
	if err == nil || strings.Contains(err.Error(), "nope") || !strings.Contains(err.Error(), "credential command sh failed") || Detail(err) != "the command said: nope" {
		t.Fatalf("err = %v, detail %q", err, Detail(err))
	}
	if _, err := NewCommand("X", `"unterminated`); err == nil {
		t.Fatal("unterminated quote accepted")
	}
	if _, err := NewCommand("X", `  `); err == nil {
		t.Fatal("empty command accepted")
	}
}

func TestMissingFileToken(t *testing.T) {
	if s, err := (File{Path: filepath.Join(t.TempDir(), "nope")}).Token(context.Background()); err == nil {
		t.Fatalf("missing file gave %v", s)
	}
}
