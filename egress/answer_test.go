package egress_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"strings"
	"testing"

	"github.com/aisan-dev/aisan/egress"
	"github.com/aisan-dev/aisan/egress/cred"
	"github.com/aisan-dev/aisan/egress/egresstest"
)

// TestTrailersKeepToTheReturnList: an upstream's trailers, announced or
// not, reach the box only when the backend's Return list names them, as
// its headers do.
func TestTrailersKeepToTheReturnList(t *testing.T) {
	f := newFixture(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Trailer", "X-Ok, Set-Cookie, X-Secret")
		w.WriteHeader(200)
		io.WriteString(w, `{"ok":1}`)
		w.(http.Flusher).Flush()
		w.Header().Set("X-Ok", "kept")
		w.Header().Set("Set-Cookie", "sessionKey=sk-ant-sid01-upstream")
		w.Header().Set("X-Secret", "upstream-internal")
		w.Header().Set(http.TrailerPrefix+"X-Unannounced", "upstream-internal")
	}), egress.Options{})
	resp := f.do(t, "POST", "/v1/y", nil, `{}`)
	if b, _ := io.ReadAll(resp.Body); string(b) != `{"ok":1}` {
		t.Fatalf("body %q", b)
	}
	if got := resp.Trailer.Get("X-Ok"); got != "kept" {
		t.Errorf("an allowed trailer was dropped: %v", resp.Trailer)
	}
	for _, k := range []string{"Set-Cookie", "X-Secret", "X-Unannounced"} {
		if v := resp.Trailer.Values(k); len(v) > 0 {
			t.Errorf("trailer %s reached the box: %q", k, v)
		}
	}
	if tr := resp.Header.Values("Trailer"); strings.Contains(strings.Join(tr, ","), "Secret") || strings.Contains(strings.Join(tr, ","), "Cookie") {
		t.Errorf("the box was told of the upstream's trailers: Trailer: %q", tr)
	}
}

// TestInformationalAnswersStayUpstream: the headers of an upstream's
// 103 Early Hints never reach the box, also through net/http's Transport
// (what serves when the host routes the upstream through a proxy), which
// reports informational answers to ReverseProxy.
func TestInformationalAnswersStayUpstream(t *testing.T) {
	tr := egress.NewTransport()
	tr.TLSClientConfig.RootCAs = egresstest.Pool()
	f := newFixture(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Secret", "early-secret")
		w.Header().Set("Set-Cookie", "sid=early")
		w.WriteHeader(http.StatusEarlyHints)
		w.Header().Del("X-Secret")
		w.Header().Del("Set-Cookie")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(200)
		io.WriteString(w, `{"ok":1}`)
	}), egress.Options{Transport: tr})
	var early []textproto.MIMEHeader
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
			early = append(early, h)
			return nil
		},
	})
	req, _ := http.NewRequestWithContext(ctx, "POST", "http://box/v1/y", strings.NewReader(`{}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := f.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if b, _ := io.ReadAll(resp.Body); resp.StatusCode != 200 || string(b) != `{"ok":1}` {
		t.Fatalf("got %d %q", resp.StatusCode, b)
	}
	if len(f.up.Requests()) != 1 {
		t.Fatalf("the upstream saw %d requests", len(f.up.Requests()))
	}
	for _, h := range early {
		if h.Get("X-Secret") != "" || h.Get("Set-Cookie") != "" {
			t.Errorf("an informational answer's headers reached the box: %v", h)
		}
	}
}

// TestCredentialCommandOutputStaysOnHost: when the host's credential
// command fails, the box learns that it failed and which command, and
// the host's egress log alone has what the command printed.
func TestCredentialCommandOutputStaysOnHost(t *testing.T) {
	f := newFixture(t, egresstest.JSON(200, `{}`), egress.Options{})
	f.src.Err = &cred.CommandError{Name: "vault-token", Err: errors.New("exit status 1"),
		Output: "permission denied for token hvs.HOSTSECRET at /home/u/.config/vault"}
	resp := f.do(t, "POST", "/v1/y", nil, `{}`)
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 403 || !strings.Contains(string(b), "credential command vault-token failed") {
		t.Errorf("got %d %s; want a refusal naming the failed command", resp.StatusCode, b)
	}
	if strings.Contains(string(b), "HOSTSECRET") || strings.Contains(string(b), "/home/u") {
		t.Errorf("the command's output reached the box: %s", b)
	}
	if es := f.audit.Entries(); len(es) != 1 || !strings.Contains(es[0].Refused, "hvs.HOSTSECRET") {
		t.Errorf("the egress log lacks the command's output: %+v", es)
	}
}
