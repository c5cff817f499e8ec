package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// newFlagSet returns a FlagSet whose -h prints usage to stdout and whose
// errors are reported by parseFlags, not by the flag package. Calling
// fs.Usage prints the usage; the flag package's own call on a bad flag
// does not (an error is one line and a pointer to --help, not a page).
func newFlagSet(name, usage string) *flag.FlagSet {
	return newFlagSetFunc(name, func() string { return usage })
}

// newFlagSetFunc is newFlagSet for a help that is put together when shown.
func newFlagSetFunc(name string, usage func() string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() { showHelp(usage()) }
	noteFlagSet(fs)
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
		hint := fmt.Sprintf("run 'aisan %s --help' for usage", fs.Name())
		if name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: "); ok {
			if n := nearestFlag(fs, strings.TrimLeft(name, "-")); n != "" {
				hint = fmt.Sprintf("did you mean --%s? ", n) + hint
			}
		}
		return withHint(usageErr("%s: %v", fs.Name(), err), hint)
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

// unknownOption is the error for an option fs does not have, with the
// nearest one it has, or the launchers that take it.
func unknownOption(fs *flag.FlagSet, name string) error {
	err := usageErr("%s: unknown option --%s", fs.Name(), name)
	for _, o := range strictOptions {
		if o.name == name && len(o.only) > 0 {
			var kinds []string
			for _, k := range o.only {
				kinds = append(kinds, string(k))
			}
			return withHint(err, fmt.Sprintf("--%s is for %s only", name, strings.Join(kinds, ", ")))
		}
	}
	if n := nearestFlag(fs, name); n != "" {
		return withHint(err, fmt.Sprintf("did you mean --%s? 'aisan %s --help' lists the options", n, fs.Name()))
	}
	return withHint(err, fmt.Sprintf("run 'aisan %s --help' for the options", fs.Name()))
}

// nearestFlag is the flag of fs closest to name, or "".
func nearestFlag(fs *flag.FlagSet, name string) string {
	var names []string
	fs.VisitAll(func(f *flag.Flag) {
		if f.Usage != hiddenFlag {
			names = append(names, f.Name)
		}
	})
	return nearest(name, names)
}

// parseInterspersed parses fs's flags wherever they appear among the
// positional arguments ("aisan logs SLOT -f" as well as "aisan logs -f
// SLOT"), and returns the positional ones. After "--" everything is
// positional.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parseFlags(fs, args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		// flag stops at a non-flag, or consumes "--" and stops after it.
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}
