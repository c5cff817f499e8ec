package launch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/shared/atomicfile"
	"github.com/aisan-dev/aisan/jail/strictbox/gitpin"
	"github.com/aisan-dev/aisan/jail/strictbox/mcp"
)

// strictHost is what a strict launch started on the host for its box.
type strictHost struct {
	// egress serves the built-in endpoints; nil when there are none.
	egress   *jail.EgressRun
	builtin  []jail.Endpoint
	gitWatch []string
	say      jail.Say
}

// end is what follows the box's end: its services stop, and what it
// left that would redirect host git is moved aside.
func (h *strictHost) end() {
	if h.egress != nil && h.egress.Stop != nil {
		h.egress.Stop()
	}
	for _, m := range gitpin.Sweep(gitpin.Plan{Watch: h.gitWatch}) {
		h.say(jail.Warning, m)
	}
}

// keepable reports whether a keeper could take the box's services over.
func (h *strictHost) keepable() bool {
	return h.egress == nil || h.egress.Handover != nil
}

// handover is the keeper's part of a strict box: what it serves and
// sweeps, the listening sockets it inherits (the caller closes them once
// the keeper has them), and the function that then ends this process's
// own service.
func (h *strictHost) handover() (*keepStrict, []*os.File, func(context.Context), error) {
	ks := &keepStrict{GitWatch: h.gitWatch}
	if h.egress == nil {
		return ks, nil, func(context.Context) {}, nil
	}
	files, state, drain, err := h.egress.Handover()
	if err != nil {
		return nil, nil, nil, err
	}
	if len(files) != len(h.builtin) {
		for _, f := range files {
			f.Close()
		}
		return nil, nil, nil, fmt.Errorf("the egress services handed over %d sockets for %d endpoints", len(files), len(h.builtin))
	}
	ks.Endpoints, ks.State = h.builtin, state
	return ks, files, drain, nil
}

// prepareStrict does the host-side steps of a strict launch, once the
// slot's run directory exists: the state directory and its seed, the
// generated gitconfig, the egress services. What it returns ends them
// after the box, or hands them to a keeper.
func prepareStrict(ctx context.Context, s *jail.Session, say jail.Say) (*strictHost, error) {
	sp := s.Strict
	o := sp.Options
	if o.StateDir != "" {
		if err := makeStateDir(s.Host.AisanHome, o.StateDir); err != nil {
			return nil, err
		}
		if err := seedState(o); err != nil {
			return nil, err
		}
		if sp.MCP != nil {
			// After the seed: Codex's servers are merged into the
			// config.toml it wrote.
			p, err := mcp.Prepare(*sp.MCP)
			if err != nil {
				return nil, fmt.Errorf("importing the user's MCP servers: %w", err)
			}
			if p.Summary != "" {
				say(jail.Plain, p.Summary)
			}
			for _, l := range p.Lines {
				say(jail.Plain, "  "+l)
			}
		}
	}
	if o.GitConfig != "" {
		if err := atomicfile.Write(o.GitConfig, sp.GitConfig, atomicfile.Options{Mode: 0o600}); err != nil {
			return nil, err
		}
	}
	host := &strictHost{gitWatch: sp.Git.Watch, say: say}
	var boxEnv []string
	if len(s.Spec.Egress) > 0 {
		if err := os.Mkdir(filepath.Join(s.SlotDir, "egress"), 0o700); err != nil {
			return nil, fmt.Errorf("creating the egress socket directory: %w", err)
		}
		for _, e := range s.Spec.Egress {
			if e.Backend != "" {
				host.builtin = append(host.builtin, e)
			}
		}
		if len(host.builtin) > 0 {
			if s.Request.Strict.StartEgress == nil {
				return nil, fmt.Errorf("--egress %s: %w", host.builtin[0].Name, jail.ErrNoBackend)
			}
			run, err := s.Request.Strict.StartEgress(ctx, host.builtin)
			if err != nil {
				return nil, err
			}
			host.egress, boxEnv = run, run.Env
		}
	}
	if s.Spec.EnvFile != "" {
		var b strings.Builder
		for _, kv := range boxEnv {
			if strings.ContainsAny(kv, "\n\x00") {
				host.end()
				return nil, fmt.Errorf("an egress backend gave an environment entry with a newline")
			}
			b.WriteString(kv + "\n")
		}
		if err := atomicfile.Write(s.Spec.EnvFile, []byte(b.String()), atomicfile.Options{Mode: 0o600}); err != nil {
			host.end()
			return nil, err
		}
	}
	return host, nil
}
