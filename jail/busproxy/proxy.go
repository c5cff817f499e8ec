package busproxy

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
)

// DefaultReadyTimeout bounds the wait for the proxy's readiness byte when
// the context given to [Start] has no deadline. The proxy is usually ready
// in a few milliseconds.
const DefaultReadyTimeout = 5 * time.Second

// closeGrace is how long Close waits for the proxy to notice the closed
// pipe and exit before it kills it.
const closeGrace = 2 * time.Second

// stderrCap bounds the proxy's stderr kept for error messages.
const stderrCap = 16 << 10

// Proxy is a running xdg-dbus-proxy. Its lifetime is the read end of its
// readiness pipe, held by this process: Close ends it, and so does this
// process's death.
type Proxy struct {
	// ReadyAfter is the time from starting the process to its readiness
	// byte.
	ReadyAfter time.Duration

	cmd     *exec.Cmd
	sync    *os.File // the read end; closing it tells the proxy to exit
	stderr  *tailBuffer
	exited  chan struct{}
	waitErr error // set before exited is closed

	closeOnce sync.Once
	closeErr  error
}

// Start runs the proxy of a Filtered plan, exactly as [Argv] spells it,
// and returns once it listens on plan.ProxySocket, whose directory must
// exist. ctx bounds only that wait (DefaultReadyTimeout when it has no
// deadline); the proxy then runs until Close or until this process dies.
//
// How the lifetime is tied (flatpak's --fd protocol): a pipe whose write
// end the proxy gets as descriptor 3. The proxy writes one byte when its
// socket is ready, then exits when the pipe reports an error or hang-up,
// which happens when the last read end closes. The only read end is in
// this process, close-on-exec, so no other child (bwrap, the agent)
// inherits it and keeps the proxy alive. As a second guard the proxy is
// killed when the thread that forked it dies (Pdeathsig). It runs in its
// own process group, so a Ctrl-C on the terminal does not take the bus
// away from a running jail.
func Start(ctx context.Context, plan Plan) (*Proxy, error) {
	if plan.Mode != Filtered {
		return nil, fmt.Errorf("bug: starting the bus proxy for a %s plan", plan.Mode)
	}
	return start(ctx, Argv(plan), plan.ProxySocket)
}

// start runs the proxy's argv, which listens on sock.
func start(ctx context.Context, argv []string, sock string) (*Proxy, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultReadyTimeout)
		defer cancel()
	}

	// os.Pipe uses pipe2(O_CLOEXEC): neither end leaks into a child
	// unless passed on purpose.
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("creating the bus proxy's readiness pipe: %w", err)
	}
	p := &Proxy{sync: r, stderr: &tailBuffer{}, exited: make(chan struct{})}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.ExtraFiles = []*os.File{w} // descriptor SyncFD in the child
	cmd.Stderr = p.stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	p.cmd = cmd

	// Pdeathsig fires when the forking thread exits, not the process; keep
	// this goroutine on one thread across the fork. A Go thread only exits
	// when a goroutine ends while locked to it, which Start never does.
	runtime.LockOSThread()
	t0 := time.Now()
	err = cmd.Start()
	runtime.UnlockOSThread()
	// Our copy of the write end must go now: while it is open, a proxy that
	// dies before it is ready would leave the read below waiting forever.
	w.Close()
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("starting %s: %w", argv[0], err)
	}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()

	type readResult struct {
		n   int
		err error
	}
	got := make(chan readResult, 1)
	go func() {
		var b [1]byte
		n, err := r.Read(b[:])
		got <- readResult{n, err}
	}()

	select {
	case res := <-got:
		if res.n == 1 {
			p.ReadyAfter = time.Since(t0)
			return p, nil
		}
		// End of file: the proxy closed its end, that is, it exited. Any
		// other read error leaves it in an unknown state: end it.
		cmd.Process.Kill()
		<-p.exited
		r.Close()
		return nil, fmt.Errorf("%s exited before it was ready (%v): %s; check %s and %s, or set %s=1 to mask the bus instead",
			argv[0], p.waitErr, p.stderrText(), EnvAddress, EnvTalk, EnvNoProxy)
	case <-ctx.Done():
		cmd.Process.Kill()
		<-p.exited
		r.Close()
		return nil, fmt.Errorf("waiting for %s to listen on %s: %w; its stderr: %s",
			argv[0], sock, ctx.Err(), p.stderrText())
	}
}

// Pid is the proxy's process ID.
func (p *Proxy) Pid() int { return p.cmd.Process.Pid }

// Exited is closed when the proxy has exited, for whatever reason. A
// launcher can watch it to report a proxy that dies under a running jail.
func (p *Proxy) Exited() <-chan struct{} { return p.exited }

// Stderr returns what the proxy wrote to its stderr so far (the last 16 KiB).
func (p *Proxy) Stderr() string { return p.stderr.String() }

// Close ends the proxy: it closes the pipe's read end, which makes the
// proxy exit by itself, and waits. A proxy still there after a short grace
// is killed. The error says when the proxy had to be killed or had exited
// with a failure on its own; it is for the log, since the jail is over
// either way. Close may be called more than once.
func (p *Proxy) Close() error {
	p.closeOnce.Do(func() {
		select {
		case <-p.exited:
			// It died under the jail; the reason is more useful than nothing.
			p.sync.Close()
			if p.waitErr != nil {
				p.closeErr = fmt.Errorf("bus proxy (pid %d) had exited on its own (%v): %s", p.Pid(), p.waitErr, p.stderrText())
			}
			return
		default:
		}
		p.sync.Close()
		timer := time.NewTimer(closeGrace)
		defer timer.Stop()
		select {
		case <-p.exited:
			if p.waitErr != nil {
				p.closeErr = fmt.Errorf("bus proxy (pid %d) exited with %v: %s", p.Pid(), p.waitErr, p.stderrText())
			}
		case <-timer.C:
			p.cmd.Process.Kill()
			<-p.exited
			p.closeErr = fmt.Errorf("bus proxy (pid %d) was still running %v after its pipe closed; killed it", p.Pid(), closeGrace)
		}
	})
	return p.closeErr
}

func (p *Proxy) stderrText() string {
	s := strings.TrimSpace(p.stderr.String())
	if s == "" {
		return "(no output)"
	}
	return fmt.Sprintf("%q", s)
}

// tailBuffer keeps the last stderrCap bytes written to it; os/exec copies
// the child's stderr into it from its own goroutine.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

var _ io.Writer = (*tailBuffer)(nil)

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if over := len(t.buf) - stderrCap; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(b), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
