package egress_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/aisan-dev/aisan/egress"
	"github.com/aisan-dev/aisan/egress/anthropic"
	"github.com/aisan-dev/aisan/egress/audit"
	"github.com/aisan-dev/aisan/egress/egresstest"
)

// meterFixture serves testBackend, reading usage as the Messages API
// reports it, with a meter.
func meterFixture(t *testing.T, h http.Handler, o egress.Options) *fixture {
	t.Helper()
	f := &fixture{up: egresstest.NewUpstream(t, h), src: &egresstest.Source{Value: realToken}, audit: &egresstest.Collect{}}
	o.Audit = f.audit
	b := testBackend(f.up.URL, f.src)
	b.Usage = anthropic.Usage
	b.OutputCaps = anthropic.OutputCaps
	f.client = egresstest.Serve(t, b, o)
	return f
}

// TestUsageCounted: the tokens of a JSON answer and of a stream are
// counted per call, in the audit line and the box's meter, and the
// answer reaches the client byte for byte.
func TestUsageCounted(t *testing.T) {
	m := egress.NewMeter(egress.MeterState{})
	stream := egresstest.Anthropic()
	f := meterFixture(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/y" {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"type":"message","content":[],"usage":{"input_tokens":3,"output_tokens":4,"cache_read_input_tokens":100,"cache_creation_input_tokens":7}}`)
			return
		}
		stream.ServeHTTP(w, r)
	}), egress.Options{Meter: m})
	resp := f.do(t, "POST", "/v1/y", nil, `{}`)
	b, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(b), `"cache_read_input_tokens":100`) {
		t.Fatalf("JSON answer altered: %s", b)
	}
	resp = f.do(t, "POST", "/v1/x?beta=true", nil, `{"model":"m"}`)
	b, _ = io.ReadAll(resp.Body)
	if !strings.Contains(string(b), "message_stop") {
		t.Fatalf("stream altered: %s", b)
	}
	es := f.audit.Entries()
	if len(es) != 2 || es[0].Tokens == nil || *es[0].Tokens != (audit.Tokens{Input: 3, Output: 4, CacheRead: 100, CacheCreation: 7}) ||
		es[1].Tokens == nil || *es[1].Tokens != (audit.Tokens{Input: 10, Output: 5}) {
		t.Fatalf("audit tokens: %+v", es)
	}
	st := m.State()
	if s := st.Backends["test"]; s.Calls != 2 || s.Counted != 2 || s.Tokens.Total() != 129 {
		t.Errorf("meter %+v", st)
	}
	if _, spent := m.Budget(); spent != 129 {
		t.Errorf("spent %d, want 129", spent)
	}
}

// TestBudgetRefusesTheNextCallNotTheStream: a stream that takes the box
// past its budget runs to its end; the next call is refused in the
// API's shape, not retried, saying how to raise the budget; raised, it
// passes again.
func TestBudgetRefusesTheNextCallNotTheStream(t *testing.T) {
	m := egress.NewMeter(egress.MeterState{Budget: 20})
	release := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		fl := w.(http.Flusher)
		io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":15,\"output_tokens\":1}}}\n\n")
		fl.Flush()
		<-release
		io.WriteString(w, "event: message_delta\ndata: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":30}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
		fl.Flush()
	})
	f := meterFixture(t, h, egress.Options{Meter: m, Slot: "proj-1a2b3c4d-claude"})
	resp := f.do(t, "POST", "/v1/y", nil, `{}`)
	br := bufio.NewReader(resp.Body)
	if line, _ := br.ReadString('\n'); !strings.Contains(line, "message_start") {
		t.Fatalf("first event %q", line)
	}
	close(release)
	rest, _ := io.ReadAll(br)
	if !strings.Contains(string(rest), "message_stop") {
		t.Fatalf("the stream was cut: %q", rest)
	}
	resp.Body.Close()
	if _, spent := m.Budget(); spent != 45 {
		t.Fatalf("spent %d, want 45", spent)
	}
	resp = f.do(t, "POST", "/v1/y", nil, `{}`)
	b, _ := io.ReadAll(resp.Body)
	var shape struct {
		Kind    int
		Message string
	}
	json.Unmarshal(b, &shape)
	if resp.StatusCode != 403 || egress.Kind(shape.Kind) != egress.KindBudget || resp.Header.Get("X-Should-Retry") != "false" ||
		!strings.Contains(shape.Message, "budget is spent (45 tokens counted, budget 20)") || !strings.Contains(shape.Message, "aisan allow proj-1a2b3c4d-claude --budget +N") {
		t.Fatalf("over budget: %d %v %s", resp.StatusCode, resp.Header, b)
	}
	if n := len(f.up.Requests()); n != 1 {
		t.Fatalf("the upstream saw %d calls; the refused one must not reach it", n)
	}
	if es := f.audit.Entries(); es[len(es)-1].Refused == "" {
		t.Errorf("the refusal is not in the audit line: %+v", es[len(es)-1])
	}
	m.SetBudget(100)
	if resp := f.do(t, "POST", "/v1/y", nil, `{}`); resp.StatusCode != 200 {
		t.Fatalf("after raising the budget: %d", resp.StatusCode)
	}
}

