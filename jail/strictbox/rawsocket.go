package strictbox

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/busproxy"
	"github.com/aisan-dev/aisan/jail/strictbox/trust"
)

// SocketHost is what [CheckRawSocket] knows of the host: the environment
// and aisan's state dir.
type SocketHost struct {
	// Getenv reads the host environment (os.Getenv outside tests).
	Getenv func(string) string
	// AisanHome is aisan's state dir.
	AisanHome string
	// UID is the user's uid, for /run/user/UID.
	UID int
	// Writable are directories a box may write (the launch's worktree):
	// a symbolic link there is the box's to point anywhere, so a path
	// that goes through one is refused.
	Writable []string
}

// RawSocketError is a raw relay's socket that aisan refuses to hand a
// box: what it is, and why.
type RawSocketError struct {
	Name, Socket, Real string
	// What is what the socket is ("the user manager's private socket").
	What string
}

func (e *RawSocketError) Error() string {
	via := ""
	if e.Real != e.Socket {
		via = " (which leads to " + e.Real + ")"
	}
	return fmt.Sprintf("--egress %s=%s: %s%s is %s: a box given a raw line to it could command the host outside every jail, so aisan never relays it",
		e.Name, e.Socket, e.Socket, via, e.What)
}

// Hints says what to do instead.
func (e *RawSocketError) Hints() []string {
	return []string{"relay a socket of the one service the box needs, never the user manager, a D-Bus bus or aisan's own run dir; if a configuration file set it, remove it there ('aisan config' shows where)"}
}

// CheckRawSocket resolves a raw relay's socket and refuses one that would
// hand the box the host's controls: the user manager's private socket
// (anything under $XDG_RUNTIME_DIR/systemd or /run/user/UID/systemd), the
// session bus, the system bus, the system manager, or anything in aisan's
// own run dir or state dir. The path is resolved first, so a symbolic link
// into those places is refused, and a socket is compared by the file it
// is too (a hard link to the bus socket is the bus). It fails closed: a
// path that cannot be resolved is refused. It returns the resolved path,
// which is what the box's relay must use, so that a link swapped later
// changes nothing.
func CheckRawSocket(name, socket string, h SocketHost) (string, error) {
	real, _, _, err := CheckRawSocketID(name, socket, h)
	return real, err
}

// CheckRawSocketID is [CheckRawSocket], which also returns the device and
// inode of the socket it checked: the launch must bind that very file (a
// directory on the real path may be swapped before bwrap resolves it).
func CheckRawSocketID(name, socket string, h SocketHost) (string, uint64, uint64, error) {
	real, err := filepath.EvalSymlinks(socket)
	if err != nil {
		return "", 0, 0, fmt.Errorf("--egress %s=%s: resolving the socket's path: %w", name, socket, err)
	}
	refuse := func(what string) error {
		return &RawSocketError{Name: name, Socket: socket, Real: real, What: what}
	}
	if l := boxLink(socket, h.Writable); l != "" {
		return "", 0, 0, refuse("reached through the symbolic link " + l + ", which lies where a box writes and so may have been pointed at another socket by one; give the socket's own path")
	}
	for _, d := range forbiddenDirs(h) {
		if under(real, d.path) {
			return "", 0, 0, refuse(d.what)
		}
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", 0, 0, fmt.Errorf("--egress %s=%s: %w", name, socket, err)
	}
	for _, s := range forbiddenSockets(h) {
		if sameFile(fi, s.path) {
			return "", 0, 0, refuse(s.what)
		}
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "", 0, 0, fmt.Errorf("--egress %s=%s: cannot identify the socket", name, socket)
	}
	return real, uint64(st.Dev), st.Ino, nil
}

// boxLink is the first symbolic link that resolving p goes through
// inside one of the writable directories, or "". p's directories are
// resolved step by step ([trust.Resolve]), so a link is judged where it
// really lies.
func boxLink(p string, writable []string) string {
	if len(writable) == 0 {
		return ""
	}
	var dirs []string
	for _, w := range writable {
		if r, err := filepath.EvalSymlinks(w); err == nil {
			dirs = append(dirs, filepath.Clean(r))
		}
	}
	if !filepath.IsAbs(p) {
		wd, err := os.Getwd()
		if err != nil {
			return ""
		}
		p = wd + "/" + p // not cleaned: ".." is taken after the links before it
	}
	_, hops, err := trust.Resolve(p)
	if err != nil {
		return ""
	}
	for _, h := range hops[:len(hops)-1] {
		for _, d := range dirs {
			if under(h, d) {
				return h
			}
		}
	}
	return ""
}

// place is a path aisan refuses to relay, and what it is.
type place struct{ path, what string }

// forbiddenDirs are the directories no raw relay may reach into, as named
// and by their real paths.
func forbiddenDirs(h SocketHost) []place {
	var out []place
	add := func(p, what string) {
		if p == "" {
			return
		}
		out = append(out, place{filepath.Clean(p), what})
		if r, err := filepath.EvalSymlinks(p); err == nil && r != p {
			out = append(out, place{r, what})
		}
	}
	const manager = "the systemd user manager's private socket directory"
	rt := jail.RuntimeDir(h.Getenv)
	std := "/run/user/" + strconv.Itoa(h.UID)
	for _, d := range []string{rt, h.Getenv("XDG_RUNTIME_DIR"), std} {
		if d != "" {
			add(filepath.Join(d, "systemd"), manager)
		}
	}
	add("/run/systemd", "the system manager's directory")
	add(jail.RunDir(rt, h.AisanHome), "aisan's own run dir")
	add(h.AisanHome, "aisan's own state dir")
	return out
}

// forbiddenSockets are the bus sockets, by path; they are compared by the
// file they are.
func forbiddenSockets(h SocketHost) []place {
	var out []place
	bus := func(addr, what string) {
		as, err := busproxy.ParseAddress(addr)
		if err != nil {
			return
		}
		for _, a := range as {
			if p, ok := a.Get("path"); ok && a.Transport == "unix" {
				out = append(out, place{p, what})
			}
		}
	}
	const session, system = "the D-Bus session bus", "the D-Bus system bus"
	bus(h.Getenv("DBUS_SESSION_BUS_ADDRESS"), session)
	for _, d := range []string{jail.RuntimeDir(h.Getenv), h.Getenv("XDG_RUNTIME_DIR"), "/run/user/" + strconv.Itoa(h.UID)} {
		if d != "" {
			// A hard link to the manager's socket, wherever it is, is
			// the manager.
			out = append(out, place{filepath.Join(d, "bus"), session},
				place{filepath.Join(d, "systemd", "private"), "the systemd user manager's private socket"})
		}
	}
	bus(h.Getenv("DBUS_SYSTEM_BUS_ADDRESS"), system)
	out = append(out, place{"/run/dbus/system_bus_socket", system}, place{"/var/run/dbus/system_bus_socket", system})
	return out
}

// sameFile reports whether fi is the file at p (following links).
func sameFile(fi fs.FileInfo, p string) bool {
	o, err := os.Stat(p)
	if err != nil {
		return false
	}
	a, ok1 := fi.Sys().(*syscall.Stat_t)
	b, ok2 := o.Sys().(*syscall.Stat_t)
	return ok1 && ok2 && a.Dev == b.Dev && a.Ino == b.Ino
}

// under reports whether p is dir or lies beneath it; both are clean.
func under(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}
