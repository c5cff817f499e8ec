package tests

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aisan-dev/aisan/jail/launch"
	"github.com/aisan-dev/aisan/jail/slot"
	"github.com/aisan-dev/aisan/systemd"
)

// These tests cover the races and forged records around "aisan kill" and
// "aisan watch": a kill acts on the launch it looked at, or on nothing —
// never on the next launch of the same slot, never on a unit the slot's
// record merely names, and a service is stopped, not killed into a
// restart.

// killRecord reads slot's record file as the registry stores it.
func killRecord(t *testing.T, env []string, name string) slot.Record {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(killHome(env), "slots", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec slot.Record
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

// killForge rewrites slot's record with fn, atomically, as an agent that
// can write the state directory could.
func killForge(t *testing.T, env []string, name string, fn func(*slot.Record)) {
	t.Helper()
	rec := killRecord(t, env, name)
	fn(&rec)
	data, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(killHome(env), "slots")
	tmp := filepath.Join(dir, ".forged.tmp")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name+".json")); err != nil {
		t.Fatal(err)
	}
}

// killHome is the AISAN_HOME in a testEnv environment.
func killHome(env []string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "AISAN_HOME="); ok {
			return v
		}
	}
	return ""
}

// killRegistry opens the registry of env in this process, with the
// Killer the CLI and the supervisor use.
func killRegistry(t *testing.T, ctx context.Context, env []string) *slot.Registry {
	t.Helper()
	reg, err := slot.Open(killHome(env))
	if err != nil {
		t.Fatal(err)
	}
	reg.Killer = launch.Killer(ctx)
	return reg
}

// killWaitAgent waits until the jail's init has started the command: a
// jail killed before its init is ready reads to the launcher as one that
// bwrap could not start.
func killWaitAgent(t *testing.T, e slotEntry) {
	t.Helper()
	waitFor(t, 10*time.Second, "the jail's command to run", func() bool { return len(jailPIDs(t, e.PidNSInode)) >= 2 })
}

// killVictimScope starts a sleep in a scope called unit, as another
// program's (or another slot's) unit, and returns the sleep's PID.
func killVictimScope(t *testing.T, m *systemd.Manager, unit string) int {
	t.Helper()
	p := startStaged(t, "exec sleep 300")
	stoppedAtCleanup(t, m, unit)
	if err := m.StartScope(testCtx(t), unit, "aisan test victim", []int{p.cmd.Process.Pid}, systemd.Limits{}); err != nil {
		t.Fatal(err)
	}
	p.release()
	return p.cmd.Process.Pid
}

// TestKillWatchSparesRunningSlot: the supervisor's ReapOrphan is handed a
// slot that runs (a new launch took the name after the orphan it listed
// ended). It must see the slot's lock held and kill nothing.
func TestKillWatchSparesRunningSlot(t *testing.T) {
	requireScopes(t)
	_, env := testEnv(t)
	cmd, _, e := slotLaunch(t, slotWorktree(t), env, "sleep", "300")
	killWaitAgent(t, e)
	ctx := testCtx(t)
	w := launch.WatchRegistry{Reg: killRegistry(t, ctx, env)}
	err := w.ReapOrphan(ctx, e.Slot)
	if !errors.Is(err, slot.ErrBusy) {
		t.Errorf("ReapOrphan(%s) of a running slot = %v; want a busy error", e.Slot, err)
	}
	time.Sleep(200 * time.Millisecond)
	if !slotProcRunning(e.InitPID) || !slotProcRunning(cmd.Process.Pid) {
		t.Fatalf("ReapOrphan killed a running slot: init alive %v, wrapper alive %v", slotProcRunning(e.InitPID), slotProcRunning(cmd.Process.Pid))
	}
	if got := slotList(t, env)[e.Slot]; got.State != "running" || got.End != "" {
		t.Errorf("after ReapOrphan: %+v; want still running", got)
	}
}

