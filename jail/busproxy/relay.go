package busproxy

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// RunRelay is `aisan __bus FILTER -- PROXY-ARGV...`, started by a [Gate]
// with the gate's listener and its lifeline (see the diagram in
// gate.go): it starts the proxy, which listens on FILTER, and carries
// each connection the gate accepts to it, until the lifeline ends. It
// returns the process's exit code.
func RunRelay(args []string) int {
	if len(args) < 3 || args[1] != "--" {
		complain("usage: aisan " + RelayCommand + " FILTER-SOCKET -- PROXY-ARGV...: an internal step of a launch, not for use by hand")
		return 2
	}
	filter, argv := args[0], args[2:]
	// Our stderr is a pipe the wrapper reads while it lives: once it has
	// gone, a complaint must fail, not kill us.
	signal.Ignore(syscall.SIGPIPE)
	gate := os.NewFile(relayFDGate, "bus gate")
	lifeline := os.NewFile(relayFDLifeline, "bus lifeline")
	if gate == nil || lifeline == nil {
		complain("the bus relay was started without its descriptors")
		return 2
	}
	l, err := net.FileListener(gate)
	gate.Close()
	ln, ok := l.(*net.UnixListener)
	if err != nil || !ok {
		complain("the bus relay's descriptor " + strconv.Itoa(relayFDGate) + " is not a Unix listener")
		return 2
	}
	proxy, err := start(context.Background(), argv, filter)
	if err != nil {
		complain("the jail's session bus: " + err.Error())
		return 1
	}
	go func() {
		// End of file: every write end is closed, so neither the wrapper
		// nor a keeper serves the jail any more.
		io.Copy(io.Discard, lifeline)
		os.Exit(0)
	}()
	go func() {
		<-proxy.Exited()
		complain("the jail's session bus proxy exited: " + proxy.Stderr())
		os.Exit(1)
	}()
	for {
		c, err := ln.AcceptUnix()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return 0
			}
			// Out of descriptors, most likely: the jail's clients
			// wait in the backlog meanwhile.
			time.Sleep(10 * time.Millisecond)
			continue
		}
		go relayConn(c, filter)
	}
}

func complain(msg string) { os.Stderr.WriteString("aisan: warning: " + msg + "\n") }

// relayConn carries one client's connection to the proxy and back.
func relayConn(c *net.UnixConn, filter string) {
	up, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: filter, Net: "unix"})
	if err != nil {
		c.Close()
		return
	}
	relay(c, up)
}

// relay passes a client's authentication to the proxy one command at a
// time (sasl.go), then carries the connection both ways.
func relay(c, up *net.UnixConn) {
	rest, fds, upRest, err := handshake(c, up)
	if err == nil && len(upRest) > 0 {
		_, err = c.Write(upRest)
	}
	if err == nil && len(rest) > 0 {
		err = writeAll(up, rest, fds)
	}
	closeAll(fds)
	if err != nil {
		c.Close()
		up.Close()
		return
	}
	carry(c, up)
}

// carry copies a and b into each other, bytes and the descriptors passed
// with them (D-Bus passes file descriptors in messages), until both
// directions have ended; then it closes both. Each chunk is written with
// the descriptors that came with it, so they reach the other side with
// the bytes they belong to, and this process closes its copies at once.
// Other control messages (credentials) are not carried: the other side
// asks the kernel whom it talks to. A chunk whose descriptors did not all
// fit ends the connection rather than pass a message without them.
func carry(a, b *net.UnixConn) {
	done := make(chan struct{})
	go func() {
		pump(b, a)
		close(done)
	}()
	pump(a, b)
	<-done
	a.Close()
	b.Close()
}

// relayOOB is the room for control messages in each read: the most
// descriptors one message may carry (the kernel's SCM_MAX_FD, 253):
// unix.CmsgSpace(253 * 4) on 64-bit Linux, 8 bytes more than it on
// 32-bit. A number, not the call, so that no package initialisation
// computes it at every start of aisan (TestRelayOOBRoom checks it); a
// variable, so that a test can shrink it.
var relayOOB = 1032

// pump copies src to dst until src ends or either fails, then shuts dst's
// writing side, so that the peer sees the end too.
func pump(dst, src *net.UnixConn) {
	buf := make([]byte, 64<<10)
	oob := make([]byte, relayOOB)
	for {
		n, oobn, flags, _, err := src.ReadMsgUnix(buf, oob)
		n, oobn = max(n, 0), max(oobn, 0)
		fds, ok := rights(oob[:oobn])
		if !ok || flags&unix.MSG_CTRUNC != 0 {
			closeAll(fds)
			// Both ways: the stream has lost its place.
			src.Close()
			dst.Close()
			return
		}
		if n == 0 {
			// The end (a stream carries no descriptors without bytes).
			closeAll(fds)
			break
		}
		werr := writeAll(dst, buf[:n], fds)
		closeAll(fds)
		if werr != nil {
			src.CloseRead()
			break
		}
		if err != nil {
			break
		}
	}
	dst.CloseWrite()
}

// writeAll writes p with fds attached to its first byte.
func writeAll(dst *net.UnixConn, p []byte, fds []int) error {
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	n, _, err := dst.WriteMsgUnix(p, oob, nil)
	if err != nil {
		return err
	}
	_, err = dst.Write(p[n:])
	return err
}

// rights are the descriptors in a read's control messages; ok is false
// when they do not parse.
func rights(oob []byte) (fds []int, ok bool) {
	if len(oob) == 0 {
		return nil, true
	}
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, false
	}
	for _, m := range msgs {
		if m.Header.Level != unix.SOL_SOCKET || m.Header.Type != unix.SCM_RIGHTS {
			continue
		}
		if len(m.Data)%4 != 0 {
			// Not whole descriptors (ParseUnixRights would index past
			// the end): the kernel never sends this.
			return fds, false
		}
		got, err := unix.ParseUnixRights(&m)
		if err != nil {
			return fds, false
		}
		fds = append(fds, got...)
	}
	return fds, true
}

func closeAll(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}
