package cred

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Claude's subscription login, as the Claude CLI 2.1.332 keeps it.
const (
	// ClaudeTokenURL is where the Claude CLI refreshes (override:
	// AISAN_ANTHROPIC_TOKEN_URL).
	ClaudeTokenURL = "https://platform.claude.com/v1/oauth/token"
	// claudeClientID and claudeScope are what the CLI sends with a refresh.
	claudeClientID = "9d1c250a-e61b-44d9-88ed-5944d1962f5e"
	claudeScope    = "user:profile user:inference user:sessions:claude_code user:mcp_servers user:file_upload user:plugins"
	// The CLI's lock: proper-lockfile with these settings.
	claudeLockStale  = 60 * time.Second
	claudeLockUpdate = 5 * time.Second
)

// RefreshMargin is how long before its expiry a token is refreshed, so a
// request never leaves with a token that dies on the way.
const RefreshMargin = 5 * time.Minute

// ClaudeOAuth reads the host's Claude subscription login from
// <Dir>/.credentials.json, re-reading it whenever it changes, and
// refreshes it shortly before it expires, under the same locks the Claude
// CLI takes (<Dir>/.oauth_refresh.lock and the legacy <Dir>.lock).
type ClaudeOAuth struct {
	Dir      string // the Claude config dir (CLAUDE_CONFIG_DIR or ~/.claude)
	TokenURL string // "" means ClaudeTokenURL
	HTTP     *http.Client
	Now      func() time.Time
	// LockWait bounds the wait for a lock another process holds; 0 means
	// 90 s (longer than the CLI's stale time, so a dead holder is outlived).
	LockWait time.Duration

	mu     sync.Mutex // one refresh at a time in this process
	cmu    sync.Mutex
	stamp  fileStamp
	cached claudeLogin
}

type claudeLogin struct {
	access, refresh  Secret
	expires          time.Time
	subscriptionType string
	pretty           bool
}

// Path is the credentials file.
func (c *ClaudeOAuth) Path() string { return filepath.Join(c.Dir, ".credentials.json") }

func (c *ClaudeOAuth) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// read returns the login in the file, from cache when the file has not
// changed.
func (c *ClaudeOAuth) read() (claudeLogin, *object, error) {
	path := c.Path()
	st, err := stampOf(path)
	if err != nil {
		return claudeLogin{}, nil, fmt.Errorf("the Claude login %s: %w (log in with `claude` on the host)", path, err)
	}
	c.cmu.Lock()
	if st == c.stamp && !c.cached.access.Empty() {
		l := c.cached
		c.cmu.Unlock()
		return l, nil, nil
	}
	c.cmu.Unlock()
	b, err := ReadRegular(path, maxCredFile)
	if err != nil {
		return claudeLogin{}, nil, fmt.Errorf("the Claude login: %w", err)
	}
	top, err := parseObject(b)
	if err != nil {
		return claudeLogin{}, nil, fmt.Errorf("the Claude login %s is not valid JSON: %w", path, err)
	}
	o, err := top.sub("claudeAiOauth")
	if err != nil {
		return claudeLogin{}, nil, fmt.Errorf("the Claude login %s has no subscription login (%v); log in with `claude` on the host, or use --api-key", path, err)
	}
	var v struct {
		AccessToken      string `json:"accessToken"`
		RefreshToken     string `json:"refreshToken"`
		ExpiresAt        int64  `json:"expiresAt"`
		SubscriptionType string `json:"subscriptionType"`
	}
	raw, _ := o.MarshalJSON()
	if err := json.Unmarshal(raw, &v); err != nil {
		return claudeLogin{}, nil, fmt.Errorf("the Claude login %s: claudeAiOauth: %w", path, err)
	}
	if v.AccessToken == "" || !validToken(v.AccessToken) {
		return claudeLogin{}, nil, fmt.Errorf("the Claude login %s has no usable accessToken; log in with `claude` on the host", path)
	}
	l := claudeLogin{
		access:           NewSecret(v.AccessToken),
		refresh:          NewSecret(v.RefreshToken),
		expires:          time.UnixMilli(v.ExpiresAt),
		subscriptionType: v.SubscriptionType,
		pretty:           strings.Contains(string(b), "\n "),
	}
	if v.ExpiresAt == 0 {
		l.expires = time.Time{}
	}
	c.cmu.Lock()
	c.stamp, c.cached = st, l
	c.cmu.Unlock()
	return l, top, nil
}

