package strictbox

import (
	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/strictbox/trust"
)

// rememberWritable records, before anything of the box runs, every host
// path the box is given read-write: from then on a file there that would
// define a box (a bind spec, an egress file, the user's configuration)
// needs the user's approval, and a credential source there is refused
// (see package trust).
func rememberWritable(aisanHome string, s jail.Spec) error {
	// aisan's state is a place boxes write already (trust.WhyState); the
	// per-launch copies of what host tools run (strictbox/held) lie in it and
	// would only grow the record.
	var dirs []string
	for _, d := range boxWritable(s) {
		if !within(d, aisanHome) {
			dirs = append(dirs, d)
		}
	}
	return trust.Open(aisanHome).Remember(dirs)
}

// boxWritable lists the host paths a box is given read-write: the sources
// of its writable binds and the holes in its seals. (An overlay's writes
// vanish with the box; a tmpfs holds nothing of the host's.)
func boxWritable(s jail.Spec) []string {
	var out []string
	for _, m := range s.Mounts {
		switch m.Kind {
		case jail.Bind, jail.DevBind:
			out = append(out, m.Src)
		case jail.Seal:
			out = append(out, m.Holes...)
		}
	}
	return out
}
