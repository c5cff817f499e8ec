package preflight

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/aisan-dev/aisan/jail/agent"

	"github.com/aisan-dev/aisan/egress"
	"github.com/aisan-dev/aisan/egress/anthropic"
	"github.com/aisan-dev/aisan/egress/cred"
	"github.com/aisan-dev/aisan/egress/openai"
	"golang.org/x/sys/unix"
)

// StrictChecks are the checks of `aisan preflight --strict`: for each
// model backend the user has a credential for, that the credential is
// there, parses and has not expired (naming the file, never its content),
// that the refresher's lock can be taken, and that the upstream answers.
// A backend the user has no credential for is reported as not set up.
func StrictChecks() []Check {
	return []Check{
		{"anthropic login", checkClaudeLogin},
		{"anthropic upstream", upstreamCheck("AISAN_ANTHROPIC_UPSTREAM", anthropic.DefaultUpstream, claudeLoginPresent)},
		{"codex login", checkCodexLogin},
		{"codex upstream", upstreamCheck("AISAN_CODEX_UPSTREAM", openai.DefaultCodexUpstream, codexLoginPresent)},
	}
}

func claudeDir(e *Env) string { return agent.Claude.Dir(e.Home, os.Getenv) }

func codexHome(e *Env) string { return agent.Codex.Dir(e.Home, os.Getenv) }

func claudeLoginPresent(e *Env) bool {
	_, err := os.Lstat(filepath.Join(claudeDir(e), ".credentials.json"))
	return err == nil
}

func codexLoginPresent(e *Env) bool {
	_, err := os.Lstat(filepath.Join(codexHome(e), "auth.json"))
	return err == nil
}

func checkClaudeLogin(ctx context.Context, e *Env) Finding {
	login := &cred.ClaudeOAuth{Dir: claudeDir(e)}
	if !claudeLoginPresent(e) {
		return Finding{Status: OK, Detail: "not set up (no " + e.tilde(login.Path()) + "): aisan claude --strict needs `claude` logged in on the host, or --api-key"}
	}
	exp, err := login.Expiry()
	if err != nil {
		// The parser's message can quote the file; say only what is wrong.
		return Finding{Status: Fail, Detail: e.tilde(login.Path()) + " cannot be used: it does not parse, or holds no usable token", Fix: "claude   # log in again on the host"}
	}
	if lerr := lockUsable(filepath.Join(claudeDir(e), ".oauth_refresh.lock")); lerr != nil {
		return Finding{Status: Fail, Detail: "the refresh lock cannot be taken: " + lerr.Error(), Fix: "check the permissions of " + e.tilde(claudeDir(e))}
	}
	if !exp.IsZero() && time.Now().After(exp) {
		return Finding{Status: Warn, Detail: fmt.Sprintf("%s: the access token expired at %s; the egress proxy refreshes it at the first request", e.tilde(login.Path()), exp.Local().Format(time.DateTime)), Fix: "claude   # any use on the host refreshes it too"}
	}
	return Finding{Status: OK, Detail: fmt.Sprintf("%s parses; the token is valid until %s; the refresh lock is usable", e.tilde(login.Path()), exp.Local().Format(time.DateTime))}
}

func checkCodexLogin(ctx context.Context, e *Env) Finding {
	login := &cred.CodexChatGPT{Home: codexHome(e)}
	if !codexLoginPresent(e) {
		return Finding{Status: OK, Detail: "not set up (no " + e.tilde(login.Path()) + "): aisan codex --strict needs `codex login` on the host, or an OpenAI API key"}
	}
	if err := login.Check(); err != nil {
		return Finding{Status: Fail, Detail: e.tilde(login.Path()) + " cannot be used: it does not parse, or holds no ChatGPT login", Fix: "codex login   # on the host"}
	}
	if err := lockUsable(filepath.Join(codexHome(e), ".aisan-refresh.lock")); err != nil {
		return Finding{Status: Fail, Detail: "the refresh lock cannot be taken: " + err.Error(), Fix: "check the permissions of " + e.tilde(codexHome(e))}
	}
	return Finding{Status: OK, Detail: e.tilde(login.Path()) + " parses; the refresh lock is usable"}
}

// lockUsable takes and releases an exclusive lock on path, creating it as
// the CLIs do.
func lockUsable(path string) error {
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	err = unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return nil // held right now by a refresh: usable
	}
	if err != nil {
		return err
	}
	return unix.Flock(fd, unix.LOCK_UN)
}

// upstreamCheck makes one request to a backend's upstream (its override
// variable or the default) when the user has the backend: any HTTP answer
// means it can be reached through the system's trust store.
func upstreamCheck(envVar, def string, present func(*Env) bool) func(context.Context, *Env) Finding {
	return func(ctx context.Context, e *Env) Finding {
		if !present(e) {
			return Finding{Status: OK, Detail: "not checked: the backend is not set up"}
		}
		raw := def
		if v := os.Getenv(envVar); v != "" {
			raw = v
		}
		u, err := egress.ParseUpstream(envVar, raw)
		if err != nil {
			return Finding{Status: Fail, Detail: err.Error(), Fix: "set " + envVar + " to an https URL, or unset it"}
		}
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
		if err != nil {
			return Finding{Status: Fail, Detail: err.Error(), Fix: "check " + envVar}
		}
		resp, err := (&http.Client{Transport: egress.NewTransport()}).Do(req)
		if err != nil {
			var ne interface{ Timeout() bool }
			if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, os.ErrDeadlineExceeded) {
				return Finding{Status: Fail, Detail: u.Host + " did not answer within 5s", Fix: "check this host's network and proxy settings"}
			}
			return Finding{Status: Fail, Detail: "cannot reach " + u.Host + ": " + err.Error(), Fix: "check this host's network, proxy and CA settings (SSL_CERT_FILE)"}
		}
		resp.Body.Close()
		return Finding{Status: OK, Detail: fmt.Sprintf("%s answers (HTTP %d)", u.Host, resp.StatusCode)}
	}
}
