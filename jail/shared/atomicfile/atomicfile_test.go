package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	for _, o := range []Options{{}, {Mode: 0o644, Sync: true}} {
		if err := Write(p, []byte("one"), o); err != nil {
			t.Fatal(err)
		}
		fi, _ := os.Stat(p)
		want := o.Mode
		if want == 0 {
			want = 0o600
		}
		if data, _ := os.ReadFile(p); string(data) != "one" || fi.Mode().Perm() != want {
			t.Fatalf("%+v: %q %v", o, data, fi.Mode())
		}
	}
	// A link at the target is replaced, its target untouched.
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("precious"), 0o600)
	link := filepath.Join(dir, "link")
	os.Symlink(target, link)
	if err := Write(link, []byte("new"), Options{}); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(target); string(data) != "precious" {
		t.Fatalf("wrote through the link: %q", data)
	}
	if fi, _ := os.Lstat(link); !fi.Mode().IsRegular() {
		t.Fatalf("the link was not replaced: %v", fi.Mode())
	}
	// A failing check leaves the old file and no temporary behind.
	boom := errors.New("no")
	if err := Write(p, []byte("two"), Options{BeforeRename: func() error { return boom }}); !errors.Is(err, boom) {
		t.Fatalf("check error: %v", err)
	}
	if data, _ := os.ReadFile(p); string(data) != "one" {
		t.Fatalf("the old file changed: %q", data)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 3 {
		t.Fatalf("left behind: %v", ents)
	}
	// A directory that does not exist: an error naming the file.
	if err := Write(filepath.Join(dir, "no", "f"), nil, Options{}); err == nil {
		t.Fatal("no error for a missing directory")
	}
}
