package reapi

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
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
// gunzipped when the frame says it is compressed. A Denied error means
// the message is not one we can check.
func readFirst(body io.Reader, encoding string, max int) (raw, msg []byte, err error) {
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
	raw = make([]byte, 5+int(size))
	copy(raw, hdr[:])
	if _, err := io.ReadFull(body, raw[5:]); err != nil {
		return nil, nil, err
	}
	msg = raw[5:]
	if hdr[0] == 0 {
		return raw, msg, nil
	}
	if encoding != "gzip" {
		return nil, nil, deny("first request message compressed with %q; only gzip can be checked", encoding)
	}
	msg, err = gunzip(msg, max)
	if err != nil {
		return nil, nil, deny("first request message: %v", err)
	}
	return raw, msg, nil
}

// readRest reads what follows the first message of a one-message request,
// up to max more bytes: normally nothing but END_STREAM.
func readRest(raw []byte, body io.Reader, max int) ([]byte, error) {
	more, err := io.ReadAll(io.LimitReader(body, int64(max)+1))
	if err != nil {
		return nil, err
	}
	if len(more) > max {
		return nil, fmt.Errorf("more than %d bytes after the only request message", max)
	}
	return append(raw, more...), nil
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

func (v *upView) Read(p []byte) (int, error) {
	b := v.b
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
