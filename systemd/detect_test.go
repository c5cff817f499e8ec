package systemd

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// envMap is a getenv over a fixed environment.
func envMap(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

// runtimeDir makes an XDG_RUNTIME_DIR with an empty systemd/ directory.
func runtimeDir(t *testing.T) string {
	t.Helper()
	// Unix socket paths are short: keep it under /tmp, not t.TempDir's
	// long path.
	dir, err := os.MkdirTemp("/tmp", "aisan-rt-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Mkdir(filepath.Join(dir, "systemd"), 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestConnectNoManager walks detection's cheap-first steps with a fake
// environment; none of these may hang or touch the process environment.
func TestConnectNoManager(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "")
	os.Unsetenv("DBUS_SESSION_BUS_ADDRESS")

	empty := runtimeDir(t)

	notSocket := runtimeDir(t)
	if err := os.WriteFile(filepath.Join(notSocket, "systemd", "private"), nil, 0o600); err != nil {
		t.Fatal(err)
	}

	refusing := runtimeDir(t)
	l, err := net.Listen("unix", filepath.Join(refusing, "systemd", "private"))
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close() // the socket file stays; connecting is refused

	silent := runtimeDir(t)
	ls, err := net.Listen("unix", filepath.Join(silent, "systemd", "private"))
	if err != nil {
		t.Fatal(err)
	}
	var held []net.Conn // accepted, never answered
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ls.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	t.Cleanup(func() {
		ls.Close()
		<-done
		for _, c := range held {
			c.Close()
		}
	})

	tests := []struct {
		name   string
		env    func(string) string
		reason string
	}{
		{"unset", envMap(), "XDG_RUNTIME_DIR is not set"},
		{"unset, bus address left over", envMap("DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/0/bus"), "XDG_RUNTIME_DIR is not set"},
		{"relative", envMap("XDG_RUNTIME_DIR", "run/user/1000"), `XDG_RUNTIME_DIR="run/user/1000" is not an absolute path`},
		{"no socket", envMap("XDG_RUNTIME_DIR", empty), "no user manager listens at " + empty + "/systemd/private and there is no session bus"},
		{"not a socket", envMap("XDG_RUNTIME_DIR", notSocket), "no user manager listens at " + notSocket + "/systemd/private and there is no session bus"},
		{"refused", envMap("XDG_RUNTIME_DIR", refusing), "connecting to " + refusing + "/systemd/private: dial unix " + refusing + "/systemd/private: connect: connection refused"},
		{"silent", envMap("XDG_RUNTIME_DIR", silent), "connecting to " + silent + "/systemd/private: no answer within 2s"},
		{"bus without manager", envMap("XDG_RUNTIME_DIR", empty, "DBUS_SESSION_BUS_ADDRESS", "unix:path="+empty+"/nobus"), "reaching org.freedesktop.systemd1 on the session bus unix:path=" + empty + "/nobus: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			m, err := Connect(context.Background(), tt.env)
			if err == nil {
				m.Close()
				t.Fatal("Connect succeeded")
			}
			if d := time.Since(start); d > probeTimeout+time.Second {
				t.Errorf("detection took %v", d)
			}
			var nm *NoManagerError
			if !errors.As(err, &nm) {
				t.Fatalf("error %v (%T); want a *NoManagerError", err, err)
			}
			if !strings.HasPrefix(nm.Reason, tt.reason) {
				t.Errorf("reason = %q; want it to start with %q", nm.Reason, tt.reason)
			}
			if !strings.HasPrefix(err.Error(), "no systemd user manager: ") {
				t.Errorf("message %q", err)
			}
			if !IsNoManager(err) {
				t.Error("IsNoManager = false")
			}
			t.Logf("%v", err)
			if tt.name == "silent" {
				return // once is enough to wait for
			}
			if err := Detect(context.Background(), tt.env); !IsNoManager(err) {
				t.Errorf("Detect = %v; want a NoManagerError too", err)
			}
		})
	}
	if v, ok := os.LookupEnv("DBUS_SESSION_BUS_ADDRESS"); ok {
		t.Errorf("detection set DBUS_SESSION_BUS_ADDRESS=%q", v)
	}
}

// TestConnectCanceled: the caller's deadline is the caller's error, not
// "no manager".
func TestConnectCanceled(t *testing.T) {
	dir := runtimeDir(t)
	l, err := net.Listen("unix", filepath.Join(dir, "systemd", "private"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Connect(ctx, envMap("XDG_RUNTIME_DIR", dir))
	if !errors.Is(err, context.Canceled) || IsNoManager(err) {
		t.Errorf("Connect with a canceled context = %v; want context.Canceled", err)
	}
}

func TestNoManagerHint(t *testing.T) {
	booted := (&NoManagerError{Reason: "x", Booted: true}).Hints()
	want := []string{
		"to get a user manager that outlives your logins (SSH included), run: loginctl enable-linger $USER",
		"if your user manager runs but this shell lost its address (su, sudo, cron), run: export XDG_RUNTIME_DIR=/run/user/$(id -u)",
	}
	if strings.Join(booted, "\n") != strings.Join(want, "\n") {
		t.Errorf("hints on a systemd host:\n%s\nwant:\n%s", strings.Join(booted, "\n"), strings.Join(want, "\n"))
	}
	other := (&NoManagerError{Reason: "x"}).Hints()
	if len(other) != 1 || !strings.Contains(other[0], "'aisan kill <slot>' works through the PID namespace") {
		t.Errorf("hints on a host without systemd: %q", other)
	}
}

func TestScopeRequired(t *testing.T) {
	for v, want := range map[string]bool{"1": true, "": false, "0": false, "yes": false} {
		if got := ScopeRequired(envMap(EnvRequireScope, v)); got != want {
			t.Errorf("ScopeRequired(%s=%q) = %v; want %v", EnvRequireScope, v, got, want)
		}
	}
}
