package reapi

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	grpcgzip "google.golang.org/grpc/encoding/gzip"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
)

func plainFrame(msg []byte) []byte {
	return append(binary.BigEndian.AppendUint32([]byte{0}, uint32(len(msg))), msg...)
}

func gzFrame(t testing.TB, msg []byte) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(msg)
	zw.Close()
	f := plainFrame(b.Bytes())
	f[0] = 1
	return f
}

// writeMsg is a later WriteRequest: its data, and name when not "".
func writeMsg(name string) []byte {
	var m []byte
	if name != "" {
		m = appendString(m, 1, name)
	}
	m = protowire.AppendVarint(protowire.AppendTag(m, 2, protowire.VarintType), 1<<20)
	return appendBytes(m, 10, bytes.Repeat([]byte("d"), 300))
}

// TestLaterCheck feeds streams of later messages through the check in
// pieces of every size from one byte up: the verdict must not depend on
// how the stream is cut, and a refused message must never pass whole.
func TestLaterCheck(t *testing.T) {
	c := testConfig(t, "")
	good := testInst + "/uploads/u1/blobs/h/300"
	cases := []struct {
		name   string
		frames [][]byte
		gzip   bool
		want   string // "" passes; else in the refusal
	}{
		{"no names", [][]byte{plainFrame(writeMsg("")), plainFrame(writeMsg(""))}, false, ""},
		{"same name", [][]byte{plainFrame(writeMsg(good)), plainFrame(writeMsg(good))}, false, ""},
		{"empty message", [][]byte{plainFrame(nil), plainFrame(writeMsg(""))}, false, ""},
		{"other instance", [][]byte{plainFrame(writeMsg("")), plainFrame(writeMsg("projects/other/instances/x/uploads/u1/blobs/h/300"))}, false, "request message 3 of /google.bytestream.ByteStream/Write: instance not permitted"},
		{"dot-dot", [][]byte{plainFrame(writeMsg(testInst + "/uploads/../../x/blobs/h/1"))}, false, "instance not permitted"},
		{"name twice", [][]byte{plainFrame(append(writeMsg(good), writeMsg(good)...))}, false, "given more than once"},
		{"name as varint", [][]byte{plainFrame(protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 7))}, false, "not a string"},
		{"group", [][]byte{plainFrame(protowire.AppendTag(protowire.AppendTag(nil, 5, protowire.StartGroupType), 5, protowire.EndGroupType))}, false, "a group"},
		{"bad wire type", [][]byte{plainFrame([]byte{0x17})}, false, "wire type"},
		{"field zero", [][]byte{plainFrame([]byte{0x02, 0x00})}, false, "bad field number"},
		{"length past end", [][]byte{plainFrame(append(writeMsg(""), 0x52, 0x10, 'x'))}, false, "ends inside field 10"},
		{"long varint", [][]byte{plainFrame(bytes.Repeat([]byte{0x80}, 11))}, false, "varint too long"},
		{"bad flags", [][]byte{append([]byte{2}, plainFrame(writeMsg(""))[1:]...)}, false, "bad gRPC frame flags"},
		{"not UTF-8", [][]byte{plainFrame(appendString(nil, 1, testInst+"/uploads/\xff/blobs/h/1"))}, false, "not UTF-8"},
		{"compressed, not gzip", [][]byte{gzFrame(t, writeMsg(""))}, false, "only gzip"},
		{"compressed same name", [][]byte{gzFrame(t, writeMsg(good)), gzFrame(t, writeMsg(""))}, true, ""},
		{"compressed other instance", [][]byte{gzFrame(t, writeMsg("projects/other/instances/x/blobs/h/1"))}, true, "instance not permitted"},
		{"compressed garbage", [][]byte{append([]byte{1}, plainFrame([]byte("not gzip"))[1:]...)}, true, "bad gzip"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stream := bytes.Join(tc.frames, nil)
			for size := 1; size <= len(stream); size = size*2 + 1 {
				out, err := runLater(c, stream, size, tc.gzip)
				if tc.want == "" {
					if err != nil || !bytes.Equal(out, stream) {
						t.Fatalf("pieces of %d: %v, passed %d of %d bytes", size, err, len(out), len(stream))
					}
					continue
				}
				var d *Denied
				if !errors.As(err, &d) || !strings.Contains(d.Reason, tc.want) {
					t.Fatalf("pieces of %d: %v; want a refusal with %q", size, err, tc.want)
				}
				if whole := wholeMessages(out); whole >= len(tc.frames) || whole < refusedAt(t, c, tc.frames, tc.gzip) {
					t.Fatalf("pieces of %d: %d whole messages passed before the refusal", size, whole)
				}
			}
		})
	}
}

