package slot

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// KillOrphan on a slot whose wrapper lives is refused as busy, and
// nothing is killed: the supervisor's reaper can be handed a name that a
// new launch has taken since it was listed as an orphan.
func TestKillOrphanSparesRunningSlot(t *testing.T) {
	needJail(t)
	home, wt := newTree(t)
	reg := openReg(t, home)
	killerCalls := 0
	reg.Killer = func(rec Record, sig syscall.Signal) error {
		killerCalls++
		return KillPidNS(rec, sig)
	}
	wrapper, name, _ := startHelper(t, "wrapper", home, wt)
	e, err := reg.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	if e.State != Running || e.InitPID == 0 {
		t.Fatalf("slot %s: %+v, want running with a jail", name, e)
	}
	err = reg.KillOrphan(name, syscall.SIGKILL)
	if !errors.Is(err, ErrBusy) {
		t.Errorf("KillOrphan on a running slot = %v, want an error wrapping ErrBusy", err)
	}
	if killerCalls != 0 {
		t.Errorf("the Killer was called %d times for a running slot", killerCalls)
	}
	if !running(e.InitPID) || !running(wrapper.Process.Pid) {
		t.Fatalf("KillOrphan killed a running slot (init alive %v, wrapper alive %v)", running(e.InitPID), running(wrapper.Process.Pid))
	}
	if after := listMap(t, reg)[name]; after.State != Running || !after.End.IsZero() {
		t.Errorf("after KillOrphan: %+v, want still running with no end", after)
	}
}

// KillOrphan reaps a real orphan under its lock and records the end; an
// unknown name is an UnknownSlotError and leaves no lock file behind.
func TestKillOrphan(t *testing.T) {
	home, wt := newTree(t)
	reg := openReg(t, home)
	jail := needJail(t)
	s, err := reg.Acquire(wt, "claude")
	if err != nil {
		t.Fatal(err)
	}
	name := s.Name()
	if err := recordJail(s, jail.Process.Pid); err != nil {
		t.Fatal(err)
	}
	leaveOrphaned(t, s)
	if err := reg.KillOrphan(name, syscall.SIGKILL); err != nil {
		t.Fatalf("KillOrphan(%s) = %v", name, err)
	}
	jail.Wait()
	e := listMap(t, reg)[name]
	if e.State != Exited || e.ExitStatus == nil || *e.ExitStatus != 137 || e.End.IsZero() {
		t.Errorf("reaped orphan: %+v, want exited with status 137 and an end", e)
	}
	var nr *NotRunningError
	if err := reg.KillOrphan(name, syscall.SIGKILL); !errors.As(err, &nr) {
		t.Errorf("second KillOrphan = %v, want NotRunningError", err)
	}
	var unknown *UnknownSlotError
	if err := reg.KillOrphan("nope-12345678-claude", syscall.SIGKILL); !errors.As(err, &unknown) {
		t.Errorf("KillOrphan of an unknown name = %v, want UnknownSlotError", err)
	}
	if p, _ := reg.lockPath("nope-12345678-claude"); p == "" || fileExists(p) || fileExists(filepath.Join(home, "slots", "nope-12345678-claude.lock")) {
		t.Error("KillOrphan of an unknown name created a lock file")
	}
}

