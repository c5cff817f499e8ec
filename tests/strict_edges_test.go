package tests

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// These tests attack a real strict box's runtime surfaces from inside,
// as an agent that wanted out would: descriptors its caller left open,
// the budget across the hand-over to a keeper, text it writes that the
// next launch prints.

// lineStub serves a host Unix socket that answers each line with
// "host-socket:" and the line.
func lineStub(t *testing.T) string {
	return serveUnix(t, "host", func(c net.Conn) {
		sc := bufio.NewScanner(c)
		for sc.Scan() {
			fmt.Fprintf(c, "host-socket:%s\n", sc.Text())
		}
	})
}

// TestStrictCallerDescriptors: a strict box starts from nothing of the
// host's, so no descriptor the launching process holds open without
// close-on-exec may reach the agent: here a connection to a host Unix
// socket (a host service outside the box's egress list) and a host
// file the box's mounts do not show. An IDE, terminal multiplexer or
// orchestrating agent leaks such descriptors into the shell that runs
// 'aisan claude --strict'.
func TestStrictCallerDescriptors(t *testing.T) {
	repo, _, env := strictRepo(t)
	secretDir := t.TempDir()
	secret := filepath.Join(secretDir, "host-secret.txt")
	os.WriteFile(secret, []byte("host-secret-value\n"), 0o600)
	sf, err := os.Open(secret)
	if err != nil {
		t.Fatal(err)
	}
	defer sf.Close()
	c, err := net.Dial("unix", lineStub(t))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cf, err := c.(*net.UnixConn).File()
	if err != nil {
		t.Fatal(err)
	}
	defer cf.Close()
	script := `ls -l /proc/self/fd | sed 's/^/fd: /'; cat /proc/self/fd/39 2>&1; echo ping >&40 && { read -t 3 l <&40; echo "said: $l"; }`
	cmd := exec.Command(aisanBin, "run", "--strict", "--", "bash", "-c", script)
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), append(env, "AISAN_NO_SCOPE=1")...)
	extra := make([]*os.File, 38)
	extra[36], extra[37] = sf, cf // descriptors 39 and 40
	cmd.ExtraFiles = extra
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	isolate(cmd)
	cmd.Run()
	t.Logf("box said:\n%s\nstderr: %s", out.String(), errb.String())
	if !strings.Contains(out.String(), "fd: ") {
		t.Fatalf("the box did not run the probe: %q %q", out.String(), errb.String())
	}
	if strings.Contains(out.String(), "host-secret-value") {
		t.Errorf("the box read a host file through a descriptor its launcher held")
	}
	if strings.Contains(out.String(), "host-socket:ping") {
		t.Errorf("the box talked to a host Unix socket through a descriptor its launcher held")
	}
}

