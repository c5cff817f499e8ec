package egress

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/aisan-dev/aisan/jail/shared/fdpass"
)

// tcpPair is a connected loopback TCP pair.
func tcpPair(t *testing.T) (a, b *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); s.Close() })
	return s.(*net.TCPConn), c.(*net.TCPConn)
}

// unixPair is a connected Unix stream pair.
func unixPair(t *testing.T) (a, b *net.UnixConn) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	conn := func(fd int) *net.UnixConn {
		f := os.NewFile(uintptr(fd), "pair")
		defer f.Close()
		c, err := net.FileConn(f)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c.(*net.UnixConn)
	}
	return conn(fds[0]), conn(fds[1])
}

// TestRawSocketMovesBytes: through a raw socket, a write larger than the
// socket buffers arrives whole while the peer reads slowly (partial
// writes, waits for room), the peer's bytes arrive, and the peer's
// close is io.EOF; for TCP and Unix stream sockets alike.
func TestRawSocketMovesBytes(t *testing.T) {
	for name, pair := range map[string]func(*testing.T) (net.Conn, net.Conn){
		"tcp":  func(t *testing.T) (net.Conn, net.Conn) { a, b := tcpPair(t); return a, b },
		"unix": func(t *testing.T) (net.Conn, net.Conn) { a, b := unixPair(t); return a, b },
	} {
		t.Run(name, func(t *testing.T) {
			a, peer := pair(t)
			c := rawIO(a)
			if _, ok := c.(*rawSocket); !ok {
				t.Fatalf("rawIO(%T) = %T, want a raw socket", a, c)
			}
			big := bytes.Repeat([]byte("0123456789abcdef"), 1<<18) // 4 MiB
			got := make(chan []byte)
			go func() {
				var buf bytes.Buffer
				chunk := make([]byte, 64<<10)
				for buf.Len() < len(big) {
					time.Sleep(time.Millisecond) // slower than the writer
					n, err := peer.Read(chunk)
					buf.Write(chunk[:n])
					if err != nil {
						break
					}
				}
				got <- buf.Bytes()
			}()
			if n, err := c.Write(big); n != len(big) || err != nil {
				t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(big))
			}
			if b := <-got; !bytes.Equal(b, big) {
				t.Fatalf("the peer read %d bytes, not the %d written", len(b), len(big))
			}
			if _, err := peer.Write([]byte("answer")); err != nil {
				t.Fatal(err)
			}
			peer.(interface{ CloseWrite() error }).CloseWrite()
			b, err := io.ReadAll(c)
			if string(b) != "answer" || err != nil {
				t.Errorf("read %q, %v; want the peer's bytes then EOF", b, err)
			}
			if n, err := c.Read(nil); n != 0 || err != nil {
				t.Errorf("an empty read = %d, %v", n, err)
			}
		})
	}
}

// TestRawSocketErrors: deadlines, Close, a reset and CloseWrite behave as
// they do on the net.Conn the raw socket wraps, with the same errors.
func TestRawSocketErrors(t *testing.T) {
	a, peer := tcpPair(t)
	c := rawIO(a)
	c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	var ne net.Error
	if _, err := c.Read(make([]byte, 8)); !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("read past its deadline: %v, want a timeout", err)
	}
	c.SetReadDeadline(time.Time{})

	if err := c.(interface{ CloseWrite() error }).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(peer); len(b) != 0 || err != nil {
		t.Errorf("after CloseWrite the peer read %q, %v; want EOF", b, err)
	}

	done := make(chan error)
	go func() {
		_, err := c.Read(make([]byte, 8))
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	c.Close()
	if err := <-done; !errors.Is(err, net.ErrClosed) {
		t.Errorf("a read blocked when the socket closed: %v, want net.ErrClosed", err)
	}
	if _, err := c.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Errorf("a write after close: %v, want net.ErrClosed", err)
	}

	a, peer = tcpPair(t)
	c = rawIO(a)
	peer.SetLinger(0)
	peer.Write([]byte("x"))
	peer.Close() // an RST
	var err error
	for err == nil {
		_, err = c.Read(make([]byte, 8))
	}
	var op *net.OpError
	if !errors.Is(err, syscall.ECONNRESET) || !errors.As(err, &op) || op.Op != "read" {
		t.Errorf("a read after the peer's reset: %v, want a read OpError with ECONNRESET", err)
	}

	if p1, _ := net.Pipe(); rawIO(p1) != p1 {
		t.Error("rawIO wrapped a connection that is no socket")
	}
}

// TestHandedOverConnectionIsRaw: a connection the relay hands over, and
// one that arrives as a plain stream, are served through raw sockets.
func TestHandedOverConnectionIsRaw(t *testing.T) {
	box, peer := tcpPair(t)
	f, err := box.File()
	if err != nil {
		t.Fatal(err)
	}
	box.Close()
	relay, host := unixPair(t)
	if _, _, err := relay.WriteMsgUnix([]byte{fdpass.Marker}, syscall.UnixRights(int(f.Fd())), nil); err != nil {
		t.Fatal(err)
	}
	f.Close()
	bc := &boxConn{conn: host}
	peer.Write([]byte("hello"))
	b := make([]byte, 5)
	if _, err := io.ReadFull(bc, b); err != nil || string(b) != "hello" {
		t.Fatalf("read %q, %v", b, err)
	}
	if s, ok := bc.current().(*rawSocket); !ok {
		t.Errorf("a handed-over connection is served as %T, want a raw socket", bc.current())
	} else if _, ok := s.Conn.(*net.TCPConn); !ok {
		t.Errorf("the raw socket wraps %T, want the box's TCP connection", s.Conn)
	}

	relay, host = unixPair(t)
	relay.Write([]byte("GET"))
	bc = &boxConn{conn: host}
	if _, err := io.ReadFull(bc, b[:3]); err != nil {
		t.Fatal(err)
	}
	if _, ok := bc.current().(*rawSocket); !ok {
		t.Errorf("a stream connection is served as %T, want a raw socket", bc.current())
	}
}

// TestUpstreamConnectionIsRaw: the proxy's own upstream client speaks TLS
// over a raw socket, and its idle check sees an upstream's close.
func TestUpstreamConnectionIsRaw(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	tr := NewUpstreamTransport(UpstreamOptions{TLS: &tls.Config{RootCAs: pool}}).(*upstreamTransport)
	u, _ := url.Parse(srv.URL)
	c, err := tr.dial(context.Background(), u.Host, u.Hostname())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.tc.NetConn().(*rawSocket); !ok {
		t.Errorf("the upstream TLS connection runs over %T, want a raw socket", c.tc.NetConn())
	}
	if !quiet(c.raw) {
		t.Error("a fresh idle connection does not look quiet")
	}
	srv.CloseClientConnections()
	waitFor(t, func() bool { return !quiet(c.raw) })
	c.tc.Close()
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("condition not met in 5 s")
}
