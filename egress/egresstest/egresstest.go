// Package egresstest holds stand-ins for the services egress talks to: a
// real HTTPS server on loopback, with a certificate from a CA generated in
// the test process, that records every request reaching it. Trust in that
// CA comes either from Transport (in-process) or from the PEM file written
// by WriteCA and named in SSL_CERT_FILE (for code that uses the system
// store, and for child processes).
package egresstest

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aisan-dev/aisan/egress"
	"github.com/aisan-dev/aisan/egress/audit"
	"github.com/aisan-dev/aisan/egress/cred"
)

type authority struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
	pool *x509.CertPool
	leaf tls.Certificate
}

var ca = sync.OnceValue(func() *authority {
	a := &authority{}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "aisan egresstest CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		panic(err)
	}
	a.cert, _ = x509.ParseCertificate(der)
	a.key = key
	a.pem = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	a.pool = x509.NewCertPool()
	a.pool.AddCert(a.cert)

	lkey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	ltmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "localhost"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	lder, err := x509.CreateCertificate(rand.Reader, ltmpl, a.cert, &lkey.PublicKey, key)
	if err != nil {
		panic(err)
	}
	a.leaf = tls.Certificate{Certificate: [][]byte{lder}, PrivateKey: lkey}
	return a
})

// CAPEM is the test CA's certificate in PEM form.
func CAPEM() []byte { return ca().pem }

// Pool trusts the test CA only.
func Pool() *x509.CertPool { return ca().pool }

// WriteCA writes the CA certificate to path (for SSL_CERT_FILE).
func WriteCA(path string) error { return os.WriteFile(path, ca().pem, 0o644) }

// Transport trusts the test CA and nothing else.
func Transport() *http.Transport {
	return &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: ca().pool, MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2: true,
	}
}

// Request is what reached a stand-in.
type Request struct {
	Method string
	Target string // request target: path and query, as sent
	Host   string
	Proto  string
	Header http.Header
	Body   []byte
}

// Upstream is a recording HTTPS stand-in.
type Upstream struct {
	URL *url.URL
	srv *httptest.Server

	mu       sync.Mutex
	reqs     []Request
	handler  http.Handler
	noRecord bool
}

// NewUpstream starts a stand-in on 127.0.0.1 answering with h (see SSE
// and JSON); it is closed when the test ends.
func NewUpstream(t testing.TB, h http.Handler) *Upstream {
	t.Helper()
	u := StartUpstream(h)
	t.Cleanup(u.Close)
	return u
}

// StartUpstream is NewUpstream outside a test (benchmark programs); the
// caller closes it.
func StartUpstream(h http.Handler) *Upstream {
	u := &Upstream{handler: h}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(u.serve))
	srv.EnableHTTP2 = true
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{ca().leaf}, MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	u.srv = srv
	u.URL, _ = url.Parse(srv.URL)
	return u
}

// Close stops the stand-in.
func (u *Upstream) Close() { u.srv.Close() }

// Record turns the keeping of requests on or off (off for load tests).
func (u *Upstream) Record(on bool) {
	u.mu.Lock()
	u.noRecord = !on
	u.mu.Unlock()
}

// SetHandler replaces the answering handler.
func (u *Upstream) SetHandler(h http.Handler) {
	u.mu.Lock()
	u.handler = h
	u.mu.Unlock()
}

func (u *Upstream) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	u.mu.Lock()
	if !u.noRecord {
		u.reqs = append(u.reqs, Request{Method: r.Method, Target: r.RequestURI, Host: r.Host, Proto: r.Proto, Header: r.Header.Clone(), Body: body})
	}
	h := u.handler
	u.mu.Unlock()
	r.Body = io.NopCloser(bytes.NewReader(body))
	h.ServeHTTP(w, r)
}

// Requests returns a copy of everything received so far.
func (u *Upstream) Requests() []Request {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]Request(nil), u.reqs...)
}

