package jail

import (
	"fmt"
	"strconv"

	"github.com/aisan-dev/aisan/jail/busproxy"
)

// Spec is everything a jail gets, spelled out. It has no defaults: a zero
// field means "absent", and the compiler adds nothing that is not here.
// Presets build Specs as composite literals so a reviewer can read every
// mount at the call site.
type Spec struct {
	// Namespaces lists the namespaces to unshare. bwrap always creates a
	// user namespace when run unprivileged; that is not listed here.
	Namespaces Namespaces

	// Mounts are applied in order, exactly as bwrap applies them: a later
	// mount shadows an earlier one at the same or a parent path.
	Mounts []Mount

	// ClearEnv starts the jail's environment empty. Env is then the
	// complete environment. Without ClearEnv, Env entries are set on top
	// of whatever environment bwrap itself was started with.
	ClearEnv bool

	// Env holds KEY=VALUE entries, emitted in slice order. Presets sort it.
	Env []string

	// Command is the agent's argv. Command[0] is looked up in the jail's
	// PATH by the in-jail init when it has no slash.
	Command []string

	// Cwd is the working directory inside the jail.
	Cwd string

	// AsPID1 makes the command the jail's PID 1 instead of bwrap's own
	// reaper; our init plays that role so that signals sent from outside
	// reach it and it forwards them to the agent.
	AsPID1 bool

	// InfoFD, when not zero, is the descriptor bwrap writes its JSON info
	// (the init's host PID and the namespace inodes) to.
	InfoFD int

	// Limits are resource caps applied through the jail's systemd scope,
	// not through bwrap. An unset cap is absent, not a hidden default.
	Limits Limits

	// Bus says what happened to the session bus, for explain and for the
	// launcher that must start the filtering proxy before bwrap.
	Bus busproxy.Plan

	// Egress are the box's loopback endpoints (strict mode): the in-jail
	// init listens on each port before the agent starts and relays every
	// connection to the endpoint's socket. The socket's mount is in
	// Mounts like any other.
	Egress []Endpoint `json:",omitempty"`

	// EnvFile, when set, is a file inside the jail (0600, in a directory
	// only the host writes) of KEY=VALUE lines that the init adds to the
	// agent's environment: values that must not appear in any argv or in
	// bwrap's own environment, such as a per-box token.
	EnvFile string `json:",omitempty"`

	// NewSessionKeyring makes the init join a fresh session keyring
	// before the agent starts, so keys the user's login session holds are
	// out of reach.
	NewSessionKeyring bool `json:",omitempty"`

	// DropCaps drops every capability, also when bwrap runs as root
	// (unprivileged, bwrap keeps none anyway).
	DropCaps bool `json:",omitempty"`

	// Forbidden are host paths (credentials) that no mount source may
	// be, contain or lie inside. Validate refuses a Spec that breaks this.
	Forbidden []string `json:",omitempty"`
}

// Endpoint is one egress endpoint of a strict box.
//
// In a box with its own network namespace, the init listens on Port on
// the box's loopback and relays to Socket. With the host network (--net)
// there is no relay: Port is 0 and Socket "", the host side listens on the
// host's loopback itself and hands the address and a per-box token to the
// agent through [Spec.EnvFile].
type Endpoint struct {
	// Name is the endpoint's name: a built-in backend's, or the user's
	// for a raw relay.
	Name string
	// Backend is the built-in backend serving Socket, or "" for a raw
	// relay of a host socket the user named.
	Backend string `json:",omitempty"`
	// Port is the loopback port inside the box.
	Port int
	// Socket is the Unix socket the relay dials, at the same path on the
	// host (in the slot's 0700 run directory) and inside the jail.
	Socket string
	// Source is the user's host socket that a raw relay binds at Socket;
	// "" when a built-in backend serves Socket itself.
	Source string `json:",omitempty"`
	// SourceDev and SourceIno identify the socket Source was when it was
	// checked (strictbox.CheckRawSocket): the launch binds that very
	// socket, by a descriptor, or nothing, whatever a directory on
	// Source's path was swapped for since.
	SourceDev uint64 `json:",omitempty"`
	SourceIno uint64 `json:",omitempty"`
	// Param is a built-in backend's parameter: the provider of
	// openai-compatible:<provider>, the FILE of reapi=FILE.
	Param string `json:",omitempty"`
	// Slot is the slot the box runs in, for the backend's audit log.
	Slot string `json:",omitempty"`
	// Var is the variable that carries the endpoint's address inside the
	// box (AISAN_EGRESS_<NAME>).
	Var string
	// HTTP is set when clients reach the endpoint over HTTP: its address
	// is then a URL.
	HTTP bool `json:",omitempty"`
	// Why says what serves the endpoint, for explain.
	Why string `json:",omitempty"`
}

// Address is what the endpoint's variable holds inside the box:
// http://127.0.0.1:PORT (no path) for an HTTP endpoint, 127.0.0.1:PORT
// for a raw relay or a gRPC backend.
func (e Endpoint) Address() string {
	a := "127.0.0.1:" + strconv.Itoa(e.Port)
	if e.HTTP {
		return "http://" + a
	}
	return a
}

