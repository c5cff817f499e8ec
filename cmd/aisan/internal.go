package main

import (
	"context"
	"os"

	"github.com/aisan-dev/aisan/jail/boxinit"
	"github.com/aisan-dev/aisan/jail/launch"
	"github.com/aisan-dev/aisan/jail/strictbox"
)

// stageCommand is the hidden subcommand of a launch's stage process.
const stageCommand = boxinit.StageCommand

func runStage(_ context.Context, args []string) error {
	os.Exit(boxinit.RunStage(args))
	return nil
}

// keepCommand is the hidden subcommand of a slot's background keeper.
const keepCommand = launch.KeepCommand

func runKeep(_ context.Context, _ []string) error {
	os.Exit(launch.RunKeeper(launch.Deny{}, &strictbox.Box{}))
	return nil
}

func isInit() bool { return boxinit.IsInit(os.Args) }

func runInit() int { return boxinit.RunInit() }
