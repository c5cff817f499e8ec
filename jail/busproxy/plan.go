package busproxy

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/aisan-dev/aisan/jail/shared/hostprog"
)

// Environment variables Decide reads.
const (
	// EnvAddress is the session bus address clients use.
	EnvAddress = "DBUS_SESSION_BUS_ADDRESS"
	// EnvTalk is the whitespace-separated allow-list; unset means
	// [DefaultTalk].
	EnvTalk = "AISAN_BUS_TALK"
	// EnvNoProxy=1 masks the bus instead of filtering it.
	EnvNoProxy = "AISAN_NO_BUS_PROXY"
	// envRuntimeDir is where clients look for the bus when EnvAddress is
	// unset.
	envRuntimeDir = "XDG_RUNTIME_DIR"
)

// ProxyName is the program Gather looks for in PATH.
const ProxyName = "xdg-dbus-proxy"

// maxSocketPath is the longest path a Unix socket address holds: 108
// bytes in sockaddr_un.sun_path, less the terminating NUL.
const maxSocketPath = 107

// SyncFD is the descriptor number on which the proxy finds its end of the
// readiness pipe: [Start] passes the pipe as the first of the child's
// ExtraFiles, which is always descriptor 3. [Argv] therefore writes the
// literal --fd=3, and what explain prints is exactly what runs.
const SyncFD = 3

// Mode says what the jail gets in place of the host's session bus.
type Mode int

const (
	// None: the host has no session bus, so there is nothing to hide.
	None Mode = iota
	// Filtered: the bus socket is replaced by an xdg-dbus-proxy socket that
	// lets the jail talk only to the names in [Plan.Talk].
	Filtered
	// Masked: the bus socket is covered by an empty file; nothing on the
	// bus works in the jail.
	Masked
)

// MarshalText writes the mode's name, so plans read as words in JSON.
func (m Mode) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText reads a mode's name.
func (m *Mode) UnmarshalText(b []byte) error {
	for _, c := range []Mode{None, Filtered, Masked} {
		if c.String() == string(b) {
			*m = c
			return nil
		}
	}
	return fmt.Errorf("unknown bus mode %q", b)
}

