package control

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aisan-dev/aisan/jail/jailtest"
)

// requestCases are request lines and what ParseRequest says of each ("" for
// a request it takes); they seed FuzzParseRequest.
var requestCases = []struct {
	line string
	err  string
}{
	{`{"proto":"aisan-control/1","op":"allow-host","host":"pkg.example.com"}`, ""},
	{`{"proto":"aisan-control/1","op":"charge","spent":"{\"backends\":{}}"}`, ""},
	{`{"proto":"aisan-control/1","op":"charge"}`, "takes spent only"},
	{`{"proto":"aisan-control/1","op":"charge","spent":"{}","tokens":5}`, "takes spent only"},
	{`{"proto":"aisan-control/1","op":"allow-host","host":"*.example.com:8443","for_ms":600000}`, ""},
	{`{"proto":"aisan-control/1","op":"deny-host","host":"pkg.example.com"}`, ""},
	{`{"proto":"aisan-control/1","op":"budget","tokens":500000}`, ""},
	{`{"proto":"aisan-control/1","op":"budget","tokens":1000,"add":true}`, ""},
	{`{"proto":"aisan-control/1","op":"budget"}`, ""},
	{`{"proto":"aisan-control/1","op":"rate","rate":0.5,"burst":10}`, ""},
	{`{"proto":"aisan-control/1","op":"rate","rate":5}`, ""},
	{`{"proto":"aisan-control/1","op":"status"}`, ""},
	{`{"proto":"aisan-control/2","op":"status"}`, "protocol"},
	{`{"op":"status"}`, "protocol"},
	{`{"proto":"aisan-control/1","op":"reboot"}`, "unknown operation"},
	{`{"proto":"aisan-control/1","op":"status","extra":1}`, "unknown field"},
	{`{"proto":"aisan-control/1","op":"status","host":"x.test"}`, "takes no fields"},
	{`{"proto":"aisan-control/1","op":"allow-host"}`, "needs one host"},
	{`{"proto":"aisan-control/1","op":"allow-host","host":"a b"}`, "needs one host"},
	{`{"proto":"aisan-control/1","op":"allow-host","host":"x.test","tokens":5}`, "takes host and for_ms only"},
	{`{"proto":"aisan-control/1","op":"allow-host","host":"x.test","for_ms":-1}`, "out of bounds"},
	{`{"proto":"aisan-control/1","op":"deny-host","host":"x.test","for_ms":5}`, "takes host only"},
	{`{"proto":"aisan-control/1","op":"budget","tokens":-5}`, "out of bounds"},
	{`{"proto":"aisan-control/1","op":"budget","add":true}`, "out of bounds"},
	{`{"proto":"aisan-control/1","op":"budget","tokens":5,"rate":1}`, "takes tokens and add only"},
	{`{"proto":"aisan-control/1","op":"rate","burst":5}`, "out of bounds"},
	{`{"proto":"aisan-control/1","op":"rate","rate":-1}`, "out of bounds"},
	{`{"proto":"aisan-control/1","op":"status"} {}`, "data after"},
	{`[]`, "cannot unmarshal"},
	{``, "EOF"},
	{`{"proto":"aisan-control/1","op":"allow-host","host":"` + strings.Repeat("a", MaxLine) + `"}`, "longer than"},
}

func TestParseRequest(t *testing.T) {
	for _, c := range requestCases {
		_, err := ParseRequest([]byte(c.line))
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%.80s: %v", c.line, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err) || !errors.Is(err, ErrRequest)):
			t.Errorf("%.80s: err %v, want %q", c.line, err, c.err)
		}
	}
}

// FuzzParseRequest: any line parses without a panic, and a request it
// takes is one the client writes again the same.
func FuzzParseRequest(f *testing.F) {
	for _, c := range requestCases {
		f.Add([]byte(c.line))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		r, err := ParseRequest(line)
		if err != nil {
			return
		}
		again, err := ParseRequest(encode(r)[:len(encode(r))-1])
		if err != nil || again != r {
			t.Fatalf("%q parsed to %+v, which reads back as %+v, %v", line, r, again, err)
		}
	})
}

