package reapi

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/aisan-dev/aisan/egress/audit"
)

// The upstream's name in every test: the Dial override maps it to a
// loopback grpc-go server, so the name, SNI and certificate are real.
const (
	upName    = "rbe.test"
	upAddr    = upName + ":443"
	testInst  = "projects/p/instances/default_instance"
	inBox     = "127.0.0.1:8712"
	hostToken = "host-token-5f2a"
)

// rawCodec moves messages as bytes: neither side needs generated code.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) {
	switch m := v.(type) {
	case []byte:
		return m, nil
	case *[]byte:
		return *m, nil
	}
	return nil, fmt.Errorf("rawCodec: %T", v)
}

func (rawCodec) Unmarshal(data []byte, v any) error {
	p, ok := v.(*[]byte)
	if !ok {
		return fmt.Errorf("rawCodec: %T", v)
	}
	*p = append((*p)[:0], data...)
	return nil
}

func (rawCodec) Name() string { return "proto" }

// testCA makes a CA and a leaf for upName, valid for an hour.
func testCA(t testing.TB) (*x509.CertPool, tls.Certificate) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ca := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "aisan test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	leaf := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: upName},
		DNSNames:  []string{upName},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(caCert)
	return pool, tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// call is what the upstream saw of one stream.
type call struct {
	method string
	md     metadata.MD
	first  []byte
}

// upstream is a real grpc-go server over TLS that records every stream
// and answers by method.
type upstream struct {
	addr    string
	pool    *x509.CertPool
	srv     *grpc.Server
	accepts atomic.Int64

	mu    sync.Mutex
	calls []call
	// written is what the last ByteStream Write carried: bytes and hash.
	written     int64
	writtenHash [32]byte
	// waitGap and waitN shape WaitExecution's answer.
	waitGap time.Duration
	waitN   int
	opName  string
	// laterNames are the resource names later Write messages carried.
	laterNames []string
	// noHash skips hashing Write data, so benchmarks time the transport.
	noHash bool
	// cancelled counts Hang streams whose client went away.
	cancelled atomic.Int64
}

type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

func startUpstream(t testing.TB, opts ...grpc.ServerOption) *upstream {
	t.Helper()
	pool, cert := testCA(t)
	u := &upstream{pool: pool, waitGap: 50 * time.Millisecond, waitN: 3, opName: "operations/op-1"}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u.addr = ln.Addr().String()
	opts = append(opts,
		grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{cert}})),
		grpc.ForceServerCodec(rawCodec{}),
		grpc.UnknownServiceHandler(u.handle))
	u.srv = grpc.NewServer(opts...)
	go u.srv.Serve(countingListener{ln, &u.accepts})
	t.Cleanup(u.srv.Stop)
	return u
}

func (u *upstream) record(c call) {
	u.mu.Lock()
	u.calls = append(u.calls, c)
	u.mu.Unlock()
}

func (u *upstream) seen() []call {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]call(nil), u.calls...)
}

func (u *upstream) handle(_ any, ss grpc.ServerStream) error {
	method, _ := grpc.MethodFromServerStream(ss)
	md, _ := metadata.FromIncomingContext(ss.Context())
	var first []byte
	if err := ss.RecvMsg(&first); err != nil {
		return err
	}
	u.record(call{method, md, append([]byte(nil), first...)})
	switch method {
	case pkgBS + "Write":
		h := sha256.New()
		var total int64
		msg := first
		for later := false; ; later = true {
			if name := bytesField(msg, 1); later && name != nil {
				u.mu.Lock()
				u.laterNames = append(u.laterNames, string(name))
				u.mu.Unlock()
			}
			data := bytesField(msg, 10)
			if !u.noHash {
				h.Write(data)
			}
			total += int64(len(data))
			msg = nil
			if err := ss.RecvMsg(&msg); err == io.EOF {
				break
			} else if err != nil {
				return err
			}
		}
		u.mu.Lock()
		u.written = total
		copy(u.writtenHash[:], h.Sum(nil))
		u.mu.Unlock()
		return ss.SendMsg(protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), uint64(total)))
	case pkgBS + "Read":
		size := int(varintField(first, 3))
		chunk := make([]byte, 1<<20)
		for i := range chunk {
			chunk[i] = byte(i * 7)
		}
		for size > 0 {
			n := min(size, len(chunk))
			if err := ss.SendMsg(appendBytes(nil, 10, chunk[:n])); err != nil {
				return err
			}
			size -= n
		}
		return nil
	case executeMethod:
		return ss.SendMsg(appendString(nil, 1, u.opName))
	case pkgREv2 + "Execution/WaitExecution":
		for i := range u.waitN {
			if i > 0 {
				time.Sleep(u.waitGap)
			}
			m := appendString(nil, 1, string(stringFieldOrEmpty(first, 1)))
			m = protowire.AppendTag(m, 3, protowire.VarintType)
			m = protowire.AppendVarint(m, uint64(i))
			if err := ss.SendMsg(m); err != nil {
				return err
			}
		}
		return nil
	case pkgREv2 + "Capabilities/GetCapabilities":
		return status.Error(codes.Unauthenticated, "upstream refuses")
	case "/pkg.Builds/Hang":
		if err := ss.SendMsg(appendString(nil, 1, "started")); err != nil {
			return err
		}
		<-ss.Context().Done()
		u.cancelled.Add(1)
		return ss.Context().Err()
	}
	return ss.SendMsg(appendString(nil, 1, "ok:"+method))
}

