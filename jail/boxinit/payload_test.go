package boxinit

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// fullPayload sets every field of Payload, by reflection, to a value
// other than its zero, so that a field added to Payload and forgotten by
// the wire form fails the round trip.
func fullPayload(t *testing.T) Payload {
	t.Helper()
	var p Payload
	v := reflect.ValueOf(&p).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Interface().(type) {
		case bool:
			f.SetBool(true)
		case int:
			f.SetInt(int64(40 + i))
		case string:
			f.SetString("/run/user/1000/aisan/x y\n" + v.Type().Field(i).Name)
		case [][]byte:
			f.Set(reflect.ValueOf([][]byte{[]byte("claude"), []byte("--x=\xff é"), {}}))
		case []int:
			f.Set(reflect.ValueOf([]int{3, 9}))
		case []PayloadRelay:
			f.Set(reflect.ValueOf([]PayloadRelay{{Port: 8712, Socket: "/run/a.sock", Pass: true}, {Port: 9, Socket: "/b"}}))
		default:
			t.Fatalf("Payload.%s has a type the wire form test does not fill: add it to payload.go and here", v.Type().Field(i).Name)
		}
	}
	return p
}

func TestPayloadRoundTrip(t *testing.T) {
	for _, p := range []Payload{{}, NewPayload([]string{"true"}, false, 0), fullPayload(t)} {
		data, err := p.Encode()
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodePayload(data)
		if err != nil {
			t.Fatalf("DecodePayload(%q): %v", data, err)
		}
		if !reflect.DeepEqual(normal(got), normal(p)) {
			t.Errorf("round trip of %+v gave %+v", p, got)
		}
	}
}

// normal makes empty and nil slices alike.
func normal(p Payload) Payload {
	if len(p.Argv) == 0 {
		p.Argv = nil
	}
	for i, a := range p.Argv {
		if len(a) == 0 {
			p.Argv[i] = []byte{}
		}
	}
	if len(p.Inherit) == 0 {
		p.Inherit = nil
	}
	if len(p.Relays) == 0 {
		p.Relays = nil
	}
	return p
}

func TestPayloadRefusesNUL(t *testing.T) {
	for _, p := range []Payload{
		{Argv: [][]byte{[]byte("a\x00b")}},
		{Argv: [][]byte{[]byte("x")}, EnvFile: "/a\x00"},
		{Argv: [][]byte{[]byte("x")}, Relays: []PayloadRelay{{Port: 1, Socket: "\x00"}}},
	} {
		if _, err := p.Encode(); err == nil || !strings.Contains(err.Error(), "NUL") {
			t.Errorf("Encode(%+v) = %v, want a NUL refused", p, err)
		}
	}
}

func TestDecodePayloadErrors(t *testing.T) {
	good, _ := NewPayload([]string{"claude", "-p"}, true, 0).Encode()
	for _, tt := range []struct{ data, want string }{
		{"", "different builds"},
		{`{"argv":["dHJ1ZQ=="]}`, "different builds"},
		{string(good[:len(good)-1]), "ends inside a field"},
		{string(good) + "x\x00", "past its last field"},
		{strings.Replace(string(good), "\x001\x00", "\x00yes\x00", 1), "where 0 or 1 belongs"},
		{payloadFormat + "\x000\x000\x00\x000\x000\x000\x00999\x00", "room for fewer"},
		// A count past int's range: Atoi's clamped value is no count.
		{payloadFormat + "\x000\x000\x00\x000\x000\x000\x0099999999999999999999999\x00", "where a number belongs"},
		{payloadFormat + "\x000\x00x\x00", "where a number belongs"},
	} {
		if _, err := DecodePayload([]byte(tt.data)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("DecodePayload(%q) = %v, want an error with %q", tt.data, err, tt.want)
		}
	}
}

// FuzzDecodePayload: no input panics, and whatever decodes encodes back
// to the same bytes.
func FuzzDecodePayload(f *testing.F) {
	for _, p := range []Payload{{}, NewPayload([]string{"a", "b"}, true, 1), {Argv: [][]byte{[]byte("x")}, Relays: []PayloadRelay{{Port: 5, Socket: "/s", Pass: true}}, Inherit: []int{3}}} {
		data, _ := p.Encode()
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := DecodePayload(data)
		if err != nil {
			return
		}
		again, err := p.Encode()
		if err != nil {
			t.Fatalf("decoded %q as %+v, which does not encode: %v", data, p, err)
		}
		if q, err := DecodePayload(again); err != nil || !reflect.DeepEqual(normal(q), normal(p)) {
			t.Fatalf("decoded %q as %+v; its encoding decodes as %+v, %v", data, p, q, err)
		}
	})
}

// TestForeignPayloadQuote: a payload of another format is quoted in the
// refusal by its first 20 characters, as fmt's %.20q quotes them.
func TestForeignPayloadQuote(t *testing.T) {
	for _, data := range []string{"", "short", `{"argv":["dHJ1ZQ=="],"foreground":true}`, "ünïcødé and more than twenty", "\xff\xfe binary \x00 bytes and a tail"} {
		_, err := DecodePayload([]byte(data))
		if want := fmt.Sprintf("(it starts %.20q)", []byte(data)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("DecodePayload(%q) = %v, want %s in it", data, err, want)
		}
	}
}
