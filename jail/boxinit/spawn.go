package boxinit

import (
	"errors"
	"syscall"
)

// The init starts the agent, and the wrapper bwrap, with
// syscall.ForkExec, not os/exec: os.StartProcess's first use in a process
// probes the kernel's pidfd support (pidfd_open, waitid,
// pidfd_send_signal and a throwaway clone that must exit before it goes
// on), which measured 0.7-1.2 ms on a loaded 2-core VM, right in front of
// the one child each must start at once. The child is set up the same
// way (ForkExec is what os.StartProcess calls); the init passes its
// descriptors as they arrived, never switched to blocking mode as
// os.File.Fd would.

// closed, at a position of spawn's files, closes that descriptor in the
// child.
const closed = -1

// Spawn starts path with argv and env. files[i] becomes the child's
// descriptor i (or is closed in it, for [closed]); sys is the rest of
// the child's setup (its PidFD, when set, receives a pidfd from the
// clone itself). It returns the child's pid.
func Spawn(path string, argv, env []string, files []int, sys *syscall.SysProcAttr) (int, error) {
	fds := make([]uintptr, len(files))
	for i, fd := range files {
		fds[i] = uintptr(fd) // closed becomes ^uintptr(0), which ForkExec closes
	}
	return syscall.ForkExec(path, argv, &syscall.ProcAttr{Env: env, Files: fds, Sys: sys})
}

// WaitExit waits for the child pid to end and returns its status as a
// shell reports it.
func WaitExit(pid int) (int, error) {
	for {
		var ws syscall.WaitStatus
		_, err := syscall.Wait4(pid, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return 0, err
		}
		return statusCode(ws), nil
	}
}

// shPath is the shell execvp(3) hands an executable that the kernel
// refuses as no known format (ENOEXEC).
const shPath = "/bin/sh"

// shArgv is the argv execvp(3) gives shPath for such a file: the shell,
// the file's path, then the command's own arguments.
func shArgv(path string, argv []string) []string {
	out := make([]string, 0, len(argv)+1)
	out = append(out, shPath, path)
	if len(argv) > 1 {
		out = append(out, argv[1:]...)
	}
	return out
}
