package launch

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/slot"
	"github.com/aisan-dev/aisan/jail/transcript"
	"golang.org/x/sys/unix"
)

// KeepCommand is the hidden subcommand that runs [RunKeeper].
const KeepCommand = "__keep"

// Handoff is a jail whose agent has exited while processes it left (a
// dev server, `setsid nohup … &`) keep the jail alive: [Stage.Wait]
// returns it as [Outcome.Left].
type Handoff struct {
	// Status is the agent's exit status (128+N after signal N).
	Status int
	// InitFD is a pidfd of the jail's init, which exits once the jail's
	// last process is gone. The callee may not keep it: it dups what it
	// needs.
	InitFD int
	// Output are the read ends of the jail's output (its pty master, or
	// the pipes of stdout and stderr) that the wrapper copies to the
	// transcript. Whoever keeps the jail must go on reading them, or what
	// is left of the jail blocks on its next write.
	Output []*os.File
}

// drainWindow bounds how long, at a hand-off, the wrapper goes on copying
// the jail's output to the user: what the agent printed last is in the
// pipes or the pty already, and must reach the user, not the transcript
// alone.
const drainWindow = 30 * time.Millisecond

// keepReadyTimeout bounds the wait for a keeper to take the slot.
const keepReadyTimeout = 5 * time.Second

// keepDrainTimeout bounds the keeper's last read of the output once the
// jail has ended (bwrap closes its copies just after).
const keepDrainTimeout = 2 * time.Second

// handoff is what a keeper needs of the jail whose agent exited with
// status, processes remaining.
func (st *Stage) handoff(status int) *Handoff {
	var outs []*os.File
	for _, f := range []*os.File{st.ptmx, st.outR, st.errR} {
		if f != nil {
			outs = append(outs, f)
		}
	}
	return &Handoff{Status: status, InitFD: st.pidfd, Output: outs}
}

// HandOff gives the jail's output to the keeper that took h (see
// [Outcome.Left]): the wrapper's copies stop after the drain window, then
// release lets the keeper read. The user's terminal is left as a shell
// expects it.
func (st *Stage) HandOff(h *Handoff, release func()) {
	// Our pipes are pollable, and a read deadline stops their copies
	// once what is in them is read. The pty master is not (creack/pty
	// puts it in blocking mode, where a deadline is accepted and never
	// fires), so its copy goes on until we exit, a moment after the
	// keeper starts: what the jail prints in that moment reaches the
	// terminal or the keeper, and the transcript either way.
	stoppable := st.ptmx == nil
	pipes := slices.DeleteFunc([]*os.File{st.outR, st.errR}, func(f *os.File) bool { return f == nil })
	if stoppable {
		// The agent's last writes are complete in the pipes: once our
		// copies have taken all that is queued, they can stop at once.
		for end := time.Now().Add(drainWindow); time.Now().Before(end) && queued(pipes); {
			time.Sleep(time.Millisecond)
		}
	}
	deadline := time.Now()
	if !stoppable {
		deadline = deadline.Add(drainWindow)
	}
	for _, f := range pipes {
		if f.SetReadDeadline(deadline) != nil {
			stoppable = false
		}
	}
	if stoppable {
		st.copies.Wait()
	} else {
		time.Sleep(drainWindow)
	}
	// From here on the keeper reads the output.
	release()
	trace("handed to the keeper")
	if st.usePTY && h.Status > 128 {
		st.l.Stdout.Write([]byte(terminalReset))
	}
}

// keepSpec is what a wrapper tells its keeper, through an in-memory file
// (it names the slot, which is project text, so not in argv).
type keepSpec struct {
	Home     string    `json:"home"`
	Slot     string    `json:"slot"`
	Start    time.Time `json:"start"`
	Status   int       `json:"status"`
	AgentEnd time.Time `json:"agent_end"`
	SlotDir  string    `json:"slot_dir"`
	Outputs  int       `json:"outputs"`
	// Mode, Kept and State are the mode's hand-over ([Kept]): the mode
	// that resumes it, how many descriptors it passed, and its state.
	Mode  string `json:"mode,omitempty"`
	Kept  int    `json:"kept"`
	State []byte `json:"state,omitempty"`
}

