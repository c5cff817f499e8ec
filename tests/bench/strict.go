package main

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/mattn/go-shellwords"
)

// strictVariants measure `aisan run --strict -- true` against the same
// box's argv run by bwrap directly (issue #14), once plain and once with
// one raw egress endpoint. first is the index the first variant gets.
func strictVariants(aisan, bwrap string, first int) []variant {
	noScope := []string{"AISAN_NO_SCOPE=1"}
	bare, err := strictBareArgv(aisan, bwrap)
	floor := variant{name: "bwrap with the strict box's argv (floor)", argv: bare}
	if err != nil {
		floor.skip = err.Error()
	}
	out := []variant{floor,
		{name: "aisan run --strict -- true (no scope)", issue: "#14", target: 2.0, floor: first,
			argv: []string{aisan, "run", "--strict", "--", "true"}, env: noScope, skip: floor.skip},
	}
	sock, err := stubSocket()
	egress := variant{name: "aisan run --strict, one raw egress endpoint", issue: "#14", target: 2.2, floor: first,
		argv: []string{aisan, "run", "--strict", "--egress", "stub=" + sock, "--", "true"}, env: noScope, skip: floor.skip}
	if err != nil {
		egress.skip = err.Error()
	}
	return append(out, egress)
}

// strictBareArgv is the bwrap argv that `aisan explain run --strict`
// prints, less what only a launch provides: the info descriptor and
// mounts of files a launch creates (the generated gitconfig).
func strictBareArgv(aisan, bwrap string) ([]string, error) {
	out, err := exec.Command(aisan, "explain", "run", "--strict", "--", "true").Output()
	if err != nil {
		return nil, fmt.Errorf("aisan explain run --strict: %v", err)
	}
	_, rest, ok := bytes.Cut(out, []byte("\n  bwrap\n"))
	if !ok {
		return nil, fmt.Errorf("no bwrap argv in explain's output")
	}
	argv := []string{bwrap}
	for _, line := range strings.Split(string(rest), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "-- ") {
			words, err := shellwords.Parse(strings.TrimPrefix(line, "-- "))
			if err != nil {
				return nil, err
			}
			return append(append(argv, "--"), words...), nil
		}
		words, err := shellwords.Parse(line)
		if err != nil || len(words) == 0 {
			return nil, fmt.Errorf("explain line %q: %v", line, err)
		}
		if words[0] == "--info-fd" {
			continue
		}
		if len(words) == 3 && strings.HasPrefix(words[0], "--ro-bind") {
			if _, err := os.Stat(words[1]); err != nil {
				continue
			}
		}
		argv = append(argv, words...)
	}
	return nil, fmt.Errorf("explain's argv has no command")
}

// stubSocket listens on a Unix socket for the egress variant; nothing
// connects during `true`, the relay only binds its port.
func stubSocket() (string, error) {
	dir, err := os.MkdirTemp("", "aisan-bench-")
	if err != nil {
		return "", err
	}
	sock := filepath.Join(dir, "stub.sock")
	if _, err := net.Listen("unix", sock); err != nil {
		return "", err
	}
	return sock, nil
}

// strictFigure is issue #27's strict row: the plain strict launch against
// the same box's argv run by bwrap directly. first is the index of that
// floor among the variants.
func strictFigure(vs []variant, times [][]time.Duration, first int) figure {
	fig := figure{name: "aisan run --strict -- true / the same box's bare bwrap", target: "<= 2.0x"}
	if vs[first].skip != "" || vs[first+1].skip != "" {
		fig.skipped = vs[first].skip
		return fig
	}
	floor, m := median(times[first]), median(times[first+1])
	r := float64(m) / float64(floor)
	fig.value, fig.ok = fmt.Sprintf("%.2fx", r), r <= 2.0
	fig.floor = fmt.Sprintf("%.2f / %.2f ms", ms(m), ms(floor))
	return fig
}
