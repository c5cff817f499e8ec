package egresstest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// TokenEndpoint is a stand-in OAuth token endpoint whose refresh tokens
// rotate: each works once, as the real ones do. Refresh N answers with
// access token "access-N" (a JWT of that subject when JWT is set) and
// refresh token "rt-N".
type TokenEndpoint struct {
	// Calls counts the requests.
	Calls atomic.Int64
	// Fail refuses every refresh; JWT issues JWT access tokens; OnCall
	// runs before each answer. Set them before the first request.
	Fail   bool
	JWT    bool
	OnCall func()

	mu      sync.Mutex
	current string
	access  string
	gen     int
	bodies  []map[string]any
}

// NewTokenEndpoint is an endpoint whose working refresh token is first.
func NewTokenEndpoint(first string) *TokenEndpoint { return &TokenEndpoint{current: first} }

// ServeHTTP answers one refresh.
func (e *TokenEndpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e.Calls.Add(1)
	if e.OnCall != nil {
		e.OnCall()
	}
	var body map[string]any
	json.NewDecoder(r.Body).Decode(&body)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.bodies = append(e.bodies, body)
	w.Header().Set("Content-Type", "application/json")
	if e.Fail || body["refresh_token"] != e.current {
		w.WriteHeader(400)
		fmt.Fprint(w, `{"error":"invalid_grant","error_description":"refresh token already used"}`)
		return
	}
	e.gen++
	e.current = fmt.Sprintf("rt-%d", e.gen)
	e.access = fmt.Sprintf("access-%d", e.gen)
	if e.JWT {
		e.access = JWT(time.Now().Add(time.Hour), e.access)
	}
	json.NewEncoder(w).Encode(map[string]any{"access_token": e.access, "refresh_token": e.current, "expires_in": 3600,
		"scope": "user:inference user:profile", "id_token": JWT(time.Now().Add(time.Hour), "id")})
}

// Bodies are the request bodies received, in order.
func (e *TokenEndpoint) Bodies() []map[string]any {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]map[string]any(nil), e.bodies...)
}

// Access is the newest access token issued ("" before the first).
func (e *TokenEndpoint) Access() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.access
}

// JWT is an unsigned JWT expiring at exp, with subject sub and the
// ChatGPT account claim Codex logins carry.
func JWT(exp time.Time, sub string) string {
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	return enc(map[string]string{"alg": "none"}) + "." + enc(map[string]any{"exp": exp.Unix(), "sub": sub,
		"https://api.openai.com/auth": map[string]string{"chatgpt_account_id": "acct-1"}}) + ".sig"
}
