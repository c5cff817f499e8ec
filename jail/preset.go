package jail

import (
	"path/filepath"

	"github.com/aisan-dev/aisan/jail/boxinit"

	"slices"

	"github.com/aisan-dev/aisan/jail/busproxy"
)

// Kind names the agent a preset is for.
type Kind string

// The agent kinds aisan knows, and "run" for any command.
const (
	KindRun      Kind = "run"
	KindClaude   Kind = "claude"
	KindCodex    Kind = "codex"
	KindOpencode Kind = "opencode"
	// KindService is the slot kind of headless services: an ordinary
	// deny-list launch that systemd starts as a service's main process.
	KindService Kind = "service"
)

// DenyOptions are the inputs of the deny-list presets: what the user asked
// for plus the host facts the preset depends on. Presets read nothing else.
type DenyOptions struct {
	// Kind is the agent; it selects the per-agent mounts and environment.
	Kind Kind
	// Slot is the slot name, exported as AISAN_JAIL inside.
	Slot string
	// Command is the full argv to run (for agents, the agent's name first).
	Command []string
	// Cwd is the real path of the working directory.
	Cwd string
	// Env is the host environment the agent inherits.
	Env []string
	// RuntimeDir is $XDG_RUNTIME_DIR, or "" when unset.
	RuntimeDir string
	// RuntimeSystemd is set when $XDG_RUNTIME_DIR/systemd exists.
	RuntimeSystemd bool
	// OtherManagerDirs are further systemd directories of this user's
	// that exist (/run/user/UID/systemd when $XDG_RUNTIME_DIR points
	// elsewhere): the user manager listens there all the same.
	OtherManagerDirs []string
	// OtherBusSockets are further session bus sockets of this user's that
	// exist and that the bus plan does not already cover.
	OtherBusSockets []string
	// Bus is the session bus decision.
	Bus busproxy.Plan
	// MaskFile is an empty file to bind over bus sockets that are masked.
	MaskFile string
	// History binds per-slot prompt history files over the agent's own.
	History []Mount
	// PIDDirs bind per-launch directories over the ones agents keep
	// files named by PID in (Claude's sessions/<pid>.json): every jail
	// numbers its processes from 1, so concurrent jails would overwrite
	// each other's files there, and a host agent would judge them by the
	// host's PIDs.
	PIDDirs []Mount
	// ExtraEnv entries override Env (KEY=VALUE), e.g. opencode permissions.
	ExtraEnv []string
	// Limits go to the jail's systemd scope.
	Limits Limits
	// StateDirs are aisan's own directories (the state dir, the runtime
	// dir's aisan/, when AISAN_HOME points elsewhere ~/.aisan, and the
	// configuration dir), as real paths: bound read-only over themselves,
	// so that no jail can edit what "aisan kill", "list" and "watch" act
	// on, swap a neighbour's bus proxy socket, or rewrite the
	// configuration the next launch reads.
	StateDirs []string
	// RunDir is aisan's run directory (see [RunDir]) when it exists:
	// every slot's sockets are there, its bus gate among them. A
	// read-only bind stops no connect(2), so the jail gets an empty
	// read-only directory in its place instead: its own bus is bound by
	// descriptor where it finds the bus, and no other slot's gate (with
	// that slot's allow-list, or a bus where this jail has none) is
	// within its reach.
	RunDir string
	// StateRunDirs are aisan's run directories in the state directories
	// (other than RunDir) that exist: where the locks of an aisan that
	// has no /run/user/UID are. A jail could open a lock file read-only
	// and hold it, so it gets each of them empty and read-only too.
	StateRunDirs []string
	// Transcripts are the transcript directories of the state
	// directories that exist: what every slot showed (a token a script
	// printed, a shell session's output). A read-only bind stops no
	// read, so the jail gets each of them empty and read-only.
	Transcripts []string
	// OwnFiles are aisan's programs this user could replace, the file a
	// linked config.toml leads to, and the supervisor unit's file and
	// drop-in directories: bound read-only over themselves, so that no
	// jail swaps the aisan the user's next claude runs on the host, the
	// configuration it reads, or what the user manager runs as aisan
	// watch.
	OwnFiles []string
	// Renamable are the directories above StateDirs and OwnFiles that
	// this user could rename, shallowest first: each is bound over
	// itself before anything below it, since a mount point cannot be
	// renamed and a jail could otherwise move ~/.config away and leave
	// a configuration of its own at the name the next launch reads.
	Renamable []string
	// Dev is what of the host's /dev the jail gets back ([GatherDev]).
	Dev []DevEntry
}

