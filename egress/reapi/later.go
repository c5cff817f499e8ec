package reapi

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
)

// The messages of a streaming request after the first pass to the
// upstream as they arrive (a ByteStream Write is gigabytes), so they are
// checked on the way instead of before (policy.go's rule 6):
//
//	box ─► bufio ─► laterCheck ─► upBody ─► transport ─► upstream
//	                   │
//	                   └ gRPC frames: [flag 1][length 4][message]
//	                     message: top-level fields, one at a time
//
// A message's verdict is known by its last byte at the latest, and a
// refused message is cut off before the byte that condemned it. A gRPC
// server decodes only whole messages, so the upstream never acts on a
// refused one: it sees a stream reset partway through a message.
//
// A compressed message (flag 1, gzip only) is kept until its last byte
// and then read through gunzip; like the first message it is bounded by
// max_first_message, compressed and not.

// maxLaterValue bounds the rule's field in a later message, which is kept
// until it is whole: a resource or instance name.
const maxLaterValue = 64 << 10

// laterCheck reads a streaming request's body after its first message,
// applying rule 6 to each message as its bytes go by.
type laterCheck struct {
	r       io.Reader
	c       *Config
	method  string
	rule    Rule
	hasRule bool
	ops     opsChecker
	gzip    bool // the stream's grpc-encoding is gzip

	msgs       int // messages begun, the first included
	hdr        [5]byte
	nhdr       int
	inMsg      bool
	compressed bool
	remain     int
	zbuf       []byte // a compressed message, until its last byte
	scan       fieldScan

	mu     sync.Mutex
	denied *Denied
}

func newLaterCheck(r io.Reader, c *Config, method, encoding string, ops opsChecker) *laterCheck {
	rule, ok := c.rule(method)
	l := &laterCheck{r: r, c: c, method: method, rule: rule, hasRule: ok, ops: ops, gzip: encoding == "gzip", msgs: 1}
	if ok {
		l.scan.field = rule.Field
	}
	return l
}

// Read passes on the box's bytes up to the first one that condemns a
// message; from then on it returns the refusal.
func (l *laterCheck) Read(p []byte) (int, error) {
	if d := l.refusal(); d != nil {
		return 0, d
	}
	n, err := l.r.Read(p)
	if k, d := l.check(p[:n]); d != nil {
		l.mu.Lock()
		l.denied = d
		l.mu.Unlock()
		return k, d
	}
	return n, err
}

// refusal is the reason a message was refused, nil while none was.
func (l *laterCheck) refusal() *Denied {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.denied
}

// check scans p, which continues the stream; on a refusal it returns how
// many of p's bytes may still go on: those before the condemning one.
func (l *laterCheck) check(p []byte) (int, *Denied) {
	i := 0
	for i < len(p) {
		if !l.inMsg {
			k := copy(l.hdr[l.nhdr:], p[i:])
			l.nhdr += k
			i += k
			if l.nhdr < len(l.hdr) {
				return len(p), nil
			}
			l.nhdr = 0
			l.msgs++
			if err := l.begin(); err != nil {
				return i - 1, l.deny(err)
			}
			if l.remain == 0 {
				if err := l.finish(); err != nil {
					return i - 1, l.deny(err)
				}
			}
			continue
		}
		n := min(l.remain, len(p)-i)
		if l.compressed {
			l.zbuf = append(l.zbuf, p[i:i+n]...)
		} else if k, err := l.scan.feed(p[i : i+n]); err != nil {
			return i + k, l.deny(err)
		}
		l.remain -= n
		i += n
		if l.remain == 0 {
			if err := l.finish(); err != nil {
				return i - 1, l.deny(err)
			}
		}
	}
	return len(p), nil
}

func (l *laterCheck) deny(err error) *Denied {
	var d *Denied
	if errors.As(err, &d) {
		err = errors.New(d.Reason)
	}
	return &Denied{Reason: fmt.Sprintf("request message %d of %s: %v", l.msgs, l.method, err)}
}

// begin reads a message's frame header.
func (l *laterCheck) begin() error {
	flag, size := l.hdr[0], binary.BigEndian.Uint32(l.hdr[1:])
	switch {
	case flag > 1:
		return fmt.Errorf("bad gRPC frame flags %#x", flag)
	case flag == 1 && !l.gzip:
		return errors.New("compressed, and only gzip can be checked")
	case flag == 1 && uint64(size) > uint64(l.c.MaxFirstMessage):
		return fmt.Errorf("compressed and %d bytes; the limit for a compressed message is %d (max_first_message)", size, l.c.MaxFirstMessage)
	}
	l.inMsg, l.compressed, l.remain = true, flag == 1, int(size)
	l.scan.reset()
	l.zbuf = l.zbuf[:0]
	return nil
}

