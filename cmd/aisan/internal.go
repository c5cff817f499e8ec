package main

import (
	"context"
	"os"

	"github.com/aisan-dev/aisan/jail"
)

// stageCommand is the hidden subcommand of a launch's stage process.
const stageCommand = jail.StageCommand

func runStage(_ context.Context, args []string) error {
	os.Exit(jail.RunStage(args))
	return nil
}

// keepCommand is the hidden subcommand of a slot's background keeper.
const keepCommand = jail.KeepCommand

func runKeep(_ context.Context, _ []string) error {
	os.Exit(jail.RunKeeper())
	return nil
}

func isInit() bool { return jail.IsInit(os.Args) }

func runInit() int { return jail.RunInit() }
