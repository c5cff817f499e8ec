package protect

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"

	"github.com/aisan-dev/aisan/jail/strictbox/gitpin"
	"golang.org/x/sys/unix"
)

// MaxEntries bounds the walk: a tree with more entries is refused, since
// what lies past the bound could not be protected.
const MaxEntries = 1_000_000

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

// GitFacts are what Gather needs of jail/gitpin's plan.
type GitFacts struct {
	// GitDir and CommonDir are the repository's git dirs ("" without git).
	GitDir, CommonDir string
	Steer             []gitpin.Steer
	Watch             []string
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
	for _, p := range w.names {
		found[p] = true
		f.Found = append(f.Found, look(p, ""))
	}
	for _, c := range RootCandidates(repo) {
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
	for _, g := range w.nestedGit {
		pf := look(g, "")
		f.NestedGit = append(f.NestedGit, pf)
		if pf.Dir && !pf.Link {
			steer = append(steer, gitpin.GitDirSteer(g)...)
		}
	}
	for _, s := range steer {
		pf := look(s.Path, s.Why)
		if !pf.Exists {
			pf.Dir = s.Dir
		}
		if s.Live != nil || (s.Dir && filepath.Base(s.Path) == "modules") {
			pf.Shadowed, pf.Live = true, s.Live
		}
		f.Steer = append(f.Steer, pf)
	}
	return f, nil
}

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
}

// walk reads every directory under roots (never following a symlink,
// never descending into a protected directory, into skip's git dirs
// (true) only for sockets, into skip's false entries not at all),
// several at once.
func walk(roots []string, skip map[string]bool) (walked, error) {
	type job struct {
		dir    string
		inGit  bool
		isRoot bool
	}
	var (
		mu      sync.Mutex
		w       walked
		pending sync.WaitGroup
		over    bool
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
				n := readDir(j.dir, buf, func(name string, typ byte) {
					p := filepath.Join(j.dir, name)
					if typ == unix.DT_UNKNOWN {
						typ = lstatType(p)
					}
					switch typ {
					case unix.DT_SOCK:
						local.sockets = append(local.sockets, p)
						return
					case unix.DT_LNK:
						if !j.inGit && IsProtectedName(name) {
							local.names = append(local.names, p)
						}
						if !j.inGit && name == ".git" && !j.isRoot {
							local.nestedGit = append(local.nestedGit, p)
						}
						return
					}
					if !j.inGit {
						if name == ".git" && !j.isRoot {
							local.nestedGit = append(local.nestedGit, p)
						}
						if IsProtectedName(name) {
							local.names = append(local.names, p)
							return
						}
					}
					if typ == unix.DT_DIR {
						if s, listed := skip[p]; listed && !s {
							return // not in the box
						}
						inGit := j.inGit || skip[p] || name == ".git"
						subs = append(subs, job{dir: p, inGit: inGit})
					}
				})
				mu.Lock()
				w.entries += n
				w.sockets = append(w.sockets, local.sockets...)
				w.names = append(w.names, local.names...)
				w.nestedGit = append(w.nestedGit, local.nestedGit...)
				stop := w.entries > MaxEntries
				over = over || stop
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
	if over {
		return walked{}, &TooLargeError{Root: roots[0], Limit: MaxEntries}
	}
	for _, s := range []*[]string{&w.sockets, &w.names, &w.nestedGit} {
		slices.Sort(*s)
	}
	return w, nil
}

// readDir calls fn for each entry of dir (but . and ..) with its type as
// getdents gives it, and returns how many there were. A directory that
// cannot be opened gives none.
func readDir(dir string, buf []byte, fn func(name string, typ byte)) int {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return 0
	}
	defer unix.Close(fd)
	n := 0
	for {
		m, err := unix.Getdents(fd, buf)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil || m <= 0 {
			return n
		}
		b := buf[:m]
		for len(b) >= 19 {
			// struct linux_dirent64: ino 8, off 8, reclen 2, type 1, name.
			reclen := int(b[16]) | int(b[17])<<8
			if reclen < 19 || reclen > len(b) {
				return n
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

// NewSince are the protected names and nested .git entries found after a
// box that are not in known (what existed at launch, and the plan's own
// paths), for the end's sweep.
func NewSince(repo string, known []string, git GitFacts) ([]string, error) {
	roots := []string{repo}
	skip := map[string]bool{}
	for _, d := range []string{git.GitDir, git.CommonDir} {
		if d != "" {
			skip[d] = true
		}
	}
	w, err := walk(roots, skip)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range slices.Concat(w.names, w.nestedGit) {
		if !slices.Contains(known, p) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
