package hostprog

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestChoose(t *testing.T) {
	sys := Candidate{Path: "/usr/bin/bwrap", Real: "/usr/bin/bwrap"}
	local := Candidate{Path: "/usr/local/bin/bwrap", Real: "/usr/local/bin/bwrap"}
	mine := Candidate{Path: "/home/u/.local/bin/bwrap", Real: "/home/u/.local/bin/bwrap", Open: "/home/u/.local/bin"}
	gobin := Candidate{Path: "/home/u/go/bin/bwrap", Real: "/home/u/go/bin/bwrap", Open: "/home/u/go/bin"}
	linked := Candidate{Path: "/home/u/bin/bwrap", Real: "/usr/bin/bwrap", Open: "/home/u/bin"}
	for _, tt := range []struct {
		name  string
		cands []Candidate
		want  Choice
	}{
		{"nothing on PATH", nil, Choice{}},
		{"the system's alone", []Candidate{sys}, Choice{Candidate: sys}},
		{"the first of two the user cannot change", []Candidate{local, sys}, Choice{Candidate: local}},
		{"a planted one before the system's is passed over", []Candidate{mine, sys}, Choice{Candidate: sys, Passed: []Candidate{mine}}},
		{"every changeable one before it is passed over", []Candidate{gobin, mine, local, sys}, Choice{Candidate: local, Passed: []Candidate{gobin, mine}}},
		{"a link to the system's in a changeable directory is passed over too", []Candidate{linked, sys}, Choice{Candidate: sys, Passed: []Candidate{linked}}},
		{"a changeable one after the system's is not looked at", []Candidate{sys, mine}, Choice{Candidate: sys}},
		{"only changeable ones: the first, still open", []Candidate{mine, gobin}, Choice{Candidate: mine}},
	} {
		got := Choose(tt.cands)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.name, got, tt.want)
		}
		if got.Found() != (len(tt.cands) > 0) {
			t.Errorf("%s: Found() = %v", tt.name, got.Found())
		}
	}
}

// tree makes a directory tree under a temporary root and returns the root.
// The changer the tests use calls a path changeable when it lies under a
// directory named "home" (a stand-in for the user's): the real test of
// writability belongs to the host, and tests may run as root, who may
// write everything.
func tree(t *testing.T) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"usr/bin", "usr/lib/bwrap", "home/u/.local/bin", "home/u/bin", "opt/bin", "etc/alternatives"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	exe := func(p string) {
		if err := os.WriteFile(filepath.Join(root, p), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, p string) {
		if err := os.Symlink(target, filepath.Join(root, p)); err != nil {
			t.Fatal(err)
		}
	}
	exe("usr/bin/bwrap")
	exe("home/u/.local/bin/bwrap")
	exe("usr/lib/bwrap/real")
	os.WriteFile(filepath.Join(root, "usr/bin/noexec"), []byte("data"), 0o644)
	// /usr/bin/alt -> /etc/alternatives/alt -> /usr/lib/bwrap/real, all
	// the system's.
	link(filepath.Join(root, "usr/lib/bwrap/real"), "etc/alternatives/alt")
	link("../../etc/alternatives/alt", "usr/bin/alt")
	// A system directory's link that passes through the user's home.
	link(filepath.Join(root, "home/u/bin/hop"), "usr/bin/viahome")
	link(filepath.Join(root, "usr/lib/bwrap/real"), "home/u/bin/hop")
	// The user's link to the system's file.
	link(filepath.Join(root, "usr/bin/bwrap"), "home/u/bin/bwrap")
	// A directory on PATH that is itself a link into the user's home.
	link(filepath.Join(root, "home/u/.local/bin"), "opt/linkbin")
	link("loop2", "usr/bin/loop1")
	link("loop1", "usr/bin/loop2")
	return root
}

func homeChanger(root string) changer {
	home := filepath.Join(root, "home")
	return func(dir, name string) bool { return dir == home || strings.HasPrefix(dir, home+"/") }
}