// startKeeper starts `aisan __keep` for the slot sl, handing it the
// slot's lock, the jail's init, its output and what the jail's host
// services handed over (k: listening sockets, the bus relay's
// lifeline). It returns once the keeper has taken the slot over (its
// record names the keeper, and it serves the jail's host side), with the
// function that lets it start reading the output. self is aisan's own
// binary, which holds the keeper (the lean aisan-init the jail runs from
// has none).
func startKeeper(self string, sl *slot.Slot, home, slotDir string, h Handoff, k Kept) (func(), error) {
	lock := sl.LockFile()
	if lock == nil {
		return nil, errors.New("the slot is not held")
	}
	rec := sl.Record()
	spec, err := json.Marshal(keepSpec{
		Home: home, Slot: sl.Name(), Start: rec.Start, Status: h.Status, AgentEnd: time.Now(),
		SlotDir: slotDir, Outputs: len(h.Output), Mode: k.Mode, Kept: len(k.Files), State: k.State,
	})
	if err != nil {
		return nil, err
	}
	specFile, err := memfile("keep", spec)
	if err != nil {
		return nil, err
	}
	defer specFile.Close()
	initFD, err := unix.FcntlInt(uintptr(h.InitFD), unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return nil, fmt.Errorf("duplicating the init's pidfd: %w", err)
	}
	initFile := os.NewFile(uintptr(initFD), "init")
	defer initFile.Close()
	readyR, readyW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer readyR.Close()
	goR, goW, err := os.Pipe()
	if err != nil {
		readyW.Close()
		return nil, err
	}
	cmd := exec.Command(self, KeepCommand)
	if cmd.ExtraFiles, err = keepFiles(specFile, readyW, goR, lock, initFile, h.Output, k.Files); err != nil {
		readyW.Close()
		goR.Close()
		goW.Close()
		return nil, err
	}
	cmd.Env = k.Env
	if cmd.Env == nil {
		cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
	}
	// A session of its own: the terminal's hang-up, or its ^C for the
	// next command, is not for it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	readyW.Close()
	goR.Close()
	if err != nil {
		goW.Close()
		return nil, fmt.Errorf("starting the keeper: %w", err)
	}
	got := make(chan bool, 1)
	go func() {
		var b [1]byte
		n, _ := readyR.Read(b[:])
		got <- n == 1 && b[0] == keepMsgTaken
	}()
	ok := false
	select {
	case ok = <-got:
	case <-time.After(keepReadyTimeout):
	}
	if !ok {
		cmd.Process.Kill()
		cmd.Wait()
		goW.Close()
		return nil, errors.New("the keeper did not take the slot")
	}
	return func() { goW.Close() }, nil
}

