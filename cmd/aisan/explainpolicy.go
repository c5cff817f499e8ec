package main

import (
	"os"
	"slices"
	"strings"

	"github.com/aisan-dev/aisan/egress/anthropic"
	"github.com/aisan-dev/aisan/egress/openai"
	"github.com/aisan-dev/aisan/egress/policy"
)

// policyTables are the body policies `aisan explain --policy BACKEND`
// prints, by --egress backend name.
var policyTables = map[string]func() *policy.Table{
	"anthropic":         anthropic.Policy,
	"vertex":            anthropic.VertexPolicy,
	"codex":             openai.ResponsesPolicy,
	"openai":            openai.ResponsesPolicy,
	"openai-compatible": openai.ChatPolicy,
}

// explainPolicy prints a backend's body policy table.
func explainPolicy(args []string) error {
	var names []string
	for n := range policyTables {
		names = append(names, n)
	}
	slices.Sort(names)
	hint := "aisan explain --policy " + strings.Join(names, "|")
	if len(args) != 1 {
		return withHint(usageErr("explain --policy: name one backend"), hint)
	}
	// openai-compatible:PROVIDER names the one table of every provider.
	name, _, _ := strings.Cut(args[0], ":")
	table, ok := policyTables[name]
	if !ok {
		return withHint(usageErr("explain --policy: unknown backend %q", args[0]), hint)
	}
	return table().Print(os.Stdout)
}
