package transcript

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
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

var stripTests = []struct{ name, in, want string }{
	{"plain", "hello\nworld\n", "hello\nworld\n"},
	{"colours", "\x1b[1;31mred\x1b[0m text\n", "red text\n"},
	{"private CSI", "\x1b[?25l\x1b[?2004hx\x1b[?25h\n", "x\n"},
	{"OSC with BEL", "\x1b]0;title\x07after\n", "after\n"},
	{"OSC with ST", "\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\\n", "link\n"},
	{"DCS", "\x1bPq#0;2;0;0;0\x1b\\done\n", "done\n"},
	{"charset and keypad", "\x1b(B\x1b=\x1b7a\x1b8b\n", "ab\n"},
	{"CRLF", "one\r\ntwo\r\n", "one\ntwo\n"},
	{"CR overwrite", "10%\r20%\r100%\n", "100%\n"},
	{"CR partial overwrite", "abcdef\rXY\n", "XYcdef\n"},
	{"backspace", "abc\b\bX\n", "aXc\n"},
	{"tab kept, other controls dropped", "a\tb\x07c\x00d\n", "a\tbcd\n"},
	{"UTF-8", "héllo → wörld ✓\n", "héllo → wörld ✓\n"},
	{"no final newline", "prompt> ", "prompt> "},
	{"column and erase", "old text\x1b[1G\x1b[Knew\n", "new\n"},
	{"erase to end", "keep this\x1b[5G\x1b[0K\n", "keep\n"},
	{"erase whole line", "gone\x1b[2K\x1b[Gback\n", "back\n"},
	{"column past end", "ab\x1b[5Gc\n", "ab  c\n"},
	{"spinner then text", "⠋ working\r⠙ working\r\x1b[2Kdone\n", "done\n"},
	{"ESC in CSI restarts", "\x1b[1\x1b[31mx\n", "x\n"},
	{"CAN cancels a string", "\x1b]0;ti\x18tle\n", "tle\n"},
	{"malformed sequence then UTF-8", "\x1b[é\n", "é\n"},
}

func strip(chunks ...string) string {
	var out bytes.Buffer
	s := NewStripper(&out)
	for _, c := range chunks {
		s.Write([]byte(c))
	}
	s.Close()
	return out.String()
}

func TestStrip(t *testing.T) {
	for _, c := range stripTests {
		t.Run(c.name, func(t *testing.T) {
			if got := strip(c.in); got != c.want {
				t.Errorf("strip(%q) = %q, want %q", c.in, got, c.want)
			}
			// Byte by byte: sequences and UTF-8 split across writes.
			var chunks []string
			for i := range len(c.in) {
				chunks = append(chunks, c.in[i:i+1])
			}
			if got := strip(chunks...); got != c.want {
				t.Errorf("strip(%q) byte by byte = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

func TestStripBoundsMemory(t *testing.T) {
	// A line that never ends comes out in chunks.
	in := strings.Repeat("x", maxLine+10)
	if got := strip(in); strings.ReplaceAll(got, "\n", "") != in {
		t.Errorf("long line lost characters: got %d bytes", len(got))
	}
	// An unterminated string is given up on.
	in = "\x1b]0;" + strings.Repeat("t", maxString+1) + "visible\n"
	if got := strip(in); !strings.HasSuffix(got, "visible\n") {
		t.Errorf("text after an unterminated OSC is lost: %q…", got[:min(len(got), 20)])
	}
}

func FuzzStrip(f *testing.F) {
	for _, c := range stripTests {
		f.Add(c.in, uint8(3))
	}
	f.Fuzz(func(t *testing.T, in string, split uint8) {
		whole := strip(in)
		n := int(split)%7 + 1
		var chunks []string
		for i := 0; i < len(in); i += n {
			chunks = append(chunks, in[i:min(i+n, len(in))])
		}
		if got := strip(chunks...); got != whole {
			t.Errorf("split every %d bytes: %q, whole: %q", n, got, whole)
		}
		if strings.ContainsRune(whole, 0x1b) {
			t.Errorf("output keeps an ESC: %q", whole)
		}
	})
}

func TestPrint(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.log")
	raw := "\x1b[32mgreen\x1b[0m\r\n"
	if err := os.WriteFile(path, []byte(raw), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Print(context.Background(), &out, path, Options{}); err != nil {
		t.Fatal(err)
	}
	if out.String() != "green\n" {
		t.Errorf("Print = %q, want %q", out.String(), "green\n")
	}
	out.Reset()
	if err := Print(context.Background(), &out, path, Options{Raw: true}); err != nil {
		t.Fatal(err)
	}
	if out.String() != raw {
		t.Errorf("Print raw = %q, want %q", out.String(), raw)
	}
	err := Print(context.Background(), &out, path+".missing", Options{})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Print of a missing transcript: %v, want ErrNotExist", err)
	}
}

// safeBuffer is a bytes.Buffer that Print can write while the test reads.
type safeBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *safeBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *safeBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestPrintFollow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.log")
	var running atomic.Bool
	running.Store(true)
	var out safeBuffer
	done := make(chan error, 1)
	go func() {
		done <- Print(context.Background(), &out, path, Options{
			Follow:  true,
			Running: running.Load,
			Poll:    5 * time.Millisecond,
		})
	}()
	time.Sleep(20 * time.Millisecond) // the file does not exist yet: Print waits
	w, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("first\n"))
	deadline := time.Now().Add(5 * time.Second)
	for out.String() != "first\n" {
		if time.Now().After(deadline) {
			t.Fatalf("follow did not print the first line; got %q", out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	w.Write([]byte("last\n"))
	running.Store(false) // output written before the end must still come out
	w.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("follow did not stop when the launch ended")
	}
	if out.String() != "first\nlast\n" {
		t.Errorf("followed %q, want %q", out.String(), "first\nlast\n")
	}
}

func TestPrintFollowCancel(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.log")
	os.WriteFile(path, []byte("x\n"), 0o600)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	var out bytes.Buffer
	err := Print(ctx, &out, path, Options{Follow: true, Running: func() bool { return true }, Poll: time.Millisecond})
	if err != nil || out.String() != "x\n" {
		t.Errorf("cancelled follow: %q, %v", out.String(), err)
	}
}
