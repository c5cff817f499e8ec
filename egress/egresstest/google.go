package egresstest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Google is a stand-in for Google's OAuth token endpoint (POST /token:
// an authorized user's refresh, or a service account's signed JWT) and
// the IAM Credentials API (POST /v1/projects/-/serviceAccounts/SA:
// generateAccessToken, which takes the caller's token as its bearer). It
// mints "user-token-N", "sa-token-N" and "impersonated-token-N", each
// living Lifetime (default an hour), and records what it was asked.
type Google struct {
	// Lifetime of the tokens it mints.
	Lifetime time.Duration

	mu     sync.Mutex
	n      int
	calls  []string
	minted map[string]string // token → what it was minted for
}

// AuthorizedUser is an ADC file for a user login whose tokens come from
// this stand-in.
func (g *Google) AuthorizedUser(quotaProject string) []byte {
	b, _ := json.Marshal(map[string]string{"type": "authorized_user", "client_id": "cid.apps.googleusercontent.com",
		"client_secret": "client-secret", "refresh_token": "user-refresh-token", "quota_project_id": quotaProject})
	return b
}

// ServiceAccount is an ADC file for a service account key (a fresh RSA
// key the stand-in does not check) whose token endpoint is tokenURL.
func (g *Google) ServiceAccount(email, tokenURL string) []byte {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	b, _ := json.Marshal(map[string]string{"type": "service_account", "project_id": "sa-project", "private_key_id": "k1",
		"private_key": string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})), "client_email": email,
		"client_id": "1", "token_uri": tokenURL})
	return b
}

// Calls are the requests so far, as "METHOD PATH what".
func (g *Google) Calls() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.calls...)
}

// MintedFor says what a token was minted for ("user", "service account
// EMAIL", "impersonating EMAIL"), "" when the stand-in never minted it.
func (g *Google) MintedFor(tok string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.minted[tok]
}

func (g *Google) mint(prefix, what string) (string, time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.n++
	if g.minted == nil {
		g.minted = map[string]string{}
	}
	tok := fmt.Sprintf("%s-%d", prefix, g.n)
	g.minted[tok] = what
	life := g.Lifetime
	if life == 0 {
		life = time.Hour
	}
	return tok, time.Now().Add(life)
}

func (g *Google) note(s string) {
	g.mu.Lock()
	g.calls = append(g.calls, s)
	g.mu.Unlock()
}

func (g *Google) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/token":
		r.ParseForm()
		switch r.PostForm.Get("grant_type") {
		case "refresh_token":
			if r.PostForm.Get("refresh_token") != "user-refresh-token" || r.PostForm.Get("client_secret") != "client-secret" {
				w.WriteHeader(400)
				fmt.Fprint(w, `{"error":"invalid_grant"}`)
				return
			}
			g.note("POST /token user")
			tok, exp := g.mint("user-token", "user")
			json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": int(time.Until(exp).Seconds())})
		case "urn:ietf:params:oauth:grant-type:jwt-bearer":
			email := jwtIssuer(r.PostForm.Get("assertion"))
			if email == "" {
				w.WriteHeader(400)
				fmt.Fprint(w, `{"error":"invalid_grant"}`)
				return
			}
			g.note("POST /token service account " + email)
			tok, exp := g.mint("sa-token", "service account "+email)
			json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": int(time.Until(exp).Seconds())})
		default:
			w.WriteHeader(400)
			fmt.Fprint(w, `{"error":"unsupported_grant_type"}`)
		}
	case r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/v1/projects/-/serviceAccounts/") && strings.HasSuffix(r.URL.Path, ":generateAccessToken"):
		sa := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/v1/projects/-/serviceAccounts/"), ":generateAccessToken")
		caller := g.MintedFor(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
		if caller == "" {
			w.WriteHeader(401)
			fmt.Fprint(w, `{"error":{"code":401,"message":"unauthenticated","status":"UNAUTHENTICATED"}}`)
			return
		}
		g.note("POST generateAccessToken " + sa + " by " + caller)
		tok, exp := g.mint("impersonated-token", "impersonating "+sa)
		json.NewEncoder(w).Encode(map[string]any{"accessToken": tok, "expireTime": exp.UTC().Format(time.RFC3339)})
	default:
		http.NotFound(w, r)
	}
}

// jwtIssuer is the iss claim of a JWT, unverified ("" if none).
func jwtIssuer(tok string) string {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return ""
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return ""
	}
	var c struct {
		Iss   string `json:"iss"`
		Scope string `json:"scope"`
	}
	if json.Unmarshal(b, &c) != nil || c.Scope == "" {
		return ""
	}
	return c.Iss
}