// DenyList is the default jail: the host as it is, minus four things.
// Every mount below is one of those denials or what keeps the rest
// transparent.
func DenyList(o DenyOptions) Spec {
	mounts := []Mount{
		// The root filesystem as outside, writable where it is writable.
		{Kind: Bind, Src: "/", Dst: "/"},
	}
	for _, d := range o.Renamable {
		mounts = append(mounts, Mount{Kind: Bind, Src: d, Dst: d})
	}
	// Devices as outside, GPU nodes included, but a devpts of the jail's
	// own: no other terminal's /dev/pts/N, and /dev/ptmx opens new ptys
	// there.
	mounts = append(mounts, devMounts(o.Dev)...)
	mounts = append(mounts, []Mount{
		// A procfs of the jail's own PID namespace: foreign PIDs vanish.
		{Kind: Proc, Dst: "/proc"},
		// cgroup files read-only, every submount included (bwrap
		// remounts a read-only bind recursively): no cgroup.kill of a
		// neighbour.
		{Kind: ROBind, Src: "/sys/fs/cgroup", Dst: "/sys/fs/cgroup"},
	}...)
	if o.RuntimeDir != "" && o.RuntimeSystemd {
		// The user manager's private socket lives here.
		mounts = append(mounts, Mount{Kind: Tmpfs, Dst: filepath.Join(o.RuntimeDir, "systemd"), Mode: 0o700})
	}
	for _, d := range o.OtherManagerDirs {
		mounts = append(mounts, Mount{Kind: Tmpfs, Dst: d, Mode: 0o700})
	}
	for _, d := range o.StateDirs {
		mounts = append(mounts, Mount{Kind: ROBind, Src: d, Dst: d, Pin: PinDir})
	}
	if o.RunDir != "" {
		mounts = append(mounts, Mount{Kind: Tmpfs, Dst: o.RunDir, Mode: 0o700})
		if o.Bus.Mode == busproxy.Filtered && o.Bus.JailSocket == o.Bus.ProxySocket {
			// No host socket path stands for the bus (an abstract or tcp
			// address): the jail's address is its gate itself, in the
			// directory just emptied. It goes back there, alone, before
			// the directory turns read-only.
			mounts = append(mounts, Mount{Kind: Bind, Src: o.Bus.ProxySocket, Dst: o.Bus.JailSocket, Pin: PinSocket})
		}
		mounts = append(mounts, Mount{Kind: RemountRO, Dst: o.RunDir})
	}
	for _, d := range append(slices.Clone(o.StateRunDirs), o.Transcripts...) {
		mounts = append(mounts, Mount{Kind: Tmpfs, Dst: d, Mode: 0o700}, Mount{Kind: RemountRO, Dst: d})
	}
	for _, f := range o.OwnFiles {
		// Not pinned: a pin must be the user's, and a program in the
		// user's directory may be root's.
		mounts = append(mounts, Mount{Kind: ROBind, Src: f, Dst: f})
	}
	for _, sock := range o.OtherBusSockets {
		mounts = append(mounts, Mount{Kind: ROBind, Src: o.MaskFile, Dst: sock, Pin: PinFile})
	}
	mounts = append(mounts, busMounts(o.Bus, o.MaskFile)...)
	// Per-slot history copies live in the (read-only) state dir; each is
	// writable through its own bind only, pinned like every source of ours.
	for _, h := range o.History {
		h.Pin = PinFile
		mounts = append(mounts, h)
	}
	for _, d := range o.PIDDirs {
		d.Pin = PinDir
		mounts = append(mounts, d)
	}

	env := boxinit.MergeEnv(o.Bus.ApplyEnv(o.Env), o.ExtraEnv, []string{"AISAN_JAIL=" + o.Slot})
	return Spec{
		Namespaces: Namespaces{PID: true},
		Mounts:     mounts,
		ClearEnv:   true,
		Env:        env,
		Command:    slices.Clone(o.Command),
		Cwd:        o.Cwd,
		AsPID1:     true,
		InfoFD:     boxinit.FDInfo,
		Limits:     o.Limits,
		Bus:        o.Bus,
	}
}

// busMounts hides or replaces the host's bus sockets, masks first and the
// proxy's socket last, so that no mask can cover it.
func busMounts(b busproxy.Plan, maskFile string) []Mount {
	var out []Mount
	for _, m := range b.Mounts() {
		if m.Src == "" {
			// An empty read-only file over the socket: connecting fails
			// at once, so clients report "no bus" instead of hanging.
			out = append(out, Mount{Kind: ROBind, Src: maskFile, Dst: m.Dst, Pin: PinFile})
			continue
		}
		// The proxy's socket, checked to be the socket we own when the
		// jail starts: its directory is read-only in every jail, and the
		// descriptor closes the window between check and mount.
		out = append(out, Mount{Kind: Bind, Src: m.Src, Dst: m.Dst, Pin: PinSocket})
	}
	return out
}
