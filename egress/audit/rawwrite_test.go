package audit

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestRawWrite: a raw write appends at the file's end even after another
// writer appended, a line and the log's lines stay whole, and a failed
// write is an error naming the file.
func TestRawWrite(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.log")
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if n, err := writeRaw(f, []byte("one\n")); n != 4 || err != nil {
		t.Fatalf("writeRaw = %d, %v", n, err)
	}
	os.WriteFile(p, []byte("one\nother\n"), 0o600) // another writer, from the start
	if _, err := writeRaw(f, []byte("two\n")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "one\nother\ntwo\n" {
		t.Errorf("file holds %q; the raw write did not append", b)
	}

	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full:", err)
	}
	defer full.Close()
	if _, err := writeRaw(full, []byte("x\n")); !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "/dev/full") {
		t.Errorf("a write to a full device: %v, want ENOSPC naming it", err)
	}
}

// TestRawWritableOnlyLocal: a file system that is not a local disk's
// (here procfs) takes Go's ordinary writes.
func TestRawWritableOnlyLocal(t *testing.T) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	if rawWritable(f) {
		t.Error("a procfs file is taken for a local disk's")
	}
	l, err := Open(filepath.Join(t.TempDir(), "egress.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var st syscall.Statfs_t
	syscall.Statfs(l.Path, &st)
	if want := localFS[int64(st.Type)]; l.raw != want {
		t.Errorf("a log on a file system of type %#x: raw %v, want %v", st.Type, l.raw, want)
	}
	l.Log(Entry{Backend: "b", Status: 200})
	if b, _ := os.ReadFile(l.Path); !strings.Contains(string(b), `"backend":"b"`) {
		t.Errorf("the log holds %q", b)
	}
}
