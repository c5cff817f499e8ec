package hostproxy

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// connectTo opens a CONNECT tunnel through the proxy at sock and returns
// the status line and the connection (nil when refused).
func connectTo(t *testing.T, sock, target string) (string, net.Conn, string) {
	t.Helper()
	c, err := net.Dial("unix", sock)
	must(t, err)
	c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	br := bufio.NewReader(c)
	line, _ := br.ReadString('\n')
	if strings.HasPrefix(line, "HTTP/1.1 200 ") {
		br.ReadString('\n')
		c.SetDeadline(time.Time{})
		return line, c, ""
	}
	rest, _ := io.ReadAll(br)
	c.Close()
	return line, nil, string(rest)
}

// echoServer accepts connections on loopback and echoes each line back.
func echoServer(t *testing.T) uint16 {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); io.Copy(c, c) }()
		}
	}()
	return uint16(ln.Addr().(*net.TCPAddr).Port)
}

// TestGrantThenLapse: a host refused (the refusal naming the command
// that grants it), granted, reached, then lapsed: the open connection is
// cut and the host refused again; each step is in the audit log.
func TestGrantThenLapse(t *testing.T) {
	port := echoServer(t)
	target := hostPort("late.test", port)
	sink := &memSink{}
	sock, p := startProxy(t, nil, "late.test=127.0.0.1", sink)
	p.cfg.Slot = "proj-1a2b3c4d-claude"

	line, _, body := connectTo(t, sock, target)
	if !strings.Contains(line, "403") || !strings.Contains(body, "aisan allow proj-1a2b3c4d-claude --host "+target) {
		t.Fatalf("before the grant: %q %q", line, body)
	}
	pt, err := ParsePattern(target)
	must(t, err)
	said := p.Grant(pt, time.Now().Add(700*time.Millisecond))
	if !strings.Contains(said, "granted") {
		t.Errorf("Grant said %q", said)
	}
	line, c, _ := connectTo(t, sock, target)
	if c == nil {
		t.Fatalf("after the grant: %q", line)
	}
	defer c.Close()
	io.WriteString(c, "ping\n")
	if got, _ := bufio.NewReader(c).ReadString('\n'); got != "ping\n" {
		t.Fatalf("through the granted tunnel: %q", got)
	}
	// The grant lapses: the open tunnel is cut.
	if !cut(c) {
		t.Fatal("the tunnel outlived its grant")
	}
	line, _, _ = connectTo(t, sock, target)
	if !strings.Contains(line, "403") {
		t.Fatalf("after the lapse: %q", line)
	}
	for _, m := range []string{"GRANT", "LAPSE"} {
		if e := sink.waitFor(t, m, target); e.Note == "" {
			t.Errorf("%s line without a note: %+v", m, e)
		}
	}
	waitNote(t, sink, "CONNECT", "cut: the grant of "+target+" lapsed")
	if len(p.Live()) != 0 {
		t.Errorf("the list after the lapse: %+v", p.Live())
	}
}

