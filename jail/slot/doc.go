// Package slot names jailed agents, records them on disk and decides
// whether each one is still alive, so that "aisan list" and "aisan kill"
// can act on one jail without touching anything else on the machine.
//
// A slot is one launch of one agent in one worktree. Its name is readable
// and stable across launches — the worktree's basename, the first 8 hex
// digits of the SHA-256 of its real path, and the agent kind
// (myrepo-3f9c2a1b-claude) — and unique among live slots: a second claude in
// the same worktree gets myrepo-3f9c2a1b-claude-2. See [BaseName].
//
// # Layout
//
// Everything lives under the state directory ([Home]: $AISAN_HOME, default
// ~/.aisan), which [CheckHome] refuses inside a git worktree or inside the
// directory being jailed. The launcher binds the state directory read-only
// into every jail (package jail), so no agent can edit the registry that
// decides what "aisan kill" hits. Nothing here relies on that alone:
// records are read only if they are regular files of the user's, of sane
// size, reached without a symlink, and in aisan's own shape; liveness asks
// the holder as well as the lock; and a kill signals only an init that
// proves to be the slot's jail.
//
//	slots/<slot>.json               the record (one file per slot, see [Record])
//	slots/<slot>.kill               who ended the launch ('aisan kill'), for its wrapper
//	transcripts/<slot>/<time>.log   one transcript per launch
//	transcripts/<slot>/<time>.json  what an ended launch was ([LaunchInfo])
//	history/<slot>/                 per-slot prompt history (package history)
//
// Each slot's lock, held by the wrapper for its whole life, is not in the
// state directory but in aisan's lock directory of the user's runtime
// directory (package lockfile): <slot>.lock in a directory there named
// for the slots directory's real path, normally
// /run/user/UID/aisan/locks/<hash>.d/. Without /run/user/UID (root on a
// server, a plain su, cron, a container) the lock directory is run/locks
// in the state directory, which every jail gets as an empty directory.
//
// Records are written atomically (temporary file, rename), so a reader
// sees the old record or the new one, never a torn one. They are not
// fsynced: they describe running processes, which a machine crash ends
// anyway, and syncing cost milliseconds on every launch. A record that does not parse is reported by name and skipped;
// nothing here ever deletes or overwrites it.
//
// # Liveness is the lock
//
// The wrapper takes an flock(2) on the slot's lock file, and an
// open-file-description lock (fcntl F_OFD_SETLK) on the same descriptor,
// and holds both until it exits; the kernel drops them when the wrapper
// dies, however it dies. A slot is
//
//   - running: the record has no end yet, and the lock is held or the
//     holder the record names (PID and start time, taken with the lock)
//     is alive — a lock file that was deleted or replaced does not make a
//     live slot an orphan;
//   - background: running, but the agent has exited (the record has its
//     AgentEnd) and processes it left keep the jail alive; the holder is
//     then the launcher's keeper, which inherited the lock ([Registry.Adopt])
//     and records the end when the jail's last process ends;
//   - orphaned: the lock is free and the holder dead, but the jail's PID
//     namespace is still alive (the wrapper was killed and the agent kept
//     running);
//   - exited: anything else — the wrapper recorded the end, or died
//     after its jail did.
//
// PIDs alone decide nothing: a PID is reused, and /proc/PID/comm is
// truncated to 15 bytes. A jail is "still alive" only when the recorded
// init PID exists and /proc/PID/ns/pid has the recorded PID-namespace inode.
// The flock is what other tools see (`flock -n 9 9>>FILE` fails while the
// slot runs). aisan itself tests the OFD lock with F_OFD_GETLK, which places
// no lock, so "aisan list" never makes a concurrent launch believe a name is
// taken; flock(2) has no test operation.
//
// Only aisan can hold these locks. A lock needs only a descriptor, and
// flock(2) takes one on a file opened read-only; a read-only state
// directory and a write-only file (mode 0200, as lock files are made)
// would not stop a jail, since a process there may make a user namespace
// of its own in which the user is root and passes every permission check
// on the user's files. So the locks are where no jail reaches: every
// deny-list jail sees aisan's directory of the runtime directory empty,
// and no strict box sees the runtime directory at all. No jail can make a
// neighbour's orphan look running (and keep it from being reaped), keep
// an ended slot's name from the next launch, or make an ended slot look
// running. Inside a jail the lock cannot be seen, and a slot is not taken
// for ended there.
//
// An older aisan kept every lock beside its record. Its launches still
// count as running while their holder lives, by the PID
// and start time the record names; a record from before start times were
// kept names its holder by that lock alone, which is therefore tested for
// it. A keeper adopts a lock of either place. Pruning an ended slot
// removes an old lock file with its record. The runtime directory goes
// when the user's last session ends; a wrapper that outlives it (in a
// detached terminal multiplexer) loses its lock file, and the holder
// check keeps its slot running.
//
// The lock file is opened close-on-exec. If bwrap inherited it, a killed wrapper would leave the lock held by the jail, and
// the slot would look running forever.
//
// # Killing
//
// [Registry.Kill] ends a whole jail by sending SIGKILL to its init process
// (PID 1 of the jail's namespace, seen from the host): when a namespace's
// init dies, the kernel kills everything else in it. The PID is verified
// against the recorded namespace inode through a pidfd, so a reused PID is
// never signalled, and the init must have the start time the launch
// recorded: PID, namespace and start time are what aisan saw and the
// kernel keeps, and nothing in a jail can change them or the record (the
// jail's init is not dumpable, the state is read-only), so a record that
// names another process is refused with a [*ProofError]. (Records from
// before start times were kept are proven by AISAN_JAIL=<slot> in their
// init's environment instead.) The wrapper is never signalled; it sees the jail end,
// records the exit status and releases the lock. For an orphan there is no
// wrapper, so [Registry.KillOrphan] takes the slot's lock, re-reads the
// record, kills and records the end, all under the lock; a slot whose lock
// is held has a live wrapper and is no orphan, and is left alone.
// A launch that fails before its jail exists calls [Slot.Abandon], which
// puts the previous launch's record back (or removes the record when the
// name was new): a failed launch changes nothing in "aisan list".
// [Registry.Killer] is the seam for other ways to kill (a systemd scope);
// [PinInit] gives it the same pinned, namespace-checked init to verify a
// unit against before acting on it.
package slot
