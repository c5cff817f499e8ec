package preflight

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/aisan-dev/aisan/guard"
	"github.com/aisan-dev/aisan/hooks"
	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/busproxy"
	"github.com/aisan-dev/aisan/jail/shared/distro"
	"github.com/aisan-dev/aisan/jail/shared/hostprog"
)

// testEnv is an Env whose environment is vars, with no probe run yet.
func testEnv(t *testing.T, vars map[string]string) *Env {
	t.Helper()
	return &Env{
		Getenv: func(k string) string { return vars[k] },
		Home:   t.TempDir(),
		UID:    1000,
		Euid:   1000,
		Family: distro.Debian,
	}
}

// withHostBus fixes the host bus probe's result.
func withHostBus(e *Env, attempts ...busAttempt) {
	e.hostBus.get(func() hostBusResult { return hostBusResult{attempts: attempts} })
}

func TestChecksNamed(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range Checks() {
		if c.Name == "" || c.Run == nil {
			t.Errorf("check %q: empty name or no Run", c.Name)
		}
		if seen[c.Name] {
			t.Errorf("check %q listed twice", c.Name)
		}
		seen[c.Name] = true
	}
}

func TestWriteText(t *testing.T) {
	findings := []Finding{
		{Status: OK, Name: "bwrap", Detail: "/usr/bin/bwrap"},
		{Status: Fail, Name: "user namespaces", Detail: "denied", Fix: "sudo sysctl a\nsudo sysctl b"},
		{Status: Fail, Name: "foreign PIDs", Detail: "not proven", Fix: "sudo sysctl a\nsudo sysctl b"},
		{Status: Warn, Name: "shell", Detail: "not loaded", Fix: "echo x >> ~/.bashrc"},
	}
	var b bytes.Buffer
	if err := WriteText(&b, findings, false); err != nil {
		t.Fatal(err)
	}
	want := `ok    bwrap            /usr/bin/bwrap
FAIL  user namespaces  denied
      fix: sudo sysctl a
      fix: sudo sysctl b
FAIL  foreign PIDs     not proven
      fix: as for user namespaces, above
warn  shell            not loaded
      fix: echo x >> ~/.bashrc
preflight: 3 problems
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("WriteText (-want +got):\n%s", diff)
	}

	b.Reset()
	WriteText(&b, findings[:1], true)
	if b.Len() != 0 {
		t.Errorf("quiet with no problems printed %q, want nothing", b.String())
	}
	b.Reset()
	WriteText(&b, findings[3:], true)
	if want := "warn  shell  not loaded\n      fix: echo x >> ~/.bashrc\npreflight: 1 problem\n"; b.String() != want {
		t.Errorf("quiet printed %q, want %q", b.String(), want)
	}
	b.Reset()
	WriteText(&b, findings[:1], false)
	if !strings.HasSuffix(b.String(), "\npreflight: ok\n") {
		t.Errorf("no problems: last line of %q is not preflight: ok", b.String())
	}
}

func TestWriteJSON(t *testing.T) {
	findings := []Finding{
		{Status: OK, Name: "bwrap", Detail: "/usr/bin/bwrap", Fix: ""},
		{Status: Warn, Name: "shell", Detail: "not loaded", Fix: "echo"},
	}
	var b bytes.Buffer
	if err := WriteJSON(&b, findings); err != nil {
		t.Fatal(err)
	}
	var got Report
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, b.String())
	}
	if diff := cmp.Diff(Report{Findings: findings, Problems: 1}, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if !strings.Contains(b.String(), `"status": "warn"`) || strings.Contains(b.String(), `"fix": ""`) {
		t.Errorf("want lower-case statuses and no empty fix:\n%s", b.String())
	}
}

func TestRunKeepsOrderAndDropsFixOnOK(t *testing.T) {
	checks := []Check{
		{"a", func(context.Context, *Env) Finding { return Finding{Detail: "1", Fix: "ignored"} }},
		{"b", func(context.Context, *Env) Finding {
			return Finding{Status: Fail, Name: "wrong", Detail: "2", Fix: "f"}
		}},
	}
	got := Run(context.Background(), &Env{}, checks)
	want := []Finding{{Name: "a", Detail: "1"}, {Status: Fail, Name: "b", Detail: "2", Fix: "f"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Run (-want +got):\n%s", diff)
	}
}

func TestClassifyUserns(t *testing.T) {
	base := usernsFacts{Bwrap: "/usr/bin/bwrap", Output: "bwrap: setting up uid map: Permission denied", UsrBinBwrap: true, Family: distro.Debian, Euid: 1000}
	tests := []struct {
		name       string
		edit       func(*usernsFacts)
		detail     string // substring
		fix        string // substring
		fixIsExact bool
	}{
		{"max_user_namespaces", func(f *usernsFacts) { f.MaxUserNS = "0"; f.UnprivClone = "0" },
			"user.max_user_namespaces=0", fixMaxUserNS, true},
		{"unprivileged_userns_clone", func(f *usernsFacts) { f.UnprivClone = "0"; f.AppArmorRestrict = "1" },
			"kernel.unprivileged_userns_clone=0", fixClone, true},
		{"apparmor, distro bwrap", func(f *usernsFacts) { f.AppArmorRestrict = "1" },
			"no AppArmor profile grants /usr/bin/bwrap", fixAppArmorProfile, true},
		{"apparmor, other bwrap", func(f *usernsFacts) { f.AppArmorRestrict = "1"; f.Bwrap = "/home/u/.local/bin/bwrap" },
			"/home/u/.local/bin/bwrap is not /usr/bin/bwrap", "export PATH=/usr/bin:$PATH", false},
		{"apparmor, other bwrap, none in /usr/bin", func(f *usernsFacts) {
			f.AppArmorRestrict = "1"
			f.Bwrap = "/opt/bin/bwrap"
			f.UsrBinBwrap = false
			f.Family = distro.Fedora
		}, "/opt/bin/bwrap is not /usr/bin/bwrap", "sudo dnf install bubblewrap", false},
		{"setuid", func(f *usernsFacts) { f.Setuid = true; f.Bwrap = "/usr/local/bin/bwrap" },
			"setuid root", "sudo chmod u-s /usr/local/bin/bwrap", false},
		{"container", func(f *usernsFacts) {
			f.Container = "a Docker container"
			f.Output = "bwrap: Creating new namespace failed: Operation not permitted"
		}, "inside a Docker container", fixContainer, true},
		{"unknown", func(f *usernsFacts) { f.AppArmorRestrict = "0" },
			"bwrap could not build the jail's namespaces (bwrap: setting up uid map", "bwrap --unshare-pid", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := base
			tt.edit(&f)
			detail, fix := classifyUserns(f)
			if !strings.Contains(detail, tt.detail) {
				t.Errorf("detail %q does not contain %q", detail, tt.detail)
			}
			if tt.fixIsExact && fix != tt.fix || !strings.Contains(fix, tt.fix) {
				t.Errorf("fix %q, want %q", fix, tt.fix)
			}
		})
	}
}

func TestDecidePID(t *testing.T) {
	e := testEnv(t, nil)
	tests := []struct {
		name   string
		rep    pidReport
		alive  bool
		status Status
		detail string
	}{
		{"hidden", pidReport{Kill: "ESRCH"}, true, OK, "kill(42, 0) inside fails with ESRCH"},
		{"marker gone", pidReport{Kill: "ESRCH"}, false, Fail, "marker process (PID 42) ended"},
		{"visible", pidReport{Visible: true, Found: []int{42}, Kill: "ESRCH"}, true, Fail, "visible inside"},
		{"found by name only", pidReport{Found: []int{7}, Kill: "ESRCH"}, true, Fail, "pkill -f would find it"},
		{"signalled", pidReport{Kill: ""}, true, Fail, "can be signalled"},
		{"pid taken inside", pidReport{Kill: "", Taken: true}, true, Warn, "inconclusive"},
		{"other errno", pidReport{Kill: "EPERM"}, true, Fail, "EPERM"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := decidePID(e, liveResult{req: probeRequest{Marker: 42}, rep: probeReport{PID: tt.rep}, markerAlive: tt.alive})
			checkFinding(t, f, tt.status, tt.detail)
		})
	}
}

func TestDecideCgroup(t *testing.T) {
	e := testEnv(t, nil)
	dir := "/sys/fs/cgroup/user.slice"
	tests := []struct {
		rep    cgroupReport
		status Status
		detail string
	}{
		{cgroupReport{Dir: dir, Mkdir: "EROFS"}, OK, "fails with EROFS"},
		{cgroupReport{Dir: dir, Mkdir: ""}, Fail, "a cgroup could be created"},
		{cgroupReport{Dir: dir, Mkdir: "EACCES"}, Fail, "EACCES, not EROFS"},
		{cgroupReport{Dir: dir, Mkdir: "EROFS", Writable: []string{"/sys/fs/cgroup/unified"}}, Fail, "writable cgroup mounts inside: /sys/fs/cgroup/unified"},
	}
	for _, tt := range tests {
		f := decideCgroup(e, liveResult{rep: probeReport{Cgroup: tt.rep}})
		checkFinding(t, f, tt.status, tt.detail)
	}
}

func TestDecideSystemdBus(t *testing.T) {
	const addr = "unix:path=/run/user/1000/bus"
	rt := map[string]string{"XDG_RUNTIME_DIR": "/run/user/1000"}
	with := []busAttempt{{addr: addr, names: []string{"org.freedesktop.systemd1"}}}
	tests := []struct {
		name     string
		env      map[string]string
		attempts []busAttempt
		req      []string
		rep      []busReport
		status   Status
		detail   string
		fix      string
	}{
		{"no bus", rt, nil, nil, nil, OK, "no session bus answers", ""},
		{"no systemd1 on the host bus", rt, []busAttempt{{addr: addr, names: []string{"org.x"}}}, nil, nil, OK, "not proven: org.freedesktop.systemd1 is not on the host's session bus", ""},
		{"filtered", rt, with, []string{addr}, []busReport{{Addr: addr, Jail: true, Systemd1: "org.freedesktop.DBus.Error.ServiceUnknown", Definite: true}}, OK, "unreachable inside (" + addr + ": ServiceUnknown)", ""},
		{"masked", rt, with, []string{addr}, []busReport{{Addr: addr, Jail: true, Connect: "connection refused"}}, OK, addr + ": cannot connect", ""},
		{"reached", rt, with, []string{addr}, []busReport{{Addr: addr, Systemd1: busReached, Definite: true}}, Fail, "answers inside at " + addr, "aisan explain run -- true"},
		{"reached, runtime dir unset", nil, with, []string{addr}, []busReport{{Addr: addr, Systemd1: busReached, Definite: true}}, Fail, "answers inside", fixXDG},
		{"reached, abstract", rt, []busAttempt{{addr: "unix:abstract=/tmp/dbus-x", names: []string{"org.freedesktop.systemd1"}}}, []string{"unix:abstract=/tmp/dbus-x"},
			[]busReport{{Addr: "unix:abstract=/tmp/dbus-x", Systemd1: busReached, Definite: true}}, Fail, "answers inside", "dbus-user-session"},
		{"timeout", rt, with, []string{addr}, []busReport{{Addr: addr, Systemd1: "context deadline exceeded"}}, Warn, "inconclusive", "aisan preflight"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := testEnv(t, tt.env)
			withHostBus(e, tt.attempts...)
			f := decideSystemdBus(e, liveResult{req: probeRequest{BusAddrs: tt.req}, rep: probeReport{Bus: tt.rep}})
			checkFinding(t, f, tt.status, tt.detail)
			if !strings.Contains(f.Fix, tt.fix) {
				t.Errorf("fix %q does not contain %q", f.Fix, tt.fix)
			}
		})
	}
}

func TestDecidePrivate(t *testing.T) {
	e := testEnv(t, map[string]string{"XDG_RUNTIME_DIR": "/run/user/1000"})
	p := "/run/user/1000/systemd/private"
	checkFinding(t, decidePrivate(e, liveResult{}), OK, "nothing to hide")
	checkFinding(t, decidePrivate(e, liveResult{req: probeRequest{Private: []string{p}}, rep: probeReport{Private: []connReport{{Path: p, Err: "ENOENT"}}}}), OK, p+": ENOENT")
	f := decidePrivate(e, liveResult{req: probeRequest{Private: []string{p}}, rep: probeReport{Private: []connReport{{Path: p}}}})
	checkFinding(t, f, Fail, "accepts connections inside")
	// Reached through /run/user/UID while XDG_RUNTIME_DIR names nothing:
	// the jail hides only the directory it is told about.
	e = testEnv(t, nil)
	f = decidePrivate(e, liveResult{req: probeRequest{Private: []string{p}}, rep: probeReport{Private: []connReport{{Path: p}}}})
	if f.Fix != fixXDG {
		t.Errorf("fix %q, want %q", f.Fix, fixXDG)
	}
}

func TestDecideDirsAndSockets(t *testing.T) {
	e := testEnv(t, nil)
	home := fileID{Label: "$HOME", Path: e.Home, Writable: true}
	tmp := fileID{Label: "/tmp", Path: "/tmp", Writable: true}
	r := liveResult{req: probeRequest{Dirs: []fileID{home, tmp}}, rep: probeReport{Dirs: []fileReport{{Same: true}, {Same: true}}}}
	checkFinding(t, decideDirs(e, r), OK, "$HOME and /tmp inside are the host's")
	r.rep.Dirs[1] = fileReport{Same: false}
	checkFinding(t, decideDirs(e, r), Fail, "/tmp (/tmp) inside is not the host's")
	r.rep.Dirs[1] = fileReport{Same: true, Write: "EROFS"}
	checkFinding(t, decideDirs(e, r), Fail, "writable outside but not inside: EROFS")

	checkFinding(t, decideSockets(e, liveResult{}), OK, "none found outside")
	ssh := fileID{Label: "ssh-agent", Path: "/tmp/ssh-x/agent.1"}
	way := fileID{Label: "wayland-0", Path: "/run/user/1000/wayland-0"}
	r = liveResult{req: probeRequest{Sockets: []fileID{ssh, way}}, rep: probeReport{Sockets: []fileReport{{Same: true}, {Same: true}}}}
	checkFinding(t, decideSockets(e, r), OK, "ssh-agent and wayland-0 inside are the host's sockets")
	r.rep.Sockets[1] = fileReport{Err: "ENOENT"}
	checkFinding(t, decideSockets(e, r), Fail, "wayland-0 (/run/user/1000/wayland-0) is missing inside: ENOENT")
}

func TestDecideSessionBus(t *testing.T) {
	e := testEnv(t, nil)
	filtered := busproxy.Plan{Mode: busproxy.Filtered, Talk: []string{"org.freedesktop.Notifications", "org.freedesktop.portal.*"}}
	tests := []struct {
		name   string
		plan   busproxy.Plan
		names  []string
		rep    []nameReport
		status Status
		detail string
	}{
		{"none", busproxy.Plan{Mode: busproxy.None}, nil, nil, OK, "none: no session bus"},
		{"masked", busproxy.Plan{Mode: busproxy.Masked, Why: "xdg-dbus-proxy is not installed"}, nil, nil, OK, "masked (xdg-dbus-proxy is not installed)"},
		{"filtered, nothing present", filtered, nil, nil, OK, "none of the allowed names (org.freedesktop.Notifications org.freedesktop.portal.*) is on the host bus"},
		{"filtered, reached", filtered, []string{"org.freedesktop.Notifications"}, []nameReport{{"org.freedesktop.Notifications", busReached}}, OK, "reachable inside: org.freedesktop.Notifications"},
		{"filtered, unreachable", filtered, []string{"org.freedesktop.portal.Desktop"}, []nameReport{{"org.freedesktop.portal.Desktop", "org.freedesktop.DBus.Error.ServiceUnknown"}}, Fail, "org.freedesktop.portal.Desktop, allowed and on the host bus, is unreachable inside: ServiceUnknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := decideSessionBus(e, liveResult{plan: tt.plan, req: probeRequest{Names: tt.names}, rep: probeReport{Names: tt.rep}})
			checkFinding(t, f, tt.status, tt.detail)
		})
	}
}

func TestLiveCheckFailsWhenTheJailDidNotRun(t *testing.T) {
	e := testEnv(t, nil)
	e.bwrap.get(func() bwrapInfo { return bwrapInfo{Err: errors.New("not found")} })
	e.live.get(func() liveResult { return liveResult{err: errors.New("bwrap is not installed")} })
	for _, c := range Checks() {
		f := c.Run(context.Background(), e)
		if f.Status == Fail && strings.HasPrefix(f.Detail, "not proven: bwrap is not installed") {
			if f.Fix != "sudo apt-get install bubblewrap" {
				t.Errorf("%s: fix %q", c.Name, f.Fix)
			}
		}
	}
	for _, name := range []string{"foreign PIDs", "cgroup writes", "systemd on bus", "systemd socket", "home and /tmp", "agent sockets", "session bus"} {
		i := slices.IndexFunc(Checks(), func(c Check) bool { return c.Name == name })
		if f := Checks()[i].Run(context.Background(), e); f.Status != Fail {
			t.Errorf("%s: %v %q, want FAIL when the probe jail did not run", name, f.Status, f.Detail)
		}
	}
}

func TestTalks(t *testing.T) {
	talk := []string{"org.freedesktop.secrets", "org.freedesktop.portal.*"}
	for name, want := range map[string]bool{
		"org.freedesktop.secrets":        true,
		"org.freedesktop.secrets.x":      false,
		"org.freedesktop.portal":         true,
		"org.freedesktop.portal.Desktop": true,
		"org.freedesktop.portals":        false,
		"org.freedesktop.systemd1":       false,
	} {
		if got := talks(talk, name); got != want {
			t.Errorf("talks(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestBreakSpec(t *testing.T) {
	bus := busproxy.Plan{
		Mode: busproxy.Filtered, HostSockets: []string{"/run/user/1000/bus"},
		ProxySocket: "/run/user/1000/aisan/x/bus", JailSocket: "/run/user/1000/bus",
		JailAddress: "unix:path=/run/user/1000/bus",
	}
	spec := func() jail.Spec {
		return jail.DenyList(jail.DenyOptions{
			Kind: jail.KindRun, Slot: "s", Command: []string{"true"}, Cwd: "/w",
			Env:        []string{"DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus"},
			RuntimeDir: "/run/user/1000", RuntimeSystemd: true, Bus: bus, MaskFile: "/m",
		})
	}
	has := func(s jail.Spec, pred func(jail.Mount) bool) bool { return slices.ContainsFunc(s.Mounts, pred) }
	for _, what := range Breaks {
		s := spec()
		before := len(s.Mounts)
		breakSpec(&s, what, "unix:path=/run/user/1000/bus")
		if len(s.Mounts) >= before {
			t.Errorf("%s: no mount dropped", what)
		}
		if !s.Namespaces.PID {
			t.Errorf("%s: the PID namespace must stay (the launcher's init needs it)", what)
		}
		if _, err := jail.Compile(s, jail.Host{}); err != nil {
			t.Errorf("%s: broken spec does not compile: %v", what, err)
		}
		switch what {
		case "pid":
			if has(s, func(m jail.Mount) bool { return m.Kind == jail.Proc }) {
				t.Error("pid: fresh /proc still mounted")
			}
		case "cgroup":
			if has(s, func(m jail.Mount) bool { return m.Dst == "/sys/fs/cgroup" }) {
				t.Error("cgroup: read-only bind still there")
			}
		case "systemd":
			if has(s, func(m jail.Mount) bool { return m.Dst == "/run/user/1000/systemd" }) {
				t.Error("systemd: tmpfs still there")
			}
		case "bus":
			if has(s, func(m jail.Mount) bool { return m.Dst == "/run/user/1000/bus" }) {
				t.Error("bus: proxy socket still bound over the host's")
			}
		}
	}
	s := spec()
	breakSpec(&s, "", "")
	if diff := cmp.Diff(spec(), s); diff != "" {
		t.Errorf("no break changed the spec:\n%s", diff)
	}
}

func TestLoadsIntegration(t *testing.T) {
	// Whether the line loads the functions, and whether it runs aisan by
	// a name looked up on PATH.
	type want struct{ loads, byName bool }
	for src, w := range map[string]want{
		`eval "$(aisan shell-init bash)"`:                  {true, true},
		`  eval "$(/usr/local/bin/aisan shell-init zsh)"`:  {true, false},
		`eval "$(~/.local/bin/aisan shell-init zsh)"`:      {true, false},
		`eval "$($HOME/bin/aisan shell-init bash)"`:        {true, false},
		`aisan shell-init fish | source`:                   {true, true},
		`/opt/aisan/aisan shell-init fish | source`:        {true, false},
		`source ~/src/aisan/shell/aisan.sh`:                {true, true},
		`. /usr/share/aisan/aisan.sh`:                      {true, true},
		`# eval "$(aisan shell-init bash)"`:                {false, false},
		`alias claude=claude # eval "$(aisan shell-init)"`: {false, false},
		`export PATH=$HOME/aisan.sh/bin:$PATH`:             {false, false},
		"":                                                 {false, false},
	} {
		if loads, byName := loadsIntegration(src); loads != w.loads || byName != w.byName {
			t.Errorf("loadsIntegration(%q) = %v, %v; want %v, %v", src, loads, byName, w.loads, w.byName)
		}
	}
}

