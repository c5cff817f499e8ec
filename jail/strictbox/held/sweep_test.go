package held

import (
	"github.com/aisan-dev/aisan/jail/jailtest"

	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/aisan-dev/aisan/jail/strictbox/protect"
)

// rawControl reports a byte that would reach a terminal as a control:
// C0, DEL, a C1 code point, or bytes that are not UTF-8.
func rawControl(s string) bool {
	if !utf8.ValidString(s) {
		return true
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return true
		}
	}
	return false
}

// TestNamesEscaped: what aisan prints of names a box chose (the end's
// line, the unchecked lines) carries no terminal control.
func TestNamesEscaped(t *testing.T) {
	repo := "/r"
	for _, tc := range []struct{ name, file, want string }{
		{"osc52", ".claude/\r\x1b[2K\x1b]52;c;ZWNobyBwd25lZA==\a", `.claude/\r\x1b[2K\x1b]52;c;ZWNobyBwd25lZA==\a`},
		{"newline", ".claude/a\nb", `.claude/a\nb`},
		{"c1 csi", ".claude/\u009b31m", `.claude/\u009b31m`},
		{"not utf-8", ".claude/\xff\xfe", `.claude/\xff\xfe`},
		{"plain", ".claude/settings.json", ".claude/settings.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Result{Files: []string{repo + "/" + tc.file}, Unchecked: []Unchecked{
				{Path: repo + "/" + tc.file, Why: "x\x1b]0;t\a"},
				{Path: repo + "/" + tc.file, Why: "y", Parked: repo + "/" + tc.file + ".aside"},
			}}
			for _, l := range r.Lines(repo, "s") {
				if rawControl(l) || strings.Contains(l, "\n") {
					t.Errorf("line carries a raw control: %q", l)
				}
				if !strings.Contains(l, tc.want) {
					t.Errorf("line %q lacks the escaped name %q", l, tc.want)
				}
			}
		})
	}
}

// TestUnreadableCopyIsHeld: the box makes part of its copy unreadable;
// the set is still collected once, held, shown as such and never
// applied; --discard removes it.
func TestUnreadableCopyIsHeld(t *testing.T) {
	jailtest.NotRoot(t, "TestHeldSweepWedge")
	repo, set := fixture(t)
	x := filepath.Join(Work(set, 0), "x")
	os.MkdirAll(filepath.Join(x, "deep"), 0o755)
	os.Chmod(x, 0)
	f := filepath.Join(Work(set, 0), "settings.json")
	os.WriteFile(f, []byte("{\"hooks\":2}\n"), 0o644)
	os.Chmod(f, 0)
	r, err := End(set)
	if err != nil {
		t.Fatalf("End: %v", err)
	}
	m, err := ReadManifest(set)
	if err != nil || m.State != Held {
		t.Fatalf("the set is %q (%v), want held", m.State, err)
	}
	if !strings.Contains(strings.Join(r.Files, " "), filepath.Join(repo, ".claude/x")) {
		t.Errorf("held %q, want .claude/x among them", r.Files)
	}
	cs, err := Changes(set)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	Render(&b, repo, cs)
	if !strings.Contains(b.String(), "not looked into") || !strings.Contains(b.String(), "not read") {
		t.Errorf("the review does not say what it could not read:\n%s", b.String())
	}
	var ue *UnreadableError
	if err := Apply(set); !errors.As(err, &ue) {
		t.Errorf("Apply: %v, want it refused", err)
	}
	if _, err := End(set); err == nil {
		t.Errorf("a second End collects an ended set again")
	}
	if err := Discard(set); err != nil {
		t.Fatalf("Discard: %v", err)
	}
	if _, err := os.Lstat(set); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the set is left: %v", err)
	}
}

// TestUnreadableDirAtEnd: a directory the box made unreadable (holding
// a nested repository it planted) is taken out of host tools' way and
// the set says so, held, never clean.
func TestUnreadableDirAtEnd(t *testing.T) {
	jailtest.NotRoot(t, "TestHeldSweepUnreadableDir")
	repo, set := fixture(t)
	lib := filepath.Join(repo, "lib")
	os.MkdirAll(filepath.Join(lib, "sub/.git"), 0o755)
	os.WriteFile(filepath.Join(lib, "sub/.git/config"), []byte("[core]\n\tfsmonitor = evil\n"), 0o644)
	os.Chmod(lib, 0o111)
	r, err := End(set)
	if err != nil {
		t.Fatalf("End: %v", err)
	}
	t.Cleanup(func() {
		for _, u := range r.Unchecked {
			os.Chmod(u.Parked, 0o755)
		}
		Discard(set)
	})
	if _, err := os.Lstat(filepath.Join(lib, "sub/.git/config")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the planted config is still reachable: %v", err)
	}
	if len(r.Unchecked) != 1 || r.Unchecked[0].Path != lib || r.Unchecked[0].Parked == "" {
		t.Fatalf("unchecked %+v, want lib renamed aside", r.Unchecked)
	}
	if l := r.Summary(repo, "s"); !strings.Contains(l, "NOT CHECKED: lib:") || !strings.Contains(l, "renamed aside to lib.aisan-unreadable-") {
		t.Errorf("summary %q", l)
	}
	if m, _ := ReadManifest(set); m.State != Held {
		t.Errorf("the set is %q, want held", m.State)
	}
	var ue *UnreadableError
	if err := Apply(set); !errors.As(err, &ue) {
		t.Errorf("Apply: %v, want it refused", err)
	}
}

