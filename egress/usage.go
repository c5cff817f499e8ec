package egress

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"sync"
	"time"

	"github.com/aisan-dev/aisan/egress/audit"
)

// Rules for counting tokens (what a budget is measured in):
//
//   - Only what the upstream reports is counted: the usage object of a
//     JSON answer, or of the events of a stream (an Anthropic
//     message_start and message_delta, an OpenAI Responses
//     response.completed, a Chat Completions chunk that carries usage,
//     which OpenAI sends when the client asked with include_usage). A
//     call whose answer reports nothing counts nothing.
//   - A successful answer cut short (the box hung up before its end,
//     or the upstream broke off) counts what it reported so far, and at
//     least an estimate from what passed ([cutShort]): the usage event
//     comes last, and a client that left before it would otherwise be
//     counted nothing.
//   - So does a successful answer whose usage could not be read (an
//     event or an answer past maxUsageDoc, a compressed answer, one of
//     another type), unless its route uses no tokens (Route.Uncounted),
//     and a call whose client left before the answer began: the
//     upstream may have taken the whole request by then.
//   - The answer reaches the client as it comes: the counter reads the
//     bytes as they pass, keeping only the line (an event's data) or the
//     JSON answer in hand, up to maxUsageDoc; a longer one is skipped.
//   - Counts within one call are running totals: the call used the
//     largest value seen of each.
//   - A compressed answer is not read (the proxy never decodes one):
//     it is estimated.

// UsageFunc reads the tokens a model call used from one JSON document of
// its answer: the whole body of a JSON answer, or the data of one event
// of a stream. ok is false when the document reports no usage. It must be
// pure and must not keep doc.
type UsageFunc func(doc []byte) (t audit.Tokens, ok bool)

// maxUsageDoc caps what is held of one event's data or of a JSON answer
// while its usage is looked for.
const maxUsageDoc = 8 << 20

// usageMarker is in every document that reports usage: the key, quotes
// included, which inside a JSON string would read \"usage\".
var usageMarker = []byte(`"usage"`)

// answerUsage is what countUsage learnt of one answer.
type answerUsage struct {
	Tokens audit.Tokens
	// Got is true when the answer reported usage.
	Got bool
	// Cut is true when the body was closed before its end.
	Cut bool
	// Passed are the bytes of the body that passed, Events the events
	// of a stream among them (its data lines).
	Passed, Events int64
}

// cutShort is what a call whose successful answer was cut short counts:
// what it reported, and at least an estimate of the rest. Input, when
// the answer reported none at all, is a quarter token per byte of the
// request (a byte is at most one token of text in the APIs' tokenizers,
// and JSON adds to it). Output is one token per event of a stream that
// passed (a text delta carries one token or a few; the events' framing,
// and the instructions an OpenAI stream repeats at its start, count for
// nothing), or a quarter token per byte of a JSON answer.
func cutShort(t audit.Tokens, request int, u answerUsage) audit.Tokens {
	if t.Input == 0 && t.CacheRead == 0 && t.CacheCreation == 0 {
		t.Input = requestEstimate(request)
	}
	out := u.Passed / 4
	if u.Events > 0 {
		out = u.Events
	}
	t.Output = max(t.Output, out)
	return t
}

// countUsage wraps resp's body so that the tokens its answer reports are
// read as the body passes, and done is called once with them when the
// body ends or is closed. Answers it cannot read are left as they are.
func countUsage(resp *http.Response, parse UsageFunc, done func(answerUsage)) {
	if parse == nil || resp.Body == nil || resp.Body == http.NoBody {
		return
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	var sse bool
	switch mt {
	case "text/event-stream":
		sse = true
	case "application/json":
	default:
		// Counted as it passes, not read.
		parse = nil
	}
	if ce := resp.Header.Get("Content-Encoding"); ce != "" && ce != "identity" {
		parse = nil
	}
	resp.Body = &usageBody{rc: resp.Body, parse: parse, sse: sse, done: done}
}

// usageBody is an answer's body that reads its usage on the way through.
type usageBody struct {
	rc    io.ReadCloser
	parse UsageFunc
	sse   bool
	// doc is the current line (a stream) or the answer so far (JSON);
	// over is set once it passed maxUsageDoc, and it is then dropped.
	doc    []byte
	over   bool
	t      audit.Tokens
	got    bool
	passed int64
	events int64
	ended  bool // the body was read to its end
	done   func(answerUsage)
	once   sync.Once
}

func (u *usageBody) Read(p []byte) (int, error) {
	n, err := u.rc.Read(p)
	if n > 0 {
		u.passed += int64(n)
		u.scan(p[:n])
	}
	if err == io.EOF {
		u.ended = true
		u.finish()
	}
	return n, err
}

func (u *usageBody) Close() error {
	err := u.rc.Close()
	u.finish()
	return err
}

func (u *usageBody) scan(b []byte) {
	if u.parse == nil {
		return
	}
	if !u.sse {
		u.keep(b)
		return
	}
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			u.keep(b)
			return
		}
		u.keep(b[:i])
		u.line()
		b = b[i+1:]
	}
}

