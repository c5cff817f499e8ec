// Package relay is the in-box end of a strict box's egress: a loopback TCP
// listener whose every connection is pumped, byte for byte, to a host Unix
// socket that the box sees read-only.
//
// # Rules
//
//   - It inspects nothing and holds no credential: policy and
//     authentication live on the host, behind the socket.
//   - Each direction is copied until EOF and then half-closed, so that a
//     client that shuts down its write side still reads the whole answer.
//   - A connection whose socket cannot be dialled is closed at once; the
//     listener keeps serving.
//   - With Pass (a socket served by aisan's own egress), nothing is
//     copied: the accepted connection itself is sent over the socket
//     (SCM_RIGHTS, with the byte fdpass.Marker) and the host serves it, so
//     no request waits on this process. A raw relay of a user's socket
//     never passes, as its server would not understand.
//   - It runs inside the box's init (PID 1), which every launch starts,
//     plain ones included: it imports no HTTP, no D-Bus and nothing of
//     the host side, and not even the net package, whose initialisation
//     every start of the init would pay. The sockets are the kernel's,
//     made with the syscall package and served through os.File, which
//     waits on the runtime's poller as net does. (Not
//     golang.org/x/sys/unix: it links encoding/binary and with it
//     reflect, and not fmt: both would cost every start of the init.)
package relay

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"strconv"
	"sync"
	"syscall"

	"github.com/aisan-dev/aisan/jail/shared/errwrap"
	"github.com/aisan-dev/aisan/jail/shared/fdpass"
)

// Relay is one endpoint: the listeners on the box's loopback and the
// socket they relay to.
type Relay struct {
	// Socket is the host Unix socket each connection is relayed to.
	Socket string
	// Pass hands each connection over instead of copying it; set it
	// before Serve.
	Pass bool
	ls   []*os.File // listening sockets, named by their address
	wg   sync.WaitGroup
}

// backlog is the listen queue asked for; the kernel caps it at somaxconn.
const backlog = 4096

// Listen binds 127.0.0.1:port and, where the box has IPv6 loopback,
// [::1]:port. Both are bound before it returns, so a caller that starts
// the agent afterwards never races the listener.
func Listen(port int, socket string) (*Relay, error) {
	if port <= 0 || port > 65535 {
		return nil, errors.New("relay port " + strconv.Itoa(port) + " out of range")
	}
	r := &Relay{Socket: socket}
	p := strconv.Itoa(port)
	l4, err := listen(syscall.AF_INET, &syscall.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}, "127.0.0.1:"+p)
	if err != nil {
		return nil, errwrap.Wrap("listening on 127.0.0.1:"+p+" for "+socket, err)
	}
	r.ls = append(r.ls, l4)
	l6, err := listen(syscall.AF_INET6, &syscall.SockaddrInet6{Port: port, Addr: [16]byte{15: 1}}, "[::1]:"+p)
	switch {
	case err == nil:
		r.ls = append(r.ls, l6)
	case noIPv6(err):
		// A kernel or box without IPv6 loopback: 127.0.0.1 alone.
	default:
		l4.Close()
		return nil, errwrap.Wrap("listening on [::1]:"+p+" for "+socket, err)
	}
	return r, nil
}

// listen opens a listening TCP socket as the net package does (address
// reuse, IPv6 only on the IPv6 one), non-blocking, so that os.File
// serves it through the poller.
func listen(family int, sa syscall.Sockaddr, addr string) (*os.File, error) {
	fd, err := syscall.Socket(family, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1); err != nil {
		syscall.Close(fd)
		return nil, os.NewSyscallError("setsockopt", err)
	}
	if family == syscall.AF_INET6 {
		if err := syscall.SetsockoptInt(fd, syscall.IPPROTO_IPV6, syscall.IPV6_V6ONLY, 1); err != nil {
			syscall.Close(fd)
			return nil, os.NewSyscallError("setsockopt", err)
		}
	}
	if err := syscall.Bind(fd, sa); err != nil {
		syscall.Close(fd)
		return nil, os.NewSyscallError("bind", err)
	}
	if err := syscall.Listen(fd, backlog); err != nil {
		syscall.Close(fd)
		return nil, os.NewSyscallError("listen", err)
	}
	return os.NewFile(uintptr(fd), addr), nil
}

func noIPv6(err error) bool {
	return errors.Is(err, syscall.EADDRNOTAVAIL) || errors.Is(err, syscall.EAFNOSUPPORT)
}