// TestSharedLimiterChangesLive: a box's backends share one limiter, and
// raising it on the running servers lets the next call through; the
// refusal names the rate and the command.
func TestSharedLimiterChangesLive(t *testing.T) {
	lim := rate.NewLimiter(0.1, 1)
	f := meterFixture(t, egresstest.JSON(200, `{}`), egress.Options{Limiter: lim, Slot: "s-1"})
	if resp := f.do(t, "POST", "/v1/y", nil, `{}`); resp.StatusCode != 200 {
		t.Fatalf("first: %d", resp.StatusCode)
	}
	resp := f.do(t, "POST", "/v1/y", nil, `{}`)
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(b), "(0.1/s,1)") || !strings.Contains(string(b), "aisan allow s-1 --rate") {
		t.Fatalf("second: %d %v %s", resp.StatusCode, resp.Header, b)
	}
	lim.SetLimit(100)
	lim.SetBurst(10)
	time.Sleep(20 * time.Millisecond)
	if resp := f.do(t, "POST", "/v1/y", nil, `{}`); resp.StatusCode != 200 {
		t.Fatalf("after raising the rate: %d", resp.StatusCode)
	}
}

func TestParseRate(t *testing.T) {
	for _, c := range []struct {
		in    string
		r     rate.Limit
		burst int
		err   string
	}{
		{"2/s", 2, 0, ""},
		{"0.5/s,10", 0.5, 10, ""},
		{" 10/s , 100 ", 10, 100, ""},
		{"2", 0, 0, "ends in /s"},
		{"2/m", 0, 0, "ends in /s"},
		{"0/s", 0, 0, "more than 0"},
		{"-1/s", 0, 0, "more than 0"},
		{"NaN/s", 0, 0, "not a number"},
		{"Inf/s", 0, 0, "not a number"},
		{"5000/s", 0, 0, "at most"},
		{"2/s,0", 0, 0, "1 to"},
		{"2/s,+3", 0, 0, "whole number"},
		{"2/s,x", 0, 0, "whole number"},
	} {
		r, b, err := egress.ParseRate(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: err %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || r != c.r || b != c.burst {
			t.Errorf("%q: %v %d %v", c.in, r, b, err)
		}
		if r2, b2, err := egress.ParseRate(egress.FormatRate(r, max(b, 1))); err != nil || r2 != r || b2 != max(b, 1) {
			t.Errorf("%q does not read back: %v %d %v", c.in, r2, b2, err)
		}
	}
}

func TestMeterState(t *testing.T) {
	m := egress.NewMeter(egress.MeterState{Budget: 50, Backends: map[string]egress.Spend{"a": {Calls: 2, Counted: 1, Tokens: audit.Tokens{Input: 5, Output: 5}}}})
	if b, s := m.Budget(); b != 50 || s != 10 {
		t.Fatalf("restored meter: budget %d spent %d", b, s)
	}
	n := 0
	m.OnChange(func() { n++ })
	m.SetBudget(60)
	if n != 1 || m.State().Budget != 60 {
		t.Errorf("change not seen: %d %+v", n, m.State())
	}
}

func TestParseTokens(t *testing.T) {
	for _, c := range []struct {
		in     string
		plusOK bool
		n      int64
		plus   bool
		err    string
	}{
		{"500000", false, 500000, false, ""},
		{"500k", false, 500000, false, ""},
		{"2M", false, 2000000, false, ""},
		{"0", false, 0, false, ""},
		{"+100k", true, 100000, true, ""},
		{"+100k", false, 0, false, "a + is for raising"},
		{"+0", true, 0, false, "raises nothing"},
		{"1.5M", false, 0, false, "whole number"},
		{"-5", true, 0, false, "whole number"},
		{"", false, 0, false, "whole number"},
		{"k", false, 0, false, "whole number"},
		{"99999999999999999", false, 0, false, "whole number"},
		{"2000000000M", false, 0, false, "more tokens"},
	} {
		n, plus, err := egress.ParseTokens(c.in, c.plusOK)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: %d %v %v, want %q", c.in, n, plus, err, c.err)
			}
			continue
		}
		if err != nil || n != c.n || plus != c.plus {
			t.Errorf("%q: %d %v %v", c.in, n, plus, err)
		}
	}
}

