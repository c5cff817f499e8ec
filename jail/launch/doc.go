// Package launch runs a planned jail: the launch's phases, the stage
// (the jail's descriptors and bwrap), the keeper, systemd scopes and
// services, and the watch.
// Package jail describes the box; the box's [Mode] says what differs
// between a deny-list jail ([Deny], here) and a strict box (package
// jail/strictbox), and this package never asks which one it runs.
//
// # A launch
//
// [Launch] (launch.go) is a fixed sequence of phases over one launch
// value; each phase reads what the earlier ones added to it:
//
//	resolve        the stage's descriptors (stage.go) and the user
//	               manager's connection (scope.go), both in the
//	               background; host facts (jail.GatherHost), the command,
//	               service mode
//	takeSlot       the slot
//	prepareFiles   Mode.Prepare (deny.go; strictbox's box.go), then
//	               jail.Plan, which reads nothing; the slot's run directory
//	startServices  Mode.Serve, the box's environment file, the transcript
//	startJail      Stage.Load, Stage.Release: bwrap starts and sets the
//	               jail up while the manager places bwrap and the init in
//	               the jail's scope; then Stage.Admit lets the init start the
//	               agent, and the init is recorded
//	runAgent       Stage.Wait; a keeper (keeper.go) takes a jail its agent
//	               left
//	recordEnd      the record's end, the lock, pruning (prune.go)
//
// Nothing waits for what it does not need: the stage's descriptors are
// made while the host facts are read, the signals are caught beside them, and the scope's
// job runs beside bwrap's setup. Only the agent waits for the scope, so
// that everything it starts is born there; a launch without a user
// manager admits the agent before bwrap runs.
//
// What a phase sets up is undone in reverse, the jail's part before the
// end is recorded. The stage's own side has the same shape
// ([Stage.Load], [Stage.Release], [Stage.Started], [Stage.Wait],
// [Stage.HandOff]); nothing calls back into the launcher. Which
// descriptor and which byte means what, from the wrapper to the agent, is
// written down once in package boxinit (fds.go); from the wrapper to its
// keeper, in keepfds.go.
//
// Three programs start per launch: aisan, bwrap (aisan's own child,
// started at the release) and the lean aisan-init as the jail's PID 1,
// which links only package boxinit and the in-box relay, so that its
// start costs what a small Go program costs rather than what the whole
// aisan binary does. (A stage process, an aisan-init started ahead to
// fork bwrap, used to sit between aisan and bwrap: on two cores its start
// ran into the release rather than beside the planning.)
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
// The init is PID 1 of the jail: when it exits, the kernel kills the rest.
// So when the agent exits and processes remain, the init does not exit. It
// tells the wrapper (boxinit.MsgLeft and the agent's status) and goes on
// reaping and forwarding signals until its last child is gone.
//
// The wrapper then starts a keeper, `aisan __keep` ([RunKeeper]), and
// hands it what must outlive the wrapper: the slot's lock, a pidfd of the
// init, the jail's output (which must go on being read) and what the
// mode's [Services.Keep] gives. The keeper serves those, takes the slot's
// record over (state background), and says so; the wrapper returns the
// agent's status to the shell. The jail needs nothing else of the
// wrapper: it dies with bwrap (the init asks for that, see boxinit's
// seal.go), which lives on, reparented, when the wrapper exits.
//
// When the init exits, the keeper stops the services, records the end,
// removes the slot's run directory and releases the slot. A headless
// service is never kept: its unit ends with its main process, the
// wrapper.
//
// # Strict boxes that outlive their agent
//
// A deny-list jail's keeper holds the lifeline of its bus relay, which
// keeps the relay and the proxy behind it alive (the wrapper starts them
// at the hand-over if nothing had used the bus yet). A strict box's keeper serves the box's egress: the
// wrapper hands it its listening sockets and their state, and the keeper
// serves them before it takes the slot. A keeper that cannot leaves the
// wrapper serving and waiting, as if there were none.
//
// Once the keeper serves, the wrapper drains ([Services.Drain]): it
// accepts nothing new and answers what is in flight for up to
// keepDrainGrace. The socket files stay for the keeper, which removes
// them with the run directory. At the box's end the keeper's
// [Services.Stop] also collects the box's held set (what it changed of
// what host tools run, held for the user's review), as the wrapper's does
// for a box nobody kept.
package launch
