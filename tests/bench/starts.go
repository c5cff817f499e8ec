package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// startRow is one whole process, started as a launch or a tool call starts
// it, timed against the empty Go program in the same round.
type startRow struct {
	name   string
	argv   []string
	stdin  string
	target float64 // the ratio to the empty program that issue #27 asks for; 0 for a floor
	ratios []float64
	times  []time.Duration
	faults []int64
}

// processStarts times the programs that start on every launch or tool
// call, as whole processes, against an empty Go program built the same
// way (static, CGO_ENABLED=0, an installed copy) and against /bin/true,
// all interleaved round by round. A ratio is taken within each round,
// so that a slow moment hits both sides of it; the median and the middle
// half of the rounds' ratios are printed. empty is the empty program;
// init and guard sit beside aisan. shonly, when set, links only the
// guard's shell parser: what the guard's start costs before its own code.
func processStarts(aisan, empty, shonly string, runs int) []figure {
	if runs < 100 {
		runs = 100
	}
	dir := filepath.Dir(aisan)
	rows := []*startRow{
		{name: "empty Go program (floor)", argv: []string{empty}},
		{name: "/bin/true (for information)", argv: []string{"/bin/true"}},
		{name: "aisan-guard, a typical Bash call", argv: []string{filepath.Join(dir, "aisan-guard")}, stdin: guardInput, target: 1.3},
		{name: "aisan version", argv: []string{aisan, "version"}, target: 1.3},
		// The jail's init does its work around other processes
		// (bwrap, the agent); --help is the start alone.
		{name: "aisan-init --help (starts once per launch)", argv: []string{filepath.Join(dir, "aisan-init"), "--help"}, target: 1.2},
	}
	if shonly != "" {
		rows = append(rows, &startRow{name: "the guard's shell parser alone (for info)", argv: []string{shonly}})
	}
	for _, r := range rows[2:] {
		if _, err := os.Stat(r.argv[0]); err != nil {
			fmt.Fprintf(os.Stderr, "bench: %v (build it with make build)\n", err)
			os.Exit(1)
		}
	}
	for i := 0; i < runs+5; i++ {
		var floor time.Duration
		for j, r := range rows {
			d, n, err := timeStart(r)
			if err != nil {
				fmt.Fprintf(os.Stderr, "bench: %s: %v\n", r.name, err)
				os.Exit(1)
			}
			if i < 5 { // the first rounds warm the page cache
				continue
			}
			if j == 0 {
				floor = d
			}
			r.times = append(r.times, d)
			r.faults = append(r.faults, n)
			r.ratios = append(r.ratios, float64(d)/float64(floor))
		}
	}
	printFirstTouch()
	fmt.Printf("process starts (issue #27), whole process, %d interleaved rounds (median; page faults; ratio to the empty Go program, median [middle half of the rounds]):\n", runs)
	var figs []figure
	for _, r := range rows {
		line := fmt.Sprintf("  %-48s %6.2f ms %4d faults", r.name, ms(median(r.times)), median(r.faults))
		if r != rows[0] {
			lo, mid, hi := quartiles(r.ratios)
			line += fmt.Sprintf("  %.2fx [%.2f-%.2f]", mid, lo, hi)
			if r.target > 0 {
				f := figure{name: r.name + " / empty Go program", value: fmt.Sprintf("%.2fx [%.2f-%.2f]", mid, lo, hi),
					target: fmt.Sprintf("<= %.1fx", r.target), ok: mid <= r.target,
					floor: fmt.Sprintf("%.2f ms", ms(median(rows[0].times)))}
				line += fmt.Sprintf(" (target <= %.1fx) %s", r.target, f.verdict())
				figs = append(figs, f)
			}
		}
		fmt.Println(line)
	}
	return figs
}

// timeStart runs r once and returns its wall time and page faults.
func timeStart(r *startRow) (time.Duration, int64, error) {
	cmd := exec.Command(r.argv[0], r.argv[1:]...)
	if r.stdin != "" {
		cmd.Stdin = strings.NewReader(r.stdin)
	}
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		return 0, 0, fmt.Errorf("%v: %s", err, out)
	}
	return time.Since(start), pageFaults(cmd.ProcessState), nil
}

// quartiles returns the 25th, 50th and 75th percentiles.
func quartiles(v []float64) (lo, mid, hi float64) {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0, 0, 0
	}
	return s[len(s)/4], s[len(s)/2], s[len(s)*3/4]
}

// figure is one row of issue #27's table: what was measured, its target,
// and the floor it is taken against, as printed in the summary.
type figure struct {
	name, value, target, floor string
	ok                         bool
	skipped                    string
}

func (f figure) verdict() string {
	switch {
	case f.skipped != "":
		return "skipped: " + f.skipped
	case f.ok:
		return "ok"
	}
	return "OVER TARGET"
}

// writeFigures appends the figures to the file bench.sh prints its
// summary from, one tab-separated line each.
func writeFigures(file string, figs []figure) {
	if file == "" {
		return
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(1)
	}
	defer f.Close()
	for _, fig := range figs {
		fmt.Fprintf(f, "%s\t%s\t%s\t%s\t%s\n", fig.name, fig.value, fig.target, fig.verdict(), fig.floor)
	}
}
