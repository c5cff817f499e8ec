// Command egressbench measures what the strict-mode egress proxy adds to a
// model call, against a direct client, in one interleaved run:
//
//	go run ./tests/bench/egressbench [-n 2000]
//
// The chain is the box's: client -> loopback TCP relay -> Unix socket ->
// proxy (the anthropic backend, a separate process so its RSS is its own)
// -> loopback TLS stand-in upstream. "Direct" is the same client talking
// TLS to the stand-in. Figures: added latency of a small non-streaming
// request (p50, p99), extra delay per SSE event (p50), and the proxy's peak
// RSS while 8 streams run at once; and, since a shared machine's load
// moves latency more than work, the proxy's CPU time and context switches
// per request and per event (its own getrusage, asked over a pipe).
// "One hop" is the floor of any process put between the client and the
// upstream: a relay that copies the direct client's TLS bytes both ways,
// on one processor as the proxy runs.
// "Before" is the same checked proxy as it was until it had its own
// upstream client, took the relay's connections over and ran on one
// processor: net/http's Transport, a relay copying bytes, GOMAXPROCS as
// the machine has.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/time/rate"

	"github.com/aisan-dev/aisan/egress"
	"github.com/aisan-dev/aisan/egress/anthropic"
	"github.com/aisan-dev/aisan/egress/audit"
	"github.com/aisan-dev/aisan/egress/cred"
	"github.com/aisan-dev/aisan/egress/egresstest"
	"github.com/aisan-dev/aisan/jail/relay"
)

const smallBody = `{"model":"claude-opus-5-5","max_tokens":64,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"Bash","input_schema":{"type":"object"}}]}`

func main() {
	proxyMode := flag.String("proxy", "", "internal: serve the proxy on this socket")
	plain := flag.Bool("plain", false, "internal: serve a bare httputil.ReverseProxy instead (the floor)")
	stdlib := flag.Bool("stdlib", false, "internal: serve the checked proxy over net/http's Transport (as before the proxy had its own)")
	upstream := flag.String("upstream", "", "internal: the stand-in's URL")
	hop := flag.String("hop", "", "internal: copy bytes between a loopback port and this address (the one-hop floor)")
	n := flag.Int("n", 2000, "small requests per side")
	streams := flag.Int("streams", 20, "SSE streams per side")
	flag.Parse()
	if *hop != "" {
		fmt.Fprintln(os.Stderr, "egressbench hop:", serveHop(*hop))
		os.Exit(1)
	}
	if *proxyMode != "" {
		if err := serveProxy(*proxyMode, *upstream, *plain, *stdlib); err != nil {
			fmt.Fprintln(os.Stderr, "egressbench proxy:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*n, *streams); err != nil {
		fmt.Fprintln(os.Stderr, "egressbench:", err)
		os.Exit(1)
	}
}

func serveProxy(sock, up string, plain, stdlib bool) error {
	u, err := url.Parse(up)
	if err != nil {
		return err
	}
	go answerUsage()
	if plain {
		ln, err := net.Listen("unix", sock)
		if err != nil {
			return err
		}
		rp := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(u)
			// The checked proxy sends the bytes it read; so does the floor.
			b, _ := io.ReadAll(pr.In.Body)
			pr.Out.Body, pr.Out.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
		}, FlushInterval: -1, Transport: egress.NewTransport()}
		fmt.Println("ready")
		return http.Serve(ln, rp)
	}
	b := anthropic.New(u, anthropic.Subscription, cred.Static{S: cred.NewSecret("bench-real-token")})
	ln, err := egress.ListenUnix(sock)
	if err != nil {
		return err
	}
	// Audited as the launcher does, to a file beside the socket.
	log, err := audit.Open(sock + ".jsonl")
	if err != nil {
		return err
	}
	defer log.Close()
	fmt.Println("ready")
	// Counted and limited as the launcher does (a meter shared by the
	// box's backends), at a rate that never refuses.
	o := egress.Options{Limiter: rate.NewLimiter(rate.Inf, 1), Meter: egress.NewMeter(egress.MeterState{}), Audit: log}
	if stdlib {
		o.Transport = egress.NewTransport()
	} else {
		egress.OneProc() // as the launcher does
	}
	return egress.Serve(context.Background(), ln, b, o)
}

// serveHop copies bytes between each connection to a loopback port and a
// connection of its own to up, and prints the port's address. It returns
// only when it fails.
func serveHop(up string) error {
	egress.OneProc()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Println(ln.Addr())
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		go func() {
			defer c.Close()
			u, err := net.Dial("tcp", up)
			if err != nil {
				return
			}
			defer u.Close()
			go copyConn(u, c)
			copyConn(c, u)
		}()
	}
}

