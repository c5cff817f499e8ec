package tests

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aisan-dev/aisan/jail/launch"
	"github.com/aisan-dev/aisan/jail/slot"
	"github.com/aisan-dev/aisan/systemd"
	"golang.org/x/sys/unix"
)

// keeperOnly returns the one slot of the registry.
func keeperOnly(t *testing.T, env []string) slotEntry {
	t.Helper()
	m := slotList(t, env)
	if len(m) != 1 {
		t.Fatalf("registry lists %d slots, want 1: %+v", len(m), m)
	}
	for _, e := range m {
		return e
	}
	panic("unreachable")
}

// inNamespace lists the host PIDs of the processes in PID namespace ino
// whose command name starts with comm.
func inNamespace(ino uint64, comm string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		var st unix.Stat_t
		if unix.Stat(fmt.Sprintf("/proc/%d/ns/pid", pid), &st) != nil || st.Ino != ino {
			continue
		}
		c, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		if strings.HasPrefix(strings.TrimSpace(string(c)), comm) && slotProcRunning(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// timedRun is runCmd for aisan in dir, with how long it took.
func timedRun(t *testing.T, dir string, env []string, args ...string) (result, time.Duration) {
	t.Helper()
	t0 := time.Now()
	r := aisanIn(t, dir, env, "", args...)
	return r, time.Since(t0)
}

// TestKeeperBackground: an agent that leaves `setsid nohup sleep &` exits;
// the wrapper returns its status at once (not after the sleep), with
// stdout closed (a caller reading it to the end is not held up); the
// sleep lives on in the jail's PID namespace, writes to the transcript,
// and the slot shows as background, held by a keeper (its lock taken,
// so no launch reuses it and 'kill --orphans' leaves it). 'aisan kill'
// ends it: the slot is exited with the agent's status, and the keeper is
// gone. aisan watch's sweep leaves it alone.
func TestKeeperBackground(t *testing.T) {
	requireSlots(t)
	_, env := testEnv(t)
	wt := slotWorktree(t)
	// The leftover prints after the wrapper has returned: that must land
	// in the transcript, not in the wrapper's stdout.
	r, took := timedRun(t, wt, env, "run", "--", "sh", "-c",
		`echo agent-says-hi; setsid sh -c 'sleep 1; echo late-output; exec sleep 300' & exit 3`)
	if r.code != 3 || !strings.Contains(r.stdout, "agent-says-hi") || strings.Contains(r.stdout, "late-output") || r.stderr != "" {
		t.Fatalf("aisan run: code %d, stdout %q, stderr %q; want 3, the agent's line only, no stderr", r.code, r.stdout, r.stderr)
	}
	// The leftover lives 300 s; a loaded machine may still take a while.
	if took > 5*time.Second {
		t.Errorf("the wrapper took %v to return; it must not wait for the leftover", took)
	}
	t.Logf("wrapper returned after %v with a process left in the jail", took)

	e := keeperOnly(t, env)
	if e.State != "background" || e.AgentStatus == nil || *e.AgentStatus != 3 || e.AgentEnd == "" || e.End != "" {
		t.Fatalf("after the agent exited: %+v, want state background, agent_status 3, no end", e)
	}
	if !slotProcRunning(e.WrapperPID) {
		t.Fatalf("the record's holder %d (the keeper) is not running", e.WrapperPID)
	}
	cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", e.WrapperPID))
	if !strings.Contains(string(cmdline), "__keep") {
		t.Errorf("the holder %d is %q, want the keeper (aisan __keep)", e.WrapperPID, cmdline)
	}
	waitFor(t, 5*time.Second, "the leftover's output in aisan logs", func() bool {
		return strings.Contains(aisan(t, env, "", "logs", e.Slot).stdout, "late-output")
	})
	var sleeps []int
	waitFor(t, 5*time.Second, "the leftover sleep in the jail's namespace", func() bool {
		sleeps = inNamespace(e.PidNSInode, "sleep")
		return len(sleeps) == 1
	})

	// The keeper holds the lock: flock(1) cannot take it.
	lock := slotLockPath(t, env, e.Slot)
	if out, err := flockTest(lock); err == nil {
		t.Errorf("flock -n %s succeeded (%s): the slot's lock is not held while its jail lives", lock, out)
	}
	// Not an orphan, and not free.
	if r := aisan(t, env, "", "kill", "--orphans"); r.code != 0 || r.stdout != "" {
		t.Errorf("aisan kill --orphans: code %d, stdout %q, stderr %q; want nothing killed", r.code, r.stdout, r.stderr)
	}
	if r := aisan(t, env, "", "kill", "--orphans", "--signal", "KILL"); r.code != 0 || r.stdout != "" {
		t.Errorf("aisan kill --orphans --signal KILL: code %d, stdout %q; want nothing killed", r.code, r.stdout)
	}
	// aisan watch's sweep (the supervisor over this registry) leaves it
	// alone too, and its reaper calls it busy.
	ctx := testCtx(t)
	w := launch.WatchRegistry{Reg: killRegistry(t, ctx, env)}
	sup := &systemd.Supervisor{Registry: w}
	if events, err := sup.Sweep(ctx); err != nil || len(events) != 0 {
		t.Errorf("a watch sweep: %v %+v; want nothing done to a background slot", err, events)
	}
	if err := w.ReapOrphan(ctx, e.Slot); !errors.Is(err, slot.ErrBusy) {
		t.Errorf("ReapOrphan of a background slot: %v, want busy", err)
	}
	if !slotProcRunning(sleeps[0]) {
		t.Fatal("kill --orphans or watch ended the background jail")
	}
	r2 := aisanIn(t, wt, env, "", "run", "--", "true")
	if r2.code != 0 {
		t.Fatalf("a second launch: code %d, stderr %q", r2.code, r2.stderr)
	}
	m := slotList(t, env)
	if len(m) != 2 || m[e.Slot].State != "background" || m[e.Slot+"-2"].State != "exited" {
		t.Fatalf("after a second launch in the worktree: %+v; want %s still background and %s-2 exited", m, e.Slot, e.Slot)
	}

	keeper := e.WrapperPID
	t0 := time.Now()
	r = aisan(t, env, "", "kill", e.Slot)
	if r.code != 0 || r.stdout != "killed "+e.Slot+"\n" {
		t.Fatalf("aisan kill %s: code %d, stdout %q, stderr %q", e.Slot, r.code, r.stdout, r.stderr)
	}
	t.Logf("aisan kill of the background slot took %v", time.Since(t0))
	after := slotList(t, env)[e.Slot]
	if after.State != "exited" || after.End == "" || after.ExitStatus == nil || *after.ExitStatus != 3 {
		t.Errorf("after aisan kill: %+v, want exited with the agent's status 3 and an end", after)
	}
	if slotProcRunning(sleeps[0]) || slotProcRunning(e.InitPID) {
		t.Error("the jail survived aisan kill")
	}
	waitFor(t, 5*time.Second, "the keeper to exit", func() bool { return !slotProcRunning(keeper) })
	if out, err := flockTest(lock); err != nil {
		t.Errorf("flock -n %s after the end: %v %s; the lock must be free", lock, err, out)
	}
}

// TestKeeperLeftoverEnds: all the agent printed reaches its stdout; when
// the leftover ends by itself, the keeper records the end (the agent's
// status) and exits.
func TestKeeperLeftoverEnds(t *testing.T) {
	requireSlots(t)
	_, env := testEnv(t)
	wt := slotWorktree(t)
	r, took := timedRun(t, wt, env, "run", "--", "sh", "-c", `seq 200000; setsid sh -c 'sleep 4; echo done-late' & exit 0`)
	if r.code != 0 || took > 3*time.Second {
		t.Fatalf("aisan run: code %d after %v, stderr %q; want 0 before the leftover's 4s", r.code, took, r.stderr)
	}
	// All the agent printed reached its stdout before the hand-off.
	if lines := strings.Split(strings.TrimSpace(r.stdout), "\n"); len(lines) != 200000 || lines[len(lines)-1] != "200000" {
		t.Fatalf("the agent's stdout has %d lines, the last %q; want all 200000", len(lines), lines[len(lines)-1])
	}
	e := keeperOnly(t, env)
	if e.State != "background" {
		t.Fatalf("right after the agent exited: %+v, want background", e)
	}
	keeper := e.WrapperPID
	waitFor(t, 10*time.Second, "the slot to end by itself", func() bool {
		return keeperOnly(t, env).State == "exited"
	})
	e = keeperOnly(t, env)
	if e.End == "" || e.ExitStatus == nil || *e.ExitStatus != 0 {
		t.Errorf("after the leftover ended: %+v, want exited 0 with an end", e)
	}
	waitFor(t, 5*time.Second, "the keeper to exit", func() bool { return !slotProcRunning(keeper) })
	if out := aisan(t, env, "", "logs", e.Slot).stdout; !strings.Contains(out, "done-late") {
		t.Errorf("aisan logs: %q, want the leftover's output", out)
	}
}

// TestKeeperNothingLeft: without leftovers nothing changes: the slot is
// exited at once, recorded by the wrapper itself, with no keeper.
func TestKeeperNothingLeft(t *testing.T) {
	requireSlots(t)
	_, env := testEnv(t)
	wt := slotWorktree(t)
	cmd := exec.Command(aisanBin, "run", "--", "sh", "-c", "sleep 0.2 & wait; exit 4")
	cmd.Dir, cmd.Env = wt, append(os.Environ(), env...)
	isolate(cmd)
	t0 := time.Now()
	err := cmd.Run()
	took := time.Since(t0)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 4 {
		t.Fatalf("aisan run: %v, want exit 4", err)
	}
	t.Logf("wrapper returned after %v with nothing left in the jail", took)
	e := keeperOnly(t, env)
	if e.State != "exited" || e.ExitStatus == nil || *e.ExitStatus != 4 || e.AgentEnd != "" || e.AgentStatus != nil {
		t.Errorf("record: %+v, want exited 4 with no agent_end", e)
	}
	if e.WrapperPID != cmd.Process.Pid {
		t.Errorf("the record names holder %d, want the wrapper %d (no keeper)", e.WrapperPID, cmd.Process.Pid)
	}
}

// TestKeeperPTY: the same on a terminal: the agent's last line reaches
// the terminal, the wrapper returns promptly with the terminal restored
// and one line naming the slot, and what the leftover prints on the
// jail's pty afterwards lands in the transcript.
func TestKeeperPTY(t *testing.T) {
	requireSlots(t)
	_, env := testEnv(t)
	term := newTerminal(t, 24, 80)
	before := termios(t, term.slave)
	cmd := exec.Command(aisanBin, "run", "--", "sh", "-c",
		`echo agent-on-pty; setsid sh -c 'sleep 1; echo late-on-pty; exec sleep 300' & exit 5`)
	cmd.Dir, cmd.Env = slotWorktree(t), append(os.Environ(), env...)
	t0 := time.Now()
	term.start(cmd)
	err := cmd.Wait()
	took := time.Since(t0)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 5 {
		t.Fatalf("aisan run on a terminal: %v, want exit 5", err)
	}
	if took > 5*time.Second {
		t.Errorf("the wrapper took %v to return on a terminal", took)
	}
	t.Logf("wrapper on a pty returned after %v with a process left", took)
	term.expect("agent-on-pty")
	e := keeperOnly(t, env)
	term.expect("keep running in slot " + e.Slot)
	after := termios(t, term.slave)
	if after.Lflag != before.Lflag || after.Iflag != before.Iflag || after.Oflag != before.Oflag {
		t.Errorf("terminal not restored after the hand-off")
	}
	if e.State != "background" {
		t.Fatalf("%+v, want background", e)
	}
	waitFor(t, 5*time.Second, "the leftover's pty output in aisan logs", func() bool {
		return strings.Contains(aisan(t, env, "", "logs", e.Slot).stdout, "late-on-pty")
	})
	for _, l := range term.seen {
		if strings.Contains(l, "late-on-pty") {
			t.Errorf("the leftover's output reached the user's terminal: %q", term.seen)
		}
	}
	if r := aisan(t, env, "", "kill", "--signal", "KILL", e.Slot); r.code != 0 {
		t.Fatalf("aisan kill: %d %s", r.code, r.stderr)
	}
	if got := keeperOnly(t, env); got.State != "exited" || got.ExitStatus == nil || *got.ExitStatus != 5 {
		t.Errorf("after kill: %+v, want exited 5", got)
	}
}

// TestKeeperClaudeBackgroundSession: a background session requested from
// a jailed claude (`claude --bg`, against a loopback stand-in for the
// model), while a daemon of the same user runs on the host, runs inside
// that jail, under a daemon of the jail's own: its
// tool call sees the slot's AISAN_JAIL and the jail's init; the host's
// daemon directory gains nothing; the slot shows background after the
// interactive claude has returned, and 'aisan kill' ends the daemon.
func TestKeeperClaudeBackgroundSession(t *testing.T) {
	requireJail(t)
	bin := nodeBin(t, "claude")
	home, _ := testEnv(t)
	dir := worktree(t)
	slot := slotName(dir, "claude")
	out := filepath.Join(t.TempDir(), "bg-view")
	s := newScriptedStandIn(t, []string{`echo "bg:$AISAN_JAIL:$(tr '\0' ' ' </proc/1/cmdline)" > ` + out}, anthropicAPI)
	// claudeTUIHome: past the first-run questions, the worktree trusted
	// (a background session needs that).
	env := append(jailEnv(home, bin), claudeTUIHome(t, home, bin, dir, s)...)
	// A daemon already runs on the host, for the same ~/.claude: a jailed
	// claude must not hand its background session to it.
	host := exec.Command(filepath.Join(bin, "claude"), "daemon", "run", "--origin", "transient")
	host.Env = env
	host.Dir = dir
	background(t, host)
	hostDaemon := fmt.Sprintf("/tmp/cc-daemon-%d", os.Getuid())
	waitFor(t, 20*time.Second, "the host's daemon to listen", func() bool {
		socks, _ := filepath.Glob(filepath.Join(hostDaemon, "*", "control.sock"))
		for _, p := range socks {
			if fi, err := os.Stat(p); err == nil && time.Since(fi.ModTime()) < time.Minute {
				return true
			}
		}
		return false
	})
	before, _ := os.ReadDir(hostDaemon)

	// Traced: a wrapper that does not return says how far it got.
	run := runJailed(t, dir, append(slices.Clone(env), "AISAN_TRACE=1"), "claude", "--bg", "--permission-mode", "default", "--allowedTools", "Bash", "--", "Run the shell commands you are given.")
	t.Logf("claude --bg: exit %d, stdout %q, stderr %q", run.code, run.stdout, run.stderr)
	if run.code != 0 {
		ps, _ := exec.Command("ps", "-u", strconv.Itoa(os.Getuid()), "-o", "pid,ppid,stat,etime,args").Output()
		t.Logf("this user's processes:\n%s", ps)
		t.Fatalf("aisan claude --bg: exit %d; requests: %s", run.code, s.requests())
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		data, err := os.ReadFile(out)
		if err == nil && len(data) > 0 {
			break
		}
		if time.Now().After(deadline) {
			pids := filepath.Join(home, ".aisan", "pids", slot)
			filepath.WalkDir(pids, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					b, _ := os.ReadFile(p)
					if strings.HasSuffix(p, ".json") && strings.Contains(p, "sessions") {
						t.Logf("%s: %.1500s", p, b)
					}
				}
				return nil
			})
			res, ok := s.resultOf(0)
			t.Fatalf("the background session ran no tool call in 30s; requests: %s; result %v %q", s.requests(), ok, res)
		}
		time.Sleep(100 * time.Millisecond)
	}
	data, _ := os.ReadFile(out)
	if want := "bg:" + slot + ":aisan-init"; strings.TrimSpace(string(data)) != want {
		t.Errorf("the background session's shell saw %q, want %q: it must run in the slot's jail", data, want)
	}
	after, _ := os.ReadDir(hostDaemon)
	if len(after) > len(before) {
		t.Errorf("the host's %s gained entries (%d → %d): the jailed claude reached the host's daemon directory", hostDaemon, len(before), len(after))
	}
	e := slotList(t, env)[slot]
	if e.State != "background" {
		t.Fatalf("after claude --bg returned: %+v, want background (its daemon lives on in the jail)", e)
	}
	if len(inNamespace(e.PidNSInode, "claude")) == 0 {
		t.Errorf("no claude process (the daemon) in the jail's namespace")
	}
	if r := aisan(t, env, "", "kill", slot); r.code != 0 {
		t.Fatalf("aisan kill %s: %d %s", slot, r.code, r.stderr)
	}
	if got := slotList(t, env)[slot]; got.State != "exited" {
		t.Errorf("after aisan kill: %+v, want exited", got)
	}
	if n := len(inNamespace(e.PidNSInode, "claude")); n != 0 {
		t.Errorf("%d claude processes survived aisan kill", n)
	}
}

