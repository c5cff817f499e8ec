package held

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/aisan-dev/aisan/jail/shared/regfile"
	"golang.org/x/sys/unix"
)

// Conflict is a change whose path the host changed since the box started.
type Conflict struct {
	Change
	// Host is what the repository holds now.
	Host Entry
}

// ConflictError refuses to apply a set: the host changed what the box
// changed too.
type ConflictError struct {
	Set       string
	Repo      string
	Conflicts []Conflict
}

func (e *ConflictError) Error() string {
	var names []string
	for _, c := range e.Conflicts {
		rel, err := filepath.Rel(e.Repo, c.Path)
		if err != nil || strings.HasPrefix(rel, "..") {
			rel = c.Path
		}
		names = append(names, quote(rel))
	}
	return fmt.Sprintf("not applied: the host changed %s since the box started, and the box changed it too", strings.Join(names, ", "))
}

// Hints says what to do.
func (e *ConflictError) Hints() []string {
	return []string{"merge the box's version by hand from the diff above, then drop the set with --discard"}
}

// RenderConflicts shows, for each conflict, the host's current version
// against the box's.
func (e *ConflictError) RenderConflicts(w io.Writer) {
	for _, c := range e.Conflicts {
		rel, err := filepath.Rel(e.Repo, c.Path)
		if err != nil || strings.HasPrefix(rel, "..") {
			rel = c.Path
		}
		fmt.Fprintf(w, "conflict %s (a/ the host's now, b/ the box's)\n", quote(rel))
		renderPair(w, rel, c.Host, c.New)
	}
}

// roots are the directories a set's paths lie under, longest first: the
// repository and a linked worktree's git dirs outside it.
func roots(m Manifest) []string {
	var rs []string
	for _, r := range []string{m.Repo, m.GitDir, m.CommonDir} {
		if r != "" && !slices.Contains(rs, r) {
			rs = append(rs, r)
		}
	}
	slices.SortFunc(rs, func(a, b string) int { return len(b) - len(a) })
	return rs
}

// beneath opens the directories of a set's roots without following a
// symlink, and resolves repository paths under them.
type beneath struct {
	fds map[string]int
}

func openRoots(m Manifest) (*beneath, error) {
	b := &beneath{fds: map[string]int{}}
	for _, r := range roots(m) {
		if real, err := filepath.EvalSymlinks(r); err != nil || real != r {
			b.close()
			return nil, fmt.Errorf("%s is not where it was when the box started (moved, or a symlink now); nothing applied", r)
		}
		fd, err := unix.Open(r, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			b.close()
			return nil, fmt.Errorf("opening %s: %w", r, err)
		}
		b.fds[r] = fd
	}
	return b, nil
}

func (b *beneath) close() {
	for _, fd := range b.fds {
		unix.Close(fd)
	}
}

// split returns the root fd and relative path for p.
func (b *beneath) split(p string) (int, string, error) {
	best := ""
	for r := range b.fds {
		if (p == r || strings.HasPrefix(p, r+"/")) && len(r) > len(best) {
			best = r
		}
	}
	if best == "" || p == best {
		return -1, "", fmt.Errorf("%s lies outside the repository", quote(p))
	}
	return b.fds[best], strings.TrimPrefix(p, best+"/"), nil
}

var resolve = uint64(unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS)

// openAt opens rel under root, following no symlink on the way.
func openAt(root int, rel string, flags int, mode uint32) (int, error) {
	return unix.Openat2(root, rel, &unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC | unix.O_NOFOLLOW), Mode: uint64(mode), Resolve: resolve})
}

// parent opens the directory holding rel.
func parent(root int, rel string) (int, string, error) {
	dir, name := filepath.Split(rel)
	if dir == "" {
		fd, err := unix.Dup(root)
		return fd, name, err
	}
	fd, err := openAt(root, strings.TrimSuffix(dir, "/"), unix.O_PATH|unix.O_DIRECTORY, 0)
	return fd, name, err
}

// makeParent opens the directory holding rel, making the missing ones
// on the way (never through a symlink).
func makeParent(root int, rel string) (int, string, error) {
	dir, _ := filepath.Split(rel)
	parts := strings.Split(strings.TrimSuffix(dir, "/"), "/")
	for i := range parts {
		if dir == "" {
			break
		}
		sub := strings.Join(parts[:i+1], "/")
		fd, err := openAt(root, sub, unix.O_PATH|unix.O_DIRECTORY, 0)
		if err == nil {
			unix.Close(fd)
			continue
		}
		if !errors.Is(err, unix.ENOENT) {
			return -1, "", err
		}
		pfd, name, err := parent(root, sub)
		if err != nil {
			return -1, "", err
		}
		err = unix.Mkdirat(pfd, name, 0o755)
		unix.Close(pfd)
		if err != nil && !errors.Is(err, unix.EEXIST) {
			return -1, "", err
		}
	}
	return parent(root, rel)
}

