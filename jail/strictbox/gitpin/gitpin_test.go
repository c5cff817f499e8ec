package gitpin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aisan-dev/aisan/jail/jailtest"
)

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func repo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		jailtest.Need(t, "git", err)
	}
	d, _ := filepath.EvalSymlinks(t.TempDir())
	r := filepath.Join(d, "main")
	os.Mkdir(r, 0o755)
	git(t, r, "init", "-q")
	git(t, r, "commit", "-q", "--allow-empty", "-m", "init")
	return r
}

func pins(p Plan) string {
	var b strings.Builder
	for _, x := range p.Pins {
		b.WriteString([]string{"", "rw", "ro", "seal"}[x.Kind] + " " + strings.TrimPrefix(x.Path, filepath.Dir(p.Repo)))
		for _, h := range x.Holes {
			b.WriteString(" +" + strings.TrimPrefix(h, filepath.Dir(p.Repo)))
		}
		b.WriteString("\n")
	}
	return b.String()
}

func steer(p Plan) string {
	var b strings.Builder
	for _, x := range p.Steer {
		kind := "file"
		if x.Dir {
			kind = "dir"
		}
		b.WriteString(kind + " " + strings.TrimPrefix(x.Path, filepath.Dir(p.Repo)))
		if len(x.Live) > 0 {
			b.WriteString(" live=" + strings.Join(x.Live, ","))
		}
		b.WriteString("\n")
	}
	return b.String()
}

func TestMainRepo(t *testing.T) {
	r := repo(t)
	p, err := Make(r, "", "")
	if err != nil {
		t.Fatal(err)
	}
	want := "rw /main/.git\n"
	if got := pins(p); got != want {
		t.Fatalf("pins:\n%s\nwant:\n%s", got, want)
	}
	// Listed whether or not they exist (a fresh repository has no
	// config.worktree, alternates or modules).
	wantSteer := "file /main/.git/config\nfile /main/.git/config.worktree\ndir /main/.git/hooks\ndir /main/.git/info\nfile /main/.git/objects/info/alternates\ndir /main/.git/modules\ndir /main/.git/worktrees\n"
	if got := steer(p); got != wantSteer {
		t.Fatalf("steer:\n%s\nwant:\n%s", got, wantSteer)
	}
	// The commondir git never writes there, and the operations in
	// progress git status invites the user to continue, absent now.
	if got, want := strings.Join(p.Watch, " "), strings.Join([]string{".git/commondir", ".git/rebase-merge", ".git/rebase-apply", ".git/sequencer"}, " "); strings.ReplaceAll(got, r+"/", "") != want {
		t.Fatalf("watch %q, want %q", got, want)
	}
	// A rebase the user has in progress is the user's: not watched.
	os.Mkdir(filepath.Join(r, ".git", "rebase-merge"), 0o755)
	if q, err := Make(r, "", ""); err != nil || slices.Contains(q.Watch, filepath.Join(r, ".git", "rebase-merge")) {
		t.Fatalf("a rebase in progress at launch is watched: %q %v", q.Watch, err)
	}
	// A planted commondir is refused (jail/held sweeps one a box plants).
	os.WriteFile(p.Watch[0], []byte("/elsewhere\n"), 0o644)
	if _, err := Make(r, "", ""); err == nil || !strings.Contains(err.Error(), "commondir exists") {
		t.Fatalf("planted commondir: %v", err)
	}
}

func TestHooksPathInsideRepo(t *testing.T) {
	r := repo(t)
	git(t, r, "config", "core.hooksPath", ".githooks")
	git(t, r, "config", "include.path", "../shared.gitconfig")
	git(t, r, "config", "includeIf.onbranch:main.path", "/elsewhere/x")
	// Whether or not the directory exists: the box could create it.
	p, err := Make(r, "", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"dir /main/.githooks\n", "file /main/shared.gitconfig\n"} {
		if !strings.Contains(steer(p), want) {
			t.Errorf("steer lacks %q:\n%s", want, steer(p))
		}
	}
	if strings.Contains(steer(p), "elsewhere") {
		t.Errorf("an include outside the repository is listed:\n%s", steer(p))
	}
	// Inside the git dir, other than hooks/, too.
	git(t, r, "config", "core.hooksPath", ".git/myhooks")
	if p, _ = Make(r, "", ""); !strings.Contains(steer(p), "dir /main/.git/myhooks\n") {
		t.Errorf("hooksPath in .git:\n%s", steer(p))
	}
}

