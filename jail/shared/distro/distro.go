// Package distro names the host's Linux distribution family and the exact
// command that installs a package there, so that every "missing
// dependency" message can say what to type.
package distro

import (
	"bufio"
	"os"
	"strings"
)

// Family is a group of distributions sharing a package manager.
type Family string

// The families aisan knows how to advise.
const (
	Debian  Family = "debian"
	Fedora  Family = "fedora"
	Arch    Family = "arch"
	SUSE    Family = "suse"
	Unknown Family = ""
)

// OSReleasePath is the file Detect reads. AISAN_OS_RELEASE overrides it,
// so tests can play every family.
func OSReleasePath() string {
	if p := os.Getenv("AISAN_OS_RELEASE"); p != "" {
		return p
	}
	return "/etc/os-release"
}

// Detect reads os-release and returns the family, Unknown when it cannot
// tell.
func Detect() Family {
	f, err := os.Open(OSReleasePath())
	if err != nil {
		return Unknown
	}
	defer f.Close()
	var id, like string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok {
			continue
		}
		v = strings.Trim(v, `"'`)
		switch k {
		case "ID":
			id = v
		case "ID_LIKE":
			like = v
		}
	}
	return classify(id, like)
}

func classify(id, like string) Family {
	for _, w := range append([]string{id}, strings.Fields(like)...) {
		switch w {
		case "debian", "ubuntu", "linuxmint", "pop", "raspbian":
			return Debian
		case "fedora", "rhel", "centos", "rocky", "almalinux":
			return Fedora
		case "arch", "manjaro", "endeavouros":
			return Arch
		case "opensuse", "suse", "sles", "opensuse-tumbleweed", "opensuse-leap":
			return SUSE
		}
	}
	return Unknown
}

// Package returns the package that provides tool on family f: aisan's
// generic dependency names are each family's but for systemd, whose user
// bus Debian ships apart. (A switch, not a table: a package-level map is
// built at every start of every binary that links this package, before
// main, for the few messages that read it.) An unknown family gets
// Debian's name, a tool aisan does not know its own name.
func Package(f Family, tool string) string {
	switch tool {
	case "bwrap":
		return "bubblewrap"
	case "systemd":
		switch f {
		case Fedora, Arch, SUSE:
			return "systemd"
		}
		return "systemd dbus-user-session"
	}
	return tool // git and xdg-dbus-proxy are named alike everywhere
}

// InstallCommand is the command that installs tool on family f.
func InstallCommand(f Family, tool string) string {
	p := Package(f, tool)
	switch f {
	case Debian:
		return "sudo apt-get install " + p
	case Fedora:
		return "sudo dnf install " + p
	case Arch:
		return "sudo pacman -S " + p
	case SUSE:
		return "sudo zypper install " + p
	}
	return "install the package that provides " + tool + " (usually named " + p + ") with your distribution's package manager"
}
