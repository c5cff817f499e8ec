package strictbox

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/control"
	"github.com/aisan-dev/aisan/jail/strictbox/boxstate"
)

// TestSeedStateClearsInstructionPoints: what an earlier box left where
// the user's instructions are bound (a dangling link, a file where a
// directory goes) is removed, or every later launch would fail on it;
// what fits stays, and the link's target is untouched.
func TestSeedStateClearsInstructionPoints(t *testing.T) {
	dir := t.TempDir()
	config, state := filepath.Join(dir, "config"), filepath.Join(dir, "state")
	for _, d := range []string{"skills", "agents", "commands"} {
		os.MkdirAll(filepath.Join(config, d), 0o700)
	}
	os.WriteFile(filepath.Join(config, "CLAUDE.md"), []byte("mine"), 0o600)
	os.MkdirAll(filepath.Join(state, "commands"), 0o700)
	os.WriteFile(filepath.Join(state, "commands", "box.md"), []byte("the box's"), 0o600)
	os.Symlink("../../nowhere", filepath.Join(state, "skills"))
	os.WriteFile(filepath.Join(state, "agents"), []byte("a file"), 0o600)
	victim := filepath.Join(dir, "victim.md")
	os.WriteFile(victim, []byte("keep"), 0o600)
	os.Symlink(victim, filepath.Join(state, "CLAUDE.md"))
	o := jail.StrictOptions{Kind: jail.KindClaude, StateDir: state, ConfigDir: config, Cwd: "/w/r", Repo: "/w/r",
		Instructions: []string{"CLAUDE.md", "agents", "commands", "skills"}}
	if _, err := seedState(o, nil); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"skills", "agents", "CLAUDE.md"} {
		if _, err := os.Lstat(filepath.Join(state, p)); err == nil {
			t.Errorf("%s, which bwrap could not mount the user's %s on, is left", filepath.Join(state, p), p)
		}
	}
	if _, err := os.Stat(filepath.Join(state, "commands", "box.md")); err != nil {
		t.Errorf("a directory where a directory goes was cleared: %v", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("a link's target was written: %q", b)
	}
}

// TestSeedStateNeverFollowsALink: a symlink the box planted in its state
// directory is replaced, its target untouched; a regular file that does
// not parse is refused, not overwritten.
func TestSeedStateNeverFollowsALink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("keep"), 0o600)
	state := filepath.Join(dir, "state")
	os.Mkdir(state, 0o700)
	os.Symlink(victim, filepath.Join(state, ".claude.json"))
	o := jail.StrictOptions{Kind: jail.KindClaude, StateDir: state, Cwd: "/w/r", Repo: "/w/r", SkipPermissions: true}
	if _, err := seedState(o, nil); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Fatalf("the link's target was written: %q", b)
	}
	b, err := os.ReadFile(filepath.Join(state, ".claude.json"))
	if err != nil || !strings.Contains(string(b), `"hasCompletedOnboarding": true`) || !strings.Contains(string(b), `"/w/r"`) {
		t.Fatalf("seed %q %v", b, err)
	}
	if b, _ := os.ReadFile(filepath.Join(state, "settings.json")); !strings.Contains(string(b), "skipDangerousModePermissionPrompt") {
		t.Fatalf("settings %q", b)
	}
	os.WriteFile(filepath.Join(state, ".claude.json"), []byte("{broken"), 0o600)
	if _, err := seedState(o, nil); err == nil || !strings.Contains(err.Error(), "does not parse") {
		t.Fatalf("broken file: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(state, ".claude.json")); string(b) != "{broken" {
		t.Fatalf("broken file overwritten: %q", b)
	}
	codex := filepath.Join(dir, "codex")
	os.Mkdir(codex, 0o700)
	os.WriteFile(filepath.Join(codex, "config.toml"), []byte("model = \"m\"\n"), 0o600)
	if _, err := seedState(jail.StrictOptions{Kind: jail.KindCodex, StateDir: codex, Cwd: "/w/r", Repo: "/w/r"}, nil); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(codex, "config.toml")); !strings.Contains(string(b), "trust_level = 'trusted'") || !strings.Contains(string(b), "model = 'm'") {
		t.Fatalf("codex config %q", b)
	}
}

