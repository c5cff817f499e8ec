package tests

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode"
)

// The TUI tests drive the real Claude Code interface on a real terminal
// (a pty) through 'aisan claude', against the stand-in model API: what the
// user types and what the agent answers must read as text in 'aisan
// logs', and the prompt must be in the host's own history file afterwards,
// tagged with the project, as it would be without aisan.

// tuiEnv is the environment of an interactive jailed agent in home: the
// test's, less the user's agent setup, plus the agent's own.
func tuiEnv(home, bin string, agentEnv []string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !agentEnvKeys.MatchString(kv) {
			env = append(env, kv)
		}
	}
	env = append(env, jailEnv(home, bin)...)
	return append(append(env, agentEnv...), "TERM=xterm-256color")
}

// waitLogs polls 'aisan logs SLOT' until it holds every one of want.
func waitLogs(t *testing.T, env []string, slot string, d time.Duration, want ...string) string {
	t.Helper()
	var out string
	deadline := time.Now().Add(d)
	for {
		out = screen(t, env, slot)
		ok := true
		for _, w := range want {
			ok = ok && strings.Contains(out, w)
		}
		if ok {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("aisan logs %s does not show %q after %v:\n%s", slot, want, d, out)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// claudeTUIHome prepares home for an interactive Claude Code against s
// in dir, past its first-run questions, and returns the environment.
func claudeTUIHome(t *testing.T, home, bin, dir string, s *standIn) []string {
	t.Helper()
	agentEnv := claudeSetup(t, home, s)
	key := "sk-ant-aisan-e2e-dummy"
	state := map[string]any{
		"hasCompletedOnboarding": true,
		"theme":                  "dark",
		"customApiKeyResponses":  map[string]any{"approved": []string{key[len(key)-20:]}, "rejected": []string{}},
		"projects":               map[string]any{dir: map[string]any{"hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true}},
	}
	data, _ := json.Marshal(state)
	if err := os.WriteFile(filepath.Join(home, ".claude.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	return tuiEnv(home, bin, agentEnv)
}

// startTUI starts 'aisan ARGS' in dir on a new terminal of 30×100.
func startTUI(t *testing.T, dir string, env []string, args ...string) (*terminal, *exec.Cmd) {
	t.Helper()
	return startTUIProgram(t, dir, env, aisanBin, args...)
}

// waitFile reports whether the file at path comes to hold want within d.
func waitFile(path, want string, d time.Duration) bool {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if data, _ := os.ReadFile(path); strings.Contains(string(data), want) {
			return true
		}
	}
	return false
}

// startTUIProgram starts prog ARGS in dir on a new terminal of 30×100.
func startTUIProgram(t *testing.T, dir string, env []string, prog string, args ...string) (*terminal, *exec.Cmd) {
	t.Helper()
	term := newTerminal(t, 30, 100)
	cmd := exec.Command(prog, args...)
	cmd.Env = env
	cmd.Dir = dir
	go func() {
		for range term.lines {
		}
	}()
	term.start(cmd)
	return term, cmd
}

// typeLine types text, then Enter a moment later (an interface that takes
// a fast burst for a paste would not submit it).
func typeLine(term *terminal, text string) {
	term.master.Write([]byte(text))
	time.Sleep(500 * time.Millisecond)
	term.master.Write([]byte("\r"))
}

// tuiKind is what the test reads on an agent's screen to type into it.
type tuiKind struct {
	// sign starts the line of the input box, in column 0, followed by a
	// space and what is typed there; the last such line in 'aisan logs'
	// is the box (earlier ones are past prompts).
	sign string
	// idle matches the box's line while it is empty and takes keys.
	idle *regexp.Regexp
}

var tuiKinds = map[string]tuiKind{
	"claude": {sign: "❯", idle: regexp.MustCompile(`^❯\s*$`)},
	"codex":  {sign: "›", idle: regexp.MustCompile(`^› Ask Codex`)},
}

// screen is 'aisan logs SLOT' with Claude Code's no-break space after
// its prompt sign read as a space.
func screen(t *testing.T, env []string, slot string) string {
	t.Helper()
	return strings.ReplaceAll(aisan(t, env, "", "logs", slot).stdout, "\u00a0", " ")
}

// inputLine is the last line of out that starts with the prompt sign, as
// the box shows it, or "" before the box is drawn.
func (k tuiKind) inputLine(out string) string {
	lines := strings.Split(out, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], k.sign) {
			return strings.TrimRight(lines[i], " ")
		}
	}
	return ""
}

// holds reports whether the input box in out shows text. Blanks do not
// count: an interface may draw one by moving the cursor over the cell.
func (k tuiKind) holds(out, text string) bool {
	blanks := func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}
	return strings.Map(blanks, k.inputLine(out)) == strings.Map(blanks, k.sign+text)
}

// submit types text into the input box of the agent of kind in slot,
// Enter, and waits for answer in 'aisan logs'.
//
// The keys go only to a box already drawn and empty: bytes typed earlier
// are echoed by the inner terminal before the interface turns the echo
// off, so the text shows while the interface may take it late or lose
// the Enter. The text counts as typed once the box's own line holds it.
// An Enter that a busy interface dropped leaves the text in the box: it
// is pressed again then, never while the box is empty, so a prompt is
// sent once and an agent that does not answer still fails the test.
func submit(t *testing.T, term *terminal, env []string, kind, slot, text, answer string) {
	t.Helper()
	k := tuiKinds[kind]
	waitReady(t, env, kind, slot)
	for i := 0; ; i++ {
		term.master.Write([]byte(text))
		if pollScreen(t, env, slot, 10*time.Second, func(out string) bool { return k.holds(out, text) }) != "" {
			break
		}
		if i == 3 {
			t.Fatalf("the input box does not show %q after typing it %d times:\n%s", text, i+1, screen(t, env, slot))
		}
		t.Logf("the input box does not show %q: clearing it and typing again", text)
		term.master.Write([]byte("\x15"))
		waitScreen(t, env, slot, 10*time.Second, "the input box cleared", func(out string) bool {
			return k.idle.MatchString(k.inputLine(out))
		})
	}
	// A moment between text and Enter: an interface takes a fast burst
	// for a paste, which Enter inside it does not send.
	time.Sleep(300 * time.Millisecond)
	for i := 0; ; i++ {
		term.master.Write([]byte("\r"))
		out := pollScreen(t, env, slot, 10*time.Second, func(out string) bool {
			return strings.Contains(out, answer) || !k.holds(out, text)
		})
		if strings.Contains(out, answer) {
			return
		}
		if out == "" {
			if i == 3 {
				t.Fatalf("the prompt %q stays in the input box after Enter %d times:\n%s", text, i+1, screen(t, env, slot))
			}
			t.Logf("the prompt %q stays in the input box after Enter: pressing it again", text)
			continue
		}
		// The box took the prompt: the answer is the agent's to give.
		waitLogs(t, env, slot, time.Minute, answer)
		return
	}
}

// waitReady waits for the agent of kind to run in slot and to show its
// input box empty, taking keys. The slot's earlier launch, whose screen
// 'aisan logs' shows until this one runs, does not count.
func waitReady(t *testing.T, env []string, kind, slot string) {
	t.Helper()
	waitFor(t, time.Minute, slot+" running in aisan list --json", func() bool {
		var entries []struct{ Slot, State string }
		json.Unmarshal([]byte(aisan(t, env, "", "list", "--json").stdout), &entries)
		for _, e := range entries {
			if e.Slot == slot && e.State == "running" {
				return true
			}
		}
		time.Sleep(200 * time.Millisecond)
		return false
	})
	k := tuiKinds[kind]
	waitScreen(t, env, slot, time.Minute, "an empty input box", func(out string) bool {
		return k.idle.MatchString(k.inputLine(out))
	})
}

// pollScreen returns 'aisan logs SLOT' as soon as ok holds for it, or ""
// if it does not within d.
func pollScreen(t *testing.T, env []string, slot string, d time.Duration, ok func(string) bool) string {
	t.Helper()
	for deadline := time.Now().Add(d); ; time.Sleep(200 * time.Millisecond) {
		if out := screen(t, env, slot); ok(out) {
			return out
		}
		if time.Now().After(deadline) {
			return ""
		}
	}
}

// waitScreen waits up to d for ok to hold for 'aisan logs SLOT', which
// shows what.
func waitScreen(t *testing.T, env []string, slot string, d time.Duration, what string, ok func(string) bool) {
	t.Helper()
	if pollScreen(t, env, slot, d, ok) == "" {
		t.Fatalf("aisan logs %s does not show %s after %v:\n%s", slot, what, d, screen(t, env, slot))
	}
}

// waitExit waits for the launch to end.
func waitExit(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("the agent ended with %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the agent did not exit")
	}
}

// exchange is one launch of 'aisan KIND' in dir: it types prompt, waits
// for the answer, ends the session with quit, and checks that 'aisan logs'
// then shows each of want, as text.
func exchange(t *testing.T, dir string, env []string, kind, slot, prompt, quit string, want ...string) {
	t.Helper()
	term, cmd := startTUI(t, dir, env, kind)
	submit(t, term, env, kind, slot, prompt, "Done.")
	typeLine(term, quit)
	waitExit(t, cmd)
	out := aisan(t, env, "", "logs", slot).stdout
	t.Logf("aisan logs %s:\n%s", slot, out)
	for _, w := range want {
		if !strings.Contains(strings.ReplaceAll(out, "\u00a0", " "), w) {
			t.Errorf("aisan logs after the session lacks %q", w)
		}
	}
	if strings.Contains(out, "\x1b") {
		t.Errorf("aisan logs after the session shows escape sequences")
	}
}

// TestAgentClaudeTUI: a prompt typed into a jailed claude and the answer
// read as text in 'aisan logs', during and after the session; the prompt
// lands in the host's own history file with its project, and a second
// claude in the worktree offers it on the up-arrow.
func TestAgentClaudeTUI(t *testing.T) {
	requireJail(t)
	bin := nodeBin(t, "claude")
	home := t.TempDir()
	dir := worktree(t)
	env := claudeTUIHome(t, home, bin, dir, newScriptedStandIn(t, nil, anthropicAPI))
	slot := slotName(dir, "claude")

	exchange(t, dir, env, "claude", slot, "hello from the jail", "/exit", "❯ hello from the jail", "● Done.")

	hist, _ := os.ReadFile(filepath.Join(home, ".claude", "history.jsonl"))
	found := false
	for _, l := range strings.Split(string(hist), "\n") {
		var e struct{ Display, Project string }
		if json.Unmarshal([]byte(l), &e) == nil && e.Display == "hello from the jail" && e.Project == dir {
			found = true
		}
	}
	if !found {
		t.Fatalf("the host's ~/.claude/history.jsonl lacks the jailed prompt for %s:\n%s", dir, hist)
	}
	if _, err := os.Stat(filepath.Join(home, ".aisan", "history", slot)); err == nil {
		t.Errorf("a per-slot copy of claude's history was made")
	}

	// A second claude in the worktree: the up-arrow offers the prompts,
	// the latest (/exit) first.
	term, cmd := startTUI(t, dir, env, "claude")
	waitReady(t, env, "claude", slot)
	upArrowShows(t, term, env, "claude", slot, "History 2/2", "❯ /exit")
	term.master.Write([]byte("\x1b[A"))
	waitLogs(t, env, slot, 30*time.Second, "History 1/2", "❯ hello from the jail")
	term.master.Write([]byte("\x15"))
	time.Sleep(300 * time.Millisecond)
	typeLine(term, "/exit")
	waitExit(t, cmd)
}

// upArrowShows presses the up-arrow in the agent of kind in slot until
// 'aisan logs' holds every one of want. It presses again only while the
// input box shows what it did before: a key the interface took but has
// not drawn yet must not be followed by a second one, which would step
// past want.
func upArrowShows(t *testing.T, term *terminal, env []string, kind, slot string, want ...string) {
	t.Helper()
	k := tuiKinds[kind]
	has := func(out string) bool {
		for _, w := range want {
			if !strings.Contains(out, w) {
				return false
			}
		}
		return true
	}
	before := k.inputLine(screen(t, env, slot))
	for i := 0; ; i++ {
		term.master.Write([]byte("\x1b[A"))
		out := pollScreen(t, env, slot, 5*time.Second, func(out string) bool {
			return has(out) || k.inputLine(out) != before
		})
		if out != "" {
			waitLogs(t, env, slot, 30*time.Second, want...)
			return
		}
		if i == 5 {
			t.Fatalf("the up-arrow does not bring back %q:\n%s", want, screen(t, env, slot))
		}
	}
}

// TestAgentCodexTUI: a prompt typed into a jailed codex reads as text in
// 'aisan logs'; it is in the host's ~/.codex/history.jsonl once the launch
// ends; and a second codex, started in a subdirectory of the worktree,
// takes the same slot name and offers on the up-arrow that prompt and the
// one typed in an unjailed codex in the worktree before.
func TestAgentCodexTUI(t *testing.T) {
	requireJail(t)
	bin := nodeBin(t, "codex")
	home := t.TempDir()
	dir := worktree(t)
	os.Mkdir(filepath.Join(dir, ".git"), 0o755)
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	env := tuiEnv(home, bin, codexSetup(t, home, newScriptedStandIn(t, nil, responsesAPI)))
	slot := slotName(dir, "codex")
	hostFile := filepath.Join(home, ".codex", "history.jsonl")
	os.WriteFile(hostFile, []byte(`{"session_id":"outside","ts":1,"text":"typed outside"}`+"\n"), 0o600)

	// First a codex without aisan, in the worktree. It leaves its
	// app-server daemon running on the host (under this test's home),
	// which the test ends.
	t.Cleanup(func() {
		// Gone before the test's directories are removed under it.
		exec.Command("pkill", "-KILL", "-f", home+"/").Run()
		for i := 0; i < 100 && exec.Command("pgrep", "-f", home+"/").Run() == nil; i++ {
			time.Sleep(50 * time.Millisecond)
		}
	})
	plain, plainCmd := startTUIProgram(t, dir, env, filepath.Join(bin, "codex"))
	for i := 0; ; i++ {
		typeLine(plain, "typed outside the jail")
		if waitFile(hostFile, "typed outside the jail", 3*time.Second) {
			break
		}
		if i == 10 {
			t.Fatalf("the unjailed codex never recorded the prompt")
		}
		plain.master.Write([]byte("\x15"))
	}
	typeLine(plain, "/quit")
	waitExit(t, plainCmd)

	// Codex wipes its full-screen view before it leaves: its last frame
	// is kept all the same.
	exchange(t, dir, env, "codex", slot, "hello from the codex jail", "/quit", "› hello from the codex jail", "• Done.")
	host, _ := os.ReadFile(hostFile)
	if !strings.HasPrefix(string(host), `{"session_id":"outside"`) || !strings.Contains(string(host), `"text":"hello from the codex jail"`) {
		t.Fatalf("the host's codex history lacks the jailed prompt (or lost its own line):\n%s", host)
	}

	term, cmd := startTUI(t, sub, env, "codex")
	waitReady(t, env, "codex", slot)
	upArrowShows(t, term, env, "codex", slot, "› hello from the codex jail")
	// Then what was typed outside the jail, in this worktree.
	upArrowShows(t, term, env, "codex", slot, "› typed outside the jail")
	term.master.Write([]byte("\x15"))
	time.Sleep(300 * time.Millisecond)
	typeLine(term, "/quit")
	waitExit(t, cmd)
	if again, _ := os.ReadFile(hostFile); strings.Count(string(again), "hello from the codex jail") != 1 {
		t.Errorf("the jailed prompt is in the host file %d times, want once:\n%s", strings.Count(string(again), "hello from the codex jail"), again)
	}
}
