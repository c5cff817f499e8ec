package preflight

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/aisan-dev/aisan/jail/busproxy"
)

// The live checks: each reads the one probe jail's report. The decide*
// functions are pure, so every outcome has a unit test with a synthetic
// report.

// liveCheck wraps a decision so that a probe jail that did not run makes
// the check fail with the reason, instead of passing by default.
func liveCheck(decide func(e *Env, r liveResult) Finding) func(context.Context, *Env) Finding {
	return liveCheckAs(decide, false)
}

// leadLive is the first live check. When a setting keeps the probe jail
// from being planned, it alone quotes the error; the other live checks
// refer to it.
const leadLive = "foreign PIDs"

// leadLiveCheck is liveCheck for the check named leadLive.
func leadLiveCheck(decide func(e *Env, r liveResult) Finding) func(context.Context, *Env) Finding {
	return liveCheckAs(decide, true)
}

func liveCheckAs(decide func(e *Env, r liveResult) Finding, lead bool) func(context.Context, *Env) Finding {
	return func(ctx context.Context, e *Env) Finding {
		r := e.liveProbe(ctx)
		var pe *planError
		switch {
		case errors.As(r.err, &pe) && lead:
			return Finding{Status: Fail, Detail: "not proven: the probe jail cannot be planned: " + pe.err.Error(), Fix: e.planFix()}
		case errors.As(r.err, &pe):
			return Finding{Status: Fail, Detail: "not proven: the probe jail cannot be planned (see " + leadLive + ")", Fix: e.planFix()}
		case r.err != nil:
			return Finding{Status: Fail, Detail: "not proven: " + r.err.Error(), Fix: e.liveFix(ctx)}
		}
		return decide(e, r)
	}
}

// planFix is the fix for a probe jail that cannot be planned: correct or
// unset the setting at fault, checked in the order the planner reads them.
func (e *Env) planFix() string {
	switch e.Getenv(busproxy.EnvNoProxy) {
	case "", "0", "1":
	default:
		return "unset " + busproxy.EnvNoProxy + "   # or set it to 1 (mask the session bus) or 0 (filter it)"
	}
	if _, err := busproxy.ParseTalk(e.Getenv(busproxy.EnvTalk)); err != nil {
		return "unset " + busproxy.EnvTalk + "   # or correct it: bus names such as org.freedesktop.secrets, or NAME.* patterns, separated by spaces"
	}
	if a := e.Getenv(busproxy.EnvAddress); a != "" {
		if _, err := busproxy.ParseAddress(a); err != nil {
			return "unset " + busproxy.EnvAddress
		}
	}
	return "aisan explain run -- true   # plans a jail the same way, and shows the same error"
}

// liveFix is the fix for a probe jail that did not run: the cause's own
// fix when preflight knows it.
func (e *Env) liveFix(ctx context.Context) string {
	if bw := e.bwrapProbe(ctx); bw.Err != nil {
		return e.install("bwrap")
	}
	if u := e.usernsProbe(ctx); u.err != nil {
		_, fix := classifyUserns(u.facts)
		return fix
	}
	return e.fixJail()
}

// fixJail is the fix for a denial that does not hold although the jail
// ran: the Spec says otherwise, so bwrap did not do what it was asked.
func (e *Env) fixJail() string {
	return "upgrade bubblewrap: " + e.install("bwrap") + "\n" +
		"aisan explain run -- true   # the mounts the jail asks bwrap for"
}

// fixUnhidden is the fix for a denial bypassed through a runtime dir the
// jail does not cover (XDG_RUNTIME_DIR unset or elsewhere): give the
// jail the real one, which it then hides.
func (e *Env) fixUnhidden(path string) (string, bool) {
	rt := e.Getenv("XDG_RUNTIME_DIR")
	if path == "" || rt != "" && (path == rt || strings.HasPrefix(path, filepath.Clean(rt)+"/")) {
		return "", false
	}
	return fixXDG, true
}

func decidePID(e *Env, r liveResult) Finding {
	p, m := r.rep.PID, r.req.Marker
	switch {
	case !r.markerAlive:
		return Finding{Status: Fail, Detail: fmt.Sprintf("not proven: the marker process (PID %d) ended during the probe", m), Fix: "aisan preflight"}
	case p.Visible || len(p.Found) > 0:
		return Finding{Status: Fail, Detail: fmt.Sprintf("PID %d outside the jail is visible inside (in /proc: pkill -f would find it)", m), Fix: e.fixJail()}
	case p.Kill == "" && p.Taken:
		return Finding{Status: Warn, Detail: fmt.Sprintf("inconclusive: PID %d outside is also the PID of a process inside the jail", m), Fix: "aisan preflight"}
	case p.Kill == "":
		return Finding{Status: Fail, Detail: fmt.Sprintf("PID %d outside the jail can be signalled from inside", m), Fix: e.fixJail()}
	case p.Kill != "ESRCH":
		return Finding{Status: Fail, Detail: fmt.Sprintf("kill(%d, 0) inside fails with %s, not ESRCH: a process with that PID exists inside", m, p.Kill), Fix: e.fixJail()}
	}
	return Finding{Detail: fmt.Sprintf("PID %d outside is not in the jail's /proc, and kill(%d, 0) inside fails with ESRCH", m, m)}
}

