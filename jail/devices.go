package jail

import (
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// DevEntry is one entry of the host's /dev that the deny-list jail puts
// back over the fresh /dev it gets: every jail has a devpts instance of its
// own, so that no jail can open another terminal's /dev/pts/N (read what is
// typed there, write into it), yet everything else in /dev stays as it is
// outside.
type DevEntry struct {
	// Name is the entry's name in /dev.
	Name string
	// Link is a symlink's target, "" for anything else.
	Link string
}

// devJailOwn reports whether name is one bwrap's --dev makes itself
// (bwrap 0.8: null, zero, full, random, urandom and tty bound from the
// host, the fd and std* links, core, an empty shm, console on a
// terminal, and pts with ptmx pointing into it). pts and ptmx must be the
// jail's, or the host's terminals are back; the rest would only be bound
// over the same thing. (A switch, not a map: a package-level map is built
// at every start of aisan, before main.)
func devJailOwn(name string) bool {
	switch name {
	case "pts", "ptmx", "console", "tty",
		"null", "zero", "full", "random", "urandom",
		"fd", "stdin", "stdout", "stderr", "core":
		return true
	}
	return false
}

// virtualConsole reports whether name is one of the kernel's virtual
// consoles, /dev/tty0 to tty63: the one a user is logged in on is
// theirs, and a jail that could open it would read what is typed there,
// like another /dev/pts/N. (Not a regular expression: a package-level
// one is compiled at every start of aisan, before main.)
func virtualConsole(name string) bool {
	n, ok := strings.CutPrefix(name, "tty")
	return ok && n != "" && strings.Trim(n, "0123456789") == ""
}

// GatherDev lists what of dir (the host's /dev) a jail gets back: every
// directory (bound whole, with what is mounted in it: /dev/shm,
// /dev/mqueue, /dev/hugepages, and GPU and sound nodes in /dev/dri and
// /dev/snd), every symlink, and every other node the user can open at
// all. Each bind costs bwrap about a millisecond, and a node only root
// may open (disks, loop devices, most of a server's /dev) is of no use to
// a jail that runs as the user without capabilities, so those stay out:
// the jail behaves the same, and its launch is not taxed for them.
// Entries that vanish while we look are left out.
func GatherDev(dir string) []DevEntry {
	// Sorted, so that explain lists them in a stable order.
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []DevEntry
	for _, de := range des {
		name := de.Name()
		if devJailOwn(name) || virtualConsole(name) {
			continue
		}
		p := filepath.Join(dir, name)
		switch {
		case de.Type()&os.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				continue
			}
			out = append(out, DevEntry{Name: name, Link: target})
		case de.IsDir():
			out = append(out, DevEntry{Name: name})
		case unix.Access(p, unix.R_OK) == nil || unix.Access(p, unix.W_OK) == nil:
			out = append(out, DevEntry{Name: name})
		}
	}
	return out
}

// devMounts is the jail's /dev: a fresh one, with its own devpts, and dir's
// entries bound back over it.
func devMounts(entries []DevEntry) []Mount {
	mounts := []Mount{{Kind: Dev, Dst: "/dev"}}
	for _, e := range entries {
		dst := filepath.Join("/dev", e.Name)
		if e.Link != "" {
			mounts = append(mounts, Mount{Kind: Symlink, Src: e.Link, Dst: dst})
			continue
		}
		// Try: a device unplugged between the listing and the launch
		// must not fail the launch.
		mounts = append(mounts, Mount{Kind: DevBind, Src: dst, Dst: dst, Try: true})
	}
	return mounts
}
