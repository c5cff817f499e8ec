package jail

import (
	"fmt"
	"io"
	"time"

	"github.com/aisan-dev/aisan/jail/history"
	"github.com/aisan-dev/aisan/jail/slot"
)

// pruneState bounds the state dir after a launch: ended slots past
// [slot.DefaultPrune], and the history copies no live slot can be using
// (merged into the host files first). Problems are warnings: the launch
// itself went well.
func pruneState(h Host, warn io.Writer) {
	reg, err := slot.Open(h.AisanHome)
	if err != nil {
		return
	}
	now := time.Now()
	live, errs := reg.Prune(slot.DefaultPrune, now)
	errs = append(errs, history.Prune(h.AisanHome, historyDirs(h), live, slot.DefaultPrune.MaxAge, now)...)
	for _, err := range errs {
		fmt.Fprintf(warn, "aisan: warning: pruning old state: %v\n", err)
	}
}
