package jail

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestRenamableAbove(t *testing.T) {
	// The home's parent is not the user's; everything below it is.
	mine := func(d string) bool { return strings.HasPrefix(d, "/home/u/") }
	for _, tt := range []struct {
		name  string
		paths []string
		can   func(string) bool
		want  []string
	}{
		{"state dir in the home", []string{"/home/u/.aisan"}, mine, nil},
		{"configuration under ~/.config", []string{"/home/u/.config/aisan"}, mine, []string{"/home/u/.config"}},
		{"programs and configuration, shared parents once, shallowest first",
			[]string{"/home/u/.local/bin/aisan", "/home/u/.config/aisan", "/home/u/.local/bin/aisan-init", "/home/u/.aisan"}, mine,
			[]string{"/home/u/.config", "/home/u/.local", "/home/u/.local/bin"}},
		{"root may rename everything but /", []string{"/root/.aisan", "/usr/local/bin/aisan"}, func(string) bool { return true },
			[]string{"/root", "/usr", "/usr/local", "/usr/local/bin"}},
		{"nothing renamable", []string{"/usr/local/bin/aisan"}, func(string) bool { return false }, nil},
		{"unclean and relative paths", []string{"/home/u/.config//aisan/", "rel/x"}, mine, []string{"/home/u/.config"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := renamableAbove(tt.paths, tt.can); !slices.Equal(got, tt.want) {
				t.Errorf("renamableAbove(%q) = %q, want %q", tt.paths, got, tt.want)
			}
		})
	}
}

// TestGatherOwnFiles: self and the programs beside it, by real path, each
// once; not a directory, a link or a name aisan never runs.
func TestGatherOwnFiles(t *testing.T) {
	dir := t.TempDir()
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	for _, n := range []string{"aisan", "aisan-init", "other-tool"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "aisan-full"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("aisan", filepath.Join(dir, "aisan-guard")); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "aisan")
	if err := os.Symlink(filepath.Join(dir, "aisan"), link); err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "aisan"), filepath.Join(dir, "aisan-init")}
	if got := gatherOwnFiles(link); !slices.Equal(got, want) {
		t.Errorf("gatherOwnFiles = %q, want %q", got, want)
	}
	if got := gatherOwnFiles(""); got != nil {
		t.Errorf("gatherOwnFiles(\"\") = %q", got)
	}
}

// TestDenyListPinsBeforeOwn: the directories above aisan's own come right
// after the root, before any mount that could sit below them (a later
// bind of a directory over itself would cover those); aisan's programs
// are read-only.
func TestDenyListPinsBeforeOwn(t *testing.T) {
	spec := DenyList(DenyOptions{
		Command:    []string{"true"},
		RuntimeDir: "/home/u/rt", RuntimeSystemd: true,
		StateDirs: []string{"/home/u/.config/aisan", "/home/u/rt/aisan"},
		OwnFiles:  []string{"/home/u/.local/bin/aisan"},
		Renamable: []string{"/home/u", "/home/u/.config", "/home/u/.local", "/home/u/.local/bin", "/home/u/rt"},
		Dev:       []DevEntry{{Name: "dri"}},
	})
	if len(spec.Mounts) < 6 {
		t.Fatalf("mounts %+v", spec.Mounts)
	}
	for i, d := range []string{"/home/u", "/home/u/.config", "/home/u/.local", "/home/u/.local/bin", "/home/u/rt"} {
		m := spec.Mounts[1+i]
		if m.Kind != Bind || m.Src != d || m.Dst != d {
			t.Errorf("mount %d = %+v, want %s bound over itself", 1+i, m, d)
		}
	}
	if !slices.ContainsFunc(spec.Mounts, func(m Mount) bool {
		return m.Kind == ROBind && m.Src == "/home/u/.local/bin/aisan" && m.Dst == m.Src
	}) {
		t.Errorf("aisan's program is not bound read-only: %+v", spec.Mounts)
	}
	if !slices.ContainsFunc(spec.Mounts, func(m Mount) bool { return m.Kind == Tmpfs && m.Dst == "/home/u/rt/systemd" }) {
		t.Errorf("the manager's directory is not masked: %+v", spec.Mounts)
	}
}

