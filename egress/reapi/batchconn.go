package reapi

import (
	"errors"
	"net"
	"os"
	"sync"
	"time"
)

// batchConn is the upstream TCP connection under TLS. net/http's HTTP/2
// transport flushes after every DATA frame, and gRPC servers take 16 KiB
// frames, so a bulk upload would cost a write syscall, a TCP segment and
// a receiver wake-up per 16 KiB. batchConn hands writes to a goroutine of
// its own instead: while it is in a write, later writes gather behind it
// and go out together, so a busy stream leaves in large segments and the
// stream's goroutine goes on reading the box meanwhile. A small write on
// an idle connection (headers, a unary request, a ping, a window
// update) is written by its caller at once, as before, so no hand-off
// adds to a short call's latency.
//
// The bytes waiting here are bounded (maxBatch, after which Write waits
// for the writer); an error of the writer is returned by every later
// Write; a write that makes no progress for the byte timeout fails the
// connection, as the transport's WriteByteTimeout would.
type batchConn struct {
	net.Conn
	byteTimeout time.Duration

	wmu     sync.Mutex // one Write at a time, so each Write's bytes stay together
	mu      sync.Mutex
	room    sync.Cond // signalled when the writer took a batch or failed
	work    sync.Cond // signalled when there is something to write
	pending []byte
	spare   []byte
	busy    bool // the writer is in a write
	err     error
	closing bool
	done    chan struct{}
}

const (
	// maxBatch bounds what one connection holds before the writer takes
	// it.
	maxBatch = 256 << 10
	// maxDirect is the largest write its caller makes itself when the
	// writer is idle: below a full TLS record, so a bulk stream's frames
	// go to the writer.
	maxDirect = 8 << 10
)

var errBatchClosed = errors.New("connection closed")

func newBatchConn(c net.Conn, byteTimeout time.Duration) *batchConn {
	b := &batchConn{Conn: c, byteTimeout: byteTimeout, done: make(chan struct{})}
	b.room.L, b.work.L = &b.mu, &b.mu
	go b.run()
	return b
}

func (b *batchConn) Write(p []byte) (int, error) {
	b.wmu.Lock()
	defer b.wmu.Unlock()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(p) <= maxDirect && !b.busy && len(b.pending) == 0 && b.err == nil && !b.closing {
		// Nothing is queued and wmu keeps other writes out: p goes now,
		// in order.
		b.busy = true
		b.mu.Unlock()
		n, err := b.writeAll(p)
		b.mu.Lock()
		b.busy = false
		if err != nil {
			b.err = err
			b.room.Broadcast()
		}
		return n, err
	}
	n := 0
	for len(p) > 0 {
		for b.err == nil && !b.closing && len(b.pending) >= maxBatch {
			b.room.Wait()
		}
		if b.err != nil {
			return n, b.err
		}
		if b.closing {
			return n, errBatchClosed
		}
		k := min(len(p), maxBatch-len(b.pending))
		if len(b.pending) == 0 {
			b.work.Signal()
		}
		b.pending = append(b.pending, p[:k]...)
		p, n = p[k:], n+k
	}
	return n, nil
}

func (b *batchConn) run() {
	defer close(b.done)
	b.mu.Lock()
	for {
		for b.err == nil && len(b.pending) == 0 && !b.closing {
			b.work.Wait()
		}
		if b.err != nil || len(b.pending) == 0 {
			b.mu.Unlock()
			return
		}
		out := b.pending
		b.pending = b.spare[:0]
		b.busy = true
		b.room.Broadcast()
		b.mu.Unlock()
		_, err := b.writeAll(out)
		b.mu.Lock()
		b.busy = false
		b.spare = out[:0]
		if err != nil {
			b.err = err
			b.room.Broadcast()
		}
	}
}

// writeAll writes p, failing only when a write makes no progress for
// the byte timeout.
func (b *batchConn) writeAll(p []byte) (int, error) {
	done := 0
	for done < len(p) {
		if b.byteTimeout > 0 {
			b.Conn.SetWriteDeadline(time.Now().Add(b.byteTimeout))
		}
		n, err := b.Conn.Write(p[done:])
		done += n
		if err != nil && !(n > 0 && errors.Is(err, os.ErrDeadlineExceeded)) {
			return done, err
		}
	}
	return done, nil
}

// closeFlush bounds how long Close lets the writer send what is waiting,
// as a kernel would after close; the transport itself forces a close
// that takes longer than this.
const closeFlush = 250 * time.Millisecond

// Close sends what is waiting (for at most closeFlush), then closes; a
// second Close closes at once.
func (b *batchConn) Close() error {
	b.mu.Lock()
	again := b.closing
	b.closing = true
	b.work.Signal()
	b.mu.Unlock()
	if !again {
		t := time.NewTimer(closeFlush)
		select {
		case <-b.done:
		case <-t.C:
		}
		t.Stop()
	}
	b.mu.Lock()
	if b.err == nil {
		b.err = errBatchClosed
	}
	b.room.Broadcast()
	b.mu.Unlock()
	return b.Conn.Close()
}

// SetWriteDeadline is the writer's to set (byteTimeout): a caller's
// deadline would apply to whatever write the writer is in, not to its
// own bytes.
func (b *batchConn) SetWriteDeadline(time.Time) error { return nil }

// SetDeadline sets the read deadline only, for the same reason.
func (b *batchConn) SetDeadline(t time.Time) error { return b.Conn.SetReadDeadline(t) }
