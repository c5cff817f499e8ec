package preflight

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/busproxy"
	"github.com/aisan-dev/aisan/jail/launch"
	"github.com/aisan-dev/aisan/jail/slot"
)

// liveTimeout bounds the whole probe jail. It starts and reports in tens
// of milliseconds; past this, the jail is killed and every live check
// says it was not proven.
const liveTimeout = 10 * time.Second

// The bwrap watch: how often to look for a bwrap that is gone while the
// launcher has not returned, and how long to give the launcher after.
const (
	bwrapWatchInterval = 20 * time.Millisecond
	bwrapGrace         = 300 * time.Millisecond
)

// planResult is the probe jail as the real planner resolves it.
type planResult struct {
	s     *jail.Session
	token string
	err   error
}

// planProbe plans a deny-list jail for "aisan preflight --probe-inside"
// exactly as 'aisan run' would plan one for any command. The host facts
// are gathered here rather than by [jail.GatherHost], which refuses a
// state dir inside the project: that is a finding of its own ("state
// dir"), and must not keep the denials from being proven.
func (e *Env) planProbe(ctx context.Context) planResult {
	return e.plan.get(func() planResult {
		var buf [8]byte
		rand.Read(buf[:])
		token := hex.EncodeToString(buf[:])
		if e.Self == "" {
			return planResult{err: errors.New("cannot find aisan's own binary to run inside the jail")}
		}
		bw := e.bwrapProbe(ctx)
		cwd := e.Cwd
		if cwd == "" {
			cwd = e.Home
		}
		if cwd == "" {
			cwd = "/"
		}
		ah, err := slot.Home()
		if err != nil {
			// Only the slot runtime dir's name derives from it, and only
			// when XDG_RUNTIME_DIR is unset.
			ah = filepath.Join(os.TempDir(), fmt.Sprintf("aisan-preflight-%d", e.UID))
		}
		h := jail.Host{
			Bwrap:      bw.Path,
			Cwd:        cwd,
			Env:        os.Environ(),
			Home:       e.Home,
			AisanHome:  ah,
			RuntimeDir: jail.RuntimeDir(e.Getenv),
		}
		if err := h.GatherFacts(); err != nil {
			return planResult{token: token, err: err}
		}
		req := jail.Request{Kind: jail.KindRun, Args: []string{e.Self, "preflight", "--probe-inside"}}
		s, err := jail.Plan(req, h, "preflight-"+token[:8], jail.Prepared{})
		return planResult{s: s, token: token, err: err}
	})
}

// planError is a probe jail that cannot be planned: a setting the user
// must correct, which 'aisan run' would refuse too.
type planError struct{ err error }

func (e *planError) Error() string { return "planning the probe jail: " + e.err.Error() }
func (e *planError) Unwrap() error { return e.err }

// hostBusResult is the host's session bus as seen from outside, at each
// address an agent could try.
type hostBusResult struct {
	attempts []busAttempt
}

type busAttempt struct {
	addr  string
	err   error    // connecting or listing names failed
	names []string // well-known names on the bus
}

// systemd1 reports whether the user manager is on the bus at a.
func (a busAttempt) systemd1() bool {
	return a.err == nil && slices.Contains(a.names, "org.freedesktop.systemd1")
}

// hostBusProbe lists the names on the host's session bus at
// DBUS_SESSION_BUS_ADDRESS and at the bus socket of every runtime dir,
// which a client falls back to or an agent can name by itself.
func (e *Env) hostBusProbe() hostBusResult {
	return e.hostBus.get(func() hostBusResult {
		var addrs []string
		if a := e.Getenv(busproxy.EnvAddress); a != "" {
			addrs = append(addrs, a)
		}
		for _, rt := range e.runtimeDirs() {
			if p := filepath.Join(rt, "bus"); isSocket(p) {
				a := "unix:path=" + busproxy.EscapeValue(p)
				if !slices.Contains(addrs, a) {
					addrs = append(addrs, a)
				}
			}
		}
		var r hostBusResult
		for _, a := range addrs {
			names, err := listNames(a)
			r.attempts = append(r.attempts, busAttempt{addr: a, err: err, names: names})
		}
		return r
	})
}

func listNames(addr string) ([]string, error) {
	conn, err := connectBus(addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), busTimeout)
	defer cancel()
	var names []string
	if err := conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.ListNames", 0).Store(&names); err != nil {
		return nil, err
	}
	return slices.DeleteFunc(names, func(n string) bool { return strings.HasPrefix(n, ":") }), nil
}

