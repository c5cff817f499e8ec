package tests

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aisan-dev/aisan/systemd"
)

// These tests drive the systemd package against the real user manager
// (make test starts one for the test user). They create units named
// aisan-test-<test>-<pid>… so that they never collide with a user's slots,
// and remove them at cleanup.

// connectManager connects to the user manager or skips (fails under
// AISAN_REQUIRE_INTEGRATION=1).
func connectManager(t *testing.T) *systemd.Manager {
	t.Helper()
	requireUserManager(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	m, err := systemd.Connect(ctx, os.Getenv)
	if err != nil {
		t.Fatalf("user manager socket present, but connecting failed: %v", err)
	}
	t.Cleanup(m.Close)
	return m
}

// testCtx is a context bounded by the test's deadline, or a minute.
func testCtx(t *testing.T) context.Context {
	t.Helper()
	d := time.Minute
	if dl, ok := t.Deadline(); ok && time.Until(dl) < d {
		d = time.Until(dl)
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// testSlot returns a slot name unique to this test run.
func testSlot(t *testing.T) string {
	return fmt.Sprintf("test-%s-%d", strings.ReplaceAll(t.Name(), "/", "-"), os.Getpid())
}

// stoppedAtCleanup stops unit at cleanup, whatever the test did.
func stoppedAtCleanup(t *testing.T, m *systemd.Manager, unit string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		m.KillUnit(ctx, unit, syscall.SIGKILL)
		if err := m.StopUnit(ctx, unit); err != nil {
			t.Logf("cleanup: %v", err)
		}
		m.ResetFailed(ctx, unit)
	})
}

// stagedProcess starts sh blocked on a pipe, as the jail's init waits on
// its payload before it starts the agent: it runs script only after
// release is called.
type stagedProcess struct {
	cmd     *exec.Cmd
	release func()
	done    chan error
}

func startStaged(t *testing.T, script string) *stagedProcess {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/sh", "-c", "read _ && exec /bin/sh -c \"$0\"", script)
	cmd.Stdin = r
	background(t, cmd)
	r.Close()
	p := &stagedProcess{cmd: cmd, done: make(chan error, 1)}
	var once sync.Once
	p.release = func() {
		once.Do(func() {
			io.WriteString(w, "go\n")
			w.Close()
		})
	}
	t.Cleanup(p.release)
	go func() { p.done <- cmd.Wait() }()
	return p
}

// groupPIDs returns the live processes of process group pgid.
func groupPIDs(t *testing.T, pgid int) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // exited meanwhile
		}
		// pid (comm) state ppid pgrp …; comm may hold spaces and parens.
		rest := string(b[bytes.LastIndexByte(b, ')')+1:])
		f := strings.Fields(rest)
		if len(f) < 3 || f[0] == "Z" {
			continue
		}
		if g, _ := strconv.Atoi(f[2]); g == pgid {
			pids = append(pids, pid)
		}
	}
	return pids
}

// cgroupProcs returns the pids in the cgroup v2 group cg.
func cgroupProcs(t *testing.T, cg string) []int {
	t.Helper()
	dir, err := systemd.CgroupDir(cg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		pid, _ := strconv.Atoi(f)
		pids = append(pids, pid)
	}
	return pids
}

