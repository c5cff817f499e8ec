package busproxy

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var talkTests = []struct {
	in      string
	want    []string
	wantBad string // the entry the error must name; "" means success
}{
	{in: DefaultTalk, want: []string{"org.freedesktop.secrets", "org.freedesktop.Notifications", "org.freedesktop.portal.*"}},
	{in: "", want: nil},
	{in: " \t\n ", want: nil},
	{in: "a.b\ta.b \n c_d.e-f", want: []string{"a.b", "c_d.e-f"}},
	{in: "org.example.App1 org.example.*", want: []string{"org.example.App1", "org.example.*"}},
	{in: "_a._b", want: []string{"_a._b"}},
	{in: "-.A", want: []string{"-.A"}}, // valid, if odd; --talk= keeps it from reading as an option
	{in: "org", wantBad: "org"},
	{in: "org.*", wantBad: "org.*"},
	{in: "*", wantBad: "*"},
	{in: "org.freedesktop.Notifications org..x", wantBad: "org..x"},
	{in: "org.3d.x", wantBad: "org.3d.x"},
	{in: ":1.42", wantBad: ":1.42"},
	{in: ".org.x", wantBad: ".org.x"},
	{in: "org.x.", wantBad: "org.x."},
	{in: "org.x.**", wantBad: "org.x.**"},
	{in: "org.*.x", wantBad: "org.*.x"},
	{in: "--talk=org.x", wantBad: "--talk=org.x"},
	{in: "org.exämple.x", wantBad: "org.exämple.x"},
	{in: "a." + strings.Repeat("b", 254), wantBad: "a." + strings.Repeat("b", 254)},
}

func TestParseTalk(t *testing.T) {
	for _, tt := range talkTests {
		got, err := ParseTalk(tt.in)
		if tt.wantBad != "" {
			var ne *NameError
			if !errors.As(err, &ne) || ne.Name != tt.wantBad {
				t.Errorf("ParseTalk(%q) error = %v, want a NameError naming %q", tt.in, err, tt.wantBad)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseTalk(%q): %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseTalk(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestNameErrorText(t *testing.T) {
	_, err := ParseTalk("org.freedesktop.Notifications org..x")
	want := `"org..x" is not a D-Bus bus name or NAME.* pattern: it has an empty element`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %s", err, want)
	}
}

// FuzzParseTalk checks that no input panics, and that every accepted name
// is safe in a --talk= argument: no separators, no unique name.
func FuzzParseTalk(f *testing.F) {
	for _, tt := range talkTests {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		names, err := ParseTalk(s)
		if err != nil {
			return
		}
		for _, n := range names {
			if n == "" || n[0] == ':' || strings.ContainsAny(n, " \t\n\x00=") || len(n) > maxNameLen+2 {
				t.Fatalf("ParseTalk(%q) accepted %q", s, n)
			}
		}
	})
}

// TestParseTalkRefusesSystemd: no allow-list entry may reach the user
// manager, whatever form it takes.
func TestParseTalkRefusesSystemd(t *testing.T) {
	for _, entry := range []string{"org.freedesktop.systemd1", "org.freedesktop.systemd1.*", "org.freedesktop.*", "org.freedesktop.Notifications org.freedesktop.*"} {
		_, err := ParseTalk(entry)
		var fe *ForbiddenNameError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), "systemd user manager") {
			t.Errorf("ParseTalk(%q) = %v, want a ForbiddenNameError", entry, err)
		}
	}
	for _, entry := range []string{"org.freedesktop.systemd1x", "org.freedesktop.portal.*", "org.freedesktop.secrets"} {
		if _, err := ParseTalk(entry); err != nil {
			t.Errorf("ParseTalk(%q) = %v, want it accepted", entry, err)
		}
	}
}
