package egress

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"testing"

	"github.com/aisan-dev/aisan/egress/audit"
)

// testUsage reads {"usage":{"in":N,"out":N}}, as a backend's UsageFunc.
func testUsage(doc []byte) (audit.Tokens, bool) {
	var d struct {
		Usage *struct{ In, Out int64 } `json:"usage"`
	}
	if json.Unmarshal(doc, &d) != nil || d.Usage == nil {
		return audit.Tokens{}, false
	}
	return audit.Tokens{Input: max(d.Usage.In, 0), Output: max(d.Usage.Out, 0)}, true
}

// readUsage passes body through countUsage in pieces of the given sizes
// (cycled) and returns what came out and what was counted.
func readUsage(t testing.TB, ct string, body []byte, sizes []int) ([]byte, audit.Tokens, bool) {
	resp := &http.Response{Header: http.Header{"Content-Type": {ct}}, Body: io.NopCloser(bytes.NewReader(body))}
	var got audit.Tokens
	var ok, called bool
	countUsage(resp, testUsage, func(u answerUsage) { got, ok, called = u.Tokens, u.Got, true })
	var out []byte
	for i := 0; ; i++ {
		n := 1
		if len(sizes) > 0 {
			n = max(sizes[i%len(sizes)], 1)
		}
		buf := make([]byte, n)
		m, err := resp.Body.Read(buf)
		out = append(out, buf[:m]...)
		if err != nil {
			break
		}
	}
	resp.Body.Close()
	if !called {
		t.Fatal("done was not called")
	}
	return out, got, ok
}

var streamSeeds = []string{
	"event: a\ndata: {\"usage\":{\"in\":10,\"out\":1}}\n\nevent: b\ndata: {\"x\":\"\\\"usage\\\"\"}\n\nevent: c\r\ndata:{\"usage\":{\"out\":7}}\r\n\r\n",
	"data: {\"usage\":{\"in\":3}}",
	"data: {\"usage\":null}\n\n",
	": comment \"usage\"\n\ndata: [DONE]\n\n",
	"",
}

func TestUsageStream(t *testing.T) {
	out, got, ok := readUsage(t, "text/event-stream", []byte(streamSeeds[0]), []int{3, 1, 40})
	if string(out) != streamSeeds[0] || !ok || got != (audit.Tokens{Input: 10, Output: 7}) {
		t.Fatalf("got %q %+v %v", out, got, ok)
	}
	if _, got, ok := readUsage(t, "text/event-stream", []byte(streamSeeds[1]), nil); !ok || got.Input != 3 {
		t.Errorf("a last event without a newline: %+v %v", got, ok)
	}
	if _, _, ok := readUsage(t, "application/json; charset=utf-8", []byte(`{"usage":{"in":1}}`), []int{5}); !ok {
		t.Error("a JSON answer's usage was not read")
	}
	long := append([]byte("data: {\"usage\":{\"in\":1},\"pad\":\""), bytes.Repeat([]byte("x"), maxUsageDoc)...)
	long = append(long, "\"}\n\ndata: {\"usage\":{\"out\":2}}\n\n"...)
	if out, got, ok := readUsage(t, "text/event-stream", long, []int{1 << 16}); len(out) != len(long) || !ok || got != (audit.Tokens{Output: 2}) {
		t.Errorf("an over-long event: %d bytes out, %+v %v", len(out), got, ok)
	}
	// A compressed answer, and one of another type, pass unread: what
	// passed is known, the usage is not (the server estimates it).
	for _, h := range []http.Header{
		{"Content-Type": {"text/event-stream"}, "Content-Encoding": {"gzip"}},
		{"Content-Type": {"text/plain"}},
	} {
		data := []byte("data: {\"usage\":{\"in\":1}}\n\n")
		resp := &http.Response{Header: h, Body: io.NopCloser(bytes.NewReader(data))}
		var u answerUsage
		countUsage(resp, testUsage, func(got answerUsage) { u = got })
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !bytes.Equal(out, data) || u.Got || u.Cut || u.Passed != int64(len(data)) {
			t.Errorf("%v: %q passed, %+v", h, out, u)
		}
	}
}

// FuzzUsageStream: however a stream is cut into reads, it passes through
// unchanged and counts the same as read whole.
func FuzzUsageStream(f *testing.F) {
	for _, s := range streamSeeds {
		f.Add([]byte(s), []byte{1, 7, 200})
	}
	f.Fuzz(func(t *testing.T, body, cuts []byte) {
		sizes := make([]int, len(cuts))
		for i, c := range cuts {
			sizes[i] = int(c)
		}
		out, got, ok := readUsage(t, "text/event-stream", body, sizes)
		if !bytes.Equal(out, body) {
			t.Fatalf("the stream changed on its way")
		}
		_, whole, wok := readUsage(t, "text/event-stream", body, []int{len(body) + 1})
		if got != whole || ok != wok {
			t.Fatalf("cut %v counts %+v %v, whole %+v %v", sizes, got, ok, whole, wok)
		}
	})
}

