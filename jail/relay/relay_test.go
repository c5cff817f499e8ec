package relay

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aisan-dev/aisan/jail/shared/fdpass"
)

// unixEcho serves a socket that answers each connection with "hello",
// then echoes what it reads, upper-cased, until the client half-closes,
// then writes "bye" and closes.
func unixEcho(t *testing.T) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "s.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.Write([]byte("hello\n"))
				b, _ := io.ReadAll(c)
				c.Write([]byte(strings.ToUpper(string(b))))
				c.Write([]byte("bye\n"))
			}()
		}
	}()
	return sock
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func TestRelayHalfClose(t *testing.T) {
	sock := unixEcho(t)
	r, err := Listen(freePort(t), sock)
	if err != nil {
		t.Fatal(err)
	}
	r.Serve()
	defer r.Close()
	for _, a := range r.Addrs() {
		c, err := net.DialTimeout("tcp", a, 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		br := bufio.NewReader(c)
		line, _ := br.ReadString('\n')
		if line != "hello\n" {
			t.Fatalf("%s: first line %q", a, line)
		}
		c.Write([]byte("ping\n"))
		c.(*net.TCPConn).CloseWrite()
		rest, err := io.ReadAll(br)
		if err != nil || string(rest) != "PING\nbye\n" {
			t.Fatalf("%s: after half-close %q %v", a, rest, err)
		}
		c.Close()
	}
}

func TestRelayDeadSocketClosesClient(t *testing.T) {
	r, err := Listen(freePort(t), filepath.Join(t.TempDir(), "none.sock"))
	if err != nil {
		t.Fatal(err)
	}
	r.Serve()
	defer r.Close()
	c, err := net.Dial("tcp", r.Addrs()[0])
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(5 * time.Second))
	n, err := c.Read(make([]byte, 1))
	if n != 0 || err == nil {
		t.Fatalf("read %d %v, want EOF", n, err)
	}
}

func TestListenRefusesBadPortAndBusyPort(t *testing.T) {
	if _, err := Listen(0, "/x"); err == nil {
		t.Fatal("port 0 accepted")
	}
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := Listen(l.Addr().(*net.TCPAddr).Port, "/x"); err == nil || !strings.Contains(err.Error(), "127.0.0.1") {
		t.Fatalf("busy port: %v", err)
	}
}

// TestRelayPass: with Pass the far end receives the box's TCP connection
// itself (with the marker byte) and talks to the client on it directly,
// half-close included; the relay copies nothing.
func TestRelayPass(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "s.sock")
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	got := make(chan string, 1)
	go func() {
		u, err := l.AcceptUnix()
		if err != nil {
			return
		}
		defer u.Close()
		buf, oob := make([]byte, 8), make([]byte, syscall.CmsgSpace(4))
		n, oobn, _, _, _ := u.ReadMsgUnix(buf, oob)
		msgs, _ := syscall.ParseSocketControlMessage(oob[:oobn])
		if n != 1 || buf[0] != fdpass.Marker || len(msgs) != 1 {
			got <- "no connection handed over"
			return
		}
		fds, _ := syscall.ParseUnixRights(&msgs[0])
		// The relay's defaults for a TCP connection travel with it.
		if v, err := syscall.GetsockoptInt(fds[0], syscall.IPPROTO_TCP, syscall.TCP_NODELAY); err != nil || v == 0 {
			got <- fmt.Sprintf("the connection handed over has TCP_NODELAY %d (%v)", v, err)
			return
		}
		f := os.NewFile(uintptr(fds[0]), "passed")
		c, err := net.FileConn(f)
		f.Close()
		if err != nil {
			got <- err.Error()
			return
		}
		defer c.Close()
		c.Write([]byte("hello\n"))
		b, _ := io.ReadAll(c)
		c.Write([]byte(strings.ToUpper(string(b))))
		got <- fmt.Sprintf("%T", c)
	}()
	r, err := Listen(freePort(t), sock)
	if err != nil {
		t.Fatal(err)
	}
	r.Pass = true
	r.Serve()
	defer r.Close()
	c, err := net.Dial("tcp4", r.Addrs()[0])
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	br := bufio.NewReader(c)
	if l, _ := br.ReadString('\n'); l != "hello\n" {
		t.Fatalf("greeting %q", l)
	}
	c.Write([]byte("ping\n"))
	c.(*net.TCPConn).CloseWrite()
	rest, _ := io.ReadAll(br)
	if string(rest) != "PING\n" {
		t.Errorf("answer %q", rest)
	}
	if s := <-got; s != "*net.TCPConn" {
		t.Errorf("the far end got %s", s)
	}
}
