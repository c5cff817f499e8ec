package protect

import (
	"fmt"
	"io"
	"strings"
)

// WriteTable prints the table: what is protected, who runs it, why.
func WriteTable(w io.Writer) {
	siblings := map[string]int{}
	for _, r := range Table() {
		siblings[r.Who]++
	}
	for _, r := range append(Table(), GitRows...) {
		name := r.Name
		if r.Suffix {
			name = "*" + name
		}
		// A Glob row's name is its pattern already.
		if r.Dir {
			name += "/"
		}
		why := r.Why
		switch {
		case r.Swept && r.Tool != "" && siblings[r.Who] > 1:
			why += " [swept unless " + r.Tool + " is installed or another of its files is at the root]"
		case r.Swept && r.Tool != "":
			why += " [swept unless " + r.Tool + " is installed]"
		case r.Swept && siblings[r.Who] > 1:
			why += " [swept unless another " + r.Who + " file is at the root]"
		case r.Swept:
			why += " [swept]"
		}
		fmt.Fprintf(w, "  %-36s %-16s %s\n", name, r.Who, why)
	}
}

// Explain prints how each protected path of a plan appears in the box.
func Explain(w io.Writer, p Plan) {
	for _, it := range p.Items {
		name := it.Path
		if it.Dir {
			name += "/"
		}
		what := map[How]string{
			Copy:     "a copy; changes held for review",
			Create:   "absent: an empty copy over a mount point made for the run; what the box puts there is held",
			Shadow:   "its entries stay live, new ones are held",
			Pin:      "a mount point over itself",
			ReadOnly: "read-only",
			Mask:     "masked",
		}[it.How]
		fmt.Fprintf(w, "  %-10s %s: %s\n", it.How, name, what)
	}
	for _, w2 := range p.Watch {
		fmt.Fprintf(w, "  %-10s %s: absent at launch; swept into the review if there when the box ends\n", "watch", w2)
	}
	for _, m := range p.Modules {
		if m.Node {
			fmt.Fprintf(w, "  %-10s %s/: what the box adds here that node's require takes for a package held code loads by name (%s), a directory or NAME.js, .json or .node: swept into the review\n", "packages", m.Path, strings.Join(m.Names, ", "))
			continue
		}
		if m.Files {
			fmt.Fprintf(w, "  %-10s %s/: a file the box creates here by a name a held command's tool looks for (%s), missing at launch: swept into the review\n", "looked", m.Path, strings.Join(m.Names, ", "))
			continue
		}
		if m.Site {
			fmt.Fprintf(w, "  %-10s %s/: a .pth file, sitecustomize or usercustomize the box adds here (Python runs them as it starts), or a module a held script imports by name from here (%s): swept into the review\n", "site", m.Path, strings.Join(m.Names, ", "))
			continue
		}
		fmt.Fprintf(w, "  %-10s %s/: a module or package Python could import that the box adds here (a held script imports by name from here: %s): swept into the review\n", "modules", m.Path, strings.Join(m.Names, ", "))
	}
	fmt.Fprintf(w, "  %-10s any other protected name or .git the box creates (deeper, or at the root for a name marked \"swept\" in the table): swept into the review when it ends\n", "sweep")
}
