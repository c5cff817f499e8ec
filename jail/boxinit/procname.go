package boxinit

import (
	"os"
	"syscall"
	"unsafe"
)

// InitName is what the jail's PID 1 is called in ps, top and
// /proc/1/comm: bwrap runs it through its descriptor, which would show as
// /proc/self/fd/4 (and "4").
const InitName = "aisan-init"

// nameInit renames this process to InitName: the command name (comm)
// through prctl, and the command line by writing over argv[0] where the
// kernel keeps it (bwrap 0.8 has no --argv0; changing the command line's
// bounds needs a capability the jail has not). The name is a constant:
// nothing of the project shows above the agent.
func nameInit() {
	syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_NAME, uintptr(unsafe.Pointer(unsafe.StringData(InitName+"\x00"))), 0)
	if len(os.Args) != 1 || len(os.Args[0]) < len(InitName) {
		return
	}
	// os.Args[0] is the kernel's copy of argv[0] (the runtime does not
	// copy it), followed by its NUL: the bytes /proc/self/cmdline shows.
	// With that last NUL overwritten the kernel shows the command line
	// up to its first NUL instead (as for setproctitle), so the name
	// reads without a tail of NULs.
	argv0 := unsafe.Slice(unsafe.StringData(os.Args[0]), len(os.Args[0])+1)
	n := copy(argv0, InitName)
	clear(argv0[n:])
	argv0[len(argv0)-1] = ' '
	os.Args = []string{InitName}
}