// slowUsageStandIn is usageStandIn whose every answer takes delay: a
// JSON answer reporting 30 input and 20 output tokens.
func slowUsageStandIn(t *testing.T, ca testCA, delay time.Duration) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		time.Sleep(delay)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"type":"message","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":30,"output_tokens":20}}`)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{ca.server}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestStrictBudgetAcrossKeeper: the calls a box has in flight when its
// agent exits and a keeper takes the box over are answered by the
// wrapper while it drains; the keeper starts from the count taken
// before. Unless the wrapper charges the keeper with them, their tokens
// count against no budget and show nowhere ('aisan list', the receipt),
// and an agent that fires its largest prompts (up to the rate's burst
// of 60) and exits has them all for free. Here, with --budget 100 and
// 50 tokens a call, the call in flight at the hand-over and one under
// the keeper reach 100: a third call is refused.
func TestStrictBudgetAcrossKeeper(t *testing.T) {
	repo, home, env := strictRepo(t)
	ca := newTestCA(t, repo, "127.0.0.1")
	os.MkdirAll(filepath.Join(home, ".claude"), 0o700)
	login := fmt.Sprintf(`{"claudeAiOauth":{"accessToken":"sk-ant-oat01-rt-host-token","refreshToken":"sk-ant-ort01-rt","expiresAt":%d,"scopes":["user:inference"],"subscriptionType":"max"}}`,
		time.Now().Add(24*time.Hour).UnixMilli())
	os.WriteFile(filepath.Join(home, ".claude", ".credentials.json"), []byte(login), 0o600)
	env = append(env, "AISAN_NO_SCOPE=1", "AISAN_ANTHROPIC_UPSTREAM="+slowUsageStandIn(t, ca, 700*time.Millisecond), "SSL_CERT_FILE="+ca.pemPath)
	os.MkdirAll(filepath.Join(repo, ".rt"), 0o755)
	os.WriteFile(filepath.Join(repo, ".git", "info", "exclude"), []byte(".rt/\n.steer/\n"), 0o644)
	call := func(n string) string {
		return "{ " + strings.ReplaceAll(strings.ReplaceAll(modelCall(false), ".steer/h", ".rt/h"+n), ".steer/body", ".rt/body"+n) + "; } > .rt/" + n + ".tmp; mv .rt/" + n + ".tmp .rt/" + n
	}
	left := call("a") + "; sleep 3; " + call("b") + "; " + call("c") + "; sleep 300"
	script := "setsid sh -c '" + strings.ReplaceAll(left, "'", `'\''`) + "' < /dev/null > /dev/null 2>&1 &\nsleep 0.3\nexit 0"
	r := aisanIn(t, repo, env, "", "run", "--strict", "--egress", "anthropic", "--budget", "100", "--", "sh", "-c", script)
	if r.code != 0 {
		t.Fatalf("the launch: code %d, stderr %q", r.code, r.stderr)
	}
	e := keeperOnly(t, env)
	waitFor(t, 30*time.Second, "the left process's three calls", func() bool {
		_, err := os.Stat(filepath.Join(repo, ".rt", "c"))
		return err == nil
	})
	out := map[string]string{}
	for _, n := range []string{"a", "b", "c"} {
		b, _ := os.ReadFile(filepath.Join(repo, ".rt", n))
		out[n] = string(b)
	}
	t.Logf("calls: %q", out)
	var st struct {
		Tokens struct{ Input, Output int64 }
	}
	for _, x := range slotList(t, env) {
		_ = x
	}
	list := aisan(t, env, "", "list")
	t.Logf("aisan list:\n%s", list.stdout)
	_ = st
	aisan(t, env, "", "kill", e.Slot)
	if !strings.Contains(out["a"], "status=200") || !strings.Contains(out["b"], "status=200") {
		t.Fatalf("the first two calls did not pass: %q", out)
	}
	if strings.Contains(out["c"], "status=200") {
		t.Errorf("a call past --budget 100 (two calls of 50 tokens answered before it) was let through: the call in flight at the hand-over to the keeper was never counted")
	}
}

// TestStrictNoteEscapes: a box writes the repository's go.mod (no
// protected path: the box writes it for real) with a replace directive
// whose module path is a Go string holding terminal escapes and a
// carriage return; the user's next strict launch in that repository
// names it in its "go cannot build there" note, raw, on the user's
// terminal: an OSC that retitles the window, a screen clear and a forged
// aisan line.
func TestStrictNoteEscapes(t *testing.T) {
	repo, _, env := strictRepo(t)
	gomod := `module example.com/m

replace "\x1b]0;owned\x07\x1b[2J\raisan:\x20note:\x20all\x20clear" => /var
`
	r := strict(t, repo, env, nil, "sh", "-c", `cat > go.mod`+" <<'EOF'\n"+gomod+"EOF\n")
	if r.code != 0 {
		t.Fatalf("the box: %d %q", r.code, r.stderr)
	}
	r = strict(t, repo, env, nil, "true")
	t.Logf("next launch's stderr: %q", r.stderr)
	if strings.ContainsAny(r.stderr, "\x1b\x07\r") {
		t.Errorf("the next launch printed the box's escapes raw: %q", r.stderr)
	}
}