// liveResult is the probe jail's run.
type liveResult struct {
	req  probeRequest
	rep  probeReport
	plan busproxy.Plan
	// markerAlive: the marker still ran after the jail exited, so "not
	// found" meant hidden, not gone.
	markerAlive bool
	err         error
}

// liveProbe runs the probe jail once.
func (e *Env) liveProbe(ctx context.Context) liveResult {
	return e.live.get(func() liveResult {
		ctx, cancel := context.WithTimeout(ctx, liveTimeout)
		defer cancel()
		r, err := e.runLive(ctx)
		r.err = err
		return r
	})
}

func (e *Env) runLive(ctx context.Context) (liveResult, error) {
	var r liveResult
	bw := e.bwrapProbe(ctx)
	if bw.Err != nil {
		return r, errors.New("bwrap is not installed")
	}
	// A bwrap that cannot build namespaces is the user namespaces
	// check's finding; launching the full jail would only fail again.
	if u := e.usernsProbe(ctx); u.err != nil {
		msg := lastLine(u.output)
		if msg == "" {
			msg = u.err.Error()
		}
		return r, fmt.Errorf("bwrap cannot build namespaces here: %s", msg)
	}
	p := e.planProbe(ctx)
	if p.err != nil {
		return r, &planError{p.err}
	}
	s := p.s
	r.plan = s.Spec.Bus

	marker, stopMarker, err := startMarker(p.token)
	if err != nil {
		return r, err
	}
	defer stopMarker()
	r.req = e.request(p.token, marker, s.Spec.Bus)
	reqJSON, err := json.Marshal(r.req)
	if err != nil {
		return r, fmt.Errorf("encoding the probe request: %w", err)
	}

	spec := s.Spec
	spec.Mounts = slices.Clone(spec.Mounts)
	spec.Env = append(slices.Clone(spec.Env), EnvProbe+"="+string(reqJSON))
	breakSpec(&spec, e.Break, e.Getenv(busproxy.EnvAddress))
	compiled, err := jail.Compile(spec, s.Host)
	if err != nil {
		return r, err
	}

	// What a launch prepares in the slot's runtime dir: the file that
	// masks bus sockets, and the proxy's socket.
	defer os.RemoveAll(s.SlotDir)
	if err := launch.MakeSlotDir(s); err != nil {
		return r, err
	}
	if spec.Bus.Mode == busproxy.Filtered {
		proxy, err := busproxy.Start(ctx, spec.Bus)
		if err != nil {
			return r, err
		}
		defer proxy.Close()
	}

	out, errOut, err := runProbe(ctx, bw.Path, e.Self, compiled)
	r.markerAlive = unix.Kill(marker, 0) == nil
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(out, &r.rep); err != nil {
		msg := lastLine(errOut)
		if msg == "" {
			msg = err.Error()
		}
		return r, fmt.Errorf("the probe inside the jail did not report: %s", msg)
	}
	return r, nil
}

// runProbe runs compiled through the real launcher, without a terminal or
// a scope, and returns what the jail printed.
func runProbe(ctx context.Context, bwrap, self string, compiled jail.Compiled) (stdout []byte, stderr string, err error) {
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return nil, "", err
	}
	defer devnull.Close()
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, "", fmt.Errorf("creating the probe's output pipe: %w", err)
	}
	defer outR.Close()
	errR, errW, err := os.Pipe()
	if err != nil {
		outW.Close()
		return nil, "", fmt.Errorf("creating the probe's error pipe: %w", err)
	}
	defer errR.Close()
	var (
		wg             sync.WaitGroup
		outBuf, errBuf bytes.Buffer
	)
	wg.Go(func() { io.Copy(&outBuf, io.LimitReader(outR, 4<<20)) })
	wg.Go(func() { io.Copy(&errBuf, io.LimitReader(errR, 64<<10)) })

	var initPID, bwrapPID atomic.Int64
	l := &launch.Launcher{
		Bwrap: bwrap, Self: launch.InitBinary(self),
		Stdin: devnull, Stdout: outW, Stderr: errW,
		NoPTY: true,
	}
	type ran struct {
		status int
		err    error
	}
	done := make(chan ran, 1)
	go func() {
		// The launch phases with nothing between them but noting
		// bwrap's and the init's PIDs, which a timeout kills.
		st, err := l.Start()
		if err != nil {
			done <- ran{0, err}
			return
		}
		defer st.StopSignals()
		defer st.Close()
		if err := st.Load(compiled, nil, false); err != nil {
			done <- ran{0, err}
			return
		}
		// No scope to wait for: the probe runs once bwrap has set it up.
		st.Admit()
		if err := st.Release(); err != nil {
			done <- ran{0, err}
			return
		}
		bwrapPID.Store(int64(st.PID()))
		if info, ok := st.Started(); ok {
			initPID.Store(int64(info.InitPID))
		}
		out, err := st.Wait()
		done <- ran{out.Status, err}
	}()
	status, runErr := 0, error(nil)
	tick := time.NewTicker(bwrapWatchInterval)
	defer tick.Stop()
	var goneAt time.Time