func appendString(b []byte, num protowire.Number, s string) []byte {
	return protowire.AppendString(protowire.AppendTag(b, num, protowire.BytesType), s)
}

func appendBytes(b []byte, num protowire.Number, v []byte) []byte {
	return protowire.AppendBytes(protowire.AppendTag(b, num, protowire.BytesType), v)
}

func bytesField(msg []byte, num protowire.Number) []byte {
	var out []byte
	for len(msg) > 0 {
		n, typ, tn := protowire.ConsumeTag(msg)
		if tn < 0 {
			return out
		}
		msg = msg[tn:]
		if n == num && typ == protowire.BytesType {
			v, m := protowire.ConsumeBytes(msg)
			out = v
			msg = msg[m:]
			continue
		}
		m := protowire.ConsumeFieldValue(n, typ, msg)
		if m < 0 {
			return out
		}
		msg = msg[m:]
	}
	return out
}

func stringFieldOrEmpty(msg []byte, num protowire.Number) []byte { return bytesField(msg, num) }

func varintField(msg []byte, num protowire.Number) uint64 {
	for len(msg) > 0 {
		n, typ, tn := protowire.ConsumeTag(msg)
		if tn < 0 {
			return 0
		}
		msg = msg[tn:]
		if n == num && typ == protowire.VarintType {
			v, _ := protowire.ConsumeVarint(msg)
			return v
		}
		m := protowire.ConsumeFieldValue(n, typ, msg)
		if m < 0 {
			return 0
		}
		msg = msg[m:]
	}
	return 0
}

// collector is an audit sink for tests.
type collector struct {
	mu sync.Mutex
	es []audit.Entry
}

func (c *collector) Log(e audit.Entry) {
	c.mu.Lock()
	c.es = append(c.es, e)
	c.mu.Unlock()
}

func (c *collector) entries() []audit.Entry {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]audit.Entry(nil), c.es...)
}

// box is one served backend with its socket, its credential helper and
// its audit log.
type box struct {
	t     testing.TB
	up    *upstream
	srv   *Server
	sock  string
	count string
	log   *collector
}

// tokenScript writes a helper that counts its runs in countFile and
// prints the host token (or fails when fail is set).
func tokenScript(t testing.TB, dir string, fail bool) (script, countFile string) {
	countFile = filepath.Join(dir, "count")
	script = filepath.Join(dir, "token.sh")
	body := fmt.Sprintf("#!/bin/sh\necho run >> '%s'\necho %s\n", countFile, hostToken)
	if fail {
		body = fmt.Sprintf("#!/bin/sh\necho run >> '%s'\necho 'secret-ish detail\nsecond line' >&2\nexit 3\n", countFile)
	}
	if err := os.WriteFile(script, []byte(body), 0o700); err != nil {
		t.Fatal(err)
	}
	return script, countFile
}

// newBox serves toml (with upstream and token_command filled in) against
// up.
func newBox(t testing.TB, up *upstream, extra string, fail bool, edit ...func(*Options)) *box {
	t.Helper()
	return newBoxOn(t, up, extra, fail, func(sock string) (net.Listener, error) {
		ln, err := net.Listen("unix", sock)
		if err == nil {
			err = os.Chmod(sock, 0o600)
		}
		return ln, err
	}, edit...)
}

// newBoxOn is newBox serving on the socket that listen opens.
func newBoxOn(t testing.TB, up *upstream, extra string, fail bool, listen func(sock string) (net.Listener, error), edit ...func(*Options)) *box {
	t.Helper()
	dir := t.TempDir()
	script, count := tokenScript(t, dir, fail)
	text := fmt.Sprintf("upstream = %q\ntoken_command = %q\n%s", upAddr, script, extra)
	if !strings.Contains(extra, "instance") {
		text += fmt.Sprintf("instance = %q\n", testInst)
	}
	generic := strings.Contains(extra, "# generic")
	name := "reapi"
	if generic {
		name = "build"
	}
	cfg, err := Parse(name, generic, "test.toml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	log := &collector{}
	opts := Options{
		Authority: inBox, Audit: log, RootCAs: up.pool,
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if addr != upAddr {
				return nil, fmt.Errorf("test dial: unexpected address %s", addr)
			}
			var d net.Dialer
			return d.DialContext(ctx, "tcp", up.addr)
		},
	}
	for _, f := range edit {
		f(&opts)
	}
	srv, err := New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "reapi.sock")
	ln, err := listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return &box{t: t, up: up, srv: srv, sock: sock, count: count, log: log}
}

// runs is how often the credential helper ran.
func (b *box) runs() int {
	data, err := os.ReadFile(b.count)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		b.t.Fatal(err)
	}
	return strings.Count(string(data), "run\n")
}

// client dials the box's socket the way the in-box relay would deliver
// it: the target, and so :authority, is the in-box endpoint.
func (b *box) client(opts ...grpc.DialOption) *grpc.ClientConn {
	b.t.Helper()
	opts = append([]grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", b.sock)
		}),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(rawCodec{})),
	}, opts...)
	cc, err := grpc.NewClient("passthrough:///"+inBox, opts...)
	if err != nil {
		b.t.Fatal(err)
	}
	b.t.Cleanup(func() { cc.Close() })
	return cc
}

func ctxT(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
