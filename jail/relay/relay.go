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
//     made with golang.org/x/sys/unix and served through os.File, which
//     waits on the runtime's poller as net does.
package relay

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"

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
		return nil, fmt.Errorf("relay port %d out of range", port)
	}
	r := &Relay{Socket: socket}
	p := strconv.Itoa(port)
	l4, err := listen(unix.AF_INET, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}, "127.0.0.1:"+p)
	if err != nil {
		return nil, fmt.Errorf("listening on 127.0.0.1:%s for %s: %w", p, socket, err)
	}
	r.ls = append(r.ls, l4)
	l6, err := listen(unix.AF_INET6, &unix.SockaddrInet6{Port: port, Addr: [16]byte{15: 1}}, "[::1]:"+p)
	switch {
	case err == nil:
		r.ls = append(r.ls, l6)
	case noIPv6(err):
		// A kernel or box without IPv6 loopback: 127.0.0.1 alone.
	default:
		l4.Close()
		return nil, fmt.Errorf("listening on [::1]:%s for %s: %w", p, socket, err)
	}
	return r, nil
}

// listen opens a listening TCP socket as the net package does (address
// reuse, IPv6 only on the IPv6 one), non-blocking, so that os.File
// serves it through the poller.
func listen(family int, sa unix.Sockaddr, addr string) (*os.File, error) {
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err != nil {
		unix.Close(fd)
		return nil, os.NewSyscallError("setsockopt", err)
	}
	if family == unix.AF_INET6 {
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, 1); err != nil {
			unix.Close(fd)
			return nil, os.NewSyscallError("setsockopt", err)
		}
	}
	if err := unix.Bind(fd, sa); err != nil {
		unix.Close(fd)
		return nil, os.NewSyscallError("bind", err)
	}
	if err := unix.Listen(fd, backlog); err != nil {
		unix.Close(fd)
		return nil, os.NewSyscallError("listen", err)
	}
	return os.NewFile(uintptr(fd), addr), nil
}

func noIPv6(err error) bool {
	return errors.Is(err, unix.EADDRNOTAVAIL) || errors.Is(err, unix.EAFNOSUPPORT)
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
		fd, _, aerr = unix.Accept4(int(lfd), unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
		return aerr != unix.EAGAIN
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
	unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_KEEPALIVE, 1)
	unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPIDLE, 15)
	unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPINTVL, 15)
	unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPCNT, 9)
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
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	for {
		err = unix.Connect(fd, &unix.SockaddrUnix{Name: path})
		if err != unix.EINTR {
			break
		}
	}
	if err == nil {
		err = unix.SetNonblock(fd, true)
	}
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("connect %s: %w", path, err)
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
		rights := unix.UnixRights(int(cfd))
		if err := uc.Write(func(ufd uintptr) bool {
			serr = unix.Sendmsg(int(ufd), []byte{fdpass.Marker}, rights, nil, 0)
			return serr != unix.EAGAIN
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
	if err := rc.Control(func(fd uintptr) { serr = unix.Shutdown(int(fd), unix.SHUT_WR) }); err != nil {
		return err
	}
	return serr
}
