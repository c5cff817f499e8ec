package reapi

import (
	"bytes"
	"compress/gzip"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/protobuf/encoding/protowire"
)

// FuzzCheckHeaders: whatever the box sends, a stream passes only with
// exactly the pseudo-headers the policy names.
func FuzzCheckHeaders(f *testing.F) {
	c := testConfig(f, "")
	f.Add("POST", "http", inBox, executeMethod, "application/grpc")
	f.Add("POST", "http", inBox, pkgBS+"Write", "application/grpc+proto")
	f.Add("GET", "http", inBox, executeMethod, "application/grpc")
	f.Add("POST", "https", inBox, executeMethod, "application/grpc")
	f.Add("POST", "http", upAddr, executeMethod, "application/grpc")
	f.Add("POST", "http", inBox, executeMethod+"?a", "application/grpc")
	f.Add("POST", "http", inBox, pkgREv2+"ActionCache/UpdateActionResult", "application/grpc")
	f.Add("POST", "http", inBox, executeMethod, "application/grpcx")
	f.Fuzz(func(t *testing.T, method, scheme, authority, path, ctype string) {
		r := &http.Request{Method: method, Host: authority, RequestURI: path, Header: http.Header{}}
		r.Header.Set("Content-Type", ctype)
		r.Header.Set(schemeHeader, scheme)
		err := checkHeaders(c, inBox, r)
		if err != nil {
			if _, ok := err.(*Denied); !ok {
				t.Fatalf("not a denial: %v", err)
			}
			if strings.ContainsFunc(grpcMessage(err.Error()), func(r rune) bool { return r < ' ' || r > '~' }) {
				t.Fatalf("grpc-message not clean: %q", grpcMessage(err.Error()))
			}
			return
		}
		if method != "POST" || scheme != "http" || authority != inBox || !slices.Contains(c.Methods, path) ||
			!strings.HasPrefix(ctype, "application/grpc") {
			t.Fatalf("allowed %q %q %q %q %q", method, scheme, authority, path, ctype)
		}
	})
}

// lastString decodes field num the way a protobuf parser does: the last
// occurrence wins. It is the oracle for what the upstream would see.
func lastString(msg []byte, num protowire.Number) (string, bool) {
	v, ok := "", true
	for len(msg) > 0 {
		n, typ, tn := protowire.ConsumeTag(msg)
		if tn < 0 {
			return "", false
		}
		m := protowire.ConsumeFieldValue(n, typ, msg[tn:])
		if m < 0 {
			return "", false
		}
		if n == num && typ == protowire.BytesType {
			b, _ := protowire.ConsumeBytes(msg[tn:])
			v = string(b)
		}
		msg = msg[tn+m:]
	}
	return v, ok
}

// FuzzCheckFirstMessage: a message passes only if the value the upstream
// would read names the configured instance by the method's rule.
func FuzzCheckFirstMessage(f *testing.F) {
	own := testConfig(f, "")
	prefix := testConfig(f, "operations = \"prefix\"\n")
	ops := fakeOps{"operations/mine": true}
	for i, m := range DefaultMethods {
		for _, msg := range firstMessages("operations/mine") {
			f.Add(uint8(i), false, msg)
		}
		f.Add(uint8(i), true, appendString(nil, 1, testInst+"/operations/x"))
		f.Add(uint8(i), false, cat(appendString(nil, 1, testInst), appendString(nil, 1, "x")))
		f.Add(uint8(i), false, appendString(nil, 1, testInst+"/blobs/../x"))
		_ = m
	}
	f.Fuzz(func(t *testing.T, mi uint8, usePrefix bool, msg []byte) {
		c := own
		if usePrefix {
			c = prefix
		}
		method := c.Methods[int(mi)%len(c.Methods)]
		err := checkFirstMessage(c, method, msg, ops)
		if err != nil {
			if _, ok := err.(*Denied); !ok {
				t.Fatalf("not a denial: %v", err)
			}
			return
		}
		rule, _ := c.rule(method)
		v, ok := lastString(msg, rule.Field)
		if !ok {
			t.Fatalf("malformed message allowed: %x", msg)
		}
		inst := c.Instance
		switch rule.Match {
		case MatchEqual:
			ok = v == inst
		case MatchResource:
			ok = strings.HasPrefix(v, inst+"/") && !slices.Contains(strings.Split(v, "/"), "..")
		case MatchPrefix:
			ok = v == inst || strings.HasPrefix(v, inst+"/") && !slices.Contains(strings.Split(v, "/"), "..")
		case MatchOperation:
			ok = ops[v] || usePrefix && strings.HasPrefix(v, inst+"/operations/") && !slices.Contains(strings.Split(v, "/"), "..")
		}
		if !ok {
			t.Fatalf("%s allowed with %q", method, v)
		}
	})
}

