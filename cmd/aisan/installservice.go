package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/aisan-dev/aisan/systemd"
)

const installServiceUsage = `
Usage: aisan install-service [--print]

Install the aisan supervisor as a systemd user unit and start it. The unit,
aisan-watch.service, runs 'aisan watch': it reaps jails whose wrapper died,
stops headless services that outlive their runtime cap, and records how
slots ended. It never touches a running interactive session.

install-service writes ~/.config/systemd/user/aisan-watch.service with
ExecStart= pointing at this aisan binary (and AISAN_HOME, when set), then
asks your user manager over D-Bus to reload, enable and start it. A
different unit file already there is kept as aisan-watch.service.aisan-bak.
It also makes the unit's drop-in directories (aisan-watch.service.d and
aisan-.service.d), empty, in each of your unit directories the manager
reads, so that every jail can keep them read-only (the manager runs the
unit outside any jail).
Running it again changes nothing; after moving the aisan binary, run it
again to point the unit at the new place.

Options:
  --print    print the unit file that would be installed, and exit

Example:
  aisan install-service
  systemctl --user status aisan-watch
`

func runInstallService(ctx context.Context, args []string) error {
	fs := newFlagSet("install-service", installServiceUsage)
	print := fs.Bool("print", false, "")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	self, err := installedSelf()
	if err != nil {
		return err
	}
	var env []string
	if h := os.Getenv("AISAN_HOME"); h != "" {
		abs, err := filepath.Abs(h)
		if err != nil {
			return fmt.Errorf("install-service: AISAN_HOME=%q: %w", h, err)
		}
		env = append(env, "AISAN_HOME="+abs)
	}
	if *print {
		unit, err := systemd.WatchUnit(self, env)
		if err != nil {
			return fmt.Errorf("install-service: %w", err)
		}
		_, err = os.Stdout.Write(unit)
		return err
	}

	dir, err := systemd.UserUnitDir(os.Getenv)
	if err != nil {
		return fmt.Errorf("install-service: %w", err)
	}
	m, err := connectUserManager(ctx, "install-service")
	if err != nil {
		return err
	}
	defer m.Close()
	rep, err := systemd.InstallWatch(ctx, m, systemd.WatchInstall{AisanPath: self, Env: env, Dir: dir, DropInDirs: systemd.UserUnitDirs(os.Getenv)})
	if err != nil {
		return fmt.Errorf("install-service: %w", err)
	}
	switch {
	case rep.Backup != "":
		fmt.Printf("updated %s (the previous version is kept as %s)\n", rep.Path, rep.Backup)
	case rep.Written:
		fmt.Printf("wrote %s\n", rep.Path)
	}
	if rep.Enabled {
		fmt.Printf("enabled %s: it starts with your user manager\n", systemd.WatchUnitName)
	}
	switch {
	case rep.Started && rep.Written && rep.Backup != "":
		fmt.Printf("restarted %s\n", systemd.WatchUnitName)
	case rep.Started:
		fmt.Printf("started %s\n", systemd.WatchUnitName)
	}
	if !rep.Written && !rep.Enabled && !rep.Started {
		fmt.Printf("%s is installed, enabled and running; nothing to do\n", systemd.WatchUnitName)
	}
	return nil
}

const uninstallServiceUsage = `
Usage: aisan uninstall-service

Undo 'aisan install-service': stop and disable the aisan-watch user unit
and remove its unit file. The drop-in directories install-service made
go too when they are empty (drop-ins you wrote stay, and so does the
prefix one, aisan-.service.d, which may serve other units); a backup
install-service kept (aisan-watch.service.aisan-bak) stays. Running it
again changes nothing. Until you install it again, nothing reaps jails
whose wrapper died or holds headless services to their runtime cap.

Example:
  aisan uninstall-service
`

func runUninstallService(ctx context.Context, args []string) error {
	fs := newFlagSet("uninstall-service", uninstallServiceUsage)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	dir, err := systemd.UserUnitDir(os.Getenv)
	if err != nil {
		return fmt.Errorf("uninstall-service: %w", err)
	}
	path := filepath.Join(dir, systemd.WatchUnitName)
	if _, err := os.Lstat(path); err != nil {
		fmt.Printf("%s is not installed in %s; nothing to do\n", systemd.WatchUnitName, dir)
		return nil
	}
	m, err := connectUserManager(ctx, "uninstall-service")
	if err != nil {
		return err
	}
	defer m.Close()
	if err := systemd.UninstallWatch(ctx, m, systemd.WatchInstall{Dir: dir, DropInDirs: systemd.UserUnitDirs(os.Getenv)}); err != nil {
		return fmt.Errorf("uninstall-service: %w", err)
	}
	fmt.Printf("stopped and disabled %s, and removed %s\n", systemd.WatchUnitName, path)
	return nil
}

// connectUserManager connects to the user manager for command, with the
// hints that say why there is none.
func connectUserManager(ctx context.Context, command string) (*systemd.Manager, error) {
	m, err := systemd.Connect(ctx, os.Getenv)
	if err != nil {
		var nm *systemd.NoManagerError
		if errors.As(err, &nm) {
			return nil, withHint(fmt.Errorf("%s: %w", command, err), nm.Hints()...)
		}
		return nil, fmt.Errorf("%s: %w", command, err)
	}
	return m, nil
}

// installedSelf returns the absolute path of the running aisan binary, and
// refuses one that 'go run' built in a temporary directory, which would be
// gone by the time the unit starts.
func installedSelf() (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("install-service: finding the aisan binary: %w", err)
	}
	self, err = filepath.EvalSymlinks(self)
	if err != nil {
		return "", fmt.Errorf("install-service: finding the aisan binary: %w", err)
	}
	if strings.Contains(self, string(filepath.Separator)+"go-build") {
		return "", withHint(fmt.Errorf("install-service: %s is a temporary build ('go run'); the unit would point at a file that is about to vanish", self),
			"install aisan first (make install, or go install ./cmd/aisan), then run 'aisan install-service' from there")
	}
	return self, nil
}
