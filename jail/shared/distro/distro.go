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

// packageNames maps aisan's generic dependency names to each family's.
var packageNames = map[string]map[Family]string{
	"bwrap":          {Debian: "bubblewrap", Fedora: "bubblewrap", Arch: "bubblewrap", SUSE: "bubblewrap"},
	"xdg-dbus-proxy": {Debian: "xdg-dbus-proxy", Fedora: "xdg-dbus-proxy", Arch: "xdg-dbus-proxy", SUSE: "xdg-dbus-proxy"},
	"git":            {Debian: "git", Fedora: "git", Arch: "git", SUSE: "git"},
	"systemd":        {Debian: "systemd dbus-user-session", Fedora: "systemd", Arch: "systemd", SUSE: "systemd"},
}

// Package returns the package that provides tool on family f.
func Package(f Family, tool string) string {
	if m, ok := packageNames[tool]; ok {
		if p, ok := m[f]; ok {
			return p
		}
		if p, ok := m[Debian]; ok {
			return p
		}
	}
	return tool
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
