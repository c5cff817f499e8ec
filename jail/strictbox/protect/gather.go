package protect

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/aisan-dev/aisan/jail/strictbox/gitpin"
	"golang.org/x/sys/unix"
)

// MaxEntries bounds the walk: a tree with more entries is refused, since
// what lies past the bound could not be protected.
const MaxEntries = 1_000_000

// maxEntries is the walk's bound: MaxEntries, but for tests.
var maxEntries = MaxEntries

// walkers is how many directories are read at once.
const walkers = 4

// TooLargeError is a tree the walk could not finish.
type TooLargeError struct {
	Root  string
	Limit int
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s holds more than %d entries: strict mode looks at every one at launch (for sockets and files host tools run) and stops there", e.Root, e.Limit)
}

// Hints says what to do.
func (e *TooLargeError) Hints() []string {
	return []string{"start the box in a smaller repository, or remove generated trees (build output, dependency caches) first"}
}

// GitFacts are what Gather needs besides the repository: jail/gitpin's
// plan, the git config files nested repositories read, and which tools
// the host has.
type GitFacts struct {
	// GitDir and CommonDir are the repository's git dirs ("" without git).
	GitDir, CommonDir string
	Steer             []gitpin.Steer
	Watch             []string
	// Home and Global (the user's and the system's git config files)
	// are for nested repositories' includes and core.hooksPath; when
	// unset, the process's own are taken.
	Home   string
	Global []string
	// Installed reports whether a command is on the host's PATH: a
	// swept row whose tool is gets its root mount point (nil: none is).
	Installed func(cmd string) bool
	// Loads, when set, says what a file found at launch among
	// [LoadsNames] makes its tool load or run besides itself: what an
	// .envrc makes direnv source or put on PATH, the programs a project
	// MCP file's servers run, the scripts Claude's project hooks, VS
	// Code's folder-open tasks and a dev container's initializeCommand
	// run. The tool's approval of the file covers
	// them (or it asks nothing), so each in the repository is protected
	// as a steering path. Its error refuses the launch. (Reading them is
	// left to the caller: the front links this package and no shell
	// parser.)
	Loads func(envrc string) ([]gitpin.Steer, error)
	// Hooks are the directories git may run hooks from (jail/gitpin's
	// HookDirs); HookLoads, when set, says what the hooks in one of them
	// run besides themselves when git runs them in the working tree
	// root, as Loads does for a file: host git runs them on the next
	// commit, merge, checkout or push without asking. Gather asks it
	// too about the hooks of every nested repository and submodule,
	// with their own working trees.
	Hooks     []string
	HookLoads func(dir, root string) ([]gitpin.Steer, error)
}

