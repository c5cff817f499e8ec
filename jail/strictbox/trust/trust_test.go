package trust

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestHolds(t *testing.T) {
	ps := Places{{Path: "/h/.aisan", Why: WhyState}, {Path: "/w/repo", Why: WhyWritable}}
	for _, tc := range []struct {
		name string
		f    File
		want string
	}{
		{"outside", File{Path: "/h/.config/aisan/a.toml", Hops: []string{"/h/.config/aisan/a.toml"}, Links: 1}, ""},
		{"in a place", File{Path: "/w/repo/a.toml", Hops: []string{"/w/repo/a.toml"}, Links: 1}, "/w/repo"},
		{"the place itself", File{Path: "/w/repo", Hops: []string{"/w/repo"}}, "/w/repo"},
		{"a sibling with the same prefix", File{Path: "/w/repository/a.toml", Hops: []string{"/w/repository/a.toml"}, Links: 1}, ""},
		{"a link in a place", File{Path: "/h/.config/aisan/a.toml", Hops: []string{"/w/repo/link", "/h/.config/aisan/b.toml"}, Links: 1}, "/w/repo"},
		{"named in a place, target outside", File{Path: "/w/repo/a.toml", Hops: []string{"/w/repo/a.toml", "/h/x.toml"}, Links: 1}, "/w/repo"},
		{"target in a place", File{Path: "/h/a.toml", Hops: []string{"/h/a.toml", "/h/.aisan/state/x/a.toml"}, Links: 1}, "/h/.aisan"},
		{"a second hard link", File{Path: "/h/a.toml", Target: "/h/a.toml", Hops: []string{"/h/a.toml"}, Links: 2}, "/h"},
		{"a sealed file's second hard link", File{Path: "/usr/bin/perl", Target: "/usr/bin/perl", Hops: []string{"/usr/bin/perl"}, Links: 2, Sealed: true}, ""},
		{"a sealed file in a place", File{Path: "/w/repo/tool", Target: "/w/repo/tool", Hops: []string{"/w/repo/tool"}, Links: 2, Sealed: true}, "/w/repo"},
	} {
		pl, held := ps.Holds(tc.f)
		if held != (tc.want != "") || pl.Path != tc.want {
			t.Errorf("%s: Holds = %+v, %v; want %q", tc.name, pl, held, tc.want)
		}
	}
}

