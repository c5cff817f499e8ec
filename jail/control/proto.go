package control

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
)

// Proto names the protocol; every request carries it.
const Proto = "aisan-control/1"

// MaxLine caps a request line, its newline included.
const MaxLine = 4096

// maxAnswer caps an answer line (a status carries the box's state).
const maxAnswer = 1 << 20

// Op is what a request asks.
type Op string

// The operations.
const (
	// OpAllowHost puts Host on the box's host allow-list, for ForMS
	// milliseconds (0: until the box ends).
	OpAllowHost Op = "allow-host"
	// OpDenyHost takes Host off the list and cuts what only it allowed.
	OpDenyHost Op = "deny-host"
	// OpBudget sets the box's token budget to Tokens (0: no cap), or
	// with Add raises it by Tokens.
	OpBudget Op = "budget"
	// OpRate sets the box's request rate to Rate a second, in bursts of
	// Burst (0 keeps the burst it has).
	OpRate Op = "rate"
	// OpStatus asks for the box's state.
	OpStatus Op = "status"
	// OpCharge adds Spent, the box's own shape of what calls used, to
	// its count: what the wrapper answered after it handed the box to
	// its keeper (calls in flight then), so that no call escapes the
	// budget. It only ever adds.
	OpCharge Op = "charge"
)

// Bounds of a request's numbers.
const (
	maxHost   = 300
	maxForMS  = 366 * 24 * 3600 * 1000
	maxTokens = 1e15
	maxBurst  = 1e6
)

// Request is one request line.
type Request struct {
	Proto string `json:"proto"`
	Op    Op     `json:"op"`
	// Host is the pattern of OpAllowHost and OpDenyHost.
	Host string `json:"host,omitempty"`
	// ForMS is how long an OpAllowHost grant lasts, in milliseconds.
	ForMS int64 `json:"for_ms,omitempty"`
	// Tokens and Add are OpBudget's.
	Tokens int64 `json:"tokens,omitempty"`
	Add    bool  `json:"add,omitempty"`
	// Rate and Burst are OpRate's.
	Rate  float64 `json:"rate,omitempty"`
	Burst int     `json:"burst,omitempty"`
	// Spent is OpCharge's: JSON text in the handler's shape.
	Spent string `json:"spent,omitempty"`
}

// Response is one answer line.
type Response struct {
	OK bool `json:"ok"`
	// Text says what was done, for the user.
	Text string `json:"text,omitempty"`
	// Error and Hint say why nothing was done, and what to do.
	Error string `json:"error,omitempty"`
	Hint  string `json:"hint,omitempty"`
	// State is OpStatus's answer, in the handler's shape.
	State json.RawMessage `json:"state,omitempty"`
}

// Refuse is a Response that did nothing, saying why.
func Refuse(err error, hint string) Response {
	return Response{Error: err.Error(), Hint: hint}
}

// ErrRequest is wrapped by every error [ParseRequest] returns.
var ErrRequest = errors.New("bad control request")

// ParseRequest reads one request line (its newline dropped): a JSON
// object of the fields above only, naming Proto and a known operation,
// with the fields that operation takes and no others, each in bounds.
func ParseRequest(line []byte) (Request, error) {
	var r Request
	fail := func(format string, args ...any) (Request, error) {
		return Request{}, fmt.Errorf("%w: %s", ErrRequest, fmt.Sprintf(format, args...))
	}
	if len(line) >= MaxLine {
		return fail("longer than %d bytes", MaxLine-1)
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return fail("%v", err)
	}
	if dec.More() {
		return fail("data after the request")
	}
	if r.Proto != Proto {
		return fail("protocol %q, want %q", r.Proto, Proto)
	}
	// Each operation's own fields; every other must be zero.
	var (
		host   = r.Host != ""
		forMS  = r.ForMS != 0
		tokens = r.Tokens != 0 || r.Add
		rates  = r.Rate != 0 || r.Burst != 0
		spent  = len(r.Spent) > 0
	)
	only := func(want ...bool) bool {
		n := 0
		for _, w := range want {
			if w {
				n++
			}
		}
		return n == btoi(host)+btoi(forMS)+btoi(tokens)+btoi(rates)+btoi(spent)
	}
	switch r.Op {
	case OpAllowHost:
		if !only(host, forMS) {
			return fail("%s takes host and for_ms only", r.Op)
		}
		if r.ForMS < 0 || r.ForMS > maxForMS {
			return fail("for_ms %d is out of bounds", r.ForMS)
		}
	case OpDenyHost:
		if !only(host) {
			return fail("%s takes host only", r.Op)
		}
	case OpBudget:
		if !only(tokens) {
			return fail("%s takes tokens and add only", r.Op)
		}
		if r.Tokens < 0 || r.Tokens > maxTokens || r.Add && r.Tokens == 0 {
			return fail("tokens %d is out of bounds", r.Tokens)
		}
	case OpRate:
		if !only(rates) {
			return fail("%s takes rate and burst only", r.Op)
		}
		if !(r.Rate > 0) || math.IsInf(r.Rate, 0) || r.Burst < 0 || r.Burst > maxBurst {
			return fail("rate %v, burst %d is out of bounds", r.Rate, r.Burst)
		}
	case OpCharge:
		if !spent || !only(spent) {
			return fail("%s takes spent only", r.Op)
		}
	case OpStatus:
		if !only() {
			return fail("%s takes no fields", r.Op)
		}
	default:
		return fail("unknown operation %q", r.Op)
	}
	if r.Op == OpAllowHost || r.Op == OpDenyHost {
		if !host || len(r.Host) > maxHost || strings.ContainsAny(r.Host, " \t\r\n\x00") {
			return fail("%s needs one host pattern", r.Op)
		}
	}
	return r, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// encode writes v as one line.
func encode(v any) []byte {
	b, _ := json.Marshal(v)
	return append(b, '\n')
}