func TestJudge(t *testing.T) {
	for _, c := range []struct {
		p   Peer
		err string
	}{
		{Peer{UID: 1000, PID: 42, PIDNS: 7}, ""},
		{Peer{UID: 1001, PID: 42, PIDNS: 7}, "not the box's user"},
		{Peer{UID: 1000, PID: 0, PIDNS: 0}, "outside this PID namespace"},
		{Peer{UID: 1000, PID: 42, PIDNS: 0}, "outside this PID namespace"},
		{Peer{UID: 1000, PID: 42, PIDNS: 8}, "another PID namespace"},
	} {
		err := Judge(c.p, 1000, 7)
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%+v: %v, want %q", c.p, err, c.err)
		}
	}
}

// serveEcho serves a handler that says what it got, and returns the
// socket and the refusals the server saw.
func serveEcho(t *testing.T, mode os.FileMode) (string, func() []error) {
	dir := t.TempDir()
	os.Chmod(filepath.Dir(dir), 0o755)
	os.Chmod(dir, 0o755)
	path := filepath.Join(dir, "control.sock")
	ln, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode %v %v", fi.Mode(), err)
	}
	os.Chmod(path, mode)
	refused := make(chan error, 10)
	s := Serve(ln, func(r Request) Response {
		if r.Host == "panic.test" {
			panic("handler bug")
		}
		return Response{OK: true, Text: fmt.Sprintf("%s %s", r.Op, r.Host)}
	}, func(err error) { refused <- err })
	t.Cleanup(s.Close)
	return path, func() []error {
		var out []error
		for {
			select {
			case e := <-refused:
				out = append(out, e)
			default:
				return out
			}
		}
	}
}

func TestCallRoundTrip(t *testing.T) {
	path, refused := serveEcho(t, 0o600)
	resp, err := Call(path, Request{Op: OpAllowHost, Host: "pkg.example.com"})
	if err != nil || !resp.OK || resp.Text != "allow-host pkg.example.com" {
		t.Fatalf("%+v %v", resp, err)
	}
	resp, err = Call(path, Request{Op: OpStatus, Host: "x"})
	if err != nil || resp.OK || !strings.Contains(resp.Error, "takes no fields") {
		t.Fatalf("a bad request: %+v %v", resp, err)
	}
	resp, err = Call(path, Request{Op: OpDenyHost, Host: "panic.test"})
	if err != nil || resp.OK || !strings.Contains(resp.Error, "handler bug") {
		t.Fatalf("a handler panic: %+v %v", resp, err)
	}
	if r := refused(); len(r) != 0 {
		t.Errorf("our own calls were refused: %v", r)
	}
	if _, err := Call(filepath.Join(t.TempDir(), "none.sock"), Request{Op: OpStatus}); !errors.Is(err, ErrNoBox) {
		t.Errorf("no socket: %v", err)
	}
}

// TestInheritAndDisown: a keeper serves the socket the wrapper made; the
// wrapper's close leaves the file, the keeper's removes it.
func TestInheritAndDisown(t *testing.T) {
	path := filepath.Join(t.TempDir(), "control.sock")
	ln, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := ln.File()
	if err != nil {
		t.Fatal(err)
	}
	ln.Disown()
	ln.Close()
	if _, err := os.Lstat(path); err != nil {
		t.Fatalf("a disowned socket's file went: %v", err)
	}
	kept, err := Inherit(f, path)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	s := Serve(kept, func(Request) Response { return Response{OK: true, Text: "keeper"} }, nil)
	if resp, err := Call(path, Request{Op: OpStatus}); err != nil || resp.Text != "keeper" {
		t.Fatalf("%+v %v", resp, err)
	}
	s.Close()
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the keeper's close left the socket: %v", err)
	}
}