// runLater reads stream through a laterCheck in reads of at most size
// bytes, returning what it passed on.
func runLater(c *Config, stream []byte, size int, gz bool) ([]byte, error) {
	enc := ""
	if gz {
		enc = "gzip"
	}
	l := newLaterCheck(&pieceReader{b: stream, size: size}, c, pkgBS+"Write", enc, nil)
	var out []byte
	buf := make([]byte, 4096)
	for {
		n, err := l.Read(buf)
		out = append(out, buf[:n]...)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

type pieceReader struct {
	b    []byte
	size int
}

func (r *pieceReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), r.size)], r.b)
	r.b = r.b[n:]
	return n, nil
}

// wholeMessages counts the complete gRPC messages in b.
func wholeMessages(b []byte) int {
	n := 0
	for len(b) >= 5 {
		size := int(binary.BigEndian.Uint32(b[1:]))
		if len(b) < 5+size {
			break
		}
		b = b[5+size:]
		n++
	}
	return n
}

// refusedAt is the index of the first frame the reference check refuses.
func refusedAt(t testing.TB, c *Config, frames [][]byte, gz bool) int {
	for i, f := range frames {
		if referenceLater(c, f, gz) != nil {
			return i
		}
	}
	t.Fatal("the reference check refuses no frame")
	return -1
}

// referenceLater judges one whole later frame the slow way: the
// message decoded at once, as policy.go judges the first.
func referenceLater(c *Config, f []byte, gz bool) error {
	if f[0] > 1 || f[0] == 1 && !gz {
		return errors.New("flags")
	}
	msg := f[5:]
	if f[0] == 1 {
		if len(msg) > c.MaxFirstMessage {
			return errors.New("too big")
		}
		var err error
		if msg, err = gunzip(msg, c.MaxFirstMessage); err != nil {
			return err
		}
	}
	for m := msg; len(m) > 0; {
		num, typ, n := protowire.ConsumeTag(m)
		if n < 0 || typ == protowire.StartGroupType || typ == protowire.EndGroupType {
			return errors.New("malformed")
		}
		k := protowire.ConsumeFieldValue(num, typ, m[n:])
		if k < 0 {
			return errors.New("malformed")
		}
		m = m[n+k:]
	}
	rule, _ := c.rule(pkgBS + "Write")
	seen, v := false, []byte(nil)
	for m := msg; len(m) > 0; {
		num, typ, n := protowire.ConsumeTag(m)
		k := protowire.ConsumeFieldValue(num, typ, m[n:])
		if num == rule.Field {
			if typ != protowire.BytesType || seen {
				return errors.New("field")
			}
			seen = true
			v, _ = protowire.ConsumeBytes(m[n:])
			if len(v) > maxLaterValue {
				return errors.New("long")
			}
		}
		m = m[n+k:]
	}
	if !seen {
		return nil
	}
	if !utf8.Valid(v) {
		return errors.New("utf-8")
	}
	return c.permits(rule, pkgBS+"Write", string(v), nil)
}

