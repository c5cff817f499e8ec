package playback

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/aisan-dev/aisan/jail/transcript"
)

// followed plays a followed transcript: steps of output, each followed
// by looks (Flush calls, as Print makes them when it has caught up).
type followed struct {
	out bytes.Buffer
	r   *Renderer
}

func newFollowed(cols, rows int) *followed {
	f := &followed{}
	f.r = NewRenderer(&f.out, cols, rows)
	f.r.Follow()
	return f
}

// step writes s, then looks n times.
func (f *followed) step(s string, n int) {
	f.r.Write([]byte(s))
	for range n {
		f.r.Flush()
	}
}

// A full-screen interface that redraws in place: each row is printed once
// it has settled, a spinner never, the chrome once, and the conversation
// once even when it scrolls within the screen.
func TestFollowFullScreen(t *testing.T) {
	f := newFollowed(40, 8)
	frame := func(conv []string, spin string) string {
		var b strings.Builder
		b.WriteString("\x1b[H\x1b[2J")
		b.WriteString("header\r\n")
		for _, l := range conv {
			b.WriteString(l + "\r\n")
		}
		fmt.Fprintf(&b, "\x1b[6H%s\x1b[7H> \x1b[8Hstatus line", spin)
		b.WriteString("\x1b[7;3H")
		return b.String()
	}
	f.step("\x1b[?1049h"+frame(nil, ""), 1)
	// The first look shows what was there at once.
	if got := f.out.String(); got != "header\nstatus line\n" {
		t.Fatalf("first look: %q", got)
	}
	f.out.Reset()
	for i := range 10 {
		f.step(frame([]string{"you: hi"}, fmt.Sprintf("thinking %d", i)), 1)
	}
	if got := f.out.String(); got != "you: hi\n" {
		t.Fatalf("while the spinner runs: %q, want the settled row alone", got)
	}
	f.out.Reset()
	conv := []string{"you: hi", "agent: one", "agent: two", "agent: three", "agent: four"}
	f.step(frame(conv[:3], "done"), settleLooks)
	// The conversation outgrows its four rows and scrolls.
	f.step(frame(conv[1:5], "done"), settleLooks)
	f.step(frame(conv[1:5], "done")+"\x1b[?1049l", 0)
	f.r.Close()
	want := "agent: one\nagent: two\ndone\n>\nagent: three\nagent: four\n"
	if got := f.out.String(); got != want {
		t.Errorf("followed %q, want %q", got, want)
	}
}

// A row typed into (the cursor's) waits longer than the others.
func TestFollowCursorRow(t *testing.T) {
	f := newFollowed(40, 5)
	f.step("\x1b[?1049h\x1b[Hchat\x1b[3H> ", 1)
	f.out.Reset()
	f.step("\x1b[3H> hel", settleLooks)
	if got := f.out.String(); got != "" {
		t.Errorf("a row being typed was printed after %d looks: %q", settleLooks, got)
	}
	f.step("", editLooks-settleLooks)
	if got := f.out.String(); got != "> hel\n" {
		t.Errorf("a quiet typed row: %q", got)
	}
	f.r.Close()
}

// A program that writes lines on the main screen: each line once, in
// order, whether it was seen settled on the screen or scrolled off
// between two looks.
func TestFollowLines(t *testing.T) {
	f := newFollowed(20, 4)
	f.step("one\r\ntwo\r\n", settleLooks)
	if got := f.out.String(); got != "one\ntwo\n" {
		t.Fatalf("settled lines: %q", got)
	}
	f.step("three\r\nfour\r\nfive\r\nsix\r\nseven\r\n", 1)
	f.step("eight\r\n", settleLooks)
	f.step("nine", 0)
	f.r.Close()
	want := "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\n"
	if got := f.out.String(); got != want {
		t.Errorf("followed %q, want %q", got, want)
	}
}

// The same output, looked at between any two writes, prints the same
// lines as a plain playback: following changes when, not what.
func TestFollowLinesAsPlayed(t *testing.T) {
	var in strings.Builder
	for i := range 50 {
		fmt.Fprintf(&in, "line %d\r\n", i)
	}
	for _, every := range []int{1, 7, 100} {
		f := newFollowed(30, 6)
		for _, c := range split(in.String(), every) {
			f.step(c, 1)
		}
		f.r.Close()
		if got, want := f.out.String(), render(30, 6, in.String()); got != want {
			t.Errorf("looked at every %d bytes: %q, want %q", every, got, want)
		}
	}
}

func TestAlign(t *testing.T) {
	rows := func(s ...string) []settleRow {
		var out []settleRow
		for _, x := range s {
			out = append(out, settleRow{text: x})
		}
		return out
	}
	for _, c := range []struct {
		prev []settleRow
		cur  []string
		want []int
	}{
		{rows("a", "b", "c"), []string{"a", "b", "c"}, []int{0, 1, 2}},
		{rows("h", "a", "b", "s"), []string{"h", "b", "x", "s"}, []int{0, 2, -1, 3}},
		{rows("h", "1", "2", "3", "s"), []string{"h", "2", "3", "4", "s"}, []int{0, 2, 3, -1, 4}},
		{nil, []string{"a"}, []int{-1}},
		{rows("a"), nil, []int{}},
	} {
		got := align(c.prev, c.cur)
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("align(%v, %q) = %v, want %v", c.prev, c.cur, got, c.want)
		}
	}
}

