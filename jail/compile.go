package jail

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/aisan-dev/aisan/jail/boxinit"
)

// Compiled is a Spec turned into bwrap terms.
type Compiled struct {
	// Options are bwrap's options, in order; the launcher hands them to
	// bwrap through --args so they never show on a command line.
	Options []string
	// Command is what bwrap runs after "--".
	Command []string
	// Pins are the sources of the pinned mounts, in descriptor order: bwrap
	// finds Pins[i] open at boxinit.FDFirstPin+i (see the descriptor table in
	// preset.go).
	Pins []Pin
	// Relays, EnvFile and NewSessionKeyring go to the in-jail init with
	// the command.
	Relays            []boxinit.PayloadRelay
	EnvFile           string
	NewSessionKeyring bool
}

// Pin is a mount source the launcher opens and hands to bwrap.
type Pin struct {
	// Path is the host path to open.
	Path string
	// Type is what it must be.
	Type PinType
	// Dev and Ino, when Ino is not 0, are the file it must be.
	Dev, Ino uint64
}

// Payload is what the in-jail init receives for c.
func (c Compiled) Payload(foreground bool, ctty int) boxinit.Payload {
	p := boxinit.NewPayload(c.Command, foreground, ctty)
	p.Relays = append([]boxinit.PayloadRelay(nil), c.Relays...)
	p.EnvFile = c.EnvFile
	p.NewSessionKeyring = c.NewSessionKeyring
	return p
}

// Argv is the whole bwrap command line the Compiled value stands for.
func (c Compiled) Argv() []string {
	argv := make([]string, 0, len(c.Options)+len(c.Command)+2)
	argv = append(argv, "bwrap")
	argv = append(argv, c.Options...)
	argv = append(argv, "--")
	return append(argv, c.Command...)
}

// Compile turns spec into bwrap options. It reads nothing from the host
// (of host's facts, only bwrap's version matters to it), never changes
// spec, and adds nothing the Spec does not say: the order of the output
// follows the order of the Spec.
func Compile(spec Spec, host Host) (Compiled, error) {
	if err := Validate(spec); err != nil {
		return Compiled{}, err
	}
	var o []string
	ns := spec.Namespaces
	for _, n := range []struct {
		on   bool
		flag string
	}{
		{ns.PID, "--unshare-pid"},
		{ns.Net, "--unshare-net"},
		{ns.IPC, "--unshare-ipc"},
		{ns.UTS, "--unshare-uts"},
		{ns.Cgroup, "--unshare-cgroup"},
	} {
		if n.on {
			o = append(o, n.flag)
		}
	}
	if spec.AsPID1 {
		o = append(o, "--as-pid-1")
	}
	if spec.DropCaps {
		o = append(o, "--cap-drop", "ALL")
	}
	if spec.InfoFD != 0 {
		o = append(o, "--info-fd", strconv.Itoa(spec.InfoFD))
	}
	var pins []Pin
	for i, m := range spec.Mounts {
		if m.Pin != PinNone {
			if m.Kind != Bind && m.Kind != ROBind || m.Try {
				return Compiled{}, fmt.Errorf("mount %d (%s %s): only plain binds can be pinned", i, m.Kind, m.Dst)
			}
			flag := "--bind-fd"
			if m.Kind == ROBind {
				flag = "--ro-bind-fd"
			}
			o = append(o, flag, strconv.Itoa(boxinit.FDFirstPin+len(pins)), m.Dst)
			pins = append(pins, Pin{Path: m.Src, Type: m.Pin, Dev: m.PinDev, Ino: m.PinIno})
			continue
		}
		args, err := compileMount(m, host)
		if err != nil {
			return Compiled{}, fmt.Errorf("mount %d (%s %s): %w", i, m.Kind, m.Dst, err)
		}
		o = append(o, args...)
	}
	if spec.ClearEnv {
		o = append(o, "--clearenv")
	}
	for _, kv := range spec.Env {
		k, v, _ := strings.Cut(kv, "=")
		o = append(o, "--setenv", k, v)
	}
	if spec.Cwd != "" {
		o = append(o, "--chdir", spec.Cwd)
	}
	c := Compiled{Options: o, Command: append([]string(nil), spec.Command...), Pins: pins,
		EnvFile: spec.EnvFile, NewSessionKeyring: spec.NewSessionKeyring}
	for _, e := range spec.Egress {
		if e.Socket != "" {
			// aisan's own backends take the connection itself; a user's
			// socket gets the bytes.
			c.Relays = append(c.Relays, boxinit.PayloadRelay{Port: e.Port, Socket: e.Socket, Pass: e.Backend != ""})
		}
	}
	return c, nil
}

func compileMount(m Mount, host Host) ([]string, error) {
	bind := func(flag string) []string {
		if m.Try {
			flag += "-try"
		}
		return []string{flag, m.Src, m.Dst}
	}
	switch m.Kind {
	case Bind:
		return bind("--bind"), nil
	case ROBind:
		return bind("--ro-bind"), nil
	case DevBind:
		return bind("--dev-bind"), nil
	case Tmpfs:
		var a []string
		if m.Mode != 0 {
			a = append(a, "--perms", fmt.Sprintf("%04o", m.Mode))
		}
		if m.Size != 0 {
			a = append(a, "--size", strconv.FormatInt(m.Size, 10))
		}
		return append(a, "--tmpfs", m.Dst), nil
	case Proc:
		return []string{"--proc", m.Dst}, nil
	case Dev:
		return []string{"--dev", m.Dst}, nil
	case Dir:
		if m.Mode != 0 {
			return []string{"--perms", fmt.Sprintf("%04o", m.Mode), "--dir", m.Dst}, nil
		}
		return []string{"--dir", m.Dst}, nil
	case Symlink:
		return []string{"--symlink", m.Src, m.Dst}, nil
	case FileFromFD:
		return []string{"--file", strconv.Itoa(m.FD), m.Dst}, nil
	case RemountRO:
		return []string{"--remount-ro", m.Dst}, nil
	case Seal:
		// An empty tmpfs over Dst, the holes bound back at their own
		// paths, then Dst made read-only. --remount-ro does not recurse,
		// so the holes stay writable.
		a := []string{"--perms", "0755", "--tmpfs", m.Dst}
		for _, h := range m.Holes {
			a = append(a, "--bind", h, h)
		}
		return append(a, "--remount-ro", m.Dst), nil
	case Overlay:
		// --overlay-src and --tmp-overlay arrived in bwrap 0.10.0.
		if !versionAtLeast(host.BwrapVersion, OverlayBwrap) {
			have := "this host has " + versionString(host.BwrapVersion)
			if host.BwrapVersion == ([3]int{}) {
				have = "and bwrap --version did not say which this host has"
			}
			return nil, fmt.Errorf("overlay mounts need bwrap %s or newer, %s; drop the overlay (a ro or rw bind instead) or install a newer bubblewrap", versionString(OverlayBwrap), have)
		}
		return []string{"--overlay-src", m.Src, "--tmp-overlay", m.Dst}, nil
	}
	return nil, fmt.Errorf("unknown mount kind %d", m.Kind)
}

// OverlayBwrap is the first bwrap version with overlay mounts.
var OverlayBwrap = [3]int{0, 10, 0}

func versionAtLeast(have, want [3]int) bool {
	for i := range have {
		if have[i] != want[i] {
			return have[i] > want[i]
		}
	}
	return true
}

func versionString(v [3]int) string {
	return fmt.Sprintf("%d.%d.%d", v[0], v[1], v[2])
}
