package agent

import (
	"slices"
	"testing"
)

func TestDropRepeatedConfig(t *testing.T) {
	for _, c := range []struct{ in, want []string }{
		{nil, []string{}},
		{[]string{"-c", "a=1", "-c", "b=2", "-c", "a=1"}, []string{"-c", "a=1", "-c", "b=2"}},
		// Another value for the key is the caller's to decide.
		{[]string{"-c", "a=1", "-c", "a=2"}, []string{"-c", "a=1", "-c", "a=2"}},
		{[]string{"--flag", "-c", "x", "--flag", "-c", "x", "-c"}, []string{"--flag", "-c", "x", "--flag", "-c"}},
	} {
		if got := DropRepeatedConfig(c.in); !slices.Equal(got, c.want) {
			t.Errorf("DropRepeatedConfig(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