// Gather walks repo (and a common git dir outside it) for sockets,
// protected names and nested repositories, and looks at git's steering
// paths. It reads and creates nothing else.
func Gather(repo string, git GitFacts) (Facts, error) {
	f := Facts{Repo: repo, Watch: slices.Clone(git.Watch)}
	roots := []string{repo}
	if git.CommonDir != "" && !within(git.CommonDir, repo) {
		roots = append(roots, git.CommonDir)
	}
	skip := map[string]bool{}
	for _, d := range []string{git.GitDir, git.CommonDir} {
		if d != "" {
			skip[d] = true
		}
	}
	if git.GitDir != git.CommonDir && git.CommonDir != "" {
		// A linked worktree's box sees its own private git dir only: the
		// siblings' are sealed away, and a mask there could not be
		// mounted.
		skip[filepath.Join(git.CommonDir, "worktrees")] = false
		roots = append(roots, git.GitDir)
	}
	w, err := walk(roots, skip)
	if err != nil {
		return Facts{}, err
	}
	f.Entries, f.Sockets = w.entries, w.sockets
	found := map[string]bool{}
	inUse := map[string]bool{}
	for _, p := range w.names {
		found[p] = true
		f.Found = append(f.Found, look(p, ""))
		if r, ok := ruleFor(filepath.Base(p)); ok && filepath.Dir(p) == repo {
			inUse[r.Who] = true
		}
	}
	for _, c := range RootCandidates(repo, git.Installed, inUse) {
		if !found[c.Path] {
			pf := look(c.Path, c.Why)
			if !pf.Exists {
				pf.Dir = c.Dir
			}
			f.Found = append(f.Found, pf)
		}
	}
	for i := range f.Found {
		if f.Found[i].Why == "" {
			r, _ := ruleFor(filepath.Base(f.Found[i].Path))
			f.Found[i].Why = r.Who + ": " + r.Why
		}
	}
	steer := slices.Clone(git.Steer)
	var asks []ask
	for _, p := range w.names {
		if git.Loads != nil && asksLoads(filepath.Base(p)) {
			asks = append(asks, ask{p, git.Loads})
		}
	}
	nested, err := nestedGit(repo, git, w.nestedGit, w.gitDirs)
	if err != nil {
		return Facts{}, err
	}
	f.Worktrees = nested.trees
	if git.HookLoads != nil {
		hooks := nested.hooks
		for _, d := range git.Hooks {
			hooks = append(hooks, hookDir{d, repo})
		}
		for _, h := range hooks {
			asks = append(asks, ask{h.dir, func(d string) ([]gitpin.Steer, error) { return git.HookLoads(d, h.root) }})
		}
	}
	// What lies in a git dir, the repository's or a nested one's, is
	// held with it.
	loads, notes, err := keptLoads(repo, append([]string{git.GitDir, git.CommonDir}, w.nestedGit...), asks, found)
	if err != nil {
		return Facts{}, err
	}
	f.Notes = notes
	steer = append(steer, loads...)
	links, notes := linkTargets(repo, w.names, found, []string{git.GitDir, git.CommonDir})
	f.Notes = append(f.Notes, notes...)
	for _, l := range links {
		if !slices.ContainsFunc(loads, func(s gitpin.Steer) bool { return s.Path == l.Path }) {
			steer = append(steer, l)
		}
	}
	for _, g := range w.nestedGit {
		f.NestedGit = append(f.NestedGit, look(g, ""))
	}
	steer = append(steer, nested.steer...)
	f.Watch = append(f.Watch, nested.watch...)
	for _, s := range steer {
		if s.Modules {
			f.Modules = append(f.Modules, ModuleDir{Path: s.Path, Names: s.Names, Why: s.Why, Site: s.Site, Node: s.Node, Files: s.Files})
			continue
		}
		pf := look(s.Path, s.Why)
		if !pf.Exists {
			pf.Dir = s.Dir
		}
		if s.Live != nil || (s.Dir && filepath.Base(s.Path) == "modules") {
			pf.Shadowed, pf.Live = true, s.Live
		}
		f.Steer = append(f.Steer, pf)
	}
	f.Modules = ModuleDirs(f.Modules)
	return f, nil
}

// LoadsNames are the files [GitFacts.Loads] is asked about, with
// lefthook's configs ([LefthookConfig]) and those whose names end in
// one of LoadsSuffixes.
// A directory among them (.claude, .codex, .vscode, .devcontainer) is
// asked about as a whole: which of its files name what to run is the
// caller's business.
var LoadsNames = []string{".envrc", ".mcp.json", "opencode.json", "opencode.jsonc", ".opencode", ".claude", ".codex", ".vscode", ".devcontainer", ".devcontainer.json", ".tool-versions", "rust-toolchain.toml", "rust-toolchain", ".yarnrc.yml", ".yarnrc", "pyvenv.cfg", ".husky", ".pre-commit-config.yaml",
	"mise.toml", ".mise.toml", "mise.local.toml", ".mise.local.toml", ".rtx.toml", ".rtx.local.toml", "mise", ".mise"}

// LoadsSuffixes are the endings of the names [GitFacts.Loads] is also
// asked about: a VS Code workspace file, for its tasks; LoadsPatterns
// are patterns of them: mise's environments' configs.
var (
	LoadsSuffixes = []string{".code-workspace"}
	LoadsPatterns = []string{"mise.*.toml", ".mise.*.toml"}
)

// asksLoads reports whether [GitFacts.Loads] is asked about base.
func asksLoads(base string) bool {
	for _, s := range LoadsSuffixes {
		if len(base) > len(s) && strings.HasSuffix(base, s) {
			return true
		}
	}
	for _, p := range LoadsPatterns {
		if ok, _ := path.Match(p, base); ok {
			return true
		}
	}
	return slices.Contains(LoadsNames, base) || LefthookConfig(base)
}

