//go:build !aisanfront

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/aisan-dev/aisan/egress"
	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/control"
	"github.com/aisan-dev/aisan/jail/slot"
	"github.com/aisan-dev/aisan/jail/strictbox"
)

const allowUsage = `
Usage: aisan allow SLOT [--host PATTERN]... [--for DURATION]
                        [--budget [+]TOKENS] [--rate N/s[,BURST]]

Changes a running strict box from outside, at once, through its host side
(the aisan that launched it, or the one that keeps it once its agent
exited). Nothing in a box can do this: the box's host side answers only
its user, from outside every jail and box.

Options:
  --host PATTERN       let the box reach this host through its host proxy
                       (the patterns of --allow-host: example.com,
                       *.example.com, host:PORT, ADDRESS:PORT; repeatable)
  --for DURATION       the hosts of this command lapse after DURATION (30s,
                       10m, 2h): the box is refused them again, and
                       connections opened to them are cut
  --budget TOKENS      set the box's token budget (0: none); +N raises it
                       by N, and for a box without one, allows N more than
                       it spent
  --rate N/s[,BURST]   set the box's request rate to its model backends
                       (BURST left out keeps the box's)
  -h, --help           show this help

A grant widens only the hosts the box may name: its mounts, credentials
and network stay as launched, and the address rules of --allow-host hold
(a wildcard never reaches this machine's or its network's addresses). A
refused host tells the box the command that grants it. Every change is a
line of 'aisan logs --egress SLOT'; 'aisan report SLOT' shows the box's
state; 'aisan deny SLOT --host PATTERN' takes a host off again.

Example:
  aisan allow myrepo-3f9c2a1b-claude --host registry.example.com --for 10m
  aisan allow myrepo-3f9c2a1b-claude --budget +500k
`

func runAllow(ctx context.Context, args []string) error {
	fs := newFlagSet("allow", allowUsage)
	var hosts listFlag
	fs.Var(&hosts, "host", "")
	dur := fs.String("for", "", "")
	budget := fs.String("budget", "", "")
	rateOpt := fs.String("rate", "", "")
	names, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	name, err := oneSlot("allow", names)
	if err != nil {
		return err
	}
	var reqs []control.Request
	var forMS int64
	if *dur != "" {
		if len(hosts) == 0 {
			return withHint(usageErr("allow: --for %s is for the hosts of --host, and none is given", *dur), "aisan allow SLOT --host PATTERN --for 10m")
		}
		d, err := time.ParseDuration(*dur)
		switch {
		case err != nil:
			return withHint(usageErr("allow: --for %q is not a duration", *dur), "write it as 30s, 10m or 2h")
		case d < time.Second:
			return withHint(usageErr("allow: --for %s is shorter than a second", *dur), "write it as 30s, 10m or 2h; leave --for out for a grant that lasts as long as the box")
		case d > 366*24*time.Hour:
			return withHint(usageErr("allow: --for %s is longer than a year", *dur), "leave --for out for a grant that lasts as long as the box")
		}
		forMS = d.Milliseconds()
	}
	for _, h := range hosts {
		reqs = append(reqs, control.Request{Op: control.OpAllowHost, Host: h, ForMS: forMS})
	}
	if *budget != "" {
		n, plus, err := egress.ParseTokens(*budget, true)
		if err != nil {
			return withHint(usageErr("allow: --budget: %v", err), "--budget +500k raises the budget by 500,000 tokens; --budget 2M sets it; --budget 0 removes it")
		}
		reqs = append(reqs, control.Request{Op: control.OpBudget, Tokens: n, Add: plus})
	}
	if *rateOpt != "" {
		r, burst, err := egress.ParseRate(*rateOpt)
		if err != nil {
			return withHint(usageErr("allow: --rate: %v", err), "--rate 5/s,100 allows five requests a second in bursts of 100")
		}
		reqs = append(reqs, control.Request{Op: control.OpRate, Rate: float64(r), Burst: burst})
	}
	if len(reqs) == 0 {
		return withHint(usageErr("allow: nothing to change"), "give --host PATTERN, --budget TOKENS or --rate N/s; 'aisan allow --help' says more")
	}
	return steerSlot(name, reqs)
}

// oneSlot is the one slot name a steering command takes.
func oneSlot(cmd string, names []string) (string, error) {
	switch len(names) {
	case 0:
		return "", withHint(usageErr("%s: no slot given", cmd), "'aisan list --running' shows the slots")
	case 1:
		return names[0], nil
	}
	return "", withHint(usageErr("%s: one slot at a time (got %q and %q)", cmd, names[0], names[1]), fmt.Sprintf("run 'aisan %s' once per slot", cmd))
}

// steerSlot sends reqs to the running strict box of slot name, in order,
// printing what each did; it stops at the first refused.
func steerSlot(name string, reqs []control.Request) error {
	path, err := controlSocket(name)
	if err != nil {
		return err
	}
	for _, r := range reqs {
		resp, err := control.Call(path, r)
		if errors.Is(err, control.ErrNoBox) {
			return withHint(fmt.Errorf("slot %s: its box's host side is gone (%w)", name, err), "'aisan list' shows whether it still runs")
		}
		if err != nil {
			return fmt.Errorf("slot %s: %w", name, err)
		}
		if !resp.OK {
			err := fmt.Errorf("slot %s: %s", name, resp.Error)
			if resp.Hint != "" {
				return withHint(err, resp.Hint)
			}
			return err
		}
		fmt.Printf("%s: %s\n", name, resp.Text)
	}
	return nil
}

// controlSocket finds the control socket of the running strict box in
// slot name, or says why there is none to steer.
func controlSocket(name string) (string, error) {
	reg, err := openRegistry()
	if err != nil {
		return "", err
	}
	e, err := reg.Lookup(name)
	if err != nil {
		return "", slotError(err)
	}
	switch {
	case e.Mode != "strict":
		return "", withHint(fmt.Errorf("slot %s is a deny-list jail: it reaches every host already, and has no budget or rate to change", name),
			"only strict boxes (--strict) are steered with 'aisan allow' and 'aisan deny'")
	case e.State == slot.Exited:
		return "", withHint(&slot.NotRunningError{Name: name, End: e.End}, "a box is steered while it runs; start it again with --allow-host, --budget or --rate")
	case e.State == slot.Orphaned:
		return "", withHint(fmt.Errorf("slot %s is orphaned: the aisan that served its box died, and nothing answers for it", name), "'aisan kill --orphans' ends it")
	}
	home, err := slot.Home()
	if err != nil {
		return "", err
	}
	h := jail.Host{AisanHome: home, RuntimeDir: jail.RuntimeDir(os.Getenv), Cwd: e.Worktree}
	return strictbox.ControlSocket(h, name), nil
}
