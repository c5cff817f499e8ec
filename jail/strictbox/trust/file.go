package trust

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/aisan-dev/aisan/jail/shared/regfile"
)

// File is a file read for a decision: where it was named, how it was
// reached, and its content.
type File struct {
	// Path is the absolute path as named (cleaned): what approvals are
	// keyed by.
	Path string
	// Target is the file that was read, every symbolic link resolved.
	Target string
	// Hops are the symbolic links followed on the way, then Target.
	Hops []string
	// Links is the target's hard-link count.
	Links uint64
	// Sealed says no box can write the target's content by any name:
	// another user owns it, no group or other may write it, and aisan
	// does not run as root. Its other hard links then lend a box
	// nothing (Debian's perl, for one, has two).
	Sealed bool
	// Data is the content, read once: what is checked is what is used.
	Data []byte
}

// maxLinks bounds the symbolic links followed, as the kernel does.
const maxLinks = 40

// ReadFile reads path, of at most max bytes, for a decision. It follows
// symbolic links itself, one component at a time, so that it knows every
// link on the way (a box that can write a link can point it elsewhere),
// and reads the target with the safe reader: a regular file only, never a
// FIFO's wait, never past max.
func ReadFile(path string, max int64) (File, error) {
	f, err := Locate(path)
	if err != nil {
		return File{}, err
	}
	r, err := regfile.Open(f.Target)
	if err != nil {
		return File{}, err
	}
	defer r.Close()
	fi, err := r.Stat()
	if err != nil {
		return File{}, fmt.Errorf("read %s: %w", path, err)
	}
	if f.Data, err = regfile.ReadAll(r, max); err != nil {
		return File{}, err
	}
	// The file read, not the one looked at a moment before.
	f.setInode(fi)
	return f, nil
}

// Locate is [ReadFile] without the content: where path leads, for a
// file that is run or read later by others (a token command's program).
func Locate(path string) (File, error) {
	named, err := filepath.Abs(path)
	if err != nil {
		return File{}, fmt.Errorf("read %s: %w", path, err)
	}
	raw := path
	if !filepath.IsAbs(raw) {
		// Resolved as the kernel would: ".." after the links before it.
		wd, err := os.Getwd()
		if err != nil {
			return File{}, fmt.Errorf("read %s: %w", path, err)
		}
		raw = wd + "/" + raw
	}
	target, hops, err := Resolve(raw)
	if err != nil {
		return File{}, fmt.Errorf("read %s: %w", path, err)
	}
	fi, err := os.Lstat(target)
	if err != nil {
		return File{}, fmt.Errorf("read %s: %w", path, err)
	}
	f := File{Path: named, Target: target, Hops: hops}
	f.setInode(fi)
	return f, nil
}

// setInode records what the target's inode says of its other names: its
// link count, and whether a box could write it by any of them.
func (f *File) setInode(fi fs.FileInfo) {
	f.Links, f.Sealed = links(fi), sealed(fi, os.Geteuid())
}

// sealed reports whether a process of user euid, and so a box, cannot
// write fi's content: another user owns it and its mode lets no group or
// other write. Permissions belong to the inode, so this holds for every
// name it has. Root may write anything.
func sealed(fi fs.FileInfo, euid int) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && euid != 0 && int(st.Uid) != euid && fi.Mode().Perm()&0o022 == 0
}

// links is a regular file's hard-link count (0 for anything else: a
// directory's count says nothing of other names).
func links(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && fi.Mode().IsRegular() {
		return uint64(st.Nlink)
	}
	return 0
}

// Resolve follows the symbolic links in the absolute path p, returning
// the path of what it names (every component a real directory or the
// final file) and the links passed, each where it lies, then that path.
func Resolve(p string) (string, []string, error) {
	rest := strings.Split(p, "/")
	cur := "/"
	var hops []string
	for n := 0; len(rest) > 0; {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		fi, err := os.Lstat(next)
		if err != nil {
			return "", nil, err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if n++; n > maxLinks {
			return "", nil, syscall.ELOOP
		}
		hops = append(hops, next)
		t, err := os.Readlink(next)
		if err != nil {
			return "", nil, err
		}
		if filepath.IsAbs(t) {
			cur = "/"
		}
		rest = append(strings.Split(t, "/"), rest...)
	}
	return cur, append(hops, cur), nil
}
