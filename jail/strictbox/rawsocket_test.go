package strictbox

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckRawSocket: a raw relay may reach a service's socket, but never
// the user manager, a bus or aisan's own run dir and state, whether named
// directly, through a symbolic link or a hard link; a path that does not
// resolve is refused too.
func TestCheckRawSocket(t *testing.T) {
	rt := t.TempDir()
	home := t.TempDir()
	state := filepath.Join(home, ".aisan")
	other := t.TempDir()
	listen := func(p string) string {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("unix", p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		return p
	}
	private := listen(filepath.Join(rt, "systemd", "private"))
	bus := listen(filepath.Join(rt, "bus"))
	sysbus := listen(filepath.Join(other, "system_bus"))
	proxy := listen(filepath.Join(rt, "aisan", "0123", "bus"))
	inState := listen(filepath.Join(state, "run", "keeper.sock"))
	service := listen(filepath.Join(other, "service.sock"))
	link := func(name, target string) string {
		p := filepath.Join(other, name)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	hard := filepath.Join(other, "hard-bus")
	if err := os.Link(bus, hard); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"XDG_RUNTIME_DIR":          rt,
		"DBUS_SESSION_BUS_ADDRESS": "unix:path=" + bus,
		"DBUS_SYSTEM_BUS_ADDRESS":  "unix:path=" + sysbus,
	}
	h := SocketHost{Getenv: func(k string) string { return env[k] }, AisanHome: state, UID: os.Getuid()}
	for _, tt := range []struct {
		name, socket string
		want         string // the resolved path, or "" for a refusal
		what         string // what the refusal says the socket is
	}{
		{"a service", service, service, ""},
		{"a link to a service", link("svc", service), service, ""},
		{"the manager's private socket", private, "", "user manager"},
		{"a link to it", link("sysd", private), "", "user manager"},
		{"a link to its directory", link("sysd-dir", filepath.Join(rt, "systemd")) + "/private", "", "user manager"},
		{"the session bus", bus, "", "session bus"},
		{"a hard link to the session bus", hard, "", "session bus"},
		{"a link to the session bus", link("bus", bus), "", "session bus"},
		{"the system bus", sysbus, "", "system bus"},
		{"aisan's run dir", proxy, "", "aisan's own run dir"},
		{"aisan's state dir", inState, "", "aisan's own state dir"},
		{"missing", filepath.Join(other, "nothing"), "", "resolving"},
		{"a dangling link", link("dangling", filepath.Join(rt, "systemd", "gone")), "", "resolving"},
	} {
		got, err := CheckRawSocket("x", tt.socket, h)
		switch {
		case tt.want != "":
			if err != nil || got != tt.want {
				t.Errorf("%s: CheckRawSocket(%s) = %q, %v; want %q", tt.name, tt.socket, got, err, tt.want)
			}
		case err == nil:
			t.Errorf("%s: CheckRawSocket(%s) = %q; want a refusal", tt.name, tt.socket, got)
		case !strings.Contains(err.Error(), tt.what) || !strings.Contains(err.Error(), "--egress x="+tt.socket):
			t.Errorf("%s: error %q; want it to name the option and say %q", tt.name, err, tt.what)
		}
		var re *RawSocketError
		if errors.As(err, &re) && len(re.Hints()) == 0 {
			t.Errorf("%s: a refusal without a hint", tt.name)
		}
	}
}

// TestCheckRawSocketBoxLink: a box writes its worktree, so a symbolic
// link there is the box's to point at any socket of the user's (an
// agent's, a container engine's) for the next launch that names the
// path. A path that goes through such a link is refused, whether the
// link is the socket's name, one of its directories, or lies past a
// host link that leads into the worktree; the same socket named by its
// own path, or a link outside the worktree, is relayed.
func TestCheckRawSocketBoxLink(t *testing.T) {
	repo := t.TempDir()
	other := t.TempDir()
	ln, err := net.Listen("unix", filepath.Join(other, "agent.sock"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	agent := filepath.Join(other, "agent.sock")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(repo, ".run"), 0o755))
	must(os.Symlink(agent, filepath.Join(repo, ".run", "db.sock")))
	must(os.Symlink(other, filepath.Join(repo, "dir")))
	must(os.MkdirAll(filepath.Join(repo, "sub"), 0o755))
	must(os.Symlink(filepath.Join(repo, ".run"), filepath.Join(other, "into-repo")))
	must(os.Symlink(agent, filepath.Join(other, "host-link")))
	h := SocketHost{Getenv: func(string) string { return "" }, AisanHome: filepath.Join(other, ".aisan"), UID: os.Getuid(), Writable: []string{repo}}
	for _, tt := range []struct {
		name, socket string
		ok           bool
	}{
		{"a link in the worktree", filepath.Join(repo, ".run", "db.sock"), false},
		{"a directory link in the worktree", filepath.Join(repo, "dir", "agent.sock"), false},
		{"a host link into the worktree's link", filepath.Join(other, "into-repo", "db.sock"), false},
		{"a link in the worktree, then ..", filepath.Join(repo, "dir") + "/../" + filepath.Base(other) + "/agent.sock", false},
		{"the socket's own path", agent, true},
		{"a link outside the worktree", filepath.Join(other, "host-link"), true},
		{"through the worktree without a link", filepath.Join(repo, "sub") + "/../../" + filepath.Base(other) + "/agent.sock", true},
	} {
		got, err := CheckRawSocket("x", tt.socket, h)
		switch {
		case tt.ok && (err != nil || got != agent):
			t.Errorf("%s: CheckRawSocket(%s) = %q, %v; want %s", tt.name, tt.socket, got, err, agent)
		case !tt.ok && err == nil:
			t.Errorf("%s: CheckRawSocket(%s) = %q; want a refusal", tt.name, tt.socket, got)
		case !tt.ok && !strings.Contains(err.Error(), "where a box writes"):
			t.Errorf("%s: error %q; want it to say the link lies where a box writes", tt.name, err)
		}
	}
}
