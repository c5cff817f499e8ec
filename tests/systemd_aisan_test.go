package tests

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
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

// These tests drive scopes, limits, services and the supervisor through
// the aisan CLI (issue #5). They need the launcher's wiring of the systemd
// package: until 'aisan run' records a unit, requireScopes skips them with
// that reason (and fails them under AISAN_REQUIRE_INTEGRATION=1).

// probeScopes checks once that the launcher is wired to the systemd
// package: with a user manager, 'aisan run' records its slot's unit;
// without one, it says that it runs without a scope.
var probeScopes = sync.OnceValue(func() error {
	home, err := os.MkdirTemp("", "aisan-scopeprobe-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)
	wt := filepath.Join(home, "wt")
	if err := os.Mkdir(wt, 0o755); err != nil {
		return err
	}
	env := append(os.Environ(), "HOME="+home, "AISAN_HOME="+filepath.Join(home, ".aisan"))
	run := exec.Command(aisanBin, "run", "--", "true")
	run.Dir, run.Env = wt, env
	out, err := run.CombinedOutput()
	if err != nil {
		return fmt.Errorf("aisan run -- true: %v: %s", err, out)
	}
	if probeUserManager() != nil {
		if !strings.Contains(string(out), "no systemd user manager") {
			return errors.New("'aisan run' does not say that it runs without a scope yet (issue #5 wiring)")
		}
		return nil
	}
	list := exec.Command(aisanBin, "list", "--json")
	list.Env = env
	out, err = list.Output()
	if err != nil {
		return fmt.Errorf("aisan list --json: %v", err)
	}
	if !strings.Contains(string(out), `"unit"`) {
		return errors.New("'aisan run' does not record a systemd unit for its slot yet (issue #5 wiring)")
	}
	return nil
})

// requireScopes skips (or fails) unless jails, the registry, a user
// manager and the launcher's scope wiring are all there.
func requireScopes(t *testing.T) {
	t.Helper()
	requireSlots(t)
	requireUserManager(t)
	need(t, "aisan run wired to systemd scopes", probeScopes())
}

// requireScopeWiring is requireScopes for tests that take the user
// manager away themselves.
func requireScopeWiring(t *testing.T) {
	t.Helper()
	requireSlots(t)
	need(t, "aisan run wired to systemd scopes", probeScopes())
}

// jailPIDs returns the processes in the PID namespace with inode ino.
func jailPIDs(t *testing.T, ino uint64) []int {
	t.Helper()
	want := fmt.Sprintf("pid:[%d]", ino)
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
		if l, err := os.Readlink(filepath.Join("/proc", e.Name(), "ns", "pid")); err == nil && l == want && slotProcRunning(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// scopeOf returns the unit's status, failing the test on error.
func scopeOf(t *testing.T, m *systemd.Manager, unit string) systemd.UnitStatus {
	t.Helper()
	st, err := m.Status(testCtx(t), unit)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestScopeAisanRun: 'aisan run' puts the whole jail in aisan-<slot>.scope,
// with a description naming the slot, 'aisan list' shows the unit, and
// 'aisan kill' empties the scope while the wrapper survives to record 137.
func TestScopeAisanRun(t *testing.T) {
	requireScopes(t)
	m := connectManager(t)
	_, env := testEnv(t)
	wt := slotWorktree(t)
	cmd, _, e := slotLaunch(t, wt, env, "sh", "-c", "sleep 300 & sleep 300 & exec sleep 300")
	unit := systemd.UnitName(e.Slot)
	if e.Unit != unit {
		t.Fatalf("aisan list shows unit %q for slot %s; want %q", e.Unit, e.Slot, unit)
	}
	st := scopeOf(t, m, unit)
	if st.ActiveState != "active" {
		t.Fatalf("scope %s is %s; want active", unit, st.ActiveState)
	}
	if d := unitDescription(t, testCtx(t), m, unit); !strings.Contains(d, e.Slot) {
		t.Errorf("scope description %q does not name the slot %s", d, e.Slot)
	}
	waitFor(t, 5*time.Second, "the jail's three sleeps", func() bool { return len(jailPIDs(t, e.PidNSInode)) >= 4 })
	inScope := cgroupProcs(t, st.ControlGroup)
	for _, p := range jailPIDs(t, e.PidNSInode) {
		if !slices.Contains(inScope, p) {
			cg, _ := systemd.ProcCgroup(p)
			t.Errorf("jail process %d is in %s, not in the scope", p, cg)
		}
	}
	if slices.Contains(inScope, cmd.Process.Pid) {
		t.Errorf("the wrapper %d is in the jail's scope; 'aisan kill' would kill it too", cmd.Process.Pid)
	}

	r := aisan(t, env, "", "kill", "--signal", "KILL", e.Slot)
	if r.code != 0 {
		t.Fatalf("aisan kill %s: code %d, stderr %q", e.Slot, r.code, r.stderr)
	}
	if code := slotWait(t, cmd); code != 137 {
		t.Errorf("the wrapper exited %d; want 137", code)
	}
	ctx, cancel := context.WithTimeout(testCtx(t), 10*time.Second)
	defer cancel()
	if err := m.WaitInactive(ctx, unit); err != nil {
		t.Fatal(err)
	}
	if pids := jailPIDs(t, e.PidNSInode); len(pids) != 0 {
		t.Errorf("jail processes %v survived aisan kill", pids)
	}
}

// TestScopeAisanFirstFork: the scope holds the jail before its agent can
// fork. The agent's first act is a fork whose child reads its own cgroup
// at birth; it forks a sleeper at once too. Over many launches the
// newborn is in the slot's scope every time, and from the host each
// process of the jail (the agent, its children, the init and bwrap, the
// wrapper's child) is in the scope, the wrapper not. Every fifth launch the user
// manager is stopped for a moment as soon as bwrap runs, so that the
// scope's job is still pending when bwrap has set the jail up: only a
// launch that holds its agent until the job is done passes those.
func TestScopeAisanFirstFork(t *testing.T) {
	requireScopes(t)
	m := connectManager(t)
	_, env := testEnv(t)
	wt := slotWorktree(t)
	mgr := userManagerPID(t, m)
	const runs = 25
	for i := range runs {
		var paused chan struct{}
		cmd := exec.Command(aisanBin, "run", "--", "sh", "-c", "cat /proc/self/cgroup; sleep 300 & echo forked; wait")
		cmd.Dir = wt
		cmd.Env = append(os.Environ(), env...)
		out := &syncBuffer{}
		cmd.Stdout, cmd.Stderr = out, out
		background(t, cmd)
		if i%5 == 0 {
			paused = make(chan struct{})
			go func() {
				defer close(paused)
				pauseAtBwrap(t, cmd.Process.Pid, mgr, 300*time.Millisecond)
			}()
		}
		waitFor(t, 20*time.Second, "the agent's first forks", func() bool { return strings.Contains(out.String(), "forked") })
		if paused != nil {
			<-paused
		}
		e := slotRunningFor(t, env, cmd)
		if e.Unit == "" || e.Unit != systemd.UnitName(e.Slot) {
			t.Fatalf("run %d: slot %s records unit %q", i, e.Slot, e.Unit)
		}
		var born string
		for l := range strings.Lines(out.String()) {
			if cg, ok := strings.CutPrefix(strings.TrimSpace(l), "0::"); ok {
				born = cg
			}
		}
		if path.Base(born) != e.Unit {
			t.Errorf("run %d: the agent's first child was born in %q, not in %s", i, born, e.Unit)
		}
		pids := jailPIDs(t, e.PidNSInode)
		if len(pids) < 3 {
			t.Errorf("run %d: the jail shows %d processes; want the init, the shell and its sleeper", i, len(pids))
		}
		bwrap, err := parentPID(e.InitPID)
		if err != nil {
			t.Fatal(err)
		}
		if up, err := parentPID(bwrap); err != nil || up != cmd.Process.Pid {
			t.Errorf("run %d: the init's parent %d has parent %d (%v), not the wrapper %d", i, bwrap, up, err, cmd.Process.Pid)
		}
		for _, p := range append(pids, bwrap) {
			if cg, err := systemd.ProcCgroup(p); err != nil || path.Base(cg) != e.Unit {
				t.Errorf("run %d: jail process %d is in %q (%v), not in %s", i, p, cg, err, e.Unit)
			}
		}
		if cg, _ := systemd.ProcCgroup(cmd.Process.Pid); path.Base(cg) == e.Unit {
			t.Errorf("run %d: the wrapper is in the jail's scope", i)
		}
		if r := aisan(t, env, "", "kill", "--signal", "KILL", e.Slot); r.code != 0 {
			t.Fatalf("aisan kill %s: code %d, stderr %q", e.Slot, r.code, r.stderr)
		}
		slotWait(t, cmd)
		if t.Failed() {
			return
		}
	}
}

// userManagerPID is the user manager's own process: the one in its
// init.scope.
func userManagerPID(t *testing.T, m *systemd.Manager) int {
	t.Helper()
	st := scopeOf(t, m, "init.scope")
	pids := cgroupProcs(t, st.ControlGroup)
	if len(pids) != 1 {
		t.Fatalf("the user manager's init.scope holds %v; want its one process", pids)
	}
	return pids[0]
}

// pauseAtBwrap stops the user manager (SIGSTOP) for d as soon as a bwrap
// runs below the wrapper, then lets it go on.
func pauseAtBwrap(t *testing.T, wrapper, manager int, d time.Duration) {
	end := time.Now().Add(10 * time.Second)
	for time.Now().Before(end) {
		for _, c := range childPIDs(wrapper) {
			if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", c)); strings.TrimSpace(string(comm)) == "bwrap" {
				syscall.Kill(manager, syscall.SIGSTOP)
				time.Sleep(d)
				syscall.Kill(manager, syscall.SIGCONT)
				return
			}
		}
		time.Sleep(100 * time.Microsecond)
	}
	t.Errorf("no bwrap appeared below the wrapper %d", wrapper)
}

// childPIDs are the children of pid's threads.
func childPIDs(pid int) []int {
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	var out []int
	for _, task := range tasks {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, task.Name()))
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

// parentPID is pid's parent, from /proc/PID/stat.
func parentPID(pid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 2 {
		return 0, fmt.Errorf("/proc/%d/stat: no parent", pid)
	}
	return strconv.Atoi(f[1])
}

// TestScopeAisanJailCannotKillScopes: from inside a jail, neither its own
// scope nor another slot's can be killed: systemctl, D-Bus and cgroup.kill
// all fail, and both jails live on.
func TestScopeAisanJailCannotKillScopes(t *testing.T) {
	requireScopes(t)
	m := connectManager(t)
	_, env := testEnv(t)
	victimCmd, _, victim := slotLaunch(t, slotWorktree(t), env, "sleep", "300")
	t.Cleanup(func() { aisan(t, env, "", "kill", victim.Slot) })

	vunit := systemd.UnitName(victim.Slot)
	attack := `
self="aisan-$AISAN_JAIL.scope"
for u in "$self" "$0"; do
	systemctl --user kill --signal=KILL "$u" 2>&1 && echo "systemctl killed $u"
	systemctl --user stop "$u" 2>&1 && echo "systemctl stopped $u"
	if command -v dbus-send >/dev/null; then
		dbus-send --session --print-reply --dest=org.freedesktop.systemd1 /org/freedesktop/systemd1 \
			org.freedesktop.systemd1.Manager.KillUnit "string:$u" string:all int32:9 2>&1 && echo "dbus killed $u"
	fi
	for f in /sys/fs/cgroup/user.slice/*/*/*/"$u"/cgroup.kill /sys/fs/cgroup/unified/user.slice/*/*/*/"$u"/cgroup.kill; do
		[ -e "$f" ] || continue
		if (echo 1 > "$f") 2>/dev/null; then echo "cgroup.kill written: $f"; else echo "cgroup.kill refused: $f"; fi
	done
done
echo attack-over
`
	r := aisanIn(t, slotWorktree(t), env, "", "run", "--", "sh", "-c", attack, vunit)
	if r.code != 0 || !strings.Contains(r.stdout, "attack-over") {
		t.Fatalf("the attacking jail did not finish (it may have killed itself): code %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if n := strings.Count(r.stdout, "cgroup.kill refused: "); n != 2 {
		t.Errorf("the attack found %d of the two scopes' cgroup.kill files; want both (and both refused)\n%s", n, r.stdout)
	}
	for _, bad := range []string{"systemctl killed", "systemctl stopped", "dbus killed", "cgroup.kill written"} {
		if strings.Contains(r.stdout, bad) {
			t.Errorf("from inside the jail: %q\n%s", bad, r.stdout)
		}
	}
	if st := scopeOf(t, m, vunit); st.ActiveState != "active" || !slotProcRunning(victim.InitPID) {
		t.Errorf("the victim's scope is %s after the attack; want active with its jail running", st.ActiveState)
	}
	if !slotProcRunning(victimCmd.Process.Pid) {
		t.Error("the victim's wrapper exited")
	}
	t.Logf("attack output:\n%s", r.stdout)
}

// TestScopeAisanLimits: --memory-max and --tasks-max (over AISAN_LIMITS
// defaults) reach the scope; where the controllers are not delegated,
// 'aisan run' says so once.
func TestScopeAisanLimits(t *testing.T) {
	requireScopes(t)
	m := connectManager(t)
	_, env := testEnv(t)
	env = append(env, "AISAN_LIMITS=memory=1G tasks=32")
	cmd := exec.Command(aisanBin, "run", "--memory-max", "256M", "--tasks-max", "64", "--", "sleep", "300")
	cmd.Dir = slotWorktree(t)
	cmd.Env = append(os.Environ(), env...)
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	background(t, cmd)
	var e slotEntry
	waitFor(t, 20*time.Second, "the slot to run", func() bool {
		for _, x := range slotList(t, env) {
			if x.State == "running" && x.WrapperPID == cmd.Process.Pid && x.Unit != "" {
				e = x
				return true
			}
		}
		return false
	})
	t.Cleanup(func() { aisan(t, env, "", "kill", e.Slot) })
	ctx := testCtx(t)
	for name, want := range map[string]uint64{"MemoryMax": 256 << 20, "TasksMax": 64} {
		v, err := m.UnitTypeProperty(ctx, e.Unit, "Scope", name)
		if err != nil {
			t.Fatal(err)
		}
		if v != want {
			t.Errorf("scope %s = %v; want %d", name, v, want)
		}
	}
	delegated, err := m.DelegatedControllers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	missing := systemd.MissingControllers(systemd.Limits{MemoryMax: 1, TasksMax: 1}, delegated)
	warnings := strings.Count(out.String(), "would be ignored")
	if len(missing) == 0 && warnings != 0 {
		t.Errorf("controllers are delegated, yet aisan warns:\n%s", out)
	}
	if len(missing) > 0 && warnings != 1 {
		t.Errorf("controllers %v are not delegated; want exactly one warning, got %d:\n%s", missing, warnings, out)
	}
}

// TestScopeAisanNoManager: without XDG_RUNTIME_DIR (SSH without linger,
// su), 'aisan run' launches without a scope, says so in one short line,
// and 'aisan kill' still ends the jail through its PID namespace.
func TestScopeAisanNoManager(t *testing.T) {
	requireScopeWiring(t)
	_, env := testEnv(t)
	env = append(env, "XDG_RUNTIME_DIR=", "DBUS_SESSION_BUS_ADDRESS=")
	cmd, out, e := slotLaunch(t, slotWorktree(t), env, "sleep", "300")
	if e.Unit != "" {
		t.Errorf("slot %s records unit %q without a user manager", e.Slot, e.Unit)
	}
	r := aisan(t, env, "", "kill", "--signal", "KILL", e.Slot)
	if r.code != 0 {
		t.Fatalf("aisan kill %s: code %d, stderr %q", e.Slot, r.code, r.stderr)
	}
	if code := slotWait(t, cmd); code != 137 {
		t.Errorf("the wrapper exited %d; want 137", code)
	}
	if slotProcRunning(e.InitPID) {
		t.Errorf("the jail's init %d survived", e.InitPID)
	}
	// Of aisan's own lines, one is about the scope; the other is the
	// wrapper's note that 'aisan kill' ended the slot.
	var lines []string
	for l := range strings.Lines(out.String()) {
		if strings.HasPrefix(l, "aisan: ") && !strings.Contains(l, "was ended by 'aisan kill'") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 || !strings.Contains(lines[0], "no systemd user manager (XDG_RUNTIME_DIR is not set)") || !strings.Contains(lines[0], "aisan preflight") {
		t.Errorf("want one short line naming the cause and preflight, got:\n%s", out)
	}
	// With AISAN_NO_SCOPE=1 nothing at all.
	r = aisanIn(t, slotWorktree(t), append(env, "AISAN_NO_SCOPE=1"), "", "run", "--", "true")
	if r.code != 0 || r.stderr != "" {
		t.Errorf("AISAN_NO_SCOPE=1 without a manager: code %d, stderr %q; want silence", r.code, r.stderr)
	}
}

// TestScopeAisanRequireScope: AISAN_REQUIRE_SCOPE=1 turns the missing
// manager into a refusal before anything runs.
func TestScopeAisanRequireScope(t *testing.T) {
	requireScopeWiring(t)
	home, env := testEnv(t)
	env = append(env, "XDG_RUNTIME_DIR=", "DBUS_SESSION_BUS_ADDRESS=", "AISAN_REQUIRE_SCOPE=1")
	marker := filepath.Join(home, "ran")
	r := aisanIn(t, slotWorktree(t), env, "", "run", "--", "touch", marker)
	if r.code == 0 || !strings.Contains(r.stderr, "aisan: error: ") || !strings.Contains(r.stderr, "AISAN_REQUIRE_SCOPE") ||
		!strings.Contains(r.stderr, "aisan: hint: ") {
		t.Errorf("aisan run with AISAN_REQUIRE_SCOPE=1 and no manager: code %d, stderr %q; want a refusal with hints", r.code, r.stderr)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the command ran despite the refusal")
	}
}

// TestScopeAisanWatchReapsOrphan: a wrapper killed with SIGKILL leaves its
// jail in its scope; 'aisan watch' kills the scope and records the end.
func TestScopeAisanWatchReapsOrphan(t *testing.T) {
	requireScopes(t)
	m := connectManager(t)
	_, env := testEnv(t)
	cmd, _, e := slotLaunch(t, slotWorktree(t), env, "sh", "-c", "trap '' HUP; sleep 300")
	t.Cleanup(func() { m.KillUnit(context.Background(), e.Unit, syscall.SIGKILL) })
	cmd.Process.Signal(syscall.SIGKILL)
	slotWait(t, cmd)
	if got := slotList(t, env)[e.Slot]; got.State != "orphaned" {
		t.Fatalf("after the wrapper died: %+v; want orphaned", got)
	}
	watch := exec.Command(aisanBin, "watch")
	watch.Env = append(os.Environ(), env...)
	background(t, watch)
	waitFor(t, 30*time.Second, "aisan watch to reap the orphan", func() bool {
		return slotList(t, env)[e.Slot].State == "exited"
	})
	if st := scopeOf(t, m, e.Unit); st.Active() {
		t.Errorf("the orphan's scope is %s after aisan watch reaped it", st.ActiveState)
	}
	if slotProcRunning(e.InitPID) {
		t.Errorf("the orphan's init %d survived", e.InitPID)
	}
}

// TestScopeAisanServiceCap: 'aisan spawn-service' runs a headless command
// as aisan-svc-<name>.service, visible in 'aisan list' as a service, its
// output in its transcript, stopped by systemd at its cap.
func TestScopeAisanServiceCap(t *testing.T) {
	requireScopes(t)
	m := connectManager(t)
	_, env := testEnv(t)
	name := fmt.Sprintf("cap%d", os.Getpid())
	unit := systemd.ServiceName(name)
	stoppedAtCleanup(t, m, unit)
	r := aisanIn(t, slotWorktree(t), env, "", "spawn-service", name, "--max-runtime", "2s", "--", "sh", "-c", "echo service-says-hi; sleep 300")
	if r.code != 0 {
		t.Fatalf("aisan spawn-service: code %d, stderr %q", r.code, r.stderr)
	}
	var e slotEntry
	for _, x := range slotList(t, env) {
		if x.Unit == unit {
			e = x
		}
	}
	if e.Kind != "service" {
		t.Fatalf("aisan list has no service with unit %s: %v", unit, slotList(t, env))
	}
	ctx, cancel := context.WithTimeout(testCtx(t), 15*time.Second)
	defer cancel()
	if err := m.WaitInactive(ctx, unit); err != nil {
		t.Fatal(err)
	}
	// Stopped at its cap, it leaves no failed unit behind, and its end
	// is recorded.
	if st := scopeOf(t, m, unit); st.ActiveState == "failed" || st.LoadState == "loaded" {
		t.Errorf("the capped service's unit is %s/%s; want it gone, not failed", st.LoadState, st.ActiveState)
	}
	waitFor(t, 5*time.Second, "the service's end to be recorded", func() bool { return slotList(t, env)[e.Slot].End != "" })

	// Killed, likewise.
	name2 := name + "k"
	unit2 := systemd.ServiceName(name2)
	stoppedAtCleanup(t, m, unit2)
	if r := aisanIn(t, slotWorktree(t), env, "", "spawn-service", name2, "--", "sleep", "300"); r.code != 0 {
		t.Fatalf("aisan spawn-service: code %d, stderr %q", r.code, r.stderr)
	}
	if r := aisan(t, env, "", "kill", name2); r.code != 0 {
		t.Fatalf("aisan kill %s: code %d, stderr %q", name2, r.code, r.stderr)
	}
	ctx2, cancel2 := context.WithTimeout(testCtx(t), 15*time.Second)
	defer cancel2()
	if err := m.WaitInactive(ctx2, unit2); err != nil {
		t.Fatal(err)
	}
	if st := scopeOf(t, m, unit2); st.ActiveState == "failed" || st.LoadState == "loaded" {
		t.Errorf("the killed service's unit is %s/%s; want it gone, not failed", st.LoadState, st.ActiveState)
	}
	if logs := aisan(t, env, "", "logs", e.Slot); !strings.Contains(logs.stdout, "service-says-hi") {
		t.Errorf("aisan logs %s: %q; want the service's output", e.Slot, logs.stdout)
	}
}

// TestScopeAisanInstallServicePrint: the unit install-service would write
// runs this very binary.
func TestScopeAisanInstallServicePrint(t *testing.T) {
	_, env := testEnv(t)
	r := aisan(t, env, "", "install-service", "--print")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("aisan install-service --print: code %d, stderr %q", r.code, r.stderr)
	}
	self, err := filepath.EvalSymlinks(aisanBin)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\nExecStart=" + self + " watch\n", "\n[Install]\nWantedBy=default.target\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("unit lacks %q:\n%s", want, r.stdout)
		}
	}
	r = aisan(t, env, "", "install-service", "stray")
	if r.code != 2 || !strings.Contains(r.stderr, `unexpected argument "stray"`) {
		t.Errorf("aisan install-service stray: code %d, stderr %q", r.code, r.stderr)
	}
}

// TestScopeAisanInstallServiceElsewhere: a unit directory the manager does
// not read (HOME differs from the manager's) is an error that says so, not
// a unit that silently never runs, and nothing is written.
func TestScopeAisanInstallServiceElsewhere(t *testing.T) {
	requireUserManager(t)
	home, env := testEnv(t)
	r := aisan(t, env, "", "install-service")
	dir := filepath.Join(home, ".config", "systemd", "user")
	if r.code != 1 || !strings.Contains(r.stderr, "the user manager does not read unit files from "+dir+" (it reads ") {
		t.Errorf("aisan install-service with HOME=%s: code %d, stdout %q, stderr %q", home, r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("%s was created for a unit the manager would never read", dir)
	}
}

// TestScopeAisanInstallServiceNoManager: without a manager the error
// carries the hints.
func TestScopeAisanInstallServiceNoManager(t *testing.T) {
	_, env := testEnv(t)
	env = append(env, "XDG_RUNTIME_DIR=", "DBUS_SESSION_BUS_ADDRESS=")
	r := aisan(t, env, "", "install-service")
	want := "aisan: error: install-service: no systemd user manager: XDG_RUNTIME_DIR is not set\n"
	if r.code != 1 || !strings.HasPrefix(r.stderr, want) || !strings.Contains(r.stderr, "aisan: hint: ") {
		t.Errorf("aisan install-service without a manager: code %d, stderr %q; want %q and hints", r.code, r.stderr, want)
	}
}

// TestScopeAisanInstallUninstallService: the pair as a user runs it,
// with the home the manager reads: install-service writes, enables and
// starts the unit, with its drop-in directories; uninstall-service stops
// and disables it and removes the file and the unit's own empty drop-in
// directories, and says so; run again, it has nothing to do.
func TestScopeAisanInstallUninstallService(t *testing.T) {
	requireUserManager(t)
	realHome := os.Getenv("HOME")
	units := filepath.Join(realHome, ".config", "systemd", "user")
	unit := filepath.Join(units, "aisan-watch.service")
	if _, err := os.Lstat(unit); err == nil {
		t.Skipf("%s is installed already: this test would replace it", unit)
	}
	state := t.TempDir()
	env := []string{"HOME=" + realHome, "AISAN_HOME=" + state, "XDG_CONFIG_HOME=", "XDG_DATA_HOME="}
	t.Cleanup(func() { aisan(t, env, "", "uninstall-service") })
	r := aisan(t, env, "", "install-service")
	if r.code != 0 || !strings.Contains(r.stdout, "wrote "+unit) || !strings.Contains(r.stdout, "started aisan-watch.service") {
		t.Fatalf("aisan install-service: code %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	m := connectManager(t)
	ctx := testCtx(t)
	if st, err := m.Status(ctx, "aisan-watch.service"); err != nil || !st.Active() {
		t.Errorf("aisan-watch.service after install-service: %+v, %v; want it active", st, err)
	}
	if v, err := m.UnitProperty(ctx, "aisan-watch.service", "UnitFileState"); err != nil || v != "enabled" {
		t.Errorf("aisan-watch.service UnitFileState = %v, %v; want enabled", v, err)
	}
	dropIns := []string{filepath.Join(units, "aisan-watch.service.d"), filepath.Join(realHome, ".local", "share", "systemd", "user", "aisan-watch.service.d")}
	present(t, "install-service", dropIns...)

	r = aisan(t, env, "", "uninstall-service")
	if r.code != 0 || r.stdout != "stopped and disabled aisan-watch.service, and removed "+unit+"\n" {
		t.Fatalf("aisan uninstall-service: code %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if st, err := m.Status(ctx, "aisan-watch.service"); err == nil && st.Active() {
		t.Errorf("aisan-watch.service is still active after uninstall-service: %+v", st)
	}
	if _, err := os.Lstat(unit); err == nil {
		t.Errorf("%s is left after uninstall-service", unit)
	}
	for _, d := range dropIns {
		if _, err := os.Lstat(d); err == nil {
			t.Errorf("the empty drop-in directory %s is left after uninstall-service", d)
		}
	}
	r = aisan(t, env, "", "uninstall-service")
	if r.code != 0 || r.stdout != "aisan-watch.service is not installed in "+units+"; nothing to do\n" {
		t.Errorf("aisan uninstall-service again: code %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}
