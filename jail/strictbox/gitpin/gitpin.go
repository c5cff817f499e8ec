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
//   - config, config.worktree, hooks/ and the pointer files are pinned
//     read-only; so are a core.hooksPath directory inside the repository
//     and each submodule's config and hooks under modules/.
//   - A linked worktree sees its own private git dir read-write, the
//     common dir's objects and refs read-write, the common config and
//     hooks read-only, and no sibling worktree's dir: the worktrees
//     directory is sealed around its own.
//   - Absolute and relative pointers are both followed, on the host, and
//     must agree with each other; a layout that does not is refused.
//   - A file that would redirect git but does not exist yet (a "commondir"
//     in a main git dir) cannot be pinned without creating it on the
//     host, which a preset never does. Such files are watched instead:
//     [Sweep] moves aside whatever the box planted there once it ends,
//     and [Plan] refuses a repository where one is already present.
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
	"time"

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
	// Watch are files that must not appear while the box runs.
	Watch []string
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

// pinSteering pins what steers git in a common dir.
func (p *Plan) pinSteering(common string) error {
	planted := filepath.Join(common, "commondir")
	if _, err := os.Lstat(planted); err == nil {
		return fmt.Errorf("%s exists: it redirects git to another config and hooks, and git never writes it in a main git dir; inspect it (a box may have planted it), then remove it", planted)
	}
	p.Watch = append(p.Watch, planted)
	for _, f := range []string{"config", "config.worktree", "hooks", "objects/info/alternates"} {
		p.addIfExists(filepath.Join(common, f), "git pin: what host git reads or runs")
	}
	return nil
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
	for _, f := range []string{"commondir", "gitdir", "config.worktree"} {
		p.addIfExists(filepath.Join(private, f), "git pin: the worktree's own pointers and config")
	}
	return nil
}

// hooksPath pins a core.hooksPath directory that lies inside the
// repository (outside it, the box does not see it). The setting is read
// from the repository's config and the user's global ones, as git would.
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
	files = append(files, filepath.Join(p.CommonDir, "config"))
	if p.Linked {
		files = append(files, filepath.Join(p.GitDir, "config.worktree"))
	}
	hp, ok := Lookup(ReadConfig(files...), "core.hookspath")
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
	if !within(hp, p.Repo) || within(hp, p.GitDir) || within(hp, p.CommonDir) {
		return nil
	}
	if _, err := os.Lstat(hp); err != nil {
		return fmt.Errorf("core.hooksPath is %s, inside the repository, and does not exist: the box could create it and plant hooks there; create the directory (it may stay empty) so that aisan can pin it", hp)
	}
	p.add(RO, hp, "git pin: core.hooksPath inside the repository")
	return nil
}

// modules pins the config and hooks of submodule git dirs.
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
				p.addIfExists(filepath.Join(d, "config"), "git pin: a submodule's config")
				p.addIfExists(filepath.Join(d, "hooks"), "git pin: a submodule's hooks")
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

// Sweep moves aside any watched file the box created, so host git never
// follows it, and says what it moved.
func Sweep(p Plan) []string {
	var out []string
	stamp := time.Now().UTC().Format("20060102T150405Z")
	for _, w := range p.Watch {
		if _, err := os.Lstat(w); err != nil {
			continue
		}
		aside := w + ".aisan-quarantined-" + stamp
		if err := os.Rename(w, aside); err != nil {
			out = append(out, fmt.Sprintf("the box created %s, which redirects host git, and moving it aside failed: %v; remove it before running git here", w, err))
			continue
		}
		out = append(out, fmt.Sprintf("the box created %s, which would redirect host git; moved it to %s", w, aside))
	}
	return out
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
