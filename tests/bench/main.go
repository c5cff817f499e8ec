// Command bench measures aisan's launch overhead against bare bwrap, in the
// same run, so the figures are ratios against a floor measured on the same
// machine at the same moment.
//
//	go run ./tests/bench -aisan /path/to/aisan -empty /path/to/empty [-runs 30] [-rows FILE] [-guard-only] [-starts-only]
//
// Each variant runs `true` in a jail; runs of all variants are interleaved
// so that a slow moment of the machine hits every variant alike. The
// process starts of aisan, aisan-init and aisan-guard are timed against an
// empty Go program (-empty) built the same way. With -rows, the figures of
// issue #27's table are appended to FILE for make bench's summary.
package main

import (
	"cmp"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/creack/pty"
	"github.com/mattn/go-shellwords"

	"github.com/aisan-dev/aisan/hooks"
	"github.com/aisan-dev/aisan/jail/shared/sibling"
)

type variant struct {
	name   string
	target float64 // ratio to the floor; 0 = no target
	issue  string
	argv   []string
	env    []string
	tty    bool
	skip   string
	// floor is the index of the variant this one's ratio is taken
	// against (0: bare bwrap with the deny-list's options).
	floor int
}

func main() {
	aisan := flag.String("aisan", "aisan", "the aisan binary to measure")
	runs := flag.Int("runs", 30, "runs per variant (at least 20)")
	guardOnly := flag.Bool("guard-only", false, "measure only the guard hook's latency (no jail, no user manager)")
	empty := flag.String("empty", "", "an empty Go program built as aisan is, the floor of the process starts")
	shonly := flag.String("shonly", "", "a program built as aisan is that links only the guard's shell parser (for information)")
	startsOnly := flag.Bool("starts-only", false, "measure only the process starts (no jail, no user manager)")
	rows := flag.String("rows", "", "append issue #27's figures to this file, tab-separated")
	flag.Parse()
	if *runs < 20 {
		*runs = 20
	}
	if *guardOnly {
		guardLatency(*aisan, *runs*2)
		return
	}
	if *empty == "" {
		fmt.Fprintln(os.Stderr, "bench: -empty is required: an empty Go program built as aisan is (bench.sh builds one)")
		os.Exit(2)
	}
	if *startsOnly {
		writeFigures(*rows, processStarts(*aisan, *empty, *shonly, *runs*10))
		return
	}
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: bwrap not found")
		os.Exit(1)
	}
	noScope := []string{"AISAN_NO_SCOPE=1"}
	noProxy := []string{"AISAN_NO_BUS_PROXY=1"}
	hasBus := os.Getenv("DBUS_SESSION_BUS_ADDRESS") != ""
	hasManager := os.Getenv("XDG_RUNTIME_DIR") != ""
	vs := []variant{
		{name: "bare bwrap (floor)", argv: []string{bwrap, "--bind", "/", "/", "--dev-bind", "/dev", "/dev", "--proc", "/proc", "--unshare-pid", "true"}},
		// Not a target: what bwrap alone costs with the deny-list's own
		// options, so the rest of a ratio can be told apart.
		{name: "bwrap with the deny-list mounts (reference)",
			argv: []string{bwrap, "--bind", "/", "/", "--dev-bind", "/dev", "/dev", "--proc", "/proc", "--unshare-pid",
				"--ro-bind", "/sys/fs/cgroup", "/sys/fs/cgroup", "--die-with-parent", "--as-pid-1", "true"}},
		{name: "aisan run -- true (no pty, bus masked, no scope)", issue: "#2", target: 2.0,
			argv: []string{*aisan, "run", "--", "true"}, env: append(noScope, noProxy...)},
		{name: "aisan run -- true on a pty", issue: "#3", target: 2.5, tty: true,
			argv: []string{*aisan, "run", "--", "true"}, env: append(noScope, noProxy...)},
		{name: "aisan run -- true with the bus proxy", issue: "#4", target: 3.0, tty: true,
			argv: []string{*aisan, "run", "--", "true"}, env: noScope},
		{name: "aisan run -- true with pty + proxy + scope", issue: "#5", target: 3.0, tty: true,
			argv: []string{*aisan, "run", "--", "true"}},
	}
	if !hasBus {
		vs[4].skip = "no session bus in this environment"
		vs[5].skip = "no session bus in this environment"
	}
	if !hasManager {
		vs[5].skip = "no systemd user manager in this environment"
	}
	strictFirst := len(vs)
	vs = append(vs, strictVariants(*aisan, bwrap, len(vs))...)
	procStart := len(vs)
	vs = append(vs, pipelineVariants(bwrap)...)
	times := make([][]time.Duration, len(vs))
	faults := make([][]int64, len(vs))
	for i := 0; i < *runs+2; i++ {
		for j, v := range vs {
			if v.skip != "" {
				continue
			}
			d, n, err := once(v)
			if err != nil {
				fmt.Fprintf(os.Stderr, "bench: %s: %v\n", v.name, err)
				os.Exit(1)
			}
			if i >= 2 { // the first runs warm caches
				times[j] = append(times[j], d)
				faults[j] = append(faults[j], n)
			}
		}
	}
	guardLatency(*aisan, *runs*2)
	starts := processStarts(*aisan, *empty, *shonly, *runs*10)

	fmt.Printf("launch overhead, %d interleaved runs each (median):\n", *runs)
	for j, v := range vs {
		if v.skip != "" {
			fmt.Printf("  %-50s skipped: %s\n", v.name, v.skip)
			continue
		}
		m := median(times[j])
		floor := median(times[v.floor])
		line := fmt.Sprintf("  %-50s %7.2f ms %5d faults", v.name, ms(m), median(faults[j]))
		if j > 0 && v.target == 0 && v.floor == 0 {
			line += fmt.Sprintf("  ratio %.2f", float64(m)/float64(floor))
		} else if j > 0 && v.target != 0 {
			ratio := float64(m) / float64(floor)
			verdict := "ok"
			if ratio > v.target {
				verdict = "OVER TARGET"
			}
			line += fmt.Sprintf("  ratio %.2f (target <= %.1f, issue %s) %s", ratio, v.target, v.issue, verdict)
		}
		fmt.Println(line)
	}
	// In the order of issue #27's table; bench.sh adds REAPI's row.
	table := printPipeline(vs, times, pipelineFigures{plain: 2, full: 5, floor: 0}, procStart, procStart+1, procStart+2)
	table = append(table, agentVersionDelta(*aisan, *runs/2), strictFigure(vs, times, strictFirst))
	writeFigures(*rows, append(table, starts...))
}

