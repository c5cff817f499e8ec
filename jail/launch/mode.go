package launch

import (
	"context"
	"os"

	"github.com/aisan-dev/aisan/jail"
)

// Mode is what differs between a deny-list jail ([Deny]) and a strict box
// (package strictbox's Box). The phases call it and never ask which one
// they run; a new kind of box is a new Mode.
//
// The Say a mode is handed (in the request, the session, or to Resume)
// is never nil.
type Mode interface {
	// Name is the mode as the slot's record shows it ("" for the
	// deny-list jail), and what a keeper finds its mode by.
	Name() string
	// PassFDs reports whether the caller's open descriptors reach the
	// agent, as they would unjailed.
	PassFDs() bool
	// CheckCommand checks, before a slot is taken, that the command
	// name can run as the jail will run it: the deny-list jail finds it
	// on the host's PATH; a strict box, whose PATH is its own, finds it
	// in Prepare.
	CheckCommand(name string, kind jail.Kind, h jail.Host) error
	// Prepare reads and makes on the host what the plan is decided from,
	// once the slot is held, and returns it as plain data for
	// [jail.Plan]: for a deny-list jail the history copies and PID dirs,
	// for a strict box its gathered options. dry (explain) makes nothing.
	// undo, when not nil, undoes what it made when the launch ends; it is
	// returned with an error too.
	Prepare(req jail.Request, h jail.Host, slot string, dry bool) (prep jail.Prepared, undo func(), err error)
	// Serve starts what serves the jail from the host, once the slot's
	// run directory exists: a filtered bus's gate; or a strict box's state
	// directory, MCP import and egress services. keepable says a keeper
	// may take them over when the agent leaves processes behind.
	Serve(ctx context.Context, s *jail.Session, keepable bool) (Services, error)
	// Resume is a keeper's Serve: the services a wrapper's
	// [Services.Keep] handed over, served until the jail ends.
	Resume(k Kept, say jail.Say) (Services, error)
}

// Services is what serves one jail from the host while it runs.
type Services interface {
	// Env are KEY=VALUE lines for the box's environment file (addresses
	// picked at start, per-box tokens): they reach the agent through the
	// 0600 file [jail.Spec.EnvFile], never an argv.
	Env() []string
	// Keep readies the services for a keeper when the jail outlives its
	// agent: what the keeper inherits. The files are the caller's to
	// close once the keeper has them.
	Keep() (Kept, error)
	// Drain ends this process's share once the keeper serves the jail:
	// nothing new is accepted, and what is in flight is answered until
	// ctx is done.
	Drain(ctx context.Context)
	// Admitting is told that the agent is about to be admitted, bwrap
	// having set the jail up: what must see the jail's files before
	// anything of the agent's can change them (a strict box's snapshot of
	// the repository) ran beside that setup, and is waited for here
	// until ctx is done: then the agent is not admitted, and what was
	// waited for is given up.
	Admitting(ctx context.Context)
	// Ended is told, while the jail is taken down, that its agent has
	// exited; empty says nothing is left running in it, so nothing there
	// can write any more: work that must follow the box's last write may
	// start now, beside the teardown. What it has to say waits for Stop,
	// which comes after the jail's last output.
	Ended(empty bool)
	// Stop ends them at once, after the jail.
	Stop()
}

// Kept is what a keeper inherits of a jail's host services.
type Kept struct {
	// Mode names the [Mode] that resumes them.
	Mode string
	// Files are descriptors the keeper inherits (listening sockets, a
	// proxy's lifelines), in order, after its own (keepfds.go).
	Files []*os.File
	// State is the mode's own, for Resume; never a credential.
	State []byte
	// Env is the keeper's environment; nil gives it a bare PATH.
	Env []string
	// Undo, when set, is called when no keeper took them over: the
	// services go on as before Keep.
	Undo func()
}
