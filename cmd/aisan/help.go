package main

import (
	"context"
	"fmt"
	"os"
)

const helpUsage = `
Usage: aisan help [COMMAND]

Without COMMAND, lists the commands. With one, shows its help.
`

func runHelp(ctx context.Context, args []string) error {
	if len(args) == 0 {
		printUsage(os.Stdout)
		return nil
	}
	if len(args) > 1 {
		return withHint(usageErr("help: too many arguments"), "aisan help [COMMAND]")
	}
	if args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Print(helpUsage[1:])
		return nil
	}
	for _, c := range commands {
		if c.name == args[0] && !c.hidden {
			err := c.run(ctx, []string{"--help"})
			if err == nil || err == errHelpShown {
				return nil
			}
			return err
		}
	}
	return withHint(usageErr("help: unknown command %q", args[0]), "run 'aisan help' for the list of commands")
}
