package egress_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aisan-dev/aisan/egress"
	"github.com/aisan-dev/aisan/egress/egresstest"
)

// countingUpstream is an HTTPS stand-in that counts the connections it
// accepted.
type countingUpstream struct {
	srv   *httptest.Server
	conns atomic.Int64
}

func newCountingUpstream(t *testing.T, h http.HandlerFunc) *countingUpstream {
	u := &countingUpstream{srv: httptest.NewUnstartedServer(h)}
	u.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			u.conns.Add(1)
		}
	}
	u.srv.StartTLS()
	t.Cleanup(u.srv.Close)
	return u
}

func upstreamTransport() http.RoundTripper {
	return egress.NewUpstreamTransport(egress.UpstreamOptions{TLS: &tls.Config{RootCAs: egresstest.Pool()}})
}

func testPool(srv *httptest.Server) *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(srv.Certificate())
	return p
}

func post(t *testing.T, rt http.RoundTripper, ctx context.Context, url, body string) (*http.Response, error) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(body)), nil }
	return rt.RoundTrip(req)
}

// call posts body and reads the whole answer.
func call(t *testing.T, rt http.RoundTripper, ctx context.Context, url, body string) string {
	t.Helper()
	return readAll(t, func() (*http.Response, error) { return post(t, rt, ctx, url, body) })
}

func readAll(t *testing.T, do func() (*http.Response, error)) string {
	t.Helper()
	resp, err := do()
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestUpstreamTransportReuse: answers read to the end leave their
// connection for the next request (one TLS connection for many calls);
// an answer closed early, or one that asks to close, does not.
func TestUpstreamTransportReuse(t *testing.T) {
	u := newCountingUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.URL.Query().Get("close") != "" {
			w.Header().Set("Connection", "close")
		}
		fmt.Fprintf(w, "%s %s %s", r.Method, r.URL.Path, b)
		if r.URL.Query().Get("big") != "" {
			io.WriteString(w, strings.Repeat("x", 1<<20))
		}
	})
	rt := egress.NewUpstreamTransport(egress.UpstreamOptions{TLS: &tls.Config{RootCAs: testPool(u.srv)}})
	for i := range 20 {
		body := fmt.Sprintf(`{"n":%d}`, i)
		if got := call(t, rt, context.Background(), u.srv.URL+"/v1/x", body); got != "POST /v1/x "+body {
			t.Fatalf("answer %q", got)
		}
	}
	if n := u.conns.Load(); n != 1 {
		t.Errorf("20 calls took %d connections, want 1", n)
	}
	resp, err := post(t, rt, context.Background(), u.srv.URL+"/v1/x?big=1", "{}")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Read(make([]byte, 10))
	resp.Body.Close() // early: the rest is never read
	call(t, rt, context.Background(), u.srv.URL+"/v1/x?close=1", "{}")
	call(t, rt, context.Background(), u.srv.URL+"/v1/x", "{}")
	if n := u.conns.Load(); n != 3 {
		t.Errorf("after an early close and a Connection: close, %d connections, want 3", n)
	}
}

// TestUpstreamTransportStaleConnection: a pooled connection the upstream
// has closed meanwhile (its idle timeout), or one it drops on the next
// request without answering, costs the caller nothing: the call goes out
// once more on a new connection.
func TestUpstreamTransportStaleConnection(t *testing.T) {
	var calls atomic.Int64
	var dropNext atomic.Bool
	u := newCountingUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if dropNext.Swap(false) {
			c, _, _ := w.(http.Hijacker).Hijack()
			c.Close()
			return
		}
		io.WriteString(w, "ok")
	})
	u.srv.Config.IdleTimeout = 50 * time.Millisecond
	rt := egress.NewUpstreamTransport(egress.UpstreamOptions{TLS: &tls.Config{RootCAs: testPool(u.srv)}})
	call(t, rt, context.Background(), u.srv.URL+"/a", "{}")
	time.Sleep(200 * time.Millisecond) // the upstream closes the idle connection
	if got := call(t, rt, context.Background(), u.srv.URL+"/a", "{}"); got != "ok" {
		t.Errorf("after the upstream closed the idle connection: %q", got)
	}
	dropNext.Store(true)
	if got := call(t, rt, context.Background(), u.srv.URL+"/a", "{}"); got != "ok" {
		t.Errorf("after the upstream dropped a reused connection: %q", got)
	}
	if n := calls.Load(); n != 4 {
		t.Errorf("the upstream saw %d calls, want 4 (the dropped one sent again)", n)
	}
	// A fresh connection that fails is not retried.
	dropNext.Store(true)
	rt2 := egress.NewUpstreamTransport(egress.UpstreamOptions{TLS: &tls.Config{RootCAs: testPool(u.srv)}})
	if _, err := post(t, rt2, context.Background(), u.srv.URL+"/a", "{}"); err == nil {
		t.Errorf("a dropped call on a new connection succeeded")
	}
	if n := calls.Load(); n != 5 {
		t.Errorf("the upstream saw %d calls, want 5 (no retry on a new connection)", n)
	}
}

