package tests

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// TestGuardInJailKnowsItsSlot runs the hook binary inside a real jail, as
// an agent there runs it before a shell command: the guard learns its
// slot only from the jail's AISAN_JAIL. It refuses aisan kill --all,
// --orphans and aisan kill of another slot, and lets the agent end its
// own jail, by name or as $AISAN_JAIL, and a tmux session named on
// $AISAN_JAIL. Kills that once got through from inside a jail are
// refused. The same own-slot command from outside any jail is refused,
// so the answer inside comes from the jail.
func TestGuardInJailKnowsItsSlot(t *testing.T) {
	requireJail(t)
	_, env := testEnv(t)
	guard := leanGuard(t)
	// Each line of the script feeds one command to the guard, as the
	// hook's JSON, and prints the name and the guard's exit status.
	hook := func(name, command string) string {
		return fmt.Sprintf(`printf '{"tool_name":"Bash","tool_input":{"command":"%%s"}}' %s | %s >/dev/null 2>"$TMPDIR/%s.err"; echo "%s=$?"; head -c 300 "$TMPDIR/%s.err"; echo`,
			command, guard, name, name, name)
	}
	script := strings.Join([]string{
		`echo "slot=$AISAN_JAIL"`,
		`TMPDIR=$(mktemp -d)`,
		hook("all", `"aisan kill --all"`),
		hook("orphans", `"aisan kill --orphans"`),
		hook("other", `"aisan kill someone-elses-slot"`),
		hook("ownvar", `'aisan kill \"$AISAN_JAIL\"'`),
		hook("ownname", `"aisan kill $AISAN_JAIL"`),
		// The session naming the refusals ask for, and kills the guard
		// once let through from inside a jail.
		hook("tmuxown", `'tmux kill-session -t \"$AISAN_JAIL-dev\"'`),
		hook("pieces", `'pk${X}ill -f m'`),
		hook("declint", `'declare -i a=0-1; kill -9 $a'`),
		hook("gitalias", `'git -c alias.x=\"!pkill m\" x'`),
		hook("sede", `'sed \"1e pkill m\" f'`),
	}, "\n")
	r := aisan(t, env, "", "run", "--", "sh", "-c", script)
	if r.code != 0 {
		t.Fatalf("aisan run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	slot := regexp.MustCompile(`(?m)^slot=(\S+)$`).FindStringSubmatch(r.stdout)
	if slot == nil {
		t.Fatalf("no AISAN_JAIL inside the jail:\n%s", r.stdout)
	}
	for name, want := range map[string]string{"all": "2", "orphans": "2", "other": "2", "ownvar": "0", "ownname": "0",
		"tmuxown": "0", "pieces": "2", "declint": "2", "gitalias": "2", "sede": "2"} {
		if !strings.Contains(r.stdout, name+"="+want+"\n") {
			t.Errorf("inside jail %s, the guard on %q: want exit %s\n%s", slot[1], name, want, r.stdout)
		}
	}
	if !strings.Contains(r.stdout, "this jail is "+slot[1]) {
		t.Errorf("the refusal of another slot does not name this jail (%s):\n%s", slot[1], r.stdout)
	}
	// Outside any jail the same slot is someone else's.
	reasons := guardReasonsIn(t, "", "aisan kill "+slot[1])
	if !strings.Contains(strings.Join(reasons, "\n"), "outside any jail") {
		t.Errorf("outside a jail, aisan kill %s is refused for another reason: %q", slot[1], reasons)
	}
}
