package main

import (
	"context"
	"os"
)

const helpUsage = `
Usage: aisan help [COMMAND]
       aisan help --man

Without COMMAND, lists the commands. With one, shows its help.

Options:
  --man        print the manual page, aisan(1), in roff; 'make install'
               installs it, and 'aisan help --man | man -l -' shows it
               without installing
  -h, --help   show this help
`

func runHelp(ctx context.Context, args []string) error {
	fs := newFlagSet("help", helpUsage)
	man := fs.Bool("man", false, "")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *man {
		if err := noArgs(fs); err != nil {
			return err
		}
		if frontBuild {
			// The manual describes every command, most of which the
			// front does not link.
			return errHandOver
		}
		return writeMan(os.Stdout)
	}
	switch fs.NArg() {
	case 0:
		printUsage(os.Stdout)
		return nil
	case 1:
	default:
		return withHint(usageErr("help: too many arguments"), "aisan help [COMMAND]")
	}
	name := fs.Arg(0)
	if name == "help" {
		showHelp(helpUsage)
		return nil
	}
	if c, ok := lookupCommand(name); ok {
		err := c.run(ctx, []string{"--help"})
		if err == nil || err == errHelpShown {
			return nil
		}
		return err
	}
	return unknownCommand("help: ", name)
}
