package busproxy

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
)

// StartKeepable is [Start] for a proxy that may have to outlive this
// process: when a jail's agent exits with processes left in it, the jail
// and its bus go on under a background keeper, which inherits
// [Proxy.Lifelines]. So there is no Pdeathsig (it would kill the proxy
// with the wrapper), and its stderr is a pipe rather than a goroutine of
// ours (a proxy writing to a pipe nobody reads dies of SIGPIPE). The
// readiness pipe still ends it: its only read ends are this process's and,
// after a hand-off, the keeper's, both close-on-exec, and the kernel
// closes them when they die.
func StartKeepable(ctx context.Context, plan Plan) (*Proxy, error) {
	return start(ctx, plan, true)
}

// keepable makes cmd a proxy that can outlive this process: no
// Pdeathsig, and a stderr pipe whose read end is copied into the tail
// buffer here and can be handed on.
func (p *Proxy) keepable(cmd *exec.Cmd) error {
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("creating the bus proxy's stderr pipe: %w", err)
	}
	cmd.SysProcAttr.Pdeathsig = 0
	cmd.Stderr = w
	p.stderrR = r
	go io.Copy(p.stderr, r)
	return nil
}

// Lifelines are the descriptors whose holder keeps the proxy alive and
// working: the readiness pipe's read end and, for a keepable proxy, its
// stderr's. A process that inherits them holds the proxy; once every copy
// is closed, it exits.
func (p *Proxy) Lifelines() []*os.File {
	out := []*os.File{p.sync}
	if p.stderrR != nil {
		out = append(out, p.stderrR)
	}
	return out
}

func (p *Proxy) closeStderr() {
	if p.stderrR != nil {
		p.stderrR.Close()
	}
}
