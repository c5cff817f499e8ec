package jail

import (
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/aisan-dev/aisan/jail/agent"
	"github.com/aisan-dev/aisan/jail/busproxy"
	"github.com/aisan-dev/aisan/jail/history"
)

// Request is what the user asked for: which agent, with which arguments.
type Request struct {
	// Kind selects the preset.
	Kind Kind
	// Args are the agent's arguments, or the whole command for KindRun.
	Args []string
	// Limits are resource caps for the jail's scope.
	Limits Limits
	// Say takes the warnings and notes a launch has for the user (the
	// command layer prints them); nil drops them.
	Say Say
}

// Command returns the argv a request runs.
func (r Request) Command() ([]string, error) {
	switch r.Kind {
	case KindRun, KindService:
		if len(r.Args) == 0 {
			return nil, errors.New("no command given to run")
		}
		return slices.Clone(r.Args), nil
	case KindClaude, KindCodex, KindOpencode:
		return append([]string{string(r.Kind)}, r.Args...), nil
	}
	return nil, fmt.Errorf("unknown agent kind %q", r.Kind)
}

// Session is one jailed launch, resolved: the slot, the Spec and the argv
// that will run. Explain and Run use the same value.
type Session struct {
	Request  Request
	Host     Host
	Slot     string
	SlotDir  string // the slot's private runtime directory (no project text in its name)
	Spec     Spec
	Compiled Compiled
	Warnings []string
	// Strict is what planning a strict box found; nil for a deny-list
	// jail.
	Strict *StrictPlan
	// Launched is the start the slot's record gives this launch, which
	// tells it from the slot's other launches; the launcher sets it.
	Launched time.Time
}

// maskFile is the empty file in the slot's run directory that a
// deny-list jail binds over the bus sockets it masks.
const maskFile = "masked-bus"

// MaskFile is the empty file the plan binds over what it masks (bus
// sockets; a strict box's protected sockets), in the slot's run
// directory.
func (s *Session) MaskFile() string { return filepath.Join(s.SlotDir, maskFile) }

// MaskFile is [Session.MaskFile] for the slot named.
func (h Host) MaskFile(slotName string) string { return filepath.Join(h.SlotDir(slotName), maskFile) }

// Prepared is what the box's mode gathered and made on the host before
// the plan, as plain data (explain passes what a launch would make):
// for a deny-list jail the per-slot history copies, the per-launch
// directories over the agents' PID-keyed ones and the variables the
// command layer adds; for a strict box everything its preset is built
// from.
type Prepared struct {
	History []history.Bind
	PIDDirs []Mount
	// Env are variables the agent's kind adds to a deny-list jail
	// (opencode's permission rules, which carry the kill guard: opencode
	// has no command hooks).
	Env []string
	// Strict, when set, plans a strict box: its options as gathered, and
	// what explain shows besides them.
	Strict *StrictPlan
}

// Plan resolves a request for the slot name given, from h and prep
// alone: it reads nothing from the host and makes nothing, so a plan can
// be made for a directory that does not exist.
func Plan(req Request, h Host, slotName string, prep Prepared) (*Session, error) {
	if prep.Strict != nil {
		return planStrict(req, h, slotName, *prep.Strict)
	}
	command, err := req.Command()
	if err != nil {
		return nil, err
	}
	slotDir := h.SlotDir(slotName)
	facts := h.Bus
	facts.SlotDir = slotDir
	bus, err := busproxy.Decide(busLookup(h), facts)
	if err != nil {
		return nil, err
	}
	var hist []Mount
	for _, b := range prep.History {
		hist = append(hist, Mount{Kind: Bind, Src: b.Src, Dst: b.Dst})
	}
	otherDirs, otherSockets := otherRuntimeDir(h, bus)
	spec := DenyList(DenyOptions{
		Kind:             req.Kind,
		Slot:             slotName,
		Command:          command,
		Cwd:              cmp.Or(h.Wd, h.Cwd),
		Env:              h.Env,
		RuntimeDir:       h.RuntimeDir,
		RuntimeSystemd:   h.RuntimeSystemd,
		OtherManagerDirs: otherDirs,
		OtherBusSockets:  otherSockets,
		Bus:              bus,
		MaskFile:         h.MaskFile(slotName),
		History:          hist,
		ExtraEnv:         slices.Clone(prep.Env),
		Limits:           req.Limits,
		StateDirs:        h.StateDirs,
		RunDir:           h.existingRunDir(),
		StateRunDirs:     h.stateRunDirs(),
		Transcripts:      h.stateSubdirs("transcripts"),
		OwnFiles:         h.OwnFiles,
		Renamable:        h.Renamable,
		PIDDirs:          prep.PIDDirs,
		Dev:              h.Dev,
	})
	compiled, err := Compile(spec, h)
	if err != nil {
		return nil, err
	}
	return &Session{
		Request: req, Host: h, Slot: slotName, SlotDir: slotDir,
		Spec: spec, Compiled: compiled, Warnings: bus.Warnings,
	}, nil
}

