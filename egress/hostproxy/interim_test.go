package hostproxy

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestPlainHTTPInterimAnswers: a plain http:// request that expects
// 100-continue (curl sends one for every upload above 1 MiB) gets its
// server's final answer, not the interim 100 as if it were all; an
// interim answer the server sends on its own (103 Early Hints) does not
// stand in for the answer either, and the log has the final status.
func TestPlainHTTPInterimAnswers(t *testing.T) {
	port := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hints" {
			w.Header().Set("Link", "</a.css>; rel=preload")
			w.WriteHeader(http.StatusEarlyHints)
		}
		b, _ := io.ReadAll(r.Body)
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, "got %q expect=%q", b, r.Header.Get("Expect"))
	}), nil)
	ps := fmt.Sprint(port)
	sink := &memSink{}
	sock, _ := startProxy(t, []string{"exact.test:" + ps}, "exact.test=127.0.0.1", sink)

	got := raw(t, sock, "PUT http://exact.test:"+ps+"/up HTTP/1.1\r\nHost: exact.test\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\nhello")
	if !strings.Contains(got, "HTTP/1.1 201 ") || !strings.HasSuffix(got, `got "hello" expect=""`) {
		t.Errorf("a request expecting 100-continue:\n%s", got)
	}
	if e := sink.waitFor(t, "PUT", "exact.test:"+ps); e.Status != http.StatusCreated {
		t.Errorf("logged status %d, want 201", e.Status)
	}
	got = raw(t, sock, "GET http://exact.test:"+ps+"/hints HTTP/1.1\r\nHost: exact.test\r\n\r\n")
	if _, final, _ := strings.Cut(got, "HTTP/1.1 201 "); !strings.HasSuffix(final, `got "" expect=""`) {
		t.Errorf("an answer after 103 Early Hints:\n%s", got)
	}
}