// TestKeeperKeepsBus: the bus proxy outlives the wrapper with the jail:
// a leftover that talks to the session bus after the agent has exited
// (and the wrapper returned) still gets answers through it.
func TestKeeperKeepsBus(t *testing.T) {
	requireSlots(t)
	// The user manager's session bus, which a launch proxies (a private
	// dbus-daemon's socket in /tmp would be reached without the proxy).
	requireUserManager(t)
	_, err := exec.LookPath("dbus-send")
	need(t, "dbus-send (apt-get install dbus)", err)
	if a := os.Getenv("DBUS_SESSION_BUS_ADDRESS"); !strings.HasPrefix(a, "unix:path="+os.Getenv("XDG_RUNTIME_DIR")+"/") {
		need(t, "a session bus in $XDG_RUNTIME_DIR", fmt.Errorf("DBUS_SESSION_BUS_ADDRESS=%q", a))
	}
	call := strings.Join(busListNames, " ")
	// The agent uses the bus, or leaves it to the leftover alone: then
	// nothing has connected before the hand-over, and the keeper's bus
	// must still answer.
	for name, before := range map[string]string{
		"used by the agent": call + ` >/dev/null && echo bus-before; `,
		"first used after":  `echo bus-before; `,
	} {
		t.Run(name, func(t *testing.T) {
			_, env := testEnv(t)
			r := aisanIn(t, slotWorktree(t), env, "", "run", "--", "sh", "-c",
				before+`setsid sh -c 'sleep 1; `+call+` >/dev/null 2>&1 && echo bus-alive || echo bus-dead; exec sleep 300' & exit 0`)
			if r.code != 0 || !strings.Contains(r.stdout, "bus-before") {
				t.Fatalf("aisan run: code %d, stdout %q, stderr %q; want the bus answering the agent", r.code, r.stdout, r.stderr)
			}
			e := keeperOnly(t, env)
			var logs string
			waitFor(t, 10*time.Second, "the leftover's bus call", func() bool {
				logs = aisan(t, env, "", "logs", e.Slot).stdout
				return strings.Contains(logs, "bus-alive") || strings.Contains(logs, "bus-dead")
			})
			if !strings.Contains(logs, "bus-alive") {
				t.Errorf("after the wrapper returned the jail's bus is gone:\n%s", logs)
			}
			if r := aisan(t, env, "", "kill", "--signal", "KILL", e.Slot); r.code != 0 {
				t.Fatalf("aisan kill: %d %s", r.code, r.stderr)
			}
		})
	}
}

