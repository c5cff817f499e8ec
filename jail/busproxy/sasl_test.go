package busproxy

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// lockstepBus plays a bus behind a proxy that cannot take a pipelined
// handshake: it answers each command line after checking that nothing
// more arrived before its answer, and records what it saw. After BEGIN
// it reads what follows until the end.
func lockstepBus(t *testing.T, c *net.UnixConn, answers map[string]string) <-chan string {
	t.Helper()
	got := make(chan string, 1)
	go func() {
		var log strings.Builder
		defer func() {
			c.Close()
			got <- log.String()
		}()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		r := bufio.NewReader(c)
		if b, err := r.ReadByte(); err != nil || b != 0 {
			log.WriteString("no NUL first\n")
			return
		}
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				log.WriteString("read: " + err.Error() + "\n")
				return
			}
			cmd := strings.TrimSuffix(line, "\r\n")
			log.WriteString(cmd + "\n")
			if cmd == "BEGIN" {
				rest, _ := io.ReadAll(r)
				log.WriteString("after BEGIN: " + string(rest) + "\n")
				return
			}
			// Whatever the relay sent past this command before the
			// answer would reach us now.
			time.Sleep(20 * time.Millisecond)
			c.SetReadDeadline(time.Now().Add(time.Millisecond))
			if _, err := r.Peek(1); err == nil {
				log.WriteString("PIPELINED past " + cmd + "\n")
			}
			c.SetDeadline(time.Now().Add(5 * time.Second))
			c.Write([]byte(answers[strings.Fields(cmd)[0]] + "\r\n"))
		}
	}()
	return got
}

var busAnswers = map[string]string{"AUTH": "OK 0123456789abcdef", "NEGOTIATE_UNIX_FD": "AGREE_UNIX_FD", "DATA": "OK 0123456789abcdef"}

// TestHandshakePipelined: an sd-bus style client writes its whole
// handshake and its first message at once; the bus gets one command at
// a time, each after the previous answer, and the message after BEGIN;
// the client gets every answer.
func TestHandshakePipelined(t *testing.T) {
	for _, tt := range []struct {
		name, handshake string
		want            []string
	}{
		{"initial response", "\x00AUTH EXTERNAL 31303031\r\nNEGOTIATE_UNIX_FD\r\nBEGIN\r\nHELLO", []string{"AUTH EXTERNAL 31303031", "NEGOTIATE_UNIX_FD", "BEGIN"}},
		{"empty then data", "\x00AUTH EXTERNAL\r\nDATA\r\nNEGOTIATE_UNIX_FD\r\nBEGIN\r\nHELLO", []string{"AUTH EXTERNAL", "DATA", "NEGOTIATE_UNIX_FD", "BEGIN"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			client, relayIn := unixPair(t)
			relayOut, bus := unixPair(t)
			seen := lockstepBus(t, bus, busAnswers)
			go relay(relayIn, relayOut)
			if _, err := client.Write([]byte(tt.handshake)); err != nil {
				t.Fatal(err)
			}
			client.CloseWrite()
			client.SetReadDeadline(time.Now().Add(5 * time.Second))
			answers, _ := io.ReadAll(client)
			log := <-seen
			want := strings.Join(tt.want, "\n") + "\nafter BEGIN: HELLO\n"
			if log != want {
				t.Errorf("the bus saw:\n%s\nwant:\n%s", log, want)
			}
			if n := len(tt.want) - 1; strings.Count(string(answers), "\r\n") != n {
				t.Errorf("the client got %q; want %d answers", answers, n)
			}
		})
	}
}

// TestHandshakeWaiting: a client that waits for each answer, as libdbus
// does, gets the same exchange.
func TestHandshakeWaiting(t *testing.T) {
	client, relayIn := unixPair(t)
	relayOut, bus := unixPair(t)
	seen := lockstepBus(t, bus, busAnswers)
	go relay(relayIn, relayOut)
	client.SetDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReader(client)
	for _, step := range []struct{ send, want string }{
		{"\x00AUTH EXTERNAL 31303031\r\n", "OK 0123456789abcdef\r\n"},
		{"NEGOTIATE_UNIX_FD\r\n", "AGREE_UNIX_FD\r\n"},
	} {
		client.Write([]byte(step.send))
		if got, err := r.ReadString('\n'); err != nil || got != step.want {
			t.Fatalf("after %q the client got %q, %v; want %q", step.send, got, err, step.want)
		}
	}
	client.Write([]byte("BEGIN\r\n"))
	client.Write([]byte("HELLO"))
	client.CloseWrite()
	if log, want := <-seen, "AUTH EXTERNAL 31303031\nNEGOTIATE_UNIX_FD\nBEGIN\nafter BEGIN: HELLO\n"; log != want {
		t.Errorf("the bus saw:\n%s\nwant:\n%s", log, want)
	}
}

