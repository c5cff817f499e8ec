package jail

import (
	"path/filepath"

	"github.com/aisan-dev/aisan/jail/busproxy"
	"slices"
	"strings"
)

// Descriptor numbers the launcher uses to hand things to bwrap and to the
// in-jail init. They are fixed so that presets can name them and explain
// shows the same numbers the launcher uses.
const (
	// FDArgs carries bwrap's options (NUL-separated) for --args.
	FDArgs = 3
	// FDInit is our own executable, run inside the jail as /proc/self/fd/4.
	FDInit = 4
	// FDPayload carries the agent's command to the in-jail init.
	FDPayload = 5
	// FDInfo receives bwrap's --info-fd JSON.
	FDInfo = 6
	// FDReady carries one byte from the in-jail init once it handles
	// signals: the wrapper forwards none before, since a namespace's PID 1
	// drops signals it has no handler for.
	FDReady = 7
	// FDFirstPin is the first of the pinned mount sources (Compiled.Pins,
	// in order), which bwrap binds with --bind-fd and closes: they never
	// reach the init or the agent.
	FDFirstPin = 8
)

// The descriptors, from the wrapper down (numbers as each process sees
// them):
//
//	wrapper ──fork──▶ stage (waits at its gate: fd 8, a socketpair)
//	   │                 │  the wrapper sends one byte on the gate, with the
//	   │                 │  pinned sources attached (SCM_RIGHTS), once the
//	   │                 │  jail is placed in its scope
//	   │                 ▼
//	   │              bwrap --args 3          3 args   (memfd, NUL-separated)
//	   │                 │                    4 init   (aisan's own binary)
//	   │                 │                    5 payload (memfd, JSON)
//	   │                 │                    6 info   (pipe → wrapper)
//	   │                 │                    7 ready  (pipe → wrapper)
//	   │                 │                    8… pins  (O_PATH, consumed by bwrap)
//	   │                 ▼
//	   │              init = /proc/self/fd/4 (PID 1): reads 5, closes 4,
//	   │                 │   writes 7 once its signal handlers are set
//	   │                 ▼
//	   └─ signals ──▶ agent (none of the descriptors above)

// Kind names the agent a preset is for.
type Kind string

// The agent kinds aisan knows, and "run" for any command.
const (
	KindRun      Kind = "run"
	KindClaude   Kind = "claude"
	KindCodex    Kind = "codex"
	KindOpencode Kind = "opencode"
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
	// dir's aisan/ and, when AISAN_HOME points elsewhere, ~/.aisan), as
	// real paths: bound read-only over themselves, so that no jail can edit
	// what "aisan kill", "list" and "watch" act on, nor swap a neighbour's
	// bus proxy socket.
	StateDirs []string
}

// DenyList is the default jail: the host as it is, minus four things.
// Every mount below is one of those denials or what keeps the rest
// transparent.
func DenyList(o DenyOptions) Spec {
	mounts := []Mount{
		// The root filesystem as outside, writable where it is writable.
		{Kind: Bind, Src: "/", Dst: "/"},
		// Devices as outside, GPU nodes included.
		{Kind: DevBind, Src: "/dev", Dst: "/dev"},
		// A procfs of the jail's own PID namespace: foreign PIDs vanish.
		{Kind: Proc, Dst: "/proc"},
		// cgroup files read-only, every submount included (bwrap
		// remounts a read-only bind recursively): no cgroup.kill of a
		// neighbour.
		{Kind: ROBind, Src: "/sys/fs/cgroup", Dst: "/sys/fs/cgroup"},
	}
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

	env := mergeEnv(o.Bus.ApplyEnv(o.Env), o.ExtraEnv, []string{"AISAN_JAIL=" + o.Slot})
	return Spec{
		Namespaces:    Namespaces{PID: true},
		Mounts:        mounts,
		ClearEnv:      true,
		Env:           env,
		Command:       slices.Clone(o.Command),
		Cwd:           o.Cwd,
		DieWithParent: true,
		AsPID1:        true,
		InfoFD:        FDInfo,
		Limits:        o.Limits,
		Bus:           o.Bus,
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

// mergeEnv overlays KEY=VALUE lists, later lists winning, and returns the
// result sorted by key so the compiled argv is deterministic.
func mergeEnv(lists ...[]string) []string {
	var out []string
	index := map[string]int{}
	for _, l := range lists {
		for _, kv := range l {
			k, _, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				continue
			}
			if i, seen := index[k]; seen {
				out[i] = kv
				continue
			}
			index[k] = len(out)
			out = append(out, kv)
		}
	}
	slices.SortFunc(out, func(a, b string) int {
		ka, _, _ := strings.Cut(a, "=")
		kb, _, _ := strings.Cut(b, "=")
		return strings.Compare(ka, kb)
	})
	return out
}
