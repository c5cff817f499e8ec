package busproxy

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A filtered bus is started on demand. Most launches never touch the
// bus (`claude --version`, a build, a test run), and xdg-dbus-proxy takes
// several milliseconds of CPU to start, which every launch used to wait
// for: bwrap binds the jail's bus socket, so the socket had to exist
// first. Now the wrapper makes that socket itself, a listener that costs
// nothing, and the proxy starts only when something in the jail connects:
//
//	jail client ──connect──▶ SlotDir/bus    the gate: a listener of the
//	                                        wrapper's, bound by bwrap
//	                                        where the jail finds the bus
//	wrapper (or its keeper), on the first connection waiting:
//	   ──starts──▶ aisan __bus FILTER -- xdg-dbus-proxy … FILTER …
//	                 3 gate      the listener (the wrapper closes its own)
//	                 4 lifeline  read end of a pipe; the wrapper, then the
//	                             keeper, holds the only write end
//	aisan __bus: starts the proxy on SlotDir/bus-filter, then accepts on 3
//	   and carries each connection to the proxy: the authentication one
//	   command at a time (sasl.go), then bytes and passed descriptors
//	   both ways (relay.go); exits when 4 reads end of file,
//	   and the proxy with it (its readiness pipe, its parent-death signal)
//
// The relay is a process of its own rather than goroutines of the
// wrapper's so that a keeper takes over a bus in use by inheriting one
// descriptor, the lifeline, with nothing in flight to hand over.

// RelayCommand is aisan's hidden subcommand that runs the relay.
const RelayCommand = "__bus"

// The relay's descriptors (see the diagram above).
const (
	relayFDGate     = 3
	relayFDLifeline = 4
)

// filterName is the proxy's own socket, beside the gate.
const filterName = "bus-filter"

// Behind is the plan of the proxy that serves the gate: the same, but
// listening on the filter socket beside p.ProxySocket, which nothing but
// the relay connects to.
func (p Plan) Behind() Plan {
	if p.Mode != Filtered {
		return p
	}
	b := p
	b.ProxySocket = filterSocket(p.ProxySocket)
	return b
}

func filterSocket(gate string) string { return filepath.Join(filepath.Dir(gate), filterName) }

// Gate is a filtered bus's socket on the host, with the relay and proxy
// behind it started on the first connection.
type Gate struct {
	ln   *os.File // the listening socket, non-blocking: the poller waits on it
	argv []string // the proxy's, listening on filter
	// filter is where the proxy listens.
	filter string

	mu       sync.Mutex
	state    gateState
	lifeline *os.File      // the write end, once relaying
	watched  chan struct{} // closed when the watch has ended
}

type gateState int

const (
	gateWaiting  gateState = iota // nothing connected yet
	gateRelaying                  // the relay runs
	gateClosed
)

// OpenGate makes the gate's listening socket at plan.ProxySocket, whose
// directory must exist and hold nothing by that name. Nothing answers a
// connection until [Gate.Watch].
func OpenGate(plan Plan) (*Gate, error) {
	if plan.Mode != Filtered {
		return nil, fmt.Errorf("bug: a bus gate for a %s plan", plan.Mode)
	}
	ln, err := listen(plan.ProxySocket)
	if err != nil {
		return nil, fmt.Errorf("making the jail's session bus socket: %w", err)
	}
	behind := plan.Behind()
	return &Gate{ln: ln, argv: Argv(behind), filter: behind.ProxySocket}, nil
}

// relayBinary is what the relay runs from: this very binary (both of
// aisan's builds have RelayCommand), even if an upgrade has replaced the
// file at its path since it started.
const relayBinary = "/proc/self/exe"

// Watch waits in the background for the first connection, then starts
// the relay.
func (g *Gate) Watch() {
	g.watched = make(chan struct{})
	go g.watch()
}

