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

	file loginFile[codexFile]
}

type codexFile struct {
	login   CodexLogin
	refresh Secret
	expires time.Time
	pretty  bool
}

func (f codexFile) expiry() time.Time { return f.expires }

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
	return c.file.load(c.Path(), "Codex login", c.parse)
}

func (c *CodexChatGPT) parse(b []byte) (codexFile, *object, error) {
	path := c.Path()
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

// Check reads the login without refreshing it, so a wrong or missing file
// is reported before a box starts.
func (c *CodexChatGPT) Check() error {
	_, _, err := c.read()
	return err
}

// Login returns a valid login, refreshing it first if needed.
func (c *CodexChatGPT) Login(ctx context.Context) (CodexLogin, error) {
	f, err := c.file.get(c.now, c.read, func(needs func(codexFile) bool) (codexFile, error) {
		return c.refreshLocked(ctx, needs, "proactive_expiry")
	})
	return f.login, err
}

// RefreshLogin replaces a login whose access token (stale) the upstream
// refused with a new one (see Refresher).
func (c *CodexChatGPT) RefreshLogin(ctx context.Context, stale Secret) (CodexLogin, error) {
	f, err := c.file.force(c.now, c.read,
		// codex's own name for a refresh after a 401.
		func(needs func(codexFile) bool) (codexFile, error) {
			return c.refreshLocked(ctx, needs, "unauthorized")
		},
		func(f codexFile) bool { return f.login.Access.Reveal() == stale.Reveal() })
	return f.login, err
}

// Refresh is RefreshLogin's access token, so CodexChatGPT is a Refresher.
func (c *CodexChatGPT) Refresh(ctx context.Context, stale Secret) (Secret, error) {
	l, err := c.RefreshLogin(ctx, stale)
	return l.Access, err
}

// Token is Login's access token, so CodexChatGPT is a Source.
func (c *CodexChatGPT) Token(ctx context.Context) (Secret, error) {
	l, err := c.Login(ctx)
	return l.Access, err
}

func (c *CodexChatGPT) refreshLocked(ctx context.Context, needs func(codexFile) bool, reason string) (codexFile, error) {
	lctx, cancel := lockContext(ctx, c.LockWait)
	defer cancel()
	release, err := lockFile(lctx, filepath.Join(c.Home, ".aisan-refresh.lock"))
	if err != nil {
		return codexFile{}, fmt.Errorf("refreshing the Codex login: %w", err)
	}
	defer release()
	// Once the lock is ours the refresh runs to the end even if the box's
	// request goes away: a refresh token spent on a request we then
	// abandoned would be lost, and with it the user's login.
	ctx = context.WithoutCancel(ctx)
	f, top, done, err := c.file.underLock(c.Path(), "Codex login", c.parse, needs)
	if err != nil || done {
		return f, err
	}
	if f.refresh.Empty() {
		return codexFile{}, fmt.Errorf("the Codex login %s has expired and holds no refresh token; log in again with `codex login` on the host", c.Path())
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
		"refresh_reason": reason,
		"refresh_token":  f.refresh.Reveal(),
	}, &resp)
	if err != nil {
		return codexFile{}, &RefreshError{Msg: "the Codex login expired and could not be refreshed (the reason is in the host's egress log); run `codex login` on the host", Cause: err}
	}
	if resp.AccessToken == "" || !validToken(resp.AccessToken) {
		return codexFile{}, errors.New("the Codex login expired and the token endpoint's answer had no usable access_token; run `codex login` on the host")
	}
	if _, err := JWTExpiry(resp.AccessToken); err != nil {
		return codexFile{}, fmt.Errorf("the Codex token endpoint's access_token: %w", err)
	}
	toks, err := top.sub("tokens")
	if err != nil {
		return codexFile{}, err
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
		return codexFile{}, err
	}
	if err := writeAtomic(c.Path(), data); err != nil {
		return codexFile{}, fmt.Errorf("the Codex login was refreshed but could not be saved (%v); run `codex login` on the host", err)
	}
	return codexFile{login: CodexLogin{Access: NewSecret(resp.AccessToken), AccountID: f.login.AccountID}}, nil
}
