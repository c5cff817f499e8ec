// Package gitpin decides how a strict box sees a repository's git
// metadata so that nothing the box does can change what host git runs the
// next time the user runs it in that repository.
//
// # Threat
//
// Host git executes what a repository's metadata names: hooks, and
// programs named in config (core.fsmonitor, core.pager, core.hooksPath,
// diff and filter drivers). It finds that metadata through pointers: the
// .git directory or a "gitdir:" file, a linked worktree's "commondir" and
// "gitdir" files. A box that can write any of these can make host git run
// a program of its choosing.
//
// # Rules
//
//   - .git itself is a mount point, so it cannot be renamed aside and a
//     new one planted in its place.
//   - The pointer files are pinned read-only: a box never has a reason to
//     move a repository's metadata.
//   - What git reads to decide what to run is listed as [Steer], whether
//     or not it exists: config, config.worktree, hooks/, info/,
//     objects/info/alternates, modules/ (a new submodule git dir there,
//     with a gitlink, makes host git status run its config), a
//     core.hooksPath inside the repository or a git dir, and config files
//     the repository's config includes from there. jail/protect decides
//     how the box sees each: a copy whose changes are held for review.
//   - A linked worktree sees its own private git dir read-write, the
//     common dir's objects and refs read-write, and no sibling worktree's
//     dir: the worktrees directory is sealed around its own.
//   - Absolute and relative pointers are both followed, on the host, and
//     must agree with each other; a layout that does not is refused.
//   - A file that would redirect git but does not exist yet (a "commondir"
//     in a main git dir) cannot be pinned without creating it on the
//     host. Such files are watched instead: whatever the box planted there
//     is moved aside once it ends, and [Make] refuses a repository where
//     one is already present.
//   - Planning reads the host, runs nothing and creates nothing.
package gitpin

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/aisan-dev/aisan/jail/shared/regfile"
)

// Kind is what a pin does.
type Kind int

const (
	// RW binds the path read-write at itself (a mount point).
	RW Kind = iota + 1
	// RO binds the path read-only at itself.
	RO
	// Seal hides the directory but for its Holes, bound read-write.
	Seal
)

// Pin is one mount, at the path's own place.
type Pin struct {
	Kind  Kind
	Path  string
	Holes []string
	// Why is the reason, for explain.
	Why string
}

// Plan is how a repository's git metadata appears in the box.
type Plan struct {
	// Repo is the worktree's root.
	Repo string
	// GitDir is the git dir of Repo (the private one of a linked
	// worktree), CommonDir the shared one; equal for a main worktree.
	GitDir, CommonDir string
	// Linked is set for a linked worktree.
	Linked bool
	// Pins are the mounts, in order; they come after the repository's
	// own read-write bind.
	Pins []Pin
	// Steer are the paths git reads to decide what to run, existing or
	// not, in mount order (a parent before what lies in it).
	Steer []Steer
	// Watch are files that must not appear while the box runs.
	Watch []string
}

// Steer is one path git reads to decide what to run.
type Steer struct {
	Path string
	// Dir is set for a directory.
	Dir bool
	// Live, for a directory of git dirs (modules/), are its entries at
	// planning time: each stays the host's own, and only what is new in
	// the directory is the box's.
	Live []string
	// Why is the reason, for explain.
	Why string
}

// maxPointer caps a pointer file (.git, commondir, gitdir).
const maxPointer = 4096

// Find returns the repository root for dir: the nearest ancestor (or dir)
// holding a .git entry, or "" when there is none.
func Find(dir string) string {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if d == "/" || d == "." {
			return ""
		}
	}
}

// Make plans the pins for the worktree at repo (a real path). A repo
// without .git gives an empty Plan.
//
// home and xdgConfig ($XDG_CONFIG_HOME, or "") locate the user's global git
// config, which may set core.hooksPath.
func Make(repo, home, xdgConfig string) (Plan, error) {
	p := Plan{Repo: repo}
	dotgit := filepath.Join(repo, ".git")
	fi, err := os.Lstat(dotgit)
	if errors.Is(err, fs.ErrNotExist) {
		return p, nil
	}
	if err != nil {
		return p, fmt.Errorf("inspecting %s: %w", dotgit, err)
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return p, fmt.Errorf("%s is a symlink; strict mode cannot pin a git dir it reaches through a link: replace the link with the directory, or run from its target", dotgit)
	case fi.IsDir():
		p.GitDir, p.CommonDir = dotgit, dotgit
		if err := p.main(); err != nil {
			return p, err
		}
	case fi.Mode().IsRegular():
		if err := p.linked(dotgit); err != nil {
			return p, err
		}
	default:
		return p, fmt.Errorf("%s is neither a directory nor a gitdir file", dotgit)
	}
	if err := p.hooksPath(home, xdgConfig); err != nil {
		return p, err
	}
	p.modules()
	return p, nil
}

func (p *Plan) add(k Kind, path, why string) {
	p.Pins = append(p.Pins, Pin{Kind: k, Path: path, Why: why})
}

