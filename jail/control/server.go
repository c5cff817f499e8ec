package control

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Handler answers one request. Requests are handled one at a time.
type Handler func(Request) Response

// deadline bounds one connection: a request line in, an answer out.
const deadline = 5 * time.Second

// Listener is a box's control socket.
type Listener struct {
	*net.UnixListener
	path   string
	keep   atomic.Bool
	closed atomic.Bool
}

// Listen makes the control socket at path, mode 0600: bound under a
// temporary name, restricted, then renamed into place, so it is never
// reachable with wider permissions. A stale socket there is replaced;
// any other file is an error.
func Listen(path string) (*Listener, error) {
	if st, err := os.Lstat(path); err == nil && st.Mode().Type() != os.ModeSocket {
		return nil, fmt.Errorf("control socket %s: exists and is not a socket", path)
	}
	tmp := filepath.Join(filepath.Dir(path), fmt.Sprintf(".%s.%d.tmp", filepath.Base(path), os.Getpid()))
	os.Remove(tmp)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: tmp, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("control socket %s: %w", path, err)
	}
	ln.SetUnlinkOnClose(false)
	if err = os.Chmod(tmp, 0o600); err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		ln.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("control socket %s: %w", path, err)
	}
	return &Listener{UnixListener: ln, path: path}, nil
}

// Inherit serves a control socket another process made (f, as
// [Listener.File] gave it; path is its file). f stays the caller's.
func Inherit(f *os.File, path string) (*Listener, error) {
	ln, err := net.FileListener(f)
	if err != nil {
		return nil, fmt.Errorf("control socket %s: %w", path, err)
	}
	ul, ok := ln.(*net.UnixListener)
	if !ok {
		ln.Close()
		return nil, fmt.Errorf("control socket %s: not a Unix socket", path)
	}
	ul.SetUnlinkOnClose(false)
	return &Listener{UnixListener: ul, path: path}, nil
}

// Disown makes closing l leave the socket file in place: another process
// serves it now.
func (l *Listener) Disown() { l.keep.Store(true) }

// Close stops listening and removes the socket file, unless disowned.
func (l *Listener) Close() error {
	err := l.UnixListener.Close()
	if !l.closed.Swap(true) && !l.keep.Load() {
		os.Remove(l.path)
	}
	return err
}

// Server answers requests on a control socket.
type Server struct {
	ln *Listener
	h  Handler
	// Refused, when set, is told of each peer refused (for the egress
	// log: someone inside a box tried to steer it).
	refused func(error)

	mu   sync.Mutex // one request at a time
	wg   sync.WaitGroup
	done atomic.Bool

	pmu    sync.Mutex // Pause and Resume
	paused atomic.Bool
}

// Serve answers requests on ln with h until Close; refused, when not nil,
// is told of every peer refused.
func Serve(ln *Listener, h Handler, refused func(error)) *Server {
	s := &Server{ln: ln, h: h, refused: refused}
	s.wg.Go(s.accept)
	return s
}

func (s *Server) accept() {
	for {
		c, err := s.ln.AcceptUnix()
		if err != nil {
			if s.done.Load() || s.paused.Load() || errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		s.wg.Go(func() { s.serve(c) })
	}
}

func (s *Server) serve(c *net.UnixConn) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(deadline))
	if err := CheckPeer(c); err != nil {
		if s.refused != nil {
			s.refused(err)
		}
		return
	}
	line, err := bufio.NewReaderSize(io.LimitReader(c, MaxLine), MaxLine).ReadSlice('\n')
	var resp Response
	if err != nil {
		resp = Refuse(fmt.Errorf("%w: no request line of at most %d bytes", ErrRequest, MaxLine), "")
	} else if req, err := ParseRequest(line[:len(line)-1]); err != nil {
		resp = Refuse(err, "use the aisan that started the box")
	} else {
		s.mu.Lock()
		resp = s.handle(req)
		s.mu.Unlock()
	}
	c.Write(encode(resp))
}

// handle runs the handler, a panic in it being a refusal.
func (s *Server) handle(req Request) (resp Response) {
	defer func() {
		if p := recover(); p != nil {
			resp = Refuse(fmt.Errorf("the box's host side failed on %s: %v", req.Op, p), "")
		}
	}()
	return s.h(req)
}

// Pause stops taking connections, leaving the socket open, and waits for
// the requests in flight: a connection made meanwhile waits in the
// socket's queue for whoever serves it next (this server once resumed,
// or a keeper serving a duplicate of the socket). A keeper's state is
// read after Pause, so that no change this server answers is left out
// of it.
func (s *Server) Pause() {
	s.pmu.Lock()
	defer s.pmu.Unlock()
	if s.paused.Swap(true) {
		return
	}
	s.ln.SetDeadline(time.Unix(1, 0))
	s.wg.Wait()
}

// Resume takes connections again after Pause.
func (s *Server) Resume() {
	s.pmu.Lock()
	defer s.pmu.Unlock()
	if !s.paused.Load() || s.done.Load() {
		return
	}
	s.ln.SetDeadline(time.Time{})
	// Handing the socket to a keeper (exec's use of its duplicate) left
	// it blocking, which an accept would not return from at Close.
	if rc, err := s.ln.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) { unix.SetNonblock(int(fd), true) })
	}
	s.paused.Store(false)
	s.wg.Go(s.accept)
}

// Close stops serving, waits for the requests in flight, and closes the
// listener (see [Listener.Close]).
func (s *Server) Close() {
	s.done.Store(true)
	s.ln.Close()
	s.wg.Wait()
}