wait:
	for {
		select {
		case r := <-done:
			status, runErr = r.status, r.err
			break wait
		case <-ctx.Done():
			// The launcher waits for the jail however long it takes;
			// the jail's init is PID 1 of its namespace, and killing it
			// ends everything in it. Killing bwrap ends one that never
			// started the jail.
			for _, pid := range []int64{initPID.Load(), bwrapPID.Load()} {
				if pid > 0 {
					unix.Kill(int(pid), syscall.SIGKILL)
				}
			}
			select {
			case r := <-done:
				status, runErr = r.status, r.err
			case <-time.After(time.Second):
				runErr = fmt.Errorf("the probe jail did not finish within %v", liveTimeout)
			}
			break wait
		case <-tick.C:
			// Stage.Wait can wait forever when bwrap exits before
			// reporting the jail's start (the info pipe's channel is
			// consumed, then received from again). Once bwrap is gone
			// and Wait has not returned, bwrap's own message is the
			// answer; the blocked goroutine ends with the process.
			pid := bwrapPID.Load()
			if pid <= 0 || initPID.Load() > 0 || unix.Kill(int(pid), 0) != unix.ESRCH {
				continue
			}
			if goneAt.IsZero() {
				goneAt = time.Now()
			} else if time.Since(goneAt) > bwrapGrace {
				runErr = &launch.StartError{Status: 1}
				break wait
			}
		}
	}
	outW.Close()
	errW.Close()
	wg.Wait()
	stderr = strings.TrimSpace(errBuf.String())
	var se *launch.StartError
	switch {
	case errors.As(runErr, &se):
		if stderr != "" {
			return nil, stderr, fmt.Errorf("bwrap could not start the probe jail: %s", lastLine(stderr))
		}
		return nil, stderr, runErr
	case runErr != nil:
		return nil, stderr, runErr
	case status != 0:
		if stderr == "" {
			stderr = fmt.Sprintf("exit status %d", status)
		}
		return nil, stderr, fmt.Errorf("the probe jail failed: %s", lastLine(stderr))
	}
	return outBuf.Bytes(), stderr, nil
}

// startMarker starts the process whose PID and name the inside half
// looks for. It is a shell reading a pipe only we hold, so it ends with
// preflight even if preflight is killed: the pipe closes, the read ends.
func startMarker(token string) (pid int, stop func(), err error) {
	r, w, err := os.Pipe()
	if err != nil {
		return 0, nil, fmt.Errorf("creating the marker's pipe: %w", err)
	}
	cmd := exec.Command("/bin/sh", "-c", "read _", markerPrefix+token)
	cmd.Stdin = r
	// Its own process group: a ^C at the terminal must not end it and
	// make the PID check fail for the wrong reason.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return 0, nil, fmt.Errorf("starting the marker process: %w", err)
	}
	r.Close()
	return cmd.Process.Pid, func() {
		w.Close()
		cmd.Process.Kill()
		cmd.Wait()
	}, nil
}