func TestCheckShell(t *testing.T) {
	e := testEnv(t, map[string]string{"SHELL": "/usr/bin/zsh"})
	f := checkShell(context.Background(), e)
	checkFinding(t, f, Warn, "not loaded in ~/.zshrc (zsh)")
	if want := `echo 'eval "$(aisan shell-init zsh)"' >> ~/.zshrc`; f.Fix != want {
		t.Errorf("fix %q, want %q", f.Fix, want)
	}
	os.WriteFile(filepath.Join(e.Home, ".zshrc"), []byte("eval \"$(aisan shell-init zsh)\"\n"), 0o644)
	checkFinding(t, checkShell(context.Background(), e), OK, "loaded from ~/.zshrc")

	// By name, with a directory of the user's on PATH: a jail could put
	// an aisan there that the next shell runs. By path it could not.
	bin := filepath.Join(e.Home, ".local", "bin")
	os.MkdirAll(bin, 0o755)
	e.Getenv = func(k string) string { return map[string]string{"SHELL": "/usr/bin/zsh", "PATH": bin + ":/usr/bin"}[k] }
	e.Self = "/usr/local/bin/aisan"
	f = checkShell(context.Background(), e)
	want := "loaded from ~/.zshrc by the name aisan, looked up on PATH: a jail can write ~/.local/bin"
	if os.Getuid() == 0 {
		want = "loaded from ~/.zshrc by the name aisan, looked up on PATH: a jail can write /," // root's to write
	}
	checkFinding(t, f, Warn, want)
	if want := `in ~/.zshrc, run aisan by its path: eval "$(/usr/local/bin/aisan shell-init zsh)"`; f.Fix != want {
		t.Errorf("fix %q, want %q", f.Fix, want)
	}
	os.WriteFile(filepath.Join(e.Home, ".zshrc"), []byte("eval \"$(/usr/local/bin/aisan shell-init zsh)\"\n"), 0o644)
	checkFinding(t, checkShell(context.Background(), e), OK, "loaded from ~/.zshrc")

	e = testEnv(t, map[string]string{"SHELL": "/usr/bin/fish"})
	if want := `echo 'aisan shell-init fish | source' >> ~/.config/fish/config.fish`; checkShell(context.Background(), e).Fix != want {
		t.Errorf("fish fix, want %q", want)
	}
	e = testEnv(t, nil) // unknown shell: bash
	if f := checkShell(context.Background(), e); f.Status != Warn || !strings.Contains(f.Fix, ">> ~/.bashrc") {
		t.Errorf("unknown shell: %+v", f)
	}
}

