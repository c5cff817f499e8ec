package jail

import (
	"path/filepath"
	"syscall"
)

// InitName is the lean binary that runs as each launch's stage and in-jail
// init (see cmd/aisan-init), installed next to aisan.
const InitName = "aisan-init"

// InitBinary returns the binary to run as the stage and the in-jail init:
// the lean one next to self when it is there and as trustworthy as self (a
// regular executable file of self's owner or root, that nobody else may
// write, in a directory nobody else may write), self otherwise. self also
// carries both roles, so a missing or doubtful aisan-init costs start-up
// time, never a launch.
func InitBinary(self string) string {
	dir := filepath.Dir(self)
	cand := filepath.Join(dir, InitName)
	var st, sd, ss syscall.Stat_t
	if syscall.Lstat(cand, &st) != nil || syscall.Stat(dir, &sd) != nil || syscall.Stat(self, &ss) != nil {
		return self
	}
	trusted := func(s syscall.Stat_t) bool {
		return (s.Uid == ss.Uid || s.Uid == 0) && s.Mode&0o022 == 0
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Mode&0o111 == 0 || !trusted(st) || !trusted(sd) {
		return self
	}
	return cand
}
