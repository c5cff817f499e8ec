package boxinit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadEnvFile: only a regular 0600 file is read, never through a
// link, and every line must be KEY=VALUE.
func TestReadEnvFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "env")
	os.WriteFile(good, []byte("AISAN_TOKEN=abc\n\nB=x=y\n"), 0o600)
	got, err := ReadEnvFile(good)
	if err != nil || strings.Join(got, ",") != "AISAN_TOKEN=abc,B=x=y" {
		t.Fatalf("%q %v", got, err)
	}
	link := filepath.Join(dir, "link")
	os.Symlink(good, link)
	if _, err := ReadEnvFile(link); err == nil {
		t.Fatal("read through a symlink")
	}
	open := filepath.Join(dir, "open")
	os.WriteFile(open, []byte("A=1\n"), 0o644)
	if _, err := ReadEnvFile(open); err == nil || !strings.Contains(err.Error(), "0600") {
		t.Fatalf("group-readable file: %v", err)
	}
	bad := filepath.Join(dir, "bad")
	os.WriteFile(bad, []byte("A=1\nnoequals\n"), 0o600)
	if _, err := ReadEnvFile(bad); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("bad line: %v", err)
	}
}
