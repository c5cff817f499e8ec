package jail

import "github.com/aisan-dev/aisan/jail/trust"

// rememberWritable records, before anything of the box runs, every host
// path the box is given read-write: from then on a file there that would
// define a box (a bind spec, an egress file, the user's configuration)
// needs the user's approval, and a credential source there is refused
// (see package trust).
func rememberWritable(aisanHome string, s Spec) error {
	return trust.Open(aisanHome).Remember(boxWritable(s))
}

// boxWritable lists the host paths a box is given read-write: the sources
// of its writable binds and the holes in its seals. (An overlay's writes
// vanish with the box; a tmpfs holds nothing of the host's.)
func boxWritable(s Spec) []string {
	var out []string
	for _, m := range s.Mounts {
		switch m.Kind {
		case Bind, DevBind:
			out = append(out, m.Src)
		case Seal:
			out = append(out, m.Holes...)
		}
	}
	return out
}
