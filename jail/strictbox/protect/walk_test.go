package protect

import (
	"github.com/aisan-dev/aisan/jail/jailtest"

	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestUnreadableDirRefusesLaunch: a directory the walk cannot read is
// never taken for an empty one: the launch is refused, naming it.
func TestUnreadableDirRefusesLaunch(t *testing.T) {
	jailtest.NotRoot(t, "TestHeldSweepUnreadableDirRefusedAtLaunch")
	for _, tc := range []struct {
		name, dir string
		mode      os.FileMode
	}{
		{"search only", "lib", 0o111},
		{"nothing", "a/b", 0},
		{"read, no search", "c", 0o444},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := filepath.EvalSymlinks(t.TempDir())
			d := filepath.Join(r, tc.dir)
			os.MkdirAll(filepath.Join(d, "sub/.claude"), 0o755)
			os.Chmod(d, tc.mode)
			t.Cleanup(func() { os.Chmod(d, 0o755) })
			_, err := Gather(r, GitFacts{})
			var ue *UnreadableError
			if !errors.As(err, &ue) || ue.Dirs[0].Path != d || !strings.Contains(err.Error(), d) || !strings.Contains(ue.Hints()[0], "chmod u+rx "+d) {
				t.Fatalf("Gather: %v, want it refused naming %s", err, d)
			}
			// The end's sweep reports it instead.
			s := NewSince(r, nil, GitFacts{}, Span{})
			if len(s.Unreadable) != 1 || s.Unreadable[0].Path != d {
				t.Errorf("NewSince: %+v, want %s unreadable", s, d)
			}
		})
	}
}

// TestReadDirGone: a directory that is gone, or is no directory, holds
// nothing; that is no error.
func TestReadDirGone(t *testing.T) {
	r := t.TempDir()
	os.WriteFile(filepath.Join(r, "f"), nil, 0o644)
	os.Symlink("/", filepath.Join(r, "l"))
	buf := make([]byte, 4096)
	for _, p := range []string{"missing", "f", "l"} {
		if n, err := readDir(filepath.Join(r, p), buf, func(string, byte) {}); n != 0 || err != nil {
			t.Errorf("%s: %d entries, %v", p, n, err)
		}
	}
}

