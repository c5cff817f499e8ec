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
//   - It runs inside the box's init (PID 1), so it imports no HTTP, no
//     D-Bus and nothing of the host side.
package relay

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"syscall"

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
	ls   []net.Listener
	wg   sync.WaitGroup
}

// Listen binds 127.0.0.1:port and, where the box has IPv6 loopback,
// [::1]:port. Both are bound before it returns, so a caller that starts
// the agent afterwards never races the listener.
func Listen(port int, socket string) (*Relay, error) {
	if port <= 0 || port > 65535 {
		return nil, fmt.Errorf("relay port %d out of range", port)
	}
	r := &Relay{Socket: socket}
	p := strconv.Itoa(port)
	l4, err := net.Listen("tcp4", "127.0.0.1:"+p)
	if err != nil {
		return nil, fmt.Errorf("listening on 127.0.0.1:%s for %s: %w", p, socket, err)
	}
	r.ls = append(r.ls, l4)
	l6, err := net.Listen("tcp6", "[::1]:"+p)
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

func noIPv6(err error) bool {
	return errors.Is(err, syscall.EADDRNOTAVAIL) || errors.Is(err, syscall.EAFNOSUPPORT)
}

// Addrs are the listening addresses.
func (r *Relay) Addrs() []net.Addr {
	var out []net.Addr
	for _, l := range r.ls {
		out = append(out, l.Addr())
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
				c, err := l.Accept()
				if err != nil {
					if errors.Is(err, net.ErrClosed) {
						return
					}
					continue
				}
				go r.pump(c)
			}
		}()
	}
}

// Close stops accepting; connections in flight run on.
func (r *Relay) Close() error {
	for _, l := range r.ls {
		l.Close()
	}
	r.wg.Wait()
	return nil
}

func (r *Relay) pump(c net.Conn) {
	defer c.Close()
	u, err := net.Dial("unix", r.Socket)
	if err != nil {
		return
	}
	defer u.Close()
	if r.Pass {
		HandOver(c, u.(*net.UnixConn))
		return
	}
	Pump(c, u)
}

// HandOver sends c itself over u for the far end to serve; the caller
// then closes its own copies (the far end's keeps the connection open).
func HandOver(c net.Conn, u *net.UnixConn) error {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return fmt.Errorf("relay: cannot hand over a %T", c)
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return err
	}
	var werr error
	if err := rc.Control(func(fd uintptr) {
		_, _, werr = u.WriteMsgUnix([]byte{fdpass.Marker}, syscall.UnixRights(int(fd)), nil)
	}); err != nil {
		return err
	}
	return werr
}

// halfCloser is a connection whose write side can be shut alone.
type halfCloser interface {
	CloseWrite() error
}

// Pump copies a to b and b to a until both directions reach EOF, shutting
// the write side of each destination as its source ends. It returns when
// both copies are done.
func Pump(a, b net.Conn) {
	var wg sync.WaitGroup
	wg.Add(2)
	cp := func(dst, src net.Conn) {
		defer wg.Done()
		_, err := io.Copy(dst, src)
		if hc, ok := dst.(halfCloser); ok && err == nil {
			hc.CloseWrite()
		} else {
			// An error either way ends both directions.
			dst.Close()
			src.Close()
		}
	}
	go cp(b, a)
	go cp(a, b)
	wg.Wait()
}
