package jail

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/aisan-dev/aisan/jail/config"
	"github.com/aisan-dev/aisan/jail/shared/hostprog"
	"github.com/aisan-dev/aisan/jail/shared/sibling"
	"github.com/aisan-dev/aisan/jail/shared/userunit"
)

// A deny-list jail writes where the user writes, and aisan's own files
// may sit there: programs installed under the home (make install
// PREFIX=~/.local), the configuration under ~/.config (or, through a
// symbolic link, in a dotfiles checkout), the supervisor's unit under
// ~/.config/systemd/user. The next launch trusts the first two by name,
// and the user manager runs the third outside every jail. Binding each
// read-only over itself stops a write or a rename of the file; it does
// not stop a rename of a directory above it (mv ~/.config ~/.config.old, then a configuration of the
// jail's own at the old name), since the kernel moves a mount with its
// parent. A mount point itself cannot be renamed (EBUSY), so every such
// directory the user could rename becomes one, bound over itself.

// gatherOwnFiles is aisan's installed programs (self and the siblings
// of [sibling.Names] beside it) that this user could replace, by real
// path: regular files that are writable, or whose directory is. Every
// regular file by those names, not only those sibling.Mine would trust:
// one that fails sibling.Binary's rule today (a group-writable copy)
// could be replaced by one that passes it.
func gatherOwnFiles(self string) []string {
	if self == "" {
		return nil
	}
	real, err := filepath.EvalSymlinks(self)
	if err != nil {
		return nil
	}
	dir := filepath.Dir(real)
	dirWritable := writable(dir)
	var out []string
	for _, name := range append([]string{filepath.Base(real)}, sibling.Names...) {
		p := filepath.Join(dir, name)
		if slices.Contains(out, p) {
			continue
		}
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if dirWritable || writable(p) {
			out = append(out, p)
		}
	}
	return out
}

// openPrograms are the real paths of the programs a launch runs outside
// the jail (bwrap, xdg-dbus-proxy; "" for one not used) that a jail
// could change: hostprog took one only because PATH had no other. Each
// is bound read-only over itself, and its directories pinned, as aisan's
// own programs are. What stays open: a new program of that name in a
// directory earlier on PATH, and a symbolic link on PATH that leads to
// it, since neither is a file to bind over; preflight warns of both.
func openPrograms(paths ...string) []string {
	var out []string
	for _, p := range paths {
		if p == "" {
			continue
		}
		c, err := hostprog.Inspect(p)
		if err != nil || c.Open == "" || slices.Contains(out, c.Real) {
			continue
		}
		if fi, err := os.Stat(c.Real); err == nil && fi.Mode().IsRegular() {
			out = append(out, c.Real)
		}
	}
	return out
}

// linkedConfigs are the real paths of the configuration files in dirs
// that are symbolic links to a file outside every state dir (a dotfiles
// checkout, say): the directory holding the link is read-only in a jail,
// but what it leads to would not be.
func linkedConfigs(stateDirs []string, dirs ...string) []string {
	var out []string
	for _, d := range dirs {
		if d == "" {
			continue
		}
		p := filepath.Join(d, config.FileName)
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode().Type() != fs.ModeSymlink {
			continue
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil || slices.Contains(out, real) || slices.ContainsFunc(stateDirs, func(s string) bool { return within(real, s) }) {
			continue
		}
		if fi, err := os.Stat(real); err == nil && fi.Mode().IsRegular() {
			out = append(out, real)
		}
	}
	return out
}

// watchUnitFiles are the supervisor unit's file and drop-in directories
// that exist in the unit directories dirs ([userunit.Dirs]), by real
// path, each once and none inside a state dir (read-only already). The
// manager runs that unit outside every jail. A unit file or drop-in
// directory that is a symbolic link keeps only its target: the link
// itself, in a directory the jail writes, could be replaced.
func watchUnitFiles(stateDirs []string, dirs ...string) []string {
	var out []string
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			continue
		}
		for _, p := range userunit.WatchPaths(d) {
			real, err := filepath.EvalSymlinks(p)
			if err != nil || slices.Contains(out, real) || slices.ContainsFunc(stateDirs, func(s string) bool { return within(real, s) }) {
				continue
			}
			if fi, err := os.Stat(real); err == nil && (fi.Mode().IsRegular() || fi.IsDir()) {
				out = append(out, real)
			}
		}
	}
	return out
}

// writable reports whether this user may write p (access(2), real IDs).
func writable(p string) bool { return unix.Access(p, unix.W_OK) == nil }

// renamableAbove lists the directories above each of paths that a user
// could rename, by canRename (called with a directory; true when its
// parent is writable), shallowest first and each once. "/" is never
// listed: nothing can rename it.
func renamableAbove(paths []string, canRename func(dir string) bool) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range paths {
		for d := filepath.Dir(filepath.Clean(p)); d != "/" && d != "."; d = filepath.Dir(d) {
			if seen[d] {
				break
			}
			seen[d] = true
			if canRename(d) {
				out = append(out, d)
			}
		}
	}
	slices.SortFunc(out, func(a, b string) int {
		if da, db := strings.Count(a, "/"), strings.Count(b, "/"); da != db {
			return da - db
		}
		return strings.Compare(a, b)
	})
	return out
}

// parentWritable is [renamableAbove]'s test on the host: a directory
// whose parent this user may write can be renamed (a sticky parent may
// still refuse; listing it costs one mount, leaving it out a hole).
func parentWritable(dir string) bool { return writable(filepath.Dir(dir)) }
