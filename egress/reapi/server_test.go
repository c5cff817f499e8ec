package reapi

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding/gzip"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
)

func instMsg(inst string) []byte { return appendString(nil, 1, inst) }

// firstMessages is a valid first request for each default method.
func firstMessages(opName string) map[string][]byte {
	return map[string][]byte{
		pkgREv2 + "Capabilities/GetCapabilities":               instMsg(testInst),
		pkgREv2 + "ActionCache/GetActionResult":                appendBytes(instMsg(testInst), 2, []byte{0x0a, 0x01, 'h'}),
		pkgREv2 + "ContentAddressableStorage/FindMissingBlobs": instMsg(testInst),
		pkgREv2 + "ContentAddressableStorage/BatchReadBlobs":   instMsg(testInst),
		pkgREv2 + "ContentAddressableStorage/BatchUpdateBlobs": instMsg(testInst),
		pkgREv2 + "ContentAddressableStorage/GetTree":          instMsg(testInst),
		executeMethod:                       instMsg(testInst),
		pkgREv2 + "Execution/WaitExecution": appendString(nil, 1, opName),
		pkgOps + "GetOperation":             appendString(nil, 1, testInst+"/operations/x"),
		pkgOps + "WaitOperation":            appendString(nil, 1, opName),
		pkgBS + "Read":                      protowire.AppendVarint(protowire.AppendTag(appendString(nil, 1, testInst+"/blobs/abc/10"), 3, protowire.VarintType), 10),
		pkgBS + "Write":                     appendBytes(appendString(nil, 1, testInst+"/uploads/u1/blobs/abc/3"), 10, []byte("abc")),
	}
}

// rpc runs method as a bidirectional stream (which covers every shape)
// with one request message, and returns the answers and the status.
func rpc(ctx context.Context, cc *grpc.ClientConn, method string, req []byte, opts ...grpc.CallOption) ([][]byte, error) {
	s, err := cc.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, method, opts...)
	if err != nil {
		return nil, err
	}
	if err := s.SendMsg(req); err != nil && err != io.EOF {
		return nil, err
	}
	if err := s.CloseSend(); err != nil {
		return nil, err
	}
	var out [][]byte
	for {
		var m []byte
		if err := s.RecvMsg(&m); err == io.EOF {
			return out, nil
		} else if err != nil {
			return out, err
		}
		out = append(out, m)
	}
}

