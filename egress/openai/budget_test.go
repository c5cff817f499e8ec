package openai

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aisan-dev/aisan/egress"
	"github.com/aisan-dev/aisan/egress/egresstest"
)

// TestBudgetCutShort: a box that hangs up on its stream once it has the
// answer, before the event that reports usage (Responses sends it last),
// is still counted, so a budget stops it; a call read to its end counts
// what it reports.
func TestBudgetCutShort(t *testing.T) {
	usage := `{"type":"response.completed","response":{"id":"resp_1","status":"completed","usage":{"input_tokens":100000,"output_tokens":5000,"total_tokens":105000}}}`
	up := egresstest.NewUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		io.WriteString(w, "event: response.output_text.done\ndata: {\"type\":\"response.output_text.done\",\"text\":\"the whole answer\"}\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-time.After(300 * time.Millisecond):
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, "event: response.completed\ndata: "+usage+"\n\n")
	}))
	meter := egress.NewMeter(egress.MeterState{Budget: 1000})
	client := egresstest.Serve(t, NewOpenAI(up.URL, &egresstest.Source{Value: "sk-real"}), egress.Options{Transport: egresstest.Transport(), Meter: meter})
	input := strings.Repeat("x", 8000)
	call := func(hangUp bool) int {
		t.Helper()
		req, _ := http.NewRequest("POST", "http://box/responses", strings.NewReader(`{"model":"gpt-5","store":false,"stream":true,"input":"`+input+`"}`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if hangUp {
			br := bufio.NewReader(resp.Body)
			for {
				l, err := br.ReadString('\n')
				if err != nil || strings.Contains(l, "output_text.done\",") {
					break
				}
			}
		} else {
			io.ReadAll(resp.Body)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if st := call(true); st != 200 {
		t.Fatalf("first call: %d", st)
	}
	// The proxy counts once its side of the call has ended.
	deadline := time.Now().Add(5 * time.Second)
	var spent int64
	for time.Now().Before(deadline) {
		if _, spent = meter.Budget(); spent > 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if spent < 2000 {
		t.Fatalf("a call cut short before its usage counted %d tokens; want at least a quarter of its request's 8,000 bytes", spent)
	}
	if st := call(true); st == 200 {
		t.Errorf("a call after the budget was spent by calls cut short: %d; want it refused", st)
	}

	meter = egress.NewMeter(egress.MeterState{})
	client = egresstest.Serve(t, NewOpenAI(up.URL, &egresstest.Source{Value: "sk-real"}), egress.Options{Transport: egresstest.Transport(), Meter: meter})
	if st := call(false); st != 200 {
		t.Fatalf("a whole call: %d", st)
	}
	deadline = time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if _, spent = meter.Budget(); spent > 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if spent != 105000 {
		t.Errorf("a call read to its end counted %d; want the 105,000 it reported", spent)
	}
}