// hostile is a transcript meant to drive the terminal it is printed on:
// sequences the emulator passes over, 8-bit C1 controls as raw bytes and
// in UTF-8, BEL, DEL, NUL, invalid UTF-8.
const hostile = "plain\x07bell\x1b]0;title\x07\x1b]52;c;aGk=\x07 osc\r\n" +
	"csi \x9b31m 8-bit\x9b2J \x9d0;t\x9c utf8 \u009b31m\u0085\u009d\u0090dcs\u009c\r\n" +
	"bad \xff\xfe\xc0\x80 \xed\xa0\x80 del\x7f nul\x00 bs\x08 vt\x0b ff\x0c so\x0e\r\n" +
	"\x1bPdcs\x1b\\ \x1b_apc\x1b\\ \x1b^pm\x1b\\ \x1b[?1049h full\x1b[?1049l \x1b[6n \x1bc reset\r\n" +
	"split \xe2\x82"

// checkSafe fails when out holds a control a terminal would act on.
func checkSafe(t *testing.T, what, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Errorf("%s: invalid UTF-8 in %q", what, out)
	}
	for i, r := range out {
		if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r < 0xa0 {
			t.Errorf("%s: control %U at %d in %q", what, r, i, out)
			return
		}
	}
}

// TestPrintHostile: whatever the jail printed, 'aisan logs' prints no
// control but newline and tab, rendered (with window sizes), followed,
// or played plain (output that went to pipes).
func TestPrintHostile(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.log")
	sized := filepath.Join(dir, "sized.log")
	for _, p := range []string{plain, sized} {
		if err := os.WriteFile(p, []byte(hostile+strings.Repeat(hostile, 3)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(transcript.SizesPath(sized), []byte("0 80 24\n"), 0o600)
	for _, p := range []string{plain, sized} {
		for _, follow := range []bool{false, true} {
			var out bytes.Buffer
			err := Print(context.Background(), &out, p, Options{Follow: follow, Running: func() bool { return false }})
			if err != nil {
				t.Fatal(err)
			}
			what := fmt.Sprintf("%s follow=%v", filepath.Base(p), follow)
			checkSafe(t, what, out.String())
			for _, want := range []string{"plain", "bell", "8-bit", "utf8", "bad", "reset"} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("%s: %q lost: %q", what, want, out.String())
				}
			}
		}
	}
	// --raw is the bytes as they are, by request.
	var out bytes.Buffer
	Print(context.Background(), &out, plain, Options{Raw: true})
	if !strings.Contains(out.String(), "\x1b]0;title") {
		t.Errorf("raw output lost its bytes")
	}
}

func TestSafeWriter(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"ok\ttab\n", "ok\ttab\n"},
		{"esc\x1b[31m", `esc\x1b[31m`},
		{"c1 \u009b \x9b", `c1 \u009b \x9b`},
		{"é → ✓", "é → ✓"},
		{"\xe2\x82", `\xe2\x82`},
		{"cr\r", `cr\x0d`},
	} {
		for _, n := range []int{1, 2, len(c.in) + 1} {
			var out bytes.Buffer
			s := newSafeWriter(&out)
			for _, part := range split(c.in, n) {
				s.Write([]byte(part))
			}
			s.Close()
			if out.String() != c.want {
				t.Errorf("safe(%q) in pieces of %d = %q, want %q", c.in, n, out.String(), c.want)
			}
		}
	}
}

// FuzzPrintSafe: no input makes a rendered, followed or plain playback
// print a control character.
func FuzzPrintSafe(f *testing.F) {
	f.Add(hostile, uint8(3))
	for _, c := range renderTests {
		f.Add(c.in, uint8(1))
	}
	f.Fuzz(func(t *testing.T, in string, every uint8) {
		n := int(every)%9 + 1
		sinks := map[string]func(*bytes.Buffer) sink{
			"rendered": func(b *bytes.Buffer) sink { return NewRenderer(b, 30, 8) },
			"plain":    func(b *bytes.Buffer) sink { return newPlain(b) },
			"followed": func(b *bytes.Buffer) sink { r := NewRenderer(b, 30, 8); r.Follow(); return r },
		}
		for name, mk := range sinks {
			var out bytes.Buffer
			sw := newSafeWriter(&out)
			var buf bytes.Buffer
			s := mk(&buf)
			for i, part := range split(in, n) {
				s.Write([]byte(part))
				if i%3 == 0 {
					s.Flush()
				}
			}
			s.Close()
			sw.Write(buf.Bytes())
			sw.Close()
			checkSafe(t, name, out.String())
		}
	})
}