func TestAllowedMethodsPass(t *testing.T) {
	up := startUpstream(t)
	b := newBox(t, up, "headers = [\"x-goog-request-params\"]\noperations = \"prefix\"\n", false)
	cc := b.client(grpc.WithUserAgent("siso-test"))
	ctx := metadata.AppendToOutgoingContext(ctxT(t, 20*time.Second),
		"authorization", "Bearer box-token",
		"x-goog-request-params", "instance_name=x",
		"x-goog-user-project", "other-project",
		"x-evil", "1")
	// Execute first: its answer makes WaitExecution's operation the box's own.
	msgs := firstMessages(up.opName)
	methods := append([]string{executeMethod}, DefaultMethods...)
	for _, m := range methods {
		out, err := rpc(ctx, cc, m, msgs[m])
		want := codes.OK
		if m == pkgREv2+"Capabilities/GetCapabilities" {
			want = codes.Unauthenticated // the upstream's own answer passes through
		}
		if status.Code(err) != want {
			t.Errorf("%s: %v, want %v", m, err, want)
			continue
		}
		if want == codes.OK && len(out) == 0 {
			t.Errorf("%s: no answer", m)
		}
	}
	calls := up.seen()
	if len(calls) != len(methods) {
		t.Fatalf("upstream saw %d calls, want %d", len(calls), len(methods))
	}
	for i, c := range calls {
		if c.method != methods[i] {
			t.Errorf("call %d: upstream saw %s, want %s", i, c.method, methods[i])
		}
		if got := c.md.Get("authorization"); len(got) != 1 || got[0] != "Bearer "+hostToken {
			t.Errorf("%s: authorization %q, want only the host's", c.method, got)
		}
		if got := c.md.Get("x-goog-request-params"); len(got) != 1 || got[0] != "instance_name=x" {
			t.Errorf("%s: configured header lost: %q", c.method, got)
		}
		for _, k := range []string{"x-evil", "x-goog-user-project", schemeHeader} {
			if got := c.md.Get(k); len(got) != 0 {
				t.Errorf("%s: %s forwarded: %q", c.method, k, got)
			}
		}
		if got := c.md.Get(":authority"); len(got) != 1 || got[0] != upAddr {
			t.Errorf("%s: upstream :authority %q, want %s", c.method, got, upAddr)
		}
		if ua := strings.Join(c.md.Get("user-agent"), ","); !strings.Contains(ua, "siso-test") {
			t.Errorf("%s: user-agent %q", c.method, ua)
		}
		if !bytes.Equal(c.first, msgs[c.method]) {
			t.Errorf("%s: first message changed on the way", c.method)
		}
	}
	// Cached, except that the upstream's UNAUTHENTICATED for
	// GetCapabilities drops the token, so the next stream fetches anew.
	if n := b.runs(); n != 2 {
		t.Errorf("credential command ran %d times, want 2", n)
	}
	es := b.log.entries()
	if len(es) != len(methods) {
		t.Errorf("%d audit entries for %d streams", len(es), len(methods))
	}
	for _, e := range es {
		if strings.Contains(mustJSON(e), hostToken) || strings.Contains(mustJSON(e), "box-token") {
			t.Errorf("audit entry carries a token: %s", mustJSON(e))
		}
		if e.Refused != "" {
			t.Errorf("audit: %s refused: %s", e.Path, e.Refused)
		}
	}
}