// FuzzParseRateAndTokens: no input panics either parser, what they take
// is in bounds, and a rate reads back as it is written.
func FuzzParseRateAndTokens(f *testing.F) {
	for _, s := range []string{"2/s", "0.5/s,10", "1e3/s,1", "+500k", "2M", "0", " 7 /s , 9 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if r, b, err := egress.ParseRate(s); err == nil {
			if r <= 0 || r > egress.MaxRate || b < 0 || b > egress.MaxBurst {
				t.Fatalf("%q: out of bounds %v %d", s, r, b)
			}
			if r2, b2, err := egress.ParseRate(egress.FormatRate(r, max(b, 1))); err != nil || r2 != r || b2 != max(b, 1) {
				t.Fatalf("%q does not read back: %v %d %v", s, r2, b2, err)
			}
		}
		if n, _, err := egress.ParseTokens(s, true); err == nil && (n < 0 || n > 1e15) {
			t.Fatalf("%q: %d tokens", s, n)
		}
	})
}

// TestUsageUnreadIsEstimated: a call is not free because its usage could
// not be read. A successful answer that reports none (or none the
// counter could read) counts the estimate; a call whose client left
// before the answer began counts its request's; a token count, which
// uses none, counts nothing; a refusal counts nothing.
func TestUsageUnreadIsEstimated(t *testing.T) {
	m := egress.NewMeter(egress.MeterState{})
	received := make(chan struct{}, 1)
	f := &fixture{up: egresstest.NewUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/x":
			// The box hangs up before this answers.
			received <- struct{}{}
			<-r.Context().Done()
		case "/v1/count":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"input_tokens":5}`)
		default:
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, strings.Repeat("a", 400))
		}
	})), src: &egresstest.Source{Value: realToken}, audit: &egresstest.Collect{}}
	b := testBackend(f.up.URL, f.src)
	b.Routes = append(b.Routes, egress.Route{Method: "POST", Path: "/v1/count", Uncounted: true})
	b.Usage = anthropic.Usage
	f.client = egresstest.Serve(t, b, egress.Options{Meter: m, Audit: f.audit})
	body := `{"pad":"` + strings.Repeat("p", 390) + `"}`

	io.ReadAll(f.do(t, "POST", "/v1/y", nil, body).Body)
	io.ReadAll(f.do(t, "POST", "/v1/count", nil, body).Body)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", "http://box/v1/x?beta=true", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	go func() { <-received; cancel() }()
	if _, err := f.client.Do(req); err == nil {
		t.Fatal("the call the box hung up on answered")
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(f.audit.Entries()) < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	es := f.audit.Entries()
	if len(es) != 3 {
		t.Fatalf("audit: %+v", es)
	}
	want := map[string]*audit.Tokens{
		"/v1/y":           {Input: int64(len(body)) / 4, Output: 100},
		"/v1/count":       nil,
		"/v1/x?beta=true": {Input: int64(len(body)) / 4},
	}
	for _, e := range es {
		w, got := want[e.Path], e.Tokens
		if (w == nil) != (got == nil) || w != nil && *w != *got {
			t.Errorf("%s counts %+v, want %+v", e.Path, got, w)
		}
	}
	if _, spent := m.Budget(); spent != 2*int64(len(body))/4+100 {
		t.Errorf("spent %d", spent)
	}
}

// TestBudgetHoldsCallsInFlight: calls that run at once cannot together
// pass the budget, though none of them is counted yet: each holds the
// least it will use until its answer is counted, and a call that would
// start past the budget waits (it never reaches the upstream meanwhile):
// after the first answer (60) the count and the other's hold (50) still
// reach the budget, after the second the count does, and the waiting
// call is refused saying so; raising the budget lets the next one
// through.
func TestBudgetHoldsCallsInFlight(t *testing.T) {
	m := egress.NewMeter(egress.MeterState{Budget: 100})
	arrived, release := make(chan struct{}, 4), make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select { // a call that should not have started does not hang the test
		case <-release:
		case <-time.After(5 * time.Second):
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"usage":{"input_tokens":60,"output_tokens":0}}`)
	})
	f := meterFixture(t, h, egress.Options{Meter: m, Slot: "s-1", Burst: 10})
	pad := func(s string) string { return `{"pad":"` + s + strings.Repeat("p", 190-len(s)) + `"}` } // 200 bytes: 50 tokens at least
	call := func(body string, done chan<- string) {
		resp := f.do(t, "POST", "/v1/y", nil, body)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		done <- fmt.Sprintf("%d %s", resp.StatusCode, b)
	}
	first := make(chan string, 2)
	go call(pad(""), first)
	go call(pad(""), first)
	<-arrived
	<-arrived
	third := make(chan string, 1)
	go call(pad(""), third)
	select {
	case <-arrived:
		t.Fatal("a third call of 50 tokens started while two of 50 held the budget of 100")
	case got := <-third:
		t.Fatalf("a third call of 50 tokens ended while two of 50 held the budget of 100: %s", got)
	case <-time.After(300 * time.Millisecond):
	}
	close(release)
	for range 2 {
		if got := <-first; !strings.HasPrefix(got, "200 ") {
			t.Fatalf("a call in flight ended %s", got)
		}
	}
	if got := <-third; !strings.HasPrefix(got, "403 ") || !strings.Contains(got, "budget is spent (120 tokens counted, budget 100)") {
		t.Fatalf("the waiting call, once the answers spent the budget: %s", got)
	}
	if n := len(f.up.Requests()); n != 2 {
		t.Fatalf("the upstream saw %d calls, want 2", n)
	}
	m.SetBudget(1000)
	resp := f.do(t, "POST", "/v1/y", nil, pad(""))
	if b, _ := io.ReadAll(resp.Body); resp.StatusCode != 200 {
		t.Fatalf("after the budget was raised: %d %s", resp.StatusCode, b)
	}
}

