// Package preflight proves, on the host it runs on, that aisan's jail
// holds, and says how to fix what does not.
//
// # Shape
//
// [Checks] is an ordered list of named [Check] values. Each one looks at
// the host once and returns a [Finding]: ok, warn or FAIL, a one-line
// detail, and for anything but ok the exact command that fixes it on this
// host's distribution (from /etc/os-release, or AISAN_OS_RELEASE in
// tests). [Run] runs the checks concurrently and returns the findings in
// list order; [WriteText] and [WriteJSON] print them.
//
// Checks share their probes through an [Env]: every probe runs at most
// once per preflight, whichever check asks first, the way the rest of
// aisan gates on one cached probe per capability.
//
// # Live probes
//
// The four denials and the transparency promises are not inferred from
// configuration: preflight launches one real deny-list jail, through the
// same planner ([jail.Plan]), compiler ([jail.Compile]), bus proxy and
// launcher ([launch.Launcher]) the agents get, and runs aisan itself inside
// it ("aisan preflight --probe-inside", see [RunInside]). The inside half
// tries each denial for real — signal 0 to a marker process started
// outside, mkdir in its own cgroup, a D-Bus call to
// org.freedesktop.systemd1 at every address the host bus answers on, a
// connect to the user manager's private socket — and checks that $HOME,
// /tmp and the agent sockets are the host's. It reports raw observations
// as JSON on its stdout; the outside half turns them into findings with
// pure functions, so each decision has a unit test.
//
// A probe that cannot fail proves nothing. [EnvTestBreak] is a test seam
// that removes one denial from the probe jail's Spec before it is
// compiled; the integration tests use it to watch each live check fail.
//
// # Problems
//
// Every finding that is not ok is a problem and carries a fix. Denials
// and transparency promises that do not hold are FAIL; missing optional
// pieces and hazards (an abstract bus address, no guard hook, no shell
// integration) are warn. A preflight with no problems ends with
// "preflight: ok".
package preflight
