package guard_test

import (
	"fmt"
	"os"

	"github.com/aisan-dev/aisan/guard"
)

func ExampleCheck() {
	for _, cmd := range []string{
		"pgrep -a node",
		"kill 4242",
		"pgrep node | xargs kill",
		`git commit -m "stop using pkill"`,
		`sudo bash -c 'p""kill -f vite'`,
	} {
		v := guard.Check(cmd)
		if v.Allow {
			fmt.Printf("allow %s\n", cmd)
		} else {
			fmt.Printf("deny  %s (refused: %s)\n", cmd, v.Command)
		}
	}
	// Output:
	// allow pgrep -a node
	// allow kill 4242
	// deny  pgrep node | xargs kill (refused: xargs kill)
	// allow git commit -m "stop using pkill"
	// deny  sudo bash -c 'p""kill -f vite' (refused: p""kill -f vite)
}

func ExampleNew() {
	g := guard.New(guard.WithSlot("claude-2"))
	v := g.Check("kill -9 -1")
	fmt.Println(v.Reason)
	// Output:
	// aisan guard refused `kill -9 -1`: it signals every process you may signal (target -1). To stop a process you started, find its PID with `pgrep -a <pattern>` and run `kill <PID>` on that PID alone. To stop everything in this jail, ask the user to run `aisan kill claude-2` from their own shell.
}

func ExampleCommands() {
	cmds, err := guard.Commands(`timeout 5 sh -c 'kill $(cat app.pid)' && echo done`)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range cmds {
		fmt.Println(c.Offset, c.Name, c.Args)
	}
	// Output:
	// 0 timeout [5 sh -c kill $(cat app.pid)]
	// 0 sh [-c kill $(cat app.pid)]
	// 0 cat [app.pid]
	// 0 kill [$(cat app.pid)]
	// 41 echo [done]
}

func ExampleParseHookInput() {
	in, err := guard.ParseHookInput([]byte(`{"hook_event_name":"PreToolUse","tool_name":"Bash",` +
		`"tool_input":{"command":"killall node","description":"stop the dev server"}}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(in.Tool, in.RunsShell(), in.Command)
	// Output:
	// Bash true killall node
}

func ExampleDenyOutput() {
	os.Stdout.Write(guard.DenyOutput("use kill <PID> instead"))
	// Output:
	// {"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"use kill <PID> instead"}}
}