// ask is a file (or a hooks directory) to ask what its tool runs
// besides itself, and whom.
type ask struct {
	path  string
	loads func(string) ([]gitpin.Steer, error)
}

// keptLoads asks what each of asks makes its tool load, and keeps what
// lies in repo and is not protected already (by a row found, or in a
// directory found, or in a git dir of gitDirs), each once; and the
// notes of what could not be followed.
func keptLoads(repo string, gitDirs []string, asks []ask, found map[string]bool) ([]gitpin.Steer, []string, error) {
	var out []gitpin.Steer
	var notes []string
	seen := map[string]bool{}
	inGit := func(p string) bool {
		return slices.ContainsFunc(gitDirs, func(d string) bool { return d != "" && (p == d || within(p, d)) })
	}
	for _, a := range asks {
		ls, err := a.loads(a.path)
		if err != nil {
			return nil, nil, err
		}
		for _, l := range ls {
			if l.Note != "" && !slices.Contains(notes, l.Note) {
				notes = append(notes, l.Note)
			}
			if l.Modules {
				i := slices.IndexFunc(out, func(o gitpin.Steer) bool {
					return o.Modules && o.Path == l.Path && o.Site == l.Site && o.Node == l.Node && o.Files == l.Files
				})
				switch {
				case l.Path != repo && !within(l.Path, repo):
				case i < 0:
					l.Names = slices.Clone(l.Names)
					out = append(out, l)
				default:
					for _, n := range l.Names {
						if !slices.Contains(out[i].Names, n) {
							out[i].Names = append(out[i].Names, n)
						}
					}
				}
				continue
			}
			if l.Path == "" || l.Path == repo || !within(l.Path, repo) || inFound(l.Path, repo, found) || inGit(l.Path) || seen[l.Path] {
				continue
			}
			seen[l.Path] = true
			out = append(out, l)
		}
	}
	return out, notes, nil
}

// linkTargets are what the symlinks in the protected directories among
// names lead to in repo, outside every protected path (found) and git
// dir: the tools read a protected directory through its links (a skill
// kept in the repository and linked from .agents/skills/, a settings
// file linked into .claude/), so what a link names is held as a
// steering path, present or not: the copy keeps the link, whose target
// the box could otherwise write. A link that leads to the repository
// or to a directory holding the link is left alone (nothing smaller
// can be held for it), and so is one whose way passes through another
// link in the repository: the launch says so.
// maxLinkWalk bounds the entries of one protected directory that are
// looked at for links: the walk runs on every launch.
const maxLinkWalk = 4096

func linkTargets(repo string, names []string, found map[string]bool, gitDirs []string) (out []gitpin.Steer, notes []string) {
	seen := map[string]bool{}
	for _, p := range names {
		if fi, err := os.Lstat(p); err != nil || !fi.IsDir() {
			continue
		}
		r, _ := ruleFor(filepath.Base(p))
		entries := 0
		filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
			if entries++; entries > maxLinkWalk {
				// A store (.jj's, .hg's) can hold a whole history.
				notes = append(notes, fmt.Sprintf("%s holds more than %d entries: links past them are not followed, and what they lead to is not held for review", quote(p), maxLinkWalk))
				return filepath.SkipAll
			}
			if err != nil || d.Type()&fs.ModeSymlink == 0 {
				return nil
			}
			t, err := os.Readlink(q)
			if err != nil {
				return nil
			}
			if !filepath.IsAbs(t) {
				t = filepath.Join(filepath.Dir(q), t)
			}
			t = filepath.Clean(t)
			if !within(t, repo) || inFound(t, repo, found) || seen[t] {
				return nil
			}
			for _, g := range gitDirs {
				if g != "" && within(t, g) {
					return nil
				}
			}
			seen[t] = true
			if t == repo || within(q, t) {
				notes = append(notes, fmt.Sprintf("%s links to %s, which holds it: what the box writes there is not held for review", quote(q), quote(t)))
				return nil
			}
			if real, err := filepath.EvalSymlinks(filepath.Dir(t)); err == nil && real != filepath.Dir(t) {
				notes = append(notes, fmt.Sprintf("%s leads through another link to %s: what the box writes there is not held for review", quote(q), quote(real)))
				return nil
			}
			fi, err := os.Stat(t)
			out = append(out, gitpin.Steer{Path: t, Dir: err == nil && fi.IsDir(), Why: r.Who + ": read through the link " + q})
			return nil
		})
	}
	return out, notes
}

