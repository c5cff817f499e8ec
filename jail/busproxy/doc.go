// Package busproxy decides what a jail gets in place of the host's D-Bus
// session bus, and runs the xdg-dbus-proxy that filters it.
//
// # Why the bus is filtered
//
// The session bus is a way out of a PID namespace: through
// org.freedesktop.systemd1 a jailed agent can stop or kill the scopes of
// other agents, or the user's own services, without seeing a single PID.
// Masking the bus altogether would break what agents legitimately use it
// for: the keyring holding their login, desktop notifications, portals.
// So the jail gets a filtering proxy instead of the bus.
//
// # Why an allow-list
//
// The proxy lets the jail talk to the names in AISAN_BUS_TALK (by default
// [DefaultTalk]) and to the bus itself, and nothing else. A deny-list of
// systemd1 would not hold: other services on a desktop bus also start
// processes or units on request, new ones appear with every package, and a
// name we never heard of should fail closed. The price is that an agent
// needing another service must be given its name. A name grants the whole
// service: org.freedesktop.secrets opens the whole keyring, not one item.
//
// Which bus, which names, and which paths to cover is decided by [Decide],
// a pure function of the environment and the [HostFacts] that [Gather]
// collects. The outcome is a [Plan]: [Filtered] with the proxy, [Masked]
// (AISAN_NO_BUS_PROXY=1, or xdg-dbus-proxy is not installed; the launch
// goes on and a warning says what to install), or [None] when the host has
// no session bus and there is nothing to hide.
//
// # The abstract-socket caveat
//
// Hiding the bus works by covering its socket path inside the jail: the
// proxy's socket is bound over it, and other paths where the bus could be
// found get an empty file. A bus at an abstract address
// (unix:abstract=...) or on TCP has no path to cover, and the deny-list
// jail shares the host's network namespace, so the jail can still reach the
// whole bus there. The proxy is started anyway, so that well-behaved
// clients that follow DBUS_SESSION_BUS_ADDRESS are filtered, and the plan
// carries a warning saying that the abstract socket itself stays reachable.
// The jail protects against accidents, not adversaries: same uid, same
// files.
//
// # Lifetime
//
// A proxy lives exactly as long as what started it. [Start] hands it the
// write end of a pipe (xdg-dbus-proxy's --fd protocol, as flatpak uses
// it) and keeps the only read end, close-on-exec so that neither bwrap nor
// the agent inherits it. The proxy writes one byte when it listens, which
// [Start] waits for, and exits when the read end closes: on
// [Proxy.Close], or when its starter dies, even by SIGKILL. A
// parent-death signal on the proxy is a second guard.
//
// A launch does not start it itself: it opens a [Gate] (gate.go), and
// the proxy starts behind it, under a relay process, when something in
// the jail first connects. The relay ends when the launch, or the keeper
// it handed the jail to, lets go of the relay's lifeline.
//
// The proxy's argv ([Argv]) holds the host bus address, a socket path in
// the slot's runtime directory and the allowed names; the launcher chooses
// that directory without project text, since any user can read argv.
package busproxy