// finish judges a message at its last byte.
func (l *laterCheck) finish() error {
	l.inMsg = false
	if l.compressed {
		if err := l.gunzipFeed(); err != nil {
			return err
		}
	}
	if err := l.scan.end(); err != nil {
		return err
	}
	if !l.hasRule || !l.scan.seen {
		return nil
	}
	v := l.scan.value
	if !utf8.Valid(v) {
		return fmt.Errorf("field %d: not UTF-8", l.rule.Field)
	}
	return l.c.permits(l.rule, l.method, string(v), l.ops)
}

// gunzipFeed scans a compressed message's contents.
func (l *laterCheck) gunzipFeed() error {
	zr, err := gzip.NewReader(bytes.NewReader(l.zbuf))
	if err != nil {
		return fmt.Errorf("bad gzip: %v", err)
	}
	var buf [32 << 10]byte
	total := 0
	for {
		n, rerr := zr.Read(buf[:])
		total += n
		if total > l.c.MaxFirstMessage {
			return fmt.Errorf("decompresses beyond %d bytes (max_first_message)", l.c.MaxFirstMessage)
		}
		if _, err := l.scan.feed(buf[:n]); err != nil {
			return err
		}
		if rerr == io.EOF {
			return nil
		}
		if rerr != nil {
			return fmt.Errorf("bad gzip: %v", rerr)
		}
	}
}

// fieldScan checks one message's top-level fields as its bytes arrive:
// each must parse, groups are refused (nothing here streams them), and
// the field numbered field, a string, is kept when it is there, once.
type fieldScan struct {
	field protowire.Number // 0: no field is kept

	state scanState
	vbuf  [binary.MaxVarintLen64]byte // a tag or length being read
	nvbuf int
	num   protowire.Number // the field being read
	left  int              // its value's bytes still to come
	seen  bool
	value []byte
}

type scanState uint8

const (
	atTag    scanState = iota // a field's tag is next
	inVarint                  // a varint value
	atLength                  // a length-delimited value's length
	skipping                  // a value's bytes, passed over
	keeping                   // the kept field's bytes
)

func (f *fieldScan) reset() {
	f.state, f.nvbuf, f.num, f.left, f.seen = atTag, 0, 0, 0, false
	f.value = f.value[:0]
}

// feed scans p, which continues the message. On an error it returns the
// index of the byte that showed it.
func (f *fieldScan) feed(p []byte) (int, error) {
	i := 0
	for i < len(p) {
		switch f.state {
		case skipping, keeping:
			n := min(f.left, len(p)-i)
			if f.state == keeping {
				f.value = append(f.value, p[i:i+n]...)
			}
			f.left -= n
			i += n
			if f.left == 0 {
				f.state = atTag
			}
			continue
		}
		if f.nvbuf == len(f.vbuf) {
			return i, errors.New("malformed protobuf: varint too long")
		}
		c := p[i]
		f.vbuf[f.nvbuf] = c
		f.nvbuf++
		if c&0x80 != 0 {
			i++
			continue
		}
		v, n := protowire.ConsumeVarint(f.vbuf[:f.nvbuf])
		f.nvbuf = 0
		if n < 0 {
			return i, errors.New("malformed protobuf: bad varint")
		}
		if err := f.varint(v); err != nil {
			return i, err
		}
		i++
	}
	return i, nil
}

// varint takes a whole varint: a tag, a length, or a value.
func (f *fieldScan) varint(v uint64) error {
	switch f.state {
	case inVarint:
		f.state = atTag
	case atTag:
		num, typ := protowire.DecodeTag(v)
		if num < protowire.MinValidNumber {
			return errors.New("malformed protobuf: bad field number")
		}
		f.num = num
		if f.field != 0 && num == f.field && typ != protowire.BytesType {
			return fmt.Errorf("field %d: not a string", num)
		}
		switch typ {
		case protowire.VarintType:
			f.state = inVarint
		case protowire.Fixed32Type:
			f.state, f.left = skipping, 4
		case protowire.Fixed64Type:
			f.state, f.left = skipping, 8
		case protowire.BytesType:
			f.state = atLength
		case protowire.StartGroupType, protowire.EndGroupType:
			return fmt.Errorf("field %d: a group, which a later message may not have", num)
		default:
			return fmt.Errorf("malformed protobuf field %d: wire type %d", num, typ)
		}
	case atLength:
		if v > 1<<32 {
			return fmt.Errorf("malformed protobuf field %d: length %d", f.num, v)
		}
		f.left, f.state = int(v), skipping
		if f.field != 0 && f.num == f.field {
			if f.seen {
				return fmt.Errorf("field %d: given more than once", f.num)
			}
			if v > maxLaterValue {
				return fmt.Errorf("field %d: %d bytes, over the %d a later message may name", f.num, v, maxLaterValue)
			}
			f.seen, f.state = true, keeping
		}
		if f.left == 0 {
			f.state = atTag
		}
	}
	return nil
}

// end checks that the message did not stop inside a field.
func (f *fieldScan) end() error {
	if f.state != atTag || f.nvbuf != 0 {
		return fmt.Errorf("malformed protobuf: the message ends inside field %d", f.num)
	}
	return nil
}
