package reapi

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// net/http hides a request's :scheme. schemeConn reads the box's side of
// the connection before http2.Server does, decodes each request header
// block with its own HPACK decoder (fed exactly the blocks the server's
// decoder sees, so the two dynamic tables stay equal), and appends the
// :scheme it found as one more header, aisan-h2-scheme, in a CONTINUATION
// frame of its own. The appended field is a never-indexed literal, so
// neither table changes. A box that sends aisan-h2-scheme itself ends up
// with two values, which the policy refuses.
//
// Every other frame passes through unparsed, so flow control is the
// server's own. DATA frames are the exception in one respect only: a run
// of DATA frames for one stream that is already in the read buffer is
// handed on as one frame (see join), because a gRPC client sends 16 KiB
// frames and the server pays two goroutine hand-offs and an allocation
// for each; the payload bytes, their order and the END_STREAM flag stay
// as the client sent them, and the joined length is what the client's
// windows allowed, so flow control sees the same totals.
//
//	in:  [hdr 16K][payload][hdr 16K][payload][hdr 16K ES][payload]
//	out: [hdr 48K ES][payload][payload][payload]

const (
	frameData         = 0x0
	frameHeaders      = 0x1
	frameContinuation = 0x9
	flagEndStream     = 0x1
	flagEndHeaders    = 0x4
	flagPadded        = 0x8
	flagPriority      = 0x20

	// headerTableSize is the HPACK table size the server advertises (and
	// the protocol default); both decoders use it.
	headerTableSize = 4096
	// maxHeaderBlock bounds one decoded header list: far above what a gRPC
	// client sends, and what stops a small block from expanding into a
	// large one through the dynamic table.
	maxHeaderBlock = 256 << 10
	// maxFrame bounds a HEADERS or CONTINUATION frame we hold.
	maxFrame = 1 << 20
	// maxReadFrame is the largest frame the server takes (its
	// SETTINGS_MAX_FRAME_SIZE); a joined DATA frame stays well below it.
	maxReadFrame = 1 << 20
	// boxReadBuffer is what is read from the box's socket at once; it
	// bounds a joined DATA frame (bytes already read, never a wait for
	// more) and is the only buffer a connection holds here.
	boxReadBuffer = 256 << 10
	// maxJoin bounds how many DATA frames become one.
	maxJoin = 32
	// h2Header is the length of an HTTP/2 frame header.
	h2Header = 9
)

type schemeConn struct {
	net.Conn
	br *bufio.Reader

	out     []byte // translated bytes not yet returned
	pass    int    // payload bytes to return straight from br
	preface bool   // the client preface has been checked
	err     error

	hdr   [h2Header]byte // the frame header being read
	obuf  [h2Header]byte // backs out for a frame header passed on
	joins [maxJoin]int   // payload lengths of frames joined to the current one
	njoin int            // how many of joins are left to pass
	ijoin int            // the next of joins to pass

	dec       *hpack.Decoder
	enc       *hpack.Encoder
	encBuf    bytes.Buffer
	last      uint32 // highest stream that has sent its request headers
	inBlock   bool   // inside a header block (CONTINUATIONs follow)
	newStream bool   // the block opens a stream (not trailers)
	stream    uint32
	scheme    string
	size      int
}

func newSchemeConn(c net.Conn) *schemeConn {
	s := &schemeConn{Conn: c, br: bufio.NewReaderSize(c, boxReadBuffer)}
	s.dec = hpack.NewDecoder(headerTableSize, s.emit)
	s.dec.SetMaxStringLength(maxHeaderBlock)
	s.enc = hpack.NewEncoder(&s.encBuf)
	return s
}

func (s *schemeConn) emit(f hpack.HeaderField) {
	s.size += len(f.Name) + len(f.Value) + 32
	if f.Name == ":scheme" {
		s.scheme = f.Value
	}
}

func (s *schemeConn) Read(p []byte) (int, error) {
	for len(s.out) == 0 && s.pass == 0 {
		if s.err != nil {
			return 0, s.err
		}
		s.err = s.next()
	}
	if len(s.out) > 0 {
		n := copy(p, s.out)
		s.out = s.out[n:]
		return n, nil
	}
	if len(p) > s.pass {
		p = p[:s.pass]
	}
	n, err := s.br.Read(p)
	s.pass -= n
	if err != nil {
		s.err = err
	}
	if s.pass == 0 && s.ijoin < s.njoin {
		// The next joined frame's header was folded into the first one;
		// it is in the buffer already (join checked), so this does not
		// wait.
		if _, derr := s.br.Discard(h2Header); derr != nil && s.err == nil {
			s.err = derr
		}
		s.pass = s.joins[s.ijoin]
		s.ijoin++
	}
	return n, err
}

