package boxinit

// The payload's wire form, written by the wrapper to descriptor 5 and
// read by the init. Every field ends with a NUL byte, in this order:
//
//	aisan-payload/1                  the format, checked first
//	foreground ctty env_file new_session_keyring keep inherit_at
//	N, then N inherited descriptor numbers
//	N, then N relays, each: port socket pass
//	N, then the agent's N arguments, byte for byte
//
// Numbers are decimal and flags 0 or 1. No field can hold a NUL: exec
// takes none in an argument, and the kernel none in a path. It is not
// JSON because decoding JSON into a struct is the costliest thing the
// init did on start (encoding/json builds its reflection caches on first
// use, several times the rest of the init's start), and the init starts
// on every launch.

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
)

const payloadFormat = "aisan-payload/1"

// Encode returns the payload's wire form. It refuses a NUL in an argument
// or a path, which no process could be given.
func (p Payload) Encode() ([]byte, error) {
	b := append([]byte(payloadFormat), 0)
	// what names the field in the refusal.
	str := func(what, s string) error {
		if strings.IndexByte(s, 0) >= 0 {
			return errors.New(what + " " + strconv.Quote(s) + " holds a NUL byte, which no program can be given")
		}
		b = append(append(b, s...), 0)
		return nil
	}
	num := func(n int) { b = append(strconv.AppendInt(b, int64(n), 10), 0) }
	flag := func(v bool) {
		if v {
			b = append(b, '1', 0)
		} else {
			b = append(b, '0', 0)
		}
	}
	flag(p.Foreground)
	num(p.Ctty)
	if err := str("the environment file", p.EnvFile); err != nil {
		return nil, err
	}
	flag(p.NewSessionKeyring)
	flag(p.Keep)
	num(p.InheritAt)
	num(len(p.Inherit))
	for _, fd := range p.Inherit {
		num(fd)
	}
	num(len(p.Relays))
	for _, r := range p.Relays {
		num(r.Port)
		if err := str("the relay socket", r.Socket); err != nil {
			return nil, err
		}
		flag(r.Pass)
	}
	num(len(p.Argv))
	for _, a := range p.Argv {
		if bytes.IndexByte(a, 0) >= 0 {
			return nil, errors.New("the argument " + strconv.Quote(string(a)) + " holds a NUL byte, which no program can be given")
		}
		b = append(append(b, a...), 0)
	}
	return b, nil
}

// DecodePayload reads a payload's wire form.
func DecodePayload(data []byte) (Payload, error) {
	r := payloadReader{rest: data}
	if f := r.field(); r.err != nil || string(f) != payloadFormat {
		return Payload{}, errors.New("the payload is not " + payloadFormat + " (it starts " + strconv.Quote(head(data, 20)) + "): aisan and its aisan-init come from different builds; install both from one (make install)")
	}
	var p Payload
	p.Foreground = r.flag()
	p.Ctty = r.num()
	p.EnvFile = string(r.field())
	p.NewSessionKeyring = r.flag()
	p.Keep = r.flag()
	p.InheritAt = r.num()
	for n := r.count(); n > 0; n-- {
		p.Inherit = append(p.Inherit, r.num())
	}
	for n := r.count(); n > 0; n-- {
		p.Relays = append(p.Relays, PayloadRelay{Port: r.num(), Socket: string(r.field()), Pass: r.flag()})
	}
	for n := r.count(); n > 0; n-- {
		p.Argv = append(p.Argv, r.field())
	}
	switch {
	case r.err != nil:
		return Payload{}, r.err
	case len(r.rest) > 0:
		return Payload{}, errors.New("the payload goes on past its last field")
	}
	return p, nil
}

// head is data's first n characters, as fmt's %.20q would quote them.
func head(data []byte, n int) string {
	s := string(data)
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// payloadReader takes fields off the front of a payload; the first
// problem sticks, and every later read returns zero.
type payloadReader struct {
	rest []byte
	err  error
}

func (r *payloadReader) field() []byte {
	if r.err != nil {
		return nil
	}
	i := bytes.IndexByte(r.rest, 0)
	if i < 0 {
		r.err = errors.New("the payload ends inside a field")
		return nil
	}
	f := r.rest[:i:i]
	r.rest = r.rest[i+1:]
	return f
}

func (r *payloadReader) num() int {
	f := r.field()
	if r.err != nil {
		return 0
	}
	n, err := strconv.Atoi(string(f))
	if err != nil {
		// Atoi's out-of-range value would be taken as a count.
		r.err = errors.New("the payload has " + strconv.Quote(string(f)) + " where a number belongs")
		return 0
	}
	return n
}

// count is a number of items to follow, each at least one byte long.
func (r *payloadReader) count() int {
	n := r.num()
	if r.err == nil && (n < 0 || n > len(r.rest)) {
		r.err = errors.New("the payload announces " + strconv.Itoa(n) + " items and has room for fewer")
		return 0
	}
	return n
}

func (r *payloadReader) flag() bool {
	f := r.field()
	if r.err == nil && string(f) != "0" && string(f) != "1" {
		r.err = errors.New("the payload has " + strconv.Quote(string(f)) + " where 0 or 1 belongs")
	}
	return string(f) == "1"
}
