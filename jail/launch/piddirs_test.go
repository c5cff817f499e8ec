package launch

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/aisan-dev/aisan/jail"
)

// TestPreparePIDDirs: each per-process directory of Claude's (sessions,
// its daemon's state and sockets, its PID-named sockets) gets a fresh
// per-slot directory, and a mount point that is a symlink (planted in a
// shared directory) is left out rather than bound through.
func TestPreparePIDDirs(t *testing.T) {
	tmp := t.TempDir()
	h := jail.Host{Home: tmp, AisanHome: filepath.Join(tmp, ".aisan"), Env: []string{"HOME=" + tmp}, RuntimeDir: filepath.Join(tmp, "run")}
	for _, d := range []string{filepath.Join(tmp, ".claude"), h.RuntimeDir, filepath.Join(tmp, "elsewhere")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(tmp, "elsewhere"), filepath.Join(h.RuntimeDir, "cc-socks")); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(h.AisanHome, "pids", "s", "claude-daemon", "roster.json")
	os.MkdirAll(filepath.Dir(stale), 0o700)
	os.WriteFile(stale, []byte("{}"), 0o600)

	binds, err := preparePIDDirs(h, "s")
	if err != nil {
		t.Fatal(err)
	}
	var dsts []string
	for _, b := range binds {
		dsts = append(dsts, b.Dst)
		if !isDir(b.Src) {
			t.Errorf("%s: source %s not made", b.Dst, b.Src)
		}
	}
	want := []string{
		filepath.Join(tmp, ".claude", "sessions"),
		filepath.Join(tmp, ".claude", "daemon"),
		fmt.Sprintf("/tmp/cc-daemon-%d", os.Getuid()),
	}
	if !slices.Equal(dsts, want) {
		t.Errorf("bound over %q, want %q (the symlinked cc-socks left out)", dsts, want)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("an ended launch's daemon state survived: %v", err)
	}
}
