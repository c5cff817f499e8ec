// Package hostprog finds the programs aisan runs on the host, outside
// every jail, by a name on PATH: bwrap, which is each launch's sandbox,
// and xdg-dbus-proxy, which holds the host's session bus.
//
// A deny-list jail writes wherever the user writes, and many hosts put
// directories of the user's own (~/.local/bin, ~/bin, ~/go/bin) before
// /usr/bin on PATH. The first match on PATH is then a name any jail can
// claim for the user's next launch, which would run the jail's program
// unjailed, as its sandbox. [Find] takes instead the first match that no
// jail could have put there or changed: one that the user can neither
// write nor make writable, in directories (every one the lookup passes
// through, symbolic links followed) that the user can neither write nor
// make writable. Only when PATH has no such match does it take the first
// match, and it says so, for the caller to protect the file and warn.
//
// It is a leaf (standard library and x/sys/unix only): the jail, its bus
// planner, preflight and 'aisan version' share it, so that each names
// the program a launch runs.
package hostprog

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Candidate is a file a name finds on PATH.
type Candidate struct {
	// Path is the PATH directory joined with the name.
	Path string
	// Real is Path with every symbolic link resolved.
	Real string
	// Open is the first place on the way to the file that the user may
	// write or make writable, and so may any deny-list jail: a directory
	// the lookup reads an entry of, or the file itself. "" when there is
	// none.
	Open string
}

// Choice is the candidate [Choose] settled on: the zero Candidate when
// the name is nowhere on PATH.
type Choice struct {
	Candidate
	// Passed are the candidates earlier on PATH that were passed over
	// because a jail could have put them there or changed them.
	Passed []Candidate
}

// Found reports whether PATH had the name at all.
func (c Choice) Found() bool { return c.Path != "" }

// Choose picks from cands (in PATH order) the first that no jail could
// have written, passing over the ones before it; when every one could
// have been, the first, with Open set for the caller to act on. A
// program the user installed under their home is still used when it is
// the only one, as it was before aisan looked this closely.
func Choose(cands []Candidate) Choice {
	for i, c := range cands {
		if c.Open != "" {
			continue
		}
		ch := Choice{Candidate: c}
		if i > 0 {
			ch.Passed = slices.Clone(cands[:i])
		}
		return ch
	}
	if len(cands) == 0 {
		return Choice{}
	}
	return Choice{Candidate: cands[0]}
}

// Find is [Choose] over [Gather]: the name as aisan should run it, found
// on path (a PATH value).
func Find(name, path string) Choice { return Choose(Gather(name, path)) }

// Gather lists, in PATH order, the files name finds in the directories of
// path that os/exec would run: executable regular files. An empty or
// relative entry is skipped (os/exec refuses what such an entry finds,
// and aisan runs nothing found relative to the working directory), and
// so is a directory listed twice.
func Gather(name, path string) []Candidate {
	return gather(name, path, userMayChange)
}

// changer says whether the user could change what a lookup finds: the
// entry called name in the directory dir, or (name "") the file dir.
type changer func(dir, name string) bool

func gather(name, path string, mayChange changer) []Candidate {
	if name == "" || strings.ContainsRune(name, '/') {
		return nil
	}
	var out []Candidate
	for _, dir := range pathDirs(path) {
		p := filepath.Join(dir, name)
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 || unix.Access(p, unix.X_OK) != nil {
			continue
		}
		real, open, err := walk(p, mayChange)
		if err != nil {
			continue
		}
		out = append(out, Candidate{Path: p, Real: real, Open: open})
	}
	return out
}

// pathDirs are the directories of path (a PATH value) a lookup reads, in
// order: absolute ones only (os/exec refuses what a relative entry
// finds, and aisan runs nothing found relative to the working
// directory), cleaned, each once.
func pathDirs(path string) []string {
	var out []string
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			continue
		}
		if dir = filepath.Clean(dir); !slices.Contains(out, dir) {
			out = append(out, dir)
		}
	}
	return out
}

