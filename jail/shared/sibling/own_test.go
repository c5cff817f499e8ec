package sibling

import (
	"os"
	"path/filepath"
	"testing"
)

// TestOwnIdentify: a program is aisan's by the file it is, whatever it is
// called and however it is reached; a file that only carries the name of
// one of aisan's binaries is not, nor a sibling aisan would not run.
func TestOwnIdentify(t *testing.T) {
	dir := t.TempDir()
	write := func(p string, mode os.FileMode) string {
		if err := os.WriteFile(p, []byte("#!/bin/sh\nexit 2\n"), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	self := write(filepath.Join(dir, "aisan-full"), 0o755)
	guard := write(filepath.Join(dir, "aisan-guard"), 0o755)
	write(filepath.Join(dir, "aisan"), 0o775) // others may write it: not trusted
	other := t.TempDir()
	copied := write(filepath.Join(other, "aisan-guard"), 0o755)
	link := filepath.Join(other, "aisan")
	if err := os.Symlink(self, link); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(other, "hard")
	if err := os.Link(guard, hard); err != nil {
		t.Fatal(err)
	}
	linkToCopy := filepath.Join(other, "via")
	if err := os.Symlink(copied, linkToCopy); err != nil {
		t.Fatal(err)
	}

	own, err := Mine(self, "aisan-guard", "aisan", "missing", "aisan-full")
	if err != nil {
		t.Fatal(err)
	}
	if got := own.Paths(); len(got) != 2 || got[0] != self || got[1] != guard {
		t.Errorf("Paths() = %q, want %q and %q, each once", got, self, guard)
	}
	for _, tt := range []struct {
		name, path, want string
		err              bool
	}{
		{"self", self, self, false},
		{"trusted sibling", guard, guard, false},
		{"sibling others may write", filepath.Join(dir, "aisan"), "", false},
		{"same name elsewhere", copied, "", false},
		{"symlink to self", link, self, false},
		{"symlink to another file", linkToCopy, "", false},
		{"hard link to the guard", hard, guard, false},
		{"missing", filepath.Join(other, "nothing"), "", true},
		{"a directory", other, "", true},
	} {
		got, err := own.Identify(tt.path)
		if got != tt.want || (err != nil) != tt.err {
			t.Errorf("%s: Identify(%s) = %q, %v; want %q, error %v", tt.name, tt.path, got, err, tt.want, tt.err)
		}
	}
}