// TestHookDirs: every directory git may run hooks from is listed, the
// common dir's hooks/ and each core.hooksPath, inside what the box sees
// or not (a hook outside may run a file of the repository).
func TestHookDirs(t *testing.T) {
	r := repo(t)
	out := filepath.Join(filepath.Dir(r), "outside-hooks")
	git(t, r, "config", "core.hooksPath", ".githooks")
	git(t, r, "config", "--add", "core.hooksPath", out)
	p, err := Make(r, "", "")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(r, ".git", "hooks"), filepath.Join(r, ".githooks"), out}
	if !slices.Equal(p.HookDirs, want) {
		t.Errorf("hook dirs %q, want %q", p.HookDirs, want)
	}
	if strings.Contains(steer(p), out) {
		t.Errorf("a hooks directory outside the repository is a steering path:\n%s", steer(p))
	}
}

func TestLinkedWorktreeBothPointerStyles(t *testing.T) {
	for _, relative := range []bool{false, true} {
		r := repo(t)
		wt := filepath.Join(filepath.Dir(r), "wt")
		git(t, r, "worktree", "add", "-q", wt)
		git(t, r, "worktree", "add", "-q", filepath.Join(filepath.Dir(r), "sibling"))
		if relative {
			os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: ../main/.git/worktrees/wt\n"), 0o644)
			os.WriteFile(filepath.Join(r, ".git/worktrees/wt/gitdir"), []byte("../../../../wt/.git\n"), 0o644)
		}
		p, err := Make(wt, "", "")
		if err != nil {
			t.Fatal(err)
		}
		want := "ro /wt/.git\nrw /main/.git\nseal /main/.git/worktrees +/main/.git/worktrees/wt\nro /main/.git/worktrees/wt/commondir\nro /main/.git/worktrees/wt/gitdir\n"
		if got := pins(p); got != want || !p.Linked {
			t.Fatalf("relative=%v pins:\n%s\nwant:\n%s", relative, got, want)
		}
		for _, w := range []string{"file /main/.git/config\n", "dir /main/.git/hooks\n", "file /main/.git/worktrees/wt/config.worktree\n"} {
			if !strings.Contains(steer(p), w) {
				t.Errorf("steer lacks %q:\n%s", w, steer(p))
			}
		}
	}
}

func TestPoisonedPointersRefused(t *testing.T) {
	r := repo(t)
	wt := filepath.Join(filepath.Dir(r), "wt")
	git(t, r, "worktree", "add", "-q", wt)
	other := filepath.Join(filepath.Dir(r), "other")
	os.MkdirAll(other, 0o755)
	os.WriteFile(filepath.Join(r, ".git/worktrees/wt/commondir"), []byte(other+"\n"), 0o644)
	if _, err := Make(wt, "", ""); err == nil || !strings.Contains(err.Error(), "git worktree repair") {
		t.Fatalf("poisoned commondir: %v", err)
	}
	os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: "+other+"\n"), 0o644)
	if _, err := Make(wt, "", ""); err == nil || !strings.Contains(err.Error(), "not inside a worktrees directory") {
		t.Fatalf("poisoned gitdir: %v", err)
	}
}

func TestNoGit(t *testing.T) {
	d := t.TempDir()
	p, err := Make(d, "", "")
	if err != nil || len(p.Pins) != 0 {
		t.Fatalf("%+v %v", p, err)
	}
	if Find(d) != "" && Find(d) == d {
		t.Fatal("found a repo in an empty dir")
	}
}

func TestReadConfig(t *testing.T) {
	got := parseConfig([]byte("# c\n[user]\n\tname = \"A \\\"B\\\" C\" # x\n\temail=a@b ; c\n[core]\nhooksPath = .hooks\n[remote \"Origin\"]\n\turl = u\n[flag]\n\ton\n"))
	for key, want := range map[string]string{"user.name": `A "B" C`, "user.email": "a@b", "core.hookspath": ".hooks", "remote.Origin.url": "u", "flag.on": "true"} {
		if v, ok := Lookup(got, key); !ok || v != want {
			t.Errorf("%s = %q (%v), want %q; all: %+v", key, v, ok, want, got)
		}
	}
}

func TestSubmodulePinned(t *testing.T) {
	sub := repo(t)
	super := repo(t)
	git(t, super, "-c", "protocol.file.allow=always", "submodule", "add", "-q", sub, "sub")
	// Host git reads a submodule's config, and what it includes, when
	// it recurses into the submodule.
	git(t, filepath.Join(super, ".git/modules/sub"), "config", "include.path", "../../../sub.gitconfig")
	p, err := Make(super, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := pins(p); !strings.Contains(got, "ro /main/sub/.git\n") {
		t.Errorf("pins lack the submodule's gitdir pointer:\n%s", got)
	}
	got := steer(p)
	for _, want := range []string{"dir /main/.git/modules live=sub\n", "file /main/.git/modules/sub/config\n", "dir /main/.git/modules/sub/hooks\n", "dir /main/.git/modules/sub/modules\n", "file /main/sub.gitconfig\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("steer lacks %q:\n%s", want, got)
		}
	}
	if strings.Index(got, "dir /main/.git/modules live") > strings.Index(got, "/main/.git/modules/sub/config") {
		t.Errorf("the modules directory comes after what lies in it:\n%s", got)
	}
}

