package launch

import (
	"os"
	"path/filepath"
	"testing"
)

func TestInitBinary(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, dir string)
		lean  bool
	}{
		{"installed beside aisan", func(t *testing.T, dir string) { write(t, dir, InitName, 0o755) }, true},
		{"missing", func(t *testing.T, dir string) {}, false},
		{"not executable", func(t *testing.T, dir string) { write(t, dir, InitName, 0o644) }, false},
		{"group-writable", func(t *testing.T, dir string) { write(t, dir, InitName, 0o775) }, false},
		{"world-writable", func(t *testing.T, dir string) { write(t, dir, InitName, 0o757) }, false},
		{"a symlink", func(t *testing.T, dir string) {
			write(t, dir, "other", 0o755)
			if err := os.Symlink(filepath.Join(dir, "other"), filepath.Join(dir, InitName)); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"a directory", func(t *testing.T, dir string) {
			if err := os.Mkdir(filepath.Join(dir, InitName), 0o755); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"in a directory others may write", func(t *testing.T, dir string) {
			write(t, dir, InitName, 0o755)
			if err := os.Chmod(dir, 0o777); err != nil {
				t.Fatal(err)
			}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.Chmod(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			self := write(t, dir, "aisan", 0o755)
			tc.setup(t, dir)
			got := InitBinary(self)
			want := self
			if tc.lean {
				want = filepath.Join(dir, InitName)
			}
			if got != want {
				t.Fatalf("InitBinary = %s, want %s", got, want)
			}
		})
	}
}

func write(t *testing.T, dir, name string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/false\n"), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}
