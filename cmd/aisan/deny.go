//go:build !aisanfront

package main

import (
	"context"

	"github.com/aisan-dev/aisan/jail/control"
)

const denyUsage = `
Usage: aisan deny SLOT --host PATTERN...

Takes hosts off a running strict box's host allow-list, at once: a pattern
granted with 'aisan allow' or given at launch with --allow-host, written as
the list has it ('aisan report SLOT' shows the list). Connections the box
opened that no pattern left on the list allows are cut.

Options:
  --host PATTERN   the pattern to take off (repeatable)
  -h, --help       show this help

Each denial is a line of 'aisan logs --egress SLOT'.

Example:
  aisan deny myrepo-3f9c2a1b-claude --host registry.example.com
`

func runDeny(ctx context.Context, args []string) error {
	fs := newFlagSet("deny", denyUsage)
	var hosts listFlag
	fs.Var(&hosts, "host", "")
	names, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	name, err := oneSlot("deny", names)
	if err != nil {
		return err
	}
	if len(hosts) == 0 {
		return withHint(usageErr("deny: no --host given"), "aisan deny SLOT --host PATTERN")
	}
	var reqs []control.Request
	for _, h := range hosts {
		reqs = append(reqs, control.Request{Op: control.OpDenyHost, Host: h})
	}
	return steerSlot(name, reqs)
}
