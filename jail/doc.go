// Package jail describes a box: a plain-data [Spec], the presets that
// build one, and its compilation into a bubblewrap invocation. It runs
// nothing and, past [GatherHost], reads nothing.
//
// # Pipeline
//
// Facts first, then decisions: [GatherHost] (with [Host.GatherFacts])
// reads everything about the machine a plan depends on, once, into one
// [Host], bwrap's version included (cached by the binary's identity). The
// box's mode (package jail/launch) then gathers and makes what its own
// plan needs and hands it over as plain data, a [Prepared]: a deny-list
// jail's history copies and PID dirs, or a strict box's options. [Plan]
// decides from the Host and the Prepared alone: a preset ([DenyList],
// [Strict]) is a pure function from options to a [Spec], [Validate] checks
// the Spec with a list of named checks, and [Compile] turns it into bwrap
// arguments without looking at the host. `aisan explain` prints, with
// [Explain], the same Spec and the same compiled argv that a launch would
// run, so what a reviewer reads is what runs.
//
// # Where the rest is
//
// The runtime (the launch's phases, the keeper, scopes) is
// package jail/launch; a strict box's host side (its gathered facts, state
// seeding, git pins, the MCP import, bind specs and the egress services)
// is jail/strictbox. Beneath this package are the box's own mechanisms:
// boxinit (the in-box init, with the descriptor protocol),
// relay, busproxy, and the runtime's state (slot, transcript, history).
// jail/agent and jail/shared hold the leaves every side reads.
//
// # Threat model
//
// The default (deny-list) jail contains accidents, not adversaries: the
// agent keeps the user's uid, files, network and sockets. What it loses is
// the ability to harm its neighbours: it cannot see or signal processes
// outside its own PID namespace, cannot write cgroup files, cannot reach
// systemd over the session bus or the user manager's private socket.
package jail
