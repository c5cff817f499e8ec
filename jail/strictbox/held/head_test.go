package held

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestHeadOf: HEAD read from git's files, through a loose ref, packed
// refs, a detached HEAD and a linked worktree's common dir; what is not
// git's plain form gives "".
func TestHeadOf(t *testing.T) {
	a, b := strings.Repeat("a", 40), strings.Repeat("b", 64)
	for _, tc := range []struct {
		name  string
		files map[string]string
		link  string // a HEAD that is a symlink to this
		git   string // the git dir, relative (default .git)
		want  string
	}{
		{name: "loose ref", files: map[string]string{".git/HEAD": "ref: refs/heads/main\n", ".git/refs/heads/main": a + "\n"}, want: a},
		{name: "packed ref", files: map[string]string{".git/HEAD": "ref: refs/heads/main\n", ".git/packed-refs": "# pack-refs with: peeled\n" + b + " refs/heads/main\n"}, want: b},
		{name: "detached", files: map[string]string{".git/HEAD": a + "\n"}, want: a},
		{name: "unborn", files: map[string]string{".git/HEAD": "ref: refs/heads/main\n"}, want: ""},
		{name: "a ref outside refs", files: map[string]string{".git/HEAD": "ref: ../../etc/x\n"}, want: ""},
		{name: "not an id", files: map[string]string{".git/HEAD": "ref: refs/heads/main\n", ".git/refs/heads/main": "xyz\n"}, want: ""},
		{name: "a linked worktree", git: ".git/worktrees/w", files: map[string]string{".git/worktrees/w/HEAD": "ref: refs/heads/w\n", ".git/worktrees/w/commondir": "../..\n", ".git/refs/heads/w": a + "\n"}, want: a},
		{name: "HEAD a link", link: "elsewhere", files: map[string]string{"elsewhere": a + "\n"}, want: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := t.TempDir()
			os.MkdirAll(filepath.Join(d, ".git"), 0o755)
			for p, data := range tc.files {
				os.MkdirAll(filepath.Dir(filepath.Join(d, p)), 0o755)
				os.WriteFile(filepath.Join(d, p), []byte(data), 0o644)
			}
			if tc.link != "" {
				os.Symlink(filepath.Join(d, tc.link), filepath.Join(d, ".git/HEAD"))
			}
			git := filepath.Join(d, ".git")
			if tc.git != "" {
				git = filepath.Join(d, tc.git)
			}
			if got := headOf(git, commonOf(git)); got != tc.want {
				t.Errorf("headOf: %q, want %q", got, tc.want)
			}
		})
	}
}

// FuzzHeadOf: whatever HEAD, a ref and packed-refs hold, headOf returns
// a full object id or "", and never panics.
func FuzzHeadOf(f *testing.F) {
	a := strings.Repeat("a", 40)
	f.Add("ref: refs/heads/main\n", a+"\n", "")
	f.Add("ref: refs/heads/main\n", "", "# pack-refs\n"+a+" refs/heads/main\n")
	f.Add(a, "", "")
	f.Add("ref: refs/heads/../../x\n", "ref: refs/heads/main\n", "")
	f.Add("ref: refs/heads/main\n", a+"\n", "# pack-refs with: peeled\n"+a+" refs/heads/topic\n^"+a+"\n"+a+" refs/stash\n"+a+" refs/tags/v1\n")
	f.Fuzz(func(t *testing.T, head, ref, packed string) {
		d := t.TempDir()
		os.MkdirAll(filepath.Join(d, "refs/heads"), 0o755)
		os.WriteFile(filepath.Join(d, "HEAD"), []byte(head), 0o644)
		os.WriteFile(filepath.Join(d, "refs/heads/main"), []byte(ref), 0o644)
		os.WriteFile(filepath.Join(d, "packed-refs"), []byte(packed), 0o644)
		os.WriteFile(filepath.Join(d, "ORIG_HEAD"), []byte(ref), 0o644)
		if got := headOf(d, d); got != "" && !isOID(got) {
			t.Fatalf("headOf: %q is not an object id", got)
		}
		refs, ok := refsOf(d, d)
		for name, oid := range refs {
			if !isRef(name) && !slices.Contains(pseudoRefs[:], name) || !isOID(oid) {
				t.Fatalf("refsOf: %q -> %q is not a branch's commit", name, oid)
			}
		}
		if !ok && refs != nil {
			t.Fatalf("refsOf: refs %v when it could not read them", refs)
		}
	})
}
