package tests

// Issue #4, the filtered session bus. Two layers:
//
//   - TestBusProxy*: the jail/busproxy package on its own, with bwrap run
//     directly: a private dbus-daemon, services written here, the real
//     xdg-dbus-proxy, and the real systemd user manager of make test.
//   - TestAisanRunBus* and TestAisanExplainBus: the same promises through
//     the aisan CLI, which wires the package into the launcher.
//
// The D-Bus services and the "wrapper" whose death must end the proxy are
// this test binary, re-executed (see init): the test user has no Go
// toolchain to build helpers at run time.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sddbus "github.com/coreos/go-systemd/v22/dbus"
	"github.com/godbus/dbus/v5"

	"github.com/aisan-dev/aisan/jail/busproxy"
)

// Re-exec roles of the test binary.
const (
	// envTestService names the bus name the re-executed binary owns.
	envTestService = "AISAN_TEST_DBUS_SERVICE"
	// envTestServiceLog is the file where the service records every method
	// call that reaches it, after a first "ready" line.
	envTestServiceLog = "AISAN_TEST_DBUS_LOG"
	// envTestWrapper makes the re-executed binary start a proxy for the
	// slot dir it names, print the proxy's PID, and wait to be killed.
	envTestWrapper = "AISAN_TEST_BUS_WRAPPER"
)

func init() {
	// Runs before TestMain, so a re-executed helper never builds aisan or
	// runs tests.
	if name := os.Getenv(envTestService); name != "" {
		os.Exit(runBusService(name, os.Getenv(envTestServiceLog)))
	}
	if slot := os.Getenv(envTestWrapper); slot != "" {
		os.Exit(runBusWrapper(slot))
	}
}

// Names and answers of the test services.
const (
	busNotifyName   = "org.freedesktop.Notifications"
	busSystemdName  = "org.freedesktop.systemd1"
	busPortalName   = "org.freedesktop.portal.Desktop"
	busNotifyServer = "aisan-test-notifyd"
)

// busPingService is exported on every test service: Ping answers the
// service's bus name.
type busPingService struct{ name string }

func (s busPingService) Ping() (string, *dbus.Error) { return s.name, nil }

// busNotifyService answers the one Notifications method dbus-send can call
// (Notify takes an a{sv} that dbus-send cannot write).
type busNotifyService struct{}

func (busNotifyService) GetServerInformation() (name, vendor, version, spec string, err *dbus.Error) {
	return busNotifyServer, "aisan", "1", "1.2", nil
}

// busSystemdImpostor stands in for the user manager: it answers the calls
// that would stop or kill another agent's scope, as if they had worked.
type busSystemdImpostor struct{}

func (busSystemdImpostor) StopUnit(name, mode string) (dbus.ObjectPath, *dbus.Error) {
	return "/org/freedesktop/systemd1/job/1", nil
}

func (busSystemdImpostor) KillUnit(name, who string, signal int32) *dbus.Error { return nil }

func runBusService(name, logPath string) int {
	logf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, "test service:", err)
		return 1
	}
	var mu sync.Mutex
	record := func(line string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintln(logf, line)
	}
	// The interceptor sees every message before dispatch, so a call is
	// recorded even when no exported method matches it.
	conn, err := dbus.ConnectSessionBus(dbus.WithIncomingInterceptor(func(m *dbus.Message) {
		if m.Type != dbus.TypeMethodCall {
			return
		}
		iface, _ := m.Headers[dbus.FieldInterface].Value().(string)
		member, _ := m.Headers[dbus.FieldMember].Value().(string)
		sender, _ := m.Headers[dbus.FieldSender].Value().(string)
		record(fmt.Sprintf("call %s.%s from %s", iface, member, sender))
	}))
	if err != nil {
		fmt.Fprintln(os.Stderr, "test service: connecting to the session bus:", err)
		return 1
	}
	type export struct {
		v     any
		path  dbus.ObjectPath
		iface string
	}
	exports := []export{{busPingService{name}, "/", "org.aisan.Test"}}
	switch name {
	case busNotifyName:
		exports = append(exports, export{busNotifyService{}, "/org/freedesktop/Notifications", busNotifyName})
	case busSystemdName:
		exports = append(exports, export{busSystemdImpostor{}, "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager"})
	}
	for _, e := range exports {
		if err := conn.Export(e.v, e.path, e.iface); err != nil {
			fmt.Fprintln(os.Stderr, "test service: export:", err)
			return 1
		}
	}
	reply, err := conn.RequestName(name, dbus.NameFlagDoNotQueue)
	if err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		fmt.Fprintf(os.Stderr, "test service: could not own %s: reply %v, %v\n", name, reply, err)
		return 1
	}
	record("ready")
	select {} // until the test kills the process group
}

func runBusWrapper(slot string) int {
	facts := busproxy.Gather(os.LookupEnv, slot)
	plan, err := busproxy.Decide(os.LookupEnv, facts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "wrapper:", err)
		return 1
	}
	p, err := busproxy.Start(context.Background(), plan)
	if err != nil {
		fmt.Fprintln(os.Stderr, "wrapper:", err)
		return 1
	}
	fmt.Printf("%d\n", p.Pid())
	select {} // until SIGKILL
}

// busEnv is what the tests need on top of a private bus.
type busEnv struct {
	dir     string // private to the test, short enough for socket paths
	addr    string // the private bus's address
	sock    string // its socket path
	proxy   string // xdg-dbus-proxy
	empty   string // an empty file, what a mask binds
	selfBin string // this test binary, to re-execute
}