func TestCheckGuardHook(t *testing.T) {
	e := testEnv(t, nil)
	ctx := context.Background()
	checkFinding(t, checkGuardHook(ctx, e), OK, "no Claude Code or Codex configuration found")

	claude := filepath.Join(e.Home, ".claude")
	os.MkdirAll(claude, 0o755)
	f := checkGuardHook(ctx, e)
	checkFinding(t, f, Warn, "Claude Code: not installed")
	if f.Fix != "aisan install-hook" {
		t.Errorf("fix %q", f.Fix)
	}

	// A stand-in for aisan guard: it reads the input and refuses. It is
	// the running aisan too, the only program preflight may run.
	bin := filepath.Join(t.TempDir(), "aisan")
	guardScript := "#!/bin/sh\ncat >/dev/null\nexit 2\n"
	os.WriteFile(bin, []byte(guardScript), 0o755)
	e.Self = bin
	src, _, err := hooks.Install(nil, hooks.Hook{Binary: bin, Timeout: hooks.DefaultTimeout})
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(claude, "settings.json"), src, 0o644)
	checkFinding(t, checkGuardHook(ctx, e), OK, "installed for Claude Code (~/.claude/settings.json)")

	// The hook is there, but would let commands through: the agent runs
	// a tool call when its hook cannot start or does not exit 2.
	for _, tt := range []struct {
		name, script string
		mode         os.FileMode
		detail       string
	}{
		{"binary gone", "", 0, "Claude Code: the hook runs " + bin + ", which does not exist"},
		{"not executable", guardScript, 0o644, "Claude Code: the hook runs " + bin + ", which is not an executable file"},
		{"allows", "#!/bin/sh\nexit 0\n", 0o755, "Claude Code: the hook does not refuse pkill: it ends with exit status 0, not 2"},
		{"fails", "#!/bin/sh\nexit 1\n", 0o755, "Claude Code: the hook does not refuse pkill: it ends with exit status 1, not exit status 2"},
	} {
		os.Remove(bin)
		if tt.script != "" {
			os.WriteFile(bin, []byte(tt.script), tt.mode)
		}
		f := checkGuardHook(ctx, e)
		checkFinding(t, f, Warn, tt.detail)
		if f.Fix != "aisan install-hook" {
			t.Errorf("%s: fix %q, want aisan install-hook", tt.name, f.Fix)
		}
	}
	os.WriteFile(bin, []byte(guardScript), 0o755)
	checkFinding(t, checkGuardHook(ctx, e), OK, "installed for Claude Code (~/.claude/settings.json)")

	// A project file that turns every hook off wins over the user file.
	e.Cwd = t.TempDir()
	os.MkdirAll(filepath.Join(e.Cwd, ".claude"), 0o755)
	local := filepath.Join(e.Cwd, ".claude", "settings.local.json")
	os.WriteFile(local, []byte(`{"disableAllHooks": true}`), 0o644)
	f = checkGuardHook(ctx, e)
	checkFinding(t, f, Warn, `disabled by "disableAllHooks": true in `+local)
	if want := `remove "disableAllHooks": true from ` + local; f.Fix != want {
		t.Errorf("fix %q, want %q", f.Fix, want)
	}
}

