//go:build !aisanfront

package main

import (
	"os"
	"slices"
	"strings"

	"github.com/aisan-dev/aisan/egress/backend"
)

// explainPolicy prints a backend's body policy table.
func explainPolicy(args []string) error {
	var names []string
	for _, b := range backend.Builtin {
		if b.Policy != nil {
			names = append(names, b.Name)
		}
	}
	slices.Sort(names)
	hint := "aisan explain --policy " + strings.Join(names, "|")
	if len(args) != 1 {
		return withHint(usageErr("explain --policy: name one backend"), hint)
	}
	// openai-compatible:PROVIDER names the one table of every provider.
	name, _, _ := strings.Cut(args[0], ":")
	b, ok := backend.Lookup(name)
	if !ok || b.Policy == nil {
		return withHint(usageErr("explain --policy: unknown backend %q", args[0]), hint)
	}
	return b.Policy().Print(os.Stdout)
}