// TestScopeHoldsEveryProcess proves race-free placement: a process blocked
// on a pipe is put in aisan-<slot>.scope, released, and forks at once; every
// process of its group, including the grandchild of a subshell that exits
// within the first millisecond, is in the scope's cgroup. Then KillUnit
// empties the scope and the scope ends.
func TestScopeHoldsEveryProcess(t *testing.T) {
	m := connectManager(t)
	ctx := testCtx(t)
	slot := testSlot(t)
	unit := systemd.UnitName(slot)
	stoppedAtCleanup(t, m, unit)

	p := startStaged(t, "sleep 300 & sleep 300 & (sleep 300 &) ; exec sleep 300")
	pid := p.cmd.Process.Pid
	desc := "aisan jail for slot " + slot
	if err := m.StartScope(ctx, unit, desc, []int{pid}, systemd.Limits{}); err != nil {
		t.Fatalf("StartScope: %v", err)
	}
	cg, err := systemd.ProcCgroup(pid)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(cg, "/"+unit) {
		t.Fatalf("after StartScope, pid %d is in cgroup %s; want one ending in /%s", pid, cg, unit)
	}
	st, err := m.Status(ctx, unit)
	if err != nil {
		t.Fatal(err)
	}
	if st.ActiveState != "active" || st.ControlGroup != cg {
		t.Fatalf("scope status = %+v; want active with cgroup %s", st, cg)
	}
	descProp := unitDescription(t, ctx, m, unit)
	if descProp != desc {
		t.Errorf("scope description = %q; want %q", descProp, desc)
	}

	p.release()
	// sh, three sleeps (one of them reparented when its subshell exits),
	// and the exec'd sleep that replaced sh: four live processes.
	waitFor(t, 5*time.Second, "the released process to fork three sleeps", func() bool {
		return len(groupPIDs(t, pid)) >= 4
	})
	group := groupPIDs(t, pid)
	inScope := cgroupProcs(t, st.ControlGroup)
	for _, q := range group {
		if !slices.Contains(inScope, q) {
			qcg, err := systemd.ProcCgroup(q)
			if err != nil || qcg == "" {
				// The subshell exits at once; a process gone between
				// the two reads was in no other cgroup either.
				continue
			}
			t.Errorf("pid %d of the jail's process group is in %s, not in the scope %s (scope holds %v)", q, qcg, st.ControlGroup, inScope)
		}
	}
	t.Logf("scope %s holds %v; process group %d is %v", unit, inScope, pid, group)

	if err := m.KillUnit(ctx, unit, syscall.SIGKILL); err != nil {
		t.Fatalf("KillUnit: %v", err)
	}
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the scope's main process survived KillUnit")
	}
	waitFor(t, 10*time.Second, "the scope's processes to die", func() bool {
		return len(groupPIDs(t, pid)) == 0
	})
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := m.WaitInactive(wctx, unit); err != nil {
		t.Fatal(err)
	}
	if err := m.KillUnit(ctx, unit, syscall.SIGKILL); !errors.Is(err, systemd.ErrNoSuchUnit) {
		t.Errorf("KillUnit on the ended scope: %v; want an error wrapping ErrNoSuchUnit", err)
	}
}

func unitDescription(t *testing.T, ctx context.Context, m *systemd.Manager, unit string) string {
	t.Helper()
	v, err := m.UnitProperty(ctx, unit, "Description")
	if err != nil {
		t.Fatal(err)
	}
	s, _ := v.(string)
	return s
}

// TestScopeNameInUse: a live scope keeps its name, and a second start
// says so with ErrUnitExists instead of adopting the new process.
func TestScopeNameInUse(t *testing.T) {
	m := connectManager(t)
	ctx := testCtx(t)
	unit := systemd.UnitName(testSlot(t))
	stoppedAtCleanup(t, m, unit)

	a := startStaged(t, "exit 0")
	b := startStaged(t, "exit 0")
	if err := m.StartScope(ctx, unit, "first", []int{a.cmd.Process.Pid}, systemd.Limits{}); err != nil {
		t.Fatalf("first StartScope: %v", err)
	}
	err := m.StartScope(ctx, unit, "second", []int{b.cmd.Process.Pid}, systemd.Limits{})
	if !errors.Is(err, systemd.ErrUnitExists) {
		t.Fatalf("second StartScope with the same name: %v; want an error wrapping ErrUnitExists", err)
	}
	if !strings.Contains(err.Error(), unit) || !strings.Contains(err.Error(), "active") {
		t.Errorf("error %q should name the unit and its state", err)
	}
	if cg, _ := systemd.ProcCgroup(b.cmd.Process.Pid); strings.HasSuffix(cg, "/"+unit) {
		t.Errorf("the second process was moved into the live scope anyway (%s)", cg)
	}
}

