package main

import (
	"context"
	"fmt"
	"runtime/debug"
	"strings"
)

const versionUsage = `
Usage: aisan version

Prints aisan's version (the module version, or the VCS revision of a
development build) and the Go version it was built with.
`

// version is set by the linker for releases (-X main.version=...).
var version = ""

func runVersion(_ context.Context, args []string) error {
	fs := newFlagSet("version", versionUsage)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	v, goVersion := version, ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		goVersion = bi.GoVersion
		if v == "" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && (v == "" || v == "(devel)") {
				v = "devel-" + s.Value[:min(12, len(s.Value))]
			}
		}
	}
	if v == "" {
		v = "(devel)"
	}
	fmt.Printf("aisan %s (%s)\n", strings.TrimSpace(v), goVersion)
	return nil
}