// peerHelper is the test binary run as a peer: it calls the socket in
// CONTROL_TEST_SOCK and prints what came back.
func TestMain(m *testing.M) {
	if sock := os.Getenv("CONTROL_TEST_SOCK"); sock != "" {
		resp, err := Call(sock, Request{Op: OpAllowHost, Host: "evil.test"})
		fmt.Printf("ok=%v err=%v\n", resp.OK, err)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestRefusesAnotherPIDNamespace: a process of the same user in a PID
// namespace of its own, as in every jail and box, is refused even with
// the socket open to it, and the refusal is reported.
func TestRefusesAnotherPIDNamespace(t *testing.T) {
	unshare, err := exec.LookPath("unshare")
	jailtest.Need(t, "unshare(1), to start a process in a PID namespace of its own", err)
	path, refused := serveEcho(t, 0o600)
	cmd := exec.Command(unshare, "--user", "--map-current-user", "--pid", "--fork", os.Args[0])
	cmd.Env = append(os.Environ(), "CONTROL_TEST_SOCK="+path)
	out, err := cmd.CombinedOutput()
	if err != nil {
		jailtest.Need(t, "an unprivileged user and PID namespace", fmt.Errorf("%v: %s", err, out))
	}
	if !strings.Contains(string(out), "ok=false") || !strings.Contains(string(out), "answered nothing") {
		t.Fatalf("a peer in another PID namespace: %s", out)
	}
	if r := refused(); len(r) != 1 || !strings.Contains(r[0].Error(), "another PID namespace") && !strings.Contains(r[0].Error(), "outside this PID namespace") {
		t.Errorf("refusals seen: %v", r)
	}
}

// TestRefusesAnotherUser: with the socket's mode opened to everyone, a
// process of another user is still refused. It needs root to start one.
func TestRefusesAnotherUser(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("starting a process as another user needs root; the socket's 0600 mode keeps other users out besides")
	}
	path, refused := serveEcho(t, 0o666)
	os.Chmod(filepath.Dir(path), 0o755)
	bin := filepath.Join(filepath.Dir(path), "control.test")
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(bin, data, 0o755)
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "CONTROL_TEST_SOCK="+path)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !strings.Contains(string(out), "ok=false") {
		t.Fatalf("another user: %s", out)
	}
	if r := refused(); len(r) != 1 || !strings.Contains(r[0].Error(), "not the box's user") {
		t.Errorf("refusals seen: %v", r)
	}
}

func TestResponseJSON(t *testing.T) {
	b := encode(Response{OK: true, State: json.RawMessage(`{"a":1}`)})
	if string(b) != "{\"ok\":true,\"state\":{\"a\":1}}\n" {
		t.Errorf("%s", b)
	}
}

// TestPauseHandsOver: a paused server takes no connection: one made
// meanwhile is answered by a server on a duplicate of the socket (a
// keeper), or by the first once resumed.
func TestPauseHandsOver(t *testing.T) {
	path := filepath.Join(t.TempDir(), "control.sock")
	ln, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	first := Serve(ln, func(Request) Response { return Response{OK: true, Text: "first"} }, nil)
	t.Cleanup(first.Close)
	first.Pause()
	first.Pause()
	f, err := ln.File()
	if err != nil {
		t.Fatal(err)
	}
	f.Fd() // as exec hands it on: blocking
	kept, err := Inherit(f, path)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	kept.Disown()
	keeper := Serve(kept, func(Request) Response { return Response{OK: true, Text: "keeper"} }, nil)
	for range 20 {
		if resp, err := Call(path, Request{Op: OpStatus}); err != nil || resp.Text != "keeper" {
			t.Fatalf("while paused: %+v %v, want the keeper's answer", resp, err)
		}
	}
	keeper.Close()
	// A keeper that failed leaves the socket blocking.
	g, _ := ln.File()
	g.Fd()
	g.Close()
	first.Resume()
	if resp, err := Call(path, Request{Op: OpStatus}); err != nil || resp.Text != "first" {
		t.Fatalf("resumed: %+v %v", resp, err)
	}
	closed := make(chan struct{})
	go func() { first.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close after Resume hangs")
	}
}
