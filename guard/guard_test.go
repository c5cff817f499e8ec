package guard

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestGuardTable(t *testing.T) {
	if len(denyCases) < 150 || len(allowCases) < 100 {
		t.Fatalf("the table has %d deny and %d allow cases; it needs at least 150 and 100", len(denyCases), len(allowCases))
	}
	g := New()
	for _, cmd := range denyCases {
		v := g.check(cmd)
		if v.Allow {
			t.Errorf("allowed, want deny: %q", cmd)
			continue
		}
		if v.Reason == "" || v.Command == "" {
			t.Errorf("deny of %q has reason %q and command %q; want both set", cmd, v.Reason, v.Command)
		}
	}
	for _, cmd := range allowCases {
		if v := g.check(cmd); !v.Allow {
			t.Errorf("denied, want allow: %q\n\treason: %s", cmd, v.Reason)
		}
	}
}

func TestGuardTableHasNoDuplicates(t *testing.T) {
	seen := make(map[string]bool)
	for _, cmd := range append(append([]string(nil), denyCases...), allowCases...) {
		if seen[cmd] {
			t.Errorf("duplicate table entry %q", cmd)
		}
		seen[cmd] = true
	}
}

func TestGuardReasons(t *testing.T) {
	const alt = "To stop a process you started, find its PID with `pgrep -a <pattern>` and run `kill <PID>` on that PID alone. " +
		"To stop everything in this jail, ask the user to run `aisan kill <slot>` from their own shell."
	tests := []struct {
		cmd, command, why string
	}{
		{"pkill -f vite", "pkill -f vite", "pkill picks its victims by name or attribute, not by PID, so it can hit processes that are not yours"},
		{"kill 0", "kill 0", "it signals its own process group (target 0), which takes the agent down with it"},
		{"kill -- -4242", "kill -- -4242", "it signals a whole process group (negative target -4242)"},
		{"kill $(pgrep node)", "kill $(pgrep node)", whyPidList},
		{"ls && bash -c 'killall node'", "killall node", "killall picks its victims by name or attribute, not by PID, so it can hit processes that are not yours"},
		{"systemctl --user stop app", "systemctl --user stop app", "systemctl --user stop acts on the user's own services, outside this jail"},
		{"loginctl terminate-user bob", "loginctl terminate-user bob", "loginctl terminate-user ends login sessions, the user's included"},
		{"fuser -k 80/tcp", "fuser -k 80/tcp", whyFuser},
		{"${X:-pkill} node", "${X:-pkill} node", "its command name is computed at run time and its text names pkill"},
		{"$k -KILL 42", "$k -KILL 42", "its command name is computed at run time and it passes the signal option -KILL, as kill would"},
		{"kill -9 -1 )", "kill -9 -1 )", `the guard cannot parse this command, and "kill" appears in it as a word`},
		{"IFS=,; c=pkill,node; $c", "$c", "pkill picks its victims by name or attribute, not by PID, so it can hit processes that are not yours"},
		{"IFS=,; t=-9,-1; kill $t", "kill $t", "it signals every process you may signal (target -1)"},
		{"python3 -c \"import psutil; [p.kill() for p in psutil.process_iter() if p.name() == 'node']\"",
			"python3 -c \"import psutil; [p.kill() for p in psutil.process_iter() if p.name() == 'node']\"",
			"its code lists processes (psutil) and calls kill on what it finds, which kills by name in two steps"},
		{"node -e \"require('ps-list')().then(l => l.forEach(p => process.kill(p.pid)))\"",
			"node -e \"require('ps-list')().then(l => l.forEach(p => process.kill(p.pid)))\"",
			"its code lists processes (ps-list) and calls kill on what it finds, which kills by name in two steps"},
		{"aisan kill --all", "aisan kill --all", "aisan kill --all ends every jail on this machine, the other agents' and the user's own included"},
		{"aisan kill codex-1", "aisan kill codex-1", "aisan kill codex-1 ends a jail that is not this one (the guard runs outside any jail), with the work of whoever runs in it"},
	}
	for _, tt := range tests {
		v := Check(tt.cmd)
		if v.Allow {
			t.Errorf("Check(%q) allowed", tt.cmd)
			continue
		}
		want := "aisan guard refused `" + tt.command + "`: " + tt.why + ". " + alt
		if v.Reason != want || v.Command != tt.command {
			t.Errorf("Check(%q):\n\tcommand %q, reason %s\n\twant    %q, reason %s", tt.cmd, v.Command, v.Reason, tt.command, want)
		}
	}
}