// TestGuardHookPlanted: a hook whose program is called like aisan's but
// is another file (one a jail planted in the project) is reported with
// its path and never run, whichever settings file holds it and however
// it reaches the file; aisan's own guard beside it is still run.
func TestGuardHookPlanted(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name string
		// plant returns the path the hook names, given the project dir,
		// the planted script and the real aisan.
		plant  func(proj, script, self string) string
		file   string // the settings file under the project
		format string // the hook, %s the quoted path
	}{
		{"codex project hooks.json", func(proj, script, _ string) string { return script }, ".codex/hooks.json",
			`{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"%s guard"}]}]}}`},
		{"claude project lean guard", func(proj, script, _ string) string {
			p := filepath.Join(filepath.Dir(script), "aisan-guard")
			os.Rename(script, p)
			return p
		}, ".claude/settings.json",
			`{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"%s"}]}]}}`},
		{"exec form", func(proj, script, _ string) string { return script }, ".claude/settings.local.json",
			`{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"%s","args":["guard"]}]}]}}`},
		{"symlink to the script", func(proj, script, _ string) string {
			p := filepath.Join(proj, "bin", "aisan")
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.Symlink(script, p)
			return p
		}, ".codex/hooks.json",
			`{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"%s guard"}]}]}}`},
		{"a copy in the project", func(proj, script, _ string) string {
			p := filepath.Join(proj, "aisan")
			b, _ := os.ReadFile(script)
			os.WriteFile(p, b, 0o755)
			return p
		}, ".codex/hooks.json",
			`{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"%s guard"}]}]}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := testEnv(t, nil)
			os.MkdirAll(filepath.Join(e.Home, ".claude"), 0o755)
			os.MkdirAll(filepath.Join(e.Home, ".codex"), 0o755)
			// aisan's own guard, installed in the user's files: it refuses.
			self := filepath.Join(t.TempDir(), "aisan")
			os.WriteFile(self, []byte("#!/bin/sh\ncat >/dev/null\nexit 2\n"), 0o755)
			e.Self = self
			for _, f := range []string{".claude/settings.json", ".codex/hooks.json"} {
				src, _, err := hooks.Install(nil, hooks.Hook{Binary: self, Timeout: hooks.DefaultTimeout})
				if err != nil {
					t.Fatal(err)
				}
				os.WriteFile(filepath.Join(e.Home, f), src, 0o644)
			}
			// The planted program leaves a marker when it runs.
			e.Cwd = t.TempDir()
			marker := filepath.Join(t.TempDir(), "ran")
			script := filepath.Join(t.TempDir(), "aisan")
			os.WriteFile(script, []byte("#!/bin/sh\ntouch "+marker+"\nexit 2\n"), 0o755)
			named := tt.plant(e.Cwd, script, self)
			settings := filepath.Join(e.Cwd, tt.file)
			os.MkdirAll(filepath.Dir(settings), 0o755)
			os.WriteFile(settings, []byte(fmt.Sprintf(tt.format, named)), 0o644)

			f := checkGuardHook(ctx, e)
			checkFinding(t, f, Warn, settings+" has a hook that runs "+named+", which is not aisan's guard")
			if !strings.Contains(f.Detail, "preflight did not run it") {
				t.Errorf("detail %q does not say the program was not run", f.Detail)
			}
			if !strings.Contains(f.Fix, "from "+settings) {
				t.Errorf("fix %q does not name %s", f.Fix, settings)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Fatalf("preflight ran the planted %s", named)
			}
		})
	}
}

// TestGuardHookRunsOwnBinary: a hook that names aisan's own binary by
// another path (a symlink to it, or PATH) counts as aisan's, and what
// preflight runs is the trusted file, not the hook's command line.
func TestGuardHookRunsOwnBinary(t *testing.T) {
	e := testEnv(t, nil)
	os.MkdirAll(filepath.Join(e.Home, ".claude"), 0o755)
	dir := t.TempDir()
	marker := filepath.Join(t.TempDir(), "args")
	self := filepath.Join(dir, "aisan")
	os.WriteFile(self, []byte("#!/bin/sh\ncat >/dev/null\necho \"$0 $*\" >"+marker+"\nexit 2\n"), 0o755)
	e.Self = self
	link := filepath.Join(t.TempDir(), "aisan")
	os.Symlink(self, link)
	src := fmt.Sprintf(`{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"%s guard"}]}]}}`, link)
	os.WriteFile(filepath.Join(e.Home, ".claude", "settings.json"), []byte(src), 0o644)
	checkFinding(t, checkGuardHook(context.Background(), e), OK, "installed for Claude Code")
	if b, _ := os.ReadFile(marker); string(b) != self+" guard\n" {
		t.Errorf("preflight ran %q, want %q", b, self+" guard\n")
	}
}

// TestHookSampleIsRefused: the input preflight feeds the installed hook
// is one the guard refuses, so exit status 2 is the right answer.
func TestHookSampleIsRefused(t *testing.T) {
	in, err := guard.ParseHookInput([]byte(hookSample))
	if err != nil || !in.RunsShell() {
		t.Fatalf("hookSample: %+v, %v", in, err)
	}
	if v := guard.Check(in.Command); v.Allow {
		t.Errorf("the guard allows %q", in.Command)
	}
}

// TestLivePlanError: a setting that keeps the probe jail from being
// planned is quoted once, by the first live check, with its own fix; the
// other live checks refer to it, and the fix is printed once.
func TestLivePlanError(t *testing.T) {
	for _, tt := range []struct {
		vars map[string]string
		fix  string
	}{
		{map[string]string{busproxy.EnvTalk: "org"}, "unset AISAN_BUS_TALK   # or correct it"},
		{map[string]string{busproxy.EnvNoProxy: "yes"}, "unset AISAN_NO_BUS_PROXY   # or set it to 1"},
	} {
		e := testEnv(t, tt.vars)
		_, planErr := busproxy.Decide(func(k string) (string, bool) { v, ok := tt.vars[k]; return v, ok }, busproxy.HostFacts{})
		if planErr == nil {
			t.Fatalf("%v: planning succeeded", tt.vars)
		}
		e.live.get(func() liveResult { return liveResult{err: &planError{planErr}} })
		var findings []Finding
		for _, c := range Checks() {
			if !slices.Contains([]string{"foreign PIDs", "cgroup writes", "systemd on bus", "systemd socket", "home and /tmp", "agent sockets", "session bus"}, c.Name) {
				continue
			}
			f := c.Run(context.Background(), e)
			f.Name = c.Name
			findings = append(findings, f)
			if f.Status != Fail || !strings.HasPrefix(f.Fix, tt.fix) {
				t.Errorf("%v: %s: %v %q fix %q, want FAIL with fix %q", tt.vars, c.Name, f.Status, f.Detail, f.Fix, tt.fix)
			}
			if strings.Contains(f.Fix, "bubblewrap") {
				t.Errorf("%v: %s: fix %q names bubblewrap", tt.vars, c.Name, f.Fix)
			}
		}
		var b bytes.Buffer
		WriteText(&b, findings, false)
		out := b.String()
		if n := strings.Count(out, planErr.Error()); n != 1 {
			t.Errorf("%v: the planning error is printed %d times:\n%s", tt.vars, n, out)
		}
		if n := strings.Count(out, tt.fix); n != 1 {
			t.Errorf("%v: the fix is printed %d times:\n%s", tt.vars, n, out)
		}
		if !strings.Contains(out, "FAIL  foreign PIDs    not proven: the probe jail cannot be planned: "+planErr.Error()) {
			t.Errorf("%v: foreign PIDs does not quote the error:\n%s", tt.vars, out)
		}
	}
}

func TestCheckBusAddress(t *testing.T) {
	ctx := context.Background()
	e := testEnv(t, map[string]string{"DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/1000/bus"})
	checkFinding(t, checkBusAddress(ctx, e), OK, "a socket path")
	for _, addr := range []string{"unix:abstract=/tmp/dbus-x,guid=1", "unix:path=/x;tcp:host=localhost,port=1"} {
		e = testEnv(t, map[string]string{"DBUS_SESSION_BUS_ADDRESS": addr})
		f := checkBusAddress(ctx, e)
		checkFinding(t, f, Warn, "which no mount can hide")
		if !strings.HasPrefix(f.Fix, "sudo apt-get install dbus-user-session") {
			t.Errorf("%s: fix %q", addr, f.Fix)
		}
	}
	e = testEnv(t, map[string]string{"DBUS_SESSION_BUS_ADDRESS": "nonsense"})
	checkFinding(t, checkBusAddress(ctx, e), Fail, "does not parse")
}

func TestCheckStateDir(t *testing.T) {
	ctx := context.Background()
	e := testEnv(t, nil)
	proj := filepath.Join(e.Home, "proj")
	os.MkdirAll(filepath.Join(proj, ".git"), 0o755)
	e.Cwd = proj

	t.Setenv("AISAN_HOME", filepath.Join(proj, ".aisan"))
	f := checkStateDir(ctx, e)
	checkFinding(t, f, Fail, "~/proj/.aisan is inside this directory")
	if f.Fix != "unset AISAN_HOME   # the default, ~/.aisan" {
		t.Errorf("fix %q", f.Fix)
	}

	e.Cwd = filepath.Join(proj, "sub")
	os.MkdirAll(e.Cwd, 0o755)
	t.Setenv("AISAN_HOME", filepath.Join(proj, "state"))
	checkFinding(t, checkStateDir(ctx, e), Fail, "inside the git worktree ~/proj")

	t.Setenv("AISAN_HOME", "relative")
	checkFinding(t, checkStateDir(ctx, e), Fail, "not an absolute path")

	t.Setenv("AISAN_HOME", filepath.Join(e.Home, "state"))
	checkFinding(t, checkStateDir(ctx, e), OK, "~/state (created at the first launch)")
}

func TestCheckRoot(t *testing.T) {
	e := testEnv(t, map[string]string{"SUDO_USER": "alice"})
	checkFinding(t, checkRoot(context.Background(), e), OK, "not root")
	e.Euid = 0
	f := checkRoot(context.Background(), e)
	checkFinding(t, f, Warn, "running as root")
	if f.Fix != "exit the sudo shell and run aisan as alice" {
		t.Errorf("fix %q", f.Fix)
	}
}

func TestFixesFollowTheDistribution(t *testing.T) {
	for fam, want := range map[distro.Family]string{
		distro.Debian:  "sudo apt-get install xdg-dbus-proxy",
		distro.Fedora:  "sudo dnf install xdg-dbus-proxy",
		distro.Arch:    "sudo pacman -S xdg-dbus-proxy",
		distro.SUSE:    "sudo zypper install xdg-dbus-proxy",
		distro.Unknown: "install the package that provides xdg-dbus-proxy",
	} {
		e := &Env{Family: fam}
		if got := e.install("xdg-dbus-proxy"); !strings.HasPrefix(got, want) {
			t.Errorf("%q: %q, want %q", fam, got, want)
		}
	}
}

func TestManagerFixes(t *testing.T) {
	e := testEnv(t, map[string]string{"XDG_RUNTIME_DIR": "/run/user/1000"})
	if got := e.managerFixes(); !slices.Equal(got, []string{fixLinger}) {
		t.Errorf("runtime dir set: %q", got)
	}
	e = testEnv(t, nil)
	e.UID = 1 << 30 // no /run/user for it: nothing keeps a manager
	if got := e.managerFixes(); !slices.Equal(got, []string{fixLinger, fixXDG}) {
		t.Errorf("runtime dir unset, none on disk: %q", got)
	}
}

func checkFinding(t *testing.T, f Finding, status Status, detail string) {
	t.Helper()
	if f.Status != status || !strings.Contains(f.Detail, detail) {
		t.Errorf("got %v %q, want %v containing %q", f.Status, f.Detail, status, detail)
	}
	if f.Status != OK && f.Fix == "" {
		t.Errorf("%v %q has no fix", f.Status, f.Detail)
	}
}

func TestWritableIn(t *testing.T) {
	// The host's mounts, still listed under the jail's read-only bind,
	// are hidden by it; a writable mount made after it is not.
	mountinfo := `116 1 0:27 / / rw,relatime - overlay overlay rw
