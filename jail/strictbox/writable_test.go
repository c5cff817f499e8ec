package strictbox

import (
	"slices"
	"testing"

	"github.com/aisan-dev/aisan/jail"
)

// What a box may write, as recorded for the trust check: writable binds
// and seal holes; not read-only binds, overlays or a tmpfs.
func TestBoxWritable(t *testing.T) {
	s := jail.Spec{Mounts: []jail.Mount{
		{Kind: jail.ROBind, Src: "/usr", Dst: "/usr"},
		{Kind: jail.Bind, Src: "/w/r", Dst: "/w/r"},
		{Kind: jail.Seal, Dst: "/w/r/.git", Holes: []string{"/w/r/.git/objects", "/w/r/.git/refs"}},
		{Kind: jail.Overlay, Src: "/h/.cache/pip", Dst: "/h/.cache/pip"},
		{Kind: jail.Tmpfs, Dst: "/tmp"},
		{Kind: jail.Bind, Src: "/h/.cache/go-build", Dst: "/h/.cache/go-build"},
	}}
	want := []string{"/w/r", "/w/r/.git/objects", "/w/r/.git/refs", "/h/.cache/go-build"}
	if got := boxWritable(s); !slices.Equal(got, want) {
		t.Errorf("boxWritable = %q, want %q", got, want)
	}
}
