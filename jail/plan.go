package jail

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"

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
	// KindEnv, when set, gives the variables the agent kind adds to the
	// jail's environment, from the user's home, the working directory
	// and the host environment (opencode's OPENCODE_PERMISSION).
	KindEnv func(home, cwd string, getenv func(string) string) ([]string, error)
	// Strict, when set, asks for a strict (allow-list) box.
	Strict *StrictRequest
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
}

// Prepared is what a launch made ready for the jail before planning it:
// the per-slot history copies and the per-launch directories over the
// agents' PID-keyed ones. Explain passes what a launch would make.
type Prepared struct {
	History []history.Bind
	PIDDirs []Mount
}

// Plan resolves a request for the slot name given, from h alone: it
// reads nothing from the host.
func Plan(req Request, h Host, slotName string, prep Prepared) (*Session, error) {
	if req.Strict != nil {
		return planStrict(req, h, slotName)
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
	extra, err := extraEnv(req, h)
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
		Cwd:              h.Cwd,
		Env:              h.Env,
		RuntimeDir:       h.RuntimeDir,
		RuntimeSystemd:   h.RuntimeSystemd,
		OtherManagerDirs: otherDirs,
		OtherBusSockets:  otherSockets,
		Bus:              bus,
		MaskFile:         filepath.Join(slotDir, "masked-bus"),
		History:          hist,
		ExtraEnv:         extra,
		Limits:           req.Limits,
		StateDirs:        h.StateDirs,
		PIDDirs:          prep.PIDDirs,
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

// extraEnv is what the request's kind adds to the environment (for
// opencode, which has no command hooks, its permission rules carry the
// kill guard); the command layer supplies the function, so that the jail
// does not depend on the hooks package.
func extraEnv(req Request, h Host) ([]string, error) {
	if req.KindEnv == nil {
		return nil, nil
	}
	look := lookupFunc(h.Env)
	getenv := func(k string) string { v, _ := look(k); return v }
	home := getenv("HOME")
	if home == "" {
		home = h.Home
	}
	return req.KindEnv(home, h.Cwd, getenv)
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
	if sock := h.StdBusSocket; sock != "" && !slices.Contains(bus.HostSockets, sock) && sock != bus.JailSocket {
		sockets = append(sockets, sock)
	}
	return dirs, sockets
}