// Claimable is the first place where a jail could make a lookup of name
// on path (a PATH value) find a program of its own, as a shell's lookup
// does (the first match, whoever may have written it): a directory on
// path, before the first match, that the user may write or make writable
// (one that does not exist counts by the directory that would hold it),
// or what [Candidate.Open] says of the match itself. "" when there is no
// such place.
func Claimable(name, path string) string {
	return claimable(name, path, userMayChange)
}

func claimable(name, path string, mayChange changer) string {
	for _, dir := range pathDirs(path) {
		if cs := gather(name, dir, mayChange); len(cs) > 0 {
			return cs[0].Open
		}
		at := dir
		_, open, err := walk(at, mayChange)
		for errors.Is(err, fs.ErrNotExist) && at != "/" {
			at = filepath.Dir(at)
			_, open, err = walk(at, mayChange)
		}
		if err != nil {
			// Unreadable: no lookup finds anything there either.
			continue
		}
		if open != "" {
			return open
		}
	}
	return ""
}

// Inspect is the Candidate of the program at p (an absolute path), for a
// caller that was handed the path rather than a name.
func Inspect(p string) (Candidate, error) {
	if !filepath.IsAbs(p) {
		return Candidate{}, fmt.Errorf("%s is not an absolute path", p)
	}
	real, open, err := walk(p, userMayChange)
	if err != nil {
		return Candidate{}, err
	}
	return Candidate{Path: p, Real: real, Open: open}, nil
}

// maxLinks is how many symbolic links a resolution follows, as Linux's
// own limit (ELOOP past it).
const maxLinks = 40

// walk resolves p one component at a time, as the kernel does when it
// runs the file, and returns the real path and the first place that
// mayChange says the user could change: a directory whose entry the
// lookup reads (whoever may write it may put another file or link at that
// name, or rename a directory there and make a new one), or the final
// file. A link's own directory is among them; the directories above the
// real file are too, since the lookup passes through each.
func walk(p string, mayChange changer) (real, open string, err error) {
	note := func(dir, name string) {
		if open == "" && mayChange(dir, name) {
			open = dir
		}
	}
	cur := "/"
	pending := split(p)
	links := 0
	for len(pending) > 0 {
		c := pending[0]
		pending = pending[1:]
		switch c {
		case ".":
			continue
		case "..":
			// cur has no link in it, so its parent is the kernel's "..".
			cur = filepath.Dir(cur)
			continue
		}
		note(cur, c)
		next := filepath.Join(cur, c)
		fi, err := os.Lstat(next)
		if err != nil {
			return "", "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if links++; links > maxLinks {
			return "", "", &fs.PathError{Op: "resolve", Path: p, Err: syscall.ELOOP}
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", "", err
		}
		if filepath.IsAbs(target) {
			cur = "/"
		}
		pending = append(split(target), pending...)
	}
	note(cur, "")
	return cur, open, nil
}

// split is p's components, without empty ones.
func split(p string) []string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		if c != "" {
			out = append(out, c)
		}
	}
	return out
}

// userMayChange is the host's [changer]. The user may change a file or
// directory they may write or make writable: its owner may chmod it
// whatever its mode says. In a sticky directory (/tmp) that is not theirs
// they may replace only their own entries. A path that cannot be
// inspected counts as changeable, and one on a read-only mount as not: no
// jail can remount it writable.
func userMayChange(dir, name string) bool {
	uid := uint32(os.Getuid())
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		return true
	}
	err := unix.Access(dir, unix.W_OK)
	if errors.Is(err, unix.EROFS) || err != nil && st.Uid != uid {
		return false
	}
	if name != "" && st.Mode&unix.S_ISVTX != 0 && st.Uid != uid {
		var e unix.Stat_t
		if unix.Lstat(filepath.Join(dir, name), &e) == nil && e.Uid != uid {
			return false
		}
	}
	return true
}
