package cred

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/aisan-dev/aisan/jail/shared/atomicfile"
	"github.com/aisan-dev/aisan/jail/shared/regfile"
)

// Rules for refreshing a host login (Claude's subscription, Codex's
// ChatGPT login). Refresh tokens rotate: two refreshes racing on one
// expiry leave one side with a dead token, which logs the user out on
// every machine. So:
//   - one refresh at a time per process (a mutex), and across processes a
//     lock file the host CLI itself honours where it has one;
//   - the file is re-read after the lock is taken, and a token someone
//     else refreshed meanwhile is used, not refreshed again;
//   - the result is written back atomically (temporary file in the same
//     directory, 0600, renamed over), keeping every field and the order of
//     the client's own format, so the host CLI keeps working;
//   - a failed refresh leaves the file untouched and becomes an error that
//     says what to do.

// maxCredFile caps a credential file; the real ones are a few KB.
const maxCredFile = 1 << 20

// fileStamp identifies one version of a file, to re-read it on change.
type fileStamp struct {
	dev, ino uint64
	size     int64
	mtime    int64
}

func stampOf(path string) (fileStamp, error) {
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		return fileStamp{}, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	return fileStamp{dev: uint64(st.Dev), ino: st.Ino, size: st.Size, mtime: st.Mtim.Nano()}, nil
}

// object is a JSON object that keeps its key order and every value it
// does not touch, so a write-back looks like the client's own.
type object struct {
	keys []string
	vals map[string]json.RawMessage
}

func parseObject(b []byte) (*object, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := t.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	o := &object{vals: map[string]json.RawMessage{}}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if _, dup := o.vals[k]; dup {
			return nil, fmt.Errorf("duplicate key %q", k)
		}
		o.keys = append(o.keys, k)
		o.vals[k] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON object")
	}
	return o, nil
}

func (o *object) get(k string, v any) error {
	raw, ok := o.vals[k]
	if !ok {
		return fmt.Errorf("no %q", k)
	}
	return json.Unmarshal(raw, v)
}

func (o *object) sub(k string) (*object, error) {
	raw, ok := o.vals[k]
	if !ok {
		return nil, fmt.Errorf("no %q", k)
	}
	s, err := parseObject(raw)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", k, err)
	}
	return s, nil
}

func (o *object) set(k string, v any) {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(err) // only our own plain values are set
	}
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = raw
}

func (o *object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(o.vals[k])
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// encode renders o compact, or indented by two spaces when the original
// file was (Codex pretty-prints auth.json; Claude writes one line).
func (o *object) encode(pretty bool) ([]byte, error) {
	raw, err := o.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if pretty {
		if err := json.Indent(&out, raw, "", "  "); err != nil {
			return nil, err
		}
	} else if err := json.Compact(&out, raw); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// writeAtomic replaces a credential file durably, mode 0600 (see
// atomicfile: a planted file or link is never written through).
func writeAtomic(path string, data []byte) error {
	return atomicfile.Write(path, data, atomicfile.Options{Mode: 0o600, Sync: true})
}

// postJSON sends a refresh request and decodes a 2xx answer into out. The
// error never holds the request body (it has the refresh token) and only a
// short, printable excerpt of the answer.
func postJSON(ctx context.Context, client *http.Client, url string, body any, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "aisan")
	resp, err := NoRedirects(client).Do(req)
	if err != nil {
		return fmt.Errorf("token endpoint %s: %w", req.URL.Host, err)
	}
	defer resp.Body.Close()
	if err := Redirected(resp); err != nil {
		return fmt.Errorf("token endpoint %s: %w", req.URL.Host, err)
	}
	rb, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("token endpoint %s: %w", req.URL.Host, err)
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("token endpoint %s answered %s: %s", req.URL.Host, resp.Status, excerpt(rb))
	}
	if err := json.Unmarshal(rb, out); err != nil {
		return fmt.Errorf("token endpoint %s: unreadable answer: %w", req.URL.Host, err)
	}
	return nil
}

