package jail

import (
	"slices"
	"testing"
)

// A bind spec's writable entry inside aisan's state (the trust store, the
// records) does not make it writable: the state is bound read-only over
// it, and the box's own state dir, bound after, stays writable.
func TestStrictStateNeverWritable(t *testing.T) {
	for _, tc := range []struct {
		name string
		bind Mount
	}{
		{"rw inside the state", Mount{Kind: Bind, Src: "/h/.aisan/trust", Dst: "/h/.aisan/trust"}},
		{"rw over the state", Mount{Kind: Bind, Src: "/h", Dst: "/h"}},
		{"overlay inside the state", Mount{Kind: Overlay, Src: "/h/.aisan/slots", Dst: "/h/.aisan/slots"}},
	} {
		o := strictBase()
		o.Binds = []Mount{tc.bind}
		s := Strict(o)
		bind := slices.IndexFunc(s.Mounts, func(m Mount) bool { return m.Dst == tc.bind.Dst && m.Kind == tc.bind.Kind })
		ro := slices.IndexFunc(s.Mounts, func(m Mount) bool { return m.Dst == "/h/.aisan" && m.Kind == ROBind })
		own := slices.IndexFunc(s.Mounts, func(m Mount) bool { return m.Dst == o.StateDir && m.Kind == Bind })
		if bind < 0 || ro < bind || own < ro {
			t.Errorf("%s: the bind at %d, the state read-only at %d, the box's own state at %d; want them in that order", tc.name, bind, ro, own)
		}
	}
	o := strictBase()
	o.Binds = []Mount{{Kind: Bind, Src: "/w/other", Dst: "/w/other"}}
	if slices.ContainsFunc(Strict(o).Mounts, func(m Mount) bool { return m.Dst == "/h/.aisan" }) {
		t.Error("the state is bound although nothing writable reaches it")
	}
}

// What a box may write, as recorded for the trust check: writable binds
// and seal holes; not read-only binds, overlays or a tmpfs.
func TestBoxWritable(t *testing.T) {
	s := Spec{Mounts: []Mount{
		{Kind: ROBind, Src: "/usr", Dst: "/usr"},
		{Kind: Bind, Src: "/w/r", Dst: "/w/r"},
		{Kind: Seal, Dst: "/w/r/.git", Holes: []string{"/w/r/.git/objects", "/w/r/.git/refs"}},
		{Kind: Overlay, Src: "/h/.cache/pip", Dst: "/h/.cache/pip"},
		{Kind: Tmpfs, Dst: "/tmp"},
		{Kind: Bind, Src: "/h/.cache/go-build", Dst: "/h/.cache/go-build"},
	}}
	want := []string{"/w/r", "/w/r/.git/objects", "/w/r/.git/refs", "/h/.cache/go-build"}
	if got := boxWritable(s); !slices.Equal(got, want) {
		t.Errorf("boxWritable = %q, want %q", got, want)
	}
}