// FuzzLaterCheck: on any stream, cut anywhere, the check refuses exactly
// where the whole-message reference first does, and passes no refused
// message whole.
func FuzzLaterCheck(f *testing.F) {
	f.Add(plainFrame(writeMsg(testInst+"/uploads/u/blobs/h/1")), uint8(3), false)
	f.Add(append(plainFrame(writeMsg("")), plainFrame(writeMsg("other/blobs/h/1"))...), uint8(1), false)
	f.Add(gzFrame(f, writeMsg(testInst+"/blobs/h/1")), uint8(7), true)
	f.Add([]byte{0, 0, 0, 0, 2, 0x0a, 0x00}, uint8(2), false)
	c := testConfig(f, "")
	f.Fuzz(func(t *testing.T, stream []byte, size uint8, gz bool) {
		out, err := runLater(c, stream, int(size)+1, gz)
		// The reference, over the whole frames the stream holds.
		var frames [][]byte
		rest := stream
		for len(rest) >= 5 {
			n := int(binary.BigEndian.Uint32(rest[1:]))
			if len(rest) < 5+n {
				break
			}
			frames = append(frames, rest[:5+n])
			rest = rest[5+n:]
		}
		bad := -1
		for i, fr := range frames {
			if referenceLater(c, fr, gz) != nil {
				bad = i
				break
			}
		}
		// A frame header alone may be refused (flags, size) before its
		// message arrives; the reference sees only whole frames.
		if bad < 0 {
			if err == nil && !bytes.Equal(out, stream) {
				t.Fatalf("passed %d of %d bytes without a refusal", len(out), len(stream))
			}
			if err != nil && wholeMessages(out) < len(frames) {
				t.Fatalf("refused %v with whole frames left the reference accepts", err)
			}
			return
		}
		if err == nil {
			t.Fatalf("frame %d is refused by the reference (%v), and the check passed it", bad, referenceLater(c, frames[bad], gz))
		}
		if w := wholeMessages(out); w != bad {
			t.Fatalf("%d whole messages passed; the reference refuses message %d (%v; check: %v)", w, bad, referenceLater(c, frames[bad], gz), err)
		}
	})
}

// TestWriteLaterMessages: ByteStream Write through the server to a real
// grpc-go upstream, its later messages naming resources. A refused one
// ends the stream with PERMISSION_DENIED, and the upstream never gets it.
func TestWriteLaterMessages(t *testing.T) {
	good := testInst + "/uploads/u1/blobs/h/3000"
	cases := []struct {
		name  string
		later string
		gzip  bool
		code  codes.Code
	}{
		{"same name", good, false, codes.OK},
		{"other instance", "projects/other/instances/x/uploads/u1/blobs/h/3000", false, codes.PermissionDenied},
		{"climbing out", testInst + "/uploads/../../../other/blobs/h/3000", false, codes.PermissionDenied},
		{"gzip, same name", good, true, codes.OK},
		{"gzip, other instance", "projects/other/instances/x/uploads/u1/blobs/h/3000", true, codes.PermissionDenied},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			up := startUpstream(t)
			b := newBox(t, up, "", false)
			var opts []grpc.CallOption
			if tc.gzip {
				opts = append(opts, grpc.UseCompressor(grpcgzip.Name))
			}
			s, err := b.client().NewStream(ctxT(t, 30*time.Second), &grpc.StreamDesc{ClientStreams: true}, pkgBS+"Write", opts...)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				name := good
				if i > 0 {
					name = tc.later
				}
				m := appendString(nil, 1, name)
				m = protowire.AppendVarint(protowire.AppendTag(m, 2, protowire.VarintType), uint64(i*1000))
				if i == 2 {
					m = protowire.AppendVarint(protowire.AppendTag(m, 3, protowire.VarintType), 1)
				}
				m = appendBytes(m, 10, bytes.Repeat([]byte{byte(i)}, 1000))
				if err := s.SendMsg(m); err != nil {
					break // the refusal ended the stream
				}
			}
			s.CloseSend()
			var resp []byte
			err = s.RecvMsg(&resp)
			if status.Code(err) != tc.code {
				t.Fatalf("Write: %v; want %v", err, tc.code)
			}
			up.mu.Lock()
			names := up.laterNames
			up.mu.Unlock()
			for _, n := range names {
				if n != good {
					t.Errorf("the upstream got a later message naming %q", n)
				}
			}
			if tc.code != codes.OK {
				es := b.log.entries()
				if len(es) != 1 || !strings.Contains(es[0].Refused, "request message 2 of "+pkgBS+"Write") {
					t.Errorf("audit: %s", mustJSON(es))
				}
				if st, _ := status.FromError(err); !strings.Contains(st.Message(), "instance not permitted") {
					t.Errorf("the box was told %q", st.Message())
				}
			}
		})
	}
}
