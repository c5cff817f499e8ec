package launch

import (
	"fmt"
	"os"
	"time"
)

// AISAN_TRACE=1 prints the time each launch phase ends, for finding where
// a launch spends its time.
var (
	traceOn    = os.Getenv("AISAN_TRACE") == "1"
	traceStart = time.Now()
)

// Trace notes the end of a phase under AISAN_TRACE=1; a mode's phases
// call it too.
func Trace(phase string) { trace(phase) }

func trace(phase string) {
	if traceOn {
		fmt.Fprintf(os.Stderr, "aisan: trace: %7.2f ms %s\n", float64(time.Since(traceStart).Microseconds())/1000, phase)
	}
}
