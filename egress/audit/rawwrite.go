package audit

// How a line is appended.
//
// Rules:
//   - On a local disk file system a line is appended with a raw write(2):
//     the write lands in the page cache and returns. A Go os.File.Write
//     enters the runtime's syscall state instead, which in a process that
//     was idle (the egress proxy between a box's calls, one line per
//     call) wakes the runtime's monitor thread, one more context switch
//     and a few timer wake-ups per request (egressbench: about 2 of the
//     5 context switches a checked request cost the proxy).
//   - The price: a write that must wait (the disk's writeback throttling
//     the process, a journal commit) holds the process's processor for
//     that long, where Go would have run its other goroutines meanwhile.
//   - On any other file system (NFS, FUSE, anything not known to be a
//     local disk's) a write may wait on a server or a daemon, so it takes
//     Go's ordinary path.

import (
	"os"
	"syscall"
	"unsafe"
)

// localFS are the file systems (statfs magic numbers) whose writes only
// wait on this machine's own disk and memory.
var localFS = map[int64]bool{
	0xEF53:     true, // ext2, ext3, ext4
	0x58465342: true, // xfs
	0x9123683E: true, // btrfs
	0x01021994: true, // tmpfs
	0xF2F52010: true, // f2fs
	0x2FC12FC1: true, // zfs
	0x794C7630: true, // overlayfs
}

// rawWritable reports whether f is on a local disk file system.
func rawWritable(f *os.File) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	var st syscall.Statfs_t
	if rc.Control(func(fd uintptr) { err = syscall.Fstatfs(int(fd), &st) }) != nil || err != nil {
		return false
	}
	return localFS[int64(st.Type)]
}

// writeRaw appends b to f with raw write(2) calls (see the rules above).
func writeRaw(f *os.File, b []byte) (int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	done := 0
	var werr error
	cerr := rc.Write(func(fd uintptr) bool {
		for done < len(b) {
			n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&b[done])), uintptr(len(b)-done))
			switch {
			case e == syscall.EINTR:
				continue
			case e != 0:
				werr = &os.PathError{Op: "write", Path: f.Name(), Err: e}
				return true
			case n == 0:
				werr = &os.PathError{Op: "write", Path: f.Name(), Err: syscall.EIO}
				return true
			}
			done += int(n)
		}
		return true
	})
	if werr == nil {
		werr = cerr
	}
	return done, werr
}
