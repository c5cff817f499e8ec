package busproxy

import (
	"strconv"
	"strings"
)

// pipelinedSince is the first xdg-dbus-proxy that lets a client pipeline
// its authentication: sd-bus (busctl) and zbus write
// AUTH, NEGOTIATE_UNIX_FD and BEGIN without waiting for the replies, and
// an older proxy takes the bus's replies for messages and drops the
// connection ("Invalid message header read" in its log).
var pipelinedSince = [3]int{0, 1, 6}

// PipelinedAuth reads the first line xdg-dbus-proxy prints for --version
// ("xdg-dbus-proxy 0.1.4") and reports whether that proxy lets clients
// that pipeline their authentication through; known is false when the
// line holds no version.
func PipelinedAuth(versionLine string) (ok, known bool) {
	f := strings.Fields(versionLine)
	if len(f) == 0 {
		return false, false
	}
	parts := strings.Split(f[len(f)-1], ".")
	if len(parts) < 2 || len(parts) > 3 {
		return false, false
	}
	var v [3]int
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return false, false
		}
		v[i] = n
	}
	for i := range v {
		if v[i] != pipelinedSince[i] {
			return v[i] > pipelinedSince[i], true
		}
	}
	return true, true
}