// TestKillStaleRecordSparesRelaunch: a kill that read the record of a
// launch which has since ended must not reach the next launch of the same
// slot, although that launch's scope has the same name.
func TestKillStaleRecordSparesRelaunch(t *testing.T) {
	requireScopes(t)
	m := connectManager(t)
	_, env := testEnv(t)
	wt := slotWorktree(t)
	cmd1, _, e1 := slotLaunch(t, wt, env, "sleep", "300")
	killWaitAgent(t, e1)
	stale := killRecord(t, env, e1.Slot)
	if stale.Unit == "" {
		t.Fatalf("slot %s has no unit", e1.Slot)
	}
	if r := aisan(t, env, "", "kill", e1.Slot); r.code != 0 {
		t.Fatalf("aisan kill %s: code %d, stderr %q", e1.Slot, r.code, r.stderr)
	}
	slotWait(t, cmd1)
	ctx, cancel := context.WithTimeout(testCtx(t), 10*time.Second)
	defer cancel()
	if err := m.WaitInactive(ctx, stale.Unit); err != nil {
		t.Fatal(err)
	}

	cmd2, _, e2 := slotLaunch(t, wt, env, "sleep", "300")
	killWaitAgent(t, e2)
	if e2.Slot != e1.Slot || e2.Unit != stale.Unit {
		t.Fatalf("the relaunch is slot %s in %s; want the same slot and scope as before (%s in %s)", e2.Slot, e2.Unit, e1.Slot, stale.Unit)
	}
	err := launch.Killer(testCtx(t))(stale, syscall.SIGKILL)
	if !errors.Is(err, slot.ErrJailGone) {
		t.Errorf("Killer(stale record) = %v; want ErrJailGone", err)
	}
	time.Sleep(200 * time.Millisecond)
	if !slotProcRunning(e2.InitPID) || !slotProcRunning(cmd2.Process.Pid) {
		t.Fatalf("the kill of the ended launch reached the relaunch: init alive %v, wrapper alive %v", slotProcRunning(e2.InitPID), slotProcRunning(cmd2.Process.Pid))
	}
	if st := scopeOf(t, m, e2.Unit); st.ActiveState != "active" {
		t.Errorf("the relaunch's scope is %s; want active", st.ActiveState)
	}
}

// TestKillForgedUnit: a record whose unit is not one aisan gives the slot
// (another program's scope) is not obeyed: 'aisan kill' ends the jail
// through its PID namespace and the named unit lives on.
func TestKillForgedUnit(t *testing.T) {
	requireScopes(t)
	m := connectManager(t)
	_, env := testEnv(t)
	victimUnit := fmt.Sprintf("aisan-test-victim-%d.scope", os.Getpid())
	victim := killVictimScope(t, m, victimUnit)
	cmd, _, e := slotLaunch(t, slotWorktree(t), env, "sleep", "300")
	killWaitAgent(t, e)
	killForge(t, env, e.Slot, func(r *slot.Record) { r.Unit = victimUnit })

	r := aisan(t, env, "", "kill", "--signal", "KILL", e.Slot)
	if r.code != 0 {
		t.Errorf("aisan kill %s: code %d, stderr %q", e.Slot, r.code, r.stderr)
	}
	if code := slotWait(t, cmd); code != 137 {
		t.Errorf("the wrapper exited %d; want 137", code)
	}
	if slotProcRunning(e.InitPID) {
		t.Errorf("the jail's init %d survived", e.InitPID)
	}
	if st := scopeOf(t, m, victimUnit); st.ActiveState != "active" || !slotProcRunning(victim) {
		t.Errorf("the unit the forged record named is %s (its process alive: %v); want it untouched", st.ActiveState, slotProcRunning(victim))
	}
}

// TestKillUnitWithoutTheJail: a record naming the slot's own scope name
// while the jail is not in that scope (it ran without one; the name now
// belongs to something else) falls back to the PID namespace: the jail
// dies, the scope lives on.
func TestKillUnitWithoutTheJail(t *testing.T) {
	requireScopes(t)
	m := connectManager(t)
	_, env := testEnv(t)
	cmd, _, e := slotLaunch(t, slotWorktree(t), append(env, launch.EnvNoScope+"=1"), "sleep", "300")
	if e.Unit != "" {
		t.Fatalf("slot %s has unit %s despite %s=1", e.Slot, e.Unit, launch.EnvNoScope)
	}
	killWaitAgent(t, e)
	unit := systemd.UnitName(e.Slot)
	victim := killVictimScope(t, m, unit)
	killForge(t, env, e.Slot, func(r *slot.Record) { r.Unit = unit })

	r := aisan(t, env, "", "kill", "--signal", "KILL", e.Slot)
	if r.code != 0 {
		t.Errorf("aisan kill %s: code %d, stderr %q", e.Slot, r.code, r.stderr)
	}
	if code := slotWait(t, cmd); code != 137 {
		t.Errorf("the wrapper exited %d; want 137", code)
	}
	if slotProcRunning(e.InitPID) {
		t.Errorf("the jail's init %d survived", e.InitPID)
	}
	if st := scopeOf(t, m, unit); st.ActiveState != "active" || !slotProcRunning(victim) {
		t.Errorf("scope %s, which the jail is not in, is %s (its process alive: %v); want it untouched", unit, st.ActiveState, slotProcRunning(victim))
	}
}

