package boxinit

// Descriptor numbers the launcher (package jail) uses to hand things to
// the stage, to bwrap and to the in-jail init. They are fixed so that
// presets can name them and explain shows the numbers a launch uses.
const (
	// FDArgs carries bwrap's options (NUL-separated) for --args.
	FDArgs = 3
	// FDInit is the init's executable (aisan-init, or aisan itself): the
	// stage is started through it, and bwrap runs it inside the jail as
	// /proc/self/fd/4.
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
//	wrapper ──fork──▶ stage = /proc/self/fd/4 __stage (waits at its gate:
//	   │                 │  fd 8, a socketpair)
//	   │                 │  the wrapper sends one byte on the gate, with the
//	   │                 │  pinned sources attached (SCM_RIGHTS), once the
//	   │                 │  jail is placed in its scope
//	   │                 ▼
//	   │              bwrap --args 3          3 args   (memfd, NUL-separated)
//	   │                 │                    4 init   (aisan-init, or aisan)
//	   │                 │                    5 payload (memfd, payload.go)
//	   │                 │                    6 info   (pipe → wrapper)
//	   │                 │                    7 ready  (pipe → wrapper)
//	   │                 │                    8… pins  (O_PATH, consumed by bwrap)
//	   │                 ▼
//	   │              init = /proc/self/fd/4 (PID 1): reads 5, closes 4,
//	   │                 │   writes 7 once its signal handlers are set
//	   │                 ▼
//	   └─ signals ──▶ agent (none of the descriptors above)
//
// Only the init writes 7 inside the jail: the agent never holds it, and
// the init makes itself undumpable before anything else runs, so that no
// process in the jail (all of them the init's own user) can reach it, or
// anything else of the init's, through /proc/1/fd, /proc/1/mem or ptrace
// (seal.go). The wrapper therefore believes what arrives on 7.
