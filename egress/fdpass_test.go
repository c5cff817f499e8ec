package egress_test

import (
	"bufio"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aisan-dev/aisan/egress"
	"github.com/aisan-dev/aisan/egress/egresstest"
	"github.com/aisan-dev/aisan/jail/shared/fdpass"
)

// servedSocket serves the test backend on a fresh socket.
func servedSocket(t *testing.T) (string, *egresstest.Upstream) {
	t.Helper()
	up := egresstest.NewUpstream(t, egresstest.JSON(200, `{"ok":true}`))
	path := filepath.Join(t.TempDir(), "s.sock")
	ln, err := egress.ListenUnix(path)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := egress.NewServer(testBackend(up.URL, &egresstest.Source{Value: realToken}), egress.Options{})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return path, up
}

// send sends data with the descriptors fds over a new connection to the
// socket, as the in-box relay does.
func send(t *testing.T, path string, data []byte, fds ...int) *net.UnixConn {
	t.Helper()
	u, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	var oob []byte
	if len(fds) > 0 {
		oob = syscall.UnixRights(fds...)
	}
	if _, _, err := u.WriteMsgUnix(data, oob, nil); err != nil {
		t.Fatal(err)
	}
	return u
}

// boxTCP is a connected loopback TCP pair: the box's client end, and the
// accepted end the relay would hand over (as a descriptor).
func boxTCP(t *testing.T) (client net.Conn, accepted *os.File) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	a, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	f, err := a.(*net.TCPConn).File()
	a.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return client, f
}

const smallCall = "POST /v1/y HTTP/1.1\r\nHost: b\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"

// TestHandedOverConnection: a TCP connection handed over on the socket is
// served as itself, several requests on it, after the socket connection
// that brought it is gone.
func TestHandedOverConnection(t *testing.T) {
	path, up := servedSocket(t)
	client, f := boxTCP(t)
	u := send(t, path, []byte{fdpass.Marker}, int(f.Fd()))
	u.Close()
	f.Close()
	client.SetDeadline(time.Now().Add(5 * time.Second))
	br := bufio.NewReader(client)
	for i := range 3 {
		if _, err := client.Write([]byte(smallCall)); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("call %d: %d", i, resp.StatusCode)
		}
	}
	if n := len(up.Requests()); n != 3 {
		t.Errorf("the upstream saw %d calls, want 3", n)
	}
}

// TestHandOverRefusals: what a box may send instead of one TCP connection
// (a pipe, a Unix socket, a listening socket, two descriptors, a marker
// without one, a descriptor with other bytes) ends that connection and
// nothing else; the socket goes on serving.
func TestHandOverRefusals(t *testing.T) {
	path, up := servedSocket(t)
	pr, pw, _ := os.Pipe()
	defer pr.Close()
	defer pw.Close()
	sp, _ := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	defer syscall.Close(sp[0])
	defer syscall.Close(sp[1])
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	defer ln.Close()
	lf, _ := ln.(*net.TCPListener).File()
	defer lf.Close()
	_, tf := boxTCP(t)
	for _, tc := range []struct {
		name string
		data []byte
		fds  []int
	}{
		{"pipe", []byte{fdpass.Marker}, []int{int(pr.Fd())}},
		{"unix socket", []byte{fdpass.Marker}, []int{sp[0]}},
		{"listening socket", []byte{fdpass.Marker}, []int{int(lf.Fd())}},
		{"two descriptors", []byte{fdpass.Marker}, []int{int(tf.Fd()), int(tf.Fd())}},
		{"other bytes", []byte("GET"), []int{int(tf.Fd())}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := send(t, path, tc.data, tc.fds...)
			defer u.Close()
			u.SetReadDeadline(time.Now().Add(5 * time.Second))
			if n, err := u.Read(make([]byte, 1)); n != 0 || err == nil {
				t.Errorf("the connection was not ended: %d %v", n, err)
			}
		})
	}
	// A marker without a descriptor is just a stream that is not HTTP.
	u := send(t, path, []byte{fdpass.Marker, '\r', '\n', '\r', '\n'})
	u.SetReadDeadline(time.Now().Add(5 * time.Second))
	b := make([]byte, 64)
	n, _ := u.Read(b)
	u.Close()
	if !strings.HasPrefix(string(b[:n]), "HTTP/1.1 400") {
		t.Errorf("a bare marker got %q", b[:n])
	}
	// A client of the socket itself is served as before.
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	c.Write([]byte(smallCall))
	if l, err := bufio.NewReader(c).ReadString('\n'); err != nil || !strings.Contains(l, "200") {
		t.Errorf("a stream client after the refusals: %q %v", l, err)
	}
	if n := len(up.Requests()); n != 1 {
		t.Errorf("the upstream saw %d calls, want 1", n)
	}
}
