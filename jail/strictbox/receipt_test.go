package strictbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aisan-dev/aisan/jail/jailtest"
)

// statusCases are git status --porcelain=v2 -z --branch outputs and what
// parseStatus reads of each; they seed FuzzParseStatus.
var statusCases = []struct {
	out  string
	want status
	err  string
}{
	{"", status{}, ""},
	{"# branch.oid (initial)\x00# branch.head main\x00? a b.txt\x00", status{Untracked: []string{"a b.txt"}}, ""},
	{"# branch.oid 0123abcd\x00# branch.head main\x00# branch.ab +0 -0\x00" +
		"1 .M N... 100644 100644 100644 aaaa aaaa src/main.go\x00" +
		"2 R. N... 100644 100644 100644 bbbb bbbb R100 new name.go\x00old name.go\x00" +
		"u UU N... 100644 100644 100644 100644 cccc dddd eeee conflict.go\x00" +
		"? notes.txt\x00! ignored.log\x00",
		status{Head: "0123abcd", Changed: []string{"src/main.go", "new name.go", "old name.go", "conflict.go"}, Untracked: []string{"notes.txt"}, Added: []string{"new name.go"}}, ""},
	{"# branch.oid 0123abcd\x00# branch.head topic\x00# branch.upstream origin/main\x00# branch.ab +? -?\x00", status{Head: "0123abcd"}, ""},
	{"1 .M N... 100644\x00", status{}, "bad entry"},
	{"2 R. N... 100644 100644 100644 bbbb bbbb R100 new\x00", status{}, "bad rename"},
	{"u UU x\x00", status{}, "bad conflict"},
	{"x what\x00", status{}, "unknown entry"},
}

func TestParseStatus(t *testing.T) {
	for _, c := range statusCases {
		got, err := parseStatus([]byte(c.out))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: err %v, want %q", c.out, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: %+v %v, want %+v", c.out, got, err, c.want)
		}
	}
	m, err := parseNameStatus([]byte("M\x00a.go\x00A\x00b c\x00D\x00d\x00"))
	if err != nil || !reflect.DeepEqual(m, map[string]string{"a.go": "modified", "b c": "added", "d": "deleted"}) {
		t.Errorf("parseNameStatus: %v %v", m, err)
	}
	for _, bad := range []string{"M\x00", "Z\x00a\x00", "M\x00\x00"} {
		if _, err := parseNameStatus([]byte(bad)); err == nil {
			t.Errorf("parseNameStatus(%q) took it", bad)
		}
	}
}

// FuzzParseStatus: no output of git's makes the parsers panic, and every
// path read is non-empty.
func FuzzParseStatus(f *testing.F) {
	for _, c := range statusCases {
		f.Add([]byte(c.out))
	}
	f.Add([]byte("M\x00a\x00D\x00b\x00"))
	f.Fuzz(func(t *testing.T, out []byte) {
		if st, err := parseStatus(out); err == nil {
			for _, p := range append(st.Changed, st.Untracked...) {
				if p == "" {
					t.Fatalf("%q read to an empty path", out)
				}
			}
		}
		if m, err := parseNameStatus(out); err == nil {
			for p := range m {
				if p == "" {
					t.Fatalf("%q read to an empty path", out)
				}
			}
		}
	})
}

func runGit(tb testing.TB, dir string, args ...string) {
	tb.Helper()
	runGitIn(tb, dir, "", args...)
}

