package guard

// aisan kill is the sanctioned way to stop a whole jail, and the guard's
// own advice names it, but only for the jail the agent runs in: --all and
// --orphans end every jail (the other agents' and the user's own), and a
// slot named on the command line that is not the guard's own is someone
// else's work. The guard learns its slot from AISAN_JAIL; outside a jail
// it has none, so every slot is another's there.

import (
	"fmt"
	"strings"
)

// aisanKill decides about aisan's kill subcommand. Its flags are read as
// Go's flag package reads them (one or two dashes, a value after = or in
// the next word, flags and slot names in any order until --). A word only
// known at run time may be any flag or slot, so it counts as a slot that
// is not the guard's own, unless it is $AISAN_JAIL as the jail sets it.
func (c *checker) aisan(st site, args []arg) {
	if len(args) == 0 || !args[0].known || args[0].text != "kill" {
		return
	}
	var slots []arg
	all, help := "", false
	rest := args[1:]
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if !a.known || !strings.HasPrefix(a.text, "-") || a.text == "-" {
			slots = append(slots, a)
			continue
		}
		if a.text == "--" {
			slots = append(slots, rest[i+1:]...)
			break
		}
		name, val, hasVal := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a.text, "-"), "-"), "=")
		switch name {
		case "all", "orphans":
			if !hasVal || goFlagTrue(val) {
				all = "--" + name
			}
		case "grace", "signal":
			if !hasVal {
				i++ // the value is the next word
			}
		case "h", "help":
			help = true
		}
	}
	switch {
	case help:
		// aisan prints its usage and ends no jail.
	case all != "":
		c.deny(st.text, fmt.Sprintf("aisan kill %s ends every jail on this machine, the other agents' and the user's own included", all))
	default:
		for _, s := range slots {
			if !c.ownSlot(s) {
				c.deny(st.text, fmt.Sprintf("aisan kill %s ends a jail that is not this one (%s), with the work of whoever runs in it", s.text, c.slotOrNone()))
				return
			}
		}
	}
}

// goFlagTrue reports whether a boolean flag's value reads as true to
// strconv.ParseBool, as Go's flag package reads it; a value it cannot
// read counts as true, since the guard cannot tell.
func goFlagTrue(v string) bool {
	switch v {
	case "0", "f", "F", "false", "FALSE", "False":
		return false
	}
	return true
}

// ownSlot reports whether a slot argument names the jail the guard runs
// in: its name as written, or $AISAN_JAIL when the input does not set it.
func (c *checker) ownSlot(a arg) bool {
	if c.slot == "" {
		return false
	}
	if a.known {
		return a.text == c.slot
	}
	if len(a.refs) == 1 && a.refs[0] == "AISAN_JAIL" && c.vars["AISAN_JAIL"] == nil && !a.opRef {
		t := strings.Trim(a.src, `"`)
		return t == "$AISAN_JAIL" || t == "${AISAN_JAIL}"
	}
	return false
}

func (c *checker) slotOrNone() string {
	if c.slot == "" {
		return "the guard runs outside any jail"
	}
	return "this jail is " + c.slot
}