func (g *Gate) watch() {
	defer close(g.watched)
	// An *os.File, not a net.Listener: a listener's raw connection
	// cannot wait, a non-blocking file's can.
	rc, err := g.ln.SyscallConn()
	if err != nil {
		return
	}
	// Wait for a pending connection without taking it: the relay
	// accepts it. The runtime's poller wakes us; Close's deadline, or
	// the listener closed when Keep starts the relay, ends the wait.
	err = rc.Read(func(fd uintptr) bool {
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 0)
		return err == nil && n > 0
	})
	if err != nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.state != gateWaiting {
		return
	}
	if err := g.startRelay(); err != nil {
		os.Stderr.WriteString("aisan: warning: the jail's session bus: " + err.Error() + "\n")
		g.ln.Close()
		g.state = gateClosed
		return
	}
	g.state = gateRelaying
}

// startRelay starts the relay with the listener and the lifeline's read
// end, and gives up this process's listener: from now on a relay that
// dies leaves connections refused, not queued with nobody to take them.
func (g *Gate) startRelay() error {
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("creating the bus relay's lifeline: %w", err)
	}
	defer r.Close()
	cmd := exec.Command(relayBinary, append([]string{RelayCommand, g.filter, "--"}, g.argv...)...)
	cmd.ExtraFiles = []*os.File{g.ln, r} // relayFDGate, relayFDLifeline
	// What it has to say reaches our stderr through a pipe of ours: it
	// may outlive us under a keeper, and must not hold the caller's
	// stderr open then (`out=$(aisan run …)` would never return).
	pr, pw, err := os.Pipe()
	if err != nil {
		w.Close()
		return fmt.Errorf("creating the bus relay's stderr: %w", err)
	}
	defer pw.Close()
	cmd.Stderr = pw
	// Its own process group: a Ctrl-C on the terminal is for the agent.
	// No parent-death signal: a keeper may hold the lifeline after us.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		pr.Close()
		return fmt.Errorf("starting the bus relay: %w", err)
	}
	go func() {
		io.Copy(os.Stderr, pr)
		pr.Close()
	}()
	go cmd.Wait()
	g.lifeline = w
	g.ln.Close()
	return nil
}

// Keep readies the gate for a keeper: the relay's lifeline, which the
// keeper holds from then on, so that the relay and its proxy serve the
// jail until the keeper ends. A relay not yet started starts now: a
// keeper serves a jail with its agent gone, and its only work on the bus
// is to keep it.
func (g *Gate) Keep() (*os.File, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.state == gateWaiting {
		if err := g.startRelay(); err != nil {
			return nil, fmt.Errorf("starting the session bus for the keeper: %w", err)
		}
		// The watch ends with the listener startRelay closed.
		g.state = gateRelaying
	}
	if g.state != gateRelaying {
		return nil, errors.New("the jail's session bus relay is not running")
	}
	f, err := dupCloexec(g.lifeline)
	if err != nil {
		return nil, fmt.Errorf("handing the session bus over: %w", err)
	}
	return f, nil
}

// Lifeline is a keeper's gate: it holds its own copy of the lifeline
// [Gate.Keep] handed over until [Gate.Close].
func Lifeline(f *os.File) (*Gate, error) {
	d, err := dupCloexec(f)
	if err != nil {
		return nil, fmt.Errorf("taking over the session bus's lifeline: %w", err)
	}
	return &Gate{state: gateRelaying, lifeline: d}, nil
}

// Close ends the gate: no relay starts any more, and a running one (with
// its proxy) exits once no keeper holds its lifeline either. Close may be
// called more than once.
func (g *Gate) Close() {
	g.mu.Lock()
	prev := g.state
	g.state = gateClosed
	if g.ln != nil && prev == gateWaiting {
		g.ln.SetReadDeadline(time.Now())
	}
	if g.lifeline != nil {
		g.lifeline.Close()
		g.lifeline = nil
	}
	g.mu.Unlock()
	if g.watched != nil {
		<-g.watched
	}
	if g.ln != nil {
		g.ln.Close()
	}
}

// listen makes a listening Unix socket at path, owner only, as a
// non-blocking file.
func listen(path string) (*os.File, error) {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		unix.Close(fd)
		return nil, err
	}
	// The directory is the slot's, private already; the jail runs as
	// the owner.
	if err := unix.Chmod(path, 0o600); err != nil {
		unix.Close(fd)
		return nil, err
	}
	if err := unix.Listen(fd, unix.SOMAXCONN); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), path), nil
}

// dupCloexec is a close-on-exec duplicate of f.
func dupCloexec(f *os.File) (*os.File, error) {
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), f.Name()), nil
}
