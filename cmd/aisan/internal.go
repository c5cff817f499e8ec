package main

import (
	"context"
	"os"

	"github.com/aisan-dev/aisan/jail/boxinit"
	"github.com/aisan-dev/aisan/jail/busproxy"
	"github.com/aisan-dev/aisan/jail/launch"
)

// keepCommand is the hidden subcommand of a slot's background keeper.
const keepCommand = launch.KeepCommand

// A keeper is started from the binary that made the launch, so it keeps
// the modes that binary launches (keeperModes).
func runKeep(_ context.Context, _ []string) error {
	os.Exit(launch.RunKeeper(keeperModes()...))
	return nil
}

// receiptCommand is the hidden subcommand that finishes a strict
// launch's receipt after the launch has returned (receiptFinisher).
const receiptCommand = "__receipt"

// busRelayCommand is the hidden subcommand that relays a jail's session
// bus to its proxy, started on the jail's first connection.
const busRelayCommand = busproxy.RelayCommand

func runBusRelay(_ context.Context, args []string) error {
	os.Exit(busproxy.RunRelay(args))
	return nil
}

func isInit() bool { return boxinit.IsInit(os.Args) }

func runInit() int { return boxinit.RunInit() }
