package reapi

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"slices"
	"strings"
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

// streamData is what a server makes of the DATA frames in b (frames
// after the preface): each stream's payload, padding stripped, and the
// offsets in it where END_STREAM came; longest is the largest DATA frame.
// ok is false when b does not end on a frame boundary or a padded frame
// is malformed.
func streamData(b []byte) (data map[uint32]string, ends map[uint32][]int, longest int, ok bool) {
	data, ends = map[uint32]string{}, map[uint32][]int{}
	for len(b) > 0 {
		if len(b) < h2Header {
			return nil, nil, 0, false
		}
		n := frameLen(b)
		if len(b) < h2Header+n {
			return nil, nil, 0, false
		}
		typ, flags, id := b[3], b[4], uint32(b[5])<<24|uint32(b[6])<<16|uint32(b[7])<<8|uint32(b[8])
		payload := b[h2Header : h2Header+n]
		b = b[h2Header+n:]
		if typ != frameData {
			continue
		}
		if flags&flagPadded != 0 {
			if len(payload) < 1 || int(payload[0]) > len(payload)-1 {
				return nil, nil, 0, false
			}
			payload = payload[1 : len(payload)-int(payload[0])]
		}
		longest = max(longest, n)
		data[id] += string(payload)
		if flags&flagEndStream != 0 {
			ends[id] = append(ends[id], len(data[id]))
		}
	}
	return data, ends, longest, true
}

func TestSchemeConnJoinsData(t *testing.T) {
	var in bytes.Buffer
	in.WriteString(http2.ClientPreface)
	fr := http2.NewFramer(&in, nil)
	chunk := bytes.Repeat([]byte("d"), 16<<10)
	for range 5 {
		fr.WriteData(1, false, chunk)
	}
	fr.WriteData(1, true, chunk[:7])
	fr.WriteData(3, false, chunk)
	fr.WriteDataPadded(3, false, chunk[:100], make([]byte, 5))
	fr.WriteData(3, false, chunk)
	fr.WritePing(false, [8]byte{})
	fr.WriteData(3, false, chunk)
	fr.WriteData(3, false, nil)
	fr.WriteData(3, true, chunk)
	for range 40 {
		fr.WriteData(5, false, chunk[:10])
	}
	// More than the read buffer holds: never one frame.
	for range 20 {
		fr.WriteData(7, false, chunk)
	}

	out, err := through(in.Bytes())
	if err != nil && !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	rest := out[len(http2.ClientPreface):]
	var sizes []string
	var frames7 int
	for b := rest; len(b) > 0; b = b[h2Header+frameLen(b):] {
		if b[8] == 7 {
			// Where the read buffer's fills end decides the joins.
			frames7++
			continue
		}
		sizes = append(sizes, fmt.Sprintf("%d:%d:%d", b[8], frameLen(b), b[4]))
	}
	if frames7 < 2 || frames7 >= 20 {
		t.Errorf("stream 7's 20 frames of 16 KiB became %d", frames7)
	}
	want := []string{
		"1:81927:1", // five 16 KiB frames and the short last one, END_STREAM kept
		"3:16384:0", // not joined to a padded frame
		"3:106:8",   // the padded frame as sent
		"3:16384:0",
		"0:8:0", // PING ends the run
		"3:16384:0",
		"3:0:0", // an empty frame is passed as it is
		"3:16384:1",
		"5:330:0", "5:70:0", // at most 1+maxJoin frames become one
	}
	if strings.Join(sizes, " ") != strings.Join(want, " ") {
		t.Errorf("frames (stream:length:flags)\n got %v\nwant %v", sizes, want)
	}
	wantData, wantEnds, _, _ := streamData(in.Bytes()[len(http2.ClientPreface):])
	gotData, gotEnds, longest, ok := streamData(rest)
	if !ok || !maps.Equal(gotData, wantData) || !maps.EqualFunc(gotEnds, wantEnds, slices.Equal) {
		t.Errorf("DATA changed by joining")
	}
	if longest > boxReadBuffer || boxReadBuffer > maxReadFrame {
		t.Errorf("joined frame of %d bytes (read buffer %d, server's limit %d)", longest, boxReadBuffer, maxReadFrame)
	}
}