// TestUpstreamTransportCancel: a caller that goes away while the
// upstream has not answered ends the wait at once, and a stream in
// progress stops when its caller goes away.
func TestUpstreamTransportCancel(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	u := newCountingUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/stream" {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: 1\n\n")
			w.(http.Flusher).Flush()
		}
		<-release
	})
	rt := egress.NewUpstreamTransport(egress.UpstreamOptions{TLS: &tls.Config{RootCAs: testPool(u.srv)}})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := post(t, rt, ctx, u.srv.URL+"/hang", "{}"); err == nil || time.Since(start) > 5*time.Second {
		t.Errorf("a cancelled wait: %v after %v", err, time.Since(start))
	}
	ctx2, cancel2 := context.WithCancel(context.Background())
	resp, err := post(t, rt, ctx2, u.srv.URL+"/stream", "{}")
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	if l, _ := br.ReadString('\n'); l != "data: 1\n" {
		t.Errorf("first event %q", l)
	}
	done := make(chan error, 1)
	go func() { _, err := io.ReadAll(br); done <- err }()
	cancel2()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Error("a stream went on after its caller went away")
	}
}

// TestUpstreamTransportEarlyHints: an informational answer before the
// real one is skipped.
func TestUpstreamTransportEarlyHints(t *testing.T) {
	u := newCountingUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", "</x>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		w.Header().Del("Link")
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, "made")
	})
	rt := egress.NewUpstreamTransport(egress.UpstreamOptions{TLS: &tls.Config{RootCAs: testPool(u.srv)}})
	var status int
	got := readAll(t, func() (*http.Response, error) {
		resp, err := post(t, rt, context.Background(), u.srv.URL+"/", "{}")
		if err == nil {
			status = resp.StatusCode
		}
		return resp, err
	})
	if status != http.StatusCreated || got != "made" {
		t.Errorf("%d %q", status, got)
	}
}

// TestUpstreamTransportConcurrent: calls in flight at once each get a
// connection of their own, and all of them end pooled.
func TestUpstreamTransportConcurrent(t *testing.T) {
	u := newCountingUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(20 * time.Millisecond)
		b, _ := io.ReadAll(r.Body)
		w.Write(b)
	})
	rt := egress.NewUpstreamTransport(egress.UpstreamOptions{TLS: &tls.Config{RootCAs: testPool(u.srv)}})
	for round := range 2 {
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				body := fmt.Sprintf(`{"i":%d}`, i)
				resp, err := post(t, rt, context.Background(), u.srv.URL+"/", body)
				if err != nil {
					t.Error(err)
					return
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if string(b) != body {
					t.Errorf("round %d: got %q for %q", round, b, body)
				}
			}()
		}
		wg.Wait()
	}
	if n := u.conns.Load(); n != 8 {
		t.Errorf("two rounds of 8 concurrent calls took %d connections, want 8", n)
	}
}

// TestUntrustedUpstreamFailsFast: the proxy's own transport checks the
// upstream's certificate too.
func TestUntrustedUpstreamFailsFast(t *testing.T) {
	up := egresstest.NewUpstream(t, egresstest.JSON(200, `{}`))
	rt := egress.NewUpstreamTransport(egress.UpstreamOptions{TLS: &tls.Config{RootCAs: x509.NewCertPool()}})
	if _, err := post(t, rt, context.Background(), up.URL.String()+"/", "{}"); err == nil || len(up.Requests()) != 0 {
		t.Errorf("an untrusted upstream was reached: %v", err)
	}
	if _, err := post(t, upstreamTransport(), context.Background(), up.URL.String()+"/", "{}"); err != nil {
		t.Errorf("the trusted stand-in: %v", err)
	}
}
