package reapi

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

func testConfig(t testing.TB, extra string) *Config {
	t.Helper()
	c, err := Parse("reapi", false, "t.toml", []byte("upstream = \"rbe.test:443\"\ntoken_file = \"/t\"\ninstance = \""+testInst+"\"\n"+extra))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func grpcRequest(method, target string) *http.Request {
	r := httptest.NewRequest(method, target, nil)
	r.Host = inBox
	r.RequestURI = target
	r.Header.Set("Content-Type", "application/grpc")
	r.Header.Set(schemeHeader, "http")
	return r
}

// wantDenial: want "" means allowed, anything else a Denied whose reason
// contains it.
func wantDenial(t *testing.T, err error, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Errorf("refused: %v", err)
		}
		return
	}
	var d *Denied
	if !errors.As(err, &d) || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want a denial with %q", err, want)
	}
}

func TestCheckHeaders(t *testing.T) {
	c := testConfig(t, "")
	for _, tc := range []struct {
		name string
		edit func(r *http.Request)
		want string // "" means allowed
	}{
		{"allowed", func(*http.Request) {}, ""},
		{"grpc+proto", func(r *http.Request) { r.Header.Set("Content-Type", "application/grpc+proto") }, ""},
		{"GET", func(r *http.Request) { r.Method = http.MethodGet }, ":method GET"},
		{"https", func(r *http.Request) { r.Header.Set(schemeHeader, "https") }, ":scheme"},
		{"no scheme", func(r *http.Request) { r.Header.Del(schemeHeader) }, ":scheme"},
		{"two schemes", func(r *http.Request) { r.Header.Add(schemeHeader, "http") }, ":scheme"},
		{"authority host only", func(r *http.Request) { r.Host = "127.0.0.1" }, ":authority"},
		{"authority upstream", func(r *http.Request) { r.Host = upAddr }, ":authority"},
		{"authority empty", func(r *http.Request) { r.Host = "" }, ":authority"},
		{"query", func(r *http.Request) { r.RequestURI = executeMethod + "?x=1" }, "method not permitted"},
		{"double slash", func(r *http.Request) { r.RequestURI = "/" + executeMethod }, "method not permitted"},
		{"escaped", func(r *http.Request) { r.RequestURI = strings.Replace(executeMethod, "E", "%45", 1) }, "method not permitted"},
		{"update action result", func(r *http.Request) { r.RequestURI = pkgREv2 + "ActionCache/UpdateActionResult" }, "method not permitted"},
		{"json", func(r *http.Request) { r.Header.Set("Content-Type", "application/json") }, "content-type"},
		{"grpc-web", func(r *http.Request) { r.Header.Set("Content-Type", "application/grpc-web") }, "content-type"},
		{"grpc+json", func(r *http.Request) { r.Header.Set("Content-Type", "application/grpc+json") }, "content-type"},
		{"grpc+custom codec", func(r *http.Request) { r.Header.Set("Content-Type", "application/grpc+flatbuffers") }, "content-type"},
		{"grpc with parameters", func(r *http.Request) { r.Header.Set("Content-Type", "application/grpc; charset=x") }, "content-type"},
		{"grpc in capitals", func(r *http.Request) { r.Header.Set("Content-Type", "Application/GRPC") }, ""},
		{"no content-type", func(r *http.Request) { r.Header.Del("Content-Type") }, "content-type"},
		{"two encodings", func(r *http.Request) {
			r.Header.Add("Grpc-Encoding", "gzip")
			r.Header.Add("Grpc-Encoding", "identity")
		}, "grpc-encoding"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := grpcRequest(http.MethodPost, executeMethod)
			tc.edit(r)
			wantDenial(t, checkHeaders(c, inBox, r), tc.want)
		})
	}
}