// TestServiceReusesFailedName: a failed service keeps its name; starting a
// unit of that name again resets it and retries once, and succeeds.
func TestServiceReusesFailedName(t *testing.T) {
	m := connectManager(t)
	ctx := testCtx(t)
	unit := systemd.ServiceName(testSlot(t))
	stoppedAtCleanup(t, m, unit)
	dir := t.TempDir()
	svc := systemd.Service{
		Unit:        unit,
		Description: "aisan test service that fails",
		Argv:        []string{"/bin/sh", "-c", "echo failing; sleep 0.3; exit 3"},
		Dir:         dir,
		MaxRuntime:  time.Minute,
		Output:      filepath.Join(dir, "transcript"),
	}
	if err := m.StartService(ctx, svc); err != nil {
		t.Fatalf("StartService: %v", err)
	}
	waitFor(t, 10*time.Second, "the service to fail", func() bool {
		st, err := m.Status(ctx, unit)
		return err == nil && st.ActiveState == "failed"
	})
	st, _ := m.Status(ctx, unit)
	if st.Result != "exit-code" || st.ExecMainStatus != 3 {
		t.Errorf("failed service: result %q, status %d; want exit-code, 3", st.Result, st.ExecMainStatus)
	}
	svc.Argv = []string{"/bin/sleep", "300"}
	if err := m.StartService(ctx, svc); err != nil {
		t.Fatalf("StartService over the failed unit: %v", err)
	}
	st, _ = m.Status(ctx, unit)
	if st.ActiveState != "active" {
		t.Errorf("restarted service is %s; want active", st.ActiveState)
	}
}

// TestServiceStopsAtCap: a transient service with a 2 s cap is stopped by
// systemd at its cap, with the result "timeout", and its output went to
// its transcript.
func TestServiceStopsAtCap(t *testing.T) {
	m := connectManager(t)
	ctx := testCtx(t)
	unit := systemd.ServiceName(testSlot(t))
	stoppedAtCleanup(t, m, unit)
	dir := t.TempDir()
	transcript := filepath.Join(dir, "transcript")
	if err := os.WriteFile(transcript, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err := m.StartService(ctx, systemd.Service{
		Unit:        unit,
		Description: "aisan test service with a 2s cap",
		Argv:        []string{"/bin/sh", "-c", "echo out-line; echo err-line >&2; echo \"env=$AISAN_TEST_VAR pwd=$(pwd)\"; exec sleep 300"},
		Env:         []string{"AISAN_TEST_VAR=hello"},
		Dir:         dir,
		MaxRuntime:  2 * time.Second,
		Output:      transcript,
	})
	if err != nil {
		t.Fatalf("StartService: %v", err)
	}
	st, err := m.Status(ctx, unit)
	if err != nil || st.ActiveState != "active" {
		t.Fatalf("service just started: %+v, %v; want active", st, err)
	}
	wctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := m.WaitInactive(wctx, unit); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	if took < 1500*time.Millisecond || took > 10*time.Second {
		t.Errorf("service ended after %v; want about 2s", took)
	}
	st, err = m.Status(ctx, unit)
	if err != nil {
		t.Fatal(err)
	}
	if st.ActiveState != "failed" || st.Result != "timeout" {
		t.Errorf("service at its cap: %s with result %q; want failed with timeout", st.ActiveState, st.Result)
	}
	out, err := os.ReadFile(transcript)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"out-line\n", "err-line\n", "env=hello pwd=" + dir + "\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("transcript %q lacks %q", out, want)
		}
	}
}