117 116 0:28 / /sys/fs/cgroup rw,nosuid - tmpfs tmpfs rw
118 117 0:29 / /sys/fs/cgroup/cpu rw,nosuid - cgroup cgroup rw,cpu
130 116 0:28 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs rw
131 130 0:29 / /sys/fs/cgroup/cpu ro,nosuid - cgroup cgroup rw,cpu
132 130 0:30 / /sys/fs/cgroup/my\040dir rw,nosuid - cgroup2 cgroup2 rw
133 116 0:31 / /sys/fs/cgroupx rw - tmpfs tmpfs rw
`
	got := writableIn(mountinfo, "/sys/fs/cgroup")
	if want := []string{"/sys/fs/cgroup/my dir"}; !slices.Equal(got, want) {
		t.Errorf("writableIn = %q, want %q", got, want)
	}
}

func TestErrnoName(t *testing.T) {
	if got := errnoName(&os.PathError{Op: "mkdir", Path: "/x", Err: syscall.EROFS}); got != "EROFS" {
		t.Errorf("errnoName(EROFS) = %q", got)
	}
	if got := errnoName(nil); got != "" {
		t.Errorf("errnoName(nil) = %q", got)
	}
	if got := errnoName(errors.New("plain")); got != "plain" {
		t.Errorf("errnoName(plain) = %q", got)
	}
}

func TestDecideTerminals(t *testing.T) {
	e := &Env{}
	pts := []fileID{{Label: "/dev/pts/0", Path: "/dev/pts/0"}, {Label: "/dev/pts/3", Path: "/dev/pts/3"}}
	tests := []struct {
		name   string
		req    []fileID
		rep    []fileReport
		status Status
		want   string
	}{
		{"none outside", nil, nil, OK, "not proven"},
		{"all hidden", pts, []fileReport{{Err: "ENOENT"}, {Same: false}}, OK, "no terminal outside (2 in /dev/pts)"},
		{"one reachable", pts, []fileReport{{Err: "ENOENT"}, {Same: true}}, Fail, "/dev/pts/3 is reachable inside"},
		{"report short", pts, []fileReport{{Err: "ENOENT"}}, Fail, "did not report on /dev/pts/3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := decideTerminals(e, liveResult{req: probeRequest{Terminals: tt.req}, rep: probeReport{Terminals: tt.rep}})
			checkFinding(t, f, tt.status, tt.want)
		})
	}
}

// TestProxyFound: the proxy's line names its version, or says that it
// could not be read.
func TestProxyFound(t *testing.T) {
	tests := []struct {
		version, want string
	}{
		{"xdg-dbus-proxy 0.1.4", "/usr/bin/xdg-dbus-proxy (xdg-dbus-proxy 0.1.4)"},
		{"", "/usr/bin/xdg-dbus-proxy (version unknown: --version failed)"},
	}
	for _, tt := range tests {
		f := proxyFound("/usr/bin/xdg-dbus-proxy", tt.version)
		if f.Status != OK || f.Detail != tt.want || f.Fix != "" {
			t.Errorf("proxyFound(%q) = %+v; want OK, %q", tt.version, f, tt.want)
		}
	}
}

// TestProgramRisk: bwrap's and the proxy's findings warn of what a jail
// could have put on PATH before them, and of a chosen file a jail could
// change; the system's own file, alone, is no warning.
func TestProgramRisk(t *testing.T) {
	tilde := func(p string) string { return strings.Replace(p, "/home/u", "~", 1) }
	sys := hostprog.Candidate{Path: "/usr/bin/bwrap", Real: "/usr/bin/bwrap"}
	planted := hostprog.Candidate{Path: "/home/u/.local/bin/bwrap", Real: "/home/u/.local/bin/bwrap", Open: "/home/u/.local/bin"}
	for _, tt := range []struct {
		name   string
		c      hostprog.Choice
		status Status
		detail string
		fix    string
	}{
		{"the system's", hostprog.Choice{Candidate: sys}, OK, "/usr/bin/bwrap (v)", ""},
		{"one passed over", hostprog.Choice{Candidate: sys, Passed: []hostprog.Candidate{planted}}, Warn,
			"/usr/bin/bwrap (v); passed over ~/.local/bin/bwrap, earlier on PATH: a jail could have put it there (it can write ~/.local/bin), so launches do not run it",
			"ls -l /home/u/.local/bin/bwrap   # remove what you did not install"},
		{"only the user's", hostprog.Choice{Candidate: planted}, Warn,
			"/usr/bin/bwrap (v); a jail could replace it (it can write ~/.local/bin), and launches run it outside the jail: it is read-only in jails, but a bwrap put earlier on PATH would be run instead",
			"apt-get install bubblewrap"},
	} {
		f := programRisk(Finding{Detail: "/usr/bin/bwrap (v)"}, "bwrap", tt.c, tilde, "apt-get install bubblewrap")
		if f.Status != tt.status || f.Detail != tt.detail || f.Fix != tt.fix {
			t.Errorf("%s: got %+v\nwant %v %q, fix %q", tt.name, f, tt.status, tt.detail, tt.fix)
		}
	}
	e := testEnv(t, nil)
	e.Euid = 0
	if f := e.withRisk(Finding{Detail: "d"}, "bwrap", hostprog.Choice{Candidate: planted}); f.Status != OK {
		t.Errorf("as root: %+v, want no warning (the root check gives it)", f)
	}
}

// TestWatchUnit: the supervisor unit's finding from what is installed in
// the unit directories: nothing, a linked unit, a unit a jail can keep
// read-only whole, and units without some of the drop-in directories
// install-service makes, with and without the manager's unit path.
func TestWatchUnit(t *testing.T) {
	home := t.TempDir()
	units := filepath.Join(home, ".config", "systemd", "user")
	data := filepath.Join(home, ".local", "share", "systemd", "user")
	unit := filepath.Join(units, "aisan-watch.service")
	getenv := func(string) string { return "" }
	tilde := func(p string) string { return strings.Replace(p, home, "~", 1) }
	search := []string{filepath.Join(home, ".config", "systemd", "user.control"), "/run/user/1000/systemd/user.control", units, "/etc/systemd/user", data, "/usr/lib/systemd/user"}
	check := func(name string, search []string, status Status, detail string) {
		t.Helper()
		f := decideWatchUnit(gatherWatchUnits(getenv, home, search), tilde)
		if f.Status != status || f.Detail != detail {
			t.Errorf("%s: %v %q; want %v %q", name, f.Status, f.Detail, status, detail)
		}
	}
	mkdir := func(dirs ...string) {
		t.Helper()
		for _, d := range dirs {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	check("nothing installed", search, OK, "aisan-watch.service is not installed ('aisan install-service' installs it)")
	mkdir(units)
	if err := os.WriteFile(filepath.Join(home, "dotfile"), []byte("[Service]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(home, "dotfile"), unit); err != nil {
		t.Fatal(err)
	}
	mkdir(unit+".d", filepath.Join(units, "aisan-.service.d"))
	check("a link", nil, Warn, "~/.config/systemd/user/aisan-watch.service is a symbolic link: a jail can replace the link, and the user manager runs the unit outside any jail")
	if err := os.Remove(unit); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(unit, []byte("[Service]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	whole := "~/.config/systemd/user/aisan-watch.service and its drop-in directories are read-only in every jail"
	check("whole, manager not asked", nil, OK, whole)
	check("manager reads the data dir too", search, Warn, "~/.config/systemd/user.control/aisan-watch.service.d does not exist (nor 3 other drop-in directories for it): a jail could make it and add lines the user manager runs outside any jail")
	mkdir(filepath.Join(home, ".config", "systemd", "user.control", "aisan-watch.service.d"), filepath.Join(home, ".config", "systemd", "user.control", "aisan-.service.d"), filepath.Join(data, "aisan-watch.service.d"))
	check("one left", search, Warn, "~/.local/share/systemd/user/aisan-.service.d does not exist: a jail could make it and add lines the user manager runs outside any jail")
	mkdir(filepath.Join(data, "aisan-.service.d"))
	check("whole, as the manager reads", search, OK, whole)
	if err := os.Remove(filepath.Join(units, "aisan-.service.d")); err != nil {
		t.Fatal(err)
	}
	mkdir(filepath.Join(units, "aisan-.service.d.x"))
	check("no prefix drop-in directory", nil, Warn, "~/.config/systemd/user/aisan-.service.d does not exist: a jail could make it and add lines the user manager runs outside any jail")
	if err := os.Remove(unit + ".d"); err != nil {
		t.Fatal(err)
	}
	check("neither", nil, Warn, "~/.config/systemd/user/aisan-watch.service.d does not exist (nor one other drop-in directory for it): a jail could make it and add lines the user manager runs outside any jail")
}