// TestUsageCutShort: a body closed before its end says so, with the
// bytes that passed; one read to its end does not.
func TestUsageCutShort(t *testing.T) {
	body := []byte("data: {\"text\":\"the whole answer\"}\n\ndata: {\"usage\":{\"in\":100,\"out\":50}}\n\n")
	for _, tt := range []struct {
		read int
		want answerUsage
	}{
		{10, answerUsage{Cut: true, Passed: 10, Events: 1}},
		// The second event came in part: it counts.
		{40, answerUsage{Cut: true, Passed: 40, Events: 2}},
		{len(body), answerUsage{Tokens: audit.Tokens{Input: 100, Output: 50}, Got: true, Passed: int64(len(body)), Events: 2}},
	} {
		resp := &http.Response{Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: io.NopCloser(bytes.NewReader(body))}
		var got answerUsage
		countUsage(resp, testUsage, func(u answerUsage) { got = u })
		buf := make([]byte, tt.read)
		if _, err := io.ReadFull(resp.Body, buf); err != nil {
			t.Fatal(err)
		}
		if tt.read == len(body) {
			resp.Body.Read(make([]byte, 1)) // the end
		}
		resp.Body.Close()
		if got != tt.want {
			t.Errorf("read %d of %d bytes: %+v; want %+v", tt.read, len(body), got, tt.want)
		}
	}
}

func TestCutShort(t *testing.T) {
	for _, tt := range []struct {
		t       audit.Tokens
		request int
		passed  int64
		events  int64
		want    audit.Tokens
	}{
		// A JSON answer cut short: a quarter token per byte.
		{audit.Tokens{}, 4000, 400, 0, audit.Tokens{Input: 1000, Output: 100}},
		// A stream: a token per event, whatever the events' size.
		{audit.Tokens{}, 4000, 40000, 30, audit.Tokens{Input: 1000, Output: 30}},
		// Anthropic's message_start reported the input: kept.
		{audit.Tokens{Input: 7, Output: 1}, 4000, 4000, 12, audit.Tokens{Input: 7, Output: 12}},
		{audit.Tokens{CacheRead: 900}, 4000, 8, 0, audit.Tokens{CacheRead: 900, Output: 2}},
		{audit.Tokens{Input: 10, Output: 500}, 40, 4000, 20, audit.Tokens{Input: 10, Output: 500}},
	} {
		u := answerUsage{Passed: tt.passed, Events: tt.events}
		if got := cutShort(tt.t, tt.request, u); got != tt.want {
			t.Errorf("cutShort(%+v, %d, %+v) = %+v; want %+v", tt.t, tt.request, u, got, tt.want)
		}
	}
}

// TestMeterSinceAndCharge: what one meter counted past a state, charged
// to another that started from that state, makes the two agree; a
// negative count charges nothing.
func TestMeterSinceAndCharge(t *testing.T) {
	wrapper := NewMeter(MeterState{Budget: 100})
	wrapper.add("anthropic", audit.Tokens{Input: 10, Output: 5})
	handed := wrapper.State()
	keeper := NewMeter(handed)
	wrapper.forwarded("anthropic")
	wrapper.add("anthropic", audit.Tokens{Input: 30, Output: 20})
	wrapper.add("openai", audit.Tokens{Output: 7})
	keeper.Charge(wrapper.Since(handed))
	if got, want := keeper.State(), wrapper.State(); !reflect.DeepEqual(got, want) {
		t.Errorf("keeper %+v, wrapper %+v", got, want)
	}
	if _, spent := keeper.Budget(); spent != 72 {
		t.Errorf("spent %d, want 72", spent)
	}
	keeper.Charge(MeterState{Backends: map[string]Spend{"anthropic": {Calls: -5, Tokens: audit.Tokens{Input: -50}}}})
	if _, spent := keeper.Budget(); spent != 72 {
		t.Errorf("a negative charge changed the spend to %d", spent)
	}
}

// TestOutputCap: the first cap field present counts, read as a positive
// number and bounded; anything else holds nothing.
func TestOutputCap(t *testing.T) {
	names := []string{"max_completion_tokens", "max_tokens"}
	for _, tt := range []struct {
		body string
		want int64
	}{
		{`{}`, 0},
		{`{"max_tokens":4096}`, 4096},
		{`{"max_completion_tokens":10,"max_tokens":4096}`, 10},
		{`{"max_tokens":1e3}`, 1000},
		{`{"max_tokens":1e400}`, maxOutputCap},
		{`{"max_tokens":-5}`, 0},
		{`{"max_tokens":0}`, 0},
		{`{"max_tokens":"4096"}`, 0},
		{`{"max_tokens":null}`, 0},
	} {
		obj, err := ParseObject([]byte(tt.body))
		if err != nil {
			t.Fatal(err)
		}
		if got := outputCap(obj, names); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.body, got, tt.want)
		}
	}
}
