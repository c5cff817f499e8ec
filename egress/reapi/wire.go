package reapi

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"
)

// gRPC status codes used here.
const (
	codeOK               = 0
	codeInternal         = 13
	codeUnavailable      = 14
	codePermissionDenied = 7
	codeUnauthenticated  = 16
)

// readFirst reads the first length-prefixed message of a request body.
// raw is the frame as received (forwarded unchanged); msg is its payload,
// gunzipped when the frame says it is compressed. reserve is asked for
// the memory first, so that the box cannot make the host hold more than
// the budget allows. A Denied error means the message is not one we can
// check.
func readFirst(body io.Reader, encoding string, max int, reserve func(int) error) (raw, msg []byte, err error) {
	var hdr [5]byte
	if n, err := io.ReadFull(body, hdr[:]); err != nil {
		if n == 0 && errors.Is(err, io.EOF) {
			return nil, nil, deny("no request message")
		}
		return nil, nil, err
	}
	if hdr[0] > 1 {
		return nil, nil, deny("first request message: bad gRPC frame flags %#x", hdr[0])
	}
	size := binary.BigEndian.Uint32(hdr[1:])
	if uint64(size) > uint64(max) {
		return nil, nil, deny("first request message is %d bytes; the limit is %d (max_first_message)", size, max)
	}
	if hdr[0] == 1 && encoding != "gzip" {
		return nil, nil, deny("first request message compressed with %q; only gzip can be checked", encoding)
	}
	need := 5 + int(size)
	if hdr[0] == 1 {
		need += max
	}
	if err := reserve(need); err != nil {
		return nil, nil, err
	}
	raw = make([]byte, 5+int(size))
	copy(raw, hdr[:])
	if _, err := io.ReadFull(body, raw[5:]); err != nil {
		return nil, nil, err
	}
	msg = raw[5:]
	if hdr[0] == 0 {
		return raw, msg, nil
	}
	msg, err = gunzip(msg, max)
	if err != nil {
		return nil, nil, deny("first request message: %v", err)
	}
	return raw, msg, nil
}

// onlyMessage checks that a one-message request ends after its message.
func onlyMessage(body io.Reader) error {
	var b [1]byte
	n, err := io.ReadFull(body, b[:])
	if n > 0 {
		return deny("more than one request message for a call that takes one")
	}
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// budget bounds the bytes a box's streams hold on the host at once: first
// messages kept until they are checked and sent, and the replay room of
// streaming requests. A stream that does not fit waits for others to end.
type budget struct {
	mu    sync.Mutex
	avail int
	wait  []*budgetWaiter
}

type budgetWaiter struct {
	n     int
	ready chan struct{}
}

func newBudget(n int) *budget { return &budget{avail: n} }

// acquire takes n bytes (at most the whole budget), first come first
// served.
func (b *budget) acquire(ctx context.Context, n int) error {
	b.mu.Lock()
	if len(b.wait) == 0 && b.avail >= n {
		b.avail -= n
		b.mu.Unlock()
		return nil
	}
	w := &budgetWaiter{n: n, ready: make(chan struct{})}
	b.wait = append(b.wait, w)
	b.mu.Unlock()
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
		b.mu.Lock()
		select {
		case <-w.ready:
			b.mu.Unlock()
			b.release(n)
		default:
			b.wait = slices.DeleteFunc(b.wait, func(x *budgetWaiter) bool { return x == w })
			b.mu.Unlock()
			b.release(0)
		}
		return ctx.Err()
	}
}

func (b *budget) release(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.avail += n
	for len(b.wait) > 0 && b.avail >= b.wait[0].n {
		w := b.wait[0]
		b.avail -= w.n
		close(w.ready)
		b.wait = b.wait[1:]
	}
}

// gunzip decompresses p, refusing output beyond max bytes.
func gunzip(p []byte, max int) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(p))
	if err != nil {
		return nil, fmt.Errorf("bad gzip: %v", err)
	}
	out, err := io.ReadAll(io.LimitReader(zr, int64(max)+1))
	if err != nil {
		return nil, fmt.Errorf("bad gzip: %v", err)
	}
	if len(out) > max {
		return nil, fmt.Errorf("decompresses beyond %d bytes", max)
	}
	return out, nil
}

