package preflight

// The probe jail's protocol. The outside half writes a probeRequest into
// the jail's environment ([EnvProbe]); the inside half ([RunInside])
// tries everything it names and prints one probeReport as JSON on its
// stdout. The report holds observations only (errno names, D-Bus error
// names, inode numbers); the outside half decides what they mean.

// EnvProbe carries the probe request (JSON) into the probe jail.
const EnvProbe = "AISAN_PREFLIGHT_PROBE"

// markerPrefix starts the last argument of the marker process started
// outside, so the inside half can look for it the way pkill -f would.
const markerPrefix = "aisan-preflight-marker-"

// probeRequest is what the inside half is asked to try.
type probeRequest struct {
	// Token is random per run; it names the marker and every file the
	// probe creates, so nothing collides with a concurrent preflight.
	Token string `json:"token"`
	// Marker is the host PID of a process started outside the jail.
	Marker int `json:"marker"`
	// Dirs are $HOME and /tmp as seen outside.
	Dirs []fileID `json:"dirs"`
	// Sockets are the agent sockets present outside.
	Sockets []fileID `json:"sockets"`
	// BusAddrs are the addresses at which the host's session bus answers
	// outside with org.freedesktop.systemd1 on it; the inside half tries
	// each, and its own DBUS_SESSION_BUS_ADDRESS.
	BusAddrs []string `json:"bus_addresses"`
	// Names are the allowed bus names present on the host bus.
	Names []string `json:"names"`
	// Private are the user manager's private sockets present outside.
	Private []string `json:"private"`
	// Terminals are the ptys outside (/dev/pts/N): the user's terminals
	// and other jails'. None may be reachable inside by its path, or a
	// jail could read what is typed there and write into it.
	Terminals []fileID `json:"terminals"`
}

// fileID is a path and the inode it names outside.
type fileID struct {
	// Label is what the user calls it: "ssh-agent", "$HOME".
	Label string `json:"label"`
	Path  string `json:"path"`
	Dev   uint64 `json:"dev"`
	Ino   uint64 `json:"ino"`
	// Writable is set when the current user may write it outside.
	Writable bool `json:"writable,omitempty"`
}

// probeReport is what the inside half observed.
type probeReport struct {
	PID     pidReport    `json:"pid"`
	Cgroup  cgroupReport `json:"cgroup"`
	Bus     []busReport  `json:"bus"`
	Names   []nameReport `json:"names"`
	Private []connReport `json:"private"`
	Dirs    []fileReport `json:"dirs"`
	Sockets []fileReport `json:"sockets"`
	// Terminals: Same means the path inside is the host's pty.
	Terminals []fileReport `json:"terminals"`
}

type pidReport struct {
	// Visible: /proc/<Marker> exists inside and is the marker.
	Visible bool `json:"visible"`
	// Taken: /proc/<Marker> exists inside but is a process of the jail.
	Taken bool `json:"taken"`
	// Found are the PIDs whose command line holds the marker's name,
	// which is what pkill -f matches.
	Found []int `json:"found"`
	// Kill is the errno name of kill(Marker, 0), "" when it succeeded.
	Kill string `json:"kill"`
}

type cgroupReport struct {
	// Dir is the probe's own cgroup directory, or /sys/fs/cgroup.
	Dir string `json:"dir"`
	// Mkdir is the errno name of creating a directory in Dir, "" when it
	// succeeded (it is removed again at once).
	Mkdir string `json:"mkdir"`
	// Writable are the mounts at or under /sys/fs/cgroup that are not
	// read-only.
	Writable []string `json:"writable"`
}

// Results of a D-Bus call from inside.
const (
	// busReached: the named service answered (successfully or with an
	// error of its own, such as UnknownMethod).
	busReached = "reached"
)

type busReport struct {
	Addr string `json:"addr"`
	// Jail is set for the jail's own DBUS_SESSION_BUS_ADDRESS.
	Jail bool `json:"jail,omitempty"`
	// Connect is why connecting failed, "" when it worked.
	Connect string `json:"connect,omitempty"`
	// Systemd1 is [busReached], or the D-Bus error name (or error text)
	// that kept the call to org.freedesktop.systemd1 from it.
	Systemd1 string `json:"systemd1,omitempty"`
	// Definite is set when Systemd1 is a definite answer (reached, or a
	// refusal by the bus); unset for timeouts and broken connections.
	Definite bool `json:"definite"`
}

type nameReport struct {
	Name string `json:"name"`
	// Result is [busReached] or why not.
	Result string `json:"result"`
}

type connReport struct {
	Path string `json:"path"`
	// Err is the errno name of connecting, "" when it connected.
	Err string `json:"err"`
}

type fileReport struct {
	Path string `json:"path"`
	// Same: the path names the same inode inside as outside.
	Same bool `json:"same"`
	// Err is why it could not be examined (errno name).
	Err string `json:"err,omitempty"`
	// Write is the errno name of creating a file in it, "" when that
	// worked or was not tried.
	Write string `json:"write,omitempty"`
}
