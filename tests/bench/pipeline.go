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
// It returns the figures issue #27 restates: the plain launch against bare
// bwrap and the full launch against the stock tools.
func printPipeline(vs []variant, times [][]time.Duration, f pipelineFigures, procStart, scope, stock int) []figure {
	fmt.Println("launch pipeline (issues #11, #27):")
	ratio := func(name string, num, den time.Duration, target float64, how string) figure {
		fig := figure{name: name, target: fmt.Sprintf("<= %.1fx", target), floor: how}
		if num <= 0 || den <= 0 {
			fmt.Printf("  %-62s skipped\n", name)
			fig.skipped = "no user manager or a tool missing"
			return fig
		}
		r := float64(num) / float64(den)
		fig.value, fig.ok = fmt.Sprintf("%.2fx", r), r <= target
		fmt.Printf("  %-62s %5.2fx (target <= %.1fx; %s) %s\n", name, r, target, how, fig.verdict())
		return fig
	}
	med := func(i int) time.Duration {
		if vs[i].skip != "" {
			return 0
		}
		return median(times[i])
	}
	plain, full, floor := med(f.plain), med(f.full), med(f.floor)
	plainFig := ratio("aisan run -- true (no pty, bus masked, no scope) / bare bwrap", plain, floor, 2.0,
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
	stockFig := ratio("full launch / stock tools (systemd-run --scope, script, bwrap)", full, med(stock), 0.6,
		fmt.Sprintf("%.2f / %.2f ms", ms(full), ms(med(stock))))
	return []figure{plainFig, stockFig}
}

// agentVersionDelta measures `claude --version` typed into bash with
// aisan's shell functions loaded (scope and bus proxy on, no terminal),
// against the same with NO_AISAN=1, interleaved. The agent comes from
// AISAN_BENCH_AGENT_DIR (the test npm tree by default); without it the row
// is skipped and says why.
func agentVersionDelta(aisan string, runs int) figure {
	const name = "claude --version via the shell function, minus NO_AISAN=1"
	const target = 15 * time.Millisecond
	fig := figure{name: name, target: fmt.Sprintf("<= +%d ms", target.Milliseconds())}
	skip := func(why string) figure {
		fmt.Printf("  %-62s skipped: %s\n", name, why)
		fig.skipped = why
		return fig
	}
	dir := os.Getenv("AISAN_BENCH_AGENT_DIR")
	if dir == "" {
		dir = "/opt/aisan-test-npm/node_modules/.bin"
	}
	if _, err := os.Stat(filepath.Join(dir, "claude")); err != nil {
		return skip(fmt.Sprintf("no claude in %s (set AISAN_BENCH_AGENT_DIR)", dir))
	}
	if os.Getenv("XDG_RUNTIME_DIR") == "" || os.Getenv("DBUS_SESSION_BUS_ADDRESS") == "" {
		return skip("no user manager and session bus here")
	}
	init, err := exec.Command(aisan, "shell-init", "bash").Output()
	if err != nil {
		return skip(fmt.Sprintf("aisan shell-init bash: %v", err))
	}
	tmp, err := os.MkdirTemp("", "aisan-bench-shell-")
	if err != nil {
		return skip(err.Error())
	}
	defer os.RemoveAll(tmp)
	initFile := filepath.Join(tmp, "init.bash")
	if err := os.WriteFile(initFile, init, 0o644); err != nil {
		return skip(err.Error())
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
			return skip(fmt.Sprintf("failed: %v", err))
		}
		b, err := run("NO_AISAN=1")
		if err != nil {
			return skip(fmt.Sprintf("failed: %v", err))
		}
		if i >= 2 {
			jailed, bare = append(jailed, j), append(bare, b)
		}
	}
	d := median(jailed) - median(bare)
	fig.value, fig.ok = fmt.Sprintf("%+.1f ms", ms(d)), d <= target
	fig.floor = fmt.Sprintf("%.1f against %.1f ms", ms(median(jailed)), ms(median(bare)))
	fmt.Printf("  %-62s %+6.1f ms (target <= +%d ms; %s, %d runs) %s\n",
		name, ms(d), target.Milliseconds(), fig.floor, runs, fig.verdict())
	return fig
}