func (u *usageBody) keep(b []byte) {
	if u.over {
		return
	}
	if len(u.doc)+len(b) > maxUsageDoc {
		u.over, u.doc = true, nil
		return
	}
	u.doc = append(u.doc, b...)
}

// line ends a line of a stream: the data of an event that may report
// usage is read.
func (u *usageBody) line() {
	l := bytes.TrimSuffix(u.doc, []byte("\r"))
	if data, ok := bytes.CutPrefix(l, []byte("data:")); ok {
		u.events++
		if !u.over && bytes.Contains(data, usageMarker) {
			u.read(bytes.TrimPrefix(data, []byte(" ")))
		}
	}
	u.doc, u.over = u.doc[:0], false
}

func (u *usageBody) read(doc []byte) {
	if t, ok := u.parse(doc); ok {
		u.t, u.got = u.t.Max(t), true
	}
}

func (u *usageBody) finish() {
	u.once.Do(func() {
		switch {
		case u.parse == nil:
		case u.sse && len(u.doc) > 0:
			u.line() // a last event without its newline
		case !u.sse && !u.over && bytes.Contains(u.doc, usageMarker):
			u.read(u.doc)
		}
		u.doc = nil
		u.done(answerUsage{Tokens: u.t, Got: u.got, Cut: !u.ended, Passed: u.passed, Events: u.events})
	})
}

// Meter is one box's spend: the calls its model backends forwarded and
// the tokens their answers reported, per backend, and its budget. Every
// model server of the box shares it (Options.Meter); the box's budget is
// spent when the tokens of all its backends together reach it.
type Meter struct {
	mu     sync.Mutex
	budget int64
	spent  int64
	// held is what the calls in flight may use (their requests' estimate
	// and the caps on their answers), until their answers are counted:
	// without it every call started while the spend was still under the
	// budget would pass, as many as the rate limit lets through at once.
	held int64
	// changed is closed, and replaced, at every change of the count,
	// the budget or what is held: calls waiting for the budget's room
	// look again then.
	changed  chan struct{}
	backends map[string]Spend
	onChange func()
}

// Spend is what one backend's calls used.
type Spend struct {
	// Calls are the requests forwarded to the upstream (each read the
	// host's credential).
	Calls int64 `json:"calls"`
	// Counted are the calls whose answer reported usage.
	Counted int64        `json:"counted"`
	Tokens  audit.Tokens `json:"tokens"`
}

// MeterState is a meter as data: for a keeper that goes on counting, and
// for the slot's state file.
type MeterState struct {
	// Budget is the tokens the box may use, 0 for no cap.
	Budget   int64            `json:"budget,omitempty"`
	Backends map[string]Spend `json:"backends,omitempty"`
}

// NewMeter is a meter that starts from st.
func NewMeter(st MeterState) *Meter {
	m := &Meter{budget: st.Budget, backends: map[string]Spend{}, changed: make(chan struct{})}
	for name, s := range st.Backends {
		m.backends[name] = s
		m.spent += s.Tokens.Total()
	}
	return m
}

// OnChange sets f to be called (outside the meter's lock) after every
// change.
func (m *Meter) OnChange(f func()) {
	m.mu.Lock()
	m.onChange = f
	m.mu.Unlock()
}

func (m *Meter) update(f func()) {
	m.mu.Lock()
	f()
	m.wake()
	notify := m.onChange
	m.mu.Unlock()
	if notify != nil {
		notify()
	}
}

// forwarded counts a call of backend's that reached the upstream.
func (m *Meter) forwarded(backend string) {
	m.update(func() {
		s := m.backends[backend]
		s.Calls++
		m.backends[backend] = s
	})
}

// add counts the tokens a call of backend's reported.
func (m *Meter) add(backend string, t audit.Tokens) {
	m.update(func() {
		s := m.backends[backend]
		s.Counted++
		s.Tokens = s.Tokens.Add(t)
		m.backends[backend] = s
		m.spent += t.Total()
	})
}