// TestServiceMissingBinary: with Type=exec, a command that cannot be
// executed fails StartService itself, naming the unit.
func TestServiceMissingBinary(t *testing.T) {
	m := connectManager(t)
	ctx := testCtx(t)
	unit := systemd.ServiceName(testSlot(t))
	stoppedAtCleanup(t, m, unit)
	dir := t.TempDir()
	err := m.StartService(ctx, systemd.Service{
		Unit: unit, Description: "missing binary", Argv: []string{filepath.Join(dir, "nope")},
		Dir: dir, MaxRuntime: time.Minute, Output: filepath.Join(dir, "transcript"),
	})
	if err == nil || !strings.Contains(err.Error(), unit) || !strings.Contains(err.Error(), "journalctl --user -u "+unit) {
		t.Fatalf("StartService of a missing binary: %v; want an error naming the unit and the journalctl command", err)
	}
	t.Logf("error: %v", err)
}

// TestScopeLimits: limits reach the scope as properties; where the
// controllers are delegated, the kernel files show them; where they are not
// (our CI hosts: cgroup v1 holds memory and pids), CheckDelegation names
// exactly the limits that would be ignored, which is what the launcher
// prints.
func TestScopeLimits(t *testing.T) {
	m := connectManager(t)
	ctx := testCtx(t)
	unit := systemd.UnitName(testSlot(t))
	stoppedAtCleanup(t, m, unit)

	l, err := systemd.ParseLimits("memory=256M cpu=150% tasks=64")
	if err != nil {
		t.Fatal(err)
	}
	p := startStaged(t, "exec sleep 300")
	if err := m.StartScope(ctx, unit, "limits", []int{p.cmd.Process.Pid}, l); err != nil {
		t.Fatalf("StartScope: %v", err)
	}
	for name, want := range map[string]uint64{
		"MemoryMax":          256 << 20,
		"CPUQuotaPerSecUSec": 1_500_000,
		"TasksMax":           64,
	} {
		v, err := m.UnitTypeProperty(ctx, unit, "Scope", name)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := v.(uint64); got != want {
			t.Errorf("scope property %s = %v; want %d", name, v, want)
		}
	}

	delegated, err := m.DelegatedControllers(ctx)
	if err != nil {
		t.Fatalf("DelegatedControllers: %v", err)
	}
	v1, err := systemd.V1Controllers()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("controllers delegated to the user manager: %v; on cgroup v1: %v", delegated, v1)
	st, err := m.Status(ctx, unit)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := systemd.CgroupDir(st.ControlGroup)
	if err != nil {
		t.Fatal(err)
	}
	files := []struct{ controller, file, want string }{
		{"memory", "memory.max", "268435456"},
		{"cpu", "cpu.max", "150000 100000"},
		{"pids", "pids.max", "64"},
	}
	for _, f := range files {
		if !slices.Contains(delegated, f.controller) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, f.file))
		if err != nil {
			t.Errorf("controller %s is delegated, but: %v", f.controller, err)
			continue
		}
		if got := strings.TrimSpace(string(b)); got != f.want {
			t.Errorf("%s = %q; want %q", f.file, got, f.want)
		}
	}

	missing := systemd.MissingControllers(l, delegated)
	err = systemd.CheckDelegation(l, delegated, v1)
	if len(missing) == 0 {
		if err != nil {
			t.Errorf("every controller is delegated, yet CheckDelegation says: %v", err)
		}
		return
	}
	// Not delegated here: the limits are silent no-ops, and the warning
	// the launcher prints must say which and why.
	var ue *systemd.UndelegatedError
	if !errors.As(err, &ue) {
		t.Fatalf("controllers %v are missing, yet CheckDelegation returned %v", missing, err)
	}
	if !slices.Equal(ue.Missing, missing) {
		t.Errorf("UndelegatedError.Missing = %v; want %v", ue.Missing, missing)
	}
	msg := err.Error()
	for _, c := range missing {
		if !strings.Contains(msg, c) {
			t.Errorf("warning %q does not name controller %s", msg, c)
		}
		if _, statErr := os.Stat(filepath.Join(dir, c+".max")); c != "cpu" && statErr == nil {
			t.Errorf("controller %s is reported missing, but the scope has %s.max", c, c)
		}
	}
	t.Logf("limits not enforceable here; the launcher warns:\n  %s\n  hint: %s", msg, strings.Join(ue.Hints(), "\n  hint: "))
}

