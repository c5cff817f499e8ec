// Command busbench measures what the session bus proxy adds to a launch:
// xdg-dbus-proxy's start-to-ready time (process start to its readiness
// byte), and a bwrap jail behind a freshly started proxy against bare
// bwrap, runs interleaved so a slow moment hits both alike.
//
//	go run ./tests/bench/busbench [-runs 30]
//
// It starts its own dbus-daemon, so it needs no session bus; it needs
// bwrap, xdg-dbus-proxy and dbus-daemon.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/aisan-dev/aisan/jail/busproxy"
)

func main() {
	runs := flag.Int("runs", 30, "runs per measurement (at least 20)")
	flag.Parse()
	if err := run(max(*runs, 20)); err != nil {
		fmt.Fprintln(os.Stderr, "busbench:", err)
		os.Exit(1)
	}
}

func run(runs int) error {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		return fmt.Errorf("finding bwrap (apt-get install bubblewrap): %w", err)
	}
	proxy, err := exec.LookPath(busproxy.ProxyName)
	if err != nil {
		return fmt.Errorf("finding xdg-dbus-proxy (apt-get install xdg-dbus-proxy): %w", err)
	}
	dir, err := os.MkdirTemp("", "aisan-busbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	bus := filepath.Join(dir, "bus")
	daemon := exec.Command("dbus-daemon", "--session", "--nofork", "--nopidfile", "--address=unix:path="+bus)
	daemon.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := daemon.Start(); err != nil {
		return fmt.Errorf("starting dbus-daemon (apt-get install dbus): %w", err)
	}
	defer func() { daemon.Process.Kill(); daemon.Wait() }()
	if err := waitSocket(bus, 5*time.Second); err != nil {
		return err
	}

	slot := filepath.Join(dir, "slot")
	if err := os.Mkdir(slot, 0o700); err != nil {
		return err
	}
	plan, err := busproxy.Decide(func(k string) (string, bool) {
		if k == busproxy.EnvAddress {
			return "unix:path=" + bus, true
		}
		return "", false
	}, busproxy.HostFacts{ProxyPath: proxy, SlotDir: slot, Sockets: []string{bus}})
	if err != nil {
		return err
	}

	bare := []string{"--bind", "/", "/", "--dev-bind", "/dev", "/dev", "--proc", "/proc", "--unshare-pid"}
	withBus := slices.Clone(bare)
	for _, m := range plan.Mounts() {
		if m.Src == "" {
			withBus = append(withBus, "--ro-bind", "/dev/null", m.Dst)
		} else {
			withBus = append(withBus, "--bind", m.Src, m.Dst)
		}
	}
	withBus = append(withBus, "--setenv", busproxy.EnvAddress, plan.JailAddress)

	var ready, floor, proxied []time.Duration
	for range runs {
		t0 := time.Now()
		if err := exec.Command(bwrap, append(bare, "true")...).Run(); err != nil {
			return fmt.Errorf("bare bwrap: %w", err)
		}
		floor = append(floor, time.Since(t0))

		t0 = time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		p, err := busproxy.Start(ctx, plan)
		cancel()
		if err != nil {
			return err
		}
		err = exec.Command(bwrap, append(withBus, "true")...).Run()
		cerr := p.Close()
		proxied = append(proxied, time.Since(t0))
		ready = append(ready, p.ReadyAfter)
		if err != nil {
			return fmt.Errorf("bwrap behind the proxy: %w", err)
		}
		if cerr != nil {
			return cerr
		}
	}
	fmt.Printf("bus proxy start-to-ready: median %s over %d runs (min %s, max %s)\n",
		ms(median(ready)), runs, ms(slices.Min(ready)), ms(slices.Max(ready)))
	f, p := median(floor), median(proxied)
	fmt.Printf("bwrap true behind a fresh bus proxy: median %s vs bare bwrap %s (%.2f×; the ≤ 3.0× target is for the whole launch)\n",
		ms(p), ms(f), float64(p)/float64(f))
	return nil
}

func waitSocket(path string, d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		if fi, err := os.Stat(path); err == nil && fi.Mode()&os.ModeSocket != 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("dbus-daemon did not create %s within %v", path, d)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) string {
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond)), "0"), ".") + " ms"
}