func TestGuardSlot(t *testing.T) {
	v := New(WithSlot("codex-3")).Check("killall node")
	if !strings.Contains(v.Reason, "`aisan kill codex-3`") {
		t.Errorf("reason does not name the slot: %s", v.Reason)
	}
	v = New(WithSlot("")).Check("killall node")
	if !strings.Contains(v.Reason, "`aisan kill <slot>`") {
		t.Errorf("reason without a slot is not generic: %s", v.Reason)
	}
}

func TestGuardRecoversPanics(t *testing.T) {
	testOnlyBeforeCheck = func(string) { panic("boom") }
	defer func() { testOnlyBeforeCheck = nil }()
	v := Check("ls")
	if v.Allow || !strings.Contains(v.Reason, "internal error (boom)") || v.Command != "ls" {
		t.Errorf("Check after a panic = %+v; want a deny that names the internal error", v)
	}
}

func TestGuardShortensLongCommands(t *testing.T) {
	cmd := "pkill " + strings.Repeat("ü", 300)
	v := Check(cmd)
	if v.Command != cmd {
		t.Errorf("Command is not the full refused command")
	}
	quoted := v.Reason[strings.Index(v.Reason, "`")+1:]
	quoted = quoted[:strings.Index(quoted, "`")]
	if len(quoted) > 210 || !strings.HasSuffix(quoted, "…") || !utf8.ValidString(quoted) {
		t.Errorf("reason quotes %d bytes %q; want at most ~200 valid UTF-8 bytes ending in …", len(quoted), quoted)
	}
}

// TestGuardBoundedWork feeds pathological input: each must get an answer
// quickly, and input too large to analyse must be refused.
func TestGuardBoundedWork(t *testing.T) {
	tests := []struct {
		name, cmd string
		deny      bool
	}{
		{"long list", strings.Repeat("echo hi; ", 100000), false},
		{"deep substitutions", strings.Repeat("$(", 20000) + strings.Repeat(")", 20000), true},
		{"eval chain", strings.Repeat("eval ", 200000) + "ls", true},
		{"xargs chain", strings.Repeat("xargs ", 200000) + "ls", true},
		{"dynamic chain", strings.Repeat("$a ", 300000), true},
		{"wrapper branches", strings.Repeat("timeout --x --y --z ", 40000) + "ls", true},
		{"recursive function", "f() { f; f; }; f", false},
		{"braces", strings.Repeat("{", 1<<20), false},
		{"unclosed braces", strings.Repeat("{a,", 300000), false},
	}
	for _, tt := range tests {
		start := time.Now()
		v := New().check(tt.cmd)
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("%s: took %v", tt.name, d)
		}
		if v.Allow == tt.deny {
			t.Errorf("%s: allow = %v, want %v (%s)", tt.name, v.Allow, !tt.deny, v.Reason)
		}
	}
}

func TestCommands(t *testing.T) {
	got, err := Commands("x=1; for p in $(pgrep -f vite); do sudo kill \"$p\"; done | tee log")
	if err != nil {
		t.Fatal(err)
	}
	want := []Command{
		{Name: "pgrep", Args: []string{"-f", "vite"}, Offset: 16},
		{Name: "sudo", Args: []string{"kill", "$p"}, Offset: 35},
		{Name: "kill", Args: []string{"$p"}, Offset: 35},
		{Name: "tee", Args: []string{"log"}, Offset: 58},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Commands:\n\tgot  %+v\n\twant %+v", got, want)
	}
	if _, err := Commands("if then"); err == nil {
		t.Errorf("Commands of a parse error succeeded")
	}
}