func TestRefusedBeforeCredential(t *testing.T) {
	up := startUpstream(t)
	b := newBox(t, up, "", false)
	cc := b.client()
	ctx := ctxT(t, 20*time.Second)
	foreign := b.client(grpc.WithAuthority(upAddr))
	dup := append(instMsg(testInst), instMsg("projects/p/instances/trusted")...)
	cases := []struct {
		name   string
		cc     *grpc.ClientConn
		method string
		req    []byte
		opts   []grpc.CallOption
		want   string
	}{
		{"update action result", cc, pkgREv2 + "ActionCache/UpdateActionResult", instMsg(testInst), nil, "method not permitted"},
		{"cancel operation", cc, pkgOps + "CancelOperation", instMsg(testInst), nil, "method not permitted"},
		{"suffix", cc, pkgREv2 + "Execution/ExecuteX", instMsg(testInst), nil, "method not permitted"},
		{"other service", cc, "/grpc.health.v1.Health/Check", nil, nil, "method not permitted"},
		{"authority", foreign, executeMethod, instMsg(testInst), nil, ":authority"},
		{"instance", cc, executeMethod, instMsg("projects/p/instances/trusted"), nil, "instance not permitted"},
		{"instance prefix", cc, executeMethod, instMsg(testInst + "x"), nil, "instance not permitted"},
		{"no instance", cc, executeMethod, nil, nil, "instance not permitted"},
		{"instance twice", cc, executeMethod, dup, nil, "more than once"},
		{"instance not a string", cc, executeMethod, protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 1), nil, "not a string"},
		{"malformed", cc, executeMethod, append(instMsg(testInst), 0x12, 0x7f), nil, "malformed"},
		{"gzip instance", cc, executeMethod, instMsg("projects/q/instances/x"), []grpc.CallOption{grpc.UseCompressor(gzip.Name)}, "instance not permitted"},
		{"bytestream other instance", cc, pkgBS + "Read", appendString(nil, 1, "projects/q/instances/x/blobs/a/1"), nil, "instance not permitted"},
		{"bytestream dotdot", cc, pkgBS + "Read", appendString(nil, 1, testInst+"/blobs/../../q/blobs/a/1"), nil, "instance not permitted"},
		{"bytestream bare", cc, pkgBS + "Write", appendString(nil, 1, testInst), nil, "instance not permitted"},
		{"bytestream other kind", cc, pkgBS + "Read", appendString(nil, 1, testInst+"/actions/a"), nil, "instance not permitted"},
		{"operation not own", cc, pkgREv2 + "Execution/WaitExecution", appendString(nil, 1, "operations/someone-else"), nil, "operation"},
		{"operation prefixed but own-only", cc, pkgOps + "GetOperation", appendString(nil, 1, testInst+"/operations/x"), nil, "operation"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rpc(ctx, tc.cc, tc.method, tc.req, tc.opts...)
			st := status.Convert(err)
			if st.Code() != codes.PermissionDenied || !strings.Contains(st.Message(), tc.want) {
				t.Errorf("got %v, want PermissionDenied with %q", err, tc.want)
			}
		})
	}
	t.Run("raw", func(t *testing.T) {
		for _, tc := range []struct {
			name, method, scheme, ctype, want string
		}{
			{"GET", http.MethodGet, "http", "application/grpc", ":method GET"},
			{"PUT", http.MethodPut, "http", "application/grpc", ":method PUT"},
			{"https scheme", http.MethodPost, "https", "application/grpc", ":scheme"},
			{"json", http.MethodPost, "http", "application/json", "content-type"},
		} {
			st, msg := rawRequest(t, b.sock, tc.method, tc.scheme, tc.ctype, nil, nil)
			if st != "7" || !strings.Contains(msg, tc.want) {
				t.Errorf("%s: grpc-status %q message %q, want 7 with %q", tc.name, st, msg, tc.want)
			}
		}
		// A box that forges the scheme header ends up with two values.
		st, _ := rawRequest(t, b.sock, http.MethodPost, "http", "application/grpc", http.Header{"Aisan-H2-Scheme": {"http"}}, frame(0, instMsg(testInst)))
		if st != "7" {
			t.Errorf("forged scheme header: grpc-status %q, want 7", st)
		}
		// A call that takes one message may not carry a second.
		two := append(frame(0, instMsg(testInst)), frame(0, instMsg("projects/q/instances/x"))...)
		if st, msg := rawRequest(t, b.sock, http.MethodPost, "http", "application/grpc", nil, two); st != "7" || !strings.Contains(msg, "more than one request message") {
			t.Errorf("two messages: grpc-status %q message %q", st, msg)
		}
		// zstd cannot be checked, so a compressed first message is refused.
		st, msg := rawRequest(t, b.sock, http.MethodPost, "http", "application/grpc", http.Header{"Grpc-Encoding": {"zstd"}}, frame(1, instMsg(testInst)))
		if st != "7" || !strings.Contains(msg, "zstd") {
			t.Errorf("zstd: grpc-status %q message %q", st, msg)
		}
	})
	if n := len(up.seen()); n != 0 {
		t.Errorf("upstream saw %d refused calls", n)
	}
	if n := b.runs(); n != 0 {
		t.Errorf("credential command ran %d times for refused streams", n)
	}
	for _, e := range b.log.entries() {
		if e.Status != codePermissionDenied || e.Refused == "" {
			t.Errorf("audit entry for a refusal: %+v", e)
		}
	}
	// And the same box still passes an allowed call, gzip included.
	if _, err := rpc(ctx, cc, executeMethod, instMsg(testInst), grpc.UseCompressor(gzip.Name)); err != nil {
		t.Fatalf("allowed call after refusals: %v", err)
	}
	if n := b.runs(); n != 1 {
		t.Errorf("credential command ran %d times, want 1", n)
	}
}

func frame(flag byte, msg []byte) []byte {
	if flag == 1 {
		msg = append([]byte("not really compressed"), msg...)
	}
	b := []byte{flag, 0, 0, 0, 0}
	b[1], b[2], b[3], b[4] = byte(len(msg)>>24), byte(len(msg)>>16), byte(len(msg)>>8), byte(len(msg))
	return append(b, msg...)
}