// once runs v and returns its wall time and the page faults of its
// process tree (those of the descendants it waited for included).
func once(v variant) (time.Duration, int64, error) {
	cmd := exec.Command(v.argv[0], v.argv[1:]...)
	cmd.Env = append(os.Environ(), v.env...)
	start := time.Now()
	if v.tty {
		f, err := pty.Start(cmd)
		if err != nil {
			return 0, 0, err
		}
		io.Copy(io.Discard, f)
		err = cmd.Wait()
		f.Close()
		if err != nil {
			return 0, 0, err
		}
		return time.Since(start), pageFaults(cmd.ProcessState), nil
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return 0, 0, fmt.Errorf("%v: %s", err, out)
	}
	return time.Since(start), pageFaults(cmd.ProcessState), nil
}

func median[T cmp.Ordered](d []T) T {
	s := slices.Clone(d)
	slices.Sort(s)
	if len(s) == 0 {
		var zero T
		return zero
	}
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// guardInput is a typical Claude Code PreToolUse input for the Bash tool.
const guardInput = `{"session_id":"2f9c1c1e-5a1b-4c8e-9d7a-0b6f4e3a2d10","transcript_path":"/home/dev/.claude/projects/-home-dev-proj/2f9c1c1e.jsonl","cwd":"/home/dev/proj","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"cd /home/dev/proj && go test ./... 2>&1 | tail -n 40","description":"Run the test suite","timeout":120000,"run_in_background":false},"tool_use_id":"toolu_01ABCDEF"}`

// guardLatency measures the guard hook as the agent runs it: a whole
// process, the hook's JSON on stdin, started from the command line that
// install-hook writes. The hook is aisan-guard when it sits next to aisan
// (and the target applies to it); aisan's own guard subcommand, which
// install-hook falls back to, is measured beside it for information, and
// /bin/true is the floor of any process start on this machine. Both hooks
// are also timed through /bin/sh -c, which is how the agents start a hook
// command, against sh -c /bin/true. All runs are interleaved, on installed
// copies of the binaries (see installCopies).
func guardLatency(aisan string, runs int) {
	if runs < 50 {
		runs = 50
	}
	if p, err := exec.LookPath(aisan); err == nil {
		aisan = p
	}
	bin, err := filepath.Abs(aisan)
	if err == nil {
		bin, err = filepath.EvalSymlinks(bin)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: locating %s: %v\n", aisan, err)
		os.Exit(1)
	}
	lean, err := hooks.LeanGuard(bin)
	if lean == "" {
		why := "it is not built next to aisan"
		if err != nil {
			why = err.Error()
		}
		fmt.Fprintf(os.Stderr, "bench: no lean guard to measure (%s): build it with make build\n", why)
		os.Exit(1)
	}
	// The fallback hook is the full binary's guard subcommand: the front
	// hands install-hook to aisan-full, which names itself.
	dir, err := installCopies(bin, lean, filepath.Join(filepath.Dir(bin), sibling.FullName))
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(1)
	}
	defer os.RemoveAll(dir)
	bin = filepath.Join(dir, "aisan")
	if lean, err = hooks.LeanGuard(bin); lean == "" {
		fmt.Fprintf(os.Stderr, "bench: the copy of the lean guard does not qualify: %v\n", err)
		os.Exit(1)
	}
	type row struct {
		name   string
		target bool
		argv   []string
		times  []time.Duration
	}
	var rows []*row
	for _, r := range []struct {
		name   string
		target bool
		h      hooks.Hook
	}{
		{"aisan-guard, the hook install-hook writes", true, hooks.Hook{Binary: bin, Guard: lean}},
		{"aisan-full guard, the fallback (for information)", false, hooks.Hook{Binary: filepath.Join(dir, sibling.FullName)}},
	} {
		cmd, err := r.h.Command()
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: %v\n", err)
			os.Exit(1)
		}
		words, err := shellwords.Parse(cmd)
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: splitting %q: %v\n", cmd, err)
			os.Exit(1)
		}
		rows = append(rows, &row{name: r.name, target: r.target, argv: words},
			&row{name: "  through /bin/sh -c", argv: []string{"/bin/sh", "-c", cmd}})
	}
	rows = append(rows, &row{name: "/bin/true (floor)", argv: []string{"/bin/true"}},
		&row{name: "  through /bin/sh -c", argv: []string{"/bin/sh", "-c", "/bin/true"}})
	for i := 0; i < runs+3; i++ {
		for _, r := range rows {
			cmd := exec.Command(r.argv[0], r.argv[1:]...)
			cmd.Stdin = strings.NewReader(guardInput)
			start := time.Now()
			if err := cmd.Run(); err != nil {
				fmt.Fprintf(os.Stderr, "bench: %v: %v\n", r.argv, err)
				os.Exit(1)
			}
			if i >= 3 {
				r.times = append(r.times, time.Since(start))
			}
		}
	}
	fmt.Printf("guard latency (issue #6), whole process, %d interleaved runs each (median):\n", runs)
	for _, r := range rows {
		line := fmt.Sprintf("  %-50s %7.2f ms", r.name, ms(median(r.times)))
		if r.target {
			verdict := "ok"
			if median(r.times) > 3*time.Millisecond {
				verdict = "OVER TARGET"
			}
			line += " (target <= 3 ms) " + verdict
		}
		fmt.Println(line)
	}
}

// installCopies copies the binaries into a new directory, as make install
// does, and returns it. A binary fresh from the Go linker starts markedly
// slower here (about 0.5 ms for aisan-guard, 1 ms for aisan, on a 2-core
// ext4 VM) than a copy of it, as long as the linker's pages stay in the
// page cache; the hook the agents run is an installed copy.
func installCopies(bins ...string) (string, error) {
	dir, err := os.MkdirTemp("", "aisan-guard-bench-")
	if err != nil {
		return "", err
	}
	for _, b := range bins {
		if err := copyFile(b, filepath.Join(dir, filepath.Base(b))); err != nil {
			os.RemoveAll(dir)
			return "", err
		}
	}
	return dir, nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copy %s: %w", src, err)
	}
	return out.Close()
}
