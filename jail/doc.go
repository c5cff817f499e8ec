// Package jail describes a box: a plain-data [Spec], the presets that
// build one, and its compilation into a bubblewrap invocation.
//
// # Pipeline
//
// Facts first, then decisions: [GatherHost] (with [Host.GatherFacts])
// reads everything about the machine a plan depends on, once, into one
// [Host], bwrap's version included (cached by the binary's identity). A
// preset ([DenyList], [Strict]) is then a pure function from options and
// that Host to a [Spec]. [Validate] checks the Spec with a list of named
// checks. [Compile] turns it into bwrap arguments without looking at the
// host. Package jail/launch runs the result. `aisan explain` prints the same Spec and
// the same compiled argv that Launch would run, so what a reviewer reads is
// what runs. (The strict planner still reads the files it plans from, the
// repository's git layout and the agent's binaries, as it goes.)
//
// # Threat model
//
// The default (deny-list) jail contains accidents, not adversaries: the
// agent keeps the user's uid, files, network and sockets. What it loses is
// the ability to harm its neighbours: it cannot see or signal processes
// outside its own PID namespace, cannot write cgroup files, cannot reach
// systemd over the session bus or the user manager's private socket.
package jail