// rawRequest speaks HTTP/2 to the socket frame by frame, for what no
// gRPC client sends. It returns grpc-status and the decoded grpc-message.
func rawRequest(t *testing.T, sock, method, scheme, ctype string, h http.Header, body []byte) (string, string) {
	t.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(c, c)
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	fields := []string{":method", method, ":scheme", scheme, ":path", executeMethod, ":authority", inBox, "content-type", ctype, "te", "trailers"}
	for k, vs := range h {
		for _, v := range vs {
			fields = append(fields, strings.ToLower(k), v)
		}
	}
	for i := 0; i < len(fields); i += 2 {
		enc.WriteField(hpack.HeaderField{Name: fields[i], Value: fields[i+1]})
	}
	fr.WriteSettings()
	fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: hb.Bytes(), EndHeaders: true, EndStream: len(body) == 0})
	if len(body) > 0 {
		fr.WriteData(1, true, body)
	}
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatalf("%s %s: %v", method, scheme, err)
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				fr.WriteSettingsAck()
			}
		case *http2.RSTStreamFrame:
			t.Fatalf("%s %s: stream reset (%v) instead of a gRPC status", method, scheme, f.ErrCode)
		case *http2.MetaHeadersFrame:
			if !f.StreamEnded() {
				continue
			}
			msg := hv(f, "grpc-message")
			dec, err := url.PathUnescape(msg)
			if err != nil {
				t.Errorf("grpc-message %q is not percent-encoded: %v", msg, err)
			}
			if s := hv(f, ":status"); s != "200" {
				t.Errorf(":status %s, want 200", s)
			}
			return hv(f, "grpc-status"), dec
		}
	}
}

func hv(f *http2.MetaHeadersFrame, name string) string {
	for _, hf := range f.Fields {
		if hf.Name == name {
			return hf.Value
		}
	}
	return ""
}

func TestCredentialFailure(t *testing.T) {
	up := startUpstream(t)
	b := newBox(t, up, "", true)
	cc := b.client()
	_, err := rpc(ctxT(t, 20*time.Second), cc, executeMethod, instMsg(testInst))
	st := status.Convert(err)
	if st.Code() != codes.Unauthenticated {
		t.Fatalf("got %v, want Unauthenticated", err)
	}
	if strings.Contains(st.Message(), "secret-ish") {
		t.Errorf("the helper's stderr reached the box: %q", st.Message())
	}
	if n := len(up.seen()); n != 0 {
		t.Errorf("upstream saw %d calls without a credential", n)
	}
	es := b.log.entries()
	if len(es) != 1 || es[0].Status != codeUnauthenticated || !strings.Contains(es[0].Refused, "secret-ish detail") {
		t.Errorf("audit: %s", mustJSON(es))
	}
}

func TestByteStreamWrite64MiB(t *testing.T) {
	up := startUpstream(t)
	b := newBox(t, up, "", false)
	cc := b.client()
	const total, chunk = 64 << 20, 1 << 20
	data := make([]byte, total)
	rand.Read(data)
	committed, err := writeBlob(ctxT(t, 60*time.Second), cc, data, chunk)
	if err != nil {
		t.Fatal(err)
	}
	if committed != total {
		t.Errorf("committed %d, want %d", committed, total)
	}
	up.mu.Lock()
	n, h := up.written, up.writtenHash
	up.mu.Unlock()
	if n != total || h != sha256.Sum256(data) {
		t.Errorf("upstream received %d bytes (hash match %v), want %d intact", n, h == sha256.Sum256(data), total)
	}
	es := b.log.entries()
	if len(es) != 1 || es[0].BytesUp < total || es[0].Status != 0 {
		t.Errorf("audit: %s", mustJSON(es))
	}
}