// TestForwardHeaders: strip, then set. Nothing from the box that could
// speak for the host survives.
func TestForwardHeaders(t *testing.T) {
	c := testConfig(t, "headers = [\"x-goog-request-params\"]\n")
	in := http.Header{
		"Authorization":         {"Bearer box"},
		"authorization":         {"Bearer raw-key-spoof"},
		"Proxy-Authorization":   {"x"},
		"X-Goog-Api-Key":        {"k"},
		"X-Goog-User-Project":   {"p"},
		"X-Goog-Request-Params": {"a=b"},
		"Content-Type":          {"application/grpc"},
		"Te":                    {"deflate"},
		"Grpc-Timeout":          {"10S"},
		"User-Agent":            {"ua"},
		"Aisan-H2-Scheme":       {"http"},
		"Cookie":                {"c"},
	}
	out := forwardHeaders(c, in, "tok")
	want := http.Header{
		"Authorization":         {"Bearer tok"},
		"X-Goog-Request-Params": {"a=b"},
		"Content-Type":          {"application/grpc"},
		"Te":                    {"trailers"},
		"Grpc-Timeout":          {"10S"},
		"User-Agent":            {"ua"},
	}
	if mustJSON(out) != mustJSON(want) {
		t.Errorf("forwarded %v\nwant %v", out, want)
	}
}

type fakeOps map[string]bool

func (f fakeOps) Own(n string) bool { return f[n] }

func TestCheckFirstMessage(t *testing.T) {
	own := testConfig(t, "")
	prefix := testConfig(t, "operations = \"prefix\"\n")
	ops := fakeOps{"operations/mine": true}
	s := func(n protowire.Number, v string) []byte { return appendString(nil, n, v) }
	cat := func(b ...[]byte) []byte { return bytes.Join(b, nil) }
	// A rule of match "prefix" on Execute stands for any method a user
	// adds with one.
	prefixed := testConfig(t, "[[rule]]\nmethod = \""+executeMethod+"\"\nfield = 1\nmatch = \"prefix\"\n")
	for _, tc := range []struct {
		name   string
		c      *Config
		method string
		msg    []byte
		want   string
	}{
		{"execute", own, executeMethod, s(1, testInst), ""},
		{"execute with more fields", own, executeMethod, cat(s(1, testInst), appendBytes(nil, 2, []byte{1, 2}), protowire.AppendVarint(protowire.AppendTag(nil, 3, protowire.VarintType), 1)), ""},
		{"instance after other fields", own, executeMethod, cat(appendBytes(nil, 2, []byte{1}), s(1, testInst)), ""},
		{"other instance", own, executeMethod, s(1, "projects/p/instances/other"), "instance not permitted"},
		{"empty", own, executeMethod, nil, "instance not permitted"},
		{"twice same", own, executeMethod, cat(s(1, testInst), s(1, testInst)), "more than once"},
		{"twice last wins", own, executeMethod, cat(s(1, testInst), s(1, "evil")), "more than once"},
		{"varint", own, executeMethod, protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 7), "not a string"},
		{"not utf8", own, executeMethod, appendBytes(nil, 1, []byte{0xff}), "UTF-8"},
		{"truncated", own, executeMethod, s(1, testInst)[:5], "malformed"},
		{"trailing garbage", own, executeMethod, cat(s(1, testInst), []byte{0x80}), "malformed"},
		{"group", own, executeMethod, cat(s(1, testInst), protowire.AppendTag(nil, 4, protowire.StartGroupType)), "malformed"},
		{"read", own, pkgBS + "Read", s(1, testInst+"/blobs/h/1"), ""},
		{"read compressed", own, pkgBS + "Read", s(1, testInst+"/compressed-blobs/zstd/h/1"), ""},
		{"write", own, pkgBS + "Write", s(1, testInst+"/uploads/u/blobs/h/1"), ""},
		{"write no resource", own, pkgBS + "Write", appendBytes(nil, 10, []byte("x")), "instance not permitted"},
		{"read instance only", own, pkgBS + "Read", s(1, testInst), "instance not permitted"},
		{"read longer instance", own, pkgBS + "Read", s(1, testInst+"2/blobs/h/1"), "instance not permitted"},
		{"read dotdot", own, pkgBS + "Read", s(1, testInst+"/blobs/../x/blobs/h/1"), "instance not permitted"},
		{"read empty segment", own, pkgBS + "Read", s(1, testInst+"//blobs/h/1"), "instance not permitted"},
		{"read actions", own, pkgBS + "Read", s(1, testInst+"/actions/h"), "instance not permitted"},
		{"own op", own, pkgREv2 + "Execution/WaitExecution", s(1, "operations/mine"), ""},
		{"foreign op", own, pkgREv2 + "Execution/WaitExecution", s(1, "operations/theirs"), "operation"},
		{"prefixed op in own mode", own, pkgOps + "GetOperation", s(1, testInst+"/operations/x"), "operation"},
		{"prefixed op", prefix, pkgOps + "GetOperation", s(1, testInst+"/operations/x"), ""},
		{"bare prefix op", prefix, pkgOps + "GetOperation", s(1, testInst+"/operations/"), "operation"},
		{"own op in prefix mode", prefix, pkgOps + "WaitOperation", s(1, "operations/mine"), ""},
		{"other instance op", prefix, pkgOps + "WaitOperation", s(1, "projects/p/instances/other/operations/x"), "operation"},
		{"prefix rule instance", prefixed, executeMethod, s(1, testInst), ""},
		{"prefix rule below", prefixed, executeMethod, s(1, testInst+"/a/b"), ""},
		{"prefix rule dotdot", prefixed, executeMethod, s(1, testInst+"/../other/a"), "instance not permitted"},
		{"prefix rule empty segment", prefixed, executeMethod, s(1, testInst+"//a"), "instance not permitted"},
		{"prefixed op dotdot", prefix, pkgOps + "GetOperation", s(1, testInst+"/operations/../../other/operations/x"), "operation"},
		{"prefixed op empty segment", prefix, pkgOps + "GetOperation", s(1, testInst+"/operations//x"), "operation"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantDenial(t, checkFirstMessage(tc.c, tc.method, tc.msg, ops), tc.want)
		})
	}
}

