package held

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aisan-dev/aisan/jail/strictbox/protect"
)

// TestObjectRewriteCaught: the box puts its own content in the files of
// objects HEAD and the index name (loose ones rewritten in place and
// through a new file, a pack corrupted). The end sweeps them, writes
// back from the working tree the ones it has the user's content of (a
// held script's: the box edits only a copy), says the others are
// missing, and git reads the user's content, or stops, never the box's.
func TestObjectRewriteCaught(t *testing.T) {
	g := newGitRepo(t)
	run := func(args ...string) string { t.Helper(); return g.git("", args...) }
	g.write("scripts/check.sh", "#!/bin/sh\nexit 0\n")
	g.write("src/main.go", "package main\n")
	g.write("old/packed.txt", "in a pack\n")
	run("add", "old")
	run("commit", "-q", "-m", "old")
	run("repack", "-q", "-a", "-d")
	run("add", "-A")
	run("commit", "-q", "-m", "init")
	check := strings.TrimSpace(run("rev-parse", "HEAD:scripts/check.sh"))
	main := strings.TrimSpace(run("rev-parse", "HEAD:src/main.go"))
	set := g.prepare(Manifest{Items: []protect.Item{{Path: filepath.Join(g.repo, "scripts/check.sh"), How: protect.Copy}}})

	// The box.
	obj := func(id string) string { return filepath.Join(g.repo, ".git", "objects", id[:2], id[2:]) }
	evil := strings.TrimSpace(g.gitIn("", "#!/bin/sh\ntouch /tmp/pwned\n", "hash-object", "-w", "--stdin"))
	b, err := os.ReadFile(obj(evil))
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(obj(check))
	if err := os.WriteFile(obj(check), b, 0o444); err != nil {
		t.Fatal(err)
	}
	other := strings.TrimSpace(g.gitIn("", "package main // the box's\n", "hash-object", "-w", "--stdin"))
	if b, err = os.ReadFile(obj(other)); err != nil {
		t.Fatal(err)
	}
	os.Chmod(obj(main), 0o644)
	if err := os.WriteFile(obj(main), b, 0o444); err != nil {
		t.Fatal(err)
	}
	g.write("src/main.go", "package main // the box's\n")
	packs, _ := filepath.Glob(filepath.Join(g.repo, ".git", "objects", "pack", "*.pack"))
	if len(packs) != 1 {
		t.Fatalf("packs %q", packs)
	}
	os.Chmod(packs[0], 0o644)
	p, _ := os.ReadFile(packs[0])
	p[len(p)/2] ^= 0xff
	os.WriteFile(packs[0], p, 0o444)

	r, err := End(set)
	if err != nil {
		t.Fatalf("End: %v", err)
	}
	if !slices.Equal(r.RestoredObjects, []string{check}) || !slices.Equal(r.MissingObjects, []string{main}) {
		t.Errorf("restored %q, missing %q; want [%s], [%s]", r.RestoredObjects, r.MissingObjects, check, main)
	}
	if got := run("cat-file", "-p", check); got != "#!/bin/sh\nexit 0\n" {
		t.Errorf("git reads %q for the held script", got)
	}
	if err := exec.Command(g.gitBin, "-C", g.repo, "cat-file", "-p", main).Run(); err == nil {
		t.Errorf("git still reads the box's content for %s", main)
	}
	var held []string
	for _, f := range r.Files {
		held = append(held, filepath.Base(filepath.Dir(f))+"/"+filepath.Base(f))
	}
	for _, want := range []string{check[:2] + "/" + check[2:], main[:2] + "/" + main[2:], "pack/" + filepath.Base(packs[0])} {
		if !slices.Contains(held, want) {
			t.Errorf("%s is not held: %q", want, held)
		}
	}
	if l := strings.Join(r.Lines(g.repo, "repo-1-claude"), "\n"); !strings.Contains(l, "the box rewrote 2 objects") || !strings.Contains(l, "1 was written back") {
		t.Errorf("the end says:\n%s", l)
	}
}