// TestSystemdNoManagerHere: with XDG_RUNTIME_DIR unset the real
// environment yields a NoManagerError with both hints, even though a
// manager and a session bus run (their address is not guessed).
func TestSystemdNoManagerHere(t *testing.T) {
	requireUserManager(t)
	env := func(k string) string {
		if k == "XDG_RUNTIME_DIR" {
			return ""
		}
		return os.Getenv(k)
	}
	err := systemd.Detect(context.Background(), env)
	var nm *systemd.NoManagerError
	if !errors.As(err, &nm) {
		t.Fatalf("Detect without XDG_RUNTIME_DIR = %v; want a *NoManagerError", err)
	}
	hints := strings.Join(nm.Hints(), "\n")
	for _, want := range []string{"loginctl enable-linger $USER", "export XDG_RUNTIME_DIR=/run/user/$(id -u)"} {
		if !strings.Contains(hints, want) {
			t.Errorf("hints %q lack %q", hints, want)
		}
	}
	if err := systemd.Detect(context.Background(), os.Getenv); err != nil {
		t.Errorf("Detect with the real environment: %v", err)
	}
}

// TestServiceSupervisor runs one supervisor pass against real units: a
// service that outlived its cap (restarted, say) is stopped, one that
// systemd stopped at its cap is recorded with its result, a young one is
// left alone, and an orphaned session is handed to the registry, whose
// reaper kills its scope the way the launcher's wiring does.
func TestServiceSupervisor(t *testing.T) {
	m := connectManager(t)
	ctx := testCtx(t)
	dir := t.TempDir()
	name := func(s string) string { return testSlot(t) + "-" + s }
	svc := func(slot string, cap time.Duration) {
		t.Helper()
		unit := systemd.ServiceName(slot)
		stoppedAtCleanup(t, m, unit)
		err := m.StartService(ctx, systemd.Service{
			Unit: unit, Description: "supervised " + slot, Argv: []string{"/bin/sleep", "300"},
			Dir: dir, MaxRuntime: cap, Output: filepath.Join(dir, slot),
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	overdue, capped, young, orphan := name("overdue"), name("capped"), name("young"), name("orphan")
	svc(overdue, time.Hour)
	svc(capped, time.Second)
	svc(young, time.Hour)
	stoppedAtCleanup(t, m, systemd.UnitName(orphan))
	po := startStaged(t, "exec sleep 300")
	if err := m.StartScope(ctx, systemd.UnitName(orphan), "orphan", []int{po.cmd.Process.Pid}, systemd.Limits{}); err != nil {
		t.Fatal(err)
	}
	po.release()
	waitFor(t, 10*time.Second, "systemd to stop the 1s service", func() bool {
		st, err := m.Status(ctx, systemd.ServiceName(capped))
		return err == nil && !st.Active()
	})

	now := time.Now()
	reg := &memRegistry{m: m, slots: []systemd.Slot{
		{Name: overdue, Service: true, Unit: systemd.ServiceName(overdue), Started: now.Add(-2 * time.Hour), MaxRuntime: time.Hour},
		{Name: capped, Service: true, Unit: systemd.ServiceName(capped), Started: now, MaxRuntime: time.Second},
		{Name: young, Service: true, Unit: systemd.ServiceName(young), Started: now, MaxRuntime: time.Hour},
		{Name: orphan, Unit: systemd.UnitName(orphan), Started: now, Orphaned: true},
	}}
	sup := &systemd.Supervisor{Registry: reg, Units: m}
	events, err := sup.Sweep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		t.Log(e)
		if e.Err != nil {
			t.Error(e.Err)
		}
	}
	if st, _ := m.Status(ctx, systemd.ServiceName(overdue)); st.Active() {
		t.Errorf("the overdue service is %s after the sweep; want stopped", st.ActiveState)
	}
	if st, _ := m.Status(ctx, systemd.ServiceName(young)); st.ActiveState != "active" {
		t.Errorf("the young service is %s after the sweep; want active", st.ActiveState)
	}
	select {
	case <-po.done:
	case <-time.After(10 * time.Second):
		t.Error("the orphan's process survived the sweep")
	}
	ends := reg.ended()
	if e := ends[capped]; e.Result != "timeout" || !strings.Contains(e.Reason, "stopped by systemd at its runtime cap") {
		t.Errorf("end of the capped service = %+v", e)
	}
	if e := ends[overdue]; !strings.Contains(e.Reason, "aisan watch stopped it") {
		t.Errorf("end of the overdue service = %+v", e)
	}
	if _, ok := ends[young]; ok {
		t.Error("the young service was recorded as ended")
	}
	if ends[orphan].Reason != "orphan reaped" {
		t.Errorf("the orphan was not reaped: ends %v", ends)
	}
}

// memRegistry is an in-memory Registry whose reaper kills scopes the way
// the launcher's wiring does: KillUnit, and the PID namespace when the
// unit is gone.
type memRegistry struct {
	m     *systemd.Manager
	mu    sync.Mutex
	slots []systemd.Slot
	ends  map[string]systemd.End
}

func (r *memRegistry) LiveSlots(ctx context.Context) ([]systemd.Slot, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []systemd.Slot
	for _, s := range r.slots {
		if _, ok := r.ends[s.Name]; !ok {
			out = append(out, s)
		}
	}
	return out, nil
}

func (r *memRegistry) ReapOrphan(ctx context.Context, slot string) error {
	unit := systemd.UnitName(slot)
	err := r.m.KillUnit(ctx, unit, syscall.SIGKILL)
	if errors.Is(err, systemd.ErrNoSuchUnit) {
		return fmt.Errorf("no scope for %s: the PID namespace fallback is the registry's", slot)
	}
	if err != nil {
		return err
	}
	if err := r.m.WaitInactive(ctx, unit); err != nil {
		return err
	}
	return r.RecordEnd(ctx, slot, systemd.End{At: time.Now(), Reason: "orphan reaped"})
}

func (r *memRegistry) RecordEnd(ctx context.Context, slot string, end systemd.End) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ends == nil {
		r.ends = map[string]systemd.End{}
	}
	r.ends[slot] = end
	return nil
}

func (r *memRegistry) ended() map[string]systemd.End {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.ends)
}