func (m Mode) String() string {
	switch m {
	case None:
		return "none"
	case Filtered:
		return "filtered"
	case Masked:
		return "masked"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// HostFacts is what Decide needs to know about the host. [Gather] collects
// it; tests write it by hand.
type HostFacts struct {
	// ProxyPath is the absolute path of xdg-dbus-proxy, "" when it is not
	// installed.
	ProxyPath string
	// SlotDir is the slot's private runtime directory on the host, where
	// the proxy's socket goes (as SlotDir/bus). The launcher chooses it and
	// creates it before [Start]; its name must carry no project text, since
	// it appears in the proxy's argv.
	SlotDir string
	// Sockets lists the candidate bus socket paths (see [Candidates]) that
	// exist on the host as sockets. Only these are masked: a bind over a
	// missing path would create it on the host.
	Sockets []string
}

// Gather collects the HostFacts for Decide: it looks xdg-dbus-proxy up on
// PATH and checks which candidate bus paths are sockets. The proxy runs
// outside the jail with the host's bus, so it is found as bwrap is: the
// first on PATH that no jail could have put there (see package hostprog).
func Gather(lookupEnv func(string) (string, bool), slotDir string) HostFacts {
	f := HostFacts{SlotDir: slotDir}
	f.ProxyPath = hostprog.Find(ProxyName, os.Getenv("PATH")).Path
	for _, c := range Candidates(lookupEnv) {
		if fi, err := os.Stat(c); err == nil && fi.Mode()&os.ModeSocket != 0 {
			f.Sockets = append(f.Sockets, c)
		}
	}
	return f
}

// Candidates returns the filesystem paths a client in the jail could
// reach the host's session bus through: every unix:path in
// DBUS_SESSION_BUS_ADDRESS (when it parses), then $XDG_RUNTIME_DIR/bus,
// where clients look when the variable is unset. Paths are cleaned and
// listed once.
func Candidates(lookupEnv func(string) (string, bool)) []string {
	var out []string
	add := func(p string) {
		if !filepath.IsAbs(p) {
			return
		}
		p = filepath.Clean(p)
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	if s, _ := lookupEnv(EnvAddress); s != "" {
		if addrs, err := ParseAddress(s); err == nil {
			for _, a := range addrs {
				if p, ok := unixPath(a); ok {
					add(p)
				}
			}
		}
	}
	if rt, _ := lookupEnv(envRuntimeDir); rt != "" {
		add(filepath.Join(rt, "bus"))
	}
	return out
}

func unixPath(a Address) (string, bool) {
	if a.Transport != "unix" {
		return "", false
	}
	return a.Get("path")
}

// unmaskable reports whether a client can reach a without a filesystem
// path: an abstract Unix socket or TCP, both reachable from any process in
// the host's network namespace, which the deny-list jail shares.
func unmaskable(a Address) bool {
	switch a.Transport {
	case "unix":
		_, ok := a.Get("abstract")
		return ok
	case "tcp", "nonce-tcp":
		return true
	}
	return false
}

// Plan is what the jail gets in place of the host's session bus. Decide
// builds it; the launcher turns it into mounts and one environment
// variable, starts the proxy with [Start] when Mode is Filtered, and prints
// it in explain.
type Plan struct {
	// Mode is the outcome.
	Mode Mode
	// Why says in a few words why the bus is masked or absent, for
	// explain: "AISAN_NO_BUS_PROXY=1", "xdg-dbus-proxy is not installed",
	// "no session bus". Empty when filtered.
	Why string
	// HostAddress is the host's session bus address, as the proxy is given
	// it: DBUS_SESSION_BUS_ADDRESS, or unix:path=$XDG_RUNTIME_DIR/bus when
	// that is unset. Empty in None.
	HostAddress string
	// HostSockets are the host bus's socket paths that exist, in the order
	// clients try them, then $XDG_RUNTIME_DIR/bus. None of them may stay
	// reachable from the jail: see [Plan.Mounts].
	HostSockets []string
	// Abstract is set when the host bus is also reachable at an abstract
	// socket (or over TCP), which no mount can hide.
	Abstract bool
	// Talk lists the names the jail may talk to through the proxy.
	Talk []string
	// Proxy is the path of xdg-dbus-proxy (Filtered only).
	Proxy string
	// ProxySocket is the socket the jail's clients reach on the host:
	// SlotDir/bus, a launch's gate, with the proxy behind it on
	// SlotDir/bus-filter ([Plan.Behind]); or the proxy's own when [Start]
	// runs it directly (Filtered only).
	ProxySocket string
	// JailSocket is where the proxy's socket appears inside the jail: the
	// first host socket, so that clients which ignore
	// DBUS_SESSION_BUS_ADDRESS still land on the proxy; ProxySocket itself
	// when the host bus has no socket path (Filtered only).
	JailSocket string
	// JailAddress is the value of DBUS_SESSION_BUS_ADDRESS inside the jail.
	// In Filtered it points at JailSocket; in Masked at the first masked
	// socket, or "" (the variable is unset) when there is none. In None the
	// variable is left as it is. See [Plan.ApplyEnv].
	JailAddress string
	// Warnings are messages for the user, to print once per launch: a
	// missing xdg-dbus-proxy, an abstract bus address.
	Warnings []string
}

// Mount is one mount the jail needs for its bus: Src bound over Dst, or,
// when Src is "", a mask: Dst covered read-only by something no client can
// connect to (an empty file, or /dev/null).
type Mount struct {
	Src, Dst string
}

// Mounts returns the mounts that hide the host bus, in the order to
// apply them. The empty files come first and the proxy's socket last:
// if two host paths are the same socket under different names (a symlinked
// /var/run), the later mount is the one the jail sees, and that must be
// the proxy.
func (p Plan) Mounts() []Mount {
	var out []Mount
	switch p.Mode {
	case Masked:
		for _, s := range p.HostSockets {
			out = append(out, Mount{Dst: s})
		}
	case Filtered:
		for _, s := range p.HostSockets {
			if s != p.JailSocket {
				out = append(out, Mount{Dst: s})
			}
		}
		if p.JailSocket != p.ProxySocket {
			out = append(out, Mount{Src: p.ProxySocket, Dst: p.JailSocket})
		}
	}
	return out
}

// ApplyEnv returns a copy of env (KEY=VALUE entries) with
// DBUS_SESSION_BUS_ADDRESS set as the plan says: set to JailAddress, or
// removed when JailAddress is "" in Masked. In None env is returned
// unchanged (still a copy). Order is kept; a new entry goes last.
func (p Plan) ApplyEnv(env []string) []string {
	out := slices.Clone(env)
	if p.Mode == None {
		return out
	}
	prefix := EnvAddress + "="
	out = slices.DeleteFunc(out, func(kv string) bool { return strings.HasPrefix(kv, prefix) })
	if p.JailAddress != "" {
		out = append(out, prefix+p.JailAddress)
	}
	return out
}

// String is the one-line summary explain prints: the mode, then the
// names or the reason.
func (p Plan) String() string {
	switch p.Mode {
	case Filtered:
		if len(p.Talk) == 0 {
			return "filtered (talk: nothing but the bus itself)"
		}
		return "filtered (talk: " + strings.Join(p.Talk, " ") + ")"
	case Masked, None:
		if p.Why != "" {
			return p.Mode.String() + " (" + p.Why + ")"
		}
	}
	return p.Mode.String()
}

// Argv returns the proxy's exact command line, as [Start] runs it and
// explain prints it, or nil when the plan starts no proxy. The host
// address and the socket are single arguments, never split; --fd is the
// literal [SyncFD].
func Argv(p Plan) []string {
	if p.Mode != Filtered {
		return nil
	}
	argv := []string{p.Proxy, fmt.Sprintf("--fd=%d", SyncFD), p.HostAddress, p.ProxySocket, "--filter"}
	for _, n := range p.Talk {
		argv = append(argv, "--talk="+n)
	}
	return argv
}

// Decide works out what the jail gets in place of the session bus, from
// the environment (lookupEnv is os.LookupEnv or a test's map) and the
// host facts. It does no I/O. It fails only on settings the user must
// fix: a bad AISAN_BUS_TALK entry, AISAN_NO_BUS_PROXY other than 0 or 1,
// an unparseable DBUS_SESSION_BUS_ADDRESS. A missing xdg-dbus-proxy is not
// an error: the bus is masked and a warning says what to install.
func Decide(lookupEnv func(string) (string, bool), facts HostFacts) (Plan, error) {
	noProxy, err := readNoProxy(lookupEnv)
	if err != nil {
		return Plan{}, err
	}
	talkText, ok := lookupEnv(EnvTalk)
	if !ok {
		talkText = DefaultTalk
	}
	talk, err := ParseTalk(talkText)
	if err != nil {
		return Plan{}, fmt.Errorf("reading %s: %w; fix or unset it", EnvTalk, err)
	}

	hostAddress, _ := lookupEnv(EnvAddress)
	rt, _ := lookupEnv(envRuntimeDir)
	fallback := ""
	if filepath.IsAbs(rt) {
		fallback = filepath.Join(rt, "bus")
	}
	if hostAddress == "" {
		// What sd-bus, libdbus and GDBus do when the variable is unset.
		if fallback == "" || !slices.Contains(facts.Sockets, fallback) {
			return Plan{Mode: None, Why: "no session bus"}, nil
		}
		hostAddress = "unix:path=" + EscapeValue(fallback)
	}
	addrs, err := ParseAddress(hostAddress)
	if err != nil {
		return Plan{}, fmt.Errorf("parsing %s=%q: %w; fix or unset it", EnvAddress, hostAddress, err)
	}

	p := Plan{HostAddress: hostAddress, Talk: talk}
	abstractAt := ""
	addSocket := func(s string) {
		s = filepath.Clean(s)
		if slices.Contains(facts.Sockets, s) && !slices.Contains(p.HostSockets, s) {
			p.HostSockets = append(p.HostSockets, s)
		}
	}
	for _, a := range addrs {
		if s, ok := unixPath(a); ok && filepath.IsAbs(s) {
			addSocket(s)
		}
		if unmaskable(a) && abstractAt == "" {
			abstractAt = a.String()
		}
	}
	if fallback != "" {
		// Another bus may listen there (the user manager's, say) even when
		// the variable points elsewhere; a client that drops the variable
		// would find it.
		addSocket(fallback)
	}
	p.Abstract = abstractAt != ""

	switch {
	case noProxy:
		p.Mode, p.Why = Masked, EnvNoProxy+"=1"
	case facts.ProxyPath == "":
		p.Mode, p.Why = Masked, ProxyName+" is not installed"
		p.Warnings = append(p.Warnings, "xdg-dbus-proxy is not installed, so the session bus is masked in the jail "+
			"(no keyring, notifications or portals); install it (apt-get install xdg-dbus-proxy) "+
			"to let the names in "+EnvTalk+" through")
	default:
		p.Mode = Filtered
	}
	if p.Abstract {
		bypassed := "filter"
		if p.Mode == Masked {
			bypassed = "mask"
		}
		p.Warnings = append(p.Warnings, fmt.Sprintf("the session bus is reachable at %s, which no mount can hide: "+
			"the jail shares the host's network namespace, so it can reach the whole bus there, bypassing the %s; "+
			"run the session bus on a socket path (unix:path=...) to close that channel",
			abstractAt, bypassed))
	}

	if p.Mode == Masked {
		p.Talk = nil
		if len(p.HostSockets) > 0 {
			p.JailAddress = "unix:path=" + EscapeValue(p.HostSockets[0])
		}
		return p, nil
	}

	if !filepath.IsAbs(facts.SlotDir) {
		return Plan{}, fmt.Errorf("bug: the slot runtime dir %q for the bus proxy is not an absolute path", facts.SlotDir)
	}
	p.Proxy = facts.ProxyPath
	p.ProxySocket = filepath.Join(facts.SlotDir, "bus")
	// The longer of the two: the proxy's own, behind the gate.
	if f := filterSocket(p.ProxySocket); len(f) > maxSocketPath {
		return Plan{}, fmt.Errorf("the bus proxy's socket path %q is %d bytes, more than the %d a Unix socket address holds; use a shorter slot runtime dir",
			f, len(f), maxSocketPath)
	}
	p.JailSocket = p.ProxySocket
	if len(p.HostSockets) > 0 {
		p.JailSocket = p.HostSockets[0]
	}
	p.JailAddress = "unix:path=" + EscapeValue(p.JailSocket)
	return p, nil
}

func readNoProxy(lookupEnv func(string) (string, bool)) (bool, error) {
	v, _ := lookupEnv(EnvNoProxy)
	switch v {
	case "", "0":
		return false, nil
	case "1":
		return true, nil
	}
	return false, fmt.Errorf("reading %s=%q: %w", EnvNoProxy, v, errNoProxyValue)
}

var errNoProxyValue = errors.New("want 1 (mask the session bus) or 0 (filter it)")
