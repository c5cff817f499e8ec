package egress

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"golang.org/x/time/rate"
)

// The default request rate of a box: 2 requests a second, in bursts of
// up to 60. A model call takes seconds, so even ten sub-agents calling
// at once average well under 2 a second; the burst covers the spikes (a
// Claude /context sends about 25 count_tokens calls at once). What it
// stops is a loop that calls without pause. Clients retry a refusal
// after its retry-after, so a limit met is a pause, not an error.
const (
	DefaultRate  rate.Limit = 2
	DefaultBurst int        = 60
)

// MaxRate and MaxBurst bound what --rate accepts: beyond them a limit
// limits nothing.
const (
	MaxRate  = 1000
	MaxBurst = 10000
)

// ErrRate is wrapped by every error [ParseRate] returns.
var ErrRate = errors.New("bad rate")

// ParseRate reads a request rate as the user writes it: "N/s" or
// "N/s,BURST", N a positive decimal (0.5/s is one request every two
// seconds), BURST a whole number of requests. burst is 0 when not given.
func ParseRate(s string) (r rate.Limit, burst int, err error) {
	fail := func(why string) (rate.Limit, int, error) {
		return 0, 0, fmt.Errorf("%w %q: %s; write N/s or N/s,BURST (for example 2/s,60)", ErrRate, s, why)
	}
	head, b, hasBurst := strings.Cut(strings.TrimSpace(s), ",")
	num, ok := strings.CutSuffix(strings.TrimSpace(head), "/s")
	if !ok {
		return fail("the rate is per second and ends in /s")
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	switch {
	case err != nil || math.IsNaN(f) || math.IsInf(f, 0):
		return fail("the rate is not a number")
	case f <= 0:
		return fail("the rate must be more than 0")
	case f > MaxRate:
		return fail(fmt.Sprintf("the rate may be %d/s at most", MaxRate))
	}
	if hasBurst {
		b = strings.TrimSpace(b)
		n, err := strconv.Atoi(b)
		switch {
		case err != nil || strings.Trim(b, "0123456789") != "":
			return fail("the burst is not a whole number")
		case n < 1 || n > MaxBurst:
			return fail(fmt.Sprintf("the burst must be 1 to %d requests", MaxBurst))
		}
		burst = n
	}
	return rate.Limit(f), burst, nil
}

// FormatRate writes a rate as [ParseRate] reads it.
func FormatRate(r rate.Limit, burst int) string {
	return strconv.FormatFloat(float64(r), 'f', -1, 64) + "/s," + strconv.Itoa(burst)
}

// ErrTokens is wrapped by every error [ParseTokens] returns.
var ErrTokens = errors.New("bad token count")

// maxTokens bounds a budget: far beyond any account, well within int64.
const maxTokens = 1e15

// ParseTokens reads a token count as the user writes it: digits, with
// an optional k (thousands) or M (millions) after them, and a leading +
// when plus is allowed (it is then reported: a budget raised, not set).
// 0 means no budget.
func ParseTokens(s string, plusOK bool) (n int64, plus bool, err error) {
	fail := func(why string) (int64, bool, error) {
		return 0, false, fmt.Errorf("%w %q: %s", ErrTokens, s, why)
	}
	t := strings.TrimSpace(s)
	if rest, ok := strings.CutPrefix(t, "+"); ok {
		if !plusOK {
			return fail("a + is for raising a running box's budget ('aisan allow SLOT --budget +N')")
		}
		t, plus = rest, true
	}
	mult := int64(1)
	switch {
	case strings.HasSuffix(t, "k"), strings.HasSuffix(t, "K"):
		mult, t = 1000, t[:len(t)-1]
	case strings.HasSuffix(t, "M"):
		mult, t = 1000000, t[:len(t)-1]
	}
	if t == "" || strings.Trim(t, "0123456789") != "" || len(t) > 16 {
		return fail("write a whole number of tokens, with k or M for thousands or millions (500000, 500k, 2M)")
	}
	v, _ := strconv.ParseInt(t, 10, 64)
	if v > maxTokens/mult {
		return fail("more tokens than any budget needs")
	}
	n = v * mult
	if plus && n == 0 {
		return fail("+0 raises nothing")
	}
	return n, plus, nil
}
