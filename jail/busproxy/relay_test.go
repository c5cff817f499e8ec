package busproxy

import (
	"bytes"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// unixPair is a connected pair of Unix stream sockets as net conns.
func unixPair(t *testing.T) (*net.UnixConn, *net.UnixConn) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
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
		return c.(*net.UnixConn)
	}
	return conn(fds[0]), conn(fds[1])
}

// TestRelayCarriesDescriptors: a client's bytes and the descriptor sent
// with them reach the far side through carry, and so do the answer and
// the end of each direction; the relay keeps no copy of the descriptor.
// TestRelayOOBRoom checks relayOOB, written as a number, against the
// room the kernel's SCM_MAX_FD descriptors take.
func TestRelayOOBRoom(t *testing.T) {
	if want := unix.CmsgSpace(253 * 4); relayOOB < want || relayOOB > want+8 {
		t.Errorf("relayOOB = %d, want unix.CmsgSpace(253 * 4) = %d", relayOOB, want)
	}
}

func TestRelayCarriesDescriptors(t *testing.T) {
	client, relayIn := unixPair(t)
	relayOut, server := unixPair(t)
	done := make(chan struct{})
	go func() {
		carry(relayIn, relayOut)
		close(done)
	}()

	file := filepath.Join(t.TempDir(), "passed")
	if err := os.WriteFile(file, []byte("through the relay"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := client.WriteMsgUnix([]byte("hello"), unix.UnixRights(int(f.Fd())), nil); err != nil {
		t.Fatal(err)
	}
	f.Close()

	buf, oob := make([]byte, 16), make([]byte, unix.CmsgSpace(4*4))
	server.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, oobn, flags, _, err := server.ReadMsgUnix(buf, oob)
	if err != nil || string(buf[:n]) != "hello" || flags&unix.MSG_CTRUNC != 0 {
		t.Fatalf("server read %q (flags %#x): %v; want hello", buf[:n], flags, err)
	}
	fds, ok := rights(oob[:oobn])
	if !ok || len(fds) != 1 {
		t.Fatalf("server got descriptors %v (parsed %v); want one", fds, ok)
	}
	got := os.NewFile(uintptr(fds[0]), "received")
	data, err := io.ReadAll(got)
	got.Close()
	if err != nil || string(data) != "through the relay" {
		t.Fatalf("the passed descriptor reads %q, %v", data, err)
	}

	// A descriptor of the file still open anywhere but here would show
	// in /proc/self/fd: the relay closes its copies. It does so once its
	// write has returned, which may be a moment after the server read.
	n = openCopies(t, file)
	for deadline := time.Now().Add(5 * time.Second); n != 0 && time.Now().Before(deadline); n = openCopies(t, file) {
		time.Sleep(time.Millisecond)
	}
	if n != 0 {
		t.Errorf("%d descriptors of the passed file still open 5 s after the relay passed it on", n)
	}

	if _, err := server.Write(bytes.Repeat([]byte("x"), 200<<10)); err != nil {
		t.Fatal(err)
	}
	server.CloseWrite()
	client.SetReadDeadline(time.Now().Add(5 * time.Second))
	back, err := io.ReadAll(client)
	if err != nil || len(back) != 200<<10 {
		t.Fatalf("client read %d bytes, %v; want the server's 200 KiB and its end", len(back), err)
	}
	client.CloseWrite()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("carry did not return after both sides ended")
	}
}

// openCopies counts this process's descriptors open on path.
func openCopies(t *testing.T, path string) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if target, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && target == path {
			n++
		}
	}
	return n
}

// TestRelayRefusesTruncatedDescriptors: descriptors that do not all fit
// the relay's control buffer end the connection, both ways, instead of
// passing the bytes without them.
func TestRelayRefusesTruncatedDescriptors(t *testing.T) {
	defer func(n int) { relayOOB = n }(relayOOB)
	relayOOB = unix.CmsgSpace(4) // room for one descriptor
	client, relayIn := unixPair(t)
	relayOut, server := unixPair(t)
	go carry(relayIn, relayOut)
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fd := int(f.Fd())
	if _, _, err := client.WriteMsgUnix([]byte("hello"), unix.UnixRights(fd, fd, fd), nil); err != nil {
		t.Fatal(err)
	}
	server.SetReadDeadline(time.Now().Add(5 * time.Second))
	if data, err := io.ReadAll(server); err != nil || len(data) != 0 {
		t.Fatalf("the server read %q, %v; want the connection ended with nothing passed", data, err)
	}
	client.SetReadDeadline(time.Now().Add(5 * time.Second))
	if data, err := io.ReadAll(client); err != nil || len(data) != 0 {
		t.Fatalf("the client read %q, %v; want its connection ended too", data, err)
	}
}

// FuzzRights: reading the descriptors out of any control buffer never
// panics, and a buffer that parses as rights gives back exactly them.
func FuzzRights(f *testing.F) {
	f.Add(unix.UnixRights(3, 4))
	f.Add([]byte{1, 2, 3})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, oob []byte) {
		fds, ok := rights(oob)
		if !ok {
			return
		}
		var want int
		msgs, _ := unix.ParseSocketControlMessage(oob)
		for _, m := range msgs {
			if m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SCM_RIGHTS {
				got, _ := unix.ParseUnixRights(&m)
				want += len(got)
			}
		}
		if len(fds) != want {
			t.Errorf("rights gave %d descriptors, the buffer holds %d", len(fds), want)
		}
	})
}