// TestKillScopeUsesKillUnit: when the check passes, 'aisan kill' still
// kills the whole scope, not just the jail's PID namespace: a process in
// the scope outside the namespace dies too.
func TestKillScopeUsesKillUnit(t *testing.T) {
	requireScopes(t)
	m := connectManager(t)
	_, env := testEnv(t)
	cmd, out, e := slotLaunch(t, slotWorktree(t), env, "sleep", "300")
	killWaitAgent(t, e)
	st := scopeOf(t, m, e.Unit)
	dir, err := systemd.CgroupDir(st.ControlGroup)
	if err != nil {
		t.Fatal(err)
	}
	extra := exec.Command("sleep", "300")
	background(t, extra)
	pid := extra.Process.Pid
	go extra.Wait() // reap it, so that a killed sleep is gone, not a zombie
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
		need(t, "write access to move a process into a scope's cgroup", err)
	}
	if !slices.Contains(cgroupProcs(t, st.ControlGroup), pid) {
		t.Fatalf("process %d did not move into %s", pid, e.Unit)
	}

	if r := aisan(t, env, "", "kill", "--signal", "KILL", e.Slot); r.code != 0 {
		t.Errorf("aisan kill %s: code %d, stderr %q", e.Slot, r.code, r.stderr)
	}
	if code := slotWait(t, cmd); code != 137 {
		t.Errorf("the wrapper exited %d; want 137; its output:\n%s", code, out)
	}
	waitFor(t, 5*time.Second, "the process outside the jail but in its scope to die (KillUnit)", func() bool { return !slotProcRunning(pid) })
	ctx, cancel := context.WithTimeout(testCtx(t), 10*time.Second)
	defer cancel()
	if err := m.WaitInactive(ctx, e.Unit); err != nil {
		t.Fatal(err)
	}
}

// TestKillServiceStops: 'aisan kill' on a service with Restart=on-failure
// stops its unit, and it stays stopped; the slot shows as exited.
func TestKillServiceStops(t *testing.T) {
	requireScopes(t)
	m := connectManager(t)
	_, env := testEnv(t)
	name := fmt.Sprintf("killsvc%d", os.Getpid())
	unit := systemd.ServiceName(name)
	stoppedAtCleanup(t, m, unit)
	r := aisanIn(t, slotWorktree(t), env, "", "spawn-service", name, "--restart", "on-failure", "--max-runtime", "1m", "--", "sleep", "300")
	if r.code != 0 {
		t.Fatalf("aisan spawn-service: code %d, stderr %q", r.code, r.stderr)
	}
	var e slotEntry
	waitFor(t, 10*time.Second, "the service's jail to be recorded", func() bool {
		e = slotList(t, env)[name]
		return e.State == "running" && e.InitPID != 0
	})
	killWaitAgent(t, e)
	if e.Unit != unit || e.Kind != "service" {
		t.Fatalf("slot %s: %+v; want a service in %s", name, e, unit)
	}

	r = aisan(t, env, "", "kill", name)
	if r.code != 0 || r.stdout != "killed "+name+"\n" {
		t.Errorf("aisan kill %s: code %d, stdout %q, stderr %q", name, r.code, r.stdout, r.stderr)
	}
	ctx, cancel := context.WithTimeout(testCtx(t), 15*time.Second)
	defer cancel()
	if err := m.WaitInactive(ctx, unit); err != nil {
		t.Fatal(err)
	}
	// Restart=on-failure would bring a killed service back within
	// RestartSec (100 ms by default); a stopped one stays down.
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if st := scopeOf(t, m, unit); st.Active() {
			t.Fatalf("service %s is %s (%s) after aisan kill; want it to stay stopped", unit, st.ActiveState, st.SubState)
		}
	}
	if n, err := m.UnitTypeProperty(testCtx(t), unit, "Service", "NRestarts"); err == nil && n != uint32(0) {
		t.Errorf("service %s restarted %v times after aisan kill", unit, n)
	}
	if slotProcRunning(e.InitPID) {
		t.Errorf("the service's jail init %d survived", e.InitPID)
	}
	after := slotList(t, env)[name]
	if after.State != "exited" || after.End == "" || after.ExitStatus == nil {
		t.Errorf("after aisan kill: %+v; want exited, its end recorded (by the wrapper, which systemd sent SIGTERM)", after)
	}
	if after.ExitStatus != nil {
		t.Logf("slot after aisan kill: end %q, exit status %d", after.End, *after.ExitStatus)
	}
}

