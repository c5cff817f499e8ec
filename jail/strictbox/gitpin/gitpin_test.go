package gitpin

import (
	"os"
	"os/exec"
	"path/filepath"
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

func TestMainRepo(t *testing.T) {
	r := repo(t)
	p, err := Make(r, "", "")
	if err != nil {
		t.Fatal(err)
	}
	want := "rw /main/.git\nro /main/.git/config\nro /main/.git/hooks\n"
	if got := pins(p); got != want {
		t.Fatalf("pins:\n%s\nwant:\n%s", got, want)
	}
	if len(p.Watch) != 1 || !strings.HasSuffix(p.Watch[0], "/.git/commondir") {
		t.Fatalf("watch %q", p.Watch)
	}
	// A planted commondir is refused, then swept.
	os.WriteFile(p.Watch[0], []byte("/elsewhere\n"), 0o644)
	if _, err := Make(r, "", ""); err == nil || !strings.Contains(err.Error(), "commondir exists") {
		t.Fatalf("planted commondir: %v", err)
	}
	if msgs := Sweep(p); len(msgs) != 1 || !strings.Contains(msgs[0], "moved it to") {
		t.Fatalf("sweep: %q", msgs)
	}
	if _, err := os.Lstat(p.Watch[0]); err == nil {
		t.Fatal("commondir still there")
	}
}

func TestHooksPathInsideRepo(t *testing.T) {
	r := repo(t)
	git(t, r, "config", "core.hooksPath", ".githooks")
	if _, err := Make(r, "", ""); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("missing hooksPath: %v", err)
	}
	os.Mkdir(filepath.Join(r, ".githooks"), 0o755)
	p, err := Make(r, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(pins(p), "ro /main/.githooks\n") {
		t.Fatalf("pins:\n%s", pins(p))
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
		want := "ro /wt/.git\nrw /main/.git\nro /main/.git/config\nro /main/.git/hooks\nseal /main/.git/worktrees +/main/.git/worktrees/wt\nro /main/.git/worktrees/wt/commondir\nro /main/.git/worktrees/wt/gitdir\n"
		if got := pins(p); got != want || !p.Linked {
			t.Fatalf("relative=%v pins:\n%s\nwant:\n%s", relative, got, want)
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
	p, err := Make(super, "", "")
	if err != nil {
		t.Fatal(err)
	}
	got := pins(p)
	for _, want := range []string{"ro /main/.git/modules/sub/config\n", "ro /main/.git/modules/sub/hooks\n", "ro /main/sub/.git\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("pins lack %q:\n%s", want, got)
		}
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
