package fileerr

import (
	"errors"
	"slices"
	"testing"
)

type hinted struct{ error }

func (hinted) Hints() []string { return []string{"do this"} }

func TestError(t *testing.T) {
	base := errors.New("bad")
	for _, tc := range []struct {
		e    *Error
		want string
	}{
		{&Error{File: "f.toml", Err: base}, "f.toml: bad"},
		{&Error{File: "f.toml", Line: 3, Err: base}, "f.toml:3: bad"},
		{&Error{File: "f.toml", Line: 3, Key: "rw", Err: base}, "f.toml:3: rw: bad"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.e, got, tc.want)
		}
		if !errors.Is(tc.e, base) {
			t.Errorf("%+v does not wrap its cause", tc.e)
		}
	}
	e := &Error{File: "f", Err: hinted{base}}
	if h := e.Hints(); !slices.Equal(h, []string{"do this"}) {
		t.Errorf("hints %q", h)
	}
	if h := (&Error{File: "f", Err: base}).Hints(); h != nil {
		t.Errorf("hints of a plain cause: %q", h)
	}
}