// TestServeKeepResume: a strict box's built-in endpoint is served on its
// socket, its variables are the box's; a keeper gets one socket per
// endpoint, the control socket and the state, and serves the same
// endpoint on it (here the host allow-list proxy, which needs no
// credential), with the host granted through the control socket before
// the hand-over and the budget set, while the wrapper's share drains;
// the keeper's end says what it refused.
func TestServeKeepResume(t *testing.T) {
	t.Setenv("AISAN_HOME", t.TempDir())
	up, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	go func() {
		for {
			c, err := up.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	granted := fmt.Sprintf("c.example:%d", up.Addr().(*net.TCPAddr).Port)
	t.Setenv("AISAN_RESOLVE", "c.example=127.0.0.1")
	dir, err := os.MkdirTemp("", "sb")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	r := EgressRequest{Name: "hosts", Backend: "hosts", Param: "a.example"}
	eps, err := planEgress([]EgressRequest{r}, dir, false, "s-1")
	if err != nil {
		t.Fatal(err)
	}
	said := []string{}
	say := func(_ jail.Level, text string) { said = append(said, text) }
	b := &Box{egress: newBoxEgress(false, newSteer("s-1", Options{Budget: 1000}, nil))}
	s := &jail.Session{Slot: "s-1", SlotDir: dir, Request: jail.Request{Say: say}, Spec: jail.Spec{Egress: eps}, Strict: &jail.StrictPlan{}}
	svc, err := b.Serve(context.Background(), s, true)
	if err != nil {
		t.Fatal(err)
	}
	if env := strings.Join(svc.Env(), " "); !strings.Contains(env, "HTTPS_PROXY=http://127.0.0.1:") {
		t.Fatalf("env %q", env)
	}
	ctl := filepath.Join(dir, "control.sock")
	if resp, err := control.Call(ctl, control.Request{Op: control.OpAllowHost, Host: granted}); err != nil || !resp.OK {
		t.Fatalf("granting through the control socket: %+v %v", resp, err)
	}
	if resp, err := control.Call(ctl, control.Request{Op: control.OpBudget, Tokens: 500, Add: true}); err != nil || !resp.OK || resp.Text != "budget 1500 tokens, 0 spent" {
		t.Fatalf("raising the budget: %+v %v", resp, err)
	}
	k, err := svc.Keep()
	if err != nil {
		t.Fatal(err)
	}
	if k.Mode != "strict" || len(k.Files) != 2 || k.Env == nil {
		t.Fatalf("kept %+v", k)
	}
	kept, err := b.Resume(k, say)
	for _, f := range k.Files {
		f.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	svc.Drain(ctx)
	cancel()
	// The keeper's proxy answers on the socket the wrapper listened on.
	c, err := net.Dial("unix", eps[0].Socket)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "CONNECT b.example:443 HTTP/1.1\r\nHost: b.example:443\r\n\r\n")
	line, _ := bufio.NewReader(c).ReadString('\n')
	c.Close()
	if !strings.Contains(line, " 403 ") {
		t.Fatalf("the keeper's proxy answered %q", line)
	}
	// The grant made through the wrapper holds in the keeper, and the
	// keeper answers on the control socket, with the budget as raised.
	c, err = net.Dial("unix", eps[0].Socket)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", granted, granted)
	line, _ = bufio.NewReader(c).ReadString('\n')
	c.Close()
	if !strings.Contains(line, " 200 ") {
		t.Fatalf("the keeper refused the granted host: %q", line)
	}
	resp, err := control.Call(ctl, control.Request{Op: control.OpStatus})
	var st State
	if err != nil || json.Unmarshal(resp.State, &st) != nil || st.Budget != 1500 || len(st.Hosts) != 2 {
		t.Fatalf("the keeper's status: %+v %v %+v", resp, err, st)
	}
	kept.Stop()
	if _, err := control.Call(ctl, control.Request{Op: control.OpStatus}); !errors.Is(err, control.ErrNoBox) {
		t.Errorf("the keeper's control socket answers after its end: %v", err)
	}
	if st, err := boxstate.Read("s-1"); err != nil || st.Budget != 1500 {
		t.Errorf("the state file: %+v %v", st, err)
	}
	// The keeper's end says what its services refused (the CONNECT
	// above), and nothing of a held set the box did not have.
	if len(said) != 1 || !strings.HasPrefix(said[0], "strict mode refused 1 request of this box's") {
		t.Errorf("the keeper's end said %q", said)
	}
	// A hand-over with another number of sockets is refused: the wrapper
	// then keeps serving.
	k.Files = nil
	if _, err := b.Resume(k, say); err == nil {
		t.Error("a hand-over of no socket for one endpoint was taken")
	}
}