// cut reports whether c ends (rather than times out) within 5 seconds.
func cut(c net.Conn) bool {
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := c.Read(make([]byte, 1))
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

// TestDenyCutsAndNarrowsOnlyWhatLeft: denying a granted pattern cuts the
// connections it alone allowed and leaves one another pattern still
// allows; denying what is not on the list says what is.
func TestDenyCutsAndNarrowsOnlyWhatLeft(t *testing.T) {
	port := echoServer(t)
	a, b := hostPort("a.test", port), hostPort("b.test", port)
	sink := &memSink{}
	sock, p := startProxy(t, []string{b}, "a.test=127.0.0.1,b.test=127.0.0.1", sink)
	pa, _ := ParsePattern(a)
	p.Grant(pa, time.Time{})
	_, ca, _ := connectTo(t, sock, a)
	_, cb, _ := connectTo(t, sock, b)
	if ca == nil || cb == nil {
		t.Fatal("tunnels not opened")
	}
	defer ca.Close()
	defer cb.Close()
	n, err := p.Deny(pa)
	if err != nil || n != 1 {
		t.Fatalf("Deny: %d %v", n, err)
	}
	if !cut(ca) {
		t.Error("the denied tunnel is still open")
	}
	waitNote(t, sink, "CONNECT", "cut: "+a+" was denied")
	io.WriteString(cb, "still\n")
	cb.SetReadDeadline(time.Now().Add(5 * time.Second))
	if got, _ := bufio.NewReader(cb).ReadString('\n'); got != "still\n" {
		t.Errorf("the other tunnel was cut: %q", got)
	}
	if _, err := p.Deny(pa); !errors.Is(err, ErrNotListed) || !strings.Contains(err.Error(), b) {
		t.Errorf("denying again: %v", err)
	}
	if e := sink.waitFor(t, "DENY", a); !strings.Contains(e.Note, "1 open connections cut") {
		t.Errorf("DENY line %+v", e)
	}
	// A launched pattern can be denied too.
	pb, _ := ParsePattern(b)
	if _, err := p.Deny(pb); err != nil {
		t.Fatal(err)
	}
	if line, _, _ := connectTo(t, sock, b); !strings.Contains(line, "403") {
		t.Errorf("a denied launch pattern still passes: %q", line)
	}
}

// TestGrantKeepsTheAddressRules: a granted wildcard reaches no loopback
// address, exactly as one given at launch would not; a grant of a name
// the box was launched with changes nothing.
func TestGrantKeepsTheAddressRules(t *testing.T) {
	port := echoServer(t)
	sink := &memSink{}
	sock, p := startProxy(t, []string{"x.test"}, "in.wild.test=127.0.0.1", sink)
	wild, _ := ParsePattern("*.wild.test:" + fmt.Sprint(port))
	p.Grant(wild, time.Time{})
	if line, _, body := connectTo(t, sock, hostPort("in.wild.test", port)); !strings.Contains(line, "403") || !strings.Contains(body, "loopback") {
		t.Errorf("a granted wildcard reached loopback: %q %q", line, body)
	}
	x, _ := ParsePattern("x.test")
	if said := p.Grant(x, time.Now().Add(time.Second)); !strings.Contains(said, "launched with already") {
		t.Errorf("granting a launch pattern: %q", said)
	}
	if l := p.Live(); len(l) != 2 || !l[0].Until.IsZero() || l[0].Granted {
		t.Errorf("the launch pattern changed: %+v", l)
	}
}

// TestLiveRestored: a list passed on by a hand-over keeps its grants,
// drops what lapsed meanwhile and lapses the rest on time; it survives
// JSON.
func TestLiveRestored(t *testing.T) {
	a, _ := ParsePattern("a.test")
	b, _ := ParsePattern("b.test:8443")
	c, _ := ParsePattern("*.c.test")
	in := []Entry{{Pattern: a}, {Pattern: b, Until: time.Now().Add(-time.Second), Granted: true}, {Pattern: c, Until: time.Now().Add(300 * time.Millisecond), Granted: true}}
	data, err := json.Marshal(in)
	must(t, err)
	var back []Entry
	must(t, json.Unmarshal(data, &back))
	sink := &memSink{}
	p := New(Config{Live: back, Audit: sink})
	defer p.Close()
	if l := p.Live(); len(l) != 2 || l[0].Pattern != a || l[1].Pattern != c {
		t.Fatalf("restored %+v from %s", l, data)
	}
	sink.waitFor(t, "LAPSE", "*.c.test")
	if l := p.Live(); len(l) != 1 {
		t.Errorf("after the lapse: %+v", l)
	}
	if err := json.Unmarshal([]byte(`{"host":"*.com"}`), new(Entry)); err == nil {
		t.Error("a bad pattern was read back")
	}
}

// waitNote waits for an audit line of method whose note has note.
func waitNote(t *testing.T, sink *memSink, method, note string) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		sink.mu.Lock()
		for _, e := range sink.es {
			if e.Method == method && strings.Contains(e.Note, note) {
				sink.mu.Unlock()
				return
			}
		}
		sink.mu.Unlock()
	}
	t.Errorf("no %s line notes %q", method, note)
}