func TestAnsiC(t *testing.T) {
	tests := map[string]string{
		`pkill`:          "pkill",
		`\x70kill`:       "pkill",
		`\160kill`:       "pkill",
		`\u0070kill`:     "pkill",
		`\U00000070kill`: "pkill",
		`a\nb\tc\\d\'e`:  "a\nb\tc\\d'e",
		`\cA\e\q`:        "\x01\x1b\\q",
		`\x`:             `\x`,
		`trailing\`:      `trailing\`,
	}
	for in, want := range tests {
		if got := ansiC(in); got != want {
			t.Errorf("ansiC(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestExpandBraces(t *testing.T) {
	tests := map[string][]string{
		"{pkill,node}":    {"pkill", "node"},
		"a{b,c}d":         {"abd", "acd"},
		"{a,b}{c,d}":      {"ac", "ad", "bc", "bd"},
		"{a,{b,c}}":       {"a", "b", "c"},
		`\{a,b}`:          {`\{a,b}`},
		"{a}":             {"{a}"},
		"{1..3}":          {"1", "2", "3"},
		"{3..1}":          {"3", "2", "1"},
		"{1..5..2}":       {"1", "3", "5"},
		"{01..3}":         {"01", "02", "03"},
		"{-1..1}":         {"-1", "0", "1"},
		"{5..-100}":       {"5", "-100", "0", "-1", "4", "3", "2", "1", "-2", "-3", "-4", "-5", "-6", "-7", "-8", "-9"},
		"{a..c}x":         {"ax", "bx", "cx"},
		"p{k..k}ill":      {"pkill"},
		"{a..}":           {"{a..}"},
		"{1..2..3..4}":    {"{1..2..3..4}"},
		"{":               {"{"},
		"x{a,b":           {"x{a,b"},
		"{,}":             {"", ""},
		"pre{x,y}post{1}": {"prexpost{1}", "preypost{1}"},
	}
	for in, want := range tests {
		if got := expandBraces(in, 16); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("expandBraces(%q) = %q, want %q", in, got, want)
		}
	}
}

func BenchmarkCheck(b *testing.B) {
	const cmd = "cd /home/dev/proj && go test ./... 2>&1 | tail -n 40 && " +
		"git commit -m \"$(cat <<'EOF'\nFix the flaky test\nEOF\n)\""
	g := New()
	for b.Loop() {
		if v := g.Check(cmd); !v.Allow {
			b.Fatal(v.Reason)
		}
	}
}

// TestGuardReasonsNameTheAlternative checks that each family's refusal
// names what to do instead, with the jail's name filled in.
func TestGuardReasonsNameTheAlternative(t *testing.T) {
	tests := []struct{ cmd, want string }{
		{"tmux kill-server", "`tmux kill-session -t claude-2-dev`"},
		{"tmux kill-pane -a", "`tmux kill-pane -t <pane>`"},
		{"zellij kill-all-sessions", "`zellij kill-session claude-2-dev`"},
		{"screen -S main -X quit", "`screen -S claude-2-dev -X quit`"},
		{"docker kill $(docker ps -q)", "`docker stop <name>`"},
		{"podman stop -a", "`docker stop <name>`"},
		{"pm2 kill", "`pm2 stop <name>`"},
		{"supervisorctl stop all", "`supervisorctl stop <name>`"},
		{"echo '@reboot kill 1' | crontab -", "ask the user to schedule it from their own shell"},
		{"systemd-run --user -p Conflicts=a.service true", "`systemctl --user stop <unit>`"},
		{"busctl --user call org.freedesktop.systemd1 /org/freedesktop/systemd1 org.freedesktop.systemd1.Manager StopUnit ss a replace", "bus proxy blocks these calls"},
		{"npx kill-port 3000", "`lsof -i :<port>`"},
		{"echo i > /proc/sysrq-trigger", "`kill <PID>` after `pgrep -a <pattern>`"},
		{"kill $(ss -ltnp | awk '{print $6}')", "`kill <PID>` on that PID alone"},
		{"python3 -c 'import os; os.system(\"pkill node\")'", "`kill <PID>` on that PID alone"},
		{"cp /usr/bin/pkill ./x; ./x node", "`kill <PID>` on that PID alone"},
	}
	g := New(WithSlot("claude-2"))
	for _, tt := range tests {
		v := g.Check(tt.cmd)
		if v.Allow {
			t.Errorf("Check(%q) allowed", tt.cmd)
			continue
		}
		if !strings.Contains(v.Reason, tt.want) || !strings.HasSuffix(v.Reason, "ask the user to run `aisan kill claude-2` from their own shell.") {
			t.Errorf("Check(%q): reason %q does not name %s and then aisan kill claude-2", tt.cmd, v.Reason, tt.want)
		}
	}
}

// TestGuardOwnSessionsFollowTheSlot checks that sessions and servers named
// after the jail count as the agent's own, and only in that jail.
func TestGuardOwnSessionsFollowTheSlot(t *testing.T) {
	for _, cmd := range []string{
		"tmux kill-session -t claude-2-dev",
		"tmux kill-session -t =claude-2:1",
		"tmux -L claude-2-ci kill-server",
		"zellij kill-session claude-2-x",
		"screen -S claude-2-dev -X quit",
	} {
		if v := New(WithSlot("claude-2")).Check(cmd); !v.Allow {
			t.Errorf("in jail claude-2, %q is refused: %s", cmd, v.Reason)
		}
		if v := New(WithSlot("codex-1")).Check(cmd); v.Allow {
			t.Errorf("in jail codex-1, %q is allowed", cmd)
		}
		if v := New().Check(cmd); v.Allow {
			t.Errorf("outside a jail, %q is allowed", cmd)
		}
	}
}

// TestGuardSessionsNamedOnTheJailVariable checks that $AISAN_JAIL counts as
// the jail's name only where the input leaves it alone and the name is
// built on it, not merely contains it.
func TestGuardSessionsNamedOnTheJailVariable(t *testing.T) {
	// The naming the refusal asks for, built on the jail's variable: the
	// jail's own in any jail, unknown outside one.
	for _, cmd := range []string{
		`tmux kill-session -t "$AISAN_JAIL-dev"`,
		`tmux kill-session -t "${AISAN_JAIL}-dev:1"`,
		`tmux kill-session -t "$AISAN_JAIL"`,
		`screen -S "$AISAN_JAIL-dev" -X quit`,
		`zellij kill-session "$AISAN_JAIL-x"`,
	} {
		for _, slot := range []string{"claude-2", "codex-1"} {
			if v := New(WithSlot(slot)).Check(cmd); !v.Allow {
				t.Errorf("in jail %s, %q is refused: %s", slot, cmd, v.Reason)
			}
		}
		if v := New().Check(cmd); v.Allow {
			t.Errorf("outside a jail, %q is allowed", cmd)
		}
	}
	for _, cmd := range []string{
		`AISAN_JAIL=main; tmux kill-session -t "$AISAN_JAIL-dev"`,
		`tmux kill-session -t "x$AISAN_JAIL"`,
		`tmux kill-session -t "$AISAN_JAIL$X"`,
		`tmux kill-session -t "${AISAN_JAIL:-main}"`,
	} {
		if v := New(WithSlot("claude-2")).Check(cmd); v.Allow {
			t.Errorf("in jail claude-2, %q is allowed", cmd)
		}
	}
}

// TestGuardKillFileReasons checks that a file that kills, reached through
// a computed path, is refused with the reason the written-out path gets.
func TestGuardKillFileReasons(t *testing.T) {
	tests := []struct{ cmd, file string }{
		{"echo 1 > \"$(find /sys/fs/cgroup -name cgroup.kill | head -1)\"", "/sys/fs/cgroup/x/cgroup.kill"},
		{"f=$(ls /sys/fs/cgroup/*/cgroup.freeze); echo 1 > $f", "/sys/fs/cgroup/x/cgroup.freeze"},
		{"echo 1 > \"$(printf '%s/cgroup.%s' /sys/fs/cgroup kill)\"", "/sys/fs/cgroup/x/cgroup.kill"},
		{"t=$(find / -name sysrq-trigger); echo b > $t", "/proc/sysrq-trigger"},
	}
	for _, tt := range tests {
		want := Check("echo 1 > " + tt.file).Reason
		got := Check(tt.cmd)
		_, wantWhy, _ := strings.Cut(want, "`: ")
		_, gotWhy, _ := strings.Cut(got.Reason, "`: ")
		if got.Allow || gotWhy != wantWhy {
			t.Errorf("Check(%q): %q\n\twant the reason of a written-out path: %q", tt.cmd, got.Reason, want)
		}
	}
}