// TestPackIndexForgeryCaught: the box packs its own content and edits
// the pack's index to give it the name of the held script's blob; git
// looks in packs first, so it reads the box's content under that name
// (checked before the end). The end's verify-pack refuses the pack,
// sweeps it, and git reads the user's loose object again.
func TestPackIndexForgeryCaught(t *testing.T) {
	g := newGitRepo(t)
	run := func(args ...string) string { t.Helper(); return g.git("", args...) }
	g.write("scripts/check.sh", "#!/bin/sh\nexit 0\n")
	run("add", "-A")
	run("commit", "-q", "-m", "init")
	check := strings.TrimSpace(run("rev-parse", "HEAD:scripts/check.sh"))
	set := g.prepare(Manifest{Items: []protect.Item{{Path: filepath.Join(g.repo, "scripts/check.sh"), How: protect.Copy}}})

	evil := strings.TrimSpace(g.gitIn("", "#!/bin/sh\ntouch /tmp/pwned\n", "hash-object", "-w", "--stdin"))
	base := strings.TrimSpace(g.gitIn("", evil+"\n", "pack-objects", "-q", ".git/objects/pack/pack"))
	idx := filepath.Join(g.repo, ".git", "objects", "pack", "pack-"+base+".idx")
	b, err := os.ReadFile(idx)
	if err != nil {
		t.Fatal(err)
	}
	from, _ := hex.DecodeString(evil)
	to, _ := hex.DecodeString(check)
	if !bytes.Contains(b, from) {
		t.Fatal("the pack's index does not name the box's object")
	}
	b = bytes.Replace(b, from, to, 1)
	// The fan-out table (a v2 index: 8 bytes of header, then 256
	// counts) for the one object's new first byte.
	for i := range 256 {
		n := uint32(0)
		if i >= int(to[0]) {
			n = 1
		}
		binary.BigEndian.PutUint32(b[8+4*i:], n)
	}
	os.Chmod(idx, 0o644)
	os.WriteFile(idx, b, 0o444)
	if got := run("cat-file", "-p", check); !strings.Contains(got, "pwned") {
		t.Fatalf("the forged index did not take (git reads %q): the test shows nothing", got)
	}

	r, err := End(set)
	if err != nil {
		t.Fatalf("End: %v", err)
	}
	if got := run("cat-file", "-p", check); got != "#!/bin/sh\nexit 0\n" {
		t.Errorf("git reads %q for the held script after the end", got)
	}
	if !slices.ContainsFunc(r.Files, func(f string) bool { return f == idx }) {
		t.Errorf("the forged index is not held: %q", r.Files)
	}
}

// TestCorruptObjectSwept: an object file the box left that git cannot
// read at all (not zlib) stops git cat-file mid-way: the end finds it
// alone, sweeps it and writes the user's back, and hashes the objects
// after it as well.
func TestCorruptObjectSwept(t *testing.T) {
	g := newGitRepo(t)
	run := func(args ...string) string { t.Helper(); return g.git("", args...) }
	g.write("scripts/check.sh", "#!/bin/sh\nexit 0\n")
	g.write("src/a.go", "package a\n")
	run("add", "-A")
	run("commit", "-q", "-m", "init")
	ids := []string{strings.TrimSpace(run("rev-parse", "HEAD:scripts/check.sh")), strings.TrimSpace(run("rev-parse", "HEAD:src/a.go"))}
	set := g.prepare(Manifest{Items: []protect.Item{{Path: filepath.Join(g.repo, "scripts/check.sh"), How: protect.Copy}}})
	evil := strings.TrimSpace(g.gitIn("", "package a // the box's\n", "hash-object", "-w", "--stdin"))
	obj := func(id string) string { return filepath.Join(g.repo, ".git", "objects", id[:2], id[2:]) }
	b, _ := os.ReadFile(obj(evil))
	slices.Sort(ids)
	for i, id := range ids {
		os.Chmod(obj(id), 0o644)
		data := []byte("not an object\n")
		if i == 1 {
			data = b
		}
		os.WriteFile(obj(id), data, 0o444)
	}
	r, err := End(set)
	if err != nil {
		t.Fatalf("End: %v", err)
	}
	got := slices.Sorted(slices.Values(r.RestoredObjects))
	if !slices.Equal(got, ids) {
		t.Errorf("restored %q, want %q", got, ids)
	}
	if out := run("cat-file", "-p", "HEAD:src/a.go"); out != "package a\n" {
		t.Errorf("git reads %q", out)
	}
}

// TestObjectsCheckedInTheirStore: the box commits, then plants a
// commondir that points git at another store. Its objects are sound:
// the end, checking them in the store they are in, takes only the
// commondir (watched, as gitpin watches it), and HEAD reads.
func TestObjectsCheckedInTheirStore(t *testing.T) {
	g := newGitRepo(t)
	run := func(args ...string) string { t.Helper(); return g.git("", args...) }
	g.write("scripts/check.sh", "#!/bin/sh\nexit 0\n")
	run("add", "-A")
	run("commit", "-q", "-m", "init")
	commondir := filepath.Join(g.repo, ".git", "commondir")
	set := g.prepare(Manifest{Items: []protect.Item{{Path: filepath.Join(g.repo, "scripts/check.sh"), How: protect.Copy}}, Watch: []string{commondir}})
	g.write("notes.txt", "the box's\n")
	run("add", "notes.txt")
	run("commit", "-q", "-m", "the box's commit")
	elsewhere := filepath.Join(t.TempDir(), "other.git")
	run("init", "-q", "--bare", elsewhere)
	g.write(".git/commondir", elsewhere+"\n")

	r, err := End(set)
	if err != nil {
		t.Fatalf("End: %v", err)
	}
	if len(r.RestoredObjects)+len(r.MissingObjects) > 0 {
		t.Errorf("sound objects taken for rewritten ones: restored %q, missing %q", r.RestoredObjects, r.MissingObjects)
	}
	if out := run("log", "--format=%s", "-1"); out != "the box's commit\n" {
		t.Errorf("git log after the end: %q", out)
	}
}