// Charge adds what the backends of st used (its budget is not read) to
// the spend: what another meter counted of this box's calls (the
// wrapper's, of the calls it answered after handing the box to a
// keeper). Negative counts are taken as none.
func (m *Meter) Charge(st MeterState) {
	m.update(func() {
		for name, sp := range st.Backends {
			t := sp.Tokens.Max(audit.Tokens{}) // no count below zero
			s := m.backends[name]
			s.Calls += max(sp.Calls, 0)
			s.Counted += max(sp.Counted, 0)
			s.Tokens = s.Tokens.Add(t)
			m.backends[name] = s
			m.spent += t.Total()
		}
	})
}

// Since is what m counted since it was at then: per backend, the calls
// and tokens added (a state of the same meter, or of the one it started
// from).
func (m *Meter) Since(then MeterState) MeterState {
	now := m.State()
	out := MeterState{Backends: map[string]Spend{}}
	for name, sp := range now.Backends {
		was := then.Backends[name]
		d := Spend{Calls: sp.Calls - was.Calls, Counted: sp.Counted - was.Counted, Tokens: sp.Tokens.Sub(was.Tokens)}
		if d.Calls > 0 || d.Counted > 0 || d.Tokens.Total() > 0 {
			out.Backends[name] = d
		}
	}
	return out
}

// SetBudget makes n the budget (0: no cap).
func (m *Meter) SetBudget(n int64) { m.update(func() { m.budget = n }) }

// Budget and Spent are the budget (0: none) and the tokens counted.
func (m *Meter) Budget() (budget, spent int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.budget, m.spent
}

// State is the meter as data.
func (m *Meter) State() MeterState {
	m.mu.Lock()
	defer m.mu.Unlock()
	st := MeterState{Budget: m.budget}
	if len(m.backends) > 0 {
		st.Backends = make(map[string]Spend, len(m.backends))
		for k, v := range m.backends {
			st.Backends[k] = v
		}
	}
	return st
}

// wake tells the calls waiting for room in the budget to look again.
// The caller holds mu.
func (m *Meter) wake() {
	close(m.changed)
	m.changed = make(chan struct{})
}

// spentOut reports whether a budget is set and the tokens counted reach
// it.
func (m *Meter) spentOut() (budget, spent int64, out bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.budget, m.spent, m.budget > 0 && m.spent >= m.budget
}

// maxHoldWait bounds how long a call waits for room in the budget.
const maxHoldWait = 10 * time.Minute

// hold admits a call expected to use at least est tokens, and holds est
// of the budget for it until release is called (once its answer was
// counted). A call always holds at least one token, so that calls too
// small to estimate cannot all start at once.
//
// When the tokens counted reach the budget, the call is refused (ok
// false). When only what the calls in flight hold does, it waits, until
// they end and what they used is counted (or the budget is raised),
// ctx is done or maxHoldWait passed: calls that run at once cannot pass
// the budget together, and the one that would have waits for room
// rather than failing while the budget is not spent.
func (m *Meter) hold(ctx context.Context, est int64) (release func(), budget, spent, held int64, ok bool) {
	est = max(est, 1)
	timeout := time.NewTimer(maxHoldWait)
	defer timeout.Stop()
	for {
		m.mu.Lock()
		budget, spent, held = m.budget, m.spent, m.held
		if budget > 0 && spent >= budget {
			m.mu.Unlock()
			return nil, budget, spent, held, false
		}
		if budget == 0 || spent+held < budget {
			m.held += est
			m.mu.Unlock()
			var once sync.Once
			return func() {
				once.Do(func() {
					m.mu.Lock()
					m.held -= est
					m.wake()
					m.mu.Unlock()
				})
			}, budget, spent, held, true
		}
		changed := m.changed
		m.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, budget, spent, held, false
		case <-timeout.C:
			return nil, budget, spent, held, false
		}
	}
}

// requestEstimate is the least a model call whose request is n bytes
// uses: a quarter token per byte.
func requestEstimate(n int) int64 { return int64(n) / 4 }

// maxOutputCap bounds what one call's cap may hold: a larger value holds
// this much, so that no literal can overflow the sum.
const maxOutputCap = 1 << 40

// outputCap is the most tokens the answer to body may have, as the first
// of the fields names present says (a positive integer); 0 when none
// does. The policies have checked it is a number, kept as its literal.
func outputCap(body map[string]any, names []string) int64 {
	for _, name := range names {
		v, ok := body[name]
		if !ok {
			continue
		}
		n, ok := v.(json.Number)
		if !ok {
			return 0
		}
		// Out of range, ParseFloat gives ±Inf with its error: a cap
		// too large to read holds the most.
		f, _ := n.Float64()
		if !(f > 0) {
			return 0
		}
		return int64(min(f, maxOutputCap))
	}
	return 0
}
