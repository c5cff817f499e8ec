package busproxy

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// DefaultTalk is the allow-list used when AISAN_BUS_TALK is unset: the
// keyring (agents store their login there), desktop notifications, and the
// portals (file chooser, open URI).
const DefaultTalk = "org.freedesktop.secrets org.freedesktop.Notifications org.freedesktop.portal.*"

// maxNameLen is the D-Bus specification's limit on a bus name.
const maxNameLen = 255

// NameError reports an AISAN_BUS_TALK entry that is neither a well-known
// bus name nor a NAME.* pattern.
type NameError struct {
	// Name is the entry as written.
	Name string
	// Reason says which rule it breaks.
	Reason string
}

func (e *NameError) Error() string {
	return fmt.Sprintf("%q is not a D-Bus bus name or NAME.* pattern: %s", e.Name, e.Reason)
}

// ParseTalk splits s on whitespace into the names the jail may talk to.
// Each is a well-known bus name (org.freedesktop.Notifications) or a
// NAME.* pattern that matches NAME and every name below it, the two forms
// xdg-dbus-proxy's --talk accepts. Unique names (":1.42") are refused:
// they change with every connection. Duplicates are dropped, order is
// kept. An empty s gives an empty list: the jail may then talk only to
// the bus itself.
func ParseTalk(s string) ([]string, error) {
	var out []string
	for _, f := range strings.Fields(s) {
		if err := checkTalk(f); err != nil {
			return nil, err
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out, nil
}

func checkTalk(entry string) error {
	name := strings.TrimSuffix(entry, ".*")
	if reason := wellKnownNameProblem(name); reason != "" {
		return &NameError{Name: entry, Reason: reason}
	}
	if covers(entry, systemdName) {
		return &ForbiddenNameError{Name: entry}
	}
	return nil
}

// systemdName is the user manager's bus name, the one name the filter
// exists to keep out of reach.
const systemdName = "org.freedesktop.systemd1"

// covers reports whether the allow-list entry lets the jail talk to name.
func covers(entry, name string) bool {
	if p, ok := strings.CutSuffix(entry, ".*"); ok {
		return name == p || strings.HasPrefix(name, p+".")
	}
	return entry == name
}

// ForbiddenNameError reports an AISAN_BUS_TALK entry that would let the
// jail reach systemd, undoing one of the four denials.
type ForbiddenNameError struct {
	Name string
}

func (e *ForbiddenNameError) Error() string {
	return fmt.Sprintf("%q would let the jail reach %s, the systemd user manager, and with it every other agent's scope; name the services you need one by one", e.Name, systemdName)
}

// wellKnownNameProblem returns why name is not a valid well-known bus name
// under the D-Bus specification, or "" when it is.
func wellKnownNameProblem(name string) string {
	switch {
	case name == "":
		return "it is empty"
	case len(name) > maxNameLen:
		return fmt.Sprintf("it is longer than %d bytes", maxNameLen)
	case name[0] == ':':
		return "it is a unique connection name, which changes with every connection"
	}
	elems := strings.Split(name, ".")
	if len(elems) < 2 {
		return "it needs at least two elements separated by '.'"
	}
	for _, e := range elems {
		if e == "" {
			return "it has an empty element"
		}
		if '0' <= e[0] && e[0] <= '9' {
			return fmt.Sprintf("element %q starts with a digit", e)
		}
		for i := 0; i < len(e); i++ {
			if !nameByte(e[i]) {
				r, _ := utf8.DecodeRuneInString(e[i:])
				return fmt.Sprintf("element %q has %q; only A-Z a-z 0-9 _ - are allowed", e, r)
			}
		}
	}
	return ""
}

func nameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}
