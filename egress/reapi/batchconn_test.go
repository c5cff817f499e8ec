package reapi

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"testing"
	"time"
)

// tcpPair is a connected loopback TCP pair.
func tcpPair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	acc := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		acc <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server = <-acc
	if server == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

// Writes from several goroutines arrive whole and, per goroutine, in
// order; what is written before Close arrives before EOF.
func TestBatchConnOrderAndClose(t *testing.T) {
	c, s := tcpPair(t)
	b := newBatchConn(c, time.Minute)
	const writers, each = 4, 300
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			rec := bytes.Repeat([]byte{byte('a' + w)}, 1000+w*7000)
			for range each {
				if _, err := b.Write(rec); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	got := make(chan []byte)
	go func() {
		all, _ := io.ReadAll(s)
		got <- all
	}()
	wg.Wait()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	all := <-got
	counts := map[byte]int{}
	for len(all) > 0 {
		w := all[0] - 'a'
		n := 1000 + int(w)*7000
		if w >= writers || len(all) < n || !bytes.Equal(all[:n], bytes.Repeat(all[:1], n)) {
			t.Fatalf("a write arrived split or changed at %d bytes from the end", len(all))
		}
		counts[all[0]]++
		all = all[n:]
	}
	for w := range writers {
		if counts[byte('a'+w)] != each {
			t.Errorf("writer %d: %d of %d writes arrived", w, counts[byte('a'+w)], each)
		}
	}
	if _, err := b.Write([]byte("x")); err == nil {
		t.Error("Write after Close succeeded")
	}
}

// A peer that does not read holds at most maxBatch bytes here: Write
// waits, and goes on when the peer reads.
func TestBatchConnBounded(t *testing.T) {
	c, s := net.Pipe()
	defer s.Close()
	b := newBatchConn(c, time.Minute)
	defer b.Close()
	data := bytes.Repeat([]byte("0123456789abcdef"), maxBatch/4) // 4 × maxBatch
	done := make(chan error, 1)
	go func() {
		_, err := b.Write(data)
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("Write of %d bytes returned (%v) while the peer read nothing", len(data), err)
	default:
	}
	b.mu.Lock()
	held := len(b.pending)
	b.mu.Unlock()
	if held > maxBatch {
		t.Errorf("%d bytes held, more than %d", held, maxBatch)
	}
	got := make([]byte, len(data))
	if _, err := io.ReadFull(s, got); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Error("data changed")
	}
}

// A peer that stops reading fails the connection after the byte
// timeout, and every later Write says so.
func TestBatchConnByteTimeout(t *testing.T) {
	c, s := net.Pipe()
	defer s.Close()
	b := newBatchConn(c, 50*time.Millisecond)
	defer b.Close()
	var err error
	deadline := time.Now().Add(10 * time.Second)
	for err == nil && time.Now().Before(deadline) {
		_, err = b.Write(make([]byte, 64<<10))
	}
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("got %v, want a deadline error", err)
	}
	if _, err := b.Write([]byte("x")); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("later Write: %v", err)
	}
}

// A small write on an idle connection is written by its caller, so it
// returns only once the peer has it, and fails by the byte timeout.
func TestBatchConnSmallWriteDirect(t *testing.T) {
	c, s := net.Pipe()
	defer s.Close()
	b := newBatchConn(c, time.Minute)
	defer b.Close()
	returned := make(chan error, 1)
	go func() {
		_, err := b.Write([]byte("ping"))
		returned <- err
	}()
	select {
	case err := <-returned:
		t.Fatalf("the write returned (%v) before the peer read it", err)
	case <-time.After(50 * time.Millisecond):
	}
	got := make([]byte, 4)
	if _, err := io.ReadFull(s, got); err != nil || string(got) != "ping" {
		t.Fatalf("read %q, %v", got, err)
	}
	if err := <-returned; err != nil {
		t.Fatal(err)
	}

	c2, s2 := net.Pipe()
	defer s2.Close()
	b2 := newBatchConn(c2, 50*time.Millisecond)
	defer b2.Close()
	if _, err := b2.Write([]byte("ping")); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("a small write nobody reads: %v, want a deadline error", err)
	}
}