// TestKillAfterFailedLaunchKeepsRecord: a launch that fails before its
// jail starts leaves the slot's previous launch listed as it ended.
func TestKillAfterFailedLaunchKeepsRecord(t *testing.T) {
	requireSlots(t)
	_, env := testEnv(t)
	wt := slotWorktree(t)
	if r := aisanIn(t, wt, env, "", "run", "--", "echo", "hello"); r.code != 0 {
		t.Fatalf("aisan run -- echo hello: code %d, stderr %q", r.code, r.stderr)
	}
	before := slotList(t, env)
	if len(before) != 1 {
		t.Fatalf("after one launch the list is %v; want one slot", before)
	}
	var name string
	for n := range before {
		name = n
	}
	rec := filepath.Join(killHome(env), "slots", name+".json")
	recBefore, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	r := aisanIn(t, wt, append(env, "AISAN_NO_BUS_PROXY=2"), "", "run", "--", "true")
	if r.code == 0 {
		t.Fatalf("aisan run with AISAN_NO_BUS_PROXY=2 succeeded; want it to fail before starting (stderr %q)", r.stderr)
	}
	after, ok := slotList(t, env)[name]
	if !ok {
		t.Fatalf("slot %s vanished from the list after a failed launch (stderr of the launch: %q)", name, r.stderr)
	}
	if after.State != "exited" || after.ExitStatus == nil || *after.ExitStatus != 0 || after.Start != before[name].Start {
		t.Errorf("slot %s after a failed launch: %+v; want the first launch, exited 0", name, after)
	}
	if recAfter, err := os.ReadFile(rec); err != nil || string(recAfter) != string(recBefore) {
		t.Errorf("record after a failed launch:\n%s (%v)\nwant unchanged:\n%s", recAfter, err, recBefore)
	}
	if logs := aisan(t, env, "", "logs", name); !strings.Contains(logs.stdout, "hello") {
		t.Errorf("aisan logs %s: %q; want the first launch's output", name, logs.stdout)
	}
}

// TestKillSlotUnit: the units a record may name are those aisan gives its
// slot; anything else is ignored by the Killer.
func TestKillSlotUnit(t *testing.T) {
	const s = "myrepo-3f9c2a1b-claude"
	for _, c := range []struct {
		slot, kind, unit string
		ok               bool
	}{
		{s, "claude", "aisan-" + s + ".scope", true},
		{s, "claude", "aisan-" + s + "-0a1b2c3d.scope", true}, // the collision variant
		{s, "claude", "aisan-" + s + "-0A1B2C3D.scope", false},
		{s, "claude", "aisan-" + s + "-0a1b2c3.scope", false},
		{s, "claude", "aisan-" + s + "-0a1b2c3d0.scope", false},
		{s, "claude", "aisan-" + s + "-2.scope", false},
		{s, "claude", "aisan-" + s + ".service", false},
		{s, "claude", "aisan-svc-" + s + ".service", false},
		{s, "claude", "aisan-myrepo-3f9c2a1b-codex.scope", false}, // another slot's
		{s, "claude", "app.slice", false},
		{s, "claude", "user@1000.service", false},
		{s, "claude", "aisan-" + s + ".scope/../x.scope", false},
		{s, "claude", "", false},
		{"web", "service", "aisan-svc-web.service", true},
		{"web", "service", "aisan-web.scope", false},
		{"web", "service", "aisan-svc-web-0a1b2c3d.service", false},
		{"web", "service", "aisan-svc-api.service", false},
		{"web", "run", "aisan-svc-web.service", false},
		{"../web", "run", "aisan-../web.scope", false},
	} {
		want := ""
		if c.ok {
			want = c.unit
		}
		if got := launch.SlotUnit(slot.Record{Slot: c.slot, Kind: c.kind, Unit: c.unit}); got != want {
			t.Errorf("SlotUnit(slot %q, kind %q, unit %q) = %q; want %q", c.slot, c.kind, c.unit, got, want)
		}
	}
}
