package egress

// Connections handed over by the in-box relay.
//
// Rules:
//   - The relay of a built-in endpoint does not copy bytes: it sends the
//     box's accepted TCP connection itself over the socket (SCM_RIGHTS,
//     with the one byte fdpass.Marker; the message is jail/shared/fdpass), and the host serves it directly. That
//     removes the relay's process from every request's path both ways.
//   - A connection whose first message is anything else is served as the
//     byte stream it is (a client on the socket itself, as in tests).
//   - What arrives is the box's: a handed-over descriptor is kept only if
//     it is one TCP socket (not a file, a pipe, another kind of socket or
//     several); anything else is closed unread, and so is the connection.
//   - The handed-over connection counts as the socket connection it came
//     on: the server's cap and timeouts apply from the accept on.

import (
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/aisan-dev/aisan/jail/shared/fdpass"
)

// boxConn is one accepted connection of a backend socket. Its first read
// decides what it is: when that brings a handed-over TCP connection, the
// socket connection is closed and every later call goes to the TCP one.
// Deciding on the first read, not in Accept, keeps the server's connection
// cap and timeouts in force for connections that send nothing.
type boxConn struct {
	mu       sync.Mutex
	conn     net.Conn // the socket connection, then the handed-over one
	decided  bool
	deadline time.Time // the last read deadline, carried over
	prefix   []byte    // stream bytes the first read took
}

func (c *boxConn) current() net.Conn {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conn
}

func (c *boxConn) Read(p []byte) (int, error) {
	c.mu.Lock()
	if !c.decided {
		c.decided = true
		u := c.conn.(*net.UnixConn)
		c.mu.Unlock()
		tc, prefix, err := firstMessage(u)
		c.mu.Lock()
		if tc != nil {
			tc.SetReadDeadline(c.deadline)
			c.conn = tc
		}
		c.conn = rawIO(c.conn)
		c.prefix = prefix
		if err != nil {
			c.mu.Unlock()
			return 0, err
		}
	}
	if len(c.prefix) > 0 {
		n := copy(p, c.prefix)
		c.prefix = c.prefix[n:]
		c.mu.Unlock()
		return n, nil
	}
	conn := c.conn
	c.mu.Unlock()
	return conn.Read(p)
}

func (c *boxConn) Write(p []byte) (int, error) { return c.current().Write(p) }
func (c *boxConn) Close() error                { return c.current().Close() }
func (c *boxConn) LocalAddr() net.Addr         { return c.current().LocalAddr() }
func (c *boxConn) RemoteAddr() net.Addr        { return c.current().RemoteAddr() }

func (c *boxConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	c.deadline = t
	c.mu.Unlock()
	return c.current().SetDeadline(t)
}

func (c *boxConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	c.deadline = t
	c.mu.Unlock()
	return c.current().SetReadDeadline(t)
}

func (c *boxConn) SetWriteDeadline(t time.Time) error { return c.current().SetWriteDeadline(t) }

func (c *boxConn) CloseWrite() error {
	if hc, ok := c.current().(interface{ CloseWrite() error }); ok {
		return hc.CloseWrite()
	}
	return nil
}

// errRefusedHandover ends a connection whose first message handed over
// something other than one TCP connection.
var errRefusedHandover = &net.OpError{Op: "read", Net: "unix", Err: syscall.EPROTO}

// firstMessage reads u's first message: a handed-over TCP connection (u
// is then closed), or the bytes that start a stream.
func firstMessage(u *net.UnixConn) (net.Conn, []byte, error) {
	buf := make([]byte, 4096)
	oob := make([]byte, syscall.CmsgSpace(4))
	n, oobn, flags, _, err := u.ReadMsgUnix(buf, oob)
	if oobn == 0 {
		return nil, buf[:n], err
	}
	fd, ok := oneDescriptor(oob[:oobn], flags)
	u.Close()
	if !ok || n != 1 || buf[0] != fdpass.Marker {
		if fd >= 0 {
			syscall.Close(fd)
		}
		return nil, nil, errRefusedHandover
	}
	tc := tcpFromFD(fd)
	if tc == nil {
		return nil, nil, errRefusedHandover
	}
	return tc, nil, nil
}

// oneDescriptor is the one descriptor a control message carries, or -1
// and false (any other descriptors are closed).
func oneDescriptor(oob []byte, flags int) (int, bool) {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return -1, false
	}
	var fds []int
	for _, m := range msgs {
		if f, err := syscall.ParseUnixRights(&m); err == nil {
			fds = append(fds, f...)
		}
	}
	if len(fds) == 1 && len(msgs) == 1 && flags&syscall.MSG_CTRUNC == 0 {
		return fds[0], true
	}
	for _, f := range fds {
		syscall.Close(f)
	}
	return -1, false
}

// tcpFromFD keeps fd only if it is a connected TCP socket.
func tcpFromFD(fd int) net.Conn {
	if t, err := syscall.GetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_TYPE); err != nil || t != syscall.SOCK_STREAM {
		syscall.Close(fd)
		return nil
	}
	f := os.NewFile(uintptr(fd), "box connection")
	nc, err := net.FileConn(f)
	f.Close()
	if err != nil {
		return nil
	}
	tc, ok := nc.(*net.TCPConn)
	if !ok {
		nc.Close() // a Unix socket, say
		return nil
	}
	if ra, _ := tc.RemoteAddr().(*net.TCPAddr); ra == nil {
		tc.Close() // not connected: a listener, say
		return nil
	}
	return tc
}
