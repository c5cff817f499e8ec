// Package boxinit is what runs inside a jail between aisan's wrapper and
// the agent: the jail's PID 1 ([RunInit]), which starts the agent once
// the wrapper admits it, forwards signals to it, reaps orphans and reports
// the agent's stops and status. The descriptor protocol it shares with
// the wrapper and bwrap is written down once, in fds.go.
//
// It is linked into the lean aisan-init binary (cmd/aisan-init) as well as
// into aisan, so it imports nothing heavy: each launch starts it. Not even
// fmt, reflect, os/exec or golang.org/x/sys/unix: its messages are put
// together with strconv and jail/shared/errwrap, and the system calls are
// the syscall package's (cmd/aisan's TestInitLinks keeps the list).
// Package jail builds the inputs ([Payload], the descriptors) and reads
// the outputs; this package never imports jail.
package boxinit
