package jail

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/aisan-dev/aisan/distro"
)

// Request is what the user asked for: which agent, with which arguments.
type Request struct {
	// Kind selects the preset.
	Kind Kind
	// Args are the agent's arguments, or the whole command for KindRun.
	Args []string
	// Limits are resource caps for the jail's scope.
	Limits Limits
}

// Session is one jailed launch, resolved: the slot, the Spec and the argv
// that will run. Explain and Run use the same value.
type Session struct {
	Request  Request
	Cwd      string
	Slot     string
	Spec     Spec
	Compiled Compiled
	Bwrap    string
}

// MissingError is a dependency that is not installed.
type MissingError struct {
	Tool string
	Err  error
}

func (e *MissingError) Error() string {
	return fmt.Sprintf("%s is not installed (not found in PATH)", e.Tool)
}

func (e *MissingError) Unwrap() error { return e.Err }

// Hints names the command that installs the tool on this distribution.
func (e *MissingError) Hints() []string {
	return []string{"install it: " + distro.InstallCommand(distro.Detect(), e.Tool)}
}

// ErrNoCwd is returned when the working directory no longer exists.
var ErrNoCwd = errors.New("the current directory no longer exists")

// Command returns the argv a request runs.
func (r Request) Command() ([]string, error) {
	switch r.Kind {
	case KindRun:
		if len(r.Args) == 0 {
			return nil, errors.New("no command given to run")
		}
		return slices.Clone(r.Args), nil
	case KindClaude, KindCodex, KindOpencode:
		return append([]string{string(r.Kind)}, r.Args...), nil
	}
	return nil, fmt.Errorf("unknown agent kind %q", r.Kind)
}

// Prepare resolves a request against this host: the working directory,
// the slot, the session bus, and the Spec and argv that will run. It starts
// nothing and writes nothing.
func Prepare(req Request) (*Session, error) {
	command, err := req.Command()
	if err != nil {
		return nil, err
	}
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		return nil, &MissingError{Tool: "bwrap", Err: err}
	}
	cwd, err := realCwd()
	if err != nil {
		return nil, err
	}
	slot := provisionalSlotName(cwd, req.Kind)
	env := os.Environ()
	rt := os.Getenv("XDG_RUNTIME_DIR")
	opts := DenyOptions{
		Kind:           req.Kind,
		Slot:           slot,
		Command:        command,
		Cwd:            cwd,
		Env:            env,
		RuntimeDir:     rt,
		RuntimeSystemd: rt != "" && isDir(filepath.Join(rt, "systemd")),
		Bus:            maskedBus(env, rt),
		Limits:         req.Limits,
	}
	spec := DenyList(opts)
	compiled, err := Compile(spec, HostFacts{})
	if err != nil {
		return nil, err
	}
	return &Session{Request: req, Cwd: cwd, Slot: slot, Spec: spec, Compiled: compiled, Bwrap: bwrap}, nil
}

// Run launches the session and waits for it.
func (s *Session) Run(ctx context.Context, stdin, stdout, stderr *os.File) (int, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, fmt.Errorf("finding aisan's own binary: %w", err)
	}
	l := &Launcher{Bwrap: s.Bwrap, Self: self, Stdin: stdin, Stdout: stdout, Stderr: stderr}
	return l.Run(ctx, s.Compiled)
}

// Explain prints the Spec and the argv that Run would execute.
func (s *Session) Explain(w io.Writer) {
	Explain(w, s.Spec, s.Compiled, s.Slot)
}

func realCwd() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrNoCwd, err)
	}
	if _, err := os.Stat(wd); err != nil {
		return "", fmt.Errorf("%w: %s", ErrNoCwd, wd)
	}
	real, err := filepath.EvalSymlinks(wd)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrNoCwd, err)
	}
	return real, nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// provisionalSlotName is replaced by the slot registry.
func provisionalSlotName(cwd string, kind Kind) string {
	return filepath.Base(cwd) + "-" + string(kind)
}

// maskedBus finds the host's session bus socket and plans to mask it.
func maskedBus(env []string, rt string) BusPlan {
	addr := lookupEnv(env, "DBUS_SESSION_BUS_ADDRESS")
	if addr == "" && rt != "" {
		if fi, err := os.Stat(filepath.Join(rt, "bus")); err == nil && fi.Mode().Type() == fs.ModeSocket {
			addr = "unix:path=" + filepath.Join(rt, "bus")
		}
	}
	if addr == "" {
		return BusPlan{Mode: BusNone}
	}
	for _, part := range strings.Split(addr, ";") {
		if p, ok := strings.CutPrefix(part, "unix:"); ok {
			for _, kv := range strings.Split(p, ",") {
				if v, ok := strings.CutPrefix(kv, "path="); ok {
					return BusPlan{Mode: BusMasked, HostSocket: v, Why: "masked"}
				}
				if strings.HasPrefix(kv, "abstract=") {
					return BusPlan{Mode: BusMasked, Abstract: true, Why: "abstract"}
				}
			}
		}
	}
	return BusPlan{Mode: BusNone}
}

func lookupEnv(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v
		}
	}
	return ""
}