// request gathers, outside, what the inside half must find.
func (e *Env) request(token string, marker int, plan busproxy.Plan) probeRequest {
	req := probeRequest{Token: token, Marker: marker}
	for _, d := range []struct{ label, path string }{{"$HOME", e.Home}, {"/tmp", "/tmp"}} {
		if d.path == "" {
			continue
		}
		if id, ok := statID(d.label, d.path); ok {
			id.Writable = unix.Access(d.path, unix.W_OK) == nil
			req.Dirs = append(req.Dirs, id)
		}
	}
	for _, s := range e.agentSockets() {
		if id, ok := statID(s.label, s.path); ok {
			req.Sockets = append(req.Sockets, id)
		}
	}
	ptys, _ := filepath.Glob("/dev/pts/[0-9]*")
	for _, p := range ptys {
		if id, ok := statID(p, p); ok {
			req.Terminals = append(req.Terminals, id)
		}
	}
	hb := e.hostBusProbe()
	for _, a := range hb.attempts {
		if a.systemd1() {
			req.BusAddrs = append(req.BusAddrs, a.addr)
		}
	}
	if plan.Mode == busproxy.Filtered && len(hb.attempts) > 0 && hb.attempts[0].err == nil {
		for _, n := range hb.attempts[0].names {
			if talks(plan.Talk, n) {
				req.Names = append(req.Names, n)
			}
		}
	}
	for _, rt := range e.runtimeDirs() {
		if p := filepath.Join(rt, "systemd", "private"); isSocket(p) {
			req.Private = append(req.Private, p)
		}
	}
	return req
}

// talks reports whether the allow-list lets the jail talk to name, the
// way xdg-dbus-proxy matches: "a.b.*" is a.b and every name below it.
func talks(talk []string, name string) bool {
	for _, t := range talk {
		if prefix, ok := strings.CutSuffix(t, ".*"); ok {
			if name == prefix || strings.HasPrefix(name, prefix+".") {
				return true
			}
		} else if name == t {
			return true
		}
	}
	return false
}

type labelled struct{ label, path string }

// agentSockets are the sockets agents use that exist outside as sockets:
// ssh-agent (SSH_AUTH_SOCK, wherever it is), gpg-agent, PulseAudio,
// PipeWire and Wayland under $XDG_RUNTIME_DIR.
func (e *Env) agentSockets() []labelled {
	var out []labelled
	add := func(label, p string) {
		if p == "" || !filepath.IsAbs(p) || !isSocket(p) {
			return
		}
		for _, s := range out {
			if s.path == p {
				return
			}
		}
		out = append(out, labelled{label, p})
	}
	add("ssh-agent", e.Getenv("SSH_AUTH_SOCK"))
	rt := e.Getenv("XDG_RUNTIME_DIR")
	if filepath.IsAbs(rt) {
		add("gpg-agent", filepath.Join(rt, "gnupg", "S.gpg-agent"))
	}
	if e.Home != "" {
		add("gpg-agent", filepath.Join(e.Home, ".gnupg", "S.gpg-agent"))
	}
	if filepath.IsAbs(rt) {
		add("pulse", filepath.Join(rt, "pulse", "native"))
		add("pipewire", filepath.Join(rt, "pipewire-0"))
		matches, _ := filepath.Glob(filepath.Join(rt, "wayland-*"))
		for _, m := range matches {
			if !strings.HasSuffix(m, ".lock") {
				add(filepath.Base(m), m)
			}
		}
	}
	return out
}

func statID(label, p string) (fileID, bool) {
	var st unix.Stat_t
	if unix.Stat(p, &st) != nil {
		return fileID{}, false
	}
	return fileID{Label: label, Path: p, Dev: st.Dev, Ino: st.Ino}, true
}

// breakSpec applies the [EnvTestBreak] seam to the probe jail's Spec.
// hostAddress is the host's DBUS_SESSION_BUS_ADDRESS.
func breakSpec(spec *jail.Spec, what, hostAddress string) {
	drop := func(keep func(m jail.Mount) bool) {
		spec.Mounts = slices.DeleteFunc(spec.Mounts, func(m jail.Mount) bool { return !keep(m) })
	}
	switch what {
	case "pid":
		drop(func(m jail.Mount) bool { return m.Kind != jail.Proc })
	case "cgroup":
		drop(func(m jail.Mount) bool { return m.Dst != "/sys/fs/cgroup" })
	case "systemd":
		drop(func(m jail.Mount) bool { return !(m.Kind == jail.Tmpfs && filepath.Base(m.Dst) == "systemd") })
	case "bus":
		hidden := append(slices.Clone(spec.Bus.HostSockets), spec.Bus.JailSocket)
		drop(func(m jail.Mount) bool { return !slices.Contains(hidden, m.Dst) })
		spec.Env = slices.DeleteFunc(spec.Env, func(kv string) bool { return strings.HasPrefix(kv, busproxy.EnvAddress+"=") })
		if hostAddress != "" {
			spec.Env = append(spec.Env, busproxy.EnvAddress+"="+hostAddress)
		}
	}
}
