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
// errors are reported by parseFlags, not by the flag package. Calling
// fs.Usage prints the usage; the flag package's own call on a bad flag
// does not (an error is one line and a pointer to --help, not a page).
func newFlagSet(name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() { fmt.Fprint(os.Stdout, strings.TrimLeft(usage, "\n")) }
	return fs
}

// parseFlags parses args with fs. -h/--help prints the usage and yields
// errHelpShown; a bad flag is a usage error that points at --help.
func parseFlags(fs *flag.FlagSet, args []string) error {
	usage := fs.Usage
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.Usage = usage
	if errors.Is(err, flag.ErrHelp) {
		usage()
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
