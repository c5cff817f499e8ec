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

// receiptCommand is the hidden subcommand that finishes a strict
// launch's receipt after the launch has returned.
const receiptCommand = strictbox.ReceiptCommand

func runReceipt(_ context.Context, args []string) error {
	os.Exit(strictbox.FinishReceipt(args))
	return nil
}

// receiptFinisher is the argv that finishes a receipt: this binary's
// hidden command (nil when this binary cannot be named: the receipt is
// then finished in the launch).
func receiptFinisher() []string {
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	return []string{exe, receiptCommand}
}

func isInit() bool { return boxinit.IsInit(os.Args) }

func runInit() int { return boxinit.RunInit() }