// addIfExists pins path read-only when it exists (without following a
// final symlink: a link is pinned as it is).
func (p *Plan) addIfExists(path, why string) {
	if _, err := os.Lstat(path); err == nil {
		p.add(RO, path, why)
	}
}

// pinSteering lists what steers git in a common dir.
func (p *Plan) pinSteering(common string) error {
	planted := filepath.Join(common, "commondir")
	if _, err := os.Lstat(planted); err == nil {
		return fmt.Errorf("%s exists: it redirects git to another config and hooks, and git never writes it in a main git dir; inspect it (a box may have planted it), then remove it", planted)
	}
	p.Watch = append(p.Watch, planted)
	p.Steer = append(p.Steer, GitDirSteer(common)...)
	return nil
}

// steerFiles are what git reads in a git dir to decide what to run.
var steerFiles = []struct {
	name string
	dir  bool
	why  string
}{
	{"config", false, "git: config names programs (core.fsmonitor, pagers, drivers, hooksPath)"},
	{"config.worktree", false, "git: per-worktree config, read with extensions.worktreeConfig"},
	{"hooks", true, "git: hooks run by commit, merge, checkout, push"},
	{"info", true, "git: exclude, attributes, sparse-checkout"},
	{"objects/info/alternates", false, "git: other object stores"},
}

// GitDirSteer lists the paths of the git dir dir that steer what git
// runs, whether or not they exist, and its submodules' (see [Steer]).
func GitDirSteer(dir string) []Steer {
	var out []Steer
	for _, f := range steerFiles {
		out = append(out, Steer{Path: filepath.Join(dir, f.name), Dir: f.dir, Why: f.why})
	}
	return append(out, modulesSteer(filepath.Join(dir, "modules"), 0)...)
}

// modulesSteer lists a modules directory, whose entries are submodule
// git dirs or (for a submodule named a/b) directories holding them.
func modulesSteer(dir string, depth int) []Steer {
	s := Steer{Path: dir, Dir: true, Why: "git: submodule git dirs; a new one with a gitlink runs its config on host git status"}
	ents, err := os.ReadDir(dir)
	if err != nil || depth > 6 {
		return []Steer{s}
	}
	var below []Steer
	for _, e := range ents {
		s.Live = append(s.Live, e.Name())
		d := filepath.Join(dir, e.Name())
		if !e.IsDir() {
			continue
		}
		if _, err := os.Lstat(filepath.Join(d, "HEAD")); err == nil {
			below = append(below, GitDirSteer(d)...)
		} else {
			below = append(below, modulesSteer(d, depth+1)...)
		}
	}
	return append([]Steer{s}, below...)
}

func (p *Plan) main() error {
	p.add(RW, p.GitDir, "git pin: .git as a mount point, so it cannot be renamed aside")
	return p.pinSteering(p.CommonDir)
}

func (p *Plan) linked(dotgit string) error {
	ptr, err := readPointer(dotgit, "gitdir: ")
	if err != nil {
		return err
	}
	private := resolve(p.Repo, ptr)
	private, err = filepath.EvalSymlinks(private)
	if err != nil {
		return fmt.Errorf("the worktree's git dir %s (from %s): %w", ptr, dotgit, err)
	}
	if filepath.Base(filepath.Dir(private)) != "worktrees" {
		return fmt.Errorf("%s points at %s, which is not inside a worktrees directory; repair it with 'git worktree repair'", dotgit, private)
	}
	cptr, err := readPointer(filepath.Join(private, "commondir"), "")
	if err != nil {
		return err
	}
	common, err := filepath.EvalSymlinks(resolve(private, cptr))
	if err != nil {
		return fmt.Errorf("the common git dir %s (from %s/commondir): %w", cptr, private, err)
	}
	if want := filepath.Dir(filepath.Dir(private)); common != want {
		return fmt.Errorf("%s/commondir names %s, but the worktree's git dir lies in %s; repair it with 'git worktree repair'", private, common, want)
	}
	p.GitDir, p.CommonDir, p.Linked = private, common, true
	p.add(RO, dotgit, "git pin: the worktree's gitdir pointer, a mount point")
	p.add(RW, common, "git: the common dir's objects and refs")
	if err := p.pinSteering(common); err != nil {
		return err
	}
	p.Pins = append(p.Pins, Pin{Kind: Seal, Path: filepath.Join(common, "worktrees"), Holes: []string{private},
		Why: "git pin: sibling worktrees' dirs hidden, only this one's open"})
	for _, f := range []string{"commondir", "gitdir"} {
		p.addIfExists(filepath.Join(private, f), "git pin: the worktree's own pointers")
	}
	p.Steer = append(p.Steer, Steer{Path: filepath.Join(private, "config.worktree"), Why: "git: this worktree's own config, read with extensions.worktreeConfig"})
	return nil
}