// TestUnreadPastTheBound: a sweep that could not read everything holds
// what it found and lists the rest; the set is held, never clean.
func TestUnreadPastTheBound(t *testing.T) {
	repo, set := fixture(t)
	planted := filepath.Join(repo, "pkg/.claude")
	os.MkdirAll(planted, 0o755)
	r, err := collect(set, protect.Since{Paths: []string{planted}, Unread: []string{filepath.Join(repo, "gen7")}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(planted); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("what was found is left: %v", err)
	}
	if l := r.Summary(repo, "s"); !strings.Contains(l, "NOT CHECKED: gen7: not looked into") {
		t.Errorf("summary %q", l)
	}
	sets, _ := List(filepath.Dir(filepath.Dir(filepath.Dir(set))), "")
	if len(sets) != 1 || sets[0].State != Held || len(sets[0].Unchecked) != 1 {
		t.Errorf("listed %+v", sets)
	}
	// Nothing but unchecked paths: still held, never taken for clean.
	repo2, set2 := fixture(t)
	r, err = collect(set2, protect.Since{Unread: []string{filepath.Join(repo2, "gen")}}, time.Now())
	if err != nil || r.Set == "" {
		t.Fatalf("%+v %v", r, err)
	}
	if m, err := ReadManifest(set2); err != nil || m.State != Held {
		t.Errorf("the set is %q (%v), want held", m.State, err)
	}
}

// TestLaterSweepSparesTheUser: a set collected after its box ended
// (the box was killed) leaves what the user made since.
func TestLaterSweepSparesTheUser(t *testing.T) {
	repo, set := fixture(t)
	os.MkdirAll(filepath.Join(repo, "box/.claude"), 0o755)
	time.Sleep(20 * time.Millisecond)
	ended := time.Now()
	time.Sleep(20 * time.Millisecond)
	os.MkdirAll(filepath.Join(repo, "vendor/lib/.git"), 0o755)
	os.MkdirAll(filepath.Join(repo, "pkg/.claude"), 0o755)
	r, err := EndAt(set, ended)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.Files, " "); got != filepath.Join(repo, "box/.claude") {
		t.Errorf("held %q, want only the box's", got)
	}
	for _, p := range []string{"vendor/lib/.git", "pkg/.claude"} {
		if _, err := os.Lstat(filepath.Join(repo, p)); err != nil {
			t.Errorf("the user's %s was taken: %v", p, err)
		}
	}
}

// TestSweepOutPartialMove: a move across file systems that fails half
// way (a file the box left unreadable) leaves no partial copy behind to
// block the collection's later moves.
func TestSweepOutPartialMove(t *testing.T) {
	set, repo := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(set, "swept"), 0o700)
	a, b := filepath.Join(repo, "a"), filepath.Join(repo, "b")
	os.MkdirAll(a, 0o755)
	os.WriteFile(b, []byte("echo planted\n"), 0o644)
	var m Manifest
	failHalfWay := func(from, to string) error {
		os.MkdirAll(filepath.Join(to, "part"), 0o700)
		return errors.New("copy failed half-way")
	}
	if err := sweepOut(set, &m, a, failHalfWay); err == nil {
		t.Fatal("a failed move reported no error")
	}
	if err := sweepOut(set, &m, b, moveOut); err != nil {
		t.Fatalf("the next move fails on the first one's leftovers: %v", err)
	}
	if _, err := os.Lstat(b); err == nil {
		t.Errorf("%s is still in the repository", b)
	}
}

// TestSweepOutReadOnlyParent: a box that took write permission away from
// the directory it planted in does not keep its file in the repository:
// the directory is the user's, and its mode comes back after the move.
func TestSweepOutReadOnlyParent(t *testing.T) {
	if os.Getuid() == 0 {
		t.Skip("root passes permission checks")
	}
	set, repo := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(set, "swept"), 0o700)
	d := filepath.Join(repo, "src")
	os.MkdirAll(d, 0o755)
	p := filepath.Join(d, ".envrc")
	os.WriteFile(p, []byte("echo planted\n"), 0o644)
	os.Chmod(d, 0o555)
	t.Cleanup(func() { os.Chmod(d, 0o755) })
	var m Manifest
	err := withWritableParent(p, func() error { return sweepOut(set, &m, p, moveOut) })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(p); err == nil {
		t.Errorf("%s is still in the repository", p)
	}
	if fi, _ := os.Stat(d); fi.Mode().Perm() != 0o555 {
		t.Errorf("%s left with mode %v, want 0555", d, fi.Mode().Perm())
	}
}