func decideCgroup(e *Env, r liveResult) Finding {
	c := r.rep.Cgroup
	switch {
	case c.Mkdir == "":
		return Finding{Status: Fail, Detail: fmt.Sprintf("a cgroup could be created in %s from inside (removed again)", c.Dir), Fix: e.fixJail()}
	case c.Mkdir != "EROFS":
		return Finding{Status: Fail, Detail: fmt.Sprintf("mkdir in %s inside fails with %s, not EROFS: the cgroup tree is not read-only, only this cgroup's permissions held", c.Dir, c.Mkdir), Fix: e.fixJail()}
	case len(c.Writable) > 0:
		return Finding{Status: Fail, Detail: "writable cgroup mounts inside: " + strings.Join(c.Writable, " "), Fix: e.fixJail()}
	}
	return Finding{Detail: fmt.Sprintf("mkdir in %s inside fails with EROFS; every mount under /sys/fs/cgroup is read-only", c.Dir)}
}

// decideTerminals proves that no pty outside (the user's terminals, other
// jails') is reachable inside by its /dev/pts path.
func decideTerminals(e *Env, r liveResult) Finding {
	if len(r.req.Terminals) == 0 {
		return Finding{Detail: "not proven: no terminal (/dev/pts/N) exists outside"}
	}
	for i, pt := range r.req.Terminals {
		if i >= len(r.rep.Terminals) {
			return Finding{Status: Fail, Detail: "not proven: the probe did not report on " + pt.Path, Fix: "aisan preflight"}
		}
		if r.rep.Terminals[i].Same {
			return Finding{Status: Fail, Detail: fmt.Sprintf("the host's terminal %s is reachable inside: a jail could read what is typed there and write into it", pt.Path), Fix: e.fixJail()}
		}
	}
	return Finding{Detail: fmt.Sprintf("no terminal outside (%d in /dev/pts) is reachable inside; the jail has a devpts of its own", len(r.req.Terminals))}
}

func decideSystemdBus(e *Env, r liveResult) Finding {
	hb := e.hostBusProbe()
	if len(r.req.BusAddrs) == 0 {
		for _, a := range hb.attempts {
			if a.err == nil {
				return Finding{Detail: "not proven: org.freedesktop.systemd1 is not on the host's session bus (nothing to deny)"}
			}
		}
		return Finding{Detail: "no session bus answers on this host (nothing to deny)"}
	}
	var denied, unsure []string
	for _, b := range r.rep.Bus {
		switch {
		case b.Connect != "":
			denied = append(denied, b.Addr+": cannot connect")
		case b.Systemd1 == busReached:
			fix, ok := e.fixUnhidden(addrPath(b.Addr))
			switch {
			case addrUnmaskable(b.Addr):
				fix = e.fixAbstract()
			case !ok:
				fix = e.fixJail()
			}
			return Finding{Status: Fail, Detail: "org.freedesktop.systemd1 answers inside at " + b.Addr, Fix: fix}
		case !b.Definite:
			unsure = append(unsure, b.Addr+": "+b.Systemd1)
		default:
			denied = append(denied, b.Addr+": "+shortDBusError(b.Systemd1))
		}
	}
	if len(unsure) > 0 {
		return Finding{Status: Warn, Detail: "inconclusive: no clear answer inside from " + strings.Join(unsure, "; "), Fix: "aisan preflight"}
	}
	return Finding{Detail: "org.freedesktop.systemd1 is unreachable inside (" + strings.Join(denied, "; ") + ")"}
}

func decidePrivate(e *Env, r liveResult) Finding {
	if len(r.req.Private) == 0 {
		return Finding{Detail: "no user manager socket on this host (nothing to hide)"}
	}
	var denied []string
	for _, c := range r.rep.Private {
		if c.Err == "" {
			fix, ok := e.fixUnhidden(c.Path)
			if !ok {
				fix = e.fixJail()
			}
			return Finding{Status: Fail, Detail: c.Path + " accepts connections inside", Fix: fix}
		}
		denied = append(denied, fmt.Sprintf("%s: %s", c.Path, c.Err))
	}
	return Finding{Detail: "unreachable inside (" + strings.Join(denied, "; ") + ")"}
}

