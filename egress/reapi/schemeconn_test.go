package reapi

import (
	"bytes"
	"errors"
	"io"
	"net"
	"testing"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

type readConn struct {
	net.Conn
	r io.Reader
}

func (c readConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// through passes client bytes through a schemeConn and returns what the
// server would read.
func through(in []byte) ([]byte, error) {
	sc := newSchemeConn(readConn{r: bytes.NewReader(in)})
	var out bytes.Buffer
	_, err := io.Copy(&out, sc)
	return out.Bytes(), err
}

func encodeBlock(enc *hpack.Encoder, buf *bytes.Buffer, fields ...string) []byte {
	buf.Reset()
	for i := 0; i < len(fields); i += 2 {
		enc.WriteField(hpack.HeaderField{Name: fields[i], Value: fields[i+1]})
	}
	return append([]byte(nil), buf.Bytes()...)
}

func TestSchemeConn(t *testing.T) {
	var in bytes.Buffer
	in.WriteString(http2.ClientPreface)
	fr := http2.NewFramer(&in, nil)
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	fr.WriteSettings()
	req := func(scheme string) []byte {
		return encodeBlock(enc, &hb, ":method", "POST", ":scheme", scheme, ":path", executeMethod,
			":authority", inBox, "content-type", "application/grpc", "te", "trailers")
	}
	// Stream 1: padded, with priority, split over a CONTINUATION.
	b1 := req("http")
	fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: b1[:3], PadLength: 7,
		Priority: http2.PriorityParam{StreamDep: 0, Weight: 9}})
	fr.WriteContinuation(1, true, b1[3:])
	fr.WriteData(1, false, []byte("payload"))
	// Stream 3 reuses the dynamic table the first block filled.
	b3 := req("https")
	if len(b3) >= len(b1) {
		t.Fatalf("second block (%d bytes) does not use the dynamic table (first %d)", len(b3), len(b1))
	}
	fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: b3, EndHeaders: true, EndStream: true})
	// Trailers on stream 1 open no stream: nothing is appended.
	fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: encodeBlock(enc, &hb, "x-trailer", "1"), EndHeaders: true, EndStream: true})

	out, err := through(in.Bytes())
	if err != nil && !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(out, []byte(http2.ClientPreface)) {
		t.Fatal("preface lost")
	}
	rd := http2.NewFramer(nil, bytes.NewReader(out[len(http2.ClientPreface):]))
	rd.ReadMetaHeaders = hpack.NewDecoder(headerTableSize, nil)
	var got []string
	for {
		f, err := rd.ReadFrame()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("server side cannot read the translated stream: %v", err)
		}
		switch f := f.(type) {
		case *http2.MetaHeadersFrame:
			var s string
			for _, hf := range f.Fields {
				if hf.Name == schemeHeader {
					s += hf.Value + ";"
				}
			}
			got = append(got, itoa(int(f.StreamID))+"="+s)
			if f.Fields[len(f.Fields)-1].Name != schemeHeader && s != "" {
				t.Errorf("stream %d: scheme header not last", f.StreamID)
			}
		case *http2.DataFrame:
			if string(f.Data()) != "payload" {
				t.Errorf("DATA changed: %q", f.Data())
			}
		}
	}
	if want := "1=http;,3=https;,1="; joinComma(got) != want {
		t.Errorf("header blocks %q, want %q", joinComma(got), want)
	}
}

func joinComma(s []string) string {
	var b bytes.Buffer
	for i, x := range s {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(x)
	}
	return b.String()
}

func TestSchemeConnRefuses(t *testing.T) {
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	block := encodeBlock(enc, &hb, ":method", "POST", ":scheme", "http")
	frames := func(write func(fr *http2.Framer)) []byte {
		var b bytes.Buffer
		b.WriteString(http2.ClientPreface)
		write(http2.NewFramer(&b, nil))
		return b.Bytes()
	}
	for _, tc := range []struct {
		name string
		in   []byte
	}{
		{"no preface", []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")},
		{"interrupted block", frames(func(fr *http2.Framer) {
			fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block[:2]})
			fr.WriteData(1, false, []byte("x"))
		})},
		{"stray continuation", frames(func(fr *http2.Framer) { fr.WriteContinuation(1, true, block) })},
		{"bad hpack", frames(func(fr *http2.Framer) {
			fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: []byte{0xff, 0xff, 0xff, 0xff}, EndHeaders: true})
		})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := through(tc.in)
			if err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("got %v, want a protocol error", err)
			}
		})
	}
}
