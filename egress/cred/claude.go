package cred

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
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
	// LockWait bounds the wait for the lock (see lockContext).
	LockWait time.Duration

	file loginFile[claudeLogin]
}

type claudeLogin struct {
	access, refresh  Secret
	expires          time.Time
	subscriptionType string
	pretty           bool
}

func (l claudeLogin) expiry() time.Time { return l.expires }

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
	return c.file.load(c.Path(), "Claude login", c.parse)
}

func (c *ClaudeOAuth) parse(b []byte) (claudeLogin, *object, error) {
	path := c.Path()
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
		subscriptionType: v.SubscriptionType,
		pretty:           strings.Contains(string(b), "\n "),
	}
	if v.ExpiresAt != 0 {
		l.expires = time.UnixMilli(v.ExpiresAt)
	}
	return l, top, nil
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
	l, err := c.file.get(c.now, c.read, func(needs func(claudeLogin) bool) (claudeLogin, error) { return c.refreshLocked(ctx, needs) })
	return l.access, err
}

// Refresh replaces stale, an access token the upstream refused, with a
// new one (see Refresher).
func (c *ClaudeOAuth) Refresh(ctx context.Context, stale Secret) (Secret, error) {
	l, err := c.file.force(c.now, c.read,
		func(needs func(claudeLogin) bool) (claudeLogin, error) { return c.refreshLocked(ctx, needs) },
		func(l claudeLogin) bool { return l.access.Reveal() == stale.Reveal() })
	return l.access, err
}

// refreshLocked refreshes the login under the CLI's locks if it still
// needs it once they are held.
func (c *ClaudeOAuth) refreshLocked(ctx context.Context, needs func(claudeLogin) bool) (claudeLogin, error) {
	lctx, cancel := lockContext(ctx, c.LockWait)
	defer cancel()
	release, err := lockDir(lctx, filepath.Join(c.Dir, ".oauth_refresh.lock"), claudeLockStale, claudeLockUpdate)
	if err != nil {
		return claudeLogin{}, fmt.Errorf("refreshing the Claude login: %w", err)
	}
	defer release()
	if legacy, err := filepath.EvalSymlinks(c.Dir); err == nil {
		if rel, err := lockDir(lctx, legacy+".lock", claudeLockStale, claudeLockUpdate); err == nil {
			defer rel()
		} else if lctx.Err() != nil {
			return claudeLogin{}, fmt.Errorf("refreshing the Claude login: %w", err)
		}
	}
	// Once the lock is ours the refresh runs to the end even if the box's
	// request goes away: a refresh token spent on a request we then
	// abandoned would be lost, and with it the user's login.
	ctx = context.WithoutCancel(ctx)
	l, top, done, err := c.file.underLock(c.Path(), "Claude login", c.parse, needs)
	if err != nil || done {
		return l, err
	}
	if l.refresh.Empty() {
		return claudeLogin{}, fmt.Errorf("the Claude login %s has expired and holds no refresh token; log in again with `claude` on the host", c.Path())
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
		return claudeLogin{}, &RefreshError{Msg: "the Claude login expired and could not be refreshed (the reason is in the host's egress log); run `claude` on the host to log in again", Cause: err}
	}
	if resp.AccessToken == "" || !validToken(resp.AccessToken) || resp.ExpiresIn == nil {
		return claudeLogin{}, errors.New("the Claude login expired and the token endpoint's answer had no usable access_token or expires_in; run `claude` on the host to log in again")
	}
	o, err := top.sub("claudeAiOauth")
	if err != nil {
		return claudeLogin{}, err
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
		return claudeLogin{}, err
	}
	if err := writeAtomic(c.Path(), data); err != nil {
		// The new refresh token is only in memory now; the old one in the
		// file is dead. Say so plainly.
		return claudeLogin{}, fmt.Errorf("the Claude login was refreshed but could not be saved (%v); run `claude` on the host to log in again", err)
	}
	return claudeLogin{access: NewSecret(resp.AccessToken)}, nil
}

// Expiry is when the login's access token expires, read from the file
// now (for preflight); the proxy refreshes it before then.
func (c *ClaudeOAuth) Expiry() (time.Time, error) {
	l, _, err := c.read()
	return l.expiry(), err
}
