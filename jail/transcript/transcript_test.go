package transcript

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "transcripts", "slot", "1.log")
	w, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("hello "))
	w.Write([]byte("world\n"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if string(data) != "hello world\n" {
		t.Errorf("transcript holds %q", data)
	}
	fi, _ := os.Stat(path)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("transcript mode %v, want 0600", fi.Mode().Perm())
	}
	di, _ := os.Stat(filepath.Dir(path))
	if di.Mode().Perm() != 0o700 {
		t.Errorf("transcript dir mode %v, want 0700", di.Mode().Perm())
	}
	if _, err := Open(path); !errors.Is(err, fs.ErrExist) {
		t.Errorf("second Open of %s: %v, want ErrExist", path, err)
	}
	// A planted symlink must not receive the output.
	target := filepath.Join(dir, "target")
	link := filepath.Join(dir, "transcripts", "slot", "2.log")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(link); err == nil {
		t.Errorf("Open through a planted symlink succeeded")
	}
	if _, err := os.Lstat(target); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("symlink target was created: %v", err)
	}
}

// A failing transcript must not stop the terminal copy it sits beside.
func TestWriterKeepsGoing(t *testing.T) {
	w, err := Open(filepath.Join(t.TempDir(), "t.log"))
	if err != nil {
		t.Fatal(err)
	}
	w.f.Close() // every write now fails
	for range 3 {
		if n, err := w.Write([]byte("abc")); n != 3 || err != nil {
			t.Fatalf("Write = %d, %v; want 3, nil", n, err)
		}
	}
	if w.Err() == nil || !strings.Contains(w.Err().Error(), w.Path()) {
		t.Errorf("Err() = %v, want the first failure naming %s", w.Err(), w.Path())
	}
}

var sizeTests = []struct {
	name string
	in   string
	want []Size
}{
	{"empty", "", nil},
	{"one", "0 80 24\n", []Size{{0, 80, 24}}},
	{"several", "0 80 24\n100 120 40\n100 100 30\n", []Size{{0, 80, 24}, {100, 120, 40}, {100, 100, 30}}},
	{"torn last line", "0 80 24\n12 1", []Size{{0, 80, 24}}},
	{"garbage skipped", "x y z\n0 80\n-1 80 24\n5 0 24\n5 80 99999\n7 90 20\n", []Size{{7, 90, 20}}},
	{"backwards skipped", "50 80 24\n10 90 30\n60 100 30\n", []Size{{50, 80, 24}, {60, 100, 30}}},
	{"extra fields", "0 80 24 9\n", nil},
}

func TestParseSizes(t *testing.T) {
	for _, c := range sizeTests {
		if got := ParseSizes([]byte(c.in)); !slices.Equal(got, c.want) {
			t.Errorf("%s: ParseSizes(%q) = %v, want %v", c.name, c.in, got, c.want)
		}
	}
}

func FuzzParseSizes(f *testing.F) {
	for _, c := range sizeTests {
		f.Add(c.in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got := ParseSizes([]byte(in))
		for i, s := range got {
			if s.Offset < 0 || s.Cols < 1 || s.Rows < 1 || s.Cols > MaxDim || s.Rows > MaxDim {
				t.Fatalf("out of range: %+v", s)
			}
			if i > 0 && s.Offset < got[i-1].Offset {
				t.Fatalf("not ordered: %v", got)
			}
		}
		// What we write reads back the same.
		var b strings.Builder
		for _, s := range got {
			b.WriteString(formatSize(s))
		}
		if again := ParseSizes([]byte(b.String())); !slices.Equal(again, got) {
			t.Fatalf("round trip: %v, then %v", got, again)
		}
	})
}

// The writer records sizes beside the output, at the offset they took
// effect, and caps a launch at two segments.
func TestWriterSizesAndRotation(t *testing.T) {
	old := SegmentMax
	SegmentMax = 64
	defer func() { SegmentMax = old }()
	path := filepath.Join(t.TempDir(), "t.log")
	w, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	w.Resize(20, 5)
	w.Write([]byte("first\r\n"))
	w.Resize(20, 5) // unchanged: not recorded
	w.Resize(30, 6)
	for i := range 20 {
		w.Write([]byte(fmt.Sprintf("line %02d\r\n", i)))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	cur, _ := os.ReadFile(path)
	prev, _ := os.ReadFile(path + ".1")
	if len(cur) > 64 || len(prev) > 64 || len(prev) == 0 {
		t.Errorf("segments of %d and %d bytes, want at most 64 each", len(cur), len(prev))
	}
	if _, err := os.Stat(path + ".2"); err == nil {
		t.Errorf("a third segment was kept")
	}
	win, _ := os.ReadFile(SizesPath(path))
	if got := ParseSizes(win); !slices.Equal(got, []Size{{0, 30, 6}}) {
		t.Errorf("current segment's sizes %v, want the size in force at its start", got)
	}
}