// keptBoxScript is the strict box's agent in TestKeeperStrict, and the
// processes it leaves: a model call of its own, one in flight when it
// exits (the upstream holds it ~0.8 s), and, two seconds after the
// wrapper has returned, one more model call and a fetch from an allowed
// host (each prints NAME:HTTP-STATUS), and a planted .git/commondir.
const keptBoxScript = `
call() {
	curl -sS --max-time 20 -o /dev/null -w "$1:%{http_code}" -H 'content-type: application/json' \
		-H "authorization: Bearer $CLAUDE_CODE_OAUTH_TOKEN" \
		-d "{\"model\":\"$1\",\"messages\":[]}" "$ANTHROPIC_BASE_URL/v1/messages"
	echo
}
case "$1" in
agent)
	call before
	setsid sh "$0" slow &
	setsid sh "$0" later &
	sleep 0.3
	exit 5;;
slow)
	call slow;;
later)
	sleep 2
	call after
	if [ -n "$P" ]; then
		echo "host:$(curl -sS --max-time 10 --cacert "$CA" -o /dev/null -w '%{http_code}' https://registry.test:$P/hello)"
		echo "sock:$(awk '$5 ~ /\/egress\/.*\.sock$/ { print $5; exit }' /proc/self/mountinfo)"
	fi
	echo "$PWD/elsewhere" > .git/commondir && echo planted
	exec sleep 300;;
esac
`