func TestWalk(t *testing.T) {
	root := tree(t)
	in := func(p string) string {
		if p == "" {
			return ""
		}
		return filepath.Join(root, p)
	}
	for _, tt := range []struct {
		path, real, open string
	}{
		{"usr/bin/bwrap", "usr/bin/bwrap", ""},
		{"home/u/.local/bin/bwrap", "home/u/.local/bin/bwrap", "home"},
		{"usr/bin/alt", "usr/lib/bwrap/real", ""},
		// Every directory the lookup reads counts, not only the first
		// and the last.
		{"usr/bin/viahome", "usr/lib/bwrap/real", "home"},
		{"home/u/bin/bwrap", "usr/bin/bwrap", "home"},
		{"opt/linkbin/bwrap", "home/u/.local/bin/bwrap", "home"},
	} {
		real, open, err := walk(in(tt.path), homeChanger(root))
		if err != nil {
			t.Errorf("walk(%s): %v", tt.path, err)
			continue
		}
		if real != in(tt.real) || open != in(tt.open) {
			t.Errorf("walk(%s) = %s, open %q; want %s, open %q", tt.path, real, open, in(tt.real), in(tt.open))
		}
	}
	if _, _, err := walk(in("usr/bin/loop1"), homeChanger(root)); err == nil || !strings.Contains(err.Error(), "too many levels") {
		t.Errorf("a link loop: %v, want ELOOP", err)
	}
	if _, _, err := walk(in("usr/bin/missing"), homeChanger(root)); !os.IsNotExist(err) {
		t.Errorf("a missing file: %v, want ENOENT", err)
	}
}

func TestGather(t *testing.T) {
	root := tree(t)
	in := func(p string) string { return filepath.Join(root, p) }
	path := strings.Join([]string{"", "relative/bin", in("home/u/.local/bin"), in("opt/linkbin"), in("usr/bin"), in("usr/bin") + "/", in("home/u/bin")}, ":")
	got := gather("bwrap", path, homeChanger(root))
	want := []Candidate{
		{Path: in("home/u/.local/bin/bwrap"), Real: in("home/u/.local/bin/bwrap"), Open: in("home")},
		{Path: in("opt/linkbin/bwrap"), Real: in("home/u/.local/bin/bwrap"), Open: in("home")},
		{Path: in("usr/bin/bwrap"), Real: in("usr/bin/bwrap")},
		{Path: in("home/u/bin/bwrap"), Real: in("usr/bin/bwrap"), Open: in("home")},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("gather:\n got %+v\nwant %+v", got, want)
	}
	if c := Choose(got); c.Path != in("usr/bin/bwrap") || len(c.Passed) != 2 {
		t.Errorf("Choose = %+v, want the system's, two passed over", c)
	}
	for _, name := range []string{"noexec", "", "bin/bwrap", "nothing"} {
		if got := gather(name, in("usr/bin"), homeChanger(root)); len(got) != 0 {
			t.Errorf("gather(%q) = %+v, want nothing", name, got)
		}
	}
}

// TestUserMayChange checks the host's changer on what every host has:
// the root directory is root's, a fresh temporary directory the user's.
func TestUserMayChange(t *testing.T) {
	dir := t.TempDir()
	if !userMayChange(dir, "x") {
		t.Errorf("%s, made by this user, does not count as changeable", dir)
	}
	if os.Getuid() != 0 && userMayChange("/", "usr") {
		t.Errorf("/ counts as changeable for uid %d", os.Getuid())
	}
	if !userMayChange(filepath.Join(dir, "missing"), "") {
		t.Errorf("a path that cannot be inspected counts as unchangeable")
	}
	if os.Getuid() != 0 {
		c := Find("sh", "/usr/bin:/bin")
		if !c.Found() || c.Open != "" || !slices.Contains([]string{"/usr/bin/sh", "/bin/sh"}, c.Path) {
			t.Errorf("Find(sh) on the system's PATH = %+v, want the system's, not open", c)
		}
	}
}

func TestClaimable(t *testing.T) {
	root := tree(t)
	in := func(p string) string { return filepath.Join(root, p) }
	list := func(ps ...string) string {
		for i, p := range ps {
			ps[i] = in(p)
		}
		return strings.Join(ps, ":")
	}
	for _, tt := range []struct {
		name, path, want string
	}{
		{"bwrap", list("usr/bin"), ""},
		{"bwrap", list("opt/bin", "usr/bin", "home/u/bin"), ""},
		// The match itself is the user's.
		{"bwrap", list("home/u/bin", "usr/bin"), in("home")},
		// A directory of the user's before the match, empty for now.
		{"alt", list("home/u/.local/bin", "usr/bin"), in("home")},
		// One that does not exist yet, in a directory of the user's.
		{"bwrap", list("home/u/missing/bin", "usr/bin"), in("home")},
		{"absent", list("opt/bin", "usr/bin"), ""},
		{"absent", list("usr/bin", "home/u/bin"), in("home")},
		{"bwrap", "relative:" + list("usr/bin"), ""},
	} {
		if got := claimable(tt.name, tt.path, homeChanger(root)); got != tt.want {
			t.Errorf("claimable(%s, %s) = %q, want %q", tt.name, tt.path, got, tt.want)
		}
	}
}
