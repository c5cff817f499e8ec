// Package jail turns a plain-data [Spec] into a bubblewrap invocation and
// runs a command in it.
//
// # Pipeline
//
// A preset ([DenyList], [Strict]) is a pure function from options and host
// facts to a [Spec]. [Validate] checks the Spec with a list of named
// checks. [Compile] turns it into bwrap arguments without looking at the
// host. [Launch] runs the result. `aisan explain` prints the same Spec and
// the same compiled argv that Launch would run, so what a reviewer reads is
// what runs.
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
package jail