// runGitIn is runGit with stdin.
func runGitIn(tb testing.TB, dir, stdin string, args ...string) {
	tb.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid", "GIT_CONFIG_GLOBAL=/dev/null")
	cmd.Stdin = strings.NewReader(stdin)
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// TestCompareRepository: against the snapshot at launch, the files the
// box added, changed (committed or not), deleted and reverted are listed
// as such, and what was already changed at launch and left alone is not.
func TestCompareRepository(t *testing.T) {
	_, err := exec.LookPath("git")
	jailtest.Need(t, "git", err)
	repo := t.TempDir()
	write := func(p, s string) {
		os.MkdirAll(filepath.Dir(filepath.Join(repo, p)), 0o755)
		if err := os.WriteFile(filepath.Join(repo, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	runGit(t, repo, "init", "-q")
	for _, p := range []string{"keep.go", "edit.go", "gone.go", "commit.go", "dirty-kept.go", "dirty-reverted.go"} {
		write(p, p+"\n")
	}
	write(".gitignore", "*.log\n")
	runGit(t, repo, "add", ".")
	runGit(t, repo, "commit", "-q", "-m", "one")
	// Changed before the launch: one left as it is, one the box reverts;
	// an untracked file left alone.
	write("dirty-kept.go", "user's edit\n")
	write("dirty-reverted.go", "user's edit\n")
	write("untracked-kept.txt", "user's\n")
	snap := takeSnapshot(context.Background(), repo)
	if snap.Err != "" || snap.Head == "" || len(snap.Files) != 3 {
		t.Fatalf("snapshot %+v", snap)
	}
	// The box.
	write("edit.go", "changed\n")
	os.Remove(filepath.Join(repo, "gone.go"))
	write("new/added.go", "new\n")
	write("build.log", "ignored\n")
	write("commit.go", "committed in the box\n")
	runGit(t, repo, "commit", "-q", "-m", "box", "--only", "commit.go")
	write("dirty-reverted.go", "dirty-reverted.go\n")
	got, err := compare(repo, snap, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []FileChange{
		{"commit.go", "modified"}, {"dirty-reverted.go", "modified"}, {"edit.go", "modified"},
		{"gone.go", "deleted"}, {"new/added.go", "added"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("changes %+v, want %+v", got, want)
	}
	// With the commit unchanged, git's status alone says what changed:
	// a tracked file edited, a new file staged, one deleted, one left
	// untracked; and the run's mount points are left out.
	snap = takeSnapshot(context.Background(), repo)
	write("keep.go", "edited\n")
	write("staged.go", "new\n")
	runGit(t, repo, "add", "staged.go")
	os.Remove(filepath.Join(repo, "edit.go"))
	write(".envrc", "")
	got, err = compare(repo, snap, []string{".envrc"})
	want = []FileChange{{"edit.go", "deleted"}, {"keep.go", "modified"}, {"staged.go", "added"}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("changes with the same commit %+v %v, want %+v", got, err, want)
	}
	// An edit the box hid from git status (skip-worktree,
	// assume-unchanged) is still reported; a path hidden before the
	// launch (a sparse checkout's) is not the box's.
	runGit(t, repo, "add", "-A")
	runGit(t, repo, "commit", "-q", "-m", "two")
	runGit(t, repo, "update-index", "--skip-worktree", "dirty-kept.go")
	snap = takeSnapshot(context.Background(), repo)
	write("keep.go", "hidden edit\n")
	runGit(t, repo, "update-index", "--skip-worktree", "keep.go")
	write("staged.go", "assumed\n")
	runGit(t, repo, "update-index", "--assume-unchanged", "staged.go")
	if out, err := exec.Command("git", "-C", repo, "status", "--porcelain").Output(); err != nil || len(out) != 0 {
		t.Fatalf("git status shows the hidden edits: %q %v", out, err)
	}
	got, err = compare(repo, snap, nil)
	want = []FileChange{{"keep.go", "hidden"}, {"staged.go", "hidden"}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("changes hidden from git status %+v %v, want %+v", got, err, want)
	}
	// Outside a repository there is no snapshot, and the receipt says why.
	if s := takeSnapshot(context.Background(), t.TempDir()); s.Err == "" {
		t.Errorf("a snapshot outside git: %+v", s)
	}
}

// TestCompareLeavesIndex: the end's comparison after the box committed
// runs git diff against the working tree, which refreshes an index whose
// stat data went stale (here: a file the end put back, same content, new
// time) under its lock, even with optional locks off. It often runs after
// the launch returned, beside the user's next git add or commit; the
// user's index must stay the very file it was, and no lock appear.
func TestCompareLeavesIndex(t *testing.T) {
	_, err := exec.LookPath("git")
	jailtest.Need(t, "git", err)
	repo := t.TempDir()
	for _, p := range []string{"a.go", "b.go"} {
		if err := os.WriteFile(filepath.Join(repo, p), []byte(p+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	runGit(t, repo, "init", "-q")
	runGit(t, repo, "add", ".")
	runGit(t, repo, "commit", "-q", "-m", "one")
	snap := takeSnapshot(context.Background(), repo)
	os.WriteFile(filepath.Join(repo, "a.go"), []byte("the box\n"), 0o644)
	runGit(t, repo, "commit", "-q", "-am", "the box")
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(filepath.Join(repo, "b.go"), later, later); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(repo, ".git", "index")
	before, err := os.Stat(index)
	if err != nil {
		t.Fatal(err)
	}
	got, err := compare(repo, snap, nil)
	if want := []FileChange{{"a.go", "modified"}}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("changes %+v %v, want %+v", got, err, want)
	}
	after, err := os.Stat(index)
	if err != nil || !os.SameFile(before, after) || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("the comparison rewrote the user's index (%v)", err)
	}
	if _, err := os.Lstat(index + ".lock"); err == nil {
		t.Errorf("the comparison left %s.lock", index)
	}
}

func TestReceiptFound(t *testing.T) {
	home := t.TempDir()
	t.Setenv("AISAN_HOME", home)
	start := time.Date(2026, 5, 2, 10, 11, 12, 345000000, time.UTC)
	for i := range keptReceipts + 2 {
		p, err := newReceiptPath("s-1", start.Add(time.Duration(i)*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		writeReceipt(p, &Receipt{Slot: "s-1", Start: start.Add(time.Duration(i) * time.Hour)})
	}
	ents, _ := os.ReadDir(receiptDir(home, "s-1"))
	if len(ents) != keptReceipts {
		t.Errorf("%d receipts kept, want %d", len(ents), keptReceipts)
	}
	last := start.Add(time.Duration(keptReceipts+1) * time.Hour)
	r, err := FindReceipt("s-1", last.Truncate(time.Second), time.Time{})
	if err != nil || r == nil || !r.Start.Equal(last) {
		t.Errorf("found %+v %v", r, err)
	}
	if r, _ := FindReceipt("s-1", start, start.Add(time.Minute)); r != nil {
		t.Errorf("a pruned launch's receipt was found: %+v", r)
	}
}

// A box outside a git repository runs no git: its receipt says why there
// are no changes, finished at once, without a finishing command.
func TestReceiptOutsideGit(t *testing.T) {
	t.Setenv("AISAN_HOME", t.TempDir())
	repo := t.TempDir()
	snap, _ := startSnapshot(repo, false)(context.Background())
	if !strings.Contains(snap.Err, repo) || !strings.Contains(snap.Err, "not a git repository") {
		t.Fatalf("snapshot outside git: %+v", snap)
	}
	path, err := newReceiptPath("s-1", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ro := &receiptOf{path: path, r: &Receipt{Slot: "s-1", Repo: repo, Snapshot: snap}, use: watchScope("s-1", 0, 0)}
	marker := filepath.Join(t.TempDir(), "finisher-ran")
	ro.end("s-1", State{}, false, []string{"/bin/sh", "-c", ": >" + marker})
	r, err := readReceipt(path)
	if err != nil {
		t.Fatal(err)
	}
	if r.Snapshot != nil || r.Compared || !strings.Contains(r.ChangesErr, "not a git repository") || r.End.IsZero() {
		t.Errorf("receipt outside git: %+v", r)
	}
	time.Sleep(100 * time.Millisecond)
	if _, err := os.Stat(marker); err == nil {
		t.Error("a finishing command was started for a box outside git")
	}
}

// BenchmarkSnapshotFarBehind takes the launch's snapshot on a branch
// 20,000 commits behind its upstream, as a long-lived branch of a busy
// repository is.
func BenchmarkSnapshotFarBehind(b *testing.B) {
	_, err := exec.LookPath("git")
	jailtest.Need(b, "git", err)
	repo := b.TempDir()
	const n = 20000
	var in strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&in, "commit refs/heads/main\nmark :%d\ncommitter t <t@example.invalid> %d +0000\ndata 1\nc\n", i, 1600000000+i)
		if i > 1 {
			fmt.Fprintf(&in, "from :%d\n", i-1)
		}
		in.WriteString("\n")
	}
	runGit(b, repo, "init", "-q")
	runGitIn(b, repo, in.String(), "fast-import", "--quiet")
	runGit(b, repo, "checkout", "-q", "-b", "topic", "main~19990")
	runGit(b, repo, "branch", "-q", "--set-upstream-to=main")
	for b.Loop() {
		if s := takeSnapshot(context.Background(), repo); s.Err != "" || s.Head == "" {
			b.Fatalf("snapshot %+v", s)
		}
	}
}

// TestSnapshotGivenUp: a launch that ends while its snapshot is still
// being taken (a signal before the agent's admission) stops waiting for
// git at once and has no snapshot; one that waits gets it.
func TestSnapshotGivenUp(t *testing.T) {
	real, err := exec.LookPath("git")
	if err != nil {
		// The receipt tests beside it need git too (runGit).
		t.Fatal("git is not installed:", err)
	}
	repo := t.TempDir()
	runGit(t, repo, "init", "-q")
	// A git whose status takes three seconds.
	bin := t.TempDir()
	script := "#!/bin/sh\nfor a in \"$@\"; do [ \"$a\" = status ] && sleep 3 && break; done\nexec " + real + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	wait := startSnapshot(repo, true)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	began := time.Now()
	if s, ok := wait(ctx); ok || s != nil {
		t.Errorf("a snapshot given up returned %+v, %v", s, ok)
	}
	if d := time.Since(began); d > time.Second {
		t.Errorf("giving up the snapshot took %v", d)
	}
	wait = startSnapshot(repo, true)
	if s, ok := wait(context.Background()); !ok || s.Err != "" || s.Head != "" {
		t.Errorf("a snapshot waited for: %+v, %v (an empty repository has no commit)", s, ok)
	}
}
