package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/debug"
	"strings"
	"time"

	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/busproxy"
	"github.com/aisan-dev/aisan/jail/shared/hostprog"
)

const versionUsage = `
Usage: aisan version
       aisan --version

Prints aisan's version: the module version and the commit it was built
from (from Go's build information; 'make build' in a git checkout records
the commit, "+dirty" marks uncommitted changes), the Go version,
then the bwrap and xdg-dbus-proxy that launches would use with their
versions: the first on PATH that no jail could have put there, passing
over a directory of yours ('aisan preflight' names what it passed over).

Options:
  -h, --help   show this help

Example:
  aisan version
`

// version is set by the linker for releases (-X main.version=...);
// commit ("HASH" or "HASH+dirty") and commitDate by 'make build', for a
// checkout Go's own stamping misses (a linked worktree).
var version, commit, commitDate = "", "", ""

func runVersion(_ context.Context, args []string) error {
	fs := newFlagSet("version", versionUsage)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	writeVersion(os.Stdout, readVersion(), lookTool)
	return nil
}

// buildVersion is what the binary knows of its own build.
type buildVersion struct {
	module string // v1.2.3, a pseudo-version, or (devel)
	commit string // the full hash, "" when not recorded
	dirty  bool
	date   string // the commit's date, 2006-01-02, "" when not recorded
	goVer  string
}

// readVersion reads the build information Go records in the binary.
func readVersion() buildVersion {
	v := buildVersion{module: version, date: commitDate}
	v.commit, _ = strings.CutSuffix(commit, "+dirty")
	v.dirty = strings.HasSuffix(commit, "+dirty")
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		if v.module == "" {
			v.module = "(devel)"
		}
		return v
	}
	v.goVer = bi.GoVersion
	if v.module == "" {
		v.module = bi.Main.Version
	}
	if v.module == "" {
		v.module = "(devel)"
	}
	for _, s := range bi.Settings {
		if commit != "" {
			break // the linker's word, from git itself
		}
		switch s.Key {
		case "vcs.revision":
			v.commit = s.Value
		case "vcs.modified":
			v.dirty = s.Value == "true"
		case "vcs.time":
			if t, err := time.Parse(time.RFC3339, s.Value); err == nil {
				v.date = t.UTC().Format(time.DateOnly)
			}
		}
	}
	return v
}

// toolVersion is what one external program says of itself.
type toolVersion struct {
	path, version string
	err           error
}

// lookTool finds name on PATH as a launch does and asks it for its
// version (cached by the binary's identity, as launches cache bwrap's).
func lookTool(name string) toolVersion {
	p := hostprog.Find(name, os.Getenv("PATH")).Path
	if p == "" {
		return toolVersion{err: exec.ErrNotFound}
	}
	// The launches' run directory holds the cache; 'aisan version' makes
	// it as a launch would, but not the directories above it.
	run := jail.UserRunDir()
	if run != "" {
		_ = os.Mkdir(run, 0o700)
	}
	line, err := jail.ToolVersion(p, run)
	if err != nil {
		return toolVersion{path: p, err: err}
	}
	f := strings.Fields(line)
	return toolVersion{path: p, version: f[len(f)-1]}
}

// writeVersion prints the version lines:
//
//	aisan v0.3.1 (commit 0123abcd…, 2026-05-01) go1.26.0
//	bwrap 0.8.0 /usr/bin/bwrap
//	xdg-dbus-proxy 0.1.4 /usr/bin/xdg-dbus-proxy
func writeVersion(w io.Writer, v buildVersion, look func(string) toolVersion) {
	commit := "commit unknown"
	if v.commit != "" {
		commit = "commit " + v.commit
		if v.dirty {
			commit += "+dirty"
		}
		if v.date != "" {
			commit += ", " + v.date
		}
	}
	fmt.Fprintf(w, "aisan %s (%s) %s\n", v.module, commit, v.goVer)
	for _, name := range []string{"bwrap", busproxy.ProxyName} {
		t := look(name)
		switch {
		case t.path == "":
			fmt.Fprintf(w, "%s not found in PATH\n", name)
		case t.err != nil:
			fmt.Fprintf(w, "%s (version unknown: %v) %s\n", name, t.err, t.path)
		default:
			fmt.Fprintf(w, "%s %s %s\n", name, t.version, t.path)
		}
	}
}
