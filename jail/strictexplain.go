package jail

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/aisan-dev/aisan/jail/shared/inert"

	"github.com/aisan-dev/aisan/jail/boxinit"
)

// redacted stands for a secret value in explain's output.
const redacted = "<redacted>"

// explainStrict prints a strict box for a reviewer: the inputs, the
// egress endpoints, every mount in argv order with its kind and reason,
// the complete environment (secret values redacted) and the exact bwrap
// argv.
func explainStrict(w io.Writer, s *Session) {
	sp := s.Strict
	o := sp.Options
	net := "none: an own network namespace with only lo"
	if o.Net {
		net = "the host's (--net)"
	}
	fmt.Fprintf(w, "strict box (allow-list)\n")
	fmt.Fprintf(w, "  slot        %s\n", s.Slot)
	fmt.Fprintf(w, "  agent       %s\n", o.Kind)
	fmt.Fprintf(w, "  command     %s\n", quoteArgv(s.Spec.Command))
	fmt.Fprintf(w, "  repository  %s (read-write)\n", o.Repo)
	fmt.Fprintf(w, "  cwd         %s\n", o.Cwd)
	fmt.Fprintf(w, "  network     %s\n", net)
	if o.StateDir != "" {
		fmt.Fprintf(w, "  state       %s\n", o.StateDir)
	}
	if files := sp.BindFiles; len(files) > 0 {
		fmt.Fprintf(w, "  bind specs  %s\n", strings.Join(files, ", "))
	}
	if bw := s.Host.Bwrap; bw != "" || sp.BwrapVersion != ([3]int{}) {
		if sp.BwrapVersion != ([3]int{}) {
			bw = strings.TrimSpace(bw + " " + versionString(sp.BwrapVersion) + " (version asked: an overlay depends on it)")
		}
		fmt.Fprintf(w, "  bwrap       %s\n", bw)
	}
	for _, warning := range s.Warnings {
		// A note can quote what a box wrote (a go.mod's paths, a
		// link's target): printed inert, as the launch's say prints it.
		fmt.Fprintf(w, "  warning: %s\n", inert.Lines(warning))
	}

	// The sections only the box's mode knows (its MCP import, what host
	// tools run and its held copies), as it rendered them.
	io.WriteString(w, sp.Explain)

	fmt.Fprintf(w, "\negress endpoints (ports are picked anew at each launch):\n")
	if len(s.Spec.Egress) == 0 {
		fmt.Fprintf(w, "  (none)\n")
	}
	for _, e := range s.Spec.Egress {
		what := e.Why
		if e.Socket == "" {
			fmt.Fprintf(w, "  %-16s on the host's loopback, address and per-box token given at launch through %s (%s)\n", e.Name, s.Spec.EnvFile, what)
			continue
		}
		fmt.Fprintf(w, "  %-16s 127.0.0.1:%d and [::1]:%d -> %s (%s); inside as %s\n", e.Name, e.Port, e.Port, e.Socket, what, e.Var)
	}

	fmt.Fprintf(w, "\nmounts (in argv order; a later mount shadows an earlier one):\n")
	for i, m := range s.Spec.Mounts {
		fmt.Fprintf(w, "  %2d  %-10s %s\n", i+1, m.Kind, describeMount(m))
		if m.Why != "" {
			fmt.Fprintf(w, "      %-10s %s\n", "", m.Why)
		}
	}
	if len(s.Spec.Forbidden) > 0 {
		fmt.Fprintf(w, "\ncredentials on this host that no mount may expose:\n")
		for _, f := range s.Spec.Forbidden {
			fmt.Fprintf(w, "  %s\n", f)
		}
	}

	secret := sp.SecretNames(s.Spec.Env)
	fmt.Fprintf(w, "\nenvironment (complete: the box starts empty):\n")
	for _, kv := range s.Spec.Env {
		k, v, _ := strings.Cut(kv, "=")
		if slices.Contains(secret, k) {
			v = redacted
		}
		fmt.Fprintf(w, "  %s=%s\n", k, v)
	}
	ns := []string{"pid", "ipc", "uts"}
	if s.Spec.Namespaces.Net {
		ns = append(ns, "net")
	}
	fmt.Fprintf(w, "\nnamespaces: user (implied by bwrap), %s; no capabilities; own session keyring\n", strings.Join(ns, ", "))

	fmt.Fprintf(w, "\nbwrap argv (options reach bwrap through --args %d, never on a command line):\n  bwrap\n", boxinit.FDArgs)
	for _, group := range groupOptions(RedactOptions(s.Compiled.Options, secret)) {
		fmt.Fprintf(w, "  %s\n", quoteArgv(group))
	}
	fmt.Fprintf(w, "  -- %s\n", quoteArgv(s.Compiled.Command))
	fmt.Fprintf(w, "\nas run: bwrap --args %d -- %s   (the box's init, our binary through a descriptor;\n", boxinit.FDArgs, boxinit.InitArgv0)
	fmt.Fprintf(w, "        it starts the egress listeners, then runs the command above)\n")
}

// RedactOptions replaces the values of --setenv options whose names are
// in secret.
func RedactOptions(opts, secret []string) []string {
	out := slices.Clone(opts)
	for i := 0; i+2 < len(out); i++ {
		if out[i] == "--setenv" && slices.Contains(secret, out[i+1]) {
			out[i+2] = redacted
			i += 2
		}
	}
	return out
}
