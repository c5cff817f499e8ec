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
// DATA and every other frame pass through unparsed, so flow control and
// throughput are the server's own.

const (
	frameHeaders      = 0x1
	frameContinuation = 0x9
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
)

type schemeConn struct {
	net.Conn
	br *bufio.Reader

	out     []byte // translated bytes not yet returned
	pass    int    // DATA payload bytes to return straight from br
	preface bool   // the client preface has been checked
	err     error

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
	s := &schemeConn{Conn: c, br: bufio.NewReaderSize(c, 64<<10)}
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
	var hdr [9]byte
	if _, err := io.ReadFull(s.br, hdr[:]); err != nil {
		return err
	}
	length := int(hdr[0])<<16 | int(hdr[1])<<8 | int(hdr[2])
	typ, flags := hdr[3], hdr[4]
	stream := binary.BigEndian.Uint32(hdr[5:]) & (1<<31 - 1)
	if s.inBlock && (typ != frameContinuation || stream != s.stream) {
		return errors.New("header block interrupted")
	}
	if typ != frameHeaders && typ != frameContinuation {
		s.out = append(s.out[:0], hdr[:]...)
		s.pass = length
		return nil
	}
	if length > maxFrame {
		return fmt.Errorf("header frame of %d bytes", length)
	}
	frame := make([]byte, 9+length)
	copy(frame, hdr[:])
	if _, err := io.ReadFull(s.br, frame[9:]); err != nil {
		return err
	}
	frag := frame[9:]
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
