package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// newFlagSet returns a FlagSet whose -h prints usage to stdout and whose
// errors are reported by parseFlags, not by the flag package.
func newFlagSet(name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() { fmt.Fprint(os.Stdout, strings.TrimLeft(usage, "\n")) }
	return fs
}

// parseFlags parses args with fs. -h/--help prints the usage and yields
// errHelpShown; a bad flag is a usage error that points at --help.
func parseFlags(fs *flag.FlagSet, args []string) error {
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		// The flag package has already called fs.Usage.
		return errHelpShown
	}
	if err != nil {
		return withHint(usageErr("%s: %v", fs.Name(), err), fmt.Sprintf("run 'aisan %s --help' for usage", fs.Name()))
	}
	return nil
}

// noArgs rejects stray positional arguments.
func noArgs(fs *flag.FlagSet) error {
	if fs.NArg() > 0 {
		return withHint(usageErr("%s: unexpected argument %q", fs.Name(), fs.Arg(0)), fmt.Sprintf("run 'aisan %s --help' for usage", fs.Name()))
	}
	return nil
}
