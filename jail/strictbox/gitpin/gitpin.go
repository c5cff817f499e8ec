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
//     with a gitlink, makes host git status run its config), worktrees/
//     (a linked worktree's commondir and config.worktree choose what host
//     git runs there), a core.hooksPath inside the repository or a git
//     dir, and the config files the repository's and the user's config
//     include from there, followed to git's own depth limit whatever the
//     condition. An include that cannot be resolved, or is reached
//     through a link the box could rewrite, is refused. jail/protect
//     decides how the box sees each: a copy whose changes are held for
//     review. A nested repository's git dir gets the same ([Nested]).
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
	"slices"
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
	// Modules is set for a directory Python loads a held script's
	// modules from by name, and that is not held whole (the project's
	// own): what the box adds there that Python may import is swept at
	// the end (jail/strictbox/protect's ModuleDir). Names are the
	// modules the scripts import.
	Modules bool
	Names   []string
	// Note, when set, is said at launch: what could not be followed,
	// and what was held for it instead. A Steer with a Note and no
	// Path holds nothing.
	Note string
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
	// Watch are paths absent at launch that the end sweeps into the
	// review when the box leaves them: files that redirect git, and the
	// operations in progress git status invites the user to continue.
	Watch []string
	// HookDirs are the directories host git may run the repository's
	// hooks from: the common dir's hooks/ and every core.hooksPath the
	// configs set, inside what the box sees or not (a hook outside may
	// run a file of the repository).
	HookDirs []string

	// submodules are the submodule git dirs found in modules/.
	submodules []submodule
}

// submodule is a submodule's git dir and the worktree its core.worktree
// names.
type submodule struct{ gitDir, worktree string }

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
	// Modules is set for a directory Python loads a held script's
	// modules from by name, and that is not held whole (the project's
	// own): what the box adds there that Python may import is swept at
	// the end (jail/strictbox/protect's ModuleDir). Names are the
	// modules the scripts import.
	Modules bool
	Names   []string
	// Site marks a Modules directory that is a virtual environment's
	// site-packages (protect's ModuleDir.Site), Node one that is a
	// node_modules directory, whose Names are packages
	// (ModuleDir.Node), Files one in which a held command looks for the
	// files of Names, missing at launch (ModuleDir.Files).
	Site, Node, Files bool
	// Note, when set, is said at launch: what could not be followed,
	// and what was held for it instead. A Steer with a Note and no
	// Path holds nothing.
	Note string
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
	p.watchSequencer()
	if err := p.config(home, xdgConfig); err != nil {
		return p, err
	}
	p.modules()
	if err := p.submoduleConfig(GlobalFiles(home, xdgConfig), home); err != nil {
		return p, err
	}
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
	p.Steer = append(p.Steer, commonSteer(common)...)
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
// runs, whether or not they exist, its submodules' and its linked
// worktrees' (see [Steer]).
func GitDirSteer(dir string) []Steer {
	return append(commonSteer(dir), worktreesSteer(filepath.Join(dir, "worktrees"))...)
}

// worktreeFiles are what git reads in a linked worktree's own git dir
// to decide what to run. The rest there (HEAD, index, logs, per-worktree
// refs, info/sparse-checkout) says which commit and which files, never
// which program.
var worktreeFiles = []struct{ name, why string }{
	{"commondir", "git: a linked worktree's pointer to the common dir, whose config and hooks it runs"},
	{"gitdir", "git: a linked worktree's pointer back to its checkout"},
	{"config.worktree", "git: a linked worktree's own config, read with extensions.worktreeConfig"},
}