// TestIsGitDir follows git's is_git_directory, erring toward yes.
func TestIsGitDir(t *testing.T) {
	for _, tc := range []struct {
		name  string
		head  string // "" for none; "->x" a symlink to x
		dirs  []string
		files []string
		want  bool
	}{
		{"symref", "ref: refs/heads/main\n", []string{"objects", "refs"}, nil, true},
		{"symref no space", "ref:refs/heads/x", []string{"objects", "refs"}, nil, true},
		{"symref after newline", "ref:\nrefs/heads/x\n", []string{"objects", "refs"}, nil, true},
		{"symref after CR", "ref:\rrefs/heads/x\n", []string{"objects", "refs"}, nil, true},
		{"detached upper case", strings.Repeat("AB", 20) + "\n", []string{"objects", "refs"}, nil, true},
		{"detached", strings.Repeat("ab", 20) + "\n", []string{"objects", "refs"}, nil, true},
		{"symlink HEAD", "->refs/heads/main", []string{"objects", "refs"}, nil, true},
		{"commondir", "ref: refs/heads/main\n", nil, []string{"commondir"}, true},
		{"no HEAD", "", []string{"objects", "refs"}, nil, false},
		{"HEAD of prose", "the head of the project\n", []string{"objects", "refs"}, nil, false},
		{"HEAD to elsewhere", "ref: heads/x\n", []string{"objects", "refs"}, nil, false},
		{"symlink HEAD out", "->/etc/passwd", []string{"objects", "refs"}, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := t.TempDir()
			for _, s := range tc.dirs {
				os.Mkdir(filepath.Join(d, s), 0o755)
			}
			for _, f := range tc.files {
				os.WriteFile(filepath.Join(d, f), []byte("../x\n"), 0o644)
			}
			if l, ok := strings.CutPrefix(tc.head, "->"); ok {
				os.Symlink(l, filepath.Join(d, "HEAD"))
			} else if tc.head != "" {
				os.WriteFile(filepath.Join(d, "HEAD"), []byte(tc.head), 0o644)
			}
			if got := isGitDir(d); got != tc.want {
				t.Errorf("isGitDir = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestNewSinceGitDirs: a plain directory the box made a git dir of is
// swept (its HEAD and config); one that was a git dir at launch, or was
// made one after the box ended, is not.
func TestNewSinceGitDirs(t *testing.T) {
	r, _ := filepath.EvalSymlinks(t.TempDir())
	mk := func(d string) {
		for _, s := range []string{"objects", "refs/heads"} {
			os.MkdirAll(filepath.Join(r, d, s), 0o755)
		}
		os.WriteFile(filepath.Join(r, d, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
		os.WriteFile(filepath.Join(r, d, "config"), []byte("[core]\n\tfsmonitor = evil\n"), 0o644)
	}
	os.MkdirAll(filepath.Join(r, ".git"), 0o755)
	mk("vendor/bare.git") // the user's, before the launch
	time.Sleep(20 * time.Millisecond)
	start := time.Now()
	time.Sleep(20 * time.Millisecond)
	os.MkdirAll(filepath.Join(r, "src"), 0o755)
	os.WriteFile(filepath.Join(r, "src/main.c"), []byte("int main(){}\n"), 0o644)
	mk("src")     // the box's
	mk("new/dir") // the box's
	time.Sleep(20 * time.Millisecond)
	end := time.Now()
	time.Sleep(20 * time.Millisecond)
	mk("later") // the user's, after the box
	s := NewSince(r, nil, GitFacts{GitDir: filepath.Join(r, ".git")}, Span{Start: start, End: end})
	var got []string
	for _, p := range s.Paths {
		got = append(got, strings.TrimPrefix(p, r+"/"))
	}
	want := []string{"new/dir/HEAD", "new/dir/config", "src/HEAD", "src/config"}
	if !slices.Equal(got, want) {
		t.Errorf("swept %q, want %q", got, want)
	}
}

// TestNewSinceAfterEnd: protected names and nested .git entries made
// after the box ended are the user's.
func TestNewSinceAfterEnd(t *testing.T) {
	r, _ := filepath.EvalSymlinks(t.TempDir())
	os.MkdirAll(filepath.Join(r, "box/.claude"), 0o755)
	time.Sleep(20 * time.Millisecond)
	end := time.Now()
	time.Sleep(20 * time.Millisecond)
	os.MkdirAll(filepath.Join(r, "vendor/lib/.git"), 0o755)
	os.MkdirAll(filepath.Join(r, "pkg/.claude"), 0o755)
	s := NewSince(r, nil, GitFacts{}, Span{Start: end.Add(-time.Hour), End: end})
	if want := []string{filepath.Join(r, "box/.claude")}; !slices.Equal(s.Paths, want) {
		t.Errorf("swept %q, want %q", s.Paths, want)
	}
}

// TestNewSinceUnread: past the walk's bound the sweep lists what it did
// not read rather than failing or taking it for clean.
func TestNewSinceUnread(t *testing.T) {
	defer func(m int) { maxEntries = m }(maxEntries)
	maxEntries = 50
	r, _ := filepath.EvalSymlinks(t.TempDir())
	for d := range 4 {
		g := filepath.Join(r, "gen"+strconv.Itoa(d))
		os.MkdirAll(filepath.Join(g, "deep/.claude"), 0o755)
		for i := range 20 {
			os.WriteFile(filepath.Join(g, strconv.Itoa(i)), nil, 0o644)
		}
	}
	s := NewSince(r, nil, GitFacts{}, Span{})
	if len(s.Unread) == 0 {
		t.Fatalf("a walk past the bound lists nothing unread: %+v", s)
	}
	// Every planted .claude is swept or lies under what is listed.
	for d := range 4 {
		p := filepath.Join(r, "gen"+strconv.Itoa(d), "deep/.claude")
		covered := slices.Contains(s.Paths, p) || slices.ContainsFunc(s.Unread, func(u string) bool { return strings.HasPrefix(p, u+"/") })
		if !covered {
			t.Errorf("%s neither swept nor listed unread: %+v", p, s)
		}
	}
	var tl *TooLargeError
	if _, err := walk([]string{r}, nil); !errors.As(err, &tl) {
		t.Errorf("the launch's walk takes a tree past the bound: %v", err)
	}
}