func writeBlob(ctx context.Context, cc *grpc.ClientConn, data []byte, chunk int) (int64, error) {
	s, err := cc.NewStream(ctx, &grpc.StreamDesc{ClientStreams: true}, pkgBS+"Write")
	if err != nil {
		return 0, err
	}
	for off := 0; off < len(data); off += chunk {
		var m []byte
		if off == 0 {
			m = appendString(m, 1, testInst+"/uploads/u1/blobs/h/"+itoa(len(data)))
		}
		m = protowire.AppendVarint(protowire.AppendTag(m, 2, protowire.VarintType), uint64(off))
		end := min(off+chunk, len(data))
		if end == len(data) {
			m = protowire.AppendVarint(protowire.AppendTag(m, 3, protowire.VarintType), 1)
		}
		m = appendBytes(m, 10, data[off:end])
		if err := s.SendMsg(m); err != nil {
			return 0, err
		}
	}
	if err := s.CloseSend(); err != nil {
		return 0, err
	}
	var resp []byte
	if err := s.RecvMsg(&resp); err != nil {
		return 0, err
	}
	return int64(varintField(resp, 1)), nil
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestByteStreamRead(t *testing.T) {
	up := startUpstream(t)
	b := newBox(t, up, "", false)
	cc := b.client()
	const size = 16 << 20
	req := protowire.AppendVarint(protowire.AppendTag(appendString(nil, 1, testInst+"/blobs/abc/"+itoa(size)), 3, protowire.VarintType), size)
	out, err := rpc(ctxT(t, 30*time.Second), cc, pkgBS+"Read", req)
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for _, m := range out {
		got += len(bytesField(m, 10))
	}
	if got != size {
		t.Errorf("read %d bytes, want %d", got, size)
	}
}

func TestLongWaitExecution(t *testing.T) {
	up := startUpstream(t)
	up.waitN, up.waitGap = 8, 250*time.Millisecond
	b := newBox(t, up, "", false)
	cc := b.client()
	ctx := ctxT(t, 30*time.Second)
	ops, err := rpc(ctx, cc, executeMethod, instMsg(testInst))
	if err != nil || len(ops) != 1 {
		t.Fatalf("Execute: %v (%d answers)", err, len(ops))
	}
	start := time.Now()
	out, err := rpc(ctx, cc, pkgREv2+"Execution/WaitExecution", appendString(nil, 1, up.opName))
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != up.waitN {
		t.Fatalf("%d answers, want %d", len(out), up.waitN)
	}
	for i, m := range out {
		if varintField(m, 3) != uint64(i) || string(bytesField(m, 1)) != up.opName {
			t.Errorf("answer %d changed on the way", i)
		}
	}
	if d := time.Since(start); d < time.Duration(up.waitN-1)*up.waitGap {
		t.Errorf("stream took %v: not the upstream's pace", d)
	}
}

// longStreams serves up to a box whose WaitExecution answers n times,
// gap apart, on an operation under the instance.
func longStreams(t *testing.T, up *upstream, n int, gap time.Duration) (context.Context, *grpc.ClientConn) {
	up.waitN, up.waitGap = n, gap
	up.opName = testInst + "/operations/long"
	b := newBox(t, up, "operations = \"prefix\"\n", false)
	return ctxT(t, 30*time.Second), b.client()
}

// waitLong runs one long WaitExecution and checks that every answer came.
func waitLong(ctx context.Context, cc *grpc.ClientConn, up *upstream) error {
	out, err := rpc(ctx, cc, pkgREv2+"Execution/WaitExecution", appendString(nil, 1, up.opName))
	if err == nil && len(out) != up.waitN {
		err = fmt.Errorf("%d of %d answers", len(out), up.waitN)
	}
	return err
}

// TestUpstreamGoaway has the upstream drain its connection (GOAWAY)
// while a long stream runs on it: the stream finishes, and streams that
// start after the GOAWAY go over a new connection.
func TestUpstreamGoaway(t *testing.T) {
	up := startUpstream(t, grpc.KeepaliveParams(keepalive.ServerParameters{
		MaxConnectionAge:      300 * time.Millisecond,
		MaxConnectionAgeGrace: 20 * time.Second,
	}))
	ctx, cc := longStreams(t, up, 10, 200*time.Millisecond)
	var wg sync.WaitGroup
	wg.Add(1)
	var longErr error
	go func() {
		defer wg.Done()
		longErr = waitLong(ctx, cc, up)
	}()
	deadline := time.Now().Add(1500 * time.Millisecond)
	calls := 0
	for time.Now().Before(deadline) {
		if _, err := rpc(ctx, cc, pkgREv2+"ActionCache/GetActionResult", instMsg(testInst)); err != nil {
			t.Fatalf("call %d during GOAWAYs: %v", calls, err)
		}
		calls++
		time.Sleep(50 * time.Millisecond)
	}
	wg.Wait()
	if longErr != nil {
		t.Errorf("long stream across GOAWAY: %v", longErr)
	}
	if n := up.accepts.Load(); n < 2 {
		t.Errorf("upstream accepted %d connections: no GOAWAY happened", n)
	}
}

// TestUpstreamStreamLimit runs more long streams than the upstream allows
// on one connection: the transport opens another instead of failing.
func TestUpstreamStreamLimit(t *testing.T) {
	up := startUpstream(t, grpc.MaxConcurrentStreams(2))
	ctx, cc := longStreams(t, up, 4, 150*time.Millisecond)
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- waitLong(ctx, cc, up)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}

}

