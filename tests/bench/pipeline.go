package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// pipelineFigures are the launch pipeline's four figures (issue #11), each
// against something measured in the same run: the floor (bare bwrap), the
// plain launch plus what a scope costs to start, the same pipeline built
// from stock tools, and the agent run without aisan.
type pipelineFigures struct {
	// indices into the launch variants
	plain, full, floor int
}

// pipelineVariants are the extra rows the figures need.
func pipelineVariants(bwrap string) []variant {
	hasManager := os.Getenv("XDG_RUNTIME_DIR") != "" && os.Getenv("DBUS_SESSION_BUS_ADDRESS") != ""
	systemdRun, err := exec.LookPath("systemd-run")
	script, serr := exec.LookPath("script")
	skip := ""
	switch {
	case !hasManager:
		skip = "no systemd user manager in this environment"
	case err != nil:
		skip = "systemd-run not found"
	case serr != nil:
		skip = "script(1) not found (util-linux)"
	}
	inner := strings.Join([]string{bwrap, "--bind / /", "--dev-bind /dev /dev", "--proc /proc", "--unshare-pid", "true"}, " ")
	return []variant{
		{name: "/bin/true (process start)", argv: []string{"/bin/true"}},
		{name: "systemd-run --user --scope -- true", argv: []string{systemdRun, "--user", "--scope", "--quiet", "--", "true"}, skip: skip},
		{name: "stock tools: systemd-run --scope + script + bwrap", argv: []string{systemdRun, "--user", "--scope", "--quiet", "--", script, "-q", "-c", inner, "/dev/null"}, skip: skip},
	}
}

// printPipeline prints the figures. times holds the launch variants'
// samples by index; procStart, scope and stock are the indices of the rows
// pipelineVariants added.
func printPipeline(vs []variant, times [][]time.Duration, f pipelineFigures, procStart, scope, stock int) {
	fmt.Println("launch pipeline (issue #11):")
	ratio := func(name string, num, den time.Duration, target float64, how string) {
		if num <= 0 || den <= 0 {
			fmt.Printf("  %-62s skipped\n", name)
			return
		}
		r := float64(num) / float64(den)
		verdict := "ok"
		if r > target {
			verdict = "OVER TARGET"
		}
		fmt.Printf("  %-62s %5.2fx (target <= %.1fx; %s) %s\n", name, r, target, how, verdict)
	}
	med := func(i int) time.Duration {
		if vs[i].skip != "" {
			return 0
		}
		return median(times[i])
	}
	plain, full, floor := med(f.plain), med(f.full), med(f.floor)
	ratio("aisan run -- true (no pty, bus masked, no scope) / bare bwrap", plain, floor, 2.0,
		fmt.Sprintf("%.2f / %.2f ms", ms(plain), ms(floor)))
	// What a scope costs to start, without the process systemd-run is.
	scopeStart := med(scope) - med(procStart)
	if med(scope) == 0 {
		scopeStart = 0
	}
	den := time.Duration(0)
	if scopeStart > 0 {
		den = plain + scopeStart
	}
	ratio("full launch / (plain launch + a scope's start)", full, den, 1.0,
		fmt.Sprintf("%.2f / (%.2f + %.2f) ms", ms(full), ms(plain), ms(scopeStart)))
	ratio("full launch / stock tools (systemd-run --scope, script, bwrap)", full, med(stock), 0.6,
		fmt.Sprintf("%.2f / %.2f ms", ms(full), ms(med(stock))))
}

// agentVersionDelta measures `claude --version` typed into bash with
// aisan's shell functions loaded (scope and bus proxy on, no terminal),
// against the same with NO_AISAN=1, interleaved. The agent comes from
// AISAN_BENCH_AGENT_DIR (the test npm tree by default); without it the row
// is skipped and says why.
func agentVersionDelta(aisan string, runs int) {
	const name = "claude --version via the shell function, minus NO_AISAN=1"
	dir := os.Getenv("AISAN_BENCH_AGENT_DIR")
	if dir == "" {
		dir = "/opt/aisan-test-npm/node_modules/.bin"
	}
	if _, err := os.Stat(filepath.Join(dir, "claude")); err != nil {
		fmt.Printf("  %-62s skipped: no claude in %s (set AISAN_BENCH_AGENT_DIR)\n", name, dir)
		return
	}
	if os.Getenv("XDG_RUNTIME_DIR") == "" || os.Getenv("DBUS_SESSION_BUS_ADDRESS") == "" {
		fmt.Printf("  %-62s skipped: no user manager and session bus here\n", name)
		return
	}
	init, err := exec.Command(aisan, "shell-init", "bash").Output()
	if err != nil {
		fmt.Printf("  %-62s skipped: aisan shell-init bash: %v\n", name, err)
		return
	}
	tmp, err := os.MkdirTemp("", "aisan-bench-shell-")
	if err != nil {
		fmt.Printf("  %-62s skipped: %v\n", name, err)
		return
	}
	defer os.RemoveAll(tmp)
	initFile := filepath.Join(tmp, "init.bash")
	if err := os.WriteFile(initFile, init, 0o644); err != nil {
		fmt.Printf("  %-62s skipped: %v\n", name, err)
		return
	}
	path := filepath.Dir(aisan) + ":" + dir + ":" + os.Getenv("PATH")
	run := func(extra ...string) (time.Duration, error) {
		cmd := exec.Command("bash", "--norc", "--noprofile", "-c", `. "$1" && claude --version`, "bash", initFile)
		cmd.Env = append(append(os.Environ(), "PATH="+path), extra...)
		cmd.Dir = tmp
		start := time.Now()
		out, err := cmd.CombinedOutput()
		if err != nil {
			return 0, fmt.Errorf("%v: %s", err, out)
		}
		return time.Since(start), nil
	}
	var jailed, bare []time.Duration
	for i := 0; i < runs+2; i++ {
		j, err := run()
		if err != nil {
			fmt.Printf("  %-62s failed: %v\n", name, err)
			return
		}
		b, err := run("NO_AISAN=1")
		if err != nil {
			fmt.Printf("  %-62s failed: %v\n", name, err)
			return
		}
		if i >= 2 {
			jailed, bare = append(jailed, j), append(bare, b)
		}
	}
	d := median(jailed) - median(bare)
	verdict := "ok"
	if d > 20*time.Millisecond {
		verdict = "OVER TARGET"
	}
	fmt.Printf("  %-62s %+6.1f ms (target <= +20 ms; %.1f against %.1f ms, %d runs) %s\n",
		name, ms(d), ms(median(jailed)), ms(median(bare)), runs, verdict)
}