// TestSystemdInstallWatch installs the supervisor unit (under a test name,
// into the manager's runtime unit directory, with a stand-in binary),
// checks that the manager loaded, enabled and started it, that a second
// install changes nothing, and that a changed unit is backed up and
// restarted.
func TestSystemdInstallWatch(t *testing.T) {
	m := connectManager(t)
	ctx := testCtx(t)
	bin := filepath.Join(t.TempDir(), "aisan")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n[ \"$1\" = watch ] || exit 64\nexec sleep 300\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The user's unit directories the manager reads get the unit's
	// drop-in directories; one it does not read gets none.
	unread := t.TempDir()
	in := systemd.WatchInstall{
		AisanPath:  bin,
		Dir:        filepath.Join(os.Getenv("XDG_RUNTIME_DIR"), "systemd", "user"),
		DropInDirs: append(systemd.UserUnitDirs(os.Getenv), unread),
		Unit:       fmt.Sprintf("aisan-watch-test-%d.service", os.Getpid()),
		Runtime:    true,
	}
	home := os.Getenv("HOME")
	read := []string{in.Dir, filepath.Join(home, ".config/systemd/user"), filepath.Join(home, ".config/systemd/user.control"), filepath.Join(home, ".local/share/systemd/user")}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := systemd.UninstallWatch(ctx, m, in); err != nil {
			t.Errorf("UninstallWatch: %v", err)
		}
		os.Remove(filepath.Join(in.Dir, in.Unit+".aisan-bak"))
		for _, d := range read {
			if _, err := os.Lstat(filepath.Join(d, in.Unit+".d")); err == nil {
				t.Errorf("the unit's empty drop-in directory is left in %s after uninstall", d)
			}
			// The prefix ones stay (other units may share them): this
			// test's own are removed here, aisan-.service.d kept.
			os.Remove(filepath.Join(d, "aisan-watch-.service.d"))
			os.Remove(filepath.Join(d, "aisan-watch-test-.service.d"))
		}
	})

	rep, err := systemd.InstallWatch(ctx, m, in)
	if err != nil {
		t.Fatalf("InstallWatch: %v", err)
	}
	if !rep.Written || !rep.Enabled || !rep.Started || rep.Backup != "" {
		t.Errorf("first install: %+v; want written, enabled, started, no backup", rep)
	}
	assertWatchRunning(t, ctx, m, in.Unit)
	for _, d := range read {
		for _, name := range []string{in.Unit + ".d", "aisan-.service.d", "aisan-watch-.service.d", "aisan-watch-test-.service.d"} {
			if fi, err := os.Lstat(filepath.Join(d, name)); err != nil || !fi.IsDir() {
				t.Errorf("drop-in directory %s in %s after install: %v; want a directory", name, d, err)
			}
		}
	}
	if ents, _ := os.ReadDir(unread); len(ents) != 0 {
		t.Errorf("install made %v in %s, which the manager does not read", ents, unread)
	}
	first, err := os.ReadFile(rep.Path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(first, []byte("ExecStart="+bin+" watch\n")) {
		t.Errorf("unit file lacks the ExecStart line for %s:\n%s", bin, first)
	}

	rep, err = systemd.InstallWatch(ctx, m, in)
	if err != nil {
		t.Fatalf("second InstallWatch: %v", err)
	}
	if rep.Written || rep.Enabled || rep.Started || rep.Backup != "" {
		t.Errorf("second install: %+v; want nothing changed", rep)
	}
	pid1, _ := m.UnitProperty(ctx, in.Unit, "ActiveEnterTimestamp")

	in.Env = []string{"AISAN_HOME=/tmp/aisan home"}
	rep, err = systemd.InstallWatch(ctx, m, in)
	if err != nil {
		t.Fatalf("third InstallWatch: %v", err)
	}
	if !rep.Written || rep.Enabled || !rep.Started || rep.Backup == "" {
		t.Errorf("changed install: %+v; want written, restarted, backup", rep)
	}
	if b, _ := os.ReadFile(rep.Backup); !bytes.Equal(b, first) {
		t.Errorf("backup %s does not hold the previous unit file", rep.Backup)
	}
	assertWatchRunning(t, ctx, m, in.Unit)
	if pid2, _ := m.UnitProperty(ctx, in.Unit, "ActiveEnterTimestamp"); pid2 == pid1 {
		t.Errorf("the unit was not restarted after its file changed")
	}
	env, err := m.UnitTypeProperty(ctx, in.Unit, "Service", "Environment")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := env.([]string); !slices.Equal(got, in.Env) {
		t.Errorf("unit environment = %q; want %q", env, in.Env)
	}
}