// TestKeeperStrict: a strict box whose agent leaves processes behind is
// kept like a deny-list jail, and its keeper serves the box's egress. The
// wrapper returns the agent's status once the model call that was in
// flight has been answered (it is not cut); two seconds after the wrapper
// has gone, a leftover's model call still reaches the upstream, with the
// host's credential attached, and (without --net) a fetch from an allowed
// host passes the host allow-list. 'aisan kill' ends the box: the slot is
// exited with the agent's status, the keeper is gone, and no socket of
// the box is left.
func TestKeeperStrict(t *testing.T) {
	for _, net := range []bool{false, true} {
		t.Run(fmt.Sprintf("net=%v", net), func(t *testing.T) { testKeeperStrict(t, net) })
	}
}

func testKeeperStrict(t *testing.T, withNet bool) {
	repo, home, env := strictRepo(t)
	// In the repository: the box sees it there.
	ca := newTestCA(t, repo, "127.0.0.1", "registry.test")
	const hostToken = "sk-ant-oat01-host-token-for-the-keeper"
	os.MkdirAll(filepath.Join(home, ".claude"), 0o700)
	login := fmt.Sprintf(`{"claudeAiOauth":{"accessToken":%q,"refreshToken":"sk-ant-ort01-keeper-refresh","expiresAt":%d,"scopes":["user:inference"],"subscriptionType":"max"}}`,
		hostToken, time.Now().Add(24*time.Hour).UnixMilli())
	os.WriteFile(filepath.Join(home, ".claude", ".credentials.json"), []byte(login), 0o600)

	var mu sync.Mutex
	seen := map[string]string{}
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Model string }
		json.NewDecoder(r.Body).Decode(&req)
		mu.Lock()
		seen[req.Model] = r.Header.Get("Authorization")
		mu.Unlock()
		if req.Model == "slow" {
			time.Sleep(800 * time.Millisecond)
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"type":"message","content":[]}`))
	}))
	up.TLS = &tls.Config{Certificates: []tls.Certificate{ca.server}}
	up.StartTLS()
	t.Cleanup(up.Close)

	script := filepath.Join(repo, "agent.sh")
	os.WriteFile(script, []byte(keptBoxScript), 0o755)
	env = append(env, "AISAN_ANTHROPIC_UPSTREAM="+up.URL, "SSL_CERT_FILE="+ca.pemPath)
	opts := []string{"--egress", "anthropic"}
	if withNet {
		opts = append(opts, "--net")
	} else {
		reg := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("hello")) }))
		reg.TLS = &tls.Config{Certificates: []tls.Certificate{ca.server}}
		reg.StartTLS()
		t.Cleanup(reg.Close)
		port := strconv.Itoa(reg.Listener.Addr().(*net.TCPAddr).Port)
		env = append(env, "AISAN_RESOLVE=registry.test=127.0.0.1")
		opts = append(opts, "--allow-host", "registry.test:"+port, "--env", "CA="+ca.pemPath, "--env", "P="+port)
	}
	t0 := time.Now()
	r := strict(t, repo, env, opts, "sh", script, "agent")
	took := time.Since(t0)
	if r.code != 5 || !strings.Contains(r.stdout, "before:200") {
		t.Fatalf("aisan run --strict: code %d, stdout %q, stderr %q; want 5 and the agent's own call answered", r.code, r.stdout, r.stderr)
	}
	if took > 5*time.Second {
		t.Errorf("the wrapper took %v to return; it must not wait for the leftovers", took)
	}
	t.Logf("wrapper returned after %v", took)
	e := keeperOnly(t, env)
	if e.State != "background" || e.Mode != "strict" || e.AgentStatus == nil || *e.AgentStatus != 5 {
		t.Fatalf("the strict box after its agent exited: %+v; want background, mode strict, agent_status 5", e)
	}
	cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", e.WrapperPID))
	if !strings.Contains(string(cmdline), "__keep") {
		t.Fatalf("the holder %d is %q, want the keeper", e.WrapperPID, cmdline)
	}
	if bytes.Contains(cmdline, []byte(hostToken)) || bytes.Contains(cmdline, []byte(repo)) {
		t.Errorf("the keeper's command line carries a secret or project text: %q", cmdline)
	}
	want := []string{"slow:200", "after:200"}
	if !withNet {
		want = append(want, "host:200")
	}
	var logs string
	waitFor(t, 15*time.Second, "the leftovers' calls in aisan logs", func() bool {
		logs = aisan(t, env, "", "logs", e.Slot).stdout
		return strings.Contains(logs, "planted")
	})
	if !withNet {
		sock := strings.TrimSpace(strings.TrimPrefix(lineWith(logs, "sock:"), "sock:"))
		if fi, err := os.Lstat(sock); err != nil || fi.Mode().Type() != os.ModeSocket {
			t.Errorf("the box's egress socket %q on the host, after the wrapper returned: %v %v", sock, fi, err)
		}
	}
	for _, w := range want {
		if !strings.Contains(logs, w) {
			t.Errorf("the transcript lacks %q (the call failed, or was cut at the hand-over):\n%s", w, logs)
		}
	}
	mu.Lock()
	for _, m := range []string{"before", "slow", "after"} {
		if seen[m] != "Bearer "+hostToken {
			t.Errorf("the upstream got %q for the %s call; want the host's token", seen[m], m)
		}
	}
	mu.Unlock()
	if eg := aisan(t, env, "", "logs", "--egress", e.Slot); strings.Count(eg.stdout, "/v1/messages") < 3 || strings.Contains(eg.stdout, hostToken) {
		t.Errorf("the egress log of the kept box:\n%s", eg.stdout)
	}

	keeper := e.WrapperPID
	if r := aisan(t, env, "", "kill", e.Slot); r.code != 0 {
		t.Fatalf("aisan kill: code %d, stderr %q", r.code, r.stderr)
	}
	waitFor(t, 10*time.Second, "the keeper to record the end", func() bool {
		return keeperOnly(t, env).State == "exited"
	})
	e = keeperOnly(t, env)
	if e.ExitStatus == nil || *e.ExitStatus != 5 {
		t.Errorf("after aisan kill: %+v; want exited with the agent's status 5", e)
	}
	waitFor(t, 5*time.Second, "the keeper to exit", func() bool { return !slotProcRunning(keeper) })
	if _, err := os.Lstat(filepath.Join(repo, ".git", "commondir")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the commondir the leftover planted is still in place after the box: %v", err)
	}
	if logs := aisan(t, env, "", "logs", e.Slot).stdout; !strings.Contains(logs, "held for review") || !strings.Contains(logs, ".git/commondir") {
		t.Errorf("the transcript does not say the planted commondir was held:\n%s", logs)
	}
	if sock := strings.TrimSpace(strings.TrimPrefix(lineWith(logs, "sock:"), "sock:")); sock != "" {
		if _, err := os.Lstat(sock); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the box's egress socket %s is left after its end: %v", sock, err)
		}
	}
}

// TestKeeperStrictCannotServe: when the keeper cannot serve a strict
// box's egress (here the host's Claude login is gone by the time the
// agent exits, so the keeper's backend cannot start), the box is not
// handed over: the wrapper goes on serving it and returns once the
// jail's last process has ended, with the agent's status, the leftover's
// output and its model call answered (refused for want of a credential,
// by the wrapper's proxy).
func TestKeeperStrictCannotServe(t *testing.T) {
	repo, home, env := strictRepo(t)
	ca := newTestCA(t, repo, "127.0.0.1")
	creds := filepath.Join(home, ".claude", ".credentials.json")
	os.MkdirAll(filepath.Dir(creds), 0o700)
	login := fmt.Sprintf(`{"claudeAiOauth":{"accessToken":"sk-ant-oat01-gone","refreshToken":"sk-ant-ort01-gone","expiresAt":%d,"scopes":["user:inference"],"subscriptionType":"max"}}`,
		time.Now().Add(24*time.Hour).UnixMilli())
	os.WriteFile(creds, []byte(login), 0o600)
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"type":"message","content":[]}`))
	}))
	up.TLS = &tls.Config{Certificates: []tls.Certificate{ca.server}}
	up.StartTLS()
	t.Cleanup(up.Close)
	first, gone := filepath.Join(repo, "first-done"), filepath.Join(repo, "login-gone")
	call := `curl -sS --max-time 20 -o /dev/null -w "$0:%{http_code}" -H "content-type: application/json" -d "{}" "$ANTHROPIC_BASE_URL/v1/messages"; echo`
	script := `sh -c '` + call + `' before; : > ` + first + `
while [ ! -e ` + gone + ` ]; do sleep 0.05; done
setsid sh -c 'sleep 1.5; ` + call + `' after &
exit 4`
	env = append(env, "AISAN_ANTHROPIC_UPSTREAM="+up.URL, "SSL_CERT_FILE="+ca.pemPath)
	done := make(chan result, 1)
	go func() { done <- strict(t, repo, env, []string{"--egress", "anthropic"}, "sh", "-c", script) }()
	// The agent's own call is served; then the login goes, and the agent
	// is told to exit.
	waitFor(t, 10*time.Second, "the box's first call", func() bool {
		_, err := os.Stat(first)
		return err == nil
	})
	if err := os.Rename(creds, creds+".away"); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(gone, nil, 0o644)
	t0 := time.Now()
	var r result
	select {
	case r = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the wrapper did not return")
	}
	took := time.Since(t0)
	if r.code != 4 || !strings.Contains(r.stdout, "before:200") {
		t.Fatalf("aisan run --strict: code %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	after := lineWith(r.stdout, "after:")
	if after == "" || after == "after:000" {
		t.Errorf("the leftover's call was not answered by the wrapper (%q); stdout %q", after, r.stdout)
	}
	// The leftover sleeps 1.5 s after the agent exits.
	if took < 1200*time.Millisecond {
		t.Errorf("the wrapper returned %v after the agent was told to exit, before the leftover ended: it handed over to a keeper that could not serve", took)
	}
	e := keeperOnly(t, env)
	if e.State != "exited" || e.ExitStatus == nil || *e.ExitStatus != 4 {
		t.Errorf("after the box: %+v; want exited 4", e)
	}
}

// flockTest is how other tools test a slot's lock: flock(1) -n on a
// descriptor opened for writing, since the lock file is write-only (a
// jail must not be able to open it at all).
func flockTest(lock string) ([]byte, error) {
	return exec.Command("sh", "-c", `flock -n 9 9>>"$1"`, "sh", lock).CombinedOutput()
}