// inFound reports whether p, or a directory above it below repo, is
// among found.
func inFound(p, repo string, found map[string]bool) bool {
	for ; p != repo && within(p, repo); p = filepath.Dir(p) {
		if found[p] {
			return true
		}
	}
	return false
}

// nestedGit lists what the nested .git entries found steer, as
// jail/gitpin does for the repository's own: a nested repository's git
// dir gets the same copies and watched files (its commondir, config and
// what it includes, hooks, info, config.worktree, modules, worktrees),
// and so does a git dir elsewhere in the repository that a nested .git
// file points at (a pointer into a git dir is that dir's business), and
// a directory git takes for a git dir of its own (bare, a fixture's
// repo.git): git run in it obeys its config and hooks as in any other.
func nestedGit(repo string, git GitFacts, found, bare []string) (out nestedFacts, err error) {
	home, global := git.Home, git.Global
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	if global == nil {
		global = gitpin.GlobalFiles(home, os.Getenv("XDG_CONFIG_HOME"))
	}
	inGitDir := func(d string) bool {
		for _, g := range append([]string{git.GitDir, git.CommonDir}, found...) {
			if g != "" && within(d, g) {
				return true
			}
		}
		return false
	}
	var dirs []string
	worktree := func(gitDir, g string) error {
		// The box's own index is the box's repository's business; a git
		// dir two .git files share is one index, kept once.
		if gitDir != git.GitDir && gitDir != git.CommonDir && !slices.ContainsFunc(out.trees, func(w Worktree) bool { return w.GitDir == gitDir }) {
			out.trees = append(out.trees, Worktree{Root: filepath.Dir(g), GitDir: gitDir})
		}
		if git.HookLoads == nil {
			return nil
		}
		hs, err := gitpin.WorktreeHooks(gitDir, filepath.Dir(g), home, global)
		for _, h := range hs {
			out.hooks = append(out.hooks, hookDir{h, filepath.Dir(g)})
		}
		return err
	}
	for _, g := range found {
		fi, err := os.Lstat(g)
		switch {
		case err != nil || fi.Mode()&fs.ModeSymlink != 0:
			// Gone, or a link (which Make refuses).
		case fi.IsDir():
			dirs = append(dirs, g)
			if err := worktree(g, g); err != nil {
				return nestedFacts{}, err
			}
		case fi.Mode().IsRegular():
			d, err := gitpin.Pointer(g)
			if err != nil {
				// Unreadable: git finds no repository there.
				continue
			}
			if _, err := os.Lstat(d); err == nil {
				// A submodule's, a linked worktree's: its hooks run
				// its working tree's files, here.
				if err := worktree(d, g); err != nil {
					return nestedFacts{}, err
				}
			}
			if !within(d, repo) || inGitDir(d) {
				// Outside, the box cannot write it; in a git dir, it
				// is that dir's.
				continue
			}
			if _, err := os.Lstat(d); err != nil {
				return nestedFacts{}, fmt.Errorf("%s points at %s, which does not exist: a strict box could create a git dir there that host git then obeys; remove the stale .git file or restore its git dir", g, d)
			}
			dirs = append(dirs, d)
		}
	}
	for _, d := range bare {
		if !inGitDir(d) && !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	for _, d := range dirs {
		s, w, err := gitpin.Nested(d, repo, home, global)
		if err != nil {
			return nestedFacts{}, err
		}
		out.steer, out.watch = append(out.steer, s...), append(out.watch, w...)
	}
	return out, nil
}

// nestedFacts are what the nested .git entries steer and watch (as
// jail/gitpin's plan does for the repository's), the nested working
// trees with their indexes, and where git run in each (a nested .git's
// directory, wherever its git dir lies) finds hooks.
type nestedFacts struct {
	steer []gitpin.Steer
	watch []string
	trees []Worktree
	hooks []hookDir
}

// hookDir is a directory git may run hooks from, and the working tree
// it runs them in.
type hookDir struct{ dir, root string }

// look is what is at p, without following a final symlink, with a
// tree's size up to the copy limits.
func look(p, why string) PathFact {
	pf := PathFact{Path: p, Why: why}
	fi, err := os.Lstat(p)
	if err != nil {
		pf.Sealed = sealed(filepath.Dir(p))
		return pf
	}
	pf.Exists = true
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		pf.Link = true
	case fi.IsDir():
		pf.Dir = true
		filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
			if err != nil || q == p {
				return nil
			}
			pf.Files++
			if d.Type().IsRegular() {
				if i, err := d.Info(); err == nil {
					pf.Bytes += i.Size()
				}
			}
			if pf.Files > MaxCopyFiles || pf.Bytes > MaxCopyBytes {
				return filepath.SkipAll
			}
			return nil
		})
	case fi.Mode().IsRegular():
		pf.Files, pf.Bytes = 1, fi.Size()
	default:
		pf.Other = true
	}
	return pf
}

