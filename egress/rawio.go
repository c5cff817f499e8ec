package egress

// Socket reads and writes without the runtime's syscall bookkeeping.
//
// Rules:
//   - The proxy's two sockets per call (the box's connection and the
//     upstream's) are non-blocking, as every socket of Go's net package
//     is: a read or write returns at once, with what it moved or EAGAIN,
//     and EAGAIN parks the goroutine in the poller as net.Conn's own
//     Read and Write do (deadlines and Close keep working: the wait is
//     the RawConn's).
//   - Such a call is made as a raw system call. A Go syscall.Read enters
//     the runtime's syscall state, which on a process that was idle (as
//     the proxy is between a box's calls and between a stream's events)
//     wakes the runtime's monitor thread, which then polls every 20 µs
//     until the process is idle again: on this path one extra thread
//     wake-up and a few timer wake-ups per request and per event, each a
//     context switch that competes for the CPUs with the box's client and
//     the upstream. A raw call cannot block, so it needs none of that.
//   - Only sockets: a file, whose write may wait on the disk, keeps the
//     ordinary path.

import (
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// rawSocket is a connected stream socket whose Read and Write are raw
// non-blocking system calls.
type rawSocket struct {
	net.Conn
	rc syscall.RawConn
}

// rawIO wraps c, when it is a socket the rules above apply to (TCP or
// Unix stream); anything else is returned as it is.
func rawIO(c net.Conn) net.Conn {
	switch c.(type) {
	case *net.TCPConn, *net.UnixConn:
	default:
		return c
	}
	rc, err := c.(syscall.Conn).SyscallConn()
	if err != nil {
		return c
	}
	return &rawSocket{Conn: c, rc: rc}
}

func (s *rawSocket) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	var errno syscall.Errno
	err := s.rc.Read(func(fd uintptr) bool {
		n, errno = rawRW(syscall.SYS_READ, fd, p)
		return errno != syscall.EAGAIN
	})
	if err == nil && errno != 0 {
		err = errno
	}
	if err != nil {
		return 0, s.opError("read", err)
	}
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

func (s *rawSocket) Write(p []byte) (int, error) {
	var done int
	var errno syscall.Errno
	err := s.rc.Write(func(fd uintptr) bool {
		for done < len(p) {
			n, e := rawRW(syscall.SYS_WRITE, fd, p[done:])
			if e != 0 {
				errno = e
				return e != syscall.EAGAIN
			}
			done += n
		}
		errno = 0
		return true
	})
	if err == nil && errno != 0 {
		err = errno
	}
	if err != nil {
		return done, s.opError("write", err)
	}
	return done, nil
}

// rawRW is one read(2) or write(2) of p on fd, retried on EINTR.
func rawRW(trap, fd uintptr, p []byte) (int, syscall.Errno) {
	for {
		r, _, e := syscall.RawSyscall(trap, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
		if e != syscall.EINTR {
			return int(r), e
		}
	}
}

// rawPeek is recv(2) of one byte with MSG_PEEK|MSG_DONTWAIT on fd: what a
// pooled connection's idle check asks, raw like the socket's reads.
func rawPeek(fd uintptr) syscall.Errno {
	var b [1]byte
	_, _, e := syscall.RawSyscall6(syscall.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&b[0])), 1, syscall.MSG_PEEK|syscall.MSG_DONTWAIT, 0, 0)
	return e
}

// opError words an error as net.Conn's own methods do, so callers that
// look for net.ErrClosed, a timeout or ECONNRESET still find it.
func (s *rawSocket) opError(op string, err error) error {
	if errno, ok := err.(syscall.Errno); ok {
		err = os.NewSyscallError(op, errno)
	}
	return &net.OpError{Op: op, Net: s.LocalAddr().Network(), Source: s.LocalAddr(), Addr: s.RemoteAddr(), Err: err}
}

// CloseWrite shuts the write side, as TCPConn's and UnixConn's do.
func (s *rawSocket) CloseWrite() error {
	if cw, ok := s.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// SyscallConn is the socket's, for the idle check of a pooled connection.
func (s *rawSocket) SyscallConn() (syscall.RawConn, error) { return s.rc, nil }
