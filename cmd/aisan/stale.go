package main

import (
	"fmt"
	"os"

	"github.com/aisan-dev/aisan/jail/slot"
	"github.com/aisan-dev/aisan/jail/strictbox/held"
)

// collectStale collects the held sets of strict boxes that ended without
// their wrapper or keeper collecting them (killed with SIGKILL, a crash),
// and says what each now holds for review. 'aisan review', 'aisan kill'
// and 'aisan watch' call it: each sees boxes end that nobody else saw.
func collectStale(reg *slot.Registry) {
	home, err := slot.Home()
	if err != nil {
		return
	}
	for _, s := range held.CollectStale(home, "", reg.Over) {
		for _, l := range s.Lines() {
			fmt.Fprintf(os.Stderr, "aisan: warning: %s\n", l)
		}
	}
}