func TestGRPCMessage(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"method not permitted: /a.B/C", "method not permitted: /a.B/C"},
		{"100% sure", "100%25 sure"},
		{"line\nbreak\r\x00\x7f", "line break   "},
		{"ünï", "%C3%BCn%C3%AF"},
	} {
		got := grpcMessage(tc.in)
		if got != tc.want {
			t.Errorf("grpcMessage(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := grpcMessage(strings.Repeat("x", 5000)); len(got) != maxMessage {
		t.Errorf("long message kept %d bytes", len(got))
	}
}

func TestReadFirst(t *testing.T) {
	msg := appendString(nil, 1, testInst)
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write(msg)
	zw.Close()
	gz := append([]byte{1, 0, 0, 0, byte(zb.Len())}, zb.Bytes()...)
	bomb := func() []byte {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		w.Write(make([]byte, 4096))
		w.Close()
		return append([]byte{1, 0, 0, 0, byte(b.Len())}, b.Bytes()...)
	}()
	for _, tc := range []struct {
		name, enc string
		in        []byte
		max       int
		want      string
	}{
		{"plain", "", frame(0, msg), 1024, ""},
		{"gzip", "gzip", gz, 1024, ""},
		{"gzip undeclared", "", gz, 1024, "only gzip"},
		{"zstd", "zstd", gz, 1024, "only gzip"},
		{"gzip bomb", "gzip", bomb, 1024, "beyond 1024"},
		{"bad gzip", "gzip", frame(1, msg), 1024, "bad gzip"},
		{"too big", "", frame(0, make([]byte, 2000)), 1024, "limit is 1024"},
		{"bad flags", "", append([]byte{2}, frame(0, msg)[1:]...), 1024, "flags"},
		{"nothing", "", nil, 1024, "no request message"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rest := []byte("rest of stream")
			if tc.in == nil {
				rest = nil
			}
			r := bytes.NewReader(append(append([]byte(nil), tc.in...), rest...))
			raw, got, err := readFirst(r, tc.enc, tc.max, noLimit)
			if tc.want != "" {
				wantDenial(t, err, tc.want)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, msg) || !bytes.Equal(raw, tc.in) {
				t.Errorf("message %x raw %x", got, raw)
			}
			if left := r.Len(); left != len(rest) {
				t.Errorf("read %d bytes past the first message", len(rest)-left)
			}
		})
	}
	if _, _, err := readFirst(bytes.NewReader(frame(0, msg)[:8]), "", 1024, noLimit); err == nil || errors.As(err, new(*Denied)) {
		t.Errorf("a cut stream is not a policy denial: %v", err)
	}
}