// copyConn copies with a read and a write per chunk, as the proxy's
// relay does, not through splice.
func copyConn(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	dst.(*net.TCPConn).CloseWrite()
}

// answerUsage answers each line on stdin with this process's CPU time
// (µs) and its context switches so far, for the figures per call.
func answerUsage() {
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		cpu := ru.Utime.Sec*1e6 + ru.Utime.Usec + ru.Stime.Sec*1e6 + ru.Stime.Usec
		fmt.Printf("%d %d\n", cpu, ru.Nvcsw+ru.Nivcsw)
	}
}

// usage is a proxy child's CPU time and context switches so far.
type usage struct{ cpu, csw int64 }

// child is a proxy process and the pipes to ask it for its usage.
type child struct {
	*exec.Cmd
	in  io.Writer
	out *bufio.Reader
}

func (c *child) usage() usage {
	var u usage
	fmt.Fprintln(c.in)
	l, _ := c.out.ReadString('\n')
	fmt.Sscan(l, &u.cpu, &u.csw)
	return u
}

// perCall words what a child spent between two usages over n calls.
func perCall(a, b usage, n int) string {
	return fmt.Sprintf("%.0f µs CPU, %.1f context switches", float64(b.cpu-a.cpu)/float64(n), float64(b.csw-a.csw)/float64(n))
}