// TestGuardAisanKillFollowsTheSlot checks that aisan kill may end the
// jail the guard runs in, named or as $AISAN_JAIL, and no other; outside
// a jail every slot is another's.
func TestGuardAisanKillFollowsTheSlot(t *testing.T) {
	tests := []struct {
		cmd   string
		slot  string
		allow bool
	}{
		{"aisan kill claude-2", "claude-2", true},
		{"aisan kill \"$AISAN_JAIL\"", "claude-2", true},
		{"aisan kill ${AISAN_JAIL}", "claude-2", true},
		{"aisan kill --grace 2s claude-2", "claude-2", true},
		{"aisan kill --signal KILL -- claude-2", "claude-2", true},
		{"aisan kill claude-2", "codex-1", false},
		{"aisan kill claude-2 codex-1", "claude-2", false},
		{"aisan kill \"$AISAN_JAIL\"", "", false},
		{"AISAN_JAIL=codex-1; aisan kill \"$AISAN_JAIL\"", "claude-2", false},
		{"aisan kill ${AISAN_JAIL/2/1}", "claude-2", false},
		{"aisan kill claude-2", "", false},
		{"aisan kill --all", "claude-2", false},
		{"aisan kill --orphans", "claude-2", false},
	}
	for _, tt := range tests {
		v := New(WithSlot(tt.slot)).Check(tt.cmd)
		if v.Allow != tt.allow {
			t.Errorf("in slot %q, Check(%q).Allow = %v, want %v (%s)", tt.slot, tt.cmd, v.Allow, tt.allow, v.Reason)
		}
	}
}
