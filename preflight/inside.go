package preflight

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/godbus/dbus/v5"
	"golang.org/x/sys/unix"
)

// busTimeout bounds each connection and call the probe makes on a bus.
// A local bus answers in microseconds; a proxy that drops a call would
// otherwise hold preflight for D-Bus's default 25 s.
const busTimeout = 1500 * time.Millisecond

// RunInside is the inside half of the live probe: run in the probe jail
// as "aisan preflight --probe-inside", it reads the request from
// [EnvProbe], tries each denial and transparency promise, and writes what
// it saw to w as JSON. It changes nothing it does not undo: the cgroup
// directory and files it manages to create are removed at once.
func RunInside(ctx context.Context, w io.Writer) error {
	raw := os.Getenv(EnvProbe)
	if raw == "" {
		return fmt.Errorf("%s is not set: --probe-inside is preflight's own inside half, not a user command", EnvProbe)
	}
	var req probeRequest
	if err := json.Unmarshal([]byte(raw), &req); err != nil {
		return fmt.Errorf("decoding the probe request: %w", err)
	}
	rep := probeReport{
		PID:     probePID(req),
		Cgroup:  probeCgroup(req.Token),
		Private: probePrivate(req.Private),
		Dirs:    probeDirs(req),
		Sockets: probeFiles(req.Sockets),
		// A stat is enough: the jail's own devpts may have a pts/N too,
		// but never the host's inode.
		Terminals: probeFiles(req.Terminals),
	}
	rep.Bus, rep.Names = probeBus(ctx, req)
	if err := json.NewEncoder(w).Encode(rep); err != nil {
		return fmt.Errorf("writing the probe report: %w", err)
	}
	return nil
}

// probePID looks for the marker the way an agent's pkill -f or kill
// would: by name in /proc, and by PID with signal 0, which checks
// existence and permission without delivering anything.
func probePID(req probeRequest) pidReport {
	var r pidReport
	name := []byte(markerPrefix + req.Token)
	ents, _ := os.ReadDir("/proc")
	for _, ent := range ents {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		if cmd, err := os.ReadFile(filepath.Join("/proc", ent.Name(), "cmdline")); err == nil && bytes.Contains(cmd, name) {
			r.Found = append(r.Found, pid)
		}
	}
	if cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", req.Marker)); err == nil {
		if bytes.Contains(cmd, name) {
			r.Visible = true
		} else {
			r.Taken = true
		}
	}
	r.Kill = errnoName(unix.Kill(req.Marker, 0))
	return r
}

// probeCgroup tries to create a cgroup below its own, the smallest write
// a delegated user could make outside, then lists the cgroup mounts that
// are not read-only, so a writable submount is caught too.
func probeCgroup(token string) cgroupReport {
	r := cgroupReport{Dir: "/sys/fs/cgroup"}
	if b, err := os.ReadFile("/proc/self/cgroup"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, "0::"); ok {
				dir := filepath.Join("/sys/fs/cgroup", rest)
				var st unix.Statfs_t
				if unix.Statfs(dir, &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC {
					r.Dir = dir
				}
			}
		}
	}
	target := filepath.Join(r.Dir, "aisan-preflight-"+token)
	err := unix.Mkdir(target, 0o755)
	if err == nil {
		unix.Rmdir(target)
	}
	r.Mkdir = errnoName(err)
	r.Writable = writableMounts("/sys/fs/cgroup")
	return r
}

// writableMounts lists the visible mount points at or under root whose
// per-mount flags are not read-only. The jail's read-only bind sits on
// top of the host's mounts, which mountinfo still lists: a mount is
// hidden when a later one sits on its path or above it.
func writableMounts(root string) []string {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return []string{"(cannot read /proc/self/mountinfo: " + errnoName(err) + ")"}
	}
	return writableIn(string(b), root)
}

// writableIn is writableMounts over mountinfo's content.
func writableIn(mountinfo, root string) []string {
	type mnt struct {
		point string
		ro    bool
	}
	var mounts []mnt
	for _, line := range strings.Split(mountinfo, "\n") {
		fields := strings.Fields(line)
		if len(fields) < 6 {
			continue
		}
		mounts = append(mounts, mnt{unescapeMount(fields[4]), slices.Contains(strings.Split(fields[5], ","), "ro")})
	}
	var out []string
	for i, m := range mounts {
		if m.ro || !under(m.point, root) {
			continue
		}
		hidden := false
		for _, later := range mounts[i+1:] {
			if under(m.point, later.point) {
				hidden = true
				break
			}
		}
		if !hidden {
			out = append(out, m.point)
		}
	}
	return out
}