// hooksPath lists a core.hooksPath directory that lies inside the
// repository or one of its git dirs (elsewhere, the box does not see it),
// and the config files the repository's config includes from there. The
// settings are read from the repository's config and the user's global
// ones, as git would.
func (p *Plan) hooksPath(home, xdgConfig string) error {
	files := []string{"/etc/gitconfig"}
	if xdgConfig != "" {
		files = append(files, filepath.Join(xdgConfig, "git", "config"))
	} else if home != "" {
		files = append(files, filepath.Join(home, ".config", "git", "config"))
	}
	if home != "" {
		files = append(files, filepath.Join(home, ".gitconfig"))
	}
	repoFiles := []string{filepath.Join(p.CommonDir, "config"), filepath.Join(p.CommonDir, "config.worktree")}
	if p.Linked {
		repoFiles = append(repoFiles, filepath.Join(p.GitDir, "config.worktree"))
	}
	seen := p.seeable()
	for _, f := range repoFiles {
		for _, inc := range Includes(ReadConfig(f), filepath.Dir(f), home) {
			if seen(inc) {
				p.Steer = append(p.Steer, Steer{Path: inc, Why: "git: a config file the repository's config includes"})
			}
		}
	}
	hp, ok := Lookup(ReadConfig(append(files, repoFiles...)...), "core.hookspath")
	if !ok || hp == "" {
		return nil
	}
	if strings.HasPrefix(hp, "~/") {
		return nil // in $HOME, which the box does not see
	}
	if !filepath.IsAbs(hp) {
		hp = filepath.Join(p.Repo, hp)
	}
	hp = filepath.Clean(hp)
	if !seen(hp) || hp == filepath.Join(p.CommonDir, "hooks") {
		return nil
	}
	p.Steer = append(p.Steer, Steer{Path: hp, Dir: true, Why: "git: core.hooksPath, inside what the box sees"})
	return nil
}

// seeable reports whether a path lies where the box can write: the
// repository or its git dirs.
func (p *Plan) seeable() func(string) bool {
	return func(x string) bool {
		return within(x, p.Repo) || within(x, p.GitDir) || within(x, p.CommonDir)
	}
}

// Includes are the files the settings include (include.path and
// includeIf.*.path), as absolute paths: relative to dir (the including
// file's directory), "~/" to home.
func Includes(settings []Setting, dir, home string) []string {
	var out []string
	for _, s := range settings {
		if !strings.HasPrefix(s.Key, "include") || !strings.HasSuffix(s.Key, ".path") || s.Value == "" {
			continue
		}
		v := s.Value
		switch {
		case strings.HasPrefix(v, "~/"):
			if home == "" {
				continue
			}
			v = filepath.Join(home, v[2:])
		case !filepath.IsAbs(v):
			v = filepath.Join(dir, v)
		}
		out = append(out, filepath.Clean(v))
	}
	return out
}

// modules pins the gitdir pointers of submodule checkouts and watches
// their git dirs' commondir (their steering files are in Steer).
func (p *Plan) modules() {
	root := filepath.Join(p.CommonDir, "modules")
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		if depth > 6 {
			return
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range ents {
			if !e.IsDir() {
				continue
			}
			d := filepath.Join(dir, e.Name())
			if _, err := os.Lstat(filepath.Join(d, "HEAD")); err == nil {
				// The submodule's checkout points back here through a
				// .git file in the repository, which host git follows
				// when it descends into the submodule.
				if wt, ok := Lookup(ReadConfig(filepath.Join(d, "config")), "core.worktree"); ok && wt != "" {
					wt = resolve(d, wt)
					if within(wt, p.Repo) {
						if fi, err := os.Lstat(filepath.Join(wt, ".git")); err == nil && fi.Mode().IsRegular() {
							p.add(RO, filepath.Join(wt, ".git"), "git pin: a submodule's gitdir pointer")
						}
					}
				}
				if _, err := os.Lstat(filepath.Join(d, "commondir")); err != nil {
					p.Watch = append(p.Watch, filepath.Join(d, "commondir"))
				}
			}
			if e.Name() != "objects" && e.Name() != "refs" && e.Name() != "logs" {
				walk(d, depth+1)
			}
		}
	}
	walk(root, 0)
}

func resolve(base, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(base, p)
}

// readCapped reads a regular file, without following a final symlink,
// up to max bytes.
func readCapped(path string, max int64) ([]byte, error) {
	f, err := regfile.Open(path)
	if errors.Is(err, regfile.ErrNotRegular) {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return b, nil
}

// readPointer reads a small pointer file without following a symlink and
// returns its first line without prefix.
func readPointer(path, prefix string) (string, error) {
	b, err := readCapped(path, maxPointer)
	if err != nil {
		return "", err
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	s, ok := strings.CutPrefix(strings.TrimRight(string(line), "\r"), prefix)
	if !ok || s == "" {
		return "", fmt.Errorf("%s does not hold a %spointer", path, prefix)
	}
	return s, nil
}

func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/")
}
