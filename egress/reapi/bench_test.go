package reapi

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/aisan-dev/aisan/egress"
	"github.com/aisan-dev/aisan/jail/relay"
)

// tcpRelay is a relay that copies bytes, 127.0.0.1:PORT to the Unix
// socket with half-close: the in-box relay of a raw --egress endpoint.
// A built-in endpoint's relay hands the connection over instead
// (passRelay).
func tcpRelay(tb testing.TB, sock string) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				u, err := net.Dial("unix", sock)
				if err != nil {
					c.Close()
					return
				}
				pump := func(dst, src net.Conn) {
					io.Copy(dst, src)
					if cw, ok := dst.(interface{ CloseWrite() error }); ok {
						cw.CloseWrite()
					}
				}
				done := make(chan struct{})
				go func() { pump(u, c); close(done) }()
				pump(c, u)
				<-done
				c.Close()
				u.Close()
			}()
		}
	}()
	return ln.Addr().String()
}

// passRelay is the in-box relay as a box runs it for a built-in
// endpoint: jail/relay on a loopback port, handing each connection over
// the socket, which egress.ListenUnix serves.
func passRelay(tb testing.TB, sock string) string {
	tb.Helper()
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	port := free.Addr().(*net.TCPAddr).Port
	free.Close()
	r, err := relay.Listen(port, sock)
	if err != nil {
		tb.Fatal(err)
	}
	r.Pass = true
	r.Serve()
	tb.Cleanup(func() { r.Close() })
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}

// benchClients returns warmed-up clients: straight to the upstream (TLS),
// through the box's relay and egress as a box runs them, through a relay
// that copies bytes, and on egress's socket with no relay.
func benchClients(b *testing.B) (direct, viaRelay, copying, norelay *grpc.ClientConn) {
	up := startUpstream(b)
	up.noHash = true
	bx := newBox(b, up, "", false)
	copyAddr := tcpRelay(b, bx.sock)
	norelay = bx.client()
	dialer := func(addr string) grpc.DialOption {
		return grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "tcp", addr)
		})
	}
	copying = bx.client(dialer(copyAddr))
	passed := newBoxOn(b, up, "", false, egress.ListenUnix)
	viaRelay = passed.client(dialer(passRelay(b, passed.sock)))
	direct, err := grpc.NewClient("passthrough:///"+upAddr,
		grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: up.pool, ServerName: upName})),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "tcp", up.addr)
		}),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(rawCodec{})))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { direct.Close() })
	ctx := ctxT(b, time.Minute)
	for _, cc := range []*grpc.ClientConn{direct, viaRelay, copying, norelay} {
		if err := unary(ctx, cc); err != nil {
			b.Fatal(err)
		}
	}
	return direct, viaRelay, copying, norelay
}

func unary(ctx context.Context, cc *grpc.ClientConn) error {
	var out []byte
	return cc.Invoke(ctx, pkgREv2+"ActionCache/GetActionResult", instMsg(testInst), &out)
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func p50(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}

// BenchmarkUnary alternates unary calls straight to the upstream and
// through the relay and egress, and reports both medians and the
// difference the box pays.
func BenchmarkUnary(b *testing.B) {
	direct, egress, _, norelay := benchClients(b)
	ctx := ctxT(b, 10*time.Minute)
	var dd, de, dn []time.Duration
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		if err := unary(ctx, direct); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := unary(ctx, egress); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		if err := unary(ctx, norelay); err != nil {
			b.Fatal(err)
		}
		dd, de, dn = append(dd, t1.Sub(t0)), append(de, t2.Sub(t1)), append(dn, time.Since(t2))
	}
	pd, pe, pn := p50(dd), p50(de), p50(dn)
	b.ReportMetric(float64(pd.Microseconds()), "direct-p50-µs")
	b.ReportMetric(float64(pe.Microseconds()), "egress-p50-µs")
	b.ReportMetric(float64((pe - pd).Microseconds()), "added-p50-µs")
	// The same without the stand-in relay: what this package adds.
	b.ReportMetric(float64((pn - pd).Microseconds()), "added-p50-no-relay-µs")
}

// BenchmarkWrite64MiB writes a 64 MiB blob with ByteStream Write
// straight to the upstream and through the box's relay and egress, in
// turn, and reports each throughput and their ratio; the same through a
// relay that copies bytes and with no relay, for comparison.
func BenchmarkWrite64MiB(b *testing.B) {
	direct, egress, copying, norelay := benchClients(b)
	ctx := ctxT(b, 10*time.Minute)
	data := make([]byte, 64<<20)
	clients := []*grpc.ClientConn{direct, egress, copying, norelay}
	wall := make([]time.Duration, len(clients))
	cpu := make([]time.Duration, len(clients))
	b.ResetTimer()
	for b.Loop() {
		for i, cc := range clients {
			t0, c0 := time.Now(), cpuTime()
			if _, err := writeBlob(ctx, cc, data, 1<<20); err != nil {
				b.Fatal(err)
			}
			wall[i] += time.Since(t0)
			cpu[i] += cpuTime() - c0
		}
	}
	mb := float64(len(data)) / (1 << 20) * float64(b.N)
	b.ReportMetric(mb/wall[0].Seconds(), "direct-MiB/s")
	b.ReportMetric(mb/wall[1].Seconds(), "egress-MiB/s")
	b.ReportMetric(100*wall[0].Seconds()/wall[1].Seconds(), "egress-%-of-direct")
	b.ReportMetric(100*wall[0].Seconds()/wall[2].Seconds(), "copy-relay-%-of-direct")
	b.ReportMetric(100*wall[0].Seconds()/wall[3].Seconds(), "no-relay-%-of-direct")
	// CPU spent by the whole process (client, relay, egress, upstream) per
	// MiB: unlike wall time, it hardly depends on what else the machine
	// runs.
	b.ReportMetric(float64(cpu[0].Microseconds())/mb, "direct-cpu-µs/MiB")
	b.ReportMetric(float64(cpu[1].Microseconds())/mb, "egress-cpu-µs/MiB")
	b.ReportMetric(float64(cpu[2].Microseconds())/mb, "copy-relay-cpu-µs/MiB")
	b.ReportMetric(float64(cpu[3].Microseconds())/mb, "no-relay-cpu-µs/MiB")
}