func (c *ClaudeOAuth) fresh(l claudeLogin) bool {
	return l.expires.IsZero() || c.now().Add(RefreshMargin).Before(l.expires)
}

// SubscriptionType is the host login's plan ("max", "pro", …), which the
// box's client needs to pick the same default model as the host.
func (c *ClaudeOAuth) SubscriptionType() (string, error) {
	l, _, err := c.read()
	return l.subscriptionType, err
}

// Token returns a valid access token, refreshing it first if it expires
// within RefreshMargin.
func (c *ClaudeOAuth) Token(ctx context.Context) (Secret, error) {
	l, _, err := c.read()
	if err != nil {
		return Secret{}, err
	}
	if c.fresh(l) {
		return l.access, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	tok, err := c.refreshLocked(ctx)
	if err != nil {
		// A token that has not expired yet still works; say nothing and
		// try again on the next request.
		if l2, _, rerr := c.read(); rerr == nil && c.now().Before(l2.expires) {
			return l2.access, nil
		}
		return Secret{}, err
	}
	return tok, nil
}

func (c *ClaudeOAuth) refreshLocked(ctx context.Context) (Secret, error) {
	if l, _, err := c.read(); err == nil && c.fresh(l) {
		return l.access, nil // refreshed by another goroutine meanwhile
	}
	wait := c.LockWait
	if wait == 0 {
		wait = 90 * time.Second
	}
	lctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	release, err := lockDir(lctx, filepath.Join(c.Dir, ".oauth_refresh.lock"), claudeLockStale, claudeLockUpdate)
	if err != nil {
		return Secret{}, fmt.Errorf("refreshing the Claude login: %w", err)
	}
	defer release()
	if legacy, err := filepath.EvalSymlinks(c.Dir); err == nil {
		if rel, err := lockDir(lctx, legacy+".lock", claudeLockStale, claudeLockUpdate); err == nil {
			defer rel()
		} else if lctx.Err() != nil {
			return Secret{}, fmt.Errorf("refreshing the Claude login: %w", err)
		}
	}

	// Under the lock, the file is the truth: whoever held it before us may
	// have refreshed already.
	c.cmu.Lock()
	c.stamp = fileStamp{}
	c.cmu.Unlock()
	l, top, err := c.read()
	if err != nil {
		return Secret{}, err
	}
	if c.fresh(l) {
		return l.access, nil
	}
	if l.refresh.Empty() {
		return Secret{}, fmt.Errorf("the Claude login %s has expired and holds no refresh token; log in again with `claude` on the host", c.Path())
	}
	url := c.TokenURL
	if url == "" {
		url = ClaudeTokenURL
	}
	var resp struct {
		AccessToken  string   `json:"access_token"`
		RefreshToken string   `json:"refresh_token"`
		ExpiresIn    *float64 `json:"expires_in"`
		Scope        *string  `json:"scope"`
	}
	err = postJSON(ctx, c.HTTP, url, map[string]string{
		"grant_type":    "refresh_token",
		"refresh_token": l.refresh.Reveal(),
		"client_id":     claudeClientID,
		"scope":         claudeScope,
	}, &resp)
	if err != nil {
		return Secret{}, fmt.Errorf("the Claude login expired and could not be refreshed (%v); run `claude` on the host to log in again", err)
	}
	if resp.AccessToken == "" || !validToken(resp.AccessToken) || resp.ExpiresIn == nil {
		return Secret{}, errors.New("the Claude login expired and the token endpoint's answer had no usable access_token or expires_in; run `claude` on the host to log in again")
	}
	o, err := top.sub("claudeAiOauth")
	if err != nil {
		return Secret{}, err
	}
	o.set("accessToken", resp.AccessToken)
	if resp.RefreshToken != "" {
		o.set("refreshToken", resp.RefreshToken)
	}
	o.set("expiresAt", c.now().UnixMilli()+int64(*resp.ExpiresIn*1000))
	if resp.Scope != nil {
		o.set("scopes", strings.Fields(*resp.Scope))
	}
	top.set("claudeAiOauth", o)
	data, err := top.encode(l.pretty)
	if err != nil {
		return Secret{}, err
	}
	if err := writeAtomic(c.Path(), data); err != nil {
		// The new refresh token is only in memory now; the old one in the
		// file is dead. Say so plainly.
		return Secret{}, fmt.Errorf("the Claude login was refreshed but could not be saved (%v); run `claude` on the host to log in again", err)
	}
	return NewSecret(resp.AccessToken), nil
}
