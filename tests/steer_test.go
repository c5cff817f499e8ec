package tests

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The steering tests drive a real strict box from outside while it runs
// ('aisan allow', 'aisan deny'), and read what it did afterwards ('aisan
// report'). The box runs a loop that takes one shell command at a time
// from a file the test writes into the repository, so that each step
// happens in the box at a known point between the test's own.

// steerLoop is the box's loop: command N is .steer/go-N, its output
// goes to .steer/out-N; "exit" ends the box.
const steerLoop = `
i=0
while :; do
	i=$((i+1))
	while [ ! -e .steer/go-$i ]; do sleep 0.05; done
	c=$(cat .steer/go-$i)
	[ "$c" = exit ] && exit 0
	sh -c "$c" > .steer/out-$i.tmp 2>&1
	mv .steer/out-$i.tmp .steer/out-$i
done
`

// steeredBox is a strict box running steerLoop.
type steeredBox struct {
	t    *testing.T
	repo string
	env  []string
	n    int
	cmd  *exec.Cmd
	out  *syncBuffer
	slot string
}

// startSteered launches 'aisan run --strict OPTS -- sh -c steerLoop' in
// repo and waits until it runs.
func startSteered(t *testing.T, repo string, env, opts []string) *steeredBox {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(repo, ".steer"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(repo, ".git", "info", "exclude"), []byte(".steer/\n"), 0o644)
	args := append([]string{"run", "--strict"}, opts...)
	args = append(args, "--", "sh", "-c", steerLoop)
	cmd, out, e := slotLaunchAisan(t, repo, env, args...)
	b := &steeredBox{t: t, repo: repo, env: env, cmd: cmd, out: out, slot: e.Slot}
	t.Cleanup(func() {
		if b.cmd.ProcessState == nil {
			b.cmd.Process.Kill()
		}
	})
	return b
}

// do runs command c in the box and returns what it printed.
func (b *steeredBox) do(c string) string {
	b.t.Helper()
	b.n++
	dir := filepath.Join(b.repo, ".steer")
	tmp := filepath.Join(dir, "next.tmp")
	if err := os.WriteFile(tmp, []byte(c), 0o644); err != nil {
		b.t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "go-"+strconv.Itoa(b.n))); err != nil {
		b.t.Fatal(err)
	}
	var out []byte
	waitFor(b.t, 30*time.Second, "step "+strconv.Itoa(b.n)+" in the box ("+c+")", func() bool {
		var err error
		out, err = os.ReadFile(filepath.Join(dir, "out-"+strconv.Itoa(b.n)))
		return err == nil
	})
	return string(out)
}

// end ends the box's loop and waits for its launch.
func (b *steeredBox) end() {
	b.t.Helper()
	b.n++
	os.WriteFile(filepath.Join(b.repo, ".steer", "go-"+strconv.Itoa(b.n)), []byte("exit"), 0o644)
	if code := slotWait(b.t, b.cmd); code != 0 {
		b.t.Errorf("the steered box exited %d: %s", code, b.out.String())
	}
}

