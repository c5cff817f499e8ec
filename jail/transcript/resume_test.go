package transcript

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestResume: a keeper's writer appends after the wrapper's, goes on with
// the same size record, counts rotation from the file's size, and refuses
// a symlink or a missing file.
func TestResume(t *testing.T) {
	old := SegmentMax
	SegmentMax = 32
	defer func() { SegmentMax = old }()
	dir := t.TempDir()
	path := filepath.Join(dir, "t.log")
	w, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	w.Resize(80, 24)
	w.Write([]byte("from the wrapper\n"))
	w.Close()

	k, err := Resume(path)
	if err != nil {
		t.Fatal(err)
	}
	k.Resize(100, 30)
	k.Write([]byte("keeper\n"))
	k.Write([]byte("more than the segment holds\n"))
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	first, _ := os.ReadFile(path + ".1")
	cur, _ := os.ReadFile(path)
	if string(first) != "from the wrapper\nkeeper\n" || string(cur) != "more than the segment holds\n" {
		t.Errorf("segments %q and %q, want the keeper's lines after the wrapper's, rotated at %d bytes", first, cur, SegmentMax)
	}
	sizes, _ := os.ReadFile(SizesPath(path + ".1"))
	if got := string(sizes); got != "0 80 24\n17 100 30\n" {
		t.Errorf("size record %q, want the keeper's size at offset 17 after the wrapper's", got)
	}

	link := filepath.Join(dir, "link.log")
	os.Symlink(path, link)
	for _, p := range []string{link, filepath.Join(dir, "missing.log")} {
		if _, err := Resume(p); err == nil || !strings.Contains(err.Error(), "reopening transcript") {
			t.Errorf("Resume(%s): %v, want a refusal", p, err)
		}
	}
}
