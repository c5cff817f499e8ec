package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// initBudget is what one of the module's packages may allocate while the
// program starts, before main runs: every launch starts aisan and
// aisan-full, and a table or regular expression built at package level
// is paid on each start whether the command uses it or not (#27). A
// package that needs one builds it on first use (sync.OnceValue).
const initBudget = 4096

// TestInitWork runs this test binary, which links every package aisan-full
// does, with the runtime's init trace, and holds each package of the
// module to initBudget bytes allocated by its initialisation.
func TestInitWork(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("running the test binary with GODEBUG=inittrace=1: %v\n%s", err, stderr.Bytes())
	}
	seen := 0
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		// init PKG @T ms, C ms clock, B bytes, A allocs
		f := strings.Fields(sc.Text())
		if len(f) != 11 || f[0] != "init" || f[8] != "bytes," {
			continue
		}
		pkg := f[1]
		// This package's line counts its tests' tables too (aisan's own
		// main allocates about 2 KiB; make bench times its start).
		if pkg == mod+"/cmd/aisan" || !strings.HasPrefix(pkg, mod+"/") {
			continue
		}
		seen++
		n, err := strconv.Atoi(f[7])
		if err != nil {
			t.Fatalf("init trace line %q: %v", sc.Text(), err)
		}
		if n > initBudget {
			t.Errorf("%s allocates %d bytes as the program starts (budget %d): build its tables and regular expressions on first use", pkg, n, initBudget)
		}
	}
	// Packages that allocate nothing at start print no line; the trace
	// must still show some of ours, or this test checks nothing.
	if seen < 5 {
		t.Fatalf("the init trace shows %d of the module's packages; is GODEBUG=inittrace supported here?\n%s", seen, stderr.Bytes())
	}
}