// Reset forgets the recorded requests.
func (u *Upstream) Reset() {
	u.mu.Lock()
	u.reqs = nil
	u.mu.Unlock()
}

// JSON answers every request with status and body.
func JSON(status int, body string, hdr ...string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(hdr); i += 2 {
			w.Header().Set(hdr[i], hdr[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	})
}

// SSE answers with the given events as a text/event-stream, flushing each
// one and waiting gap between them.
func SSE(gap time.Duration, events ...string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Request-Id", "req_egresstest")
		w.WriteHeader(http.StatusOK)
		f := w.(http.Flusher)
		f.Flush()
		for i, e := range events {
			if i > 0 && gap > 0 {
				time.Sleep(gap)
			}
			fmt.Fprintf(w, "%s\n\n", e)
			f.Flush()
		}
	})
}

// UnixClient is an HTTP client whose every connection dials the Unix
// socket at path, as the in-box relay does for the box's client.
func UnixClient(path string) *http.Client {
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		},
		DisableCompression: true,
	}}
}

// Source is a credential source that counts its calls, so a test can prove
// a refused request never read the credential.
type Source struct {
	Value string
	Err   error
	calls atomic.Int64
}

// Token returns Value (or Err) and counts the call.
func (s *Source) Token(context.Context) (cred.Secret, error) {
	s.calls.Add(1)
	if s.Err != nil {
		return cred.Secret{}, s.Err
	}
	return cred.NewSecret(s.Value), nil
}

// Calls is how often Token was called.
func (s *Source) Calls() int64 { return s.calls.Load() }

// Serve serves b on a fresh 0600 Unix socket for the test's lifetime and
// returns a client for it.
func Serve(t testing.TB, b *egress.Backend, o egress.Options) *http.Client {
	t.Helper()
	path := filepath.Join(t.TempDir(), "egress.sock")
	ln, err := egress.ListenUnix(path)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := egress.NewServer(b, o)
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close(); ln.Close() })
	return UnixClient(path)
}

// Collect is an audit sink that keeps every entry.
type Collect struct {
	mu sync.Mutex
	e  []audit.Entry
}

// Log keeps e.
func (c *Collect) Log(e audit.Entry) {
	c.mu.Lock()
	c.e = append(c.e, e)
	c.mu.Unlock()
}

// Entries returns a copy of what was logged.
func (c *Collect) Entries() []audit.Entry {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]audit.Entry(nil), c.e...)
}

// TrustCA writes the CA to a file under dir and points SSL_CERT_FILE at
// it; call it from TestMain, before anything loads the system roots (Go
// reads them once per process).
func TrustCA(dir string) (string, error) {
	path := filepath.Join(dir, "egresstest-ca.pem")
	if err := WriteCA(path); err != nil {
		return "", err
	}
	return path, os.Setenv("SSL_CERT_FILE", path)
}

// RunWithCA runs the tests of m with the test CA trusted through
// SSL_CERT_FILE (so code using the system store trusts the stand-ins), for
// TestMain.
func RunWithCA(m *testing.M) int {
	dir, err := os.MkdirTemp("", "egresstest-ca-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	if _, err := TrustCA(dir); err != nil {
		panic(err)
	}
	return m.Run()
}

// Relay accepts connections on ln until it is closed and pumps each to the
// Unix socket at sock, as the in-box relay does: bytes only, each
// direction half-closed when its reader ends.
func Relay(ln net.Listener, sock string) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			u, err := net.Dial("unix", sock)
			if err != nil {
				return
			}
			defer u.Close()
			done := make(chan struct{})
			go func() {
				io.Copy(u, c)
				u.(*net.UnixConn).CloseWrite()
				close(done)
			}()
			io.Copy(c, u)
			if tc, ok := c.(*net.TCPConn); ok {
				tc.CloseWrite()
			}
			<-done
		}()
	}
}