func decideDirs(e *Env, r liveResult) Finding {
	var ok []string
	for i, d := range r.req.Dirs {
		if i >= len(r.rep.Dirs) {
			return Finding{Status: Fail, Detail: "not proven: the probe did not report on " + d.Label, Fix: "aisan preflight"}
		}
		got := r.rep.Dirs[i]
		switch {
		case got.Err != "":
			return Finding{Status: Fail, Detail: fmt.Sprintf("%s (%s) is not there inside: %s", d.Label, e.tilde(d.Path), got.Err), Fix: e.fixJail()}
		case !got.Same:
			return Finding{Status: Fail, Detail: fmt.Sprintf("%s (%s) inside is not the host's directory", d.Label, e.tilde(d.Path)), Fix: e.fixJail()}
		case d.Writable && got.Write != "":
			return Finding{Status: Fail, Detail: fmt.Sprintf("%s (%s) is writable outside but not inside: %s", d.Label, e.tilde(d.Path), got.Write), Fix: e.fixJail()}
		case d.Writable:
			ok = append(ok, d.Label)
		default:
			ok = append(ok, d.Label+" (read-only, as outside)")
		}
	}
	if len(ok) == 0 {
		return Finding{Detail: "nothing to compare: neither $HOME nor /tmp exists"}
	}
	return Finding{Detail: joinAnd(ok) + " inside are the host's, and writable where they are outside"}
}

func decideSockets(e *Env, r liveResult) Finding {
	if len(r.req.Sockets) == 0 {
		return Finding{Detail: "none found outside (ssh-agent, gpg-agent, pulse, pipewire, wayland)"}
	}
	var ok []string
	for i, s := range r.req.Sockets {
		if i >= len(r.rep.Sockets) {
			return Finding{Status: Fail, Detail: "not proven: the probe did not report on " + s.Label, Fix: "aisan preflight"}
		}
		got := r.rep.Sockets[i]
		switch {
		case got.Err != "":
			return Finding{Status: Fail, Detail: fmt.Sprintf("%s (%s) is missing inside: %s", s.Label, e.tilde(s.Path), got.Err), Fix: e.fixJail()}
		case !got.Same:
			return Finding{Status: Fail, Detail: fmt.Sprintf("%s (%s) inside is not the host's socket", s.Label, e.tilde(s.Path)), Fix: e.fixJail()}
		}
		ok = append(ok, s.Label)
	}
	if len(ok) == 1 {
		return Finding{Detail: ok[0] + " inside is the host's socket"}
	}
	return Finding{Detail: joinAnd(ok) + " inside are the host's sockets"}
}

// decideSessionBus names what the jail gets in place of the session bus
// and, when it is filtered, proves that each allowed name present on the
// host bus answers inside.
func decideSessionBus(e *Env, r liveResult) Finding {
	p := r.plan
	switch p.Mode {
	case busproxy.None:
		return Finding{Detail: "none: no session bus in this environment (DBUS_SESSION_BUS_ADDRESS unset, no $XDG_RUNTIME_DIR/bus)"}
	case busproxy.Masked:
		// A missing xdg-dbus-proxy is its own warning; one cause, one
		// problem.
		return Finding{Detail: "masked (" + p.Why + "): nothing on the bus is reachable inside"}
	}
	talk := strings.Join(p.Talk, " ")
	if talk == "" {
		talk = "nothing but the bus itself"
	}
	if len(r.req.Names) == 0 {
		return Finding{Detail: "filtered through xdg-dbus-proxy; none of the allowed names (" + talk + ") is on the host bus"}
	}
	var reached []string
	for _, n := range r.rep.Names {
		if n.Result != busReached {
			return Finding{
				Status: Fail,
				Detail: fmt.Sprintf("filtered, but %s, allowed and on the host bus, is unreachable inside: %s", n.Name, shortDBusError(n.Result)),
				Fix:    "upgrade xdg-dbus-proxy (0.1.7 or newer): " + e.install(busproxy.ProxyName),
			}
		}
		reached = append(reached, n.Name)
	}
	return Finding{Detail: "filtered through xdg-dbus-proxy; reachable inside: " + strings.Join(reached, " ")}
}

// shortDBusError drops the common prefix of D-Bus's own error names.
func shortDBusError(s string) string {
	return strings.TrimPrefix(s, "org.freedesktop.DBus.Error.")
}

// addrPath is the unix:path of a bus address's first entry, "" if none.
func addrPath(addr string) string {
	as, err := busproxy.ParseAddress(addr)
	if err != nil {
		return ""
	}
	for _, a := range as {
		if a.Transport == "unix" {
			if p, ok := a.Get("path"); ok {
				return p
			}
		}
	}
	return ""
}

// addrUnmaskable reports whether any entry of addr is reachable without a
// filesystem path (an abstract socket, TCP), which no mount can hide.
func addrUnmaskable(addr string) bool {
	as, err := busproxy.ParseAddress(addr)
	if err != nil {
		return false
	}
	for _, a := range as {
		switch a.Transport {
		case "unix":
			if _, ok := a.Get("abstract"); ok {
				return true
			}
		case "tcp", "nonce-tcp":
			return true
		}
	}
	return false
}

// joinAnd joins words as prose: "a", "a and b", "a, b and c".
func joinAnd(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}
