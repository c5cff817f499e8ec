package launch

import "github.com/aisan-dev/aisan/jail/shared/sibling"

// InitName is the lean binary that runs as each launch's in-jail init
// (see cmd/aisan-init), installed next to aisan.
const InitName = sibling.InitName

// InitBinary returns the binary bwrap runs as the in-jail init:
// the lean one next to self when it passes the rule for helpers beside
// aisan (sibling.Binary), self otherwise. self also carries the init,
// so a missing or doubtful aisan-init costs start-up time, never a launch.
func InitBinary(self string) string {
	if p, _ := sibling.Binary(self, InitName); p != "" {
		return p
	}
	return self
}