// sealed reports whether this user could not create an entry in dir
// (nor its missing parents): nothing to protect there.
func sealed(dir string) bool {
	for {
		if _, err := os.Lstat(dir); err == nil {
			return unix.Access(dir, unix.W_OK) != nil
		}
		if dir == "/" || dir == "." {
			return true
		}
		dir = filepath.Dir(dir)
	}
}

// walked is what the walk found.
type walked struct {
	entries   int
	sockets   []string
	names     []string // protected names, not descended into
	nestedGit []string
	// links are the symlinks outside git dirs and dependency trees
	// (but protected names, which are in names).
	links []string
	// gitDirs are directories (not the roots, not in a git dir) that git
	// would take for a git dir of their own: see [isGitDir].
	gitDirs []string
	// unreadable are directories that could not be read, outside git
	// dirs (inGitUnreadable: within them).
	unreadable, inGitUnreadable []Unreadable
	// unread are directories left unread once the walk passed
	// MaxEntries; over says it did.
	unread []string
	over   bool
}

// Unreadable is a directory the walk could not read: what lies in it
// was not looked at.
type Unreadable struct {
	Path string
	Err  error
}

// UnreadableError refuses a launch: a directory under the repository
// cannot be read, so a socket or a file host tools run could lie in it
// unseen, neither masked nor protected.
type UnreadableError struct{ Dirs []Unreadable }

func (e *UnreadableError) Error() string {
	var names []string
	for _, d := range e.Dirs {
		names = append(names, fmt.Sprintf("%s (%v)", quote(d.Path), d.Err))
	}
	const most = 5
	more := ""
	if len(names) > most {
		more = fmt.Sprintf(" and %d more", len(names)-most)
		names = names[:most]
	}
	return fmt.Sprintf("strict mode cannot read %s%s: it looks at every directory of the repository at launch (for sockets and files host tools run), and what it cannot read it can neither mask nor protect", strings.Join(names, ", "), more)
}

// Hints says what to do.
func (e *UnreadableError) Hints() []string {
	return []string{fmt.Sprintf("make it readable (chmod u+rx %s) or move it out of the repository, then start the box again", quote(e.Dirs[0].Path))}
}

// quote shows a path with anything unprintable escaped, as the review's
// diff does: a name can come from a box.
func quote(s string) string {
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}

// walk reads every directory under roots as walkAll does, and refuses a
// tree it could not read whole: one past MaxEntries, or with a directory
// it cannot read.
func walk(roots []string, skip map[string]bool) (walked, error) {
	w := walkAll(roots, skip)
	if w.over {
		return walked{}, &TooLargeError{Root: roots[0], Limit: maxEntries}
	}
	if u := slices.Concat(w.unreadable, w.inGitUnreadable); len(u) > 0 {
		slices.SortFunc(u, func(a, b Unreadable) int { return strings.Compare(a.Path, b.Path) })
		return walked{}, &UnreadableError{Dirs: u}
	}
	return w, nil
}