// TestHandshakeDescriptorAfterBegin: a descriptor passed with the first
// message, in the same write as the handshake, reaches the bus with it.
func TestHandshakeDescriptorAfterBegin(t *testing.T) {
	client, relayIn := unixPair(t)
	relayOut, bus := unixPair(t)
	done := make(chan struct{})
	go func() {
		defer close(done)
		relay(relayIn, relayOut)
	}()
	file := filepath.Join(t.TempDir(), "passed")
	os.WriteFile(file, []byte("with the message"), 0o600)
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := client.WriteMsgUnix([]byte("\x00AUTH EXTERNAL 30\r\nBEGIN\r\nMSG"), unix.UnixRights(int(f.Fd())), nil); err != nil {
		t.Fatal(err)
	}
	f.Close()
	bus.SetDeadline(time.Now().Add(5 * time.Second))
	r := &lineReader{c: bus}
	if err := r.fill(len("\x00AUTH EXTERNAL 30\r\n")); err != nil {
		t.Fatal(err)
	}
	bus.Write([]byte("OK 01\r\n"))
	if err := r.fill(len("\x00AUTH EXTERNAL 30\r\nBEGIN\r\nMSG")); err != nil {
		t.Fatal(err)
	}
	if string(r.buf) != "\x00AUTH EXTERNAL 30\r\nBEGIN\r\nMSG" || len(r.fds) != 1 {
		t.Fatalf("the bus got %q with %d descriptors; want the handshake and MSG with one", r.buf, len(r.fds))
	}
	got := os.NewFile(uintptr(r.fds[0]), "received")
	data, _ := io.ReadAll(got)
	got.Close()
	if string(data) != "with the message" {
		t.Errorf("the descriptor reads %q", data)
	}
	client.Close()
	bus.Close()
	<-done
}

// TestHandshakeRefuses: what the relay will not pass on ends the
// connection, with nothing sent past it.
func TestHandshakeRefuses(t *testing.T) {
	for _, tt := range []struct {
		name, send string
	}{
		{"no NUL first", "AUTH EXTERNAL 30\r\nBEGIN\r\n"},
		{"a line too long", "\x00AUTH " + strings.Repeat("3", saslMaxLine) + "\r\n"},
		{"ended early", "\x00AUTH EXTERNAL 30\r\nNEGOTIATE"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			client, relayIn := unixPair(t)
			relayOut, bus := unixPair(t)
			errc := make(chan error, 1)
			go func() {
				_, fds, _, err := handshake(relayIn, relayOut)
				closeAll(fds)
				relayOut.Close()
				errc <- err
			}()
			go answerEveryLine(bus)
			go io.Copy(io.Discard, client)
			client.Write([]byte(tt.send))
			client.CloseWrite()
			select {
			case err := <-errc:
				if err == nil {
					t.Errorf("handshake passed %q", tt.send)
				}
				if tt.name != "ended early" && !errors.Is(err, errSASL) {
					t.Errorf("handshake error %v; want errSASL", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("handshake did not end")
			}
		})
	}
}

// answerEveryLine answers each line that reaches bus, after the first
// byte, with OK, as a bus that accepts anything would.
func answerEveryLine(bus *net.UnixConn) {
	r := bufio.NewReader(bus)
	r.ReadByte()
	for {
		if _, err := r.ReadString('\n'); err != nil {
			return
		}
		bus.Write([]byte("OK 01\r\n"))
	}
}

// TestHandshakeDescriptorsTwice: descriptors sent twice before the
// handshake is passed on end the connection, and the relay holds none of
// them afterwards.
func TestHandshakeDescriptorsTwice(t *testing.T) {
	client, relayIn := unixPair(t)
	relayOut, bus := unixPair(t)
	defer client.Close()
	defer bus.Close()
	errc := make(chan error, 1)
	go func() {
		_, fds, _, err := handshake(relayIn, relayOut)
		closeAll(fds)
		errc <- err
	}()
	go answerEveryLine(bus)
	go io.Copy(io.Discard, client)
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, part := range []string{"\x00AUTH EXTERNAL 30", "\r\nNEGOTIATE_UNIX_FD"} {
		if _, _, err := client.WriteMsgUnix([]byte(part), unix.UnixRights(int(f.Fd())), nil); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	select {
	case err := <-errc:
		if !errors.Is(err, errSASL) {
			t.Errorf("handshake error %v; want errSASL", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("handshake did not end")
	}
}

// FuzzHandshake feeds any client bytes to the handshake against a bus
// that answers every line: it ends, and what it returns past BEGIN is
// the input's tail.
func FuzzHandshake(f *testing.F) {
	f.Add([]byte("\x00AUTH EXTERNAL 31303031\r\nNEGOTIATE_UNIX_FD\r\nBEGIN\r\nHELLO"))
	f.Add([]byte("\x00AUTH\r\nCANCEL\r\nAUTH EXTERNAL\r\nDATA 30\r\nBEGIN\r\n"))
	f.Add([]byte("\x01"))
	f.Fuzz(func(t *testing.T, in []byte) {
		client, relayIn := unixPair(t)
		relayOut, bus := unixPair(t)
		defer client.Close()
		defer bus.Close()
		go answerEveryLine(bus)
		go io.Copy(io.Discard, client)
		go func() {
			client.Write(in)
			client.CloseWrite()
		}()
		rest, fds, _, err := handshake(relayIn, relayOut)
		closeAll(fds)
		relayIn.Close()
		relayOut.Close()
		if err == nil && !bytes.HasSuffix(in, rest) {
			t.Errorf("handshake of %q returned %q, not its tail", in, rest)
		}
	})
}