// refuse writes a trailers-only response: one HEADERS frame that ends the
// stream, with :status 200, so a gRPC client reports the status instead
// of treating a transport error as retryable.
func refuse(w http.ResponseWriter, code int, msg string) {
	h := w.Header()
	h.Set("Content-Type", "application/grpc")
	h.Set("Grpc-Status", strconv.Itoa(code))
	h.Set("Grpc-Message", grpcMessage(msg))
	w.WriteHeader(http.StatusOK)
}

// maxMessage keeps a refusal header small.
const maxMessage = 512

// grpcMessage makes text safe for grpc-message: control characters become
// spaces (a newline must never reach a header), and everything outside
// printable ASCII, '%' included, is percent-encoded as gRPC specifies.
func grpcMessage(s string) string {
	if len(s) > maxMessage {
		s = s[:maxMessage]
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7f {
			c = ' '
		}
		if c >= 0x20 && c <= 0x7e && c != '%' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// upBody is the upstream request body: the checked first message, then the
// rest of the box's stream. While what was taken from the box is small it
// is kept, so GetBody can start over and the transport may retry a
// stream the upstream refused (GOAWAY, REFUSED_STREAM) before it ran.
type upBody struct {
	restMu sync.Mutex // one read of rest at a time, with its append
	mu     sync.Mutex
	rest   io.Reader
	buf    []byte // all taken from the box, while it is at most maxReplay
	drop   bool   // buf outgrew maxReplay: no more retries
	broken bool   // a stale view took bytes that could not be kept
	end    error  // rest's final error, once seen
	gen    int
	taken  int64
}

// maxReplay bounds what is kept for a retry: every unary request fits.
const maxReplay = 1 << 20

var errStale = errors.New("request body replaced by a retry")

func newUpBody(first []byte, rest io.Reader) *upBody {
	return &upBody{buf: first, rest: rest, taken: int64(len(first))}
}

type upView struct {
	b   *upBody
	gen int
	off int
}

func (b *upBody) view() *upView {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.gen++
	return &upView{b: b, gen: b.gen}
}

func (b *upBody) getBody() (io.ReadCloser, error) {
	b.mu.Lock()
	lost := b.drop || b.broken
	b.mu.Unlock()
	if lost {
		return nil, errors.New("request body too far along to send again")
	}
	return b.view(), nil
}

// sent is how many bytes the box's stream has given.
func (b *upBody) sent() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.taken
}

// Sizes that decide how a DATA frame leaves in TLS records.
const (
	tlsRecord   = 16 << 10 // the most plaintext one TLS record carries
	frameHeader = 9        // an HTTP/2 frame header
)

// recordFit shortens a read of the request body so that the DATA frame
// the transport makes of it fills whole TLS records. The transport reads
// as much as one frame may carry (16 KiB with gRPC's servers) and sends
// it as one frame, which with its header is 9 bytes over a record:
// crypto/tls would send it as a full record and a 9-byte one, each sealed
// and written on its own, and the upstream would read and open both.
func recordFit(p []byte) []byte {
	if n := len(p) + frameHeader; n > tlsRecord {
		return p[:len(p)-n%tlsRecord]
	}
	return p
}

func (v *upView) Read(p []byte) (int, error) {
	b := v.b
	p = recordFit(p)
	for {
		b.mu.Lock()
		switch {
		case v.gen != b.gen || b.broken:
			b.mu.Unlock()
			return 0, errStale
		case !b.drop && v.off < len(b.buf):
			n := copy(p, b.buf[v.off:])
			v.off += n
			b.mu.Unlock()
			return n, nil
		case b.end != nil:
			b.mu.Unlock()
			return 0, b.end
		}
		b.mu.Unlock()

		b.restMu.Lock()
		b.mu.Lock()
		behind := !b.drop && v.off < len(b.buf) || b.end != nil
		b.mu.Unlock()
		if behind {
			// Another view's read landed while we waited.
			b.restMu.Unlock()
			continue
		}
		n, err := b.rest.Read(p)
		b.mu.Lock()
		stale := v.gen != b.gen
		b.taken += int64(n)
		if n > 0 {
			switch {
			case !b.drop && len(b.buf)+n <= maxReplay:
				b.buf = append(b.buf, p[:n]...)
				if !stale {
					v.off += n
				}
			case stale:
				b.broken = true
			default:
				b.drop, b.buf = true, nil
			}
		}
		if err != nil {
			b.end = err
		}
		b.mu.Unlock()
		b.restMu.Unlock()
		if stale {
			return 0, errStale
		}
		return n, err
	}
}

// Close leaves the box's stream open: the handler owns it.
func (v *upView) Close() error { return nil }

// errDetached is what a view reads once the handler has ended.
var errDetached = errors.New("request body read after its stream ended")

// detach ends every view's access to the box's stream, waiting for a
// read in progress: the transport may go on reading the request body
// after the handler has returned, and the handler's buffer goes back to
// its pool.
func (b *upBody) detach() {
	b.restMu.Lock()
	defer b.restMu.Unlock()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.rest = eofReader{}
	if b.end == nil {
		b.end = errDetached
	}
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// opScanner watches Execute's response stream for operation names
// (google.longrunning.Operation field 1) without holding more than a
// prefix of each message.
type opScanner struct {
	found func(name string)

	hdr        [5]byte
	nhdr       int
	remain     int
	inMsg      bool
	compressed bool
	prefix     []byte
}

// opPrefix is how much of each message is kept: the name is the first
// field a protobuf encoder writes, and names are short.
const opPrefix = 16 << 10

func (s *opScanner) Write(p []byte) {
	for len(p) > 0 {
		if !s.inMsg {
			n := copy(s.hdr[s.nhdr:], p)
			s.nhdr += n
			p = p[n:]
			if s.nhdr < 5 {
				return
			}
			s.nhdr, s.inMsg = 0, true
			s.compressed = s.hdr[0]&1 == 1
			s.remain = int(binary.BigEndian.Uint32(s.hdr[1:]))
			s.prefix = s.prefix[:0]
			if s.remain == 0 {
				s.done()
			}
			continue
		}
		n := min(len(p), s.remain)
		if room := opPrefix - len(s.prefix); room > 0 {
			s.prefix = append(s.prefix, p[:min(n, room)]...)
		}
		s.remain -= n
		p = p[n:]
		if s.remain == 0 {
			s.done()
		}
	}
}

func (s *opScanner) done() {
	s.inMsg = false
	msg := s.prefix
	if s.compressed {
		zr, err := gzip.NewReader(bytes.NewReader(msg))
		if err != nil {
			return
		}
		out := make([]byte, opPrefix)
		n, _ := io.ReadFull(zr, out)
		msg = out[:n]
	}
	// A truncated prefix is fine: fields are read until one does not fit.
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return
		}
		msg = msg[n:]
		if num == 1 && typ == protowire.BytesType {
			b, m := protowire.ConsumeBytes(msg)
			if m >= 0 && len(b) > 0 {
				s.found(string(b))
			}
			return
		}
		m := protowire.ConsumeFieldValue(num, typ, msg)
		if m < 0 {
			return
		}
		msg = msg[m:]
	}
}

// opSet remembers the operations a box started, the oldest forgotten
// first once it is full.
type opSet struct {
	mu   sync.Mutex
	set  map[string]struct{}
	ring []string
	next int
}

const maxOps = 1 << 16

func newOpSet() *opSet { return &opSet{set: make(map[string]struct{})} }

func (o *opSet) Add(name string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, ok := o.set[name]; ok {
		return
	}
	if len(o.ring) < maxOps {
		o.ring = append(o.ring, name)
	} else {
		delete(o.set, o.ring[o.next])
		o.ring[o.next] = name
		o.next = (o.next + 1) % maxOps
	}
	o.set[name] = struct{}{}
}

// Own reports whether name was added.
func (o *opSet) Own(name string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	_, ok := o.set[name]
	return ok
}