// Namespaces selects namespaces for bwrap to unshare.
type Namespaces struct {
	// PID gives the jail its own PID namespace: it sees and signals only
	// its own processes.
	PID bool
	// Net gives the jail its own network namespace with only loopback.
	Net bool
	// IPC gives the jail its own System V IPC and POSIX message queues.
	IPC bool
	// UTS gives the jail its own hostname.
	UTS bool
	// Cgroup gives the jail its own cgroup namespace view.
	Cgroup bool
}

// MountKind is the kind of one mount operation.
type MountKind int

// The mount kinds bwrap supports that aisan uses.
const (
	// Bind binds Src at Dst read-write (recursively).
	Bind MountKind = iota + 1
	// ROBind binds Src at Dst read-only, submounts included.
	ROBind
	// DevBind binds Src at Dst with device access (for /dev).
	DevBind
	// Tmpfs mounts an empty tmpfs at Dst, of Size bytes and Mode.
	Tmpfs
	// Proc mounts a fresh procfs at Dst.
	Proc
	// Dev mounts a minimal fresh /dev at Dst.
	Dev
	// Dir creates an empty directory at Dst with Mode.
	Dir
	// Symlink creates a symlink at Dst pointing to Src.
	Symlink
	// FileFromFD copies the content of descriptor FD to a new file at Dst.
	FileFromFD
	// RemountRO makes the mount at Dst read-only (not its submounts).
	RemountRO
	// Seal hides Dst under an empty read-only directory in which only the
	// Holes are bound, read-write, at their own paths.
	Seal
	// Overlay mounts a writable overlay at Dst whose lower layer is Src;
	// writes go to a tmpfs and vanish with the jail. Needs bwrap >= 0.10.
	Overlay
)

// mountKindNames are the kinds' names, indexed by kind ("" for none).
// An array of constants is laid out by the linker; a map would be built
// at every start of aisan, before main.
var mountKindNames = [...]string{
	Bind: "bind", ROBind: "ro-bind", DevBind: "dev-bind", Tmpfs: "tmpfs",
	Proc: "proc", Dev: "dev", Dir: "dir", Symlink: "symlink",
	FileFromFD: "file-from-fd", RemountRO: "remount-ro", Seal: "seal",
	Overlay: "overlay",
}

func (k MountKind) String() string {
	if k >= 0 && int(k) < len(mountKindNames) && mountKindNames[k] != "" {
		return mountKindNames[k]
	}
	return "invalid"
}

// PinType is what a pinned mount source must be.
type PinType int

// The pinned source types.
const (
	PinNone PinType = iota
	PinDir
	PinFile
	PinSocket
)

func (t PinType) String() string {
	return [...]string{"none", "directory", "regular file", "socket"}[min(int(t), 3)]
}

// Mount is one entry of [Spec.Mounts].
type Mount struct {
	// Kind is the operation.
	Kind MountKind
	// Src is the host path for binds and overlays, the target for symlinks.
	Src string
	// Dst is the path inside the jail.
	Dst string
	// Size caps a tmpfs, in bytes; zero means bwrap's default.
	Size int64
	// Mode sets the permissions of a tmpfs or dir; zero means bwrap's
	// default.
	Mode uint32
	// FD is the descriptor a FileFromFD mount reads.
	FD int
	// Holes are the writable paths inside a Seal.
	Holes []string
	// Try skips a bind whose Src does not exist instead of failing.
	Try bool
	// Pin, when set, passes a Bind or ROBind's source to bwrap as a
	// descriptor that the launcher opens just before the jail starts,
	// without following a symlink, and checks: of this type and owned by
	// the user. bwrap then mounts exactly what was checked, so a path
	// swapped for a link to a socket or a cgroup file is never followed.
	Pin PinType
	// PinDev and PinIno, when PinIno is not 0, are the device and inode
	// the pinned source must be; the owner is then not checked (a raw
	// relay's socket may be a service's).
	PinDev, PinIno uint64 `json:",omitempty"`
	// Why says what the mount is for (explain prints it); the compiler
	// ignores it.
	Why string `json:",omitempty"`
}

// Limits are resource caps for a jail's systemd scope.
type Limits struct {
	// MemoryMax caps memory in bytes (systemd MemoryMax).
	MemoryMax uint64
	// CPUQuotaPerSecUSec caps CPU time, in microseconds per second
	// (1,000,000 is one full CPU).
	CPUQuotaPerSecUSec uint64
	// TasksMax caps the number of tasks (systemd TasksMax).
	TasksMax uint64
}

// MarshalText writes the kind's name, so golden inputs and logs read as
// words.
func (k MountKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText reads a kind's name.
func (k *MountKind) UnmarshalText(b []byte) error {
	for kind, name := range mountKindNames {
		if name != "" && name == string(b) {
			*k = MountKind(kind)
			return nil
		}
	}
	return fmt.Errorf("unknown mount kind %q", b)
}
