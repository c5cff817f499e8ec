package launch

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/busproxy"
	"github.com/aisan-dev/aisan/jail/history"
	"golang.org/x/sys/unix"
)

// Deny is the deny-list jail's [Mode]: per-slot history copies and
// per-launch PID directories before the plan, the filtered bus proxy
// while it runs.
type Deny struct {
	// Env are variables the command layer adds for the agent's kind
	// (opencode's permission rules, which carry the kill guard).
	Env []string
}

var _ Mode = Deny{}

// Name is "": the record of a deny-list jail names no mode.
func (Deny) Name() string { return "" }

// PassFDs is true: as unjailed, the caller's descriptors reach the agent.
func (Deny) PassFDs() bool { return true }

// CheckCommand finds name as the jail's init will: on the host's PATH,
// which the jail keeps, or as a path.
func (Deny) CheckCommand(name string, kind jail.Kind, h jail.Host) error {
	return findCommand(name, kind, h.Env)
}

// Prepare copies the agent's history into the slot's own (merged back by
// undo when the launch ends) and makes the per-launch directories over
// the agents' PID-keyed ones; dry names what it would make.
func (d Deny) Prepare(req jail.Request, h jail.Host, slot string, dry bool) (jail.Prepared, func(), error) {
	prep := jail.Prepared{Env: slices.Clone(d.Env)}
	kind := string(req.Kind)
	if dry {
		prep.History = history.Paths(h.AisanHome, slot, kind, h.HistoryDirs())
		prep.PIDDirs = previewPIDDirs(h, slot)
		return prep, nil, nil
	}
	var err error
	if prep.History, err = history.Prepare(h.AisanHome, slot, kind, h.Cwd, h.HistoryDirs()); err != nil {
		return prep, nil, err
	}
	undo := func() {
		if err := history.MergeBack(h.AisanHome, slot, kind, h.HistoryDirs()); err != nil {
			req.Say(jail.Warning, err.Error())
		}
	}
	prep.PIDDirs, err = preparePIDDirs(h, slot)
	return prep, undo, err
}

// Serve starts the session bus proxy a filtered bus needs. A keepable one
// has no parent-death signal: its lifelines, which a keeper holds, keep it.
func (Deny) Serve(ctx context.Context, s *jail.Session, keepable bool) (Services, error) {
	if s.Spec.Bus.Mode != busproxy.Filtered {
		return busServices{}, nil
	}
	start := busproxy.Start
	if keepable {
		start = busproxy.StartKeepable
	}
	proxy, err := start(ctx, s.Spec.Bus)
	if err != nil {
		return nil, err
	}
	return busServices{proxy}, nil
}

// Resume reads (and drops) whatever comes on the proxy's lifelines: its
// stderr must not block, and its readiness pipe says nothing more until
// it ends. The keeper's exit closes them, which ends the proxy.
func (Deny) Resume(k Kept, _ jail.Say) (Services, error) {
	for _, f := range k.Files {
		// Our own copy: the caller closes the ones it passed.
		d, err := dupFile(f)
		if err != nil {
			return nil, err
		}
		go io.Copy(io.Discard, d)
	}
	return busServices{}, nil
}

// busServices is a deny-list jail's host side: the bus proxy, if any.
type busServices struct{ proxy *busproxy.Proxy }

func (busServices) Env() []string { return nil }

// Keep hands the keeper duplicates of the proxy's lifelines.
func (b busServices) Keep() (Kept, error) {
	var k Kept
	if b.proxy == nil {
		return k, nil
	}
	for _, f := range b.proxy.Lifelines() {
		d, err := dupFile(f)
		if err != nil {
			for _, f := range k.Files {
				f.Close()
			}
			return Kept{}, err
		}
		k.Files = append(k.Files, d)
	}
	return k, nil
}

// Drain leaves the proxy to the keeper: it serves the jail to its end.
func (busServices) Drain(context.Context) {}

// Stop closes the proxy's readiness pipe, which ends it (if we die, the
// kernel closes it for us); reaping it need not hold up the launch's end.
func (b busServices) Stop() {
	if b.proxy != nil {
		go b.proxy.Close()
	}
}

// dupFile is a close-on-exec duplicate of f.
func dupFile(f *os.File) (*os.File, error) {
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return nil, fmt.Errorf("duplicating %s: %w", f.Name(), err)
	}
	return os.NewFile(uintptr(fd), f.Name()), nil
}
