// Package rundir names the user's runtime directory and aisan's run
// directory in it, for the jail and for the leaves that keep their
// locks there. It is a leaf (standard library only).
package rundir

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// RuntimeDir is $XDG_RUNTIME_DIR, or /run/user/UID when the variable is
// unset and that directory exists and belongs to us: the user manager and
// the bus listen there all the same, and a jail must hide them.
//
// A directory that is not ours is not used: after a plain `su` or
// `sudo -E`, XDG_RUNTIME_DIR still names the other user's, and neither its
// user manager nor a directory of ours inside it would work.
func RuntimeDir(getenv func(string) string) string {
	if rt := getenv("XDG_RUNTIME_DIR"); rt != "" && OwnDir(rt) {
		return rt
	}
	p := fmt.Sprintf("/run/user/%d", os.Getuid())
	if OwnDir(p) {
		return p
	}
	return ""
}

// LockDir is the directory aisan's locks go in for the state directory
// stateDir: "aisan/locks" in /run/user/UID when that directory is ours,
// else "locks" in the state directory's run directory ([StateRun]). A
// lock must be one file for every process sharing a state directory, so
// it does not move with one process's environment: a shell whose
// XDG_RUNTIME_DIR points elsewhere, the supervisor under the user manager
// and a timer without a session lock the same file. Every deny-list jail
// sees both directories empty, and no strict box sees either.
func LockDir(stateDir string) string {
	return lockDir(fmt.Sprintf("/run/user/%d", os.Getuid()), stateDir)
}

// lockDir is [LockDir] when the standard runtime directory is std.
func lockDir(std, stateDir string) string {
	if OwnDir(std) {
		return filepath.Join(Aisan(std), "locks")
	}
	return filepath.Join(StateRun(stateDir), "locks")
}

// StateRun is aisan's run directory in the state directory stateDir,
// which stands in for the runtime directory's when there is none (root
// on a server, a plain su, cron, a container).
func StateRun(stateDir string) string { return filepath.Join(stateDir, "run") }

// Aisan is aisan's directory in the runtime directory rt ("" without
// one). Every deny-list jail sees it as an empty read-only directory, and
// no strict box sees the runtime directory at all.
func Aisan(rt string) string {
	if rt == "" {
		return ""
	}
	return filepath.Join(rt, "aisan")
}

// OwnDir reports whether p is a directory owned by this process's user.
func OwnDir(p string) bool {
	fi, err := os.Stat(p)
	if err != nil || !fi.IsDir() {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
