package cred

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Codex's ChatGPT login, as codex-cli 0.171.0 keeps it in auth.json.
const (
	// CodexTokenURL is where codex refreshes (override: AISAN_CODEX_TOKEN_URL).
	CodexTokenURL = "https://auth.openai.com/oauth/token"
	codexClientID = "app_EMoamEEZ73f0CkXaXp7hrann"
)

// CodexLogin is what a ChatGPT-mode request needs.
type CodexLogin struct {
	Access    Secret
	AccountID string
}

// CodexChatGPT reads <Home>/auth.json in ChatGPT mode, re-reading it on
// change, and refreshes the access token (a JWT; its exp decides) shortly
// before it expires. codex itself takes no lock around its refresh, so
// aisan processes coordinate through <Home>/.aisan-refresh.lock and
// re-read the file under it; a host codex refreshing at the same instant
// is not excluded (see the package rules).
type CodexChatGPT struct {
	Home     string // CODEX_HOME or ~/.codex
	TokenURL string // "" means CodexTokenURL
	HTTP     *http.Client
	Now      func() time.Time
	LockWait time.Duration

	mu     sync.Mutex
	cmu    sync.Mutex
	stamp  fileStamp
	cached codexFile
}

type codexFile struct {
	login   CodexLogin
	refresh Secret
	expires time.Time
	pretty  bool
}

// Path is the auth file.
func (c *CodexChatGPT) Path() string { return filepath.Join(c.Home, "auth.json") }

func (c *CodexChatGPT) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// JWTExpiry reads the exp claim of a JWT without verifying it (the token
// is ours, from our own file; we only need to know when to refresh it).
func JWTExpiry(tok string) (time.Time, error) {
	claims, err := jwtClaims(tok)
	if err != nil {
		return time.Time{}, err
	}
	var v struct {
		Exp *float64 `json:"exp"`
	}
	if err := json.Unmarshal(claims, &v); err != nil || v.Exp == nil {
		return time.Time{}, errors.New("the token has no exp claim")
	}
	return time.Unix(int64(*v.Exp), 0), nil
}

func jwtClaims(tok string) ([]byte, error) {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return nil, errors.New("the token is not a JWT")
	}
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return nil, errors.New("the token's payload is not base64url")
	}
	return b, nil
}

func (c *CodexChatGPT) read() (codexFile, *object, error) {
	path := c.Path()
	st, err := stampOf(path)
	if err != nil {
		return codexFile{}, nil, fmt.Errorf("the Codex login %s: %w (log in with `codex login` on the host)", path, err)
	}
	c.cmu.Lock()
	if st == c.stamp && !c.cached.login.Access.Empty() {
		f := c.cached
		c.cmu.Unlock()
		return f, nil, nil
	}
	c.cmu.Unlock()
	b, err := ReadRegular(path, maxCredFile)
	if err != nil {
		return codexFile{}, nil, fmt.Errorf("the Codex login: %w", err)
	}
	top, err := parseObject(b)
	if err != nil {
		return codexFile{}, nil, fmt.Errorf("the Codex login %s is not valid JSON: %w", path, err)
	}
	var mode string
	_ = top.get("auth_mode", &mode)
	var toks struct {
		IDToken      string `json:"id_token"`
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
		AccountID    string `json:"account_id"`
	}
	if err := top.get("tokens", &toks); err != nil || toks.AccessToken == "" {
		return codexFile{}, nil, fmt.Errorf("the Codex login %s is not a ChatGPT login (auth_mode %q, no tokens); log in with `codex login` on the host, or use the openai backend for an API key", path, mode)
	}
	if mode != "" && mode != "chatgpt" {
		return codexFile{}, nil, fmt.Errorf("the Codex login %s has auth_mode %q, not \"chatgpt\"; use the openai backend for an API key", path, mode)
	}
	if !validToken(toks.AccessToken) {
		return codexFile{}, nil, fmt.Errorf("the Codex login %s has an unusable access_token", path)
	}
	exp, err := JWTExpiry(toks.AccessToken)
	if err != nil {
		return codexFile{}, nil, fmt.Errorf("the Codex login %s: access_token: %w", path, err)
	}
	acct := toks.AccountID
	if acct == "" {
		acct = accountFromIDToken(toks.IDToken)
	}
	if acct == "" || !validToken(acct) {
		return codexFile{}, nil, fmt.Errorf("the Codex login %s names no ChatGPT account; log in again with `codex login` on the host", path)
	}
	f := codexFile{
		login:   CodexLogin{Access: NewSecret(toks.AccessToken), AccountID: acct},
		refresh: NewSecret(toks.RefreshToken),
		expires: exp,
		pretty:  strings.Contains(string(b), "\n "),
	}
	c.cmu.Lock()
	c.stamp, c.cached = st, f
	c.cmu.Unlock()
	return f, top, nil
}

