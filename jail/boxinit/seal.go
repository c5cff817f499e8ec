package boxinit

import (
	"syscall"

	"github.com/aisan-dev/aisan/jail/shared/errwrap"
)

// sealInit makes the init undumpable. Everything in a jail runs as the
// init's own user, so without this any process there could open
// /proc/1/fd/N and write FDReady as if it were the init (forging the
// agent's exit), or write /proc/1/mem, or ptrace the init. For a process
// that is not dumpable the kernel asks for CAP_SYS_PTRACE in the init's
// user namespace instead of a matching user, and no process in a jail
// has it: bwrap leaves the jail no capability (strict boxes also drop
// them explicitly), and a user namespace a jailed process makes for
// itself is a child of the init's, whose powers do not reach up. aisan
// outside, in the parent namespace, keeps what it needs: the pidfd, the
// namespace inode and /proc/PID/stat (see jail/slot's proof).
//
// The flag is the process's and survives every thread the Go runtime
// starts; exec would reset it, and the init never execs.
func sealInit() error {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_DUMPABLE, 0, 0); errno != 0 {
		return errwrap.Wrap("making the init undumpable", errno)
	}
	// The jail ends with bwrap, its parent: the kernel kills the init,
	// and with it everything in the namespace, when bwrap dies. bwrap's
	// own --die-with-parent cannot say that: it would tie bwrap to the
	// wrapper, which starts it and must be free to exit while the jail
	// goes on under a keeper.
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0); errno != 0 {
		return errwrap.Wrap("tying the init to bwrap", errno)
	}
	return nil
}