// hostEntry is what the repository holds at p now (content at a
// temporary copy, for comparing and showing).
func (b *beneath) hostEntry(p, tmp string) (Entry, error) {
	root, rel, err := b.split(p)
	if err != nil {
		return Entry{}, err
	}
	dfd, name, err := parent(root, rel)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
		// Nothing there: a directory on the way is missing, or a file
		// (what the box made a directory of is still one).
		return Entry{}, nil
	}
	if err != nil {
		return Entry{}, fmt.Errorf("resolving %s: %w", quote(p), err)
	}
	defer unix.Close(dfd)
	var st unix.Stat_t
	if err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); errors.Is(err, unix.ENOENT) {
		return Entry{}, nil
	} else if err != nil {
		return Entry{}, err
	}
	e := Entry{Exists: true, Mode: fs.FileMode(st.Mode & 0o7777), Size: st.Size}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		e.Dir = true
	case unix.S_IFLNK:
		buf := make([]byte, 4096)
		n, err := unix.Readlinkat(dfd, name, buf)
		if err != nil {
			return Entry{}, err
		}
		e.Link = string(buf[:n])
	case unix.S_IFREG:
		fd, err := unix.Openat(dfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err != nil {
			return Entry{}, err
		}
		f := os.NewFile(uintptr(fd), p)
		defer f.Close()
		data, err := io.ReadAll(io.LimitReader(f, maxApplied+1))
		if err != nil {
			return Entry{}, err
		}
		out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return Entry{}, err
		}
		_, err = out.Write(data)
		out.Close()
		if err != nil {
			return Entry{}, err
		}
		e.at, e.data = tmp, data
	default:
		e.Mode |= fs.ModeIrregular
		e.at = ""
	}
	return e, nil
}

// Apply writes what set holds into its repository and drops the set. It
// first checks every change: where the host changed a path since the
// launch (and not to the box's version), nothing is written and a
// [ConflictError] names both.
func Apply(set string) error { return apply(set, false) }

// ApplyShown is [Apply] for a set a review showed as it is now (see
// [Show]); any other is refused with a [NotShownError], nothing written.
func ApplyShown(set string) error { return apply(set, true) }

// NotShownError refuses to apply a set no review showed as it is.
type NotShownError struct{ Set string }

func (e *NotShownError) Error() string {
	return fmt.Sprintf("not applied: %s holds what no review showed; nothing written", quote(e.Set))
}

