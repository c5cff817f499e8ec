package strictbox

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/aisan-dev/aisan/jail/strictbox/protect"
)

// rebuiltTrees are directories a project's tools remove whole and make
// anew, and what then fails in a box where a protected path lies inside
// one: it and every directory above the path are mount points, which
// cannot be removed (EBUSY).
var rebuiltTrees = []struct{ name, fails, works, instead string }{
	{"node_modules", "npm ci and rm -rf %s fail there with EBUSY", "npm install works", "run npm ci in your shell"},
	{".venv", "recreating it (rm -rf %s, python -m venv --clear, uv venv) fails there with EBUSY", "installing into it works", "recreate it in your shell"},
	{"venv", "recreating it (rm -rf %s, python -m venv --clear) fails there with EBUSY", "installing into it works", "recreate it in your shell"},
}

// heldTreeNotes say, for each such tree of repo that holds a protected
// path (an .envrc's PATH_add node_modules/.bin, say, or a package's own
// .vscode), that the box cannot remove it and what therefore fails: a
// tool's EBUSY names no reason.
func heldTreeNotes(repo string, plan protect.Plan) []string {
	var out []string
	seen := map[string]bool{}
	for _, it := range plan.Items {
		if it.How == protect.Pin {
			// A directory above a protected path: the path is named.
			continue
		}
		rel, err := filepath.Rel(repo, it.Path)
		if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
			continue
		}
		parts := strings.Split(rel, string(filepath.Separator))
		for i, p := range parts[:len(parts)-1] {
			for _, t := range rebuiltTrees {
				if p != t.name {
					continue
				}
				tree := filepath.Join(parts[:i+1]...)
				if seen[tree] {
					continue
				}
				seen[tree] = true
				why := it.Why
				if why == "" {
					why = "protected"
				}
				what := fmt.Sprintf(t.fails, tree)
				if it.Held() {
					what += " (" + t.works + ")"
				}
				out = append(out, fmt.Sprintf("%s is %s in the box (%s), so the box cannot remove %s: %s; %s",
					rel, heldAs(it), why, tree, what, t.instead))
			}
		}
	}
	return out
}

// heldAs says how the box sees a protected item.
func heldAs(it protect.Item) string {
	switch it.How {
	case protect.ReadOnly:
		return "read-only"
	case protect.Mask:
		return "masked"
	}
	return "a copy held for review"
}