// TestMainWorktreeHoldsLinkedOnes: a main worktree's box gets the linked
// worktrees' dirs live but their pointers and config as copies, and a
// new worktree dir as its own (the audit's D3: a box rewrote a linked
// worktree's commondir, and host git status there ran its config).
func TestMainWorktreeHoldsLinkedOnes(t *testing.T) {
	r := repo(t)
	git(t, r, "worktree", "add", "-q", filepath.Join(filepath.Dir(r), "wt"))
	os.WriteFile(filepath.Join(r, ".git/worktrees/stray"), nil, 0o644)
	p, err := Make(r, "", "")
	if err != nil {
		t.Fatal(err)
	}
	got := steer(p)
	want := "dir /main/.git/worktrees live=wt\nfile /main/.git/worktrees/wt/commondir\nfile /main/.git/worktrees/wt/gitdir\nfile /main/.git/worktrees/wt/config.worktree\n"
	if !strings.HasSuffix(got, want) {
		t.Errorf("steer:\n%s\nwant it to end with:\n%s", got, want)
	}
	// The linked worktree's own box seals the siblings instead.
	p, err = Make(filepath.Join(filepath.Dir(r), "wt"), "", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := steer(p); strings.Contains(got, "dir /main/.git/worktrees") {
		t.Errorf("a linked worktree's box shadows the sealed worktrees dir:\n%s", got)
	}
}

// TestIncludesFollowed: every file the config includes, at any depth and
// whatever the condition, is listed when the box could write it, as is a
// core.hooksPath an included file sets (the audit's D6: a second-level
// include the box created ran on host git status).
func TestIncludesFollowed(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string // relative to the repository's parent
		want  []string          // steered, relative to the parent
		not   []string
		err   string
	}{
		{name: "second level, absent", files: map[string]string{
			"main/.git/config":      "[include]\n\tpath = ../shared.gitconfig\n",
			"main/shared.gitconfig": "[include]\n\tpath = more.gitconfig\n",
		}, want: []string{"file /main/shared.gitconfig", "file /main/more.gitconfig"}},
		{name: "includeIf, through a file outside", files: map[string]string{
			"main/.git/config": "[includeIf \"onbranch:x\"]\n\tpath = ../../out.gitconfig\n",
			"out.gitconfig":    "[includeIf \"gitdir:/nowhere/\"]\n\tpath = main/a/b/deep.gitconfig\n",
		}, want: []string{"file /main/a/b/deep.gitconfig"}, not: []string{"/out.gitconfig"}},
		{name: "a cycle ends", files: map[string]string{
			"main/.git/config": "[include]\n\tpath = ../x.gitconfig\n",
			"main/x.gitconfig": "[include]\n\tpath = y.gitconfig\n",
			"main/y.gitconfig": "[include]\n\tpath = x.gitconfig\n\tpath = z.gitconfig\n",
		}, want: []string{"file /main/x.gitconfig", "file /main/y.gitconfig", "file /main/z.gitconfig"}},
		{name: "hooksPath in an included file", files: map[string]string{
			"main/.git/config":      "[include]\n\tpath = ../shared.gitconfig\n",
			"main/shared.gitconfig": "[core]\n\thooksPath = .husky\n",
		}, want: []string{"dir /main/.husky"}},
		{name: "home", files: map[string]string{
			"main/.git/config": "[include]\n\tpath = ~/main/h.gitconfig\n",
		}, want: []string{"file /main/h.gitconfig"}},
		{name: "an unknown user is refused", files: map[string]string{
			"main/.git/config": "[include]\n\tpath = ~no-such-user-aisan/x\n",
		}, err: "~no-such-user-aisan"},
		{name: "prefix is refused", files: map[string]string{
			"main/.git/config": "[include]\n\tpath = %(prefix)/etc/x\n",
		}, err: "%(prefix)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := repo(t)
			parent := filepath.Dir(r)
			for name, body := range tc.files {
				os.MkdirAll(filepath.Dir(filepath.Join(parent, name)), 0o755)
				f, _ := os.OpenFile(filepath.Join(parent, name), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
				f.WriteString(body)
				f.Close()
			}
			p, err := Make(r, parent, "")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one naming %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := steer(p)
			for _, w := range tc.want {
				if !strings.Contains(got, w+"\n") {
					t.Errorf("steer lacks %q:\n%s", w, got)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(got, n) {
					t.Errorf("steer lists %q:\n%s", n, got)
				}
			}
		})
	}
}

// TestIncludeDepth: git reads includes ten deep and dies past that, so
// the eleventh file is not followed.
func TestIncludeDepth(t *testing.T) {
	d := t.TempDir()
	for i := 0; i < 12; i++ {
		os.WriteFile(filepath.Join(d, fmt.Sprint(i)), []byte(fmt.Sprintf("[include]\n\tpath = %d\n", i+1)), 0o644)
	}
	tree, err := ReadTree("", filepath.Join(d, "0"))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(tree.Included); n != 11 {
		t.Errorf("%d files included, want 11 (1 to 10 read, 11 named): %q", n, tree.Included)
	}
}

// TestIncludeThroughLink: a link the box could rewrite on the way to an
// included file is refused; one outside is followed to what it reaches.
func TestIncludeThroughLink(t *testing.T) {
	r := repo(t)
	parent := filepath.Dir(r)
	os.Mkdir(filepath.Join(r, "real"), 0o755)
	os.Symlink(filepath.Join(r, "real"), filepath.Join(parent, "outlink"))
	git(t, r, "config", "include.path", "../../outlink/x.gitconfig")
	p, err := Make(r, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := steer(p); !strings.Contains(got, "file /main/real/x.gitconfig\n") {
		t.Errorf("a link outside is not followed:\n%s", got)
	}
	os.Symlink("real", filepath.Join(r, "inlink"))
	git(t, r, "config", "include.path", "../inlink/x.gitconfig")
	if _, err := Make(r, "", ""); err == nil || !strings.Contains(err.Error(), "through the symlink") {
		t.Fatalf("a link inside: %v", err)
	}
}

// TestNested: a nested repository's git dir is planned as the root's:
// its commondir watched (refused when present), the files its config
// includes and its hooksPath listed (the audit's D4).
func TestNested(t *testing.T) {
	r := repo(t)
	sub := filepath.Join(r, "sub")
	os.Mkdir(sub, 0o755)
	git(t, sub, "init", "-q")
	git(t, sub, "config", "include.path", "../inc.gitconfig")
	git(t, sub, "config", "core.hooksPath", "hooks2")
	st, watch, err := Nested(filepath.Join(sub, ".git"), r, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	got := steer(Plan{Repo: r, Steer: st})
	for _, w := range []string{"file /main/sub/.git/config", "dir /main/sub/.git/hooks", "dir /main/sub/.git/worktrees", "file /main/sub/inc.gitconfig", "dir /main/sub/hooks2"} {
		if !strings.Contains(got, w+"\n") {
			t.Errorf("steer lacks %q:\n%s", w, got)
		}
	}
	if want := []string{".git/commondir", ".git/rebase-merge", ".git/rebase-apply", ".git/sequencer"}; len(watch) != len(want) || watch[0] != filepath.Join(sub, want[0]) || watch[1] != filepath.Join(sub, want[1]) || watch[3] != filepath.Join(sub, want[3]) {
		t.Errorf("watch %q, want %q in %s", watch, want, sub)
	}
	os.WriteFile(filepath.Join(sub, ".git/commondir"), []byte("c2\n"), 0o644)
	if _, _, err := Nested(filepath.Join(sub, ".git"), r, "", nil); err == nil || !strings.Contains(err.Error(), "commondir exists") {
		t.Fatalf("planted commondir: %v", err)
	}
}

// FuzzParseConfig: any bytes parse without a panic, into keys that are
// "section.name" and deterministic.
func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{"", "[user]\n name = a\n", "[a \"b\"]\nk=\"x\\\"y\" ; c\n", "[x.y]\nk\n", "[\n=\n", "[s]\nk = \"unterminated\n", "[s] k = v\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		a, b := parseConfig([]byte(doc)), parseConfig([]byte(doc))
		if len(a) != len(b) {
			t.Fatal("not deterministic")
		}
		for _, s := range a {
			if !strings.Contains(s.Key, ".") {
				t.Fatalf("key %q has no section", s.Key)
			}
		}
	})
}

// FuzzExpandPath: any config path value expands without a panic, to an
// absolute clean path or an error.
func FuzzExpandPath(f *testing.F) {
	for _, s := range []string{"x", "../x", "/a/../b", "~", "~/x", "~root/x", "~nobody-aisan", "%(prefix)/etc", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		p, err := expandPath(v, "/repo/.git", "/home/u")
		if err == nil && (!filepath.IsAbs(p) || filepath.Clean(p) != p) {
			t.Fatalf("%q expands to %q", v, p)
		}
	})
}