// walkAll reads every directory under roots (never following a symlink,
// never descending into a protected directory, into skip's git dirs
// (true) only for sockets, into skip's false entries not at all),
// several at once. Past MaxEntries it reads no deeper and lists what it
// left unread; a directory it cannot read it lists too: it never takes
// one for empty.
func walkAll(roots []string, skip map[string]bool) walked {
	type job struct {
		dir    string
		inGit  bool
		isRoot bool
		// deps is set below a dependency tree (DepTrees).
		deps bool
	}
	var (
		mu      sync.Mutex
		w       walked
		pending sync.WaitGroup
	)
	var queue []job
	var qmu sync.Mutex
	qcond := sync.NewCond(&qmu)
	done := false
	push := func(j job) {
		pending.Add(1)
		qmu.Lock()
		queue = append(queue, j)
		qmu.Unlock()
		qcond.Signal()
	}
	pop := func() (job, bool) {
		qmu.Lock()
		defer qmu.Unlock()
		for len(queue) == 0 && !done {
			qcond.Wait()
		}
		if len(queue) == 0 {
			return job{}, false
		}
		j := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		return j, true
	}
	var workers sync.WaitGroup
	for range walkers {
		workers.Go(func() {
			buf := make([]byte, 32<<10)
			for {
				j, ok := pop()
				if !ok {
					return
				}
				var local walked
				var subs []job
				var gitNames int
				n, err := readDir(j.dir, buf, func(name string, typ byte) {
					p := filepath.Join(j.dir, name)
					if typ == unix.DT_UNKNOWN {
						typ = lstatType(p)
					}
					switch name {
					case "HEAD":
						gitNames |= 1
					case "objects", "refs", "commondir":
						gitNames |= 2
					}
					switch typ {
					case unix.DT_SOCK:
						local.sockets = append(local.sockets, p)
						return
					case unix.DT_LNK:
						if !j.inGit && protectedIn(name, j.deps) {
							local.names = append(local.names, p)
						}
						if !j.inGit && name == ".git" && !j.isRoot {
							local.nestedGit = append(local.nestedGit, p)
						}
						if !j.inGit && !j.deps && !IsProtectedName(name) && name != ".git" {
							local.links = append(local.links, p)
						}
						return
					}
					if !j.inGit {
						if name == ".git" && !j.isRoot {
							local.nestedGit = append(local.nestedGit, p)
						}
						if protectedIn(name, j.deps) {
							local.names = append(local.names, p)
							return
						}
					}
					if typ == unix.DT_DIR {
						if s, listed := skip[p]; listed && !s {
							return // not in the box
						}
						inGit := j.inGit || skip[p] || name == ".git"
						deps := j.deps || (!inGit && slices.Contains(DepTrees, name))
						subs = append(subs, job{dir: p, inGit: inGit, deps: deps})
					}
				})
				if err != nil {
					u := Unreadable{Path: blocker(j.dir, roots), Err: err}
					if j.inGit {
						local.inGitUnreadable = append(local.inGitUnreadable, u)
					} else {
						local.unreadable = append(local.unreadable, u)
					}
				}
				if gitNames == 3 && !j.inGit && !j.isRoot && isGitDir(j.dir) {
					local.gitDirs = append(local.gitDirs, j.dir)
				}
				mu.Lock()
				w.entries += n
				w.sockets = append(w.sockets, local.sockets...)
				w.names = append(w.names, local.names...)
				w.nestedGit = append(w.nestedGit, local.nestedGit...)
				w.links = append(w.links, local.links...)
				w.gitDirs = append(w.gitDirs, local.gitDirs...)
				w.unreadable = append(w.unreadable, local.unreadable...)
				w.inGitUnreadable = append(w.inGitUnreadable, local.inGitUnreadable...)
				stop := w.entries > maxEntries
				w.over = w.over || stop
				if stop {
					for _, s := range subs {
						w.unread = append(w.unread, s.dir)
					}
				}
				mu.Unlock()
				if !stop {
					for _, s := range subs {
						push(s)
					}
				}
				pending.Done()
			}
		})
	}
	for _, r := range roots {
		push(job{dir: r, inGit: skip[r], isRoot: true})
	}
	pending.Wait()
	qmu.Lock()
	done = true
	qmu.Unlock()
	qcond.Broadcast()
	workers.Wait()
	for _, s := range []*[]string{&w.sockets, &w.names, &w.nestedGit, &w.links, &w.gitDirs, &w.unread} {
		slices.Sort(*s)
	}
	for _, u := range []*[]Unreadable{&w.unreadable, &w.inGitUnreadable} {
		slices.SortFunc(*u, func(a, b Unreadable) int { return strings.Compare(a.Path, b.Path) })
		*u = slices.CompactFunc(*u, func(a, b Unreadable) bool { return a.Path == b.Path })
	}
	return w
}

