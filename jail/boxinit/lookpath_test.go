package boxinit

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestLookPathAsExec: lookPath finds what os/exec's LookPath finds, with
// the same error text, except that a find through a relative PATH entry
// (exec.ErrDot) is run.
func TestLookPathAsExec(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, f := range []struct {
		name string
		mode os.FileMode
	}{{"exe", 0o755}, {"plain", 0o644}, {"bin/exe2", 0o700}, {"bin/exe", 0o755}} {
		os.MkdirAll(filepath.Dir(f.name), 0o755)
		if err := os.WriteFile(f.name, []byte("#!/bin/sh\n"), f.mode); err != nil {
			t.Fatal(err)
		}
	}
	os.Mkdir("sub", 0o755)
	abs := filepath.Join(dir, "bin")
	for _, path := range []string{"", ":", "bin", abs, "nope:" + abs, ":bin", "bin:", "./bin", abs + "/../bin", "sub:" + abs} {
		t.Setenv("PATH", path)
		for _, name := range []string{"exe", "exe2", "plain", "sub", "missing", "", ".", "..", "./exe", "bin/exe2", abs + "/exe", "./plain", "sub/"} {
			want, werr := exec.LookPath(name)
			if errors.Is(werr, exec.ErrDot) {
				werr = nil
			}
			got, err := lookPath(name)
			if got != want || (err == nil) != (werr == nil) || (err != nil && err.Error() != werr.Error()) {
				t.Errorf("PATH=%q: lookPath(%q) = %q, %v; exec.LookPath: %q, %v", path, name, got, err, want, werr)
			}
		}
	}
}
