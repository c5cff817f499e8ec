package busproxy

import (
	"bytes"
	"errors"
	"fmt"
	"net"

	"golang.org/x/sys/unix"
)

// A D-Bus connection starts with an authentication in text (the D-Bus
// specification's "Authentication Protocol"): the client writes one NUL
// byte, then commands, each a line ending in CRLF; the bus answers every
// command but BEGIN with one line; after BEGIN both sides write
// messages. libdbus and GDBus wait for each answer. sd-bus and zbus
// write every command at once, and xdg-dbus-proxy before 0.1.6 takes the
// client's BEGIN for the end of the handshake on both sides: the bus's
// answers, still on their way, are then read as messages ("Invalid
// message header read") and the client is dropped. The relay therefore
// hands the proxy one command at a time, each once the previous one is
// answered:
//
//	client (sd-bus)            relay                     proxy ─ bus
//	\0AUTH EXTERNAL 31..\r\n ─▶  \0AUTH EXTERNAL 31..\r\n ─▶
//	NEGOTIATE_UNIX_FD\r\n        (held)
//	BEGIN\r\n <Hello>            (held)                 ◀─ OK <guid>\r\n
//	                      ◀─ OK <guid>\r\n
//	                             NEGOTIATE_UNIX_FD\r\n ─▶
//	                                                    ◀─ AGREE_UNIX_FD\r\n
//	                      ◀─ AGREE_UNIX_FD\r\n
//	                             BEGIN\r\n <Hello> ─▶     messages from here
//
// A client that waits for each answer sees no difference.
const (
	saslLineEnd = "\r\n"
	saslBegin   = "BEGIN"
	// saslMaxLine bounds a command or an answer, as dbus-daemon does.
	saslMaxLine = 16 << 10
)

// errSASL is a handshake the relay cannot pass on; the connection ends.
var errSASL = errors.New("bus authentication")

// handshake passes client's authentication to up one command at a time
// and each answer back. It returns what the client wrote past BEGIN, with
// the descriptors read along with it (for the caller to pass on and
// close), and what up wrote past its last answer (nothing, from a bus
// that follows the protocol).
func handshake(client, up *net.UnixConn) (rest []byte, fds []int, upRest []byte, err error) {
	in := &lineReader{c: client}
	out := &lineReader{c: up}
	defer func() {
		closeAll(out.fds)
		if err != nil {
			closeAll(in.fds)
		}
	}()
	if err := in.fill(1); err != nil {
		return nil, nil, nil, err
	}
	if in.buf[0] != 0 {
		return nil, nil, nil, fmt.Errorf("%w: the first byte is %#x, not NUL", errSASL, in.buf[0])
	}
	if _, err := up.Write(in.take(1)); err != nil {
		return nil, nil, nil, err
	}
	for {
		line, err := in.line()
		if err != nil {
			return nil, nil, nil, err
		}
		if bytes.Equal(bytes.TrimSuffix(line, []byte(saslLineEnd)), []byte(saslBegin)) {
			// The messages may follow in the same write: the proxy
			// gets them with BEGIN, as a client that waited would
			// have sent them.
			if len(in.fds) > 0 && len(in.buf) == 0 {
				return nil, nil, nil, fmt.Errorf("%w: descriptors passed with the handshake", errSASL)
			}
			if _, err := up.Write(line); err != nil {
				return nil, nil, nil, err
			}
			return in.buf, in.fds, out.buf, nil
		}
		if _, err := up.Write(line); err != nil {
			return nil, nil, nil, err
		}
		answer, err := out.line()
		if err != nil {
			return nil, nil, nil, err
		}
		if _, err := client.Write(answer); err != nil {
			return nil, nil, nil, err
		}
	}
}

// lineReader reads a connection in the handshake's units, keeping what
// it read past them and the descriptors that came with any of it.
type lineReader struct {
	c          *net.UnixConn
	buf        []byte
	fds        []int
	chunk, oob []byte
}

// fill reads until at least n bytes are buffered.
func (r *lineReader) fill(n int) error {
	if r.chunk == nil {
		r.chunk, r.oob = make([]byte, 4096), make([]byte, relayOOB)
	}
	chunk, oob := r.chunk, r.oob
	for len(r.buf) < n {
		m, oobn, flags, _, err := r.c.ReadMsgUnix(chunk, oob)
		fds, ok := rights(oob[:max(oobn, 0)])
		// Descriptors belong to a message, and only the first message
		// can arrive before the handshake is passed on: a second batch
		// is refused rather than held (a client could otherwise make
		// the relay hold descriptors without end).
		again := len(fds) > 0 && len(r.fds) > 0
		r.fds = append(r.fds, fds...)
		if !ok || flags&unix.MSG_CTRUNC != 0 {
			return fmt.Errorf("%w: descriptors that do not parse", errSASL)
		}
		if again {
			return fmt.Errorf("%w: descriptors passed twice during authentication", errSASL)
		}
		r.buf = append(r.buf, chunk[:max(m, 0)]...)
		if m <= 0 {
			if err == nil {
				err = errors.New("the connection ended during authentication")
			}
			return err
		}
	}
	return nil
}

// take removes and returns the first n buffered bytes.
func (r *lineReader) take(n int) []byte {
	out := bytes.Clone(r.buf[:n])
	r.buf = r.buf[n:]
	return out
}

// line returns the next line, CRLF included.
func (r *lineReader) line() ([]byte, error) {
	for {
		i := bytes.Index(r.buf, []byte(saslLineEnd))
		if i >= 0 && i < saslMaxLine {
			return r.take(i + len(saslLineEnd)), nil
		}
		if i >= 0 || len(r.buf) >= saslMaxLine {
			return nil, fmt.Errorf("%w: a line longer than %d bytes", errSASL, saslMaxLine)
		}
		if err := r.fill(len(r.buf) + 1); err != nil {
			return nil, err
		}
	}
}
