package strictbox

import (
	"testing"

	"github.com/aisan-dev/aisan/jail/strictbox/protect"
	"github.com/google/go-cmp/cmp"
)

// TestHeldTreeNotes: a protected path inside node_modules or a venv
// makes the tree one the box cannot remove, and the launch says what
// fails for it, once a tree; one elsewhere, or the tree itself, does not.
func TestHeldTreeNotes(t *testing.T) {
	plan := protect.Plan{Items: []protect.Item{
		{Path: "/w/r/.envrc", How: protect.Copy, Why: "direnv"},
		{Path: "/w/r/node_modules", How: protect.Copy, Why: "a tree"},
		{Path: "/w/r/web/node_modules", Dir: true, How: protect.Pin, Why: "a directory above a protected path"},
		{Path: "/w/r/web/node_modules/pkg", Dir: true, How: protect.Pin, Why: "a directory above a protected path"},
		{Path: "/w/r/web/node_modules/.bin", Dir: true, How: protect.Copy, Why: "direnv: PATH_add"},
		{Path: "/w/r/web/node_modules/.bin/x", How: protect.Copy, Why: "again"},
		{Path: "/w/r/.venv/bin", Dir: true, How: protect.ReadOnly, Why: "direnv: layout python"},
		{Path: "/w/r/venv/run.sock", How: protect.Mask, Why: "a socket"},
		{Path: "/w/other/node_modules/.bin", How: protect.Copy},
	}}
	want := []string{
		"web/node_modules/.bin is a copy held for review in the box (direnv: PATH_add), so the box cannot remove web/node_modules: npm ci and rm -rf web/node_modules fail there with EBUSY (npm install works); run npm ci in your shell",
		".venv/bin is read-only in the box (direnv: layout python), so the box cannot remove .venv: recreating it (rm -rf .venv, python -m venv --clear, uv venv) fails there with EBUSY; recreate it in your shell",
		"venv/run.sock is masked in the box (a socket), so the box cannot remove venv: recreating it (rm -rf venv, python -m venv --clear) fails there with EBUSY; recreate it in your shell",
	}
	if d := cmp.Diff(want, heldTreeNotes("/w/r", plan)); d != "" {
		t.Errorf("notes (-want +got):\n%s", d)
	}
}
