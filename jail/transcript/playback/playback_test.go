package playback

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aisan-dev/aisan/jail/transcript"
)

var renderTests = []struct{ name, in, want string }{
	{"plain", "hello\r\nworld\r\n", "hello\nworld\n"},
	{"colours", "\x1b[1;31mred\x1b[0m text\r\n", "red text\n"},
	{"private CSI", "\x1b[?25l\x1b[?2004hx\x1b[?25h\r\n", "x\n"},
	{"OSC with BEL", "\x1b]0;title\x07after\r\n", "after\n"},
	{"OSC with ST", "\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\\r\n", "link\n"},
	{"CR overwrite", "10%\r20%\r100%\r\n", "100%\n"},
	{"CR partial overwrite", "abcdef\rXY\r\n", "XYcdef\n"},
	{"backspace", "abc\b\bX\r\n", "aXc\n"},
	{"UTF-8", "héllo → wörld ✓\r\n", "héllo → wörld ✓\n"},
	{"no final newline", "prompt> ", "prompt>\n"},
	{"column and erase", "old text\x1b[1G\x1b[Knew\r\n", "new\n"},
	{"spinner then text", "⠋ working\r⠙ working\r\x1b[2Kdone\r\n", "done\n"},
	// An interface that redraws in place shows its last frame.
	{"redraw in place", "> typing\r\n  hint\x1b[1A\r\x1b[2K> typed!\r\n\x1b[2K  answer\r\n", "> typed!\n  answer\n"},
	// Lines pushed off the top are scrollback, and are kept, in order.
	{"scrollback", strings.Repeat("line\r\n", 30) + "end", strings.Repeat("line\n", 30) + "end\n"},
	// A full redraw (erase, erase saved lines, home) keeps what was there.
	{"full redraw keeps scrollback", "first\r\n\x1b[2J\x1b[3J\x1b[Hsecond\r\n", "first\nsecond\n"},
	// A full-screen interface's last frame survives its leaving.
	{"alternate screen", "before\r\n\x1b[?1049h\x1b[Hin the app\x1b[?1049lafter\r\n", "before\nin the app\nafter\n"},
	{"alternate screen wiped before it is left", "\x1b[?1049h\x1b[Hlast frame\x1b[1;1H\x1b[J\x1b[?1049lbye\r\n", "last frame\nbye\n"},
	// A full-screen view that scrolls its own conversation up (redrawing
	// rows 1-4 under a fixed title, the input line fixed below): the rows
	// pushed out are kept.
	{"alternate screen scrolling", "\x1b[?1049h" + altFrame(1) + altFrame(2) + altFrame(3) + "\x1b[?1049l",
		"a1\na2\ntitle\na3\na4\na5\na6\n> in\n"},
	{"alternate screen at the end", "shell\r\n\x1b[?1049hstill open", "shell\nstill open\n"},
	{"main screen below the cursor after the app", "top\r\nprompt\x1b[?1049happ\x1b[?1049l!\r\n", "top\napp\nprompt!\n"},
	{"cursor position query", "a\x1b[6nb\x1b[cc\r\n", "abc\n"},
	// A title holds a byte 0x9C in its UTF-8, which the emulator's parser
	// takes for the end of the command.
	{"window title", "a\x1b]0;\u2733 Claude Code\x07b\x1b]2;\u25d0 x\x1b\\c\r\n", "abc\n"},
	{"hyperlink", "\x1b]8;;http://x/\x1b\\link\x1b]8;;\x1b\\\r\n", "link\n"},
	{"command cut by an escape", "a\x1b]0;t\x1b[1mb\r\n", "ab\n"},
	{"escape then not a command", "a\x1b\x1b[1mb\x1b(Bc\r\n", "abc\n"},
	// Counts the emulator steps through one by one are cut to the width:
	// two billion would keep it busy for minutes.
	{"repeat past the width", "a\x1b[999999999b\r\n", strings.Repeat("a", 40) + "\na\n"},
	{"repeat, default count", "a\x1b[bz\r\n", "aaz\n"},
	{"tabs past the width", "\x1b[999999999Ix\x1b[999999999Zy\r\n", strings.Repeat(" ", 39) + "x\ny\n"},
	{"erase past the width", "abc\x1b[1G\x1b[999999999Xz\r\n", "z\n"},
}