// Addrs are the listening addresses, host:port.
func (r *Relay) Addrs() []string {
	var out []string
	for _, l := range r.ls {
		out = append(out, l.Name())
	}
	return out
}

// Serve accepts and relays connections in the background until Close.
func (r *Relay) Serve() {
	for _, l := range r.ls {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			for {
				c, err := accept(l)
				var aerr acceptError
				switch {
				case errors.As(err, &aerr):
					continue // this connection failed, not the listener
				case err != nil:
					return // closed
				}
				go r.pump(c)
			}
		}()
	}
}

// acceptError is accept4's own failure, for one connection; any other
// error of accept means the listener is closed.
type acceptError struct{ error }

// accept waits on the poller for the next connection of l.
func accept(l *os.File) (*os.File, error) {
	rc, err := l.SyscallConn()
	if err != nil {
		return nil, err
	}
	var fd int
	var aerr error
	if err := rc.Read(func(lfd uintptr) bool {
		fd, _, aerr = syscall.Accept4(int(lfd), syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC)
		return aerr != syscall.EAGAIN
	}); err != nil {
		return nil, err
	}
	if aerr != nil {
		return nil, acceptError{os.NewSyscallError("accept", aerr)}
	}
	tcpDefaults(fd)
	return os.NewFile(uintptr(fd), "tcp"), nil
}

// tcpDefaults gives an accepted connection what net gives one: no Nagle
// delay (a relayed answer written in pieces would otherwise wait for the
// client's delayed ACK, up to 40 ms) and keep-alive probes after 15
// idle seconds. They stay with the socket when it is handed over.
func tcpDefaults(fd int) {
	syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1)
	syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_KEEPALIVE, 1)
	syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_KEEPIDLE, 15)
	syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_KEEPINTVL, 15)
	syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_KEEPCNT, 9)
}

// Close stops accepting; connections in flight run on.
func (r *Relay) Close() error {
	for _, l := range r.ls {
		l.Close()
	}
	r.wg.Wait()
	return nil
}

func (r *Relay) pump(c *os.File) {
	defer c.Close()
	u, err := dialUnix(r.Socket)
	if err != nil {
		return
	}
	defer u.Close()
	if r.Pass {
		handOver(c, u)
		return
	}
	pump(c, u)
}

// dialUnix connects to the socket at path. The connect blocks (a full
// listen queue waits instead of failing); the socket is then made
// non-blocking for the poller.
func dialUnix(path string) (*os.File, error) {
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	for {
		err = syscall.Connect(fd, &syscall.SockaddrUnix{Name: path})
		if err != syscall.EINTR {
			break
		}
	}
	if err == nil {
		err = syscall.SetNonblock(fd, true)
	}
	if err != nil {
		syscall.Close(fd)
		return nil, &fs.PathError{Op: "connect", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// handOver sends c itself over u for the far end to serve; the caller
// then closes its own copies (the far end's keeps the connection open).
func handOver(c, u *os.File) error {
	cc, err := c.SyscallConn()
	if err != nil {
		return err
	}
	uc, err := u.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	cerr := cc.Control(func(cfd uintptr) {
		rights := syscall.UnixRights(int(cfd))
		if err := uc.Write(func(ufd uintptr) bool {
			serr = syscall.Sendmsg(int(ufd), []byte{fdpass.Marker}, rights, nil, 0)
			return serr != syscall.EAGAIN
		}); err != nil {
			serr = err
		}
	})
	if cerr != nil {
		return cerr
	}
	return serr
}

// pump copies a to b and b to a until both directions reach EOF, shutting
// the write side of each destination as its source ends. It returns when
// both copies are done.
func pump(a, b *os.File) {
	var wg sync.WaitGroup
	wg.Add(2)
	cp := func(dst, src *os.File) {
		defer wg.Done()
		_, err := io.Copy(dst, src)
		if err == nil {
			err = closeWrite(dst)
		}
		if err != nil {
			// An error either way ends both directions.
			dst.Close()
			src.Close()
		}
	}
	go cp(b, a)
	go cp(a, b)
	wg.Wait()
}

// closeWrite shuts the write side of a socket.
func closeWrite(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = syscall.Shutdown(int(fd), syscall.SHUT_WR) }); err != nil {
		return err
	}
	return serr
}
