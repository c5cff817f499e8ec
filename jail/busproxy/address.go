package busproxy

import (
	"errors"
	"fmt"
	"strings"
)

// Address is one entry of a D-Bus server address list, such as
// unix:path=/run/user/1000/bus,guid=1234.
type Address struct {
	// Transport is the part before the colon: "unix", "tcp", ...
	Transport string
	// Params are the key=value pairs in the order written, values
	// unescaped.
	Params []Param
}

// Param is one key=value pair of an [Address].
type Param struct {
	Key, Value string
}

// Get returns the value of key and whether it is present.
func (a Address) Get(key string) (string, bool) {
	for _, p := range a.Params {
		if p.Key == key {
			return p.Value, true
		}
	}
	return "", false
}

// String writes a back in D-Bus address syntax, escaping values.
func (a Address) String() string {
	var b strings.Builder
	b.WriteString(a.Transport)
	b.WriteByte(':')
	for i, p := range a.Params {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(p.Key)
		b.WriteByte('=')
		b.WriteString(EscapeValue(p.Value))
	}
	return b.String()
}

// ParseAddress parses a D-Bus address list as found in
// DBUS_SESSION_BUS_ADDRESS: entries separated by ';', each
// "transport:key=value,key=value", values %xx-escaped as the D-Bus
// specification describes. Like libdbus it accepts unescaped bytes other
// than the separators, and skips empty entries. It rejects what a client
// could read two ways (a key given twice) and an address a command line
// could take for an option (a leading '-').
func ParseAddress(s string) ([]Address, error) {
	if strings.HasPrefix(s, "-") {
		return nil, errors.New("address starts with '-'")
	}
	var out []Address
	for entry := range strings.SplitSeq(s, ";") {
		if entry == "" {
			continue
		}
		a, err := parseEntry(entry)
		if err != nil {
			return nil, fmt.Errorf("address entry %q: %w", entry, err)
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		return nil, errors.New("address is empty")
	}
	return out, nil
}

func parseEntry(entry string) (Address, error) {
	transport, rest, ok := strings.Cut(entry, ":")
	if !ok {
		return Address{}, errors.New("no ':' after the transport name")
	}
	if transport == "" {
		return Address{}, errors.New("empty transport name")
	}
	if transport[0] == '-' {
		return Address{}, errors.New("transport name starts with '-'")
	}
	a := Address{Transport: transport}
	if rest == "" {
		return a, nil
	}
	for kv := range strings.SplitSeq(rest, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return Address{}, fmt.Errorf("%q has no '='", kv)
		}
		if k == "" {
			return Address{}, fmt.Errorf("%q has an empty key", kv)
		}
		if _, dup := a.Get(k); dup {
			// libdbus takes the first value and GLib may take the last:
			// the jail's mask and the proxy could then disagree on the bus.
			return Address{}, fmt.Errorf("key %q appears twice", k)
		}
		u, err := unescapeValue(v)
		if err != nil {
			return Address{}, fmt.Errorf("value of %q: %w", k, err)
		}
		a.Params = append(a.Params, Param{Key: k, Value: u})
	}
	return a, nil
}

func unescapeValue(v string) (string, error) {
	if !strings.Contains(v, "%") {
		return v, nil
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i+2 >= len(v) {
			return "", fmt.Errorf("'%%' at byte %d is not followed by two hex digits", i)
		}
		hi, ok1 := unhex(v[i+1])
		lo, ok2 := unhex(v[i+2])
		if !ok1 || !ok2 {
			return "", fmt.Errorf("'%%' at byte %d is not followed by two hex digits", i)
		}
		b.WriteByte(hi<<4 | lo)
		i += 2
	}
	return b.String(), nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// EscapeValue escapes s for use as a value in a D-Bus address: the bytes
// the specification calls optionally escaped ([-0-9A-Za-z_/.\*]) stay as
// they are, every other byte becomes %xx.
func EscapeValue(s string) string {
	const hex = "0123456789abcdef"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if optionallyEscaped(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&0xf])
	}
	return b.String()
}

func optionallyEscaped(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("-_/.\\*", c) >= 0
}
