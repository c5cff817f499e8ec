package jail

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBwrapVersionCache: the version is asked once and then read from the
// cache, asked again when the binary changes, and a cache file that is a
// symlink is neither followed nor its target changed.
func TestBwrapVersionCache(t *testing.T) {
	dir := t.TempDir()
	runtime := filepath.Join(dir, "run", "aisan")
	if err := os.MkdirAll(runtime, 0o700); err != nil {
		t.Fatal(err)
	}
	count := filepath.Join(dir, "asked")
	bwrap := filepath.Join(dir, "bwrap")
	fake := func(version string) {
		script := "#!/bin/sh\necho x >> " + count + "\necho 'bubblewrap " + version + "'\n"
		if err := os.WriteFile(bwrap+".new", []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(bwrap+".new", bwrap); err != nil {
			t.Fatal(err)
		}
	}
	asked := func() int {
		data, _ := os.ReadFile(count)
		return strings.Count(string(data), "x")
	}
	fake("0.8.0")
	if v := cachedBwrapVersion(bwrap, runtime); v != [3]int{0, 8, 0} || asked() != 1 {
		t.Fatalf("first: %v, asked %d times", v, asked())
	}
	if v := cachedBwrapVersion(bwrap, runtime); v != [3]int{0, 8, 0} || asked() != 1 {
		t.Fatalf("cached: %v, asked %d times", v, asked())
	}
	// A new bwrap (another inode, another mtime) is asked.
	time.Sleep(10 * time.Millisecond)
	fake("0.11.0")
	if v := cachedBwrapVersion(bwrap, runtime); v != [3]int{0, 11, 0} || asked() != 2 {
		t.Fatalf("replaced: %v, asked %d times", v, asked())
	}
	// A symlink planted as the cache: not read, its target untouched.
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("precious"), 0o600)
	cache := filepath.Join(runtime, bwrapVersionFile)
	os.Remove(cache)
	if err := os.Symlink(target, cache); err != nil {
		t.Fatal(err)
	}
	if v := cachedBwrapVersion(bwrap, runtime); v != [3]int{0, 11, 0} || asked() != 3 {
		t.Fatalf("symlinked cache: %v, asked %d times", v, asked())
	}
	if data, _ := os.ReadFile(target); string(data) != "precious" {
		t.Fatalf("the symlink's target was written: %q", data)
	}
	// No run directory: asked each time, nothing written.
	cachedBwrapVersion(bwrap, "")
	if asked() != 4 {
		t.Fatalf("without a run dir: asked %d times", asked())
	}
	// A run directory that does not exist gets no cache, and is not made.
	other := filepath.Join(dir, "other", "run")
	cachedBwrapVersion(bwrap, other)
	if _, err := os.Stat(other); err == nil {
		t.Fatal("the cache created aisan's run dir")
	}
}

// TestRunDir: the runtime directory's "aisan" when there is one, else the
// state directory's "run"; a launch's slot directories live there.
func TestRunDir(t *testing.T) {
	tests := []struct{ runtime, home, want string }{
		{"/run/user/1000", "/home/u/.aisan", "/run/user/1000/aisan"},
		{"", "/home/u/.aisan", "/home/u/.aisan/run"},
		{"", "/srv/state", "/srv/state/run"},
	}
	for _, tt := range tests {
		h := Host{RuntimeDir: tt.runtime, AisanHome: tt.home, Cwd: "/p"}
		if got := h.RunDir(); got != tt.want {
			t.Errorf("RunDir(%q, %q) = %q, want %q", tt.runtime, tt.home, got, tt.want)
		}
		if got := filepath.Dir(h.SlotDir("s")); got != tt.want {
			t.Errorf("SlotDir(%q, %q) is in %q, want %q", tt.runtime, tt.home, got, tt.want)
		}
	}
}

// TestToolVersionPerTool: each tool has its own cache entry, so asking
// for one never answers with another's version.
func TestToolVersionPerTool(t *testing.T) {
	dir := t.TempDir()
	runtime := filepath.Join(dir, "run", "aisan")
	if err := os.MkdirAll(runtime, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, line := range map[string]string{"bwrap": "bubblewrap 0.11.0", "xdg-dbus-proxy": "xdg-dbus-proxy 0.1.6"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\necho '"+line+"'\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if got, err := ToolVersion(p, runtime); err != nil || got != line {
				t.Fatalf("%s: %q, %v; want %q", name, got, err, line)
			}
		}
		if _, err := os.Stat(filepath.Join(runtime, name+versionFileSuffix)); err != nil {
			t.Errorf("%s: no cache entry: %v", name, err)
		}
	}
}