func apply(set string, shown bool) error {
	m, err := ReadManifest(set)
	if err != nil {
		return err
	}
	if m.State != Held {
		return fmt.Errorf("the box of %s has not ended yet (or its end was not collected); nothing applied", set)
	}
	cs, err := changes(set, m)
	if err != nil {
		return err
	}
	if shown {
		d, err := digest(m.Repo, cs)
		if err != nil {
			return err
		}
		if rec, err := regfile.Read(filepath.Join(set, shownName), 256); err != nil || string(rec) != d {
			return &NotShownError{Set: set}
		}
	}
	if err := unreadable(set, m, cs); err != nil {
		return err
	}
	b, err := openRoots(m)
	if err != nil {
		return err
	}
	defer b.close()
	scratch, err := os.MkdirTemp(set, ".host-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	var todo []Change
	var conflicts []Conflict
	for i, c := range cs {
		host, err := b.hostEntry(c.Path, filepath.Join(scratch, fmt.Sprint(i)))
		if err != nil {
			return err
		}
		if same, err := sameEntry(host, c.New); err == nil && same {
			continue // already so
		}
		same, err := sameEntry(host, c.Old)
		if err != nil {
			return err
		}
		if !same && !(c.Old.Dir && host.Dir) {
			conflicts = append(conflicts, Conflict{Change: c, Host: host})
			continue
		}
		todo = append(todo, c)
	}
	if len(conflicts) > 0 {
		return &ConflictError{Set: set, Repo: m.Repo, Conflicts: conflicts}
	}
	// Directories and files in path order (a parent first), removals
	// deepest first.
	var removals []Change
	for _, c := range todo {
		if !c.New.Exists {
			removals = append(removals, c)
		}
	}
	slices.Reverse(removals)
	removeUnder := func(dir string) error {
		for i, r := range removals {
			if r.Path != "" && (dir == "" || strings.HasPrefix(r.Path, dir+"/")) {
				if err := b.remove(r); err != nil {
					return fmt.Errorf("removing %s: %w (the set is kept; what was written stays)", quote(r.Path), err)
				}
				removals[i].Path = "" // done
			}
		}
		return nil
	}
	for _, c := range todo {
		if !c.New.Exists {
			continue
		}
		if c.Old.Dir && !c.New.Dir {
			// A directory the box replaced: what it held goes first.
			if err := removeUnder(c.Path); err != nil {
				return err
			}
		}
		if err := b.write(c); err != nil {
			return fmt.Errorf("applying %s: %w (the set is kept; what was written stays)", quote(c.Path), err)
		}
	}
	if err := removeUnder(""); err != nil {
		return err
	}
	return removeSet(set)
}

// UnreadableError refuses to apply a set that holds what could not be
// read: what it is was never shown, so it cannot have been reviewed.
type UnreadableError struct {
	Set   string
	Paths []string
}

func (e *UnreadableError) Error() string {
	return fmt.Sprintf("not applied: the box left %s unreadable, so the review could not show it", strings.Join(e.Paths, ", "))
}

// Hints says what to do.
func (e *UnreadableError) Hints() []string {
	return []string{fmt.Sprintf("look at it yourself (the box's copy is in %s, an unreadable directory renamed aside stays where the review says), copy what you want by hand, then drop the set with --discard", quote(e.Set))}
}

// unreadable refuses a set holding an entry it could not read, or a
// directory renamed aside.
func unreadable(set string, m Manifest, cs []Change) error {
	var names []string
	for _, c := range cs {
		if c.New.Unread != "" {
			names = append(names, quote(relTo(m.Repo, c.Path)))
		}
	}
	for _, u := range m.Unchecked {
		if u.Parked != "" {
			names = append(names, quote(relTo(m.Repo, u.Path)))
		}
	}
	if len(names) == 0 {
		return nil
	}
	return &UnreadableError{Set: set, Paths: names}
}

// relTo is p relative to repo when it lies in it.
func relTo(repo, p string) string {
	if r, err := filepath.Rel(repo, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}

// removeSet removes a set's directory. A directory the box left
// unreadable in its copies (in aisan's store, not the repository) is
// made readable first: nothing else could remove it.
func removeSet(set string) error {
	err := os.RemoveAll(set)
	if err == nil {
		return nil
	}
	filepath.WalkDir(set, func(p string, d fs.DirEntry, err error) error {
		if d != nil && d.IsDir() {
			// Before the walk reads it.
			os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(set)
}

// write puts the box's version of c in place: a directory is made, a
// file or link is made under a new name and renamed over the path.
func (b *beneath) write(c Change) error {
	root, rel, err := b.split(c.Path)
	if err != nil {
		return err
	}
	dfd, name, err := makeParent(root, rel)
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	if c.New.Dir {
		if c.Old.Exists && !c.Old.Dir {
			if err := unix.Unlinkat(dfd, name, 0); err != nil {
				return err
			}
		}
		// Writable and searchable by the user whatever the box made
		// of it: what the set holds in it is written next, and a
		// directory the box left read-only would stop the apply
		// half-way, for good.
		err := unix.Mkdirat(dfd, name, uint32(c.New.Mode.Perm()|0o700))
		if errors.Is(err, unix.EEXIST) {
			return nil
		}
		return err
	}
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp := "." + name + ".aisan-" + hex.EncodeToString(rnd[:])
	if c.New.Link != "" {
		if err := unix.Symlinkat(c.New.Link, dfd, tmp); err != nil {
			return err
		}
	} else {
		data, err := readStore(c.New.at)
		if err != nil {
			return err
		}
		fd, err := unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(c.New.Mode.Perm()))
		if err != nil {
			return err
		}
		f := os.NewFile(uintptr(fd), tmp)
		_, err = f.Write(data)
		if err == nil {
			err = f.Chmod(c.New.Mode.Perm())
		}
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			unix.Unlinkat(dfd, tmp, 0)
			return err
		}
	}
	if c.Old.Dir {
		if err := unix.Unlinkat(dfd, name, unix.AT_REMOVEDIR); err != nil {
			unix.Unlinkat(dfd, tmp, 0)
			return err
		}
	}
	if err := unix.Renameat(dfd, tmp, dfd, name); err != nil {
		unix.Unlinkat(dfd, tmp, 0)
		return err
	}
	return nil
}

func (b *beneath) remove(c Change) error {
	root, rel, err := b.split(c.Path)
	if err != nil {
		return err
	}
	dfd, name, err := parent(root, rel)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	flags := 0
	if c.Old.Dir {
		flags = unix.AT_REMOVEDIR
	}
	err = unix.Unlinkat(dfd, name, flags)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	return err
}

// maxApplied caps a file written back.
const maxApplied = 64 << 20

// readStore reads the box's version of a file from the store.
func readStore(p string) ([]byte, error) {
	return regfile.Read(p, maxApplied)
}
