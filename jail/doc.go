// Package jail turns a plain-data [Spec] into a bubblewrap invocation and
// runs a command in it.
//
// # Pipeline
//
// Facts first, then decisions: [GatherHost] (with [Host.GatherFacts])
// reads everything about the machine a plan depends on, once, into one
// [Host], bwrap's version included (cached by the binary's identity). A
// preset ([DenyList], [Strict]) is then a pure function from options and
// that Host to a [Spec]. [Validate] checks the Spec with a list of named
// checks. [Compile] turns it into bwrap arguments without looking at the
// host. [Launch] runs the result. `aisan explain` prints the same Spec and
// the same compiled argv that Launch would run, so what a reviewer reads is
// what runs. (The strict planner still reads the files it plans from, the
// repository's git layout and the agent's binaries, as it goes.)
//
// # A launch
//
// [Launch] is a fixed sequence of phases over one launch value (see
// session.go): resolve (host facts, the command, service mode) → takeSlot
// (the slot, while the stage process starts and the user manager's
// connection opens, in parallel; then the scope's placement starts in the
// background) → prepareFiles (runtime dirs, history copies, PID dirs, the
// plan) → startServices (a strict box's egress, relays and MCP servers; the
// bus proxy; the transcript) → startJail (the stage is loaded, waits for
// its placement, is released, and the init bwrap reports is recorded) →
// runSession (signals to the agent until the jail ends, or a keeper takes a
// jail its agent left) → recordEnd. What a phase sets up is undone in
// reverse, the session's part before the end is recorded. The stage's own
// side has the same shape ([Stage.Load], [Stage.Release], [Stage.Started],
// [Stage.Wait], [Stage.HandOff]); nothing calls back into the launcher.
// Which descriptor means what from the wrapper to the agent is written
// down once, with its constants, in package boxinit (fds.go).
//
// Three programs start per launch: aisan, and twice the lean aisan-init
// (the stage, then the jail's PID 1), which links only package boxinit
// and the in-box relay, so that each start costs what a small Go program
// costs rather than what the whole aisan binary does.
//
// # Threat model
//
// The default (deny-list) jail contains accidents, not adversaries: the
// agent keeps the user's uid, files, network and sockets. What it loses is
// the ability to harm its neighbours: it cannot see or signal processes
// outside its own PID namespace, cannot write cgroup files, cannot reach
// systemd over the session bus or the user manager's private socket.
//
// # No project text above the agent
//
// An agent that runs `pkill -f myrepo` inside its jail must not match a
// process of ours. So bwrap reads its options from a file descriptor
// (`--args`), the jail's first process is our own init executed through a
// descriptor (its command line is /proc/self/fd/N), and the agent's command
// reaches that init through another descriptor. The only command line
// inside the jail that names the project is the agent's own.
//
// # Processes left behind
//
// The init is PID 1 of the jail: when it exits the kernel kills the rest.
// So a session's init, when the agent exits and processes remain
// (every one of them is then its child or a descendant), does not exit: it
// reports the agent's status to the wrapper on the readiness pipe ('e' and
// one status byte), then goes on reaping and forwarding signals (to all
// that is left) until its last child is gone. The wrapper starts a keeper,
// `aisan __keep` ([RunKeeper]), handing it what must outlive the wrapper:
// the slot's lock descriptor (the locks belong to the open file, so the
// slot stays held), a pidfd of the init, the output's read ends (pty
// master or pipes, which must go on being read), and the bus proxy's
// lifeline pipes (a keepable proxy has no parent-death signal). The
// keeper rewrites the record to name itself as holder with the agent's
// end and status (state background), says so, and the wrapper returns the
// status to the shell. The jail itself needs nothing of the wrapper: it
// dies with the stage process, which lives on. When the init exits the
// keeper finishes the record, removes the slot's runtime directory and
// releases the slot.
//
// A strict box's keeper also serves its egress. The wrapper hands it
// duplicates of the egress services' listening sockets and their state
// ([EgressRun.Handover]); the keeper serves them (through
// [KeeperOptions.ResumeEgress], which the command layer supplies) before
// it takes the slot, so a keeper that cannot leaves the wrapper serving
// and waiting as before. Then the wrapper drains its own service: no new
// connection, requests in flight answered for up to keepDrainGrace, the
// socket files left in place for the keeper, which removes them at the
// end. The keeper ends the services and collects the box's held set
// (jail/held: what it changed of what host tools run, held for review)
// when the box ends, as the wrapper does for a box it was not asked to
// keep. Services are not kept: their unit ends with the wrapper, its main
// process.
package jail