// FuzzSchemeConn: arbitrary frames after the preface never panic the
// reader, and whatever it passes on still parses as HTTP/2 frames; when
// the reader takes all of it, every stream's DATA bytes and END_STREAM
// flags reach the server as sent, in frames no larger than the read
// buffer or the largest frame sent.
func FuzzSchemeConn(f *testing.F) {
	var b bytes.Buffer
	fr := http2.NewFramer(&b, nil)
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	fr.WriteSettings()
	fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: encodeBlock(enc, &hb, ":scheme", "http", ":path", "/a"), EndHeaders: true})
	fr.WriteData(1, true, []byte("x"))
	fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: encodeBlock(enc, &hb, ":scheme", "http", ":path", "/a"), PadLength: 3})
	fr.WriteContinuation(3, true, nil)
	f.Add(b.Bytes())
	f.Add([]byte{0, 0, 1, 1, 4, 0, 0, 0, 1, 0x3f})
	var joined bytes.Buffer
	jf := http2.NewFramer(&joined, nil)
	jf.WriteData(1, false, []byte("ab"))
	jf.WriteData(1, false, []byte("cd"))
	jf.WriteDataPadded(1, false, []byte("e"), []byte{0})
	jf.WriteData(1, true, []byte("f"))
	jf.WriteData(3, false, []byte("g"))
	f.Add(joined.Bytes())
	f.Fuzz(func(t *testing.T, frames []byte) {
		out, err := through(append([]byte(http2.ClientPreface), frames...))
		if len(out) < len(http2.ClientPreface) {
			return
		}
		if err == nil {
			// Nothing was refused: the whole input went through.
			wantData, wantEnds, wantLongest, okIn := streamData(frames)
			gotData, gotEnds, longest, okOut := streamData(out[len(http2.ClientPreface):])
			if okIn && !okOut {
				t.Fatal("whole frames in, a broken frame out")
			}
			if okIn {
				if !maps.Equal(gotData, wantData) || !maps.EqualFunc(gotEnds, wantEnds, slices.Equal) {
					t.Fatalf("DATA changed: got %v %v, want %v %v", gotData, gotEnds, wantData, wantEnds)
				}
				if longest > max(wantLongest, boxReadBuffer) {
					t.Fatalf("a %d-byte DATA frame from frames of at most %d", longest, wantLongest)
				}
			}
		}
		rd := http2.NewFramer(nil, bytes.NewReader(out[len(http2.ClientPreface):]))
		rd.SetMaxReadFrameSize(1 << 24)
		for {
			if _, err := rd.ReadFrame(); err != nil {
				if _, ok := err.(http2.StreamError); ok {
					continue
				}
				return
			}
		}
	})
}

// FuzzReadFirst: framing and gzip never panic, never read past the first
// message, and never hand back more than the limit.
func FuzzReadFirst(f *testing.F) {
	msg := appendString(nil, 1, testInst)
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write(msg)
	zw.Close()
	f.Add(frame(0, msg), "")
	f.Add(append([]byte{1, 0, 0, 0, byte(zb.Len())}, zb.Bytes()...), "gzip")
	f.Add(frame(1, msg), "gzip")
	f.Add([]byte{0, 0xff, 0xff, 0xff, 0xff}, "")
	f.Fuzz(func(t *testing.T, data []byte, enc string) {
		const max = 4096
		r := bytes.NewReader(data)
		raw, msg, err := readFirst(r, enc, max, func(n int) error {
			if n > 5+2*max {
				t.Fatalf("asked for %d bytes", n)
			}
			return nil
		})
		if err != nil {
			return
		}
		if !bytes.HasPrefix(data, raw) || len(data)-r.Len() != len(raw) {
			t.Fatalf("read %d bytes for a %d-byte frame", len(data)-r.Len(), len(raw))
		}
		if len(msg) > max {
			t.Fatalf("message of %d bytes past the limit", len(msg))
		}
	})
}