// next translates one unit of input into s.out (or s.pass).
func (s *schemeConn) next() error {
	if !s.preface {
		buf := make([]byte, len(http2.ClientPreface))
		if _, err := io.ReadFull(s.br, buf); err != nil {
			return err
		}
		if string(buf) != http2.ClientPreface {
			return errors.New("not an HTTP/2 prior-knowledge connection")
		}
		s.preface, s.out = true, buf
		return nil
	}
	hdr := s.hdr[:]
	if _, err := io.ReadFull(s.br, hdr); err != nil {
		return err
	}
	length := frameLen(hdr)
	typ, flags := hdr[3], hdr[4]
	stream := binary.BigEndian.Uint32(hdr[5:]) & (1<<31 - 1)
	if s.inBlock && (typ != frameContinuation || stream != s.stream) {
		return errors.New("header block interrupted")
	}
	if typ != frameHeaders && typ != frameContinuation {
		s.out = s.obuf[:]
		copy(s.out, hdr)
		s.pass = length
		if typ == frameData {
			s.join()
		}
		return nil
	}
	if length > maxFrame {
		return fmt.Errorf("header frame of %d bytes", length)
	}
	frame := make([]byte, h2Header+length)
	copy(frame, hdr)
	if _, err := io.ReadFull(s.br, frame[h2Header:]); err != nil {
		return err
	}
	frag := frame[h2Header:]
	if typ == frameHeaders {
		if s.inBlock {
			return errors.New("header block interrupted")
		}
		var err error
		if frag, err = headerFragment(frag, flags); err != nil {
			return err
		}
		s.inBlock, s.stream, s.scheme, s.size = true, stream, "", 0
		s.newStream = stream > s.last && stream%2 == 1
		if s.newStream {
			s.last = stream
		}
	} else if !s.inBlock {
		return errors.New("CONTINUATION outside a header block")
	}
	if _, err := s.dec.Write(frag); err != nil {
		return fmt.Errorf("request headers: %w", err)
	}
	if s.size > maxHeaderBlock {
		return errors.New("request headers too large")
	}
	s.out = frame
	if flags&flagEndHeaders == 0 {
		return nil
	}
	s.inBlock = false
	if err := s.dec.Close(); err != nil {
		return fmt.Errorf("request headers: %w", err)
	}
	if !s.newStream {
		return nil
	}
	frame[4] &^= flagEndHeaders
	s.encBuf.Reset()
	if err := s.enc.WriteField(hpack.HeaderField{Name: schemeHeader, Value: s.scheme, Sensitive: true}); err != nil {
		return err
	}
	var c [9]byte
	n := s.encBuf.Len()
	c[0], c[1], c[2] = byte(n>>16), byte(n>>8), byte(n)
	c[3], c[4] = frameContinuation, flagEndHeaders
	binary.BigEndian.PutUint32(c[5:], stream)
	s.out = append(append(frame, c[:]...), s.encBuf.Bytes()...)
	return nil
}

// headerFragment strips a HEADERS frame's padding and priority fields.
func headerFragment(p []byte, flags byte) ([]byte, error) {
	pad := 0
	if flags&flagPadded != 0 {
		if len(p) < 1 {
			return nil, errors.New("short HEADERS frame")
		}
		pad, p = int(p[0]), p[1:]
	}
	if flags&flagPriority != 0 {
		if len(p) < 5 {
			return nil, errors.New("short HEADERS frame")
		}
		p = p[5:]
	}
	if pad > len(p) {
		return nil, errors.New("HEADERS padding longer than the frame")
	}
	return p[:len(p)-pad], nil
}

func frameLen(h []byte) int { return int(h[0])<<16 | int(h[1])<<8 | int(h[2]) }

// join folds the DATA frames that follow the one in s.out, for the same
// stream and already read in full, into it: s.out's header gets their
// summed length and the last one's END_STREAM, and Read skips their
// headers. Only plain frames are joined (no padding, no flag but the
// last one's END_STREAM, no empty payload), never past maxJoin frames or
// boxReadBuffer bytes, and never stream 0's, which the server must see
// as the client sent them to refuse them.
func (s *schemeConn) join() {
	s.njoin, s.ijoin = 0, 0
	h := s.out
	total := frameLen(h)
	if h[4] != 0 || total == 0 || binary.BigEndian.Uint32(h[5:]) == 0 {
		return
	}
	off := total // where the next header starts in br's buffer
	for s.njoin < maxJoin {
		if s.br.Buffered() < off+h2Header {
			break
		}
		next, err := s.br.Peek(off + h2Header)
		if err != nil {
			break
		}
		next = next[off:]
		n := frameLen(next)
		if next[3] != frameData || next[4]&^flagEndStream != 0 || n == 0 ||
			!bytes.Equal(next[5:h2Header], h[5:h2Header]) ||
			total+n > boxReadBuffer || s.br.Buffered() < off+h2Header+n {
			break
		}
		s.joins[s.njoin] = n
		s.njoin++
		total += n
		off += h2Header + n
		if next[4]&flagEndStream != 0 {
			h[4] = flagEndStream
			break
		}
	}
	h[0], h[1], h[2] = byte(total>>16), byte(total>>8), byte(total)
}
