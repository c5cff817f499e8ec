package systemd

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Unit name rules (systemd.unit(5), src/basic/unit-name.c):
//
//   - A name is at most 255 bytes, suffix included.
//   - Its characters are ASCII letters, digits, ":", "-", "_", "." and "\".
//   - Everything else is written as \xNN (lowercase hex), the way
//     systemd-escape writes it; "\" itself is escaped so that an escaped name
//     never reads as another one.
//   - "@" is escaped too: in a unit name it starts a template instance.
//
// "-" is kept as it is, unlike systemd-escape (which turns "/" into "-" and
// so must escape "-"): a slot name such as "myrepo-3f9c2a1b" has no slashes,
// "-" only means something in slice names, and a readable unit name is worth
// more in "systemctl --user status" than reversibility, which nothing needs:
// the registry records the unit name next to the slot.

// maxUnitName is systemd's UNIT_NAME_MAX minus the terminating NUL.
const maxUnitName = 255

// Unit name prefixes and suffixes for the two kinds of units aisan starts.
const (
	scopePrefix   = "aisan-"
	scopeSuffix   = ".scope"
	servicePrefix = "aisan-svc-"
	serviceSuffix = ".service"
)

// UnitName returns the name of the transient scope that holds slot's jail:
// "aisan-<slot>.scope", with slot escaped by the unit name rules.
func UnitName(slot string) string {
	return unitName(scopePrefix, slot, scopeSuffix)
}

// ServiceName returns the name of the transient service that runs the
// headless service name: "aisan-svc-<name>.service", with name escaped by
// the unit name rules.
func ServiceName(name string) string {
	return unitName(servicePrefix, name, serviceSuffix)
}

// unitName builds prefix + escape(s) + suffix. When the result would pass
// systemd's length limit, the escaped part is cut at an escape boundary and
// ends in "-" and 16 hex digits of the SHA-256 of s, so distinct long
// names still give distinct units and the same name always gives the same
// unit.
func unitName(prefix, s, suffix string) string {
	budget := maxUnitName - len(prefix) - len(suffix)
	esc := escapeUnit(s)
	if len(esc) <= budget {
		return prefix + esc + suffix
	}
	sum := sha256.Sum256([]byte(s))
	tag := "-" + hex.EncodeToString(sum[:8])
	keep := budget - len(tag)
	var b strings.Builder
	b.WriteString(prefix)
	for i := 0; i < len(s); i++ {
		piece := escapeByte(s[i])
		if b.Len()-len(prefix)+len(piece) > keep {
			break
		}
		b.WriteString(piece)
	}
	b.WriteString(tag)
	b.WriteString(suffix)
	return b.String()
}

// escapeUnit escapes s byte by byte for use inside a unit name.
func escapeUnit(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteString(escapeByte(s[i]))
	}
	return b.String()
}

func escapeByte(c byte) string {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
		c == ':', c == '-', c == '_', c == '.':
		return string(c)
	}
	const hexdigits = "0123456789abcdef"
	return string([]byte{'\\', 'x', hexdigits[c>>4], hexdigits[c&0xf]})
}