// steer runs 'aisan ARGS' from the host and fails unless it succeeds.
func (b *steeredBox) steer(args ...string) string {
	b.t.Helper()
	r := aisan(b.t, b.env, "", args...)
	if r.code != 0 {
		b.t.Fatalf("aisan %q: code %d, stdout %q, stderr %q", args, r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

// steerState is the "steer" of the box's 'aisan list --json' entry.
type steerState struct {
	Budget int64  `json:"budget"`
	Rate   string `json:"rate"`
	Hosts  []struct {
		Host    string `json:"host"`
		Granted bool   `json:"granted"`
	} `json:"hosts"`
	Backends map[string]struct {
		Calls  int64 `json:"calls"`
		Tokens struct {
			Input  int64 `json:"input"`
			Output int64 `json:"output"`
		} `json:"tokens"`
	} `json:"backends"`
}

func (b *steeredBox) state() steerState {
	b.t.Helper()
	r := aisan(b.t, b.env, "", "list", "--json")
	var entries []struct {
		Slot  string      `json:"slot"`
		Steer *steerState `json:"steer"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &entries); err != nil {
		b.t.Fatalf("aisan list --json: %v: %q", err, r.stdout)
	}
	for _, e := range entries {
		if e.Slot == b.slot {
			if e.Steer == nil {
				b.t.Fatalf("aisan list --json has no steer for the strict slot: %s", r.stdout)
			}
			return *e.Steer
		}
	}
	b.t.Fatalf("slot %s not in aisan list --json: %s", b.slot, r.stdout)
	return steerState{}
}

// tlsHost serves HTTPS on loopback with ca's certificate: /hello
// answers at once, /slow sends a byte every 100 ms for a minute.
func tlsHost(t *testing.T, ca testCA) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello from the host") })
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		for range 600 {
			if _, err := w.Write([]byte(".")); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	})
	srv := httptest.NewUnstartedServer(mux)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{ca.server}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return strconv.Itoa(srv.Listener.Addr().(*net.TCPAddr).Port)
}

// TestSteerGrantLapse: a strict box launched with no host is refused
// one, and told the exact command that grants it; granted from outside
// for a few seconds, it reaches the host, and a download it started
// under the grant is cut when the grant lapses; then it is refused
// again, all while it runs. Nothing inside a jail can grant: a
// deny-list jail's 'aisan allow' is refused by the box's host side, and
// the control socket is not in the box at all. Each grant, lapse, cut
// and refusal is in 'aisan logs --egress'.
func TestSteerGrantLapse(t *testing.T) {
	repo, _, env := strictRepo(t)
	ca := newTestCA(t, repo, "pkg.test", "evil.test")
	port := tlsHost(t, ca)
	env = append(env, "AISAN_NO_SCOPE=1", "AISAN_RESOLVE=pkg.test=127.0.0.1,evil.test=127.0.0.1")
	b := startSteered(t, repo, env, []string{"--env", "CA=" + ca.pemPath, "--env", "P=" + port})
	host := "pkg.test:" + port

	fetch := `curl -sS --max-time 10 --cacert "$CA" -o /dev/null -w 'code=%{http_code}' https://` + host + `/hello; echo " rc=$?"`
	// The refusal's body, through the proxy without a tunnel, is what
	// the box's model would read.
	refusal := `curl -sS --max-time 10 -x "$HTTPS_PROXY" http://` + host + `/hello`
	if out := b.do(fetch); !strings.Contains(out, "403") {
		t.Fatalf("a host the box was not given: %q, want a 403 from its proxy", out)
	}
	want := "aisan allow " + b.slot + " --host " + host
	if out := b.do(refusal); !strings.Contains(out, want) {
		t.Errorf("the refusal does not tell the box the command: %q, want %q", out, want)
	}

	// Nothing inside a jail can grant the box a host: not a deny-list
	// jail running aisan (aisan's run directory is empty there, so the
	// control socket is out of its reach; were it not, the server's peer
	// check would leave it unanswered), and not the box (which has no
	// such socket).
	jailed := aisanIn(t, repo, env, "", "run", "--", aisanBin, "allow", b.slot, "--host", "evil.test:"+port)
	if jailed.code == 0 || !strings.Contains(jailed.stderr, "nothing serves") && !strings.Contains(jailed.stderr, "answered nothing") {
		t.Errorf("aisan allow from a deny-list jail: code %d, stdout %q, stderr %q; want it refused unanswered", jailed.code, jailed.stdout, jailed.stderr)
	}
	if out := b.do(`ls "$XDG_RUNTIME_DIR"/aisan/*/control.sock 2>&1; find / -xdev -name control.sock 2>/dev/null | head -n1; echo done`); strings.Contains(out, "control.sock\n") && !strings.Contains(out, "No such file") {
		t.Errorf("the control socket is visible in the box: %q", out)
	}
	if out := b.do(`curl -sS --max-time 10 --cacert "$CA" -o /dev/null -w 'code=%{http_code}' https://evil.test:` + port + `/hello`); !strings.Contains(out, "403") {
		t.Errorf("the host a jail tried to grant is reachable: %q", out)
	}

	granted := time.Now()
	said := b.steer("allow", b.slot, "--host", host, "--for", "5s")
	if !strings.Contains(said, host+" granted") {
		t.Errorf("aisan allow said %q", said)
	}
	if out := b.do(fetch); !strings.Contains(out, "code=200 rc=0") {
		t.Fatalf("the granted host: %q, want it reached", out)
	}
	// A download under the grant, still running when it lapses.
	b.do(`(curl -sS --max-time 60 --cacert "$CA" https://` + host + `/slow > .steer/slow 2>&1; echo " rc=$?" >> .steer/slow) & echo started`)
	if st := b.state(); len(st.Hosts) != 1 || st.Hosts[0].Host != host || !st.Hosts[0].Granted {
		t.Errorf("list --json hosts while granted: %+v", st.Hosts)
	}
	var slow string
	waitFor(t, 15*time.Second, "the download cut when the grant lapsed", func() bool {
		b, _ := os.ReadFile(filepath.Join(repo, ".steer", "slow"))
		slow = string(b)
		return strings.Contains(slow, "rc=")
	})
	if took := time.Since(granted); took < 4*time.Second || strings.Contains(slow, "rc=0") || len(slow) > 700 {
		t.Errorf("the download under the grant ended after %v with %q; want it cut at the lapse (5 s)", took, slow)
	}
	if out := b.do(fetch); !strings.Contains(out, "403") {
		t.Errorf("the host after its grant lapsed: %q, want refused again", out)
	}
	waitFor(t, 5*time.Second, "list --json to show the lapsed grant gone", func() bool { return len(b.state().Hosts) == 0 })
	// Granted again without --for, then denied.
	b.steer("allow", b.slot, "--host", host)
	if out := b.do(fetch); !strings.Contains(out, "code=200") {
		t.Errorf("granted again: %q", out)
	}
	if said := b.steer("deny", b.slot, "--host", host); !strings.Contains(said, "denied") {
		t.Errorf("aisan deny said %q", said)
	}
	if out := b.do(fetch); !strings.Contains(out, "403") {
		t.Errorf("the host after 'aisan deny': %q, want refused", out)
	}
	if r := aisan(t, env, "", "deny", b.slot, "--host", host); r.code == 0 || !strings.Contains(r.stderr, "not on the box's host allow-list") {
		t.Errorf("denying a host not on the list: code %d, stderr %q", r.code, r.stderr)
	}
	logs := b.steer("logs", "--egress", b.slot)
	for _, w := range []string{"GRANT", "LAPSE", "DENY", "cut: the grant of " + host + " lapsed"} {
		if !strings.Contains(logs, w) {
			t.Errorf("the egress log lacks %q:\n%s", w, logs)
		}
	}
	b.end()
	if r := aisan(t, env, "", "allow", b.slot, "--host", host); r.code == 0 || !strings.Contains(r.stderr, "not running") {
		t.Errorf("aisan allow on an ended box: code %d, stderr %q", r.code, r.stderr)
	}
}

// usageStandIn is a Messages API stand-in on loopback HTTPS whose every
// answer reports 30 input and 20 output tokens: a JSON answer, or with
// "stream":true a stream whose usage comes in its events.
func usageStandIn(t *testing.T, ca testCA) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Stream bool }
		json.NewDecoder(r.Body).Decode(&req)
		if !req.Stream {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"type":"message","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":30,"output_tokens":20}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":30,\"output_tokens\":1}}}\n\n")
		io.WriteString(w, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":\"ok\"}}\n\n")
		io.WriteString(w, "event: message_delta\ndata: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":20}}\n\n")
		io.WriteString(w, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{ca.server}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv.URL
}

// modelBox prepares a strict box's Claude login and the model stand-in.
func modelBox(t *testing.T) (repo string, env []string) {
	t.Helper()
	repo, home, env := strictRepo(t)
	ca := newTestCA(t, repo, "127.0.0.1")
	os.MkdirAll(filepath.Join(home, ".claude"), 0o700)
	login := fmt.Sprintf(`{"claudeAiOauth":{"accessToken":"sk-ant-oat01-steer-host-token","refreshToken":"sk-ant-ort01-steer","expiresAt":%d,"scopes":["user:inference"],"subscriptionType":"max"}}`,
		time.Now().Add(24*time.Hour).UnixMilli())
	os.WriteFile(filepath.Join(home, ".claude", ".credentials.json"), []byte(login), 0o600)
	return repo, append(env, "AISAN_NO_SCOPE=1", "AISAN_ANTHROPIC_UPSTREAM="+usageStandIn(t, ca), "SSL_CERT_FILE="+ca.pemPath)
}

// modelCall is a model call from the box; it prints the status, the
// retry-after header when there is one, and the body.
func modelCall(stream bool) string {
	return `curl -sS --max-time 20 -D .steer/h -H 'content-type: application/json' -H "authorization: Bearer $CLAUDE_CODE_OAUTH_TOKEN" ` +
		`-d '{"model":"m","max_tokens":5,"stream":` + strconv.FormatBool(stream) + `,"messages":[{"role":"user","content":"hi"}]}' ` +
		`"$ANTHROPIC_BASE_URL/v1/messages" -o .steer/body -w 'status=%{http_code}'; grep -i '^retry-after' .steer/h | tr -d '\r'; echo; cat .steer/body`
}

// TestSteerBudget: a box launched with --budget 100 has its calls
// counted from the answers (a JSON answer, then a stream's events: 50
// tokens each); once they reach the budget, the next call is refused in
// the API's own error shape, saying how to raise it; 'aisan allow SLOT
// --budget +50' lets the next one through. 'aisan list' shows the
// tokens, 'logs --egress' each call's.
func TestSteerBudget(t *testing.T) {
	repo, env := modelBox(t)
	b := startSteered(t, repo, env, []string{"--egress", "anthropic", "--budget", "100"})
	if out := b.do(modelCall(false)); !strings.Contains(out, "status=200") {
		t.Fatalf("the first call: %q", out)
	}
	if out := b.do(modelCall(true)); !strings.Contains(out, "status=200") || !strings.Contains(out, "message_stop") {
		t.Fatalf("the streamed call: %q", out)
	}
	out := b.do(modelCall(false))
	if !strings.Contains(out, `"type":"error"`) || !strings.Contains(out, "budget is spent") || !strings.Contains(out, "aisan allow "+b.slot+" --budget +N") {
		t.Fatalf("the call past the budget: %q; want the API's error shape naming the command", out)
	}
	if !strings.Contains(out, "status=402") || !strings.Contains(out, `"billing_error"`) {
		// Claude shows a 403 as a login to renew, retries a 400, and
		// shows a 402's message as it is, once.
		t.Errorf("the call past the budget: %q; want 402 billing_error, which Claude shows as it is and does not retry", out)
	}
	// The slot's state file follows the calls within a moment.
	var st steerState
	waitFor(t, 5*time.Second, "list --json to show the calls", func() bool {
		st = b.state()
		return st.Backends["anthropic"].Calls == 2
	})
	if s := st.Backends["anthropic"]; st.Budget != 100 || s.Tokens.Input != 60 || s.Tokens.Output != 40 {
		t.Errorf("list --json steer: %+v", st)
	}
	if said := b.steer("allow", b.slot, "--budget", "+50"); !strings.Contains(said, "budget 150 tokens, 100 spent") {
		t.Errorf("aisan allow --budget +50 said %q", said)
	}
	if out := b.do(modelCall(false)); !strings.Contains(out, "status=200") {
		t.Errorf("the call after the budget was raised: %q", out)
	}
	if out := b.do(modelCall(false)); !strings.Contains(out, "budget is spent") {
		t.Errorf("the call past the raised budget: %q", out)
	}
	// The state file follows the calls within a moment.
	var list string
	waitFor(t, 5*time.Second, "aisan list to show the tokens", func() bool {
		list = b.steer("list")
		return strings.Contains(list, "TOKENS") && strings.Contains(list, "150 (in 90, out 60, cache 0) of 150")
	})
	logs := b.steer("logs", "--egress", b.slot)
	for _, w := range []string{"tokens 50 (input 30, output 20)", "budget is spent", "BUDGET"} {
		if !strings.Contains(logs, w) {
			t.Errorf("the egress log lacks %q:\n%s", w, logs)
		}
	}
	b.end()
	// The receipt: calls, tokens and refusals per backend, and where the
	// credential came from, by name only.
	rep := b.steer("report", b.slot)
	for _, w := range []string{"anthropic", "3 calls, 2 refused; tokens 150 (input 90, output 60)", ".claude/.credentials.json"} {
		if !strings.Contains(rep, w) {
			t.Errorf("aisan report lacks %q:\n%s", w, rep)
		}
	}
	if strings.Contains(rep, "sk-ant") {
		t.Errorf("a secret in the report:\n%s", rep)
	}
}

// TestSteerRate: a rate set with --rate holds (a burst of two, then
// refusals with retry-after), shows in explain and 'aisan list --json',
// and raised from outside with 'aisan allow SLOT --rate' lets the same
// burst through at once.
func TestSteerRate(t *testing.T) {
	repo, env := modelBox(t)
	ex := aisanIn(t, repo, env, "", "explain", "run", "--strict", "--egress", "anthropic", "--rate", "0.1/s,2", "--", "true")
	if ex.code != 0 || !strings.Contains(ex.stdout, "0.1/s,2") {
		t.Errorf("explain with --rate: code %d, stdout %q, stderr %q", ex.code, ex.stdout, ex.stderr)
	}
	b := startSteered(t, repo, env, []string{"--egress", "anthropic", "--rate", "0.1/s,2"})
	burst := strings.Repeat(modelCall(false)+"; echo; ", 4)
	out := b.do(burst)
	if n := strings.Count(out, "status=200"); n != 2 || strings.Count(out, "status=429") != 2 || !strings.Contains(strings.ToLower(out), "retry-after:") {
		t.Errorf("four calls at --rate 0.1/s,2: %d passed; want two, then two refusals with retry-after:\n%s", n, out)
	}
	if st := b.state(); st.Rate != "0.1/s,2" {
		t.Errorf("list --json rate %q", st.Rate)
	}
	if said := b.steer("allow", b.slot, "--rate", "50/s,20"); !strings.Contains(said, "rate 50/s,20") {
		t.Errorf("aisan allow --rate said %q", said)
	}
	// The allowance fills at the new rate, 20 in 0.4 s, not at once.
	time.Sleep(500 * time.Millisecond)
	if out := b.do(burst); strings.Count(out, "status=200") != 4 {
		t.Errorf("four calls after the rate was raised:\n%s", out)
	}
	if st := b.state(); st.Rate != "50/s,20" {
		t.Errorf("list --json rate after the change %q", st.Rate)
	}
	b.do("echo made > made-by-box.txt")
	b.end()
	// The launch returned before comparing the repository; the receipt
	// is finished beside it, and the report then names the file.
	waitFor(t, 15*time.Second, "the receipt to name the box's file", func() bool {
		r := aisan(t, env, "", "report", b.slot, "--json")
		return strings.Contains(r.stdout, `"path": "made-by-box.txt"`) && !strings.Contains(r.stdout, "changes_unknown")
	})
}

// TestSteerReport: the report of a strict launch that changed files,
// was refused a host and left a process behind (which 'aisan kill'
// then ended) lists each, with the box's peak memory and CPU time from
// its scope; --json parses to the same.
func TestSteerReport(t *testing.T) {
	repo, _, env := strictRepo(t)
	ca := newTestCA(t, repo, "far.test")
	port := tlsHost(t, ca)
	os.WriteFile(filepath.Join(repo, "tracked.txt"), []byte("one\n"), 0o644)
	hostGit(t, repo, env, "add", "tracked.txt", "ca.pem")
	hostGit(t, repo, env, "commit", "-q", "-m", "files")
	env = append(env, "AISAN_RESOLVE=far.test=127.0.0.1")
	script := `echo two >> tracked.txt; echo new > added.txt
curl -sS --max-time 10 --cacert "$CA" -o /dev/null https://far.test:$P/hello; echo "far rc=$?"
setsid sleep 300 < /dev/null > /dev/null 2>&1 &
sleep 0.3
exit 3`
	r := aisanIn(t, repo, env, "", "run", "--strict", "--env", "CA="+ca.pemPath, "--env", "P="+port, "--", "sh", "-c", script)
	if r.code != 3 || !strings.Contains(r.stdout, "far rc=56") {
		t.Fatalf("the launch: code %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	e := keeperOnly(t, env)
	// The keeper holds the box now, and takes grants for it.
	if g := aisan(t, env, "", "allow", e.Slot, "--host", "far.test:"+port); g.code != 0 || !strings.Contains(g.stdout, "granted") {
		t.Errorf("aisan allow on a kept box: code %d, stdout %q, stderr %q", g.code, g.stdout, g.stderr)
	}
	if k := aisan(t, env, "", "kill", e.Slot); k.code != 0 {
		t.Fatalf("aisan kill: %d %q", k.code, k.stderr)
	}
	waitFor(t, 20*time.Second, "the kept box to end", func() bool { return slotList(t, env)[e.Slot].State == "exited" })
	// The keeper writes the receipt as the box ends.
	var rep struct {
		Mode       string  `json:"mode"`
		Command    string  `json:"command"`
		ExitStatus *int    `json:"exit_status"`
		Duration   float64 `json:"duration_seconds"`
		Changes    []struct {
			Path, How string
		} `json:"changes"`
		Hosts []struct {
			Host    string `json:"host"`
			Reached int    `json:"reached"`
			Refused int    `json:"refused"`
		} `json:"hosts"`
		Left []struct {
			Name string `json:"name"`
		} `json:"left"`
		LeftEnd    string  `json:"left_end"`
		PeakMemory int64   `json:"peak_memory_bytes"`
		CPUSeconds float64 `json:"cpu_seconds"`
	}
	var j result
	waitFor(t, 10*time.Second, "the receipt's end", func() bool {
		j = aisan(t, env, "", "report", e.Slot, "--json")
		return j.code == 0 && strings.Contains(j.stdout, `"left_end"`) && !strings.Contains(j.stdout, "changes_unknown")
	})
	if err := json.Unmarshal([]byte(j.stdout), &rep); err != nil {
		t.Fatalf("report --json does not parse: %v\n%s", err, j.stdout)
	}
	changes := map[string]string{}
	for _, c := range rep.Changes {
		changes[c.Path] = c.How
	}
	if rep.Mode != "strict" || rep.Command != "sh" || changes["tracked.txt"] != "modified" || changes["added.txt"] != "added" || len(changes) != 2 {
		t.Errorf("report: mode %q, command %q, changes %v", rep.Mode, rep.Command, changes)
	}
	if len(rep.Hosts) != 1 || rep.Hosts[0].Host != "far.test:"+port || rep.Hosts[0].Refused != 1 || rep.Hosts[0].Reached != 0 {
		t.Errorf("report hosts: %+v", rep.Hosts)
	}
	if len(rep.Left) != 1 || rep.Left[0].Name != "sleep" || !strings.Contains(rep.LeftEnd, "ended by") {
		t.Errorf("report left behind: %+v, %q", rep.Left, rep.LeftEnd)
	}
	if rep.PeakMemory <= 0 || rep.CPUSeconds <= 0 {
		t.Errorf("report resources: peak %d B, CPU %.3f s; want both from the scope", rep.PeakMemory, rep.CPUSeconds)
	}
	text := aisan(t, env, "", "report", e.Slot)
	for _, w := range []string{"modified tracked.txt", "added    added.txt", "far.test:" + port, "refused 1", "sleep", "ended by", "peak memory", "GRANT far.test:" + port} {
		if !strings.Contains(text.stdout, w) {
			t.Errorf("aisan report lacks %q:\n%s", w, text.stdout)
		}
	}
	if strings.Contains(text.stdout+j.stdout, "sk-ant") {
		t.Errorf("a secret in the report")
	}
}

// TestSteerReportLine: a strict launch on a terminal ends with one line
// naming 'aisan report' for its slot; one whose output is not a terminal
// does not print it.
func TestSteerReportLine(t *testing.T) {
	repo, _, env := strictRepo(t)
	term := newTerminal(t, 24, 120)
	cmd := exec.Command(aisanBin, "run", "--strict", "--", "true")
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), append(env, "AISAN_NO_SCOPE=1")...)
	term.start(cmd)
	term.expect("what the box did (files, hosts, tokens, processes): aisan report proj-")
	if r := strict(t, repo, env, nil, "true"); r.code != 0 || strings.Contains(r.stderr, "aisan report") {
		t.Errorf("off a terminal: code %d, stderr %q; want no pointer to the report", r.code, r.stderr)
	}
}

// TestSteerDenyAcrossHandover: when a box's agent exits leaving a
// process behind, a keeper takes the box over from the aisan that
// launched it. Each 'aisan deny' sent meanwhile, one after another
// across that moment, holds after it: no host the command said was
// denied is on the keeper's list, or reachable from what is left in
// the box.
func TestSteerDenyAcrossHandover(t *testing.T) {
	repo, _, env := strictRepo(t)
	const n = 60
	var names, resolve, opts []string
	for i := 1; i <= n; i++ {
		h := fmt.Sprintf("h%d.test", i)
		names = append(names, h)
		resolve = append(resolve, h+"=127.0.0.1")
	}
	ca := newTestCA(t, repo, names...)
	port := tlsHost(t, ca)
	for _, h := range names {
		opts = append(opts, "--allow-host", h+":"+port)
	}
	env = append(env, "AISAN_NO_SCOPE=1", "AISAN_RESOLVE="+strings.Join(resolve, ","))
	b := startSteered(t, repo, env, append([]string{"--env", "CA=" + ca.pemPath, "--env", "P=" + port}, opts...))
	t.Cleanup(func() { aisan(t, env, "", "kill", b.slot) })
	// Left behind: once the denials are done, it tries every host.
	b.do(`setsid sh -c 'while [ ! -e .steer/denied ]; do sleep 0.1; done
for i in $(seq 1 ` + strconv.Itoa(n) + `); do curl -sS --max-time 5 --cacert "$CA" -o /dev/null -w "h$i.test code=%{http_code}\n" https://h$i.test:$P/hello 2>/dev/null; done > .steer/after.tmp
mv .steer/after.tmp .steer/after; sleep 300' < /dev/null > /dev/null 2>&1 &
echo started`)
	b.n++
	os.WriteFile(filepath.Join(repo, ".steer", "go-"+strconv.Itoa(b.n)), []byte("exit"), 0o644)
	denied := map[string]bool{}
	for _, h := range names {
		if r := aisan(t, env, "", "deny", b.slot, "--host", h+":"+port); r.code == 0 && strings.Contains(r.stdout, "denied") {
			denied[h+":"+port] = true
		}
	}
	waitFor(t, 20*time.Second, "the keeper to hold the box", func() bool { return slotList(t, env)[b.slot].State == "background" })
	if len(denied) != n {
		t.Errorf("%d of %d 'aisan deny' succeeded; want each answered, by the launch's aisan or its keeper", len(denied), n)
	}
	for _, h := range b.state().Hosts {
		if denied[h.Host] {
			t.Errorf("%s: 'aisan deny' said it was denied, and it is on the kept box's list", h.Host)
		}
	}
	os.WriteFile(filepath.Join(repo, ".steer", "denied"), nil, 0o644)
	var after string
	waitFor(t, 60*time.Second, "the left process to try the hosts", func() bool {
		data, err := os.ReadFile(filepath.Join(repo, ".steer", "after"))
		after = string(data)
		return err == nil
	})
	for l := range strings.Lines(after) {
		if f := strings.Fields(l); len(f) == 2 && f[1] == "code=200" && denied[f[0]+":"+port] {
			t.Errorf("%s: 'aisan deny' said it was denied, and the box reaches it after the handover", f[0])
		}
	}
}
