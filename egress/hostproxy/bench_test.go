package hostproxy

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"
)

// benchSetup serves h over TLS for registry.test and returns a direct
// client and one that goes through the relay chain the box uses
// (loopback TCP relay → Unix socket → proxy → TCP), both without
// keep-alive so every request is a fresh connection (a fresh tunnel).
func benchSetup(b *testing.B, h http.Handler) (base string, direct, tunnel *http.Client) {
	ca := newCA(b)
	port := serve(b, h, ca.serverConfig(b, "registry.test"))
	sock, _ := startProxy(b, []string{hostPort("registry.test", port)}, "registry.test=127.0.0.1", nil)
	proxyURL, _ := url.Parse("http://" + tcpRelay(b, sock))
	tc := &tls.Config{RootCAs: ca.pool}
	direct = &http.Client{Transport: &http.Transport{
		TLSClientConfig:   tc,
		DisableKeepAlives: true,
		// The direct client dials the address the name maps to, as the
		// proxy does, so both sides verify the same certificate name.
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, hostPort("127.0.0.1", port))
		},
	}}
	tunnel = &http.Client{Transport: &http.Transport{TLSClientConfig: tc, DisableKeepAlives: true, Proxy: http.ProxyURL(proxyURL)}}
	return "https://" + hostPort("registry.test", port), direct, tunnel
}

func get(b *testing.B, c *http.Client, u string) int64 {
	resp, err := c.Get(u)
	if err != nil {
		b.Fatal(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 {
		b.Fatalf("GET %s: %d, %v", u, resp.StatusCode, err)
	}
	return n
}

func p50(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}

// BenchmarkSmallHTTPS times a small HTTPS GET on a fresh connection,
// direct and through a fresh CONNECT tunnel, interleaved so both see the
// same machine load; it reports both medians and the difference (the
// target is at most 0.6 ms added).
func BenchmarkSmallHTTPS(b *testing.B) {
	base, direct, tunnel := benchSetup(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"name":"small"}`))
	}))
	var dd, td []time.Duration
	for b.Loop() {
		t0 := time.Now()
		get(b, direct, base+"/small")
		t1 := time.Now()
		get(b, tunnel, base+"/small")
		dd = append(dd, t1.Sub(t0))
		td = append(td, time.Since(t1))
	}
	pd, pt := p50(dd), p50(td)
	b.ReportMetric(float64(pd.Microseconds())/1000, "p50-direct-ms")
	b.ReportMetric(float64(pt.Microseconds())/1000, "p50-tunnel-ms")
	b.ReportMetric(float64((pt-pd).Microseconds())/1000, "p50-added-ms")
}

const bigSize = 64 << 20

var bigChunk = make([]byte, 1<<20)

// BenchmarkDownload64MiB times one 64 MiB HTTPS download direct and one
// through a tunnel per iteration, interleaved so both see the same machine
// load, and reports the median throughput of each and their ratio (the
// target is a ratio of at least 0.8).
func BenchmarkDownload64MiB(b *testing.B) {
	base, direct, tunnel := benchSetup(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "67108864")
		for range bigSize / len(bigChunk) {
			if _, err := w.Write(bigChunk); err != nil {
				return
			}
		}
	}))
	var dd, td []time.Duration
	for b.Loop() {
		for _, c := range []struct {
			cl *http.Client
			d  *[]time.Duration
		}{{direct, &dd}, {tunnel, &td}} {
			t0 := time.Now()
			if n := get(b, c.cl, base+"/big"); n != bigSize {
				b.Fatalf("got %d bytes", n)
			}
			*c.d = append(*c.d, time.Since(t0))
		}
	}
	mbps := func(d time.Duration) float64 { return bigSize / d.Seconds() / 1e6 }
	md, mt := mbps(p50(dd)), mbps(p50(td))
	b.ReportMetric(md, "direct-MB/s")
	b.ReportMetric(mt, "tunnel-MB/s")
	b.ReportMetric(mt/md, "tunnel/direct")
}