// A failed launch puts the previous launch's record back, byte for byte:
// the slot does not vanish from the list, and its last run stays as it
// ended. Only the failed launch's transcript goes.
func TestAbandonRestoresPreviousRecord(t *testing.T) {
	home, wt := newTree(t)
	reg := openReg(t, home)
	first, err := reg.Acquire(wt, "run")
	if err != nil {
		t.Fatal(err)
	}
	name := first.Name()
	writeTranscript(t, first.TranscriptPath(), "hello\n")
	if err := first.Finish(0); err != nil {
		t.Fatal(err)
	}
	if err := first.Release(); err != nil {
		t.Fatal(err)
	}
	recPath := filepath.Join(home, "slots", name+".json")
	before, err := os.ReadFile(recPath)
	if err != nil {
		t.Fatal(err)
	}

	second, err := reg.Acquire(wt, "run")
	if err != nil {
		t.Fatal(err)
	}
	if second.Name() != name {
		t.Fatalf("the second launch got %q, want the exited slot's name %q", second.Name(), name)
	}
	if second.TranscriptPath() == first.TranscriptPath() {
		t.Fatalf("both launches use transcript %s", first.TranscriptPath())
	}
	// What a service launch does before it fails.
	if err := second.Update(func(r *Record) { r.Unit = "aisan-svc-x.service" }); err != nil {
		t.Fatal(err)
	}
	writeTranscript(t, second.TranscriptPath(), "bwrap: oops\n")
	if err := second.Abandon(); err != nil {
		t.Fatal(err)
	}

	after, err := os.ReadFile(recPath)
	if err != nil {
		t.Fatalf("the slot's record is gone after a failed launch: %v", err)
	}
	if !bytes.Equal(after, before) {
		t.Errorf("record after Abandon:\n%s\nwant the first launch's, unchanged:\n%s", after, before)
	}
	if _, err := os.Stat(second.TranscriptPath()); err == nil {
		t.Error("the abandoned launch's transcript is still there")
	}
	if data, err := os.ReadFile(first.TranscriptPath()); err != nil || string(data) != "hello\n" {
		t.Errorf("the first launch's transcript: %q, %v; want it kept", data, err)
	}
	e, ok := listMap(t, reg)[name]
	if !ok || e.State != Exited || e.ExitStatus == nil || *e.ExitStatus != 0 || e.Transcript != first.TranscriptPath() {
		t.Errorf("list after Abandon: %+v (present %v), want the first launch, exited 0", e, ok)
	}
	// The name is free again, and its lock works.
	third, err := reg.Acquire(wt, "run")
	if err != nil {
		t.Fatal(err)
	}
	defer third.Release()
	if third.Name() != name {
		t.Errorf("after Abandon the next launch got %q, want %q", third.Name(), name)
	}
	if held, err := reg.lockHeld(name); err != nil || !held {
		t.Errorf("the third launch's lock is not visible: held %v, %v", held, err)
	}
}

func writeTranscript(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// PinInit holds a live jail's init: InUnit reads its cgroup, Signal
// reaches it; once it has died, both say ErrJailGone and a new PinInit
// refuses.
func TestPinInit(t *testing.T) {
	jail := needJail(t)
	pid := jail.Process.Pid
	rec := Record{Slot: "x", InitPID: pid}
	if _, err := PinInit(rec); err == nil || errors.Is(err, ErrJailGone) {
		t.Errorf("PinInit of a record with no namespace = %v, want the 'no jail yet' error", err)
	}
	ino, err := nsInode(strconv.Itoa(pid))
	if err != nil {
		t.Fatal(err)
	}
	rec.PidNSInode = ino
	if _, err := PinInit(Record{Slot: "x", InitPID: pid, PidNSInode: ino + 1}); !errors.Is(err, ErrJailGone) {
		t.Errorf("PinInit with the wrong namespace = %v, want ErrJailGone", err)
	}
	in, err := PinInit(rec)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if in.PID() != pid {
		t.Errorf("PID() = %d, want %d", in.PID(), pid)
	}
	// The stand-in jail is in the test's own cgroup.
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	var own string
	for line := range strings.Lines(string(data)) {
		if p, ok := strings.CutPrefix(strings.TrimSpace(line), "0::"); ok {
			own = p
		}
	}
	if base := filepath.Base(own); own != "" && own != "/" {
		if ok, err := in.InUnit(base); err != nil || !ok {
			t.Errorf("InUnit(%q) = %v, %v; want true (the init is in %s)", base, ok, err, own)
		}
		if ok, err := in.InUnit(base[1:]); err != nil || ok {
			t.Errorf("InUnit(%q) = %v, %v; want false: only a whole last component matches", base[1:], ok, err)
		}
	} else {
		t.Logf("the test runs in the cgroup root (%q); the positive InUnit case is not checked", own)
	}
	if ok, err := in.InUnit("aisan-nope.scope"); err != nil || ok {
		t.Errorf("InUnit(aisan-nope.scope) = %v, %v; want false", ok, err)
	}
	if err := in.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	jail.Wait()
	if ok, err := in.InUnit("aisan-nope.scope"); !errors.Is(err, ErrJailGone) || ok {
		t.Errorf("InUnit after the init died = %v, %v; want ErrJailGone", ok, err)
	}
	if err := in.Signal(syscall.SIGKILL); !errors.Is(err, ErrJailGone) {
		t.Errorf("Signal after the init died = %v, want ErrJailGone", err)
	}
	if _, err := PinInit(rec); !errors.Is(err, ErrJailGone) {
		t.Errorf("PinInit after the init died = %v, want ErrJailGone", err)
	}
}

// The proof of a record with a start time is that start time: the
// recorded one pins the init, any other is refused as a record not to be
// trusted (nothing signalled), whatever the init's environment says.
func TestPinInitProvesStartTime(t *testing.T) {
	jail := needJail(t)
	pid := jail.Process.Pid
	ino, err := nsInode(strconv.Itoa(pid))
	if err != nil {
		t.Fatal(err)
	}
	start := InitStart(pid)
	if start == 0 {
		t.Fatalf("InitStart(%d) = 0 for a live process", pid)
	}
	rec := Record{Slot: "x", InitPID: pid, PidNSInode: ino, InitStart: start}
	in, err := PinInit(rec)
	if err != nil {
		t.Fatalf("PinInit with the recorded start time: %v", err)
	}
	in.Close()
	testOnlyAcceptUnnamedInit = false
	t.Cleanup(func() { testOnlyAcceptUnnamedInit = true })
	if in, err := PinInit(rec); err != nil {
		t.Errorf("PinInit with the start time, of an init with no AISAN_JAIL: %v; the start time is the proof", err)
	} else {
		in.Close()
	}
	rec.InitStart = start + 1
	_, err = PinInit(rec)
	var pe *ProofError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "not at the recorded") {
		t.Errorf("PinInit with another start time = %v, want a ProofError naming the start time", err)
	}
	// A record without one falls back to the environment, which this
	// stand-in does not name.
	rec.InitStart = 0
	if _, err := PinInit(rec); !errors.As(err, &pe) {
		t.Errorf("PinInit of a record without a start time, init without AISAN_JAIL = %v, want a ProofError", err)
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Errorf("the stand-in jail is gone after refused proofs: %v", err)
	}
}