// under reports whether p is dir or below it.
func under(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// probeBus calls org.freedesktop.systemd1 at the jail's own bus address
// and at every address the host bus answers on outside, then pings each
// allowed name through the jail's own address.
func probeBus(ctx context.Context, req probeRequest) ([]busReport, []nameReport) {
	type target struct {
		addr string
		jail bool
	}
	var targets []target
	seen := map[string]bool{}
	if a := os.Getenv("DBUS_SESSION_BUS_ADDRESS"); a != "" {
		targets = append(targets, target{a, true})
		seen[a] = true
	}
	for _, a := range req.BusAddrs {
		if !seen[a] {
			targets = append(targets, target{a, false})
			seen[a] = true
		}
	}
	var (
		reports []busReport
		names   []nameReport
	)
	for _, t := range targets {
		r := busReport{Addr: t.addr, Jail: t.jail}
		conn, err := connectBus(t.addr)
		if err != nil {
			r.Connect = err.Error()
			reports = append(reports, r)
			if t.jail {
				for _, n := range req.Names {
					names = append(names, nameReport{Name: n, Result: "cannot connect to the bus: " + err.Error()})
				}
			}
			continue
		}
		r.Systemd1, r.Definite = ping(ctx, conn, "org.freedesktop.systemd1")
		if t.jail {
			for _, n := range req.Names {
				res, _ := ping(ctx, conn, n)
				names = append(names, nameReport{Name: n, Result: res})
			}
		}
		conn.Close()
		reports = append(reports, r)
	}
	if len(targets) == 0 {
		for _, n := range req.Names {
			names = append(names, nameReport{Name: n, Result: "DBUS_SESSION_BUS_ADDRESS is not set inside"})
		}
	}
	return reports, names
}

// connectBus connects and says Hello, within busTimeout.
func connectBus(addr string) (*dbus.Conn, error) {
	conn, err := dbus.Dial(addr)
	if err != nil {
		return nil, err
	}
	// Closing the connection is what unblocks a handshake nobody answers.
	timer := time.AfterFunc(busTimeout, func() { conn.Close() })
	err = conn.Auth(nil)
	if err == nil {
		err = conn.Hello()
	}
	if !timer.Stop() {
		conn.Close()
		return nil, fmt.Errorf("no answer within %v", busTimeout)
	}
	if err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

// D-Bus errors by which a bus says a name is not there for us.
var busRefusals = []string{
	"org.freedesktop.DBus.Error.ServiceUnknown",
	"org.freedesktop.DBus.Error.NameHasNoOwner",
	"org.freedesktop.DBus.Error.AccessDenied",
}

// ping calls org.freedesktop.DBus.Peer.Ping on name. It returns
// [busReached] when the service answered — an error reply from the
// service itself (UnknownMethod) is an answer too — or the reason it did
// not, and whether that outcome is definite.
func ping(ctx context.Context, conn *dbus.Conn, name string) (string, bool) {
	ctx, cancel := context.WithTimeout(ctx, busTimeout)
	defer cancel()
	err := conn.Object(name, "/").CallWithContext(ctx, "org.freedesktop.DBus.Peer.Ping", 0).Err
	if err == nil {
		return busReached, true
	}
	var de dbus.Error
	var dep *dbus.Error
	switch {
	case errors.As(err, &de):
	case errors.As(err, &dep):
		de = *dep
	default:
		return err.Error(), false
	}
	if slices.Contains(busRefusals, de.Name) {
		return de.Name, true
	}
	if de.Name == "org.freedesktop.DBus.Error.NoReply" || de.Name == "org.freedesktop.DBus.Error.Disconnected" {
		return de.Name, false
	}
	return busReached, true
}

// probePrivate connects to each of the user manager's private sockets.
func probePrivate(paths []string) []connReport {
	var out []connReport
	for _, p := range paths {
		c, err := net.DialTimeout("unix", p, busTimeout)
		if err == nil {
			c.Close()
		}
		out = append(out, connReport{Path: p, Err: errnoName(err)})
	}
	return out
}

// probeDirs checks that $HOME and /tmp are the host's and, where the user
// may write them outside, writable: a file is created and removed.
func probeDirs(req probeRequest) []fileReport {
	out := probeFiles(req.Dirs)
	for i, d := range req.Dirs {
		if !d.Writable || !out[i].Same {
			continue
		}
		p := filepath.Join(d.Path, ".aisan-preflight-"+req.Token)
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			f.Close()
			os.Remove(p)
		}
		out[i].Write = errnoName(err)
	}
	return out
}

// probeFiles checks that each path names the same inode inside.
func probeFiles(ids []fileID) []fileReport {
	out := make([]fileReport, 0, len(ids))
	for _, id := range ids {
		r := fileReport{Path: id.Path}
		var st unix.Stat_t
		if err := unix.Stat(id.Path, &st); err != nil {
			r.Err = errnoName(err)
		} else {
			r.Same = st.Dev == id.Dev && st.Ino == id.Ino
		}
		out = append(out, r)
	}
	return out
}

// errnoName is the symbolic name of err's errno ("EROFS"), the error's
// text when it carries none, and "" for nil.
func errnoName(err error) string {
	if err == nil {
		return ""
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		if n := unix.ErrnoName(errno); n != "" {
			return n
		}
	}
	return err.Error()
}
