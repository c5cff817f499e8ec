package busproxy

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var addressTests = []struct {
	in      string
	want    []Address
	wantErr string // substring; "" means success
}{
	{
		in:   "unix:path=/run/user/1000/bus",
		want: []Address{{Transport: "unix", Params: []Param{{"path", "/run/user/1000/bus"}}}},
	},
	{
		in: "unix:path=/tmp/dbus-x,guid=0123abcd",
		want: []Address{{Transport: "unix", Params: []Param{
			{"path", "/tmp/dbus-x"}, {"guid", "0123abcd"},
		}}},
	},
	{
		in: "unix:abstract=/tmp/dbus-AbC,guid=1;unix:path=/run/user/1000/bus",
		want: []Address{
			{Transport: "unix", Params: []Param{{"abstract", "/tmp/dbus-AbC"}, {"guid", "1"}}},
			{Transport: "unix", Params: []Param{{"path", "/run/user/1000/bus"}}},
		},
	},
	{
		// %xx escapes, upper and lower case hex.
		in:   "unix:path=/home/a%20b/%2c%3B%3d",
		want: []Address{{Transport: "unix", Params: []Param{{"path", "/home/a b/,;="}}}},
	},
	{
		// libdbus accepts bytes the spec would escape, and '=' in a value.
		in:   "unix:path=/x y=z",
		want: []Address{{Transport: "unix", Params: []Param{{"path", "/x y=z"}}}},
	},
	{
		// Empty entries are skipped.
		in:   ";tcp:host=localhost,port=1234;",
		want: []Address{{Transport: "tcp", Params: []Param{{"host", "localhost"}, {"port", "1234"}}}},
	},
	{
		in:   "autolaunch:",
		want: []Address{{Transport: "autolaunch"}},
	},
	{in: "", wantErr: "address is empty"},
	{in: ";;", wantErr: "address is empty"},
	{in: "/run/user/1000/bus", wantErr: "no ':' after the transport name"},
	{in: ":path=/x", wantErr: "empty transport name"},
	{in: "unix:path", wantErr: `"path" has no '='`},
	{in: "unix:=/x", wantErr: "empty key"},
	{in: "unix:path=/x,", wantErr: `"" has no '='`},
	{in: "unix:path=/a,path=/b", wantErr: `key "path" appears twice`},
	{in: "unix:path=/a%2", wantErr: "not followed by two hex digits"},
	{in: "unix:path=/a%zz", wantErr: "not followed by two hex digits"},
	{in: "--filter", wantErr: "starts with '-'"},
}

func TestParseAddress(t *testing.T) {
	for _, tt := range addressTests {
		got, err := ParseAddress(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseAddress(%q) error = %v, want one containing %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseAddress(%q): %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseAddress(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestEscapeValue(t *testing.T) {
	for in, want := range map[string]string{
		"/run/user/1000/bus": "/run/user/1000/bus",
		"/a b,c;d=e%f":       "/a%20b%2cc%3bd%3de%25f",
		"-_/.\\*azAZ09":      "-_/.\\*azAZ09",
		"é":                  "%c3%a9",
	} {
		if got := EscapeValue(in); got != want {
			t.Errorf("EscapeValue(%q) = %q, want %q", in, got, want)
		}
		back, err := unescapeValue(EscapeValue(in))
		if err != nil || back != in {
			t.Errorf("unescape(escape(%q)) = %q, %v", in, back, err)
		}
	}
}

// FuzzParseAddress checks that any input parses or fails without a panic,
// and that what parses survives a round trip through String.
func FuzzParseAddress(f *testing.F) {
	for _, tt := range addressTests {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		addrs, err := ParseAddress(s)
		if err != nil {
			return
		}
		parts := make([]string, len(addrs))
		for i, a := range addrs {
			parts[i] = a.String()
		}
		again, err := ParseAddress(strings.Join(parts, ";"))
		if err != nil {
			t.Fatalf("re-parsing %q (from %q): %v", parts, s, err)
		}
		if diff := cmp.Diff(addrs, again); diff != "" {
			t.Fatalf("round trip of %q changed it (-first +second):\n%s", s, diff)
		}
	})
}
