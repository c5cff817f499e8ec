package cred

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestUnderLockHasTheFile: the refresh under the lock always gets the
// file's object to write the new tokens back into, even while requests
// that take no lock keep loading the login (and so filling the cache).
// Without it, a refresh spent the refresh token at the endpoint and then
// failed to save the new one: the user's login was lost.
func TestUnderLockHasTheFile(t *testing.T) {
	dir := t.TempDir()
	login := fmt.Sprintf(`{"claudeAiOauth":{"accessToken":"a-1","refreshToken":"r-1","expiresAt":%d}}`, time.Now().Add(time.Hour).UnixMilli())
	if err := os.WriteFile(filepath.Join(dir, ".credentials.json"), []byte(login), 0o600); err != nil {
		t.Fatal(err)
	}
	c := &ClaudeOAuth{Dir: dir}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
				c.read()
			}
		}
	}()
	defer func() { close(stop); <-done }()
	for i := range 3000 {
		l, top, _, err := c.file.underLock(c.Path(), "Claude login", c.parse, func(claudeLogin) bool { return true })
		if err != nil || top == nil || l.refresh.Reveal() != "r-1" {
			t.Fatalf("round %d: underLock gave %v, object %v (%v)", i, l.refresh, top, err)
		}
	}
}