// leaveOrphaned makes s look as a killed wrapper leaves it: its lock free
// and its recorded holder gone (this test process stays alive, so its
// start time is replaced by one no live process has).
func leaveOrphaned(t *testing.T, s *Slot) {
	t.Helper()
	if err := s.Update(func(r *Record) { r.WrapperStart = 1 }); err != nil {
		t.Fatal(err)
	}
	s.Release()
}

// A slot whose lock file is deleted (or replaced) while its holder lives
// is still running: neither listing, nor KillOrphan, nor a new launch
// takes it for an orphan.
func TestMissingLockWithLiveHolder(t *testing.T) {
	home, wt := newTree(t)
	reg := openReg(t, home)
	jail := needJail(t)
	s, err := reg.Acquire(wt, "claude")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	name := s.Name()
	if err := recordJail(s, jail.Process.Pid); err != nil {
		t.Fatal(err)
	}
	locks, _ := reg.lockDir()
	if err := os.Remove(filepath.Join(locks, name+".lock")); err != nil {
		t.Fatal(err)
	}
	if st := listMap(t, reg)[name].State; st != Running {
		t.Fatalf("with its lock file gone and its holder alive the slot is %s, want running", st)
	}
	if err := reg.KillOrphan(name, syscall.SIGKILL); !errors.Is(err, ErrBusy) {
		t.Fatalf("KillOrphan = %v, want ErrBusy", err)
	}
	if killed, _ := reg.KillOrphans(syscall.SIGKILL); len(killed) != 0 {
		t.Fatalf("KillOrphans killed %v", killed)
	}
	s2, err := reg.Acquire(wt, "claude")
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Release()
	if s2.Name() == name {
		t.Fatalf("a new launch took the live slot's name %s", name)
	}
	if !running(jail.Process.Pid) {
		t.Fatal("the jail was killed")
	}
}

// Records that are not regular files of ours are never read: a FIFO
// does not hang listing, a symlink is not followed, a huge file is
// skipped.
func TestRegistryRefusesOddFiles(t *testing.T) {
	home, wt := newTree(t)
	reg := openReg(t, home)
	s, err := reg.Acquire(wt, "claude")
	if err != nil {
		t.Fatal(err)
	}
	s.Finish(0)
	s.Release()
	dir := filepath.Join(home, "slots")
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo-12345678-run.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(home, "elsewhere.json")
	os.WriteFile(target, []byte(`{"slot":"link-12345678-run"}`), 0o600)
	os.Symlink(target, filepath.Join(dir, "link-12345678-run.json"))
	os.WriteFile(filepath.Join(dir, "huge-12345678-run.json"), make([]byte, 1<<20), 0o600)
	done := make(chan []error, 1)
	go func() { _, p := reg.List(); done <- p }()
	select {
	case problems := <-done:
		if len(problems) != 3 {
			t.Fatalf("problems = %v, want one for each odd file", problems)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("List hung on a FIFO")
	}
	if _, err := reg.Lookup("fifo-12345678-run"); err == nil {
		t.Fatal("Lookup read a FIFO")
	}
}