// blocker is the directory to name for dir that cannot be opened: the
// highest of its ancestors (below a root) that this user cannot pass
// through (one that can be listed, not searched, hides its
// subdirectories), else dir itself.
func blocker(dir string, roots []string) string {
	out := dir
	for p := filepath.Dir(dir); !slices.Contains(roots, dir) && p != dir && p != "/"; dir, p = p, filepath.Dir(p) {
		if unix.Access(p, unix.X_OK) != nil {
			out = p
		}
		if slices.Contains(roots, p) {
			break
		}
	}
	return out
}

// isGitDir reports whether git would take dir for a git dir, as its
// setup.c is_git_directory does: a HEAD that is a ref or a symref, and
// objects/ and refs/ (or a commondir file pointing at them). It errs on
// the side of yes: a HEAD of the right shape and any of the others.
func isGitDir(dir string) bool {
	head := filepath.Join(dir, "HEAD")
	fi, err := os.Lstat(head)
	if err != nil {
		return false
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		t, err := os.Readlink(head)
		return err == nil && strings.HasPrefix(t, "refs/")
	case !fi.Mode().IsRegular():
		return false
	}
	fd, err := unix.Open(head, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		// Unreadable: git could not read it either, but the owner can
		// make it readable; count it.
		return true
	}
	defer unix.Close(fd)
	b := make([]byte, 256)
	n, _ := unix.Read(fd, b)
	if n < 0 {
		n = 0
	}
	s := string(b[:n])
	if rest, ok := strings.CutPrefix(s, "ref:"); ok {
		// git skips what its isspace() takes for space: " \t\n\r".
		return strings.HasPrefix(strings.TrimLeft(rest, " \t\n\r"), "refs/")
	}
	// git's get_oid_hex reads hex digits of either case.
	hex := 0
	for hex < len(s) && strings.IndexByte("0123456789abcdefABCDEF", s[hex]) >= 0 {
		hex++
	}
	return hex >= 40
}

// readDir calls fn for each entry of dir (but . and ..) with its type as
// getdents gives it, and returns how many there were. A directory that
// cannot be opened or read is an error, never taken for an empty one:
// what lies in it was not seen. One that is gone, or is no directory
// now, is not (it holds nothing any more).
func readDir(dir string, buf []byte, fn func(name string, typ byte)) (int, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) {
		return 0, nil
	}
	if err != nil {
		if sealedAway(dir) {
			return 0, nil
		}
		return 0, err
	}
	defer unix.Close(fd)
	n := 0
	for {
		m, err := unix.Getdents(fd, buf)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return n, err
		}
		if m <= 0 {
			return n, nil
		}
		b := buf[:m]
		for len(b) >= 19 {
			// struct linux_dirent64: ino 8, off 8, reclen 2, type 1, name.
			reclen := int(b[16]) | int(b[17])<<8
			if reclen < 19 || reclen > len(b) {
				return n, fmt.Errorf("a malformed directory entry")
			}
			typ := b[18]
			name := b[19:reclen]
			if i := slices.Index(name, 0); i >= 0 {
				name = name[:i]
			}
			b = b[reclen:]
			s := string(name)
			if s == "." || s == ".." {
				continue
			}
			n++
			fn(s, typ)
		}
	}
}

// sealedAway reports whether dir belongs to another user and this one
// cannot even pass through it: neither a box (run as this user, which
// cannot change its mode) nor anything it starts can reach or create an
// entry in it, so there is nothing to protect or sweep there (a
// database container's data directory, say).
func sealedAway(dir string) bool {
	var st unix.Stat_t
	if unix.Lstat(dir, &st) != nil {
		return false
	}
	return int(st.Uid) != os.Getuid() && unix.Access(dir, unix.X_OK) != nil
}