// planStrict is Plan for a strict box: the preset over the options its
// mode gathered, compiled, with what explain must know about the result.
func planStrict(req Request, h Host, slotName string, sp StrictPlan) (*Session, error) {
	if sp.Options.Slot != slotName || sp.Options.Kind != req.Kind {
		return nil, fmt.Errorf("the strict box was prepared for slot %q (%s), not %q (%s)", sp.Options.Slot, sp.Options.Kind, slotName, req.Kind)
	}
	spec := Strict(sp.Options)
	// Explain names bwrap's version when an overlay depends on it.
	sp.BwrapVersion = [3]int{}
	for _, m := range spec.Mounts {
		if m.Kind == Overlay {
			sp.BwrapVersion = h.BwrapVersion
			break
		}
	}
	compiled, err := Compile(spec, h)
	if err != nil {
		return nil, err
	}
	warnings := slices.Clone(sp.Notes)
	if sp.Options.Net {
		warnings = append(warnings, "--net: this box shares the host's network: the internet, the LAN and VPNs, services on the host's loopback, and abstract-namespace sockets (X11's among them) are all reachable; credential files stay unmounted")
	}
	return &Session{
		Request: req, Host: h, Slot: slotName, SlotDir: h.SlotDir(slotName),
		Spec: spec, Compiled: compiled, Warnings: warnings, Strict: &sp,
	}, nil
}

// NotFoundError is a command that is not installed. The jail sees the
// host's files and PATH, so what is missing here is missing there: say so
// before taking a slot.
type NotFoundError struct {
	Name string
	Kind Kind
	// Why, for a path, is what the shell would say: "no such file or
	// directory", "is a directory", "permission denied".
	Why string
}

func (e *NotFoundError) Error() string {
	if e.Why != "" {
		return fmt.Sprintf("cannot run %q: %s", e.Name, e.Why)
	}
	return fmt.Sprintf("cannot run %q: not found in PATH", e.Name)
}

// Code is the shell's status: 127 for a command not found, 126 for one
// found that cannot be executed.
func (e *NotFoundError) Code() int {
	if e.Why != "" && e.Why != "no such file or directory" {
		return 126
	}
	return 127
}

// Hints says how to install an agent.
func (e *NotFoundError) Hints() []string {
	if e.Why == "permission denied" {
		return []string{"make it executable (chmod +x " + e.Name + "), or run it through its interpreter"}
	}
	if e.Why == "is a directory" {
		return []string{"name the program inside it"}
	}
	if a, ok := agent.ByKind(string(e.Kind)); ok {
		return []string{"install " + a.Name + ": " + a.InstallHint}
	}
	return []string{"check the command's name, or give its path"}
}

// otherRuntimeDir finds /run/user/UID's user manager directory and bus
// socket when $XDG_RUNTIME_DIR points somewhere else: they answer all the
// same, so the jail hides them too.
func otherRuntimeDir(h Host, bus busproxy.Plan) (dirs, sockets []string) {
	if h.StdManagerDir != "" {
		dirs = append(dirs, h.StdManagerDir)
	}
	if h.StdRunDir != "" {
		// Other slots' gates and control sockets, and the locks of the
		// aisan processes that use /run/user/UID (the supervisor's).
		dirs = append(dirs, h.StdRunDir)
	}
	if sock := h.StdBusSocket; sock != "" && !slices.Contains(bus.HostSockets, sock) && sock != bus.JailSocket {
		sockets = append(sockets, sock)
	}
	return dirs, sockets
}