func noLimit(int) error { return nil }

func TestReadFirstReservesBeforeReading(t *testing.T) {
	var asked []int
	reserve := func(n int) error { asked = append(asked, n); return errors.New("no room") }
	body := bytes.NewReader(frame(0, make([]byte, 500)))
	if _, _, err := readFirst(body, "", 1024, reserve); err == nil || err.Error() != "no room" {
		t.Fatalf("got %v", err)
	}
	if len(asked) != 1 || asked[0] != 505 || body.Len() != 500 {
		t.Errorf("asked %v, left %d unread: the message must not be read before its memory is granted", asked, body.Len())
	}
}

func TestBudget(t *testing.T) {
	b := newBudget(100)
	ctx := context.Background()
	if err := b.acquire(ctx, 60); err != nil {
		t.Fatal(err)
	}
	got := make(chan int, 3)
	go func() { b.acquire(ctx, 50); got <- 50 }()
	time.Sleep(20 * time.Millisecond)
	// First come, first served: a small request does not overtake.
	go func() { b.acquire(ctx, 10); got <- 10 }()
	time.Sleep(20 * time.Millisecond)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := b.acquire(cctx, 90); err == nil {
		t.Fatal("a cancelled wait succeeded")
	}
	select {
	case n := <-got:
		t.Fatalf("%d granted while 60 of 100 are held", n)
	default:
	}
	b.release(60)
	if a, c := <-got, <-got; a+c != 60 {
		t.Errorf("granted %d and %d", a, c)
	}
	b.release(60)
	if b.avail != 100 {
		t.Errorf("budget leaks: %d of 100", b.avail)
	}
}

func TestOpScanner(t *testing.T) {
	var got []string
	s := &opScanner{found: func(n string) { got = append(got, n) }}
	op1 := cat(appendString(nil, 1, "operations/a"), appendBytes(nil, 5, make([]byte, 40<<10)))
	op2 := cat(protowire.AppendVarint(protowire.AppendTag(nil, 3, protowire.VarintType), 1), appendString(nil, 1, "operations/b"))
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write(appendString(nil, 1, "operations/c"))
	zw.Close()
	stream := cat(frame(0, op1), frame(0, op2), frame(0, nil), append([]byte{1, 0, 0, 0, byte(zb.Len())}, zb.Bytes()...))
	// Byte by byte, as the worst split the network could make.
	for i := range stream {
		s.Write(stream[i : i+1])
	}
	if strings.Join(got, ",") != "operations/a,operations/b,operations/c" {
		t.Errorf("found %q", got)
	}
	o := newOpSet()
	for i := range maxOps + 1 {
		o.Add(fmtOp(i))
	}
	if o.Own(fmtOp(0)) || !o.Own(fmtOp(1)) || !o.Own(fmtOp(maxOps)) {
		t.Error("opSet does not forget the oldest first")
	}
}

func fmtOp(i int) string { return "operations/" + url.PathEscape(string(rune('a'+i%26))) + itoa(i) }

func cat(b ...[]byte) []byte { return bytes.Join(b, nil) }