// TestBudgetWaitsForRoom: a call also holds the cap it puts on its
// answer (max_tokens); one that would start past the budget with it
// waits for the call in flight and starts once that one's answer was
// counted under the budget; one whose client gives up while waiting
// never reaches the upstream.
func TestBudgetWaitsForRoom(t *testing.T) {
	m := egress.NewMeter(egress.MeterState{Budget: 1000})
	arrived, release := make(chan struct{}, 3), make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		arrived <- struct{}{}
		if strings.Contains(string(body), "996") {
			select {
			case <-release:
			case <-time.After(5 * time.Second):
			}
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"usage":{"input_tokens":3,"output_tokens":7}}`)
	})
	f := meterFixture(t, h, egress.Options{Meter: m, Burst: 10})
	first := make(chan int, 1)
	go func() {
		resp := f.do(t, "POST", "/v1/y", nil, `{"max_tokens":996}`) // 4 + 996 = 1000 held
		io.ReadAll(resp.Body)
		resp.Body.Close()
		first <- resp.StatusCode
	}()
	<-arrived
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", "http://box/v1/y", strings.NewReader(`{"max_tokens":1}`))
	req.Header.Set("Content-Type", "application/json")
	gaveUp := make(chan error, 1)
	go func() {
		resp, err := f.client.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		gaveUp <- err
	}()
	second := make(chan int, 1)
	go func() {
		resp := f.do(t, "POST", "/v1/y", nil, `{"max_tokens":1}`)
		io.ReadAll(resp.Body)
		resp.Body.Close()
		second <- resp.StatusCode
	}()
	time.Sleep(300 * time.Millisecond)
	cancel()
	if err := <-gaveUp; err == nil {
		t.Error("the call whose client gave up while waiting was answered")
	}
	// The server learns of it when it sees the connection close.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if es := f.audit.Entries(); len(es) > 0 && es[0].Refused != "" {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("the call given up is not in the audit log as refused: %+v", es)
		}
	}
	select {
	case <-arrived:
		t.Fatal("a call started while the one in flight held the whole budget")
	case <-second:
		t.Fatal("a call ended while the one in flight held the whole budget")
	default:
	}
	close(release)
	if code := <-first; code != 200 {
		t.Fatalf("the call in flight ended %d", code)
	}
	if code := <-second; code != 200 {
		t.Fatalf("the waiting call, once the first was counted (10 tokens): %d", code)
	}
	if n := len(f.up.Requests()); n != 2 {
		t.Fatalf("the upstream saw %d calls, want 2 (the one given up must not reach it)", n)
	}
}