// NoRedirects is c (nil: the default client) answering a redirect with
// the redirect itself: a request that carries a credential or a refresh
// token goes to the address it was built for and nowhere else, whatever
// that address answers. Callers check the answer with [Redirected].
func NoRedirects(c *http.Client) *http.Client {
	if c == nil {
		c = http.DefaultClient
	}
	n := *c
	n.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &n
}

// Redirected is the error for an answer that redirects, nil otherwise.
func Redirected(resp *http.Response) error {
	switch resp.StatusCode {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
	default:
		return nil
	}
	to := "another address"
	if u, err := resp.Location(); err == nil && u.Host != "" {
		to = u.Host
	}
	return fmt.Errorf("answered %s, a redirect to %s, which aisan does not follow with a credential", resp.Status, to)
}

// excerpt keeps an error body short and printable; token endpoints answer
// errors as {"error": "...", "error_description": "..."}, never with a
// token.
func excerpt(b []byte) string {
	var e struct {
		Error any    `json:"error"`
		Desc  string `json:"error_description"`
	}
	if json.Unmarshal(b, &e) == nil && e.Error != nil {
		s := fmt.Sprint(e.Error)
		if m, ok := e.Error.(map[string]any); ok {
			s = fmt.Sprint(m["message"])
		}
		if e.Desc != "" {
			s += ": " + e.Desc
		}
		b = []byte(s)
	}
	s := strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// lockDir takes a lock the way the npm package proper-lockfile does (which
// the Claude CLI uses): mkdir of the lock path, its mtime refreshed every
// update while held, and taken over once older than stale (its holder
// died), whatever its shape. The returned release stops the refresh and
// removes it.
func lockDir(ctx context.Context, path string, stale, update time.Duration) (release func(), err error) {
	for {
		err := os.Mkdir(path, 0o700)
		if err == nil {
			break
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		st, serr := os.Lstat(path)
		switch {
		case errors.Is(serr, os.ErrNotExist):
			continue
		case serr != nil:
			return nil, fmt.Errorf("lock %s: %w", path, serr)
		case time.Since(st.ModTime()) > stale:
			// The holder stopped updating it: proper-lockfile treats it
			// as released, and so do we. A lock that is not a directory
			// (an older aisan's preflight made one) is no lock the CLI
			// can take or clear, so it goes too once it is as old.
			if rerr := os.Remove(path); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
				return nil, fmt.Errorf("lock %s: remove stale lock: %w", path, rerr)
			}
			continue
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("lock %s: still held by another process: %w", path, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(update)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				os.Chtimes(path, now, now)
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
		os.Remove(path)
	}, nil
}

// lockFile takes an exclusive flock on path (created 0600), for
// coordinating aisan processes where the client has no lock of its own.
func lockFile(ctx context.Context, path string) (release func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("lock %s: still held by another process: %w", path, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// loginFile is the discipline both host logins share: the parsed file is
// cached by its stamp (so a change is seen on the next request), and a
// token near its expiry is refreshed by one caller at a time.
type loginFile[T expiring] struct {
	mu    sync.Mutex // one refresh at a time in this process
	cmu   sync.Mutex
	stamp fileStamp
	v     T
	ok    bool
	// forcedAt and forced are the last refresh an upstream's refusal
	// forced, and what it gave (under mu).
	forcedAt time.Time
	forced   T
}

// ForceCooldown is how long after a forced refresh a refusal of the token
// it gave forces no other: a refresh cannot fix an upstream that refuses a
// new token, and each retry of the client would spend a refresh token.
const ForceCooldown = time.Minute

type expiring interface {
	// expiry is when the token stops working; zero means never.
	expiry() time.Time
}

func fresh(now, exp time.Time) bool { return exp.IsZero() || now.Add(RefreshMargin).Before(exp) }

// load returns the login in path, parsing the file only when it changed
// (top is nil then: a write-back takes its object from underLock).
func (f *loginFile[T]) load(path, what string, parse func([]byte) (T, *object, error)) (T, *object, error) {
	var zero T
	st, err := stampLogin(path, what)
	if err != nil {
		return zero, nil, err
	}
	f.cmu.Lock()
	if f.ok && st == f.stamp {
		v := f.v
		f.cmu.Unlock()
		return v, nil, nil
	}
	f.cmu.Unlock()
	return f.parseFile(path, what, st, parse)
}

// stampLogin is the login file's stamp, taken before it is read.
func stampLogin(path, what string) (fileStamp, error) {
	st, err := stampOf(path)
	if err != nil {
		return st, fmt.Errorf("the %s %s: %w (log in on the host)", what, path, err)
	}
	return st, nil
}

// parseFile reads and parses the file stamped st, and caches the login.
func (f *loginFile[T]) parseFile(path, what string, st fileStamp, parse func([]byte) (T, *object, error)) (T, *object, error) {
	var zero T
	b, err := regfile.Read(path, maxCredFile)
	if err != nil {
		return zero, nil, fmt.Errorf("the %s: %w", what, err)
	}
	v, top, err := parse(b)
	if err != nil {
		return zero, nil, err
	}
	f.cmu.Lock()
	f.stamp, f.v, f.ok = st, v, true
	f.cmu.Unlock()
	return v, top, nil
}

// forget drops the cache, so the next load reads the file.
func (f *loginFile[T]) forget() {
	f.cmu.Lock()
	f.ok = false
	f.cmu.Unlock()
}

// get returns a login that is not about to expire: the file's, or the one
// refresh makes (called with f.mu held). When the refresh fails but the
// old token has not expired yet, the old one serves, and the next request
// tries again.
func (f *loginFile[T]) get(now func() time.Time, read func() (T, *object, error), refresh func(needs func(T) bool) (T, error)) (T, error) {
	var zero T
	v, _, err := read()
	if err != nil {
		return zero, err
	}
	if fresh(now(), v.expiry()) {
		return v, nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if v, _, err := read(); err == nil && fresh(now(), v.expiry()) {
		return v, nil // refreshed by another goroutine meanwhile
	}
	nv, err := refresh(func(v T) bool { return !fresh(now(), v.expiry()) })
	if err != nil {
		if old, _, rerr := read(); rerr == nil && now().Before(old.expiry()) {
			return old, nil
		}
		return zero, err
	}
	return nv, nil
}

// force refreshes the login after the upstream refused one of its tokens
// (refused reports whether a login still holds that token), unless the
// file holds another token by now, someone else having refreshed, or the
// refused token is the one a forced refresh gave less than ForceCooldown
// ago; then the file's login is returned as it is.
func (f *loginFile[T]) force(now func() time.Time, read func() (T, *object, error), refresh func(needs func(T) bool) (T, error), refused func(T) bool) (T, error) {
	var zero T
	f.mu.Lock()
	defer f.mu.Unlock()
	f.forget()
	v, _, err := read()
	if err != nil {
		return zero, err
	}
	if !refused(v) || (!f.forcedAt.IsZero() && now().Sub(f.forcedAt) < ForceCooldown && refused(f.forced)) {
		return v, nil
	}
	nv, err := refresh(refused)
	if err != nil {
		return zero, err
	}
	f.forcedAt, f.forced = now(), nv
	return nv, nil
}

// underLock re-reads the file after the cross-process lock was taken: the
// file is the truth, and whoever held the lock before may have refreshed.
// done is true when the login no longer needs a refresh. It parses the
// file whatever the cache holds, so that top, the object a refresh writes
// back, is never missing: a request that loads the login meanwhile (it
// takes no lock) may fill the cache at any moment, and a refresh whose
// write-back then failed would have spent the refresh token for nothing,
// losing the user's login.
func (f *loginFile[T]) underLock(path, what string, parse func([]byte) (T, *object, error), needs func(T) bool) (v T, top *object, done bool, err error) {
	st, err := stampLogin(path, what)
	if err != nil {
		return v, nil, false, err
	}
	v, top, err = f.parseFile(path, what, st, parse)
	if err != nil {
		return v, nil, false, err
	}
	return v, top, !needs(v), nil
}

// lockContext bounds the wait for a lock another process holds; 0 means
// 90 s (longer than the Claude CLI's stale time, so a dead holder is
// outlived).
func lockContext(ctx context.Context, wait time.Duration) (context.Context, context.CancelFunc) {
	if wait == 0 {
		wait = 90 * time.Second
	}
	return context.WithTimeout(ctx, wait)
}