func assertWatchRunning(t *testing.T, ctx context.Context, m *systemd.Manager, unit string) {
	t.Helper()
	st, err := m.Status(ctx, unit)
	if err != nil {
		t.Fatal(err)
	}
	if st.ActiveState != "active" {
		t.Errorf("%s is %s (%s, result %s); want active", unit, st.ActiveState, st.SubState, st.Result)
	}
	state, err := m.UnitProperty(ctx, unit, "UnitFileState")
	if err != nil {
		t.Fatal(err)
	}
	if state != "enabled-runtime" {
		t.Errorf("%s UnitFileState = %v; want enabled-runtime", unit, state)
	}
}

// BenchmarkScopeStart measures what a scope adds to a launch: connecting
// to the user manager and StartScope on a staged process, until the job
// is done (the process is started before and reaped after the timed part).
// make bench compares it with the launch itself.
func BenchmarkScopeStart(b *testing.B) {
	requireUserManager(b)
	ctx := context.Background()
	for _, bc := range []struct {
		name    string
		connect bool
	}{{"StartScope", false}, {"ConnectAndStartScope", true}} {
		b.Run(bc.name, func(b *testing.B) {
			shared, err := systemd.Connect(ctx, os.Getenv)
			if err != nil {
				b.Fatal(err)
			}
			defer shared.Close()
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				cmd := exec.Command("/bin/sh", "-c", "read _")
				w, err := cmd.StdinPipe()
				if err != nil {
					b.Fatal(err)
				}
				isolate(cmd)
				if err := cmd.Start(); err != nil {
					b.Fatal(err)
				}
				unit := systemd.UnitName(fmt.Sprintf("bench-%d-%s-%d", os.Getpid(), bc.name, i))
				b.StartTimer()
				m := shared
				if bc.connect {
					if m, err = systemd.Connect(ctx, os.Getenv); err != nil {
						b.Fatal(err)
					}
				}
				if err := m.StartScope(ctx, unit, "bench", []int{cmd.Process.Pid}, systemd.Limits{}); err != nil {
					b.Fatal(err)
				}
				if bc.connect {
					m.Close()
				}
				b.StopTimer()
				w.Close()
				cmd.Wait()
				if err := shared.WaitInactive(ctx, unit); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
	}
}

// TestScopeOverSessionBus: with no private socket to reach (a runtime
// directory without systemd/private), the manager is reached over the
// session bus, where its job signals come only through a match rule and a
// subscription; a scope still starts, its job's end is seen, and the
// process lands in it. The same connection also does go-systemd's calls.
func TestScopeOverSessionBus(t *testing.T) {
	requireUserManager(t)
	bus := os.Getenv("DBUS_SESSION_BUS_ADDRESS")
	if bus == "" {
		bus = "unix:path=" + filepath.Join(os.Getenv("XDG_RUNTIME_DIR"), "bus")
	}
	rt := t.TempDir()
	getenv := func(k string) string {
		switch k {
		case "XDG_RUNTIME_DIR":
			return rt
		case "DBUS_SESSION_BUS_ADDRESS":
			return bus
		}
		return os.Getenv(k)
	}
	ctx := testCtx(t)
	m, err := systemd.Connect(ctx, getenv)
	if err != nil {
		t.Fatalf("connecting over the session bus: %v", err)
	}
	t.Cleanup(m.Close)
	if !strings.HasPrefix(m.Via(), "session bus") {
		t.Fatalf("reached the manager via %q, want the session bus (the test proves nothing otherwise)", m.Via())
	}
	unit := systemd.UnitName(testSlot(t))
	stoppedAtCleanup(t, m, unit)
	p := startStaged(t, "exit 0")
	start := time.Now()
	if err := m.StartScope(ctx, unit, "over the bus", []int{p.cmd.Process.Pid}, systemd.Limits{}); err != nil {
		t.Fatalf("StartScope over the session bus: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("StartScope took %v: the job's end was not seen, only the timeout", d)
	}
	if cg, err := systemd.ProcCgroup(p.cmd.Process.Pid); err != nil || !strings.HasSuffix(cg, "/"+unit) {
		t.Fatalf("the process is in %q (%v), want the scope %s", cg, err, unit)
	}
	if st, err := m.Status(ctx, unit); err != nil || st.ActiveState != "active" {
		t.Errorf("status of the scope over the same connection: %+v %v", st, err)
	}
}