func lstatType(p string) byte {
	var st unix.Stat_t
	if unix.Lstat(p, &st) != nil {
		return unix.DT_UNKNOWN
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return unix.DT_DIR
	case unix.S_IFLNK:
		return unix.DT_LNK
	case unix.S_IFSOCK:
		return unix.DT_SOCK
	case unix.S_IFREG:
		return unix.DT_REG
	}
	return unix.DT_UNKNOWN
}

// Span is a box's run: from its launch to its end.
type Span struct{ Start, End time.Time }

// Since is what the end's sweep found in the repository.
type Since struct {
	// Paths are the entries the box planted: protected names and nested
	// .git entries not in known, the HEAD and config of a directory it
	// turned into a git dir, and links it made that lead into a
	// dependency tree.
	Paths []string
	// Unreadable are directories (outside git dirs) the sweep could not
	// read: the box may have planted anything in them.
	Unreadable []Unreadable
	// Unread are the directories left unread past MaxEntries.
	Unread []string
}

// intoDeps reports whether the link l resolves to a path in repo that
// lies in a dependency tree ([DepTrees]), or would once its target is
// made: where the end sweeps only the [Rule.InDeps] rows' names.
func intoDeps(l, repo string) bool {
	t, err := os.Readlink(l)
	if err != nil {
		return false
	}
	if !filepath.IsAbs(t) {
		t = filepath.Join(filepath.Dir(l), t)
	}
	if real, err := filepath.EvalSymlinks(t); err == nil {
		t = real
	}
	if r, err := filepath.EvalSymlinks(repo); err == nil {
		repo = r
	}
	rel, err := filepath.Rel(repo, t)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return false
	}
	for _, part := range strings.Split(rel, "/") {
		if slices.Contains(DepTrees, part) {
			return true
		}
	}
	return false
}

// NewSince are the protected names and nested .git entries found after a
// box that are not in known (what existed at launch, and the plan's own
// paths), the directories it made git dirs of, and what the sweep could
// not look into, for the end's sweep. An entry changed after run.End
// (the user's, after the box) is left alone; so is a git dir whose HEAD
// is older than run.Start (it was one at launch).
func NewSince(repo string, known []string, git GitFacts, run Span) Since {
	roots := []string{repo}
	skip := map[string]bool{}
	for _, d := range []string{git.GitDir, git.CommonDir} {
		if d != "" {
			skip[d] = true
		}
	}
	w := walkAll(roots, skip)
	after := func(p string, t time.Time) bool {
		var st unix.Stat_t
		if t.IsZero() || unix.Lstat(p, &st) != nil {
			return false
		}
		return time.Unix(st.Ctim.Unix()).After(t)
	}
	var s Since
	for _, p := range slices.Concat(w.names, w.nestedGit) {
		if !slices.Contains(known, p) && !after(p, run.End) {
			s.Paths = append(s.Paths, p)
		}
	}
	for _, l := range w.links {
		// Below a dependency tree, a package's own files are not
		// looked at; a link the box made that leads there (web ->
		// node_modules/pkg) would bring them where the user works.
		if !slices.Contains(known, l) && after(l, run.Start) && !after(l, run.End) && intoDeps(l, repo) {
			s.Paths = append(s.Paths, l)
		}
	}
	for _, d := range w.gitDirs {
		head := filepath.Join(d, "HEAD")
		if slices.Contains(known, d) || !after(head, run.Start) || after(head, run.End) {
			continue
		}
		// Without its HEAD, git no longer takes the directory for a git
		// dir; its config is what would run. The rest (objects, refs,
		// and whatever the directory held before) stays where it is.
		s.Paths = append(s.Paths, head)
		if _, err := os.Lstat(filepath.Join(d, "config")); err == nil {
			s.Paths = append(s.Paths, filepath.Join(d, "config"))
		}
	}
	for _, u := range w.unreadable {
		if !after(u.Path, run.End) {
			s.Unreadable = append(s.Unreadable, u)
		}
	}
	slices.SortFunc(s.Unreadable, func(a, b Unreadable) int { return strings.Compare(a.Path, b.Path) })
	s.Unread = w.unread
	slices.Sort(s.Paths)
	s.Paths = slices.Compact(s.Paths)
	return s
}