// upstreamHandler answers a request with "stream": true with max_tokens
// SSE events spaced by the duration in metadata.user_id, each carrying its
// send time; anything else with a small JSON body. (The body carries the
// switches because the proxy forwards only its exact routes and allowed
// headers.)
func upstreamHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Stream    bool `json:"stream"`
			MaxTokens int  `json:"max_tokens"`
			Metadata  struct {
				UserID string `json:"user_id"`
			} `json:"metadata"`
		}
		body, _ := io.ReadAll(r.Body)
		json.Unmarshal(body, &req)
		if !req.Stream {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"id":"msg_1","type":"message","content":[{"type":"text","text":"ok"}]}`)
			return
		}
		cnt := req.MaxTokens
		gap, _ := time.ParseDuration(req.Metadata.UserID)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		f := w.(http.Flusher)
		for i := 0; i < cnt; i++ {
			fmt.Fprintf(w, "event: content_block_delta\ndata: {\"t\":%d,\"pad\":\"%s\"}\n\n", time.Now().UnixNano(), strings.Repeat("x", 200))
			f.Flush()
			time.Sleep(gap)
		}
	})
}

// boxRelay is the in-box relay (jail/relay) on a free loopback port:
// handing each connection over to the proxy (pass), as for aisan's own
// backends, or copying its bytes, as before and for a plain server.
func boxRelay(sock string, pass bool) (string, error) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	r, err := relay.Listen(port, sock)
	if err != nil {
		return "", err
	}
	r.Pass = pass
	r.Serve()
	return "127.0.0.1:" + strconv.Itoa(port), nil
}

func run(n, streams int) error {
	dir, err := os.MkdirTemp("", "egressbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	caFile := filepath.Join(dir, "ca.pem")
	if err := egresstest.WriteCA(caFile); err != nil {
		return err
	}
	up := egresstest.StartUpstream(upstreamHandler())
	defer up.Close()
	up.Record(false)

	start := func(name string, extra ...string) (*child, string, error) {
		sock := filepath.Join(dir, name+".sock")
		self, _ := os.Executable()
		c := &child{Cmd: exec.Command(self, append([]string{"-proxy", sock, "-upstream", up.URL.String()}, extra...)...)}
		c.Env = append(os.Environ(), "SSL_CERT_FILE="+caFile)
		c.Stderr = os.Stderr
		out, _ := c.StdoutPipe()
		c.in, _ = c.StdinPipe()
		if err := c.Start(); err != nil {
			return nil, "", err
		}
		c.out = bufio.NewReader(out)
		if l, _ := c.out.ReadString('\n'); l != "ready\n" {
			c.Process.Kill()
			return nil, "", fmt.Errorf("proxy did not start: %q", l)
		}
		// Only the checked proxy as it is now takes handed-over connections.
		addr, err := boxRelay(sock, len(extra) == 0)
		return c, addr, err
	}
	child, addr, err := start("anthropic")
	if err != nil {
		return err
	}
	defer child.Process.Kill()
	plainChild, plainAddr, err := start("plain", "-plain")
	if err != nil {
		return err
	}
	defer plainChild.Process.Kill()
	plainURL := "http://" + plainAddr + "/v1/messages?beta=true"
	stdChild, stdAddr, err := start("stdlib", "-stdlib")
	if err != nil {
		return err
	}
	defer stdChild.Process.Kill()
	stdURL := "http://" + stdAddr + "/v1/messages?beta=true"
	self, _ := os.Executable()
	hopCmd := exec.Command(self, "-hop", up.URL.Host)
	hopCmd.Stderr = os.Stderr
	hopOut, _ := hopCmd.StdoutPipe()
	if err := hopCmd.Start(); err != nil {
		return err
	}
	defer hopCmd.Process.Kill()
	hopAddr, _ := bufio.NewReader(hopOut).ReadString('\n')
	hopAddr = strings.TrimSpace(hopAddr)
	if hopAddr == "" {
		return fmt.Errorf("the hop did not start")
	}
	// The direct client's requests, TLS and all, through the hop.
	hopped := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: egresstest.Pool()}, MaxIdleConnsPerHost: 16, DisableCompression: true,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "tcp4", hopAddr)
		}}}
	viaProxy := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16, DisableCompression: true}}
	// The direct client speaks HTTP/1.1 over TLS, as the clients' own
	// fetch implementations do by default.
	direct := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: egresstest.Pool()}, MaxIdleConnsPerHost: 16, DisableCompression: true}}
	proxyURL := "http://" + addr + "/v1/messages?beta=true"
	directURL := up.URL.String() + "/v1/messages?beta=true"

	do := func(c *http.Client, u string) (time.Duration, error) {
		req, _ := http.NewRequest("POST", u, strings.NewReader(smallBody))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer aisan-placeholder-not-a-credential")
		req.Header.Set("Anthropic-Version", "2023-06-01")
		t0 := time.Now()
		resp, err := c.Do(req)
		if err != nil {
			return 0, err
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return 0, fmt.Errorf("status %d", resp.StatusCode)
		}
		return time.Since(t0), err
	}
	// Warm both paths (TLS sessions, HTTP/2 connections).
	for i := 0; i < 50; i++ {
		if _, err := do(viaProxy, proxyURL); err != nil {
			return fmt.Errorf("via proxy: %w", err)
		}
		if _, err := do(direct, directURL); err != nil {
			return fmt.Errorf("direct: %w", err)
		}
		if _, err := do(viaProxy, plainURL); err != nil {
			return fmt.Errorf("plain: %w", err)
		}
		if _, err := do(viaProxy, stdURL); err != nil {
			return fmt.Errorf("stdlib: %w", err)
		}
		if _, err := do(hopped, directURL); err != nil {
			return fmt.Errorf("one hop: %w", err)
		}
	}
	var dp, dd, dq, ds, dh []time.Duration
	u0, s0 := child.usage(), stdChild.usage()
	for i := 0; i < n; i++ {
		a, err := do(viaProxy, proxyURL)
		if err != nil {
			return err
		}
		b, err := do(direct, directURL)
		if err != nil {
			return err
		}
		c, err := do(viaProxy, plainURL)
		if err != nil {
			return err
		}
		e, err := do(viaProxy, stdURL)
		if err != nil {
			return err
		}
		h, err := do(hopped, directURL)
		if err != nil {
			return err
		}
		dp, dd, dq, ds, dh = append(dp, a), append(dd, b), append(dq, c), append(ds, e), append(dh, h)
	}
	u1, s1 := child.usage(), stdChild.usage()
	p50 := ms(pct(dp, 50) - pct(dd, 50))
	p99 := ms(pct(dp, 99) - pct(dd, 99))
	fmt.Printf("small request, direct      p50 %.3f ms  p99 %.3f ms\n", ms(pct(dd, 50)), ms(pct(dd, 99)))
	fmt.Printf("small request, via proxy   p50 %.3f ms  p99 %.3f ms\n", ms(pct(dp, 50)), ms(pct(dp, 99)))
	fmt.Printf("small request, bare proxy  p50 %.3f ms  p99 %.3f ms (plain ReverseProxy over net/http's Transport, copying relay)\n", ms(pct(dq, 50)), ms(pct(dq, 99)))
	fmt.Printf("small request, before      p50 %.3f ms  p99 %.3f ms (the checked proxy over net/http's Transport, copying relay)\n", ms(pct(ds, 50)), ms(pct(ds, 99)))
	fmt.Printf("small request, one hop     p50 %.3f ms  p99 %.3f ms (the direct client through a process that only copies bytes)\n", ms(pct(dh, 50)), ms(pct(dh, 99)))
	fmt.Printf("added latency, one hop     p50 %+.3f ms  p99 %+.3f ms (the floor of any proxy on this machine)\n", ms(pct(dh, 50)-pct(dd, 50)), ms(pct(dh, 99)-pct(dd, 99)))
	fmt.Printf("added latency, before      p50 %+.3f ms  p99 %+.3f ms\n", ms(pct(ds, 50)-pct(dd, 50)), ms(pct(ds, 99)-pct(dd, 99)))
	fmt.Printf("added latency              p50 %+.3f ms (target <= +0.25)  p99 %+.3f ms (target <= +0.8)\n", p50, p99)
	fmt.Printf("proxy per request: %s (before: %s)\n", perCall(u0, u1, n), perCall(s0, s1, n))

	// SSE: per-event delay from the upstream's send to the client's read.
	sse := func(c *http.Client, u string, cnt int, gap time.Duration) ([]time.Duration, error) {
		body := fmt.Sprintf(`{"model":"m","stream":true,"max_tokens":%d,"metadata":{"user_id":%q},"messages":[{"role":"user","content":"hi"}]}`, cnt, gap.String())
		req, _ := http.NewRequest("POST", u, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := c.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			b, _ := io.ReadAll(resp.Body)
			return nil, fmt.Errorf("status %d: %s", resp.StatusCode, b)
		}
		var lat []time.Duration
		br := bufio.NewReader(resp.Body)
		for {
			l, err := br.ReadBytes('\n')
			if err != nil {
				break
			}
			if bytes.HasPrefix(l, []byte(`data: {"t":`)) {
				v, _ := strconv.ParseInt(string(l[len(`data: {"t":`):bytes.IndexByte(l, ',')]), 10, 64)
				lat = append(lat, time.Since(time.Unix(0, v)))
			}
		}
		if len(lat) != cnt {
			return nil, fmt.Errorf("got %d of %d events", len(lat), cnt)
		}
		return lat, nil
	}
	var sp, sd, sq, ss, sh []time.Duration
	u0, s0 = child.usage(), stdChild.usage()
	for i := 0; i < streams; i++ {
		a, err := sse(viaProxy, proxyURL, 50, 2*time.Millisecond)
		if err != nil {
			return fmt.Errorf("sse via proxy: %w", err)
		}
		b, err := sse(direct, directURL, 50, 2*time.Millisecond)
		if err != nil {
			return fmt.Errorf("sse direct: %w", err)
		}
		c, err := sse(viaProxy, plainURL, 50, 2*time.Millisecond)
		if err != nil {
			return fmt.Errorf("sse bare: %w", err)
		}
		e, err := sse(viaProxy, stdURL, 50, 2*time.Millisecond)
		if err != nil {
			return fmt.Errorf("sse before: %w", err)
		}
		h, err := sse(hopped, directURL, 50, 2*time.Millisecond)
		if err != nil {
			return fmt.Errorf("sse one hop: %w", err)
		}
		sp, sd, sq, ss, sh = append(sp, a...), append(sd, b...), append(sq, c...), append(ss, e...), append(sh, h...)
	}
	u1, s1 = child.usage(), stdChild.usage()
	fmt.Printf("SSE per-event delay p50: direct %.3f ms, via proxy %.3f ms, bare proxy %.3f ms, before %.3f ms, one hop %.3f ms\n", ms(pct(sd, 50)), ms(pct(sp, 50)), ms(pct(sq, 50)), ms(pct(ss, 50)), ms(pct(sh, 50)))
	fmt.Printf("SSE extra delay per event  p50 %+.3f ms (target <= +0.08); one hop's: %+.3f ms (the floor)\n", ms(pct(sp, 50)-pct(sd, 50)), ms(pct(sh, 50)-pct(sd, 50)))
	fmt.Printf("proxy per event (with its stream's share): %s (before: %s)\n", perCall(u0, u1, len(sp)), perCall(s0, s1, len(ss)))

	// RSS: 8 streams at once through the proxy, sampled every 50 ms.
	idle := rss(child.Process.Pid)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	peak := idle
	go func() {
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				peak = max(peak, rss(child.Process.Pid))
			}
		}
	}()
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := sse(viaProxy, proxyURL, 300, 10*time.Millisecond); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(stop)
	close(errs)
	for err := range errs {
		return fmt.Errorf("concurrent streams: %w", err)
	}
	peak = max(peak, rss(child.Process.Pid))
	fmt.Printf("proxy RSS: idle %.1f MiB, peak under 8 concurrent streams %.1f MiB (target <= 20 MiB)\n", float64(idle)/(1<<20), float64(peak)/(1<<20))
	return nil
}

// rss is a process's resident set in bytes, from /proc.
func rss(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

func pct(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[(len(s)-1)*p/100]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
