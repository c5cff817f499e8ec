package sibling

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"
)

// Own is the set of aisan's own binaries: the one running and those
// beside it that pass [Binary]'s rule, each known by the file it is
// (device and inode), not by its name. A program that some other file
// names (a hook in an agent's settings, which any jail can write) is
// aisan's only when it is one of these files: a script a jail planted
// and called aisan-guard is not.
type Own struct {
	files []ownFile
}

type ownFile struct {
	path     string
	dev, ino uint64
}

// Mine gathers self (an absolute path; symlinks are resolved) and the
// siblings called names that pass [Binary]'s rule. A sibling that does
// not qualify is left out, since aisan would not run it either.
func Mine(self string, names ...string) (Own, error) {
	real, err := filepath.EvalSymlinks(self)
	if err != nil {
		return Own{}, fmt.Errorf("resolve aisan's own binary %s: %w", self, err)
	}
	var o Own
	f, err := identify(real)
	if err != nil {
		return Own{}, err
	}
	o.files = append(o.files, f)
	for _, n := range names {
		p, err := Binary(real, n)
		if err != nil || p == "" {
			continue
		}
		f, err := identify(p)
		if err == nil && !slices.ContainsFunc(o.files, func(g ownFile) bool { return g.dev == f.dev && g.ino == f.ino }) {
			o.files = append(o.files, f)
		}
	}
	return o, nil
}

// Paths are the trusted binaries' paths, self first.
func (o Own) Paths() []string {
	var out []string
	for _, f := range o.files {
		out = append(out, f.path)
	}
	return out
}

// Identify reports which of aisan's own binaries path is: the trusted
// path of the same file, or "" when path is some other program. path is
// resolved, then the result is opened without following a symbolic link
// there, so that a link swapped in after the resolution fails instead of
// being followed. Nothing is run.
func (o Own) Identify(path string) (string, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", fmt.Errorf("resolve %s: %w", path, err)
	}
	f, err := identify(real)
	if err != nil {
		return "", err
	}
	i := slices.IndexFunc(o.files, func(g ownFile) bool { return g.dev == f.dev && g.ino == f.ino })
	if i < 0 {
		return "", nil
	}
	return o.files[i].path, nil
}

// identify opens p without following a final symbolic link (O_PATH: no
// read, no execute) and says which regular file it is.
func identify(p string) (ownFile, error) {
	fd, err := unix.Open(p, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return ownFile{}, fmt.Errorf("open %s: %w", p, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return ownFile{}, fmt.Errorf("inspect %s: %w", p, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return ownFile{}, errors.New(p + " is not a regular file")
	}
	return ownFile{path: p, dev: uint64(st.Dev), ino: st.Ino}, nil
}