// A file is sealed only when its owner is another user, no group or
// other may write it, and the caller is not root.
func TestSealed(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	stat := func() (fs.FileInfo, int) {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi, int(fi.Sys().(*syscall.Stat_t).Uid)
	}
	_, owner := stat()
	other := owner + 1000
	for _, tc := range []struct {
		name string
		mode os.FileMode
		euid int
		want bool
	}{
		{"another user's, 0644", 0o644, other, true},
		{"another user's, 0755", 0o755, other, true},
		{"the caller's own", 0o644, owner, false},
		{"group-writable", 0o664, other, false},
		{"world-writable", 0o646, other, false},
		{"the caller is root", 0o644, 0, false},
	} {
		if err := os.Chmod(p, tc.mode); err != nil {
			t.Fatal(err)
		}
		fi, _ := stat()
		if got := sealed(fi, tc.euid); got != tc.want {
			t.Errorf("%s: sealed = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// ReadFile follows links itself and reports each, resolving ".." after
// the link before it as the kernel does.
func TestReadFileHops(t *testing.T) {
	dir := realTemp(t)
	write(t, filepath.Join(dir, "real", "spec.toml"), "ro = []\n")
	must(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	must(t, os.Symlink("../real/spec.toml", filepath.Join(dir, "sub", "link.toml")))
	must(t, os.Symlink(filepath.Join(dir, "sub"), filepath.Join(dir, "dirlink")))
	must(t, os.Mkdir(filepath.Join(dir, "real", "deep"), 0o755))
	f, err := ReadFile(filepath.Join(dir, "dirlink", "link.toml"), 100)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "dirlink"), filepath.Join(dir, "sub", "link.toml"), filepath.Join(dir, "real", "spec.toml")}
	if !slices.Equal(f.Hops, want) || f.Target != want[2] || string(f.Data) != "ro = []\n" || f.Links != 1 {
		t.Errorf("ReadFile = %+v; want hops %q", f, want)
	}
	// dirlink/.. is dir (the link's target's parent), not dir/.. .
	f, err = ReadFile(filepath.Join(dir, "dirlink", "..", "real", "spec.toml"), 100)
	if err != nil || f.Target != filepath.Join(dir, "real", "spec.toml") || f.Path != filepath.Join(dir, "real", "spec.toml") {
		t.Errorf("through a link and ..: %+v %v", f, err)
	}
	if _, err := ReadFile(filepath.Join(dir, "real", "spec.toml"), 3); err == nil {
		t.Error("a file over the cap was read")
	}
	if _, err := ReadFile(filepath.Join(dir, "real"), 100); err == nil {
		t.Error("a directory was read as a file")
	}
	must(t, os.Symlink("loop", filepath.Join(dir, "loop")))
	if _, err := ReadFile(filepath.Join(dir, "loop"), 100); err == nil {
		t.Error("a link loop was read")
	}
}

// A FIFO is refused without waiting for a writer.
func TestReadFileFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fifo")
	if err := mkfifo(p); err != nil {
		t.Skip("mkfifo:", err)
	}
	done := make(chan error, 1)
	go func() { _, err := ReadFile(p, 100); done <- err }()
	select {
	case err := <-done:
		if err == nil {
			t.Error("a FIFO was read")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ReadFile waits on a FIFO")
	}
}

// Check lets a file outside every place through, refuses one inside until
// its content is approved, and refuses it again, with the diff, once it
// changes; a revoked approval is gone.
func TestCheckApproveRevoke(t *testing.T) {
	home := realTemp(t)
	repo := realTemp(t)
	s := Open(filepath.Join(home, ".aisan"))
	ps, err := s.Places(repo)
	if err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(home, "outside.toml")
	write(t, outside, "ro = []\n")
	if err := s.Check("bind spec", read(t, outside), ps); err != nil {
		t.Errorf("a file outside every place: %v", err)
	}

	spec := filepath.Join(repo, "aisan.toml")
	write(t, spec, "ro = [\"/opt/sdk\"]\n")
	err = s.Check("bind spec", read(t, spec), ps)
	var re *RefusedError
	if !errors.As(err, &re) || re.Approved != nil || re.Place.Path != repo || !strings.Contains(err.Error(), "you have not approved it") {
		t.Fatalf("an unapproved file in the repository: %v", err)
	}
	if h := strings.Join(re.Hints(), "\n"); !strings.Contains(h, "aisan trust "+spec) {
		t.Errorf("hints %q do not name the command", h)
	}
	if _, err := s.Approve(read(t, spec)); err != nil {
		t.Fatal(err)
	}
	if err := s.Check("bind spec", read(t, spec), ps); err != nil {
		t.Errorf("an approved file: %v", err)
	}

	write(t, spec, "ro = [\"/opt/sdk\"]\nenv = [\"AWS_SECRET_ACCESS_KEY\"]\nrw = [\"\x1b]52;c;x\x07\"]\n")
	err = s.Check("bind spec", read(t, spec), ps)
	if !errors.As(err, &re) || re.Approved == nil {
		t.Fatalf("a changed file: %v", err)
	}
	msg := err.Error()
	for _, want := range []string{"has changed since you approved it", "\n+env = [\"AWS_SECRET_ACCESS_KEY\"]", `+rw = ["\x1b]52;c;x\x07"]`, "--- approved", "+++ now"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the refusal lacks %q:\n%s", want, msg)
		}
	}
	if strings.ContainsAny(msg, "\x1b\x07") {
		t.Errorf("the refusal carries raw control characters: %q", msg)
	}

	list, problems := s.List()
	if len(problems) != 0 || len(list) != 1 || list[0].Path != spec {
		t.Errorf("List = %+v, %v", list, problems)
	}
	if err := s.Revoke(spec); err != nil {
		t.Fatal(err)
	}
	var na *NotApprovedError
	if err := s.Revoke(spec); !errors.As(err, &na) {
		t.Errorf("revoking twice: %v", err)
	}
	write(t, spec, "ro = [\"/opt/sdk\"]\n")
	if err := s.Check("bind spec", read(t, spec), ps); !errors.As(err, &re) || re.Approved != nil {
		t.Errorf("after the revocation: %v", err)
	}
}

// An approval file that is not aisan's (edited, or its hash not its
// content's) approves nothing.
func TestForgedApproval(t *testing.T) {
	home := realTemp(t)
	repo := realTemp(t)
	s := Open(filepath.Join(home, ".aisan"))
	spec := filepath.Join(repo, "aisan.toml")
	write(t, spec, "a\n")
	if _, err := s.Approve(read(t, spec)); err != nil {
		t.Fatal(err)
	}
	write(t, spec, "b\n")
	p := s.approvalPath(spec)
	data, _ := os.ReadFile(p)
	// The hash of the new content, with the old content kept.
	forged := strings.Replace(string(data), Sum([]byte("a\n")), Sum([]byte("b\n")), 1)
	must(t, os.WriteFile(p, []byte(forged), 0o600))
	ps, _ := s.Places(repo)
	err := s.Check("bind spec", read(t, spec), ps)
	if err == nil || !strings.Contains(err.Error(), "hash is not its content") {
		t.Errorf("a forged approval: %v", err)
	}
	if _, problems := s.List(); len(problems) != 1 {
		t.Errorf("List problems %v, want the forged file", problems)
	}
}

// A credential source where a box can write is refused even approved.
func TestCheckSource(t *testing.T) {
	repo := realTemp(t)
	s := Open(filepath.Join(realTemp(t), ".aisan"))
	tok := filepath.Join(repo, "token")
	write(t, tok, "t0ken\n")
	if _, err := s.Approve(read(t, tok)); err != nil {
		t.Fatal(err)
	}
	ps, _ := s.Places(repo)
	var re *RefusedError
	if err := CheckSource("token_file", read(t, tok), ps); !errors.As(err, &re) || re.Approvable || len(re.Hints()) != 1 {
		t.Errorf("an approved token file in the repository: %v", err)
	}
	if strings.Contains(CheckSource("token_file", read(t, tok), ps).Error(), "t0ken") {
		t.Error("the refusal shows the credential")
	}
}

// Remember records places once, keeps what others recorded meanwhile,
// and Places returns them with aisan's state and the caller's.
func TestRemember(t *testing.T) {
	home := filepath.Join(realTemp(t), ".aisan")
	s := Open(home, "/run/user/1/aisan")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			if err := s.Remember([]string{"/w/r" + string(rune('0'+i)), "/w/common"}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	ledger := filepath.Join(home, Dir, ledgerFile)
	fi, err := os.Stat(ledger)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("the ledger's mode is %v", fi.Mode())
	}
	if err := s.Remember([]string{"/w/r3"}); err != nil {
		t.Fatal(err)
	}
	if fi2, _ := os.Stat(ledger); !fi2.ModTime().Equal(fi.ModTime()) {
		t.Error("remembering a known place rewrote the ledger")
	}
	ps, err := s.Places("/w/this")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range ps {
		got = append(got, p.Path+" "+p.Why)
	}
	want := []string{home + " " + WhyState, "/run/user/1/aisan " + WhyState, "/w/common " + WhyWritable}
	for i := range 8 {
		want = append(want, "/w/r"+string(rune('0'+i))+" "+WhyWritable)
	}
	want = append(want, "/w/this "+WhyLaunch)
	if !slices.Equal(got, want) {
		t.Errorf("Places = %q\nwant %q", got, want)
	}
	if err := s.Remember([]string{"relative"}); err == nil {
		t.Error("a relative path was recorded")
	}
	must(t, os.WriteFile(ledger, []byte(`{"paths":["/ok","not/abs"]}`), 0o600))
	if _, err := s.Places(); err == nil {
		t.Error("a ledger with a relative path was read")
	}
}

func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"plain\ttab":    "plain\ttab",
		"esc\x1b[2J":    `esc\x1b[2J`,
		"nl\nbel\a":     `nl\x0abel\x07`,
		"del\x7f":       `del\x7f`,
		"c1\u009bx":     `c1\u009bx`,
		"bad\xffutf8":   `bad\xffutf8`,
		"ünïcode ✓":     "ünïcode ✓",
		"trunc\xe2\x9c": `trunc\xe2\x9c`,
	} {
		if got := Printable(in); got != want {
			t.Errorf("Printable(%q) = %q, want %q", in, got, want)
		}
	}
}

func read(t *testing.T, p string) File {
	t.Helper()
	f, err := ReadFile(p, MaxFile)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func write(t *testing.T, p, s string) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Dir(p), 0o755))
	must(t, os.WriteFile(p, []byte(s), 0o644))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// realTemp is a temporary directory by its real path.
func realTemp(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}