func TestGenericBackend(t *testing.T) {
	up := startUpstream(t)
	b := newBox(t, up, "# generic\nmethods = [\"/pkg.Builds/Start\", \"/pkg.Builds/Get\"]\ninstance = \"tenants/a\"\n[[rule]]\nmethod = \"/pkg.Builds/Start\"\nfield = 2\nmatch = \"prefix\"\n", false)
	cc := b.client()
	ctx := ctxT(t, 20*time.Second)
	if _, err := rpc(ctx, cc, "/pkg.Builds/Start", appendString(nil, 2, "tenants/a/x")); err != nil {
		t.Errorf("Start: %v", err)
	}
	if _, err := rpc(ctx, cc, "/pkg.Builds/Start", appendString(nil, 2, "tenants/b")); status.Code(err) != codes.PermissionDenied {
		t.Errorf("Start on another tenant: %v", err)
	}
	// Get has no rule: any message passes.
	if _, err := rpc(ctx, cc, "/pkg.Builds/Get", appendString(nil, 1, "anything")); err != nil {
		t.Errorf("Get: %v", err)
	}
	if _, err := rpc(ctx, cc, executeMethod, instMsg(testInst)); status.Code(err) != codes.PermissionDenied {
		t.Errorf("REAPI method on a generic backend: %v", err)
	}
}

func TestBoxToken(t *testing.T) {
	up := startUpstream(t)
	b := newBox(t, up, "", false, func(o *Options) { o.BoxToken = "box-secret" })
	cc := b.client()
	ctx := ctxT(t, 20*time.Second)
	for _, tc := range []struct {
		name string
		md   []string
		want codes.Code
	}{
		{"none", nil, codes.Unauthenticated},
		{"wrong", []string{"authorization", "Bearer box-secreT"}, codes.Unauthenticated},
		{"not bearer", []string{"authorization", "box-secret"}, codes.Unauthenticated},
		{"twice", []string{"authorization", "Bearer box-secret", "authorization", "Bearer box-secret"}, codes.Unauthenticated},
		{"right", []string{"authorization", "Bearer box-secret"}, codes.OK},
	} {
		_, err := rpc(metadata.AppendToOutgoingContext(ctx, tc.md...), cc, executeMethod, instMsg(testInst))
		if status.Code(err) != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	calls := up.seen()
	if len(calls) != 1 || strings.Join(calls[0].md.Get("authorization"), ",") != "Bearer "+hostToken {
		t.Errorf("upstream saw %d calls; the box token must never be forwarded", len(calls))
	}
	if n := b.runs(); n != 1 {
		t.Errorf("credential command ran %d times, want 1 (only for the admitted stream)", n)
	}
}

// startHang opens a call that the upstream answers once and then holds
// open until its client goes away.
func startHang(t *testing.T, ctx context.Context, up *upstream) (*box, grpc.ClientStream) {
	b := newBox(t, up, "# generic\nmethods = [\"/pkg.Builds/Hang\"]\n", false)
	s, err := b.client().NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, "/pkg.Builds/Hang")
	if err != nil {
		t.Fatal(err)
	}
	s.SendMsg(instMsg("x"))
	s.CloseSend()
	var m []byte
	if err := s.RecvMsg(&m); err != nil {
		t.Fatal(err)
	}
	return b, s
}