// newBus starts a private dbus-daemon for the test; abstract puts it at an
// abstract address instead of a path.
func newBus(t *testing.T, abstract bool) *busEnv {
	t.Helper()
	requireJail(t)
	proxy, err := exec.LookPath(busproxy.ProxyName)
	need(t, "xdg-dbus-proxy (apt-get install xdg-dbus-proxy)", err)
	_, err = exec.LookPath("dbus-daemon")
	need(t, "dbus-daemon (apt-get install dbus)", err)
	_, err = exec.LookPath("dbus-send")
	need(t, "dbus-send (apt-get install dbus)", err)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// t.TempDir's long names could pass the 108-byte socket path limit.
	dir, err := os.MkdirTemp("", "aisan-bus-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	b := &busEnv{dir: dir, proxy: proxy, selfBin: self, empty: filepath.Join(dir, "empty")}
	if err := os.WriteFile(b.empty, nil, 0o444); err != nil {
		t.Fatal(err)
	}
	listen := "unix:path=" + filepath.Join(dir, "bus")
	if abstract {
		listen = "unix:abstract=" + dir + "/abstract-bus"
	}
	var out busBuffer
	daemon := exec.Command("dbus-daemon", "--session", "--nofork", "--nopidfile", "--print-address=1", "--address="+listen)
	daemon.Stdout = &out
	background(t, daemon)
	waitFor(t, 5*time.Second, "dbus-daemon to print its address", func() bool {
		return strings.Contains(out.String(), "\n")
	})
	b.addr = strings.TrimSpace(out.String())
	if !abstract {
		b.sock = filepath.Join(dir, "bus")
	}
	return b
}

// busBuffer is a bytes.Buffer safe to read while a child writes to it.
type busBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *busBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *busBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// service starts a test service owning name on the private bus and
// returns the file where it records calls.
func (b *busEnv) service(t *testing.T, name string) string {
	t.Helper()
	log := filepath.Join(b.dir, name+".log")
	cmd := exec.Command(b.selfBin)
	cmd.Env = append(os.Environ(), envTestService+"="+name, envTestServiceLog+"="+log, busproxy.EnvAddress+"="+b.addr)
	var stderr busBuffer
	cmd.Stderr = &stderr
	background(t, cmd)
	waitFor(t, 10*time.Second, name+" to own its name", func() bool {
		data, _ := os.ReadFile(log)
		return strings.HasPrefix(string(data), "ready\n") || stderr.String() != ""
	})
	if s := stderr.String(); s != "" {
		t.Fatalf("test service %s failed: %s", name, s)
	}
	return log
}

// busCalls returns the calls a service recorded, one per line.
func busCalls(t *testing.T, log string) []string {
	t.Helper()
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	return lines[1:] // after "ready"
}

// env returns a lookupEnv for Decide that sees only the private bus.
func (b *busEnv) env(extra map[string]string) func(string) (string, bool) {
	m := map[string]string{busproxy.EnvAddress: b.addr}
	for k, v := range extra {
		m[k] = v
	}
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

// plan decides for the private bus, with the slot dir made for it.
func (b *busEnv) plan(t *testing.T, facts busproxy.HostFacts, extra map[string]string) busproxy.Plan {
	t.Helper()
	if facts.SlotDir == "" {
		facts.SlotDir = filepath.Join(b.dir, "slot")
		if err := os.MkdirAll(facts.SlotDir, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if b.sock != "" {
		facts.Sockets = append(facts.Sockets, b.sock)
	}
	p, err := busproxy.Decide(b.env(extra), facts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// busStartProxy starts the plan's proxy and closes it at cleanup, checking
// that it ends by itself when its pipe closes.
func busStartProxy(t *testing.T, plan busproxy.Plan) *busproxy.Proxy {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p, err := busproxy.Start(ctx, plan)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("proxy ready after %v: %q", p.ReadyAfter, busproxy.Argv(plan))
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("closing the proxy: %v", err)
		}
	})
	return p
}

// inJail runs argv in a bwrap jail shaped like aisan's deny-list jail
// (host root, own PID namespace), with the plan's bus mounts and address,
// plus extra bwrap options.
func (b *busEnv) inJail(t *testing.T, plan busproxy.Plan, extra []string, argv ...string) result {
	t.Helper()
	args := []string{"--bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--unshare-pid", "--die-with-parent"}
	args = append(args, extra...)
	for _, m := range plan.Mounts() {
		if m.Src == "" {
			args = append(args, "--ro-bind", b.empty, m.Dst)
		} else {
			args = append(args, "--bind", m.Src, m.Dst)
		}
	}
	switch {
	case plan.Mode == busproxy.None:
	case plan.JailAddress == "":
		args = append(args, "--unsetenv", busproxy.EnvAddress)
	default:
		args = append(args, "--setenv", busproxy.EnvAddress, plan.JailAddress)
	}
	args = append(args, "--")
	args = append(args, argv...)
	return busRun(t, "bwrap", args...)
}

// busRun runs a command to completion and returns its output and status.
func busRun(t *testing.T, name string, args ...string) result {
	t.Helper()
	return runCmd(t, "", nil, "", name, args...)
}

// dbus-send command lines used inside jails.
func busSend(dest, path, method string, args ...string) []string {
	return append([]string{"dbus-send", "--session", "--print-reply", "--dest=" + dest, path, method}, args...)
}

var (
	busServerInfo = busSend(busNotifyName, "/org/freedesktop/Notifications", busNotifyName+".GetServerInformation")
	busListNames  = busSend("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.ListNames")
)

func busStopUnit(unit string) []string {
	return busSend(busSystemdName, "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager.StopUnit", "string:"+unit, "string:replace")
}

func busKillUnit(unit string) []string {
	return busSend(busSystemdName, "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager.KillUnit", "string:"+unit, "string:all", "int32:9")
}

// busDenied is the error xdg-dbus-proxy gives for a name the jail may
// not see: to the jail, the name does not exist.
const busDenied = "org.freedesktop.DBus.Error.ServiceUnknown"

// TestBusProxyFilters proves the allow-list with the real proxy: a name on
// the default list answers from inside the jail (so does a portal, through
// the org.freedesktop.portal.* pattern); org.freedesktop.systemd1 does
// not, the call never reaches its owner, and the name is not even listed.
func TestBusProxyFilters(t *testing.T) {
	b := newBus(t, false)
	notifyLog := b.service(t, busNotifyName)
	systemdLog := b.service(t, busSystemdName)
	portalLog := b.service(t, busPortalName)
	plan := b.plan(t, busproxy.HostFacts{ProxyPath: b.proxy}, nil)
	if plan.Mode != busproxy.Filtered || plan.JailSocket != b.sock || len(plan.Warnings) != 0 {
		t.Fatalf("plan = %+v, want filtered over %s without warnings", plan, b.sock)
	}
	busStartProxy(t, plan)

	t.Run("allowed name answers", func(t *testing.T) {
		r := b.inJail(t, plan, nil, busServerInfo...)
		if r.code != 0 || !strings.Contains(r.stdout, `string "`+busNotifyServer+`"`) {
			t.Fatalf("GetServerInformation from the jail: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
		}
		if got := busCalls(t, notifyLog); len(got) != 1 || !strings.Contains(got[0], "GetServerInformation") {
			t.Errorf("Notifications service recorded %q, want the one call", got)
		}
	})

	t.Run("pattern admits portals", func(t *testing.T) {
		r := b.inJail(t, plan, nil, busSend(busPortalName, "/", "org.aisan.Test.Ping")...)
		if r.code != 0 || !strings.Contains(r.stdout, busPortalName) {
			t.Fatalf("Ping to %s from the jail: exit %d\nstdout: %s\nstderr: %s", busPortalName, r.code, r.stdout, r.stderr)
		}
		if got := busCalls(t, portalLog); len(got) != 1 {
			t.Errorf("portal recorded %q, want one call", got)
		}
	})

	t.Run("systemd1 is unreachable", func(t *testing.T) {
		for _, argv := range [][]string{busStopUnit("other-agent.scope"), busKillUnit("other-agent.scope"), busSend(busSystemdName, "/", "org.aisan.Test.Ping")} {
			r := b.inJail(t, plan, nil, argv...)
			if r.code == 0 || !strings.Contains(r.stderr, busDenied) {
				t.Errorf("%s from the jail: exit %d, want the proxy's %s\nstdout: %s\nstderr: %s", argv[5], r.code, busDenied, r.stdout, r.stderr)
			}
		}
		if got := busCalls(t, systemdLog); len(got) != 0 {
			t.Fatalf("the systemd1 impostor received busCalls from the jail: %q", got)
		}
		// Control: outside the jail the impostor answers and records, so
		// the empty record above means something.
		r := busRun(t, "env", append([]string{busproxy.EnvAddress + "=" + b.addr}, busStopUnit("other-agent.scope")...)...)
		if r.code != 0 {
			t.Fatalf("StopUnit outside the jail: exit %d: %s", r.code, r.stderr)
		}
		waitFor(t, 5*time.Second, "the impostor to record the outside call", func() bool { return len(busCalls(t, systemdLog)) == 1 })
	})

	t.Run("ListNames hides systemd1", func(t *testing.T) {
		r := b.inJail(t, plan, nil, busListNames...)
		if r.code != 0 {
			t.Fatalf("ListNames from the jail: exit %d: %s", r.code, r.stderr)
		}
		if strings.Contains(r.stdout, busSystemdName) {
			t.Errorf("ListNames from the jail shows %s:\n%s", busSystemdName, r.stdout)
		}
		if !strings.Contains(r.stdout, busNotifyName) {
			t.Errorf("ListNames from the jail lacks %s:\n%s", busNotifyName, r.stdout)
		}
	})

	t.Run("cannot own systemd1", func(t *testing.T) {
		r := b.inJail(t, plan, nil, busSend("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.RequestName",
			"string:"+busSystemdName, "uint32:4")...)
		if r.code == 0 {
			t.Errorf("RequestName %s from the jail succeeded:\n%s", busSystemdName, r.stdout)
		}
	})
}

// TestBusProxyMasked proves both ways to a masked bus: no xdg-dbus-proxy
// (with the message saying what to install) and AISAN_NO_BUS_PROXY=1
// (silently). Nothing on the bus answers from inside.
func TestBusProxyMasked(t *testing.T) {
	b := newBus(t, false)
	b.service(t, busNotifyName)
	for _, tc := range []struct {
		name     string
		facts    busproxy.HostFacts
		env      map[string]string
		wantWarn string
	}{
		{"not installed", busproxy.HostFacts{}, nil, "apt-get install xdg-dbus-proxy"},
		{"AISAN_NO_BUS_PROXY=1", busproxy.HostFacts{ProxyPath: b.proxy}, map[string]string{busproxy.EnvNoProxy: "1"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan := b.plan(t, tc.facts, tc.env)
			if plan.Mode != busproxy.Masked {
				t.Fatalf("mode = %s, want masked", plan.Mode)
			}
			switch {
			case tc.wantWarn == "" && len(plan.Warnings) != 0:
				t.Errorf("warnings %q, want none", plan.Warnings)
			case tc.wantWarn != "" && (len(plan.Warnings) != 1 || !strings.Contains(plan.Warnings[0], tc.wantWarn)):
				t.Errorf("warnings %q, want one saying %q", plan.Warnings, tc.wantWarn)
			}
			r := b.inJail(t, plan, nil, busServerInfo...)
			if r.code == 0 {
				t.Fatalf("GetServerInformation through a masked bus succeeded:\n%s", r.stdout)
			}
			// The socket path the host's clients use is an empty file in
			// the jail, not the bus.
			r = b.inJail(t, plan, nil, "stat", "-c", "%F %s", b.sock)
			if got := strings.TrimSpace(r.stdout); got != "regular empty file 0" {
				t.Errorf("in the jail, %s is %q, want an empty file", b.sock, got)
			}
		})
	}
}

// TestBusProxyAbstract proves the abstract-address case: the proxy
// filters clients that follow DBUS_SESSION_BUS_ADDRESS, the plan warns,
// and (the caveat the warning states) the abstract socket itself stays
// reachable from the jail.
func TestBusProxyAbstract(t *testing.T) {
	b := newBus(t, true)
	systemdLog := b.service(t, busSystemdName)
	b.service(t, busNotifyName)
	plan := b.plan(t, busproxy.HostFacts{ProxyPath: b.proxy}, nil)
	if plan.Mode != busproxy.Filtered || !plan.Abstract || len(plan.Warnings) != 1 || !strings.Contains(plan.Warnings[0], "no mount can hide") {
		t.Fatalf("plan = %+v, want filtered, abstract, one warning", plan)
	}
	busStartProxy(t, plan)
	if r := b.inJail(t, plan, nil, busServerInfo...); r.code != 0 {
		t.Errorf("GetServerInformation through the proxy: exit %d: %s", r.code, r.stderr)
	}
	if r := b.inJail(t, plan, nil, busStopUnit("x.scope")...); r.code == 0 || !strings.Contains(r.stderr, busDenied) {
		t.Errorf("StopUnit through the proxy: exit %d, want %s: %s", r.code, busDenied, r.stderr)
	}
	if got := busCalls(t, systemdLog); len(got) != 0 {
		t.Fatalf("the impostor received busCalls through the proxy: %q", got)
	}
	// The residual channel, asserted so that a change in it is noticed.
	argv := append([]string{"env", busproxy.EnvAddress + "=" + b.addr}, busSend(busSystemdName, "/", "org.aisan.Test.Ping")...)
	if r := b.inJail(t, plan, nil, argv...); r.code != 0 {
		t.Logf("the abstract socket was not reachable from the jail (exit %d: %s); the warning may be stale", r.code, r.stderr)
	} else if len(busCalls(t, systemdLog)) != 1 {
		t.Errorf("a call over the abstract socket succeeded but the impostor did not record it")
	}
}

// TestBusProxyLifetime proves that the proxy never outlives its wrapper:
// SIGKILL the wrapper and the proxy is gone within a second.
func TestBusProxyLifetime(t *testing.T) {
	b := newBus(t, false)
	slot := filepath.Join(b.dir, "slot")
	if err := os.Mkdir(slot, 0o700); err != nil {
		t.Fatal(err)
	}
	wrapper := exec.Command(b.selfBin)
	wrapper.Env = append(os.Environ(), envTestWrapper+"="+slot, busproxy.EnvAddress+"="+b.addr)
	var out, stderr busBuffer
	wrapper.Stdout, wrapper.Stderr = &out, &stderr
	background(t, wrapper)
	waitFor(t, 10*time.Second, "the wrapper to start its proxy", func() bool {
		return strings.Contains(out.String(), "\n") || stderr.String() != ""
	})
	pid, err := strconv.Atoi(strings.TrimSpace(out.String()))
	if err != nil {
		t.Fatalf("wrapper printed %q, stderr %q", out.String(), stderr.String())
	}
	if busProcessGone(pid) {
		t.Fatalf("proxy %d is not running before the wrapper dies", pid)
	}
	if err := syscall.Kill(wrapper.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Second, fmt.Sprintf("proxy %d to exit after its wrapper's SIGKILL", pid), func() bool { return busProcessGone(pid) })
	if r := busRun(t, "dbus-send", "--address=unix:path="+filepath.Join(slot, "bus"), "--print-reply",
		"--dest=org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.ListNames"); r.code == 0 {
		t.Errorf("the dead proxy's socket still answers")
	}
}

// busProcessGone reports whether pid no longer runs: no such process, or a
// zombie nobody has reaped yet (it holds no sockets and runs nothing).
func busProcessGone(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// The state follows the parenthesised comm, which may hold spaces.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] == 'Z' || s[i+2] == 'X'
}

// TestBusProxyUserManager proves the denial against the real systemd user
// manager: a scope the test created outside survives StopUnit and KillUnit
// sent from inside the jail, and systemctl --user fails there.
func TestBusProxyUserManager(t *testing.T) {
	requireJail(t)
	requireUserManager(t)
	proxy, err := exec.LookPath(busproxy.ProxyName)
	need(t, "xdg-dbus-proxy (apt-get install xdg-dbus-proxy)", err)
	scope, sleepPid := busScope(t)

	slot, err := os.MkdirTemp("", "aisan-bus-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(slot) })
	facts := busproxy.Gather(os.LookupEnv, slot)
	if facts.ProxyPath != proxy {
		t.Fatalf("Gather found %q, PATH has %q", facts.ProxyPath, proxy)
	}
	plan, err := busproxy.Decide(os.LookupEnv, facts)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Mode != busproxy.Filtered {
		t.Fatalf("plan = %+v, want filtered", plan)
	}
	busStartProxy(t, plan)

	// The manager's private socket is the launcher's other denial; without
	// it systemctl would not need the bus at all.
	b := &busEnv{empty: filepath.Join(slot, "empty")}
	if err := os.WriteFile(b.empty, nil, 0o444); err != nil {
		t.Fatal(err)
	}
	hidePrivate := []string{"--tmpfs", filepath.Join(os.Getenv("XDG_RUNTIME_DIR"), "systemd")}

	// Control: outside, the manager answers on the same bus.
	if r := busRun(t, "dbus-send", busSend(busSystemdName, "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager.GetUnit", "string:"+scope)[1:]...); r.code != 0 {
		t.Fatalf("GetUnit %s outside the jail: exit %d: %s", scope, r.code, r.stderr)
	}
	for _, tc := range []struct {
		argv    []string
		wantErr string // in stderr; the proxy's own error for dbus-send
	}{
		{busStopUnit(scope), busDenied},
		{busKillUnit(scope), busDenied},
		// sd-bus cannot even talk through xdg-dbus-proxy 0.1.4; either way
		// systemctl must fail.
		{[]string{"systemctl", "--user", "stop", scope}, ""},
		{[]string{"systemctl", "--user", "kill", "--signal=KILL", scope}, ""},
	} {
		r := b.inJail(t, plan, hidePrivate, tc.argv...)
		switch {
		case r.code == 0:
			t.Errorf("%q from the jail succeeded:\n%s", tc.argv, r.stdout)
		case !strings.Contains(r.stderr, tc.wantErr):
			t.Errorf("%q from the jail failed without %q: %s", tc.argv, tc.wantErr, r.stderr)
		default:
			t.Logf("%q from the jail failed as it should: %s", tc.argv, strings.TrimSpace(r.stderr))
		}
	}
	if r := b.inJail(t, plan, hidePrivate, busListNames...); strings.Contains(r.stdout, busSystemdName) {
		t.Errorf("ListNames from the jail shows %s", busSystemdName)
	}
	if state := busUnitState(t, scope); state != "active" {
		t.Errorf("scope %s is %q after the jail's attempts, want active", scope, state)
	}
	if busProcessGone(sleepPid) {
		t.Errorf("the scope's process %d is gone", sleepPid)
	}
}

// busScope starts a sleep, puts it in a new transient scope of the user
// manager, and stops the scope at cleanup. It returns the scope's name and
// the sleep's PID.
func busScope(t *testing.T) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := sddbus.NewUserConnectionContext(ctx)
	if err != nil {
		t.Fatalf("connecting to the user manager: %v", err)
	}
	t.Cleanup(conn.Close)
	sleep := exec.Command("sleep", "300")
	background(t, sleep)
	var rnd [4]byte
	rand.Read(rnd[:])
	scope := "aisan-bustest-" + hex.EncodeToString(rnd[:]) + ".scope"
	done := make(chan string, 1)
	if _, err := conn.StartTransientUnitContext(ctx, scope, "fail", []sddbus.Property{
		sddbus.PropPids(uint32(sleep.Process.Pid)),
		sddbus.PropDescription("aisan bus test: must survive the jail"),
	}, done); err != nil {
		t.Fatalf("starting scope %s: %v", scope, err)
	}
	select {
	case res := <-done:
		if res != "done" {
			t.Fatalf("starting scope %s: job %s", scope, res)
		}
	case <-ctx.Done():
		t.Fatalf("starting scope %s: %v", scope, ctx.Err())
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn.StopUnitContext(ctx, scope, "replace", nil)
	})
	if state := busUnitState(t, scope); state != "active" {
		t.Fatalf("scope %s is %q right after starting, want active", scope, state)
	}
	return scope, sleep.Process.Pid
}

// busUnitState asks the user manager, over a fresh connection, for a unit's
// ActiveState.
func busUnitState(t *testing.T, unit string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := sddbus.NewUserConnectionContext(ctx)
	if err != nil {
		t.Fatalf("connecting to the user manager: %v", err)
	}
	defer conn.Close()
	p, err := conn.GetUnitPropertyContext(ctx, unit, "ActiveState")
	if err != nil {
		t.Fatalf("reading %s's ActiveState: %v", unit, err)
	}
	s, _ := p.Value.Value().(string)
	return s
}

// The tests below go through the aisan CLI. They pass once the launcher
// starts the proxy (issue #4); they say what the launcher gets wrong.

// busAisanEnv is the environment for aisan with the private bus as the
// session bus.
func busAisanEnv(t *testing.T, b *busEnv, extra ...string) []string {
	_, env := testEnv(t)
	env = append(env, busproxy.EnvAddress+"="+b.addr)
	return append(env, extra...)
}

// busShellStatus returns the aisan arguments that run each argv in turn in
// a shell inside the jail and print "statusN=CODE" after it, so that a
// failing bus call is told apart from a failing launch.
func busShellStatus(argvs ...[]string) []string {
	var script []string
	for i, argv := range argvs {
		quoted := make([]string, len(argv))
		for j, a := range argv {
			quoted[j] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		script = append(script, fmt.Sprintf("%s; echo status%d=$?", strings.Join(quoted, " "), i))
	}
	return []string{"run", "--", "sh", "-c", strings.Join(script, "\n")}
}

func TestAisanRunBusFiltered(t *testing.T) {
	b := newBus(t, false)
	b.service(t, busNotifyName)
	systemdLog := b.service(t, busSystemdName)
	r := aisan(t, busAisanEnv(t, b), "", busShellStatus(busServerInfo, busStopUnit("other.scope"), busListNames)...)
	if r.code != 0 {
		t.Fatalf("aisan run: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, busNotifyServer) || !strings.Contains(r.stdout, "status0=0") {
		t.Errorf("GetServerInformation through aisan run did not answer:\n%s\nstderr: %s", r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "status1=1") || !strings.Contains(r.stderr, busDenied) {
		t.Errorf("StopUnit through aisan run was not denied by the proxy:\n%s\nstderr: %s", r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "status2=0") || strings.Contains(r.stdout, `"`+busSystemdName+`"`) {
		t.Errorf("ListNames through aisan run failed or shows %s:\n%s", busSystemdName, r.stdout)
	}
	if got := busCalls(t, systemdLog); len(got) != 0 {
		t.Errorf("the systemd1 impostor received busCalls from aisan run: %q", got)
	}
	if strings.Contains(r.stderr, "xdg-dbus-proxy") {
		t.Errorf("a filtered launch printed a bus message:\n%s", r.stderr)
	}
}

func TestAisanRunBusMasked(t *testing.T) {
	b := newBus(t, false)
	b.service(t, busNotifyName)
	r := aisan(t, busAisanEnv(t, b, busproxy.EnvNoProxy+"=1"), "", busShellStatus(busServerInfo)...)
	if r.code != 0 || strings.Contains(r.stdout, "status0=0") || strings.Contains(r.stdout, busNotifyServer) {
		t.Errorf("with AISAN_NO_BUS_PROXY=1 the bus answered, or the launch failed: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stderr, "xdg-dbus-proxy") {
		t.Errorf("AISAN_NO_BUS_PROXY=1 printed a message about the proxy:\n%s", r.stderr)
	}
}

// TestAisanRunBusNoProxyInstalled hides xdg-dbus-proxy from PATH: the
// launch still works, the bus is masked, and stderr says once what to
// install.
func TestAisanRunBusNoProxyInstalled(t *testing.T) {
	b := newBus(t, false)
	b.service(t, busNotifyName)
	bin := busPathWithout(t, busproxy.ProxyName)
	r := aisan(t, busAisanEnv(t, b, "PATH="+bin), "", busShellStatus(busServerInfo)...)
	if r.code != 0 || !strings.Contains(r.stdout, "status0=") {
		t.Fatalf("the launch failed without xdg-dbus-proxy: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout, "status0=0") {
		t.Errorf("the bus answered although it should be masked:\n%s", r.stdout)
	}
	if n := strings.Count(r.stderr, "apt-get install xdg-dbus-proxy"); n != 1 {
		t.Errorf("stderr says what to install %d times, want once:\n%s", n, r.stderr)
	}
}

// busPathWithout returns a directory of symlinks to every program in the
// usual bin directories except name, to use as PATH.
func busPathWithout(t *testing.T, name string) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{"/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin", "/usr/local/go/bin"} {
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			if e.Name() == name {
				continue
			}
			// The first directory wins, as in PATH.
			os.Symlink(filepath.Join(d, e.Name()), filepath.Join(dir, e.Name()))
		}
	}
	return dir
}

// onlyBwrap returns a PATH whose one bwrap is the stand-in in dir: dir,
// then the system's directories without bwrap (busPathWithout). A
// stand-in in a directory the user can write runs only when PATH has no
// other bwrap (see package hostprog), so a test that plays a broken bwrap
// must hide the real one.
func onlyBwrap(t *testing.T, dir string) string {
	t.Helper()
	return "PATH=" + dir + string(os.PathListSeparator) + busPathWithout(t, "bwrap")
}

func TestAisanRunBusNoBus(t *testing.T) {
	requireJail(t)
	_, env := testEnv(t)
	rtDir, err := os.MkdirTemp("", "aisan-rt-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(rtDir) })
	// AISAN_NO_SCOPE keeps the (legitimate) no-user-manager warning out
	// of what this test reads: it is about the bus.
	env = append(env, busproxy.EnvAddress+"=", "XDG_RUNTIME_DIR="+rtDir, "AISAN_NO_SCOPE=1")
	r := aisan(t, env, "", "run", "--", "true")
	if r.code != 0 {
		t.Fatalf("aisan run without a session bus: exit %d\nstderr: %s", r.code, r.stderr)
	}
	for _, s := range []string{"xdg-dbus-proxy", "session bus", "abstract"} {
		if strings.Contains(r.stderr, s) {
			t.Errorf("without a session bus, stderr mentions %q:\n%s", s, r.stderr)
		}
	}
}

func TestAisanRunBusBadTalk(t *testing.T) {
	b := newBus(t, false)
	r := aisan(t, busAisanEnv(t, b, busproxy.EnvTalk+"=org.freedesktop.Notifications org.*"), "", "run", "--", "true")
	if r.code == 0 || !strings.Contains(r.stderr, `"org.*"`) || !strings.Contains(r.stderr, "AISAN_BUS_TALK") {
		t.Errorf("a bad AISAN_BUS_TALK entry: exit %d, want a failure naming \"org.*\"\nstderr: %s", r.code, r.stderr)
	}
}

func TestAisanRunBusAbstract(t *testing.T) {
	b := newBus(t, true)
	b.service(t, busNotifyName)
	b.service(t, busSystemdName)
	r := aisan(t, busAisanEnv(t, b), "", busShellStatus(busServerInfo, busStopUnit("x.scope"))...)
	if r.code != 0 {
		t.Fatalf("aisan run with an abstract bus: exit %d\nstderr: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "status0=0") || !strings.Contains(r.stdout, "status1=1") {
		t.Errorf("through the proxy, Notifications must answer and systemd1 must not:\n%s\nstderr: %s", r.stdout, r.stderr)
	}
	if n := strings.Count(r.stderr, "no mount can hide"); n != 1 {
		t.Errorf("the abstract-socket warning appears %d times, want once:\n%s", n, r.stderr)
	}
}

// TestAisanRunBusOnDemand: a launch starts no proxy until something in
// the jail connects to the bus. The agent is running and has not touched
// the bus: no xdg-dbus-proxy (and no relay) runs under aisan. Then it
// calls a service, which answers through a proxy that aisan's relay
// started; and when aisan is SIGKILLed, the relay and the proxy are gone
// within a second.
func TestAisanRunBusOnDemand(t *testing.T) {
	b := newBus(t, false)
	b.service(t, busNotifyName)
	j := startBusOnCue(t, aisanBin, busAisanEnv(t, b), "exec sleep 60")
	aisanPid := j.cmd.Process.Pid
	// Without the gate the proxy is up before bwrap even starts; give a
	// late one time to show anyway.
	time.Sleep(300 * time.Millisecond)
	if pid := busDescendantNamed(aisanPid, busproxy.ProxyName); pid != 0 {
		t.Fatalf("xdg-dbus-proxy (pid %d) runs under aisan before anything in the jail used the bus", pid)
	}
	if got := j.call(t); !strings.Contains(got, "status=0") || !strings.Contains(got, busNotifyServer) {
		t.Fatalf("the jail's first bus call did not get its answer:\n%s", got)
	}
	proxyPid := busDescendantNamed(aisanPid, busproxy.ProxyName)
	if proxyPid == 0 {
		t.Fatal("the bus answered, but no xdg-dbus-proxy runs under aisan")
	}
	relayPid := busParent(proxyPid)
	if relayPid == aisanPid || relayPid == 0 {
		t.Fatalf("the proxy's parent is %d, aisan is %d: want aisan's relay in between", relayPid, aisanPid)
	}
	if err := syscall.Kill(aisanPid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Second, fmt.Sprintf("relay %d and proxy %d to exit after aisan's SIGKILL", relayPid, proxyPid), func() bool {
		return busProcessGone(relayPid) && busProcessGone(proxyPid)
	})
}

// TestAisanRunBusAfterUpgrade: the relay starts from the binary that
// made the launch, even when the file at its path was replaced after the
// launch began (an upgrade): the jail's first bus call, made after the
// swap, answers, and the new file is never run.
func TestAisanRunBusAfterUpgrade(t *testing.T) {
	b := newBus(t, false)
	b.service(t, busNotifyName)
	data, err := os.ReadFile(aisanBin)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin, ran := filepath.Join(dir, "aisan"), filepath.Join(dir, "new-binary-ran")
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	j := startBusOnCue(t, bin, busAisanEnv(t, b, "AISAN_NO_SCOPE=1"), "")
	// The upgrade: a new file renamed over the old path.
	next := bin + ".new"
	if err := os.WriteFile(next, []byte("#!/bin/sh\ntouch "+ran+"\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(next, bin); err != nil {
		t.Fatal(err)
	}
	if got := j.call(t); !strings.Contains(got, "status=0") || !strings.Contains(got, busNotifyServer) {
		t.Errorf("after the upgrade the jail's first bus call did not get its answer:\n%s", got)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Error("the relay ran the file now at aisan's path, not the binary that launched")
	}
}

// busOnCue is a jail whose agent makes its first bus call only when the
// test says so.
type busOnCue struct {
	cmd       *exec.Cmd
	flag, out string
}

// startBusOnCue starts `bin run` with an agent that waits for the cue,
// then calls the notification service and prints its status, then runs
// after (a shell command, or nothing); it returns once the agent runs.
func startBusOnCue(t *testing.T, bin string, env []string, after string) busOnCue {
	t.Helper()
	dir := t.TempDir()
	up := filepath.Join(dir, "up")
	j := busOnCue{flag: filepath.Join(dir, "go"), out: filepath.Join(dir, "out")}
	script := fmt.Sprintf(`touch %[1]s; while [ ! -e %[2]s ]; do sleep 0.02; done; %[3]s > %[4]s 2>&1; echo status=$? >> %[4]s; %[5]s`,
		up, j.flag, strings.Join(busServerInfo, " "), j.out, after)
	j.cmd = exec.Command(bin, "run", "--", "sh", "-c", script)
	j.cmd.Env = append(os.Environ(), env...)
	background(t, j.cmd)
	waitFor(t, 20*time.Second, "the jail's agent to start", func() bool { _, err := os.Stat(up); return err == nil })
	return j
}

// call gives the cue and returns what the bus call printed.
func (j busOnCue) call(t *testing.T) string {
	t.Helper()
	if err := os.WriteFile(j.flag, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var got string
	waitFor(t, 30*time.Second, "the bus call in the jail", func() bool {
		data, _ := os.ReadFile(j.out)
		got = string(data)
		return strings.Contains(got, "status=")
	})
	return got
}

// busDescendantNamed returns the PID of a live process under root whose
// comm is name, or 0.
func busDescendantNamed(root int, name string) int {
	children := map[int][]int{}
	names := map[int]string{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || busProcessGone(pid) {
			continue
		}
		comm, ppid := busStat(pid)
		names[pid] = comm
		children[ppid] = append(children[ppid], pid)
	}
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range children[pid] {
			if names[c] == name {
				return c
			}
			queue = append(queue, c)
		}
	}
	return 0
}

// busParent is pid's parent, or 0.
func busParent(pid int) int {
	_, ppid := busStat(pid)
	return ppid
}

// busStat reads pid's comm and parent from /proc/PID/stat.
func busStat(pid int) (comm string, ppid int) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", 0
	}
	s := string(data)
	open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || close < open {
		return "", 0
	}
	fields := strings.Fields(s[close+1:])
	if len(fields) < 2 {
		return "", 0
	}
	ppid, _ = strconv.Atoi(fields[1])
	return s[open+1 : close], ppid
}

func TestAisanExplainBus(t *testing.T) {
	b := newBus(t, false)
	r := aisan(t, busAisanEnv(t, b), "", "explain", "run", "--", "true")
	if r.code != 0 {
		t.Fatalf("aisan explain: exit %d\nstderr: %s", r.code, r.stderr)
	}
	for _, want := range []string{
		"session bus: filtered (talk: " + busproxy.DefaultTalk + ")",
		"proxy argv (started on the jail's first connection):",
		"/bus-filter --filter",
		"--filter",
		"--talk=org.freedesktop.portal.*",
		b.addr,
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("explain output lacks %q:\n%s", want, r.stdout)
		}
	}
	r = aisan(t, busAisanEnv(t, b, busproxy.EnvNoProxy+"=1"), "", "explain", "run", "--", "true")
	if !strings.Contains(r.stdout, "session bus: masked (AISAN_NO_BUS_PROXY=1)") {
		t.Errorf("explain with AISAN_NO_BUS_PROXY=1 lacks the masked line:\n%s", r.stdout)
	}
}

// TestAisanRunBusUserManager: through aisan run, the real user manager
// refuses the jail, and a scope created outside survives.
func TestAisanRunBusUserManager(t *testing.T) {
	requireJail(t)
	requireUserManager(t)
	_, err := exec.LookPath(busproxy.ProxyName)
	need(t, "xdg-dbus-proxy (apt-get install xdg-dbus-proxy)", err)
	scope, sleepPid := busScope(t)
	_, env := testEnv(t)
	r := aisan(t, env, "", busShellStatus(
		busStopUnit(scope),
		busKillUnit(scope),
		[]string{"systemctl", "--user", "stop", scope},
	)...)
	if r.code != 0 {
		t.Fatalf("aisan run: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	for i := range 3 {
		if strings.Contains(r.stdout, fmt.Sprintf("status%d=0", i)) {
			t.Errorf("attempt %d to stop or kill %s from the jail succeeded:\n%s\nstderr: %s", i, scope, r.stdout, r.stderr)
		}
	}
	if state := busUnitState(t, scope); state != "active" {
		t.Errorf("scope %s is %q after the jail's attempts, want active", scope, state)
	}
	if busProcessGone(sleepPid) {
		t.Errorf("the scope's process %d is gone", sleepPid)
	}
}

// TestAisanRunBusClients: three D-Bus client libraries, each asking the
// bus for its ID outside on a private bus, then inside a filtered jail
// on the same bus. libdbus (dbus-send) and GDBus (gdbus) wait for each
// answer of the authentication; sd-bus (busctl) sends it all at once,
// which xdg-dbus-proxy before 0.1.6 cannot follow: the relay passes one
// command at a time, so all three work whatever the proxy's version.
func TestAisanRunBusClients(t *testing.T) {
	b := newBus(t, false)
	var clients [][]string
	for _, c := range []struct {
		tool, pkg string
		args      []string
	}{
		{"dbus-send", "dbus", []string{"--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.GetId"}},
		{"gdbus", "libglib2.0-bin", []string{"call", "--session", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus", "--method", "org.freedesktop.DBus.GetId"}},
		{"busctl", "systemd", []string{"--user", "call", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetId"}},
	} {
		p, err := exec.LookPath(c.tool)
		need(t, c.tool+" (apt-get install "+c.pkg+")", err)
		clients = append(clients, append([]string{p}, c.args...))
	}
	_, env := testEnv(t)
	var id string
	hex32 := regexp.MustCompile(`[0-9a-f]{32}`)
	for _, c := range clients {
		r := runCmd(t, "", append(env, busproxy.EnvAddress+"="+b.addr), "", c[0], c[1:]...)
		m := hex32.FindString(r.stdout)
		if r.code != 0 || m == "" || id != "" && m != id {
			t.Fatalf("%s outside a jail: exit %d, stdout %q, stderr %q", filepath.Base(c[0]), r.code, r.stdout, r.stderr)
		}
		id = m
	}
	r := aisan(t, busAisanEnv(t, b), "", busShellStatus(clients...)...)
	if r.code != 0 {
		t.Fatalf("aisan run: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	v, _ := exec.Command(b.proxy, "--version").Output()
	for i, c := range clients {
		if !strings.Contains(r.stdout, fmt.Sprintf("status%d=0", i)) {
			t.Errorf("%s inside the jail (%s) failed:\n%s\nstderr: %s", filepath.Base(c[0]), strings.TrimSpace(string(v)), r.stdout, r.stderr)
		}
	}
	if n := strings.Count(r.stdout, id); n != len(clients) {
		t.Errorf("the bus ID %s appears %d times inside, want %d:\n%s", id, n, len(clients), r.stdout)
	}
}

// TestAisanRunAbstractBusGate: with the session bus at an abstract
// address and no bus socket in the runtime directory, the jail's bus
// address is its gate itself, in aisan's run directory, which every jail
// sees emptied: the gate is bound back there, and a client in the jail
// reaches the bus through the filter.
func TestAisanRunAbstractBusGate(t *testing.T) {
	b := newBus(t, true)
	rt, err := os.MkdirTemp("", "aisan-rt-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(rt) })
	if err := os.Chmod(rt, 0o700); err != nil {
		t.Fatal(err)
	}
	getID := []string{"dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.GetId"}
	outside := runCmd(t, "", []string{busproxy.EnvAddress + "=" + b.addr}, "", getID[0], getID[1:]...)
	id := regexp.MustCompile(`[0-9a-f]{32}`).FindString(outside.stdout)
	if outside.code != 0 || id == "" {
		t.Fatalf("dbus-send outside a jail: exit %d, %q %q", outside.code, outside.stdout, outside.stderr)
	}
	r := aisan(t, busAisanEnv(t, b, "XDG_RUNTIME_DIR="+rt, "AISAN_NO_SCOPE=1"), "", busShellStatus(getID)...)
	if r.code != 0 || !strings.Contains(r.stdout, "status0=0") || !strings.Contains(r.stdout, id) {
		t.Errorf("dbus-send in a jail whose bus is its gate: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
}
