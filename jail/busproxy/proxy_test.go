package busproxy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aisan-dev/aisan/jail/jailtest"
	"golang.org/x/sys/unix"
)

// fakeEnv makes the test binary play xdg-dbus-proxy; its value says how.
const fakeEnv = "BUSPROXY_TEST_FAKE"

func TestMain(m *testing.M) {
	if how := os.Getenv(fakeEnv); how != "" {
		os.Exit(fakeProxy(how))
	}
	os.Exit(m.Run())
}

// fakeProxy behaves like xdg-dbus-proxy on its --fd descriptor.
func fakeProxy(how string) int {
	sync := os.NewFile(SyncFD, "sync")
	switch how {
	case "ready":
		// Like the real one: one byte, then exit when the pipe breaks.
		sync.Write([]byte("x"))
		fds := []unix.PollFd{{Fd: SyncFD}}
		for {
			if _, err := unix.Poll(fds, -1); err == nil && fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0 {
				return 0
			}
		}
	case "die":
		fmt.Fprintln(os.Stderr, "Failed to listen on socket: boom")
		return 1
	case "hang":
		time.Sleep(time.Minute)
	case "stubborn":
		sync.Write([]byte("x"))
		time.Sleep(time.Minute)
	case "fds":
		// Report which descriptors a child of the launcher would see.
		entries, _ := os.ReadDir("/proc/self/fd")
		for _, e := range entries {
			target, _ := os.Readlink("/proc/self/fd/" + e.Name())
			fmt.Println(target)
		}
	}
	return 0
}

func fakePlan(t *testing.T) Plan {
	t.Helper()
	dir := t.TempDir()
	return Plan{
		Mode: Filtered, HostAddress: "unix:path=/nonexistent", Proxy: os.Args[0],
		ProxySocket: filepath.Join(dir, "bus"), Talk: []string{"org.example.A"},
	}
}

func startFake(t *testing.T, how string, ctx context.Context) (*Proxy, error) {
	t.Helper()
	t.Setenv(fakeEnv, how)
	return Start(ctx, fakePlan(t))
}

func TestStartReadyAndClose(t *testing.T) {
	p, err := startFake(t, "ready", context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if p.ReadyAfter <= 0 {
		t.Errorf("ReadyAfter = %v, want > 0", p.ReadyAfter)
	}
	// Another child started while the proxy runs must not hold the pipe:
	// if it did, the proxy would never see the hang-up and Close would
	// have to kill it.
	t.Setenv(fakeEnv, "hang")
	other := exec.Command(os.Args[0])
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { other.Process.Kill(); other.Wait() }()

	if err := p.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	select {
	case <-p.Exited():
	default:
		t.Fatal("Exited not closed after Close")
	}
	if err := p.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestStartChildSeesNoPipe(t *testing.T) {
	p, err := startFake(t, "ready", context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	t.Setenv(fakeEnv, "fds")
	out, err := exec.Command(os.Args[0]).Output()
	if err != nil {
		t.Fatal(err)
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(p.sync.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	pipe := fmt.Sprintf("pipe:[%d]", st.Ino)
	if strings.Contains(string(out), pipe) {
		t.Errorf("a child of the launcher holds the proxy's pipe %s; its descriptors:\n%s", pipe, out)
	}
}

func TestStartProxyDies(t *testing.T) {
	_, err := startFake(t, "die", context.Background())
	if err == nil {
		t.Fatal("Start succeeded with a proxy that exits")
	}
	for _, want := range []string{"exited before it was ready", "exit status 1", "Failed to listen on socket: boom", "AISAN_NO_BUS_PROXY=1"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestStartTimeout(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	_, err := startFake(t, "hang", ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Start error = %v, want DeadlineExceeded", err)
	}
	if d := time.Since(t0); d > 5*time.Second {
		t.Errorf("Start took %v to give up", d)
	}
}

func TestCloseKillsStubbornProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the close grace period")
	}
	p, err := startFake(t, "stubborn", context.Background())
	if err != nil {
		t.Fatal(err)
	}
	err = p.Close()
	if err == nil || !strings.Contains(err.Error(), "killed it") {
		t.Errorf("Close = %v, want an error saying it was killed", err)
	}
	if err := syscall.Kill(p.Pid(), 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("kill(%d, 0) = %v, want ESRCH", p.Pid(), err)
	}
}

func TestStartRefusesOtherModes(t *testing.T) {
	if _, err := Start(context.Background(), Plan{Mode: Masked}); err == nil {
		t.Error("Start accepted a masked plan")
	}
}

// TestStartRealProxy runs the real xdg-dbus-proxy against a private
// dbus-daemon: readiness arrives, the socket answers, and the proxy exits
// by itself when the pipe closes.
func TestStartRealProxy(t *testing.T) {
	proxy, err := exec.LookPath(ProxyName)
	jailtest.Need(t, "xdg-dbus-proxy (apt-get install xdg-dbus-proxy)", err)
	_, err = exec.LookPath("dbus-daemon")
	jailtest.Need(t, "dbus-daemon (apt-get install dbus)", err)
	dir := t.TempDir()
	bus := filepath.Join(dir, "host-bus")
	daemon := exec.Command("dbus-daemon", "--session", "--nofork", "--nopidfile", "--address=unix:path="+bus)
	daemon.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { daemon.Process.Kill(); daemon.Wait() }()
	for i := 0; ; i++ {
		if _, err := os.Stat(bus); err == nil {
			break
		}
		if i == 500 {
			t.Fatal("dbus-daemon did not create its socket")
		}
		time.Sleep(10 * time.Millisecond)
	}

	slot := filepath.Join(dir, "slot")
	if err := os.Mkdir(slot, 0o700); err != nil {
		t.Fatal(err)
	}
	plan, err := Decide(func(k string) (string, bool) {
		if k == EnvAddress {
			return "unix:path=" + bus, true
		}
		return "", false
	}, HostFacts{ProxyPath: proxy, SlotDir: slot, Sockets: []string{bus}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := Start(context.Background(), plan)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("xdg-dbus-proxy ready after %v", p.ReadyAfter)
	fi, err := os.Stat(plan.ProxySocket)
	if err != nil || fi.Mode()&os.ModeSocket == 0 {
		t.Fatalf("after readiness, %s is not a socket: %v", plan.ProxySocket, err)
	}
	if err := p.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	// A proxy that cannot listen fails Start with its own words.
	plan.ProxySocket = filepath.Join(dir, "missing-dir", "bus")
	_, err = Start(context.Background(), plan)
	if err == nil || !strings.Contains(err.Error(), "exited before it was ready") {
		t.Fatalf("Start with an unusable socket path: %v", err)
	}
	t.Logf("expected failure: %v", err)
}