// TestBoxCancelReachesUpstream: a box that gives up on a long call frees
// the upstream's stream too.
func TestBoxCancelReachesUpstream(t *testing.T) {
	up := startUpstream(t)
	ctx, cancel := context.WithCancel(ctxT(t, 20*time.Second))
	startHang(t, ctx, up)
	cancel()
	deadline := time.Now().Add(5 * time.Second)
	for up.cancelled.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the upstream stream outlived the box's")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestUpstreamDiesMidStream: when the upstream connection breaks, the
// box's stream fails at once instead of hanging, and the audit log says
// why.
func TestUpstreamDiesMidStream(t *testing.T) {
	up := startUpstream(t)
	b, s := startHang(t, ctxT(t, 20*time.Second), up)
	up.srv.Stop()
	var m []byte
	errc := make(chan error, 1)
	go func() { errc <- s.RecvMsg(&m) }()
	select {
	case err := <-errc:
		if status.Code(err) == codes.OK {
			t.Errorf("stream ended cleanly after the upstream died: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the box's stream hangs after the upstream died")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		es := b.log.entries()
		if len(es) == 1 && strings.Contains(es[0].Refused, "upstream") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("audit: %s", mustJSON(es))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestMaxConns: a connection beyond the cap is not served (it waits,
// unread, in the backlog) until one closes.
func TestMaxConns(t *testing.T) {
	up := startUpstream(t)
	b := newBox(t, up, "", false, func(o *Options) { o.MaxConns = 1 })
	first, err := net.Dial("unix", b.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	io.WriteString(first, http2.ClientPreface)
	time.Sleep(50 * time.Millisecond)
	second, err := net.Dial("unix", b.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	io.WriteString(second, http2.ClientPreface)
	second.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if _, err := second.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("second connection: %v, want it left unread", err)
	}
	first.Close()
	// The slot frees: the waiting connection is served (the server's
	// SETTINGS arrive), and so is a new client.
	second.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := second.Read(make([]byte, 1)); err != nil {
		t.Errorf("second connection after the first closed: %v", err)
	}
	second.Close()
	cc := b.client()
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := rpc(ctxT(t, 5*time.Second), cc, executeMethod, instMsg(testInst))
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the first connection closed: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestDrainFinishesStreamsInFlight: a WaitExecution streaming when the
// server drains gets every answer; Drain returns once it has.
func TestDrainFinishesStreamsInFlight(t *testing.T) {
	up := startUpstream(t)
	up.waitN, up.waitGap = 4, 150*time.Millisecond
	up.opName = testInst + "/operations/long"
	b := newBox(t, up, "operations = \"prefix\"\n", false)
	ctx, cc := ctxT(t, 30*time.Second), b.client()
	errc := make(chan error, 1)
	go func() { errc <- waitLong(ctx, cc, up) }()
	for end := time.Now().Add(5 * time.Second); len(up.seen()) == 0 && time.Now().Before(end); {
		time.Sleep(5 * time.Millisecond)
	}
	t0 := time.Now()
	dctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	b.srv.Drain(dctx)
	if err := <-errc; err != nil {
		t.Fatalf("the stream in flight at the drain: %v", err)
	}
	if d := time.Since(t0); d < 200*time.Millisecond || d > 4*time.Second {
		t.Errorf("Drain returned after %v: not when the stream ended", d)
	}
}