// TestLinkedConfigs: a configuration file that is a link to a file
// elsewhere is protected by its target; a regular file, a link within a
// state dir, a dangling link and a link to a directory are not listed.
func TestLinkedConfigs(t *testing.T) {
	root := t.TempDir()
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	mk := func(p, content string) string {
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	link := func(target, p string) string {
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
		return filepath.Dir(p)
	}
	dotfile := mk("dotfiles/aisan.toml", "x")
	linked := link(dotfile, "a/aisan/config.toml")
	plain := filepath.Dir(mk("b/aisan/config.toml", "x"))
	inState := link(mk("state/other.toml", "x"), "c/aisan/config.toml")
	dangling := link(filepath.Join(root, "nowhere"), "d/aisan/config.toml")
	toDir := link(filepath.Join(root, "dotfiles"), "e/aisan/config.toml")
	got := linkedConfigs([]string{filepath.Join(root, "state")}, linked, plain, inState, dangling, toDir, "", linked)
	if want := []string{dotfile}; !slices.Equal(got, want) {
		t.Errorf("linkedConfigs = %q, want %q", got, want)
	}
}

// TestWatchUnitFiles: the supervisor's unit file, its drop-in directory
// and its set-property drop-in directory are listed when they exist, by
// real path and once; a link leads to its target; what is in a state
// dir, what is missing and other units are not listed.
func TestWatchUnitFiles(t *testing.T) {
	root := t.TempDir()
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	at := func(p string) string { return filepath.Join(root, p) }
	mkdir := func(p string) {
		if err := os.MkdirAll(at(p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p string) {
		mkdir(filepath.Dir(p))
		if err := os.WriteFile(at(p), []byte("[Service]\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A: everything installed, and another unit beside it.
	write("a/systemd/user/aisan-watch.service")
	mkdir("a/systemd/user/aisan-watch.service.d")
	mkdir("a/systemd/user/aisan-.service.d")
	mkdir("a/systemd/user.control/aisan-watch.service.d")
	write("a/systemd/user/other.service")
	mkdir("a/systemd/user/service.d")
	// B: the unit file is a link into a dotfiles checkout; no drop-ins.
	write("dotfiles/aisan-watch.service")
	mkdir("b/systemd/user")
	if err := os.Symlink(at("dotfiles/aisan-watch.service"), at("b/systemd/user/aisan-watch.service")); err != nil {
		t.Fatal(err)
	}
	// C: inside a state dir. D: nothing installed.
	write("state/systemd/user/aisan-watch.service")
	mkdir("d/systemd/user")

	got := watchUnitFiles([]string{at("state")}, at("a/systemd/user"), at("a/systemd/user.control"), at("b/systemd/user"), at("state/systemd/user"), at("d/systemd/user"), "", at("a/systemd/user"))
	want := []string{
		at("a/systemd/user/aisan-watch.service"),
		at("a/systemd/user/aisan-watch.service.d"),
		at("a/systemd/user/aisan-.service.d"),
		at("a/systemd/user.control"),
		at("dotfiles/aisan-watch.service"),
	}
	if !slices.Equal(got, want) {
		t.Errorf("watchUnitFiles =\n%q\nwant\n%q", got, want)
	}
}

// TestOpenPrograms: a bwrap or proxy the launch took from a directory of
// the user's (PATH had no other) is protected by the file it leads to,
// once; a program in a directory that is not the user's, or none, is not
// listed.
func TestOpenPrograms(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	bwrap := filepath.Join(dir, "bwrap")
	os.WriteFile(bwrap, []byte("#!/bin/sh\n"), 0o755)
	link := filepath.Join(dir, "bwrap-link")
	os.Symlink(bwrap, link)
	if got := openPrograms(bwrap, "", link); !slices.Equal(got, []string{bwrap}) {
		t.Errorf("openPrograms = %q, want %q once", got, bwrap)
	}
	if got := openPrograms(filepath.Join(dir, "missing"), "relative/bwrap"); got != nil {
		t.Errorf("openPrograms of nothing = %q", got)
	}
	if os.Getuid() != 0 {
		if got := openPrograms("/bin/sh"); got != nil {
			t.Errorf("openPrograms(/bin/sh) = %q: the system's is no jail's to change", got)
		}
	}
}