// RunKeeper is `aisan __keep`: it holds a slot whose agent has exited
// while processes remain in its jail. It inherits from the wrapper the
// slot's lock, a pidfd of the jail's init, the jail's output and what the
// jail's host services handed over (keepfds.go). First it resumes those
// services through the mode that kept them (one of modes, by name), so a
// keeper that cannot leaves the wrapper serving and waiting as before;
// then it takes the record over ([slot.Registry.Adopt], so the slot shows
// as background and is neither orphaned nor free), tells the wrapper,
// which returns the agent's status to the shell, and copies the output to
// the transcript until the jail's last process has ended. Then it stops
// the services, records the end (with the agent's status), removes the
// slot's runtime directory and releases the slot.
func RunKeeper(modes ...Mode) int {
	// Nothing of a terminal's reaches it; a write to a closed pipe is an
	// error to return, not a death.
	signal.Ignore(syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTSTP,
		syscall.SIGTTIN, syscall.SIGTTOU, syscall.SIGPIPE)
	f := os.NewFile(keepFDSpec, "spec")
	if f == nil {
		return 125
	}
	data, err := io.ReadAll(io.LimitReader(f, 1<<20))
	f.Close()
	var sp keepSpec
	if err != nil || json.Unmarshal(data, &sp) != nil || sp.Outputs < 0 || sp.Kept < 0 {
		return 125
	}
	i := slices.IndexFunc(modes, func(m Mode) bool { return m.Name() == sp.Mode })
	if i < 0 {
		return 125
	}
	// Nobody is at a terminal to be told: the transcript, which `aisan
	// logs` shows, says what the services have to say.
	var out io.Writer = io.Discard
	say := func(level jail.Level, text string) {
		if level != jail.Plain {
			text = string(level) + ": " + text
		}
		fmt.Fprintf(out, "\r\naisan: %s\r\n", text)
	}
	k := Kept{Mode: sp.Mode, State: sp.State}
	for i := range sp.Kept {
		k.Files = append(k.Files, os.NewFile(uintptr(keepFDKept(sp.Outputs, i)), "kept"))
	}
	// Served before the slot is taken: if that fails, the wrapper is
	// still there to go on serving.
	svc, err := modes[i].Resume(k, say)
	for _, f := range k.Files {
		f.Close()
	}
	if err != nil {
		return 1
	}
	reg, err := slot.Open(sp.Home)
	if err != nil {
		svc.Stop()
		return 1
	}
	sl, err := reg.Adopt(sp.Slot, os.NewFile(keepFDLock, "lock"), sp.Start, sp.Status, sp.AgentEnd)
	if err != nil {
		svc.Stop()
		return 1
	}
	ready := os.NewFile(keepFDReady, "ready")
	ready.Write([]byte{keepMsgTaken})
	ready.Close()
	// The wrapper closes its end once it has stopped reading the output
	// (or dies, which closes it too).
	goR := os.NewFile(keepFDGo, "go")
	io.Copy(io.Discard, goR)
	goR.Close()

	tr, err := transcript.Resume(sl.TranscriptPath())
	if err == nil {
		out = tr
	}
	var copies sync.WaitGroup
	for i := range sp.Outputs {
		r := os.NewFile(uintptr(keepFDOutput+i), "output")
		copies.Go(func() {
			// A pty master reads EIO once the jail's last holder of its
			// terminal is gone; a pipe reads end of file.
			io.Copy(out, r)
			r.Close()
		})
	}

	waitPidfd(keepFDInit)
	drained := make(chan struct{})
	go func() { copies.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(keepDrainTimeout):
	}
	svc.Stop()
	if tr != nil {
		tr.Close()
	}
	sl.Finish(sp.Status)
	if sp.SlotDir != "" {
		os.RemoveAll(sp.SlotDir)
	}
	sl.Release()
	return 0
}

// waitPidfd blocks until the process behind pidfd fd has exited.
func waitPidfd(fd int) {
	for {
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(pfd, -1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n > 0 {
			return
		}
	}
}

// noteKept tells a user at a terminal that the jail lives on. Scripts see
// nothing: unjailed, the agent's leftovers would not be announced either.
func noteKept(say jail.Say, w *os.File, name string) {
	if isTerminal(w) {
		say(jail.Plain, fmt.Sprintf("processes left by the agent keep running in slot %s; 'aisan kill %s' ends them", name, name))
	}
}

// queued reports whether any of the pipes holds bytes not read yet
// (TIOCINQ is FIONREAD).
func queued(pipes []*os.File) bool {
	for _, f := range pipes {
		sc, err := f.SyscallConn()
		if err != nil {
			return false
		}
		n := 0
		sc.Control(func(fd uintptr) { n, _ = unix.IoctlGetInt(int(fd), unix.TIOCINQ) })
		if n > 0 {
			return true
		}
	}
	return false
}
