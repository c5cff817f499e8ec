package jail

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/aisan-dev/aisan/jail/boxinit"

	"github.com/aisan-dev/aisan/jail/busproxy"
)

// Explain prints a planned session for a human reviewer, as `aisan
// explain` shows it: a strict box with every mount's reason and its
// egress, or a deny-list jail.
func Explain(w io.Writer, s *Session) {
	if s.Strict != nil {
		explainStrict(w, s)
		return
	}
	explainSpec(w, s.Spec, s.Compiled, s.Slot, s.Host.Bwrap)
}

// explainSpec prints a Spec and its compiled argv: the namespaces, the
// mounts in the order bwrap applies them, the environment changes against
// the host's, the bus decision, and the exact command lines. bwrap is
// the path of the bwrap a launch runs ("" when unknown): the first on
// PATH that no jail could have put there, not simply the first.
func explainSpec(w io.Writer, s Spec, c Compiled, slot, bwrap string) {
	fmt.Fprintf(w, "slot        %s\n", slot)
	fmt.Fprintf(w, "command     %s\n", quoteArgv(s.Command))
	fmt.Fprintf(w, "cwd         %s\n", s.Cwd)
	if bwrap != "" {
		fmt.Fprintf(w, "bwrap       %s\n", bwrap)
	}
	var ns []string
	for _, n := range []struct {
		on   bool
		name string
	}{{s.Namespaces.PID, "pid"}, {s.Namespaces.Net, "net"}, {s.Namespaces.IPC, "ipc"}, {s.Namespaces.UTS, "uts"}, {s.Namespaces.Cgroup, "cgroup"}} {
		if n.on {
			ns = append(ns, n.name)
		}
	}
	fmt.Fprintf(w, "namespaces  user (implied by bwrap), %s\n", strings.Join(ns, ", "))

	fmt.Fprintf(w, "\nmounts (in order; a later mount shadows an earlier one):\n")
	for i, m := range s.Mounts {
		fmt.Fprintf(w, "  %2d  %-12s %s\n", i+1, m.Kind, describeMount(m))
	}

	fmt.Fprintf(w, "\nsession bus: %s\n", s.Bus)
	if argv := busproxy.Argv(s.Bus.Behind()); argv != nil {
		fmt.Fprintf(w, "  proxy argv (started on the jail's first connection): %s\n", quoteArgv(argv))
	}
	for _, warning := range s.Bus.Warnings {
		fmt.Fprintf(w, "  warning: %s\n", warning)
	}

	fmt.Fprintf(w, "\nenvironment (clear: %v; changes against this shell's; secrets shown as %s):\n", s.ClearEnv, redactedValue)
	for _, line := range envChanges(os.Environ(), s.Env, s.ClearEnv) {
		fmt.Fprintf(w, "  %s\n", line)
	}
	if lim := s.Limits; lim != (Limits{}) {
		fmt.Fprintf(w, "\nlimits (systemd scope): memory-max=%d cpu-quota-usec-per-sec=%d tasks-max=%d\n",
			lim.MemoryMax, lim.CPUQuotaPerSecUSec, lim.TasksMax)
	}

	fmt.Fprintf(w, "\nbwrap argv (options reach bwrap through --args %d, never on a command line):\n  bwrap\n", boxinit.FDArgs)
	for _, group := range groupOptions(redactOptions(c.Options)) {
		fmt.Fprintf(w, "  %s\n", quoteArgv(group))
	}
	fmt.Fprintf(w, "  -- %s\n", quoteArgv(c.Command))
	fmt.Fprintf(w, "\nas run: bwrap --args %d -- %s   (the jail's init, our binary through a descriptor;\n", boxinit.FDArgs, boxinit.InitArgv0)
	fmt.Fprintf(w, "        it reads the command above from descriptor %d and runs it)\n", boxinit.FDPayload)
}

func describeMount(m Mount) string {
	switch m.Kind {
	case Bind, ROBind, DevBind, Overlay:
		if m.Src == m.Dst {
			return m.Dst
		}
		return m.Src + " -> " + m.Dst
	case Symlink:
		return m.Dst + " -> " + m.Src
	case Tmpfs:
		s := m.Dst
		if m.Size != 0 {
			s += fmt.Sprintf(" (size %d)", m.Size)
		}
		if m.Mode != 0 {
			s += fmt.Sprintf(" (mode %04o)", m.Mode)
		}
		return s
	case FileFromFD:
		return fmt.Sprintf("fd %d -> %s", m.FD, m.Dst)
	case Seal:
		return fmt.Sprintf("%s (writable: %s)", m.Dst, strings.Join(m.Holes, " "))
	}
	return m.Dst
}

// envChanges lists what the jail's environment adds, changes or drops.
func envChanges(host, jail []string, clear bool) []string {
	hm := map[string]string{}
	for _, kv := range host {
		k, v, _ := strings.Cut(kv, "=")
		hm[k] = v
	}
	jm := map[string]bool{}
	var out []string
	for _, kv := range jail {
		k, v, _ := strings.Cut(kv, "=")
		jm[k] = true
		old, had := hm[k]
		switch {
		case !had:
			out = append(out, "+ "+redactEnv(k+"="+v))
		case old != v:
			out = append(out, "~ "+redactEnv(k+"="+v))
		}
	}
	if clear {
		for _, kv := range host {
			k, _, _ := strings.Cut(kv, "=")
			if !jm[k] {
				out = append(out, "- "+k)
			}
		}
	}
	if len(out) == 0 {
		out = append(out, "(none)")
	}
	return out
}

func quoteArgv(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// optionArity is how many arguments bwrap option opt takes. (A switch,
// not a map: a package-level map is built at every start of aisan, before
// main, and only explain reads this.)
func optionArity(opt string) int {
	switch opt {
	case "--bind", "--bind-try", "--ro-bind", "--ro-bind-try",
		"--dev-bind", "--dev-bind-try", "--symlink", "--file",
		"--setenv":
		return 2
	case "--tmpfs", "--proc", "--dev", "--dir",
		"--remount-ro", "--perms", "--size", "--chdir",
		"--info-fd", "--cap-drop", "--overlay-src", "--tmp-overlay", "--unsetenv":
		return 1
	}
	return 0
}

// groupOptions splits bwrap options into one option with its arguments
// per group, for display.
func groupOptions(opts []string) [][]string {
	var out [][]string
	for i := 0; i < len(opts); {
		n := 1 + optionArity(opts[i])
		if i+n > len(opts) {
			n = len(opts) - i
		}
		out = append(out, opts[i:i+n])
		i += n
	}
	return out
}
