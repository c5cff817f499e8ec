package strictbox

import (
	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/slot"
	"github.com/aisan-dev/aisan/jail/strictbox/held"
)

// collectStale collects the held sets of boxes in repo that ended
// without collecting them (a wrapper killed with SIGKILL, a crash)
// before a new box looks at the repository: the run's mount points they
// left would pass for the user's files, and what they planted where
// nothing was mounted would still be there. Sets of a slot that may
// still run are left alone.
func collectStale(aisanHome, repo string, say jail.Say) {
	reg, err := slot.Open(aisanHome)
	if err != nil {
		return
	}
	for _, s := range held.CollectStale(aisanHome, repo, reg.Over) {
		for _, l := range s.Lines() {
			say(jail.Warning, l)
		}
	}
}