// worktreesSteer lists a worktrees directory, whose entries are linked
// worktrees' own git dirs: each stays the host's, with its pointers and
// config copies, and a new one is the box's (held). A worktree in the
// host's checkout reaches its git dir here, so a box that could write
// one's commondir or config.worktree would choose what host git runs
// there. An entry that is not a directory is left out of the box.
func worktreesSteer(dir string) []Steer {
	s := Steer{Path: dir, Dir: true, Live: []string{}, Why: "git: linked worktrees' git dirs; one's commondir and config.worktree choose what host git runs in that worktree"}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return []Steer{s}
	}
	var below []Steer
	for _, e := range ents {
		if e.Type() != fs.ModeDir {
			continue
		}
		s.Live = append(s.Live, e.Name())
		for _, f := range worktreeFiles {
			below = append(below, Steer{Path: filepath.Join(dir, e.Name(), f.name), Why: f.why})
		}
	}
	return append([]Steer{s}, below...)
}

// commonSteer lists the paths of the git dir dir that steer what git
// runs but its worktrees directory (a linked worktree's box seals it).
func commonSteer(dir string) []Steer {
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

// SequencerDirs are where git keeps an operation in progress in a git
// dir: a rebase (its todo runs its exec lines on git rebase
// --continue), git am's, and a cherry-pick's or revert's.
var SequencerDirs = [...]string{"rebase-merge", "rebase-apply", "sequencer"}

// watchSequencer watches the git dir's sequencer dirs that are absent
// now: one the box leaves is its operation, and git status would invite
// the user to continue it on the host. One present now is the user's
// own, which the box may go on with (package held says what it added to
// its todo).
func (p *Plan) watchSequencer() {
	p.Watch = append(p.Watch, sequencerWatch(p.GitDir)...)
}

// sequencerWatch are gitDir's sequencer dirs absent now.
func sequencerWatch(gitDir string) []string {
	var out []string
	for _, d := range SequencerDirs {
		if _, err := os.Lstat(filepath.Join(gitDir, d)); errors.Is(err, fs.ErrNotExist) {
			out = append(out, filepath.Join(gitDir, d))
		}
	}
	return out
}

func (p *Plan) main() error {
	p.add(RW, p.GitDir, "git pin: .git as a mount point, so it cannot be renamed aside")
	if err := p.pinSteering(p.CommonDir); err != nil {
		return err
	}
	p.Steer = append(p.Steer, worktreesSteer(filepath.Join(p.CommonDir, "worktrees"))...)
	return nil
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

// GlobalFiles are the user's and the system's git config files, in
// git's order: home and xdgConfig ($XDG_CONFIG_HOME, or "") locate them.
func GlobalFiles(home, xdgConfig string) []string {
	files := []string{"/etc/gitconfig"}
	if xdgConfig != "" {
		files = append(files, filepath.Join(xdgConfig, "git", "config"))
	} else if home != "" {
		files = append(files, filepath.Join(home, ".config", "git", "config"))
	}
	if home != "" {
		files = append(files, filepath.Join(home, ".gitconfig"))
	}
	return files
}

// config lists what the repository's config and the global ones make
// git read or run where the box can write (see [configSteer]).
func (p *Plan) config(home, xdgConfig string) error {
	repoFiles := []string{filepath.Join(p.CommonDir, "config"), filepath.Join(p.CommonDir, "config.worktree")}
	if p.Linked {
		repoFiles = append(repoFiles, filepath.Join(p.GitDir, "config.worktree"))
	}
	s, hooks, err := configSteer(GlobalFiles(home, xdgConfig), repoFiles, p.Repo, p.CommonDir, home, p.seeable())
	p.Steer = append(p.Steer, s...)
	if p.CommonDir != "" {
		p.HookDirs = append([]string{filepath.Join(p.CommonDir, "hooks")}, hooks...)
	}
	return err
}

// configSteer lists, of what the config files global and repoFiles make
// git read or run, what lies where the box can write (seen): every file
// they include, to any depth and whatever the condition, existing or
// not, and every core.hooksPath any of them sets (relative to worktree)
// but commonDir's own hooks/. Includes are followed through the global
// files too: ~/.gitconfig may include a file inside the repository.
// hooks are every core.hooksPath, where the box can write or not.
func configSteer(global, repoFiles []string, worktree, commonDir, home string, seen func(string) bool) (out []Steer, hooks []string, err error) {
	tree, err := ReadTree(home, append(slices.Clone(global), repoFiles...)...)
	if err != nil {
		return nil, nil, err
	}
	for _, inc := range tree.Included {
		at, err := landing(inc, seen, 0)
		if err != nil {
			return nil, nil, fmt.Errorf("a git config include: %w", err)
		}
		if seen(at) {
			out = append(out, Steer{Path: at, Why: "git: a config file the repository's config includes"})
		}
	}
	// Every value counts, not only the last: which one git ends with
	// depends on conditions taken as true here.
	for _, s := range tree.Settings {
		if s.Key != "core.hookspath" || s.Value == "" {
			continue
		}
		hp, err := expandPath(s.Value, worktree, home)
		if err != nil {
			return nil, nil, fmt.Errorf("core.hooksPath %q: %w; strict mode cannot tell where git looks for hooks: make it absolute or relative", s.Value, err)
		}
		at, err := landing(hp, seen, 0)
		if err != nil {
			return nil, nil, fmt.Errorf("core.hooksPath: %w", err)
		}
		if at == filepath.Join(commonDir, "hooks") {
			continue
		}
		if !slices.Contains(hooks, at) {
			hooks = append(hooks, at)
		}
		if seen(at) {
			out = append(out, Steer{Path: at, Dir: true, Why: "git: core.hooksPath, inside what the box sees"})
		}
	}
	return out, hooks, nil
}

// maxHops bounds the symlinks landing follows.
const maxHops = 40

// landing is where git lands opening p: the symlinks among p's existing
// components followed. A link that lies where the box can write (seen)
// is refused: the box could point it elsewhere, and a mount over what it
// points at now would not follow. A final link outside is followed, so
// that a file it leads to inside is protected; a final link inside is
// returned as it is (jail/protect refuses a protected link).
func landing(p string, seen func(string) bool, hops int) (string, error) {
	parts := strings.Split(strings.TrimPrefix(filepath.Clean(p), "/"), "/")
	cur := "/"
	for i, part := range parts {
		next := filepath.Join(cur, part)
		fi, err := os.Lstat(next)
		if err != nil {
			return filepath.Join(append([]string{next}, parts[i+1:]...)...), nil
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		last := i == len(parts)-1
		if seen(next) {
			if last {
				return next, nil
			}
			return "", fmt.Errorf("%s is reached through the symlink %s, which a strict box could point elsewhere: replace the link with what it points at", p, next)
		}
		if hops++; hops > maxHops {
			return "", fmt.Errorf("%s: too many levels of symbolic links", p)
		}
		to, err := os.Readlink(next)
		if err != nil {
			return "", fmt.Errorf("reading the symlink %s: %w", next, err)
		}
		rest := filepath.Join(append([]string{resolve(cur, to)}, parts[i+1:]...)...)
		return landing(rest, seen, hops)
	}
	return cur, nil
}

// seeable reports whether a path lies where the box can write: the
// repository or its git dirs.
func (p *Plan) seeable() func(string) bool {
	return func(x string) bool {
		return within(x, p.Repo) || within(x, p.GitDir) || within(x, p.CommonDir)
	}
}

// Nested lists what a git dir found inside the repository repo (a nested
// repository's .git) steers, as [Make] does for the repository's own:
// its steering files and linked worktrees' dirs, the files its config
// includes and its core.hooksPath inside repo (global are the global
// config files, home expands "~/"), and the commondir files that must not
// appear in it or its submodules' git dirs (watch). A commondir already
// there is refused, as in the repository's own git dir.
func Nested(gitDir, repo, home string, global []string) (steer []Steer, watch []string, err error) {
	planted := filepath.Join(gitDir, "commondir")
	if _, err := os.Lstat(planted); err == nil {
		return nil, nil, fmt.Errorf("%s exists: it redirects git to another config and hooks, and git never writes it in a repository's own git dir; inspect it (a box may have planted it), then remove it", planted)
	}
	seen := func(x string) bool { return within(x, repo) }
	cs, _, err := configSteer(global, []string{filepath.Join(gitDir, "config"), filepath.Join(gitDir, "config.worktree")}, filepath.Dir(gitDir), gitDir, home, seen)
	if err != nil {
		return nil, nil, fmt.Errorf("the nested repository %s: %w", filepath.Dir(gitDir), err)
	}
	sub := Plan{Repo: repo, CommonDir: gitDir}
	sub.modules()
	if err := sub.submoduleConfig(global, home); err != nil {
		return nil, nil, fmt.Errorf("the nested repository %s: %w", filepath.Dir(gitDir), err)
	}
	watch = slices.Concat([]string{planted}, sequencerWatch(gitDir), sub.Watch)
	return append(append(GitDirSteer(gitDir), cs...), sub.Steer...), watch, nil
}

// submoduleConfig lists what the submodules' configs make git read or
// run where the box can write, as [Plan.config] does for the
// repository's: host git reads them when it recurses into a submodule.
func (p *Plan) submoduleConfig(global []string, home string) error {
	seen := p.seeable()
	if p.GitDir == "" {
		seen = func(x string) bool { return within(x, p.Repo) }
	}
	for _, m := range p.submodules {
		s, _, err := configSteer(global, []string{filepath.Join(m.gitDir, "config"), filepath.Join(m.gitDir, "config.worktree")}, m.worktree, m.gitDir, home, seen)
		if err != nil {
			return fmt.Errorf("the submodule %s: %w", m.gitDir, err)
		}
		p.Steer = append(p.Steer, s...)
	}
	return nil
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
				// Without core.worktree, hooks run in the git dir.
				sm := submodule{gitDir: d, worktree: d}
				if wt, ok := Lookup(ReadConfig(filepath.Join(d, "config")), "core.worktree"); ok && wt != "" {
					wt = resolve(d, wt)
					sm.worktree = wt
					if within(wt, p.Repo) {
						if fi, err := os.Lstat(filepath.Join(wt, ".git")); err == nil && fi.Mode().IsRegular() {
							p.add(RO, filepath.Join(wt, ".git"), "git pin: a submodule's gitdir pointer")
						}
					}
				}
				if _, err := os.Lstat(filepath.Join(d, "commondir")); err != nil {
					p.Watch = append(p.Watch, filepath.Join(d, "commondir"))
				}
				p.Watch = append(p.Watch, sequencerWatch(d)...)
				p.submodules = append(p.submodules, sm)
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

// WorktreeHooks are the directories host git may run hooks from in the
// working tree worktree whose git dir is gitDir: the common dir's
// hooks/ and every core.hooksPath of the config files git reads there.
// A nested repository's or a submodule's hooks are the user's, held with
// its git dir, but what they run lies in its working tree, in the box's
// repository, and git runs them there on the user's next commit.
func WorktreeHooks(gitDir, worktree, home string, global []string) ([]string, error) {
	common := gitDir
	if c, err := readPointer(filepath.Join(gitDir, "commondir"), ""); err == nil {
		common = resolve(gitDir, c)
	}
	files := []string{filepath.Join(common, "config"), filepath.Join(common, "config.worktree")}
	if common != gitDir {
		files = append(files, filepath.Join(gitDir, "config.worktree"))
	}
	// Where these lie is the steering plan's business (Nested, Make):
	// here only their names count.
	_, hooks, err := configSteer(global, files, worktree, common, home, func(string) bool { return false })
	if err != nil {
		return nil, fmt.Errorf("the repository %s: %w", worktree, err)
	}
	return append([]string{filepath.Join(common, "hooks")}, hooks...), nil
}

// Pointer is the git dir a .git file points at, absolute and clean (not
// resolved: the path may not exist).
func Pointer(dotgit string) (string, error) {
	ptr, err := readPointer(dotgit, "gitdir: ")
	if err != nil {
		return "", err
	}
	return resolve(filepath.Dir(dotgit), ptr), nil
}