// altFrame draws frame i of a full-screen view: a title, four lines of
// conversation from line i on, the input line; then enough to reach the
// next look at the screen.
func altFrame(i int) string {
	f := "\x1b[1;1H\x1b[2Ktitle"
	for r := range 4 {
		f += fmt.Sprintf("\x1b[%d;1H\x1b[2Ka%d", r+2, i+r)
	}
	f += "\x1b[6;1H\x1b[2K> in"
	return f + strings.Repeat("\x1b[0m", 1024)
}

// split cuts s into pieces of n bytes, the last one shorter.
func split(s string, n int) []string {
	var out []string
	for i := 0; i < len(s); i += n {
		out = append(out, s[i:min(i+n, len(s))])
	}
	return out
}

func render(cols, rows int, chunks ...string) string {
	var out bytes.Buffer
	r := NewRenderer(&out, cols, rows)
	for _, c := range chunks {
		r.Write([]byte(c))
	}
	r.Close()
	return out.String()
}

func TestRender(t *testing.T) {
	for _, c := range renderTests {
		t.Run(c.name, func(t *testing.T) {
			if got := render(40, 10, c.in); got != c.want {
				t.Errorf("render(%q) = %q, want %q", c.in, got, c.want)
			}
			// Byte by byte: sequences and UTF-8 split across writes.
			if got := render(40, 10, split(c.in, 1)...); got != c.want {
				t.Errorf("render(%q) byte by byte = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

// Repeats (REP) together draw no more than a few characters per byte
// played: a transcript of repeats plays about as fast as plain text.
func TestRenderRepeatBudget(t *testing.T) {
	in := "x" + strings.Repeat("\x1b[999b", 64<<10)
	got := strings.Count(render(200, 50, in), "x")
	if limit := 1 + repeatsPerByte*(len(in)+feedChunk); got > limit || got < 200 {
		t.Errorf("%d bytes of repeats drew %d characters, want at least a line and at most %d", len(in), got, limit)
	}
}

// The window size decides where long lines wrap; a resize applies from
// where it was recorded.
func TestRenderResize(t *testing.T) {
	var out bytes.Buffer
	r := NewRenderer(&out, 10, 5)
	r.Write([]byte("abcdefghijkl\r\n"))
	r.Resize(20, 5)
	r.Write([]byte("abcdefghijkl\r\n"))
	r.Close()
	if want := "abcdefghij\nkl\nabcdefghijkl\n"; out.String() != want {
		t.Errorf("rendered %q, want %q", out.String(), want)
	}
}

// Flush (for a followed transcript) writes finished lines at once, and
// never writes them twice when they later scroll off.
func TestRenderFlush(t *testing.T) {
	var out bytes.Buffer
	r := NewRenderer(&out, 20, 3)
	r.Write([]byte("one\r\ntwo\r\npart"))
	r.Flush()
	if out.String() != "one\ntwo\n" {
		t.Errorf("after Flush: %q, want the finished lines", out.String())
	}
	r.Write([]byte("ial\r\nthree\r\nfour\r\nfive"))
	r.Close()
	if want := "one\ntwo\npartial\nthree\nfour\nfive\n"; out.String() != want {
		t.Errorf("rendered %q, want %q", out.String(), want)
	}
}

func FuzzRender(f *testing.F) {
	for _, c := range renderTests {
		f.Add(c.in, uint8(3))
	}
	f.Fuzz(func(t *testing.T, in string, every uint8) {
		whole := render(30, 8, in)
		n := int(every)%7 + 1
		if got := render(30, 8, split(in, n)...); got != whole {
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
	w, err := transcript.Open(path)
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

var plainTests = []struct{ name, in, want string }{
	{"plain", "hello\nworld\n", "hello\nworld\n"},
	{"a long line stays one line", strings.Repeat("j", 3000) + "\n", strings.Repeat("j", 3000) + "\n"},
	{"colours", "\x1b[1;31mred\x1b[0m text\n", "red text\n"},
	{"OSC", "\x1b]0;title\x07after\n", "after\n"},
	{"CRLF", "one\r\ntwo\r\n", "one\ntwo\n"},
	{"CR overwrite", "10%\r20%\r100%\n", "100%\n"},
	{"backspace", "abc\b\bX\n", "aXc\n"},
	{"column and erase", "old text\x1b[1G\x1b[Knew\n", "new\n"},
	{"erase whole line", "gone\x1b[2K\x1b[Gback\n", "back\n"},
	{"column past end", "ab\x1b[5Gc\n", "ab  c\n"},
	// Spaces past the end cost bytes played: four per byte at most.
	{"column far past end", "a\x1b[999999999Gb\n", "a" + strings.Repeat(" ", 4*14) + "b\n"},
	{"UTF-8", "héllo → wörld ✓\n", "héllo → wörld ✓\n"},
	{"no final newline", "prompt> ", "prompt> "},
}

func playPlain(chunks ...string) string {
	var out bytes.Buffer
	p := newPlain(&out)
	for _, c := range chunks {
		p.Write([]byte(c))
	}
	p.Close()
	return out.String()
}

func TestPlain(t *testing.T) {
	for _, c := range plainTests {
		if got := playPlain(c.in); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
		if got := playPlain(split(c.in, 1)...); got != c.want {
			t.Errorf("%s byte by byte: %q, want %q", c.name, got, c.want)
		}
	}
}

// Moves past the end of the line add no more than a few spaces per byte
// played, whatever column they name.
func TestPlainPadBudget(t *testing.T) {
	in := strings.Repeat("\x1b[999999999Gx\n", 4<<10)
	if out := playPlain(in); len(out) > (padPerByte+1)*len(in) || strings.Count(out, "x\n") != 4<<10 {
		t.Errorf("%d bytes played as %d, want every line and at most %d", len(in), len(out), (padPerByte+1)*len(in))
	}
}

func FuzzPlain(f *testing.F) {
	for _, c := range plainTests {
		f.Add(c.in, uint8(2))
	}
	f.Fuzz(func(t *testing.T, in string, every uint8) {
		whole := playPlain(in)
		n := int(every)%7 + 1
		if got := playPlain(split(in, n)...); got != whole {
			t.Errorf("split every %d bytes: %q, whole: %q", n, got, whole)
		}
		if strings.ContainsRune(whole, 0x1b) {
			t.Errorf("output keeps an ESC: %q", whole)
		}
	})
}

// BenchmarkRender plays a megabyte of what an agent's interface writes:
// coloured lines that scroll, and a status line redrawn in place.
func BenchmarkRender(b *testing.B) {
	var chunk strings.Builder
	for i := 0; chunk.Len() < 1<<20; i++ {
		fmt.Fprintf(&chunk, "\x1b[1A\r\x1b[2K\x1b[38;5;174m● line %d of the answer, with some words in it\x1b[0m\r\n\x1b[2K\x1b[7m[status %d]\x1b[0m\r\n", i, i)
	}
	data := []byte(chunk.String())
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		r := NewRenderer(io.Discard, 120, 40)
		r.Write(data)
		r.Close()
	}
}

// A launch that rotated its transcript plays back from its older segment
// on, with the size in force at each segment's start.
func TestPrintRotated(t *testing.T) {
	old := transcript.SegmentMax
	transcript.SegmentMax = 64
	defer func() { transcript.SegmentMax = old }()
	path := filepath.Join(t.TempDir(), "t.log")
	w, err := transcript.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	w.Resize(20, 5)
	w.Write([]byte("first\r\n"))
	w.Resize(30, 6)
	for i := range 20 {
		w.Write([]byte(fmt.Sprintf("line %02d\r\n", i)))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Print(context.Background(), &out, path, Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(out.String(), "line 18\nline 19\n") || strings.Contains(out.String(), "first") {
		t.Errorf("printed %q, want the last two segments' lines", out.String())
	}
}
