// Package systemd is aisan's boundary with the calling user's systemd
// manager, spoken to over D-Bus (go-systemd and godbus; never by running
// systemctl or systemd-run).
//
// # Why a scope per slot
//
// A jail's PID namespace already keeps agents from signalling each other.
// The scope gives the user's side a handle on the whole jail: every process
// bwrap forks lands in one cgroup, aisan-<slot>.scope ([UnitName]), so
// "aisan kill <slot>" is one KillUnit over all of them, resource [Limits]
// apply to all of them, and systemctl --user status shows them. Inside the
// jail, /sys/fs/cgroup is read-only and the manager's sockets are masked, so
// a jail cannot reach its own or another slot's scope.
//
// # Placement without a race
//
// StartTransientUnit moves only the PIDs it is given, and returns before
// it has moved them; children forked earlier stay outside. So the launcher
// starts bwrap, whose one child, the jail's init, blocks on a pipe before
// it forks anything; calls [Manager.StartScope] with the PIDs of both,
// which waits for the start job's result (bounded by a timeout); and only
// then lets the init start the agent. A start that
// finds a failed unit of the same name resets it and retries once
// ([ErrUnitExists] when a live one holds the name).
//
// The process being moved must sit in a cgroup the user manager may move it
// out of (the user's login session or the manager's own tree); from
// elsewhere systemd fails the job with the result "resources", and
// StartScope says so.
//
// # Without a user manager
//
// SSH logins without lingering, containers and hosts whose init is not
// systemd have no user manager. [Connect] finds that out cheapest first
// (XDG_RUNTIME_DIR, the private socket, the connection, a first call) and
// returns a *[NoManagerError] whose Hint lines say how to get one. The
// launcher then runs the jail without a scope, says so once, and kills by
// the PID namespace instead; AISAN_REQUIRE_SCOPE=1 ([ScopeRequired]) turns
// that into a refusal.
//
// # Limits that would do nothing
//
// systemd accepts MemoryMax=, CPUQuota= and TasksMax= on a user unit even
// when the memory, cpu or pids controller is not delegated to the user
// manager, and then enforces nothing. [CheckDelegation] compares the limits
// with [Manager.DelegatedControllers] so that the launcher can say so once
// instead of promising a limit that is not there.
//
// # Services and the supervisor
//
// A headless command runs as a transient service, aisan-svc-<name>.service
// ([ServiceName], [Manager.StartService]), with a runtime cap that systemd
// enforces; interactive sessions never get one. [Supervisor] is the loop
// behind aisan watch: it reaps orphaned slots, stops services that outlive
// their cap (a restarted service gets a fresh cap from systemd), and
// records how slots ended. [InstallWatch] installs its user unit, whose
// file is embedded in the binary, and enables it through the manager.
package systemd