func accountFromIDToken(tok string) string {
	claims, err := jwtClaims(tok)
	if err != nil {
		return ""
	}
	var v struct {
		Auth struct {
			Account string `json:"chatgpt_account_id"`
		} `json:"https://api.openai.com/auth"`
	}
	if json.Unmarshal(claims, &v) != nil {
		return ""
	}
	return v.Auth.Account
}

func (c *CodexChatGPT) fresh(f codexFile) bool { return c.now().Add(RefreshMargin).Before(f.expires) }

// Login returns a valid login, refreshing it first if needed.
func (c *CodexChatGPT) Login(ctx context.Context) (CodexLogin, error) {
	f, _, err := c.read()
	if err != nil {
		return CodexLogin{}, err
	}
	if c.fresh(f) {
		return f.login, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	l, err := c.refreshLocked(ctx)
	if err != nil {
		if f2, _, rerr := c.read(); rerr == nil && c.now().Before(f2.expires) {
			return f2.login, nil
		}
		return CodexLogin{}, err
	}
	return l, nil
}

// Token is Login's access token, so CodexChatGPT is a Source.
func (c *CodexChatGPT) Token(ctx context.Context) (Secret, error) {
	l, err := c.Login(ctx)
	return l.Access, err
}

func (c *CodexChatGPT) refreshLocked(ctx context.Context) (CodexLogin, error) {
	if f, _, err := c.read(); err == nil && c.fresh(f) {
		return f.login, nil
	}
	wait := c.LockWait
	if wait == 0 {
		wait = 90 * time.Second
	}
	lctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	release, err := lockFile(lctx, filepath.Join(c.Home, ".aisan-refresh.lock"))
	if err != nil {
		return CodexLogin{}, fmt.Errorf("refreshing the Codex login: %w", err)
	}
	defer release()
	c.cmu.Lock()
	c.stamp = fileStamp{}
	c.cmu.Unlock()
	f, top, err := c.read()
	if err != nil {
		return CodexLogin{}, err
	}
	if c.fresh(f) {
		return f.login, nil
	}
	if f.refresh.Empty() {
		return CodexLogin{}, fmt.Errorf("the Codex login %s has expired and holds no refresh token; log in again with `codex login` on the host", c.Path())
	}
	url := c.TokenURL
	if url == "" {
		url = CodexTokenURL
	}
	var resp struct {
		IDToken      string `json:"id_token"`
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
	}
	err = postJSON(ctx, c.HTTP, url, map[string]string{
		"client_id":      codexClientID,
		"grant_type":     "refresh_token",
		"refresh_reason": "proactive_expiry",
		"refresh_token":  f.refresh.Reveal(),
	}, &resp)
	if err != nil {
		return CodexLogin{}, fmt.Errorf("the Codex login expired and could not be refreshed (%v); run `codex login` on the host", err)
	}
	if resp.AccessToken == "" || !validToken(resp.AccessToken) {
		return CodexLogin{}, errors.New("the Codex login expired and the token endpoint's answer had no usable access_token; run `codex login` on the host")
	}
	if _, err := JWTExpiry(resp.AccessToken); err != nil {
		return CodexLogin{}, fmt.Errorf("the Codex token endpoint's access_token: %w", err)
	}
	toks, err := top.sub("tokens")
	if err != nil {
		return CodexLogin{}, err
	}
	toks.set("access_token", resp.AccessToken)
	if resp.IDToken != "" {
		toks.set("id_token", resp.IDToken)
	}
	if resp.RefreshToken != "" {
		toks.set("refresh_token", resp.RefreshToken)
	}
	top.set("tokens", toks)
	top.set("last_refresh", c.now().UTC().Format(time.RFC3339Nano))
	data, err := top.encode(f.pretty)
	if err != nil {
		return CodexLogin{}, err
	}
	if err := writeAtomic(c.Path(), data); err != nil {
		return CodexLogin{}, fmt.Errorf("the Codex login was refreshed but could not be saved (%v); run `codex login` on the host", err)
	}
	return CodexLogin{Access: NewSecret(resp.AccessToken), AccountID: f.login.AccountID}, nil
}
