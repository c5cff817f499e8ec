package preflight

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/aisan-dev/aisan/egress"
	"github.com/aisan-dev/aisan/egress/anthropic"
	"github.com/aisan-dev/aisan/egress/cred"
	"github.com/aisan-dev/aisan/egress/openai"
	"github.com/aisan-dev/aisan/jail/agent"
	"golang.org/x/sys/unix"
)

// StrictChecks are the checks of `aisan preflight --strict`: for each
// model backend the user has a credential for, that the credential is
// there, parses and has not expired (naming the file, never its content),
// that the refresher's lock could be taken (read, never made: a check that
// created it would change the user's login directory), and that the
// upstream answers.
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
	lock := filepath.Join(claudeDir(e), ".oauth_refresh.lock")
	if f, bad := lockFinding(e, lock, lockDirShape); bad {
		return f
	}
	if !exp.IsZero() && time.Now().After(exp) {
		return Finding{Status: Warn, Detail: fmt.Sprintf("%s: the access token expired at %s; the egress proxy refreshes it at the first request", e.tilde(login.Path()), exp.Local().Format(time.DateTime)), Fix: "claude   # any use on the host refreshes it too"}
	}
	return Finding{Status: OK, Detail: fmt.Sprintf("%s parses; the token is valid until %s; a refresh can take its lock", e.tilde(login.Path()), exp.Local().Format(time.DateTime))}
}

func checkCodexLogin(ctx context.Context, e *Env) Finding {
	login := &cred.CodexChatGPT{Home: codexHome(e)}
	if !codexLoginPresent(e) {
		return Finding{Status: OK, Detail: "not set up (no " + e.tilde(login.Path()) + "): aisan codex --strict needs `codex login` on the host, or an OpenAI API key"}
	}
	if err := login.Check(); err != nil {
		return Finding{Status: Fail, Detail: e.tilde(login.Path()) + " cannot be used: it does not parse, or holds no ChatGPT login", Fix: "codex login   # on the host"}
	}
	if f, bad := lockFinding(e, filepath.Join(codexHome(e), ".aisan-refresh.lock"), lockFileShape); bad {
		return f
	}
	return Finding{Status: OK, Detail: e.tilde(login.Path()) + " parses; a refresh can take its lock"}
}

// lockShape is the form a refresher's lock takes: the Claude CLI's is a
// directory (proper-lockfile), aisan's own for Codex a file it flocks.
type lockShape bool

const (
	lockDirShape  lockShape = true
	lockFileShape lockShape = false
)

// lockFinding reads, and never changes, a refresher's lock and its
// directory: a lock in a shape its takers would not take, or a directory
// nobody can make one in, is a finding (bad true) with the fix. Creating
// the lock to test it would be a change to the user's login directory,
// and a file where the CLI expects a directory breaks its every refresh.
func lockFinding(e *Env, path string, shape lockShape) (Finding, bool) {
	dir := filepath.Dir(path)
	if err := unix.Access(dir, unix.W_OK|unix.X_OK); err != nil {
		return Finding{Status: Fail, Detail: fmt.Sprintf("no refresh lock can be taken in %s: %v", e.tilde(dir), err), Fix: "check the owner and permissions of " + e.tilde(dir)}, true
	}
	var st unix.Stat_t
	err := unix.Lstat(path, &st)
	if errors.Is(err, unix.ENOENT) {
		return Finding{}, false
	}
	if err != nil {
		return Finding{Status: Fail, Detail: fmt.Sprintf("the refresh lock %s cannot be read: %v", e.tilde(path), err), Fix: "check the permissions of " + e.tilde(dir)}, true
	}
	isDir := st.Mode&unix.S_IFMT == unix.S_IFDIR
	isFile := st.Mode&unix.S_IFMT == unix.S_IFREG
	switch {
	case shape == lockDirShape && !isDir:
		return Finding{Status: Fail,
			Detail: e.tilde(path) + " is not a directory: the Claude CLI takes its refresh lock as a directory and cannot refresh while this is there (aisan's proxy removes it once it is a minute old)",
			Fix:    "rm " + e.tilde(path) + "   # it holds nothing; an older aisan preflight created it"}, true
	case shape == lockFileShape && !isFile:
		return Finding{Status: Fail,
			Detail: e.tilde(path) + " is not a regular file, so aisan cannot lock the Codex login's refresh",
			Fix:    "rm -r " + e.tilde(path) + "   # aisan's own lock, made again at the next refresh"}, true
	}
	return Finding{}, false
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
