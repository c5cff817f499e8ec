package launch

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/history"
	"github.com/aisan-dev/aisan/jail/slot"
)

// pruneState bounds the state dir after a launch: ended slots past
// [slot.DefaultPrune], and the history copies no live slot can be using
// (merged into the host files first). Problems are warnings: the launch
// itself went well.
func pruneState(h jail.Host, say jail.Say) {
	// At most once an hour: it runs after the agent ended, while the
	// user's shell waits for the prompt, and the state grows slowly.
	mark := filepath.Join(h.AisanHome, ".pruned")
	now := time.Now()
	if fi, err := os.Lstat(mark); err == nil && now.Sub(fi.ModTime()) < pruneEvery && now.After(fi.ModTime()) {
		return
	}
	if f, err := os.OpenFile(mark, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o600); err == nil {
		f.Close()
		os.Chtimes(mark, now, now)
	}
	reg, err := slot.Open(h.AisanHome)
	if err != nil {
		return
	}
	live, errs := reg.Prune(slot.DefaultPrune, now)
	errs = append(errs, history.Prune(h.AisanHome, h.HistoryDirs(), live, slot.DefaultPrune.MaxAge, now)...)
	for _, err := range errs {
		say(jail.Warning, fmt.Sprintf("pruning old state: %v", err))
	}
}

// pruneEvery is how often a launch prunes the state dir.
const pruneEvery = time.Hour
