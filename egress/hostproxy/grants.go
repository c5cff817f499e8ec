package hostproxy

// Rules for a running box's list (what 'aisan allow' and 'aisan deny'
// change from outside the box):
//
//   - The list is the launch's patterns, then the grants made since, in
//     order. A grant is a pattern under the same rules as --allow-host
//     (pattern.go) and the same address checks (addr.go): it widens the
//     hosts a box may name and nothing else.
//   - A grant may lapse at a set time. Granting a pattern on the list
//     again sets its lapse anew (or removes it); a pattern the box was
//     launched with never lapses.
//   - Denying removes a pattern, granted or launched, and only one on
//     the list as written there.
//   - When a pattern leaves the list (denied, or lapsed), every open
//     connection is judged again against what remains, by the name and
//     the address it was opened to; one no longer allowed is cut, and its
//     log line says why.
//   - Each grant, lapse and denial is a line of the egress log (methods
//     GRANT, LAPSE, DENY).

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// Entry is one pattern of a running box's allow-list.
type Entry struct {
	Pattern Pattern
	// Until is when a grant lapses; zero for never.
	Until time.Time
	// Granted marks a pattern granted while the box ran, as against one
	// it was launched with.
	Granted bool
}

type entryJSON struct {
	Host    string    `json:"host"`
	Until   time.Time `json:"until,omitzero"`
	Granted bool      `json:"granted,omitempty"`
}

// MarshalJSON writes the pattern in its canonical form.
func (e Entry) MarshalJSON() ([]byte, error) {
	return json.Marshal(entryJSON{e.Pattern.String(), e.Until, e.Granted})
}

// UnmarshalJSON reads an entry, checking its pattern as ParsePattern does.
func (e *Entry) UnmarshalJSON(b []byte) error {
	var j entryJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	p, err := ParsePattern(j.Host)
	if err != nil {
		return err
	}
	*e = Entry{Pattern: p, Until: j.Until, Granted: j.Granted}
	return nil
}

// ErrNotListed is wrapped by [Proxy.Deny] for a pattern not on the list.
var ErrNotListed = errors.New("not on the box's host allow-list")

// tunnel is one connection open through the proxy: what it was opened
// to, and both its ends, to cut it when its pattern leaves the list.
type tunnel struct {
	target     Target
	addr       netip.Addr
	client, up net.Conn

	mu  sync.Mutex
	cut string
}

func (tn *tunnel) sever(why string) {
	tn.mu.Lock()
	if tn.cut == "" {
		tn.cut = why
	}
	tn.mu.Unlock()
	tn.up.Close()
	tn.client.Close()
}

func (tn *tunnel) why() string {
	tn.mu.Lock()
	defer tn.mu.Unlock()
	return tn.cut
}

// startLive sets the list up from the config: Live when given (its
// lapsed grants dropped, the rest set to lapse), else Allow.
func (p *Proxy) startLive() {
	defer p.changed(false)
	if p.cfg.Live == nil {
		for _, pt := range p.cfg.Allow {
			p.live = append(p.live, Entry{Pattern: pt})
		}
		return
	}
	now := time.Now()
	for _, e := range p.cfg.Live {
		if !e.Until.IsZero() && !e.Until.After(now) {
			continue
		}
		p.live = append(p.live, e)
		if !e.Until.IsZero() {
			p.schedule(e.Pattern, e.Until)
		}
	}
}

// list is the allow-list as it stands, and its generation: a request
// decided on one generation is opened without a second look unless the
// list lost a pattern since. The list is never changed in place, so it
// is read without a copy.
func (p *Proxy) list() (List, uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cur, p.gen
}

func (p *Proxy) listLocked() List { return p.cur }

// changed rebuilds the list served from live after a change; a pattern
// gone (narrowed) starts a new generation. The caller holds mu.
func (p *Proxy) changed(narrowed bool) {
	l := make(List, len(p.live))
	for i, e := range p.live {
		l[i] = e.Pattern
	}
	p.cur = l
	if narrowed {
		p.gen++
	}
}

// Live is the allow-list as it stands, with its grants' lapse times.
func (p *Proxy) Live() []Entry {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Entry(nil), p.live...)
}

// Grant puts pt on the list until until (zero: for as long as the box
// runs), or sets the lapse of a grant of it anew. It returns what it
// did, in words for the user.
func (p *Proxy) Grant(pt Pattern, until time.Time) string {
	p.mu.Lock()
	i := p.index(pt)
	var said string
	switch {
	case i >= 0 && !p.live[i].Granted:
		p.mu.Unlock()
		return fmt.Sprintf("%s is on the list the box was launched with already", pt)
	case i >= 0:
		p.live[i].Until = until
		said = "granted again"
	default:
		p.live = append(p.live, Entry{Pattern: pt, Until: until, Granted: true})
		p.changed(false)
		said = "granted"
	}
	if t, ok := p.lapses[pt]; ok {
		t.Stop()
		delete(p.lapses, pt)
	}
	note := "until the box ends"
	if !until.IsZero() {
		p.schedule(pt, until)
		note = fmt.Sprintf("until %s (for %s)", until.Local().Format(time.TimeOnly), time.Until(until).Round(time.Second))
	}
	p.mu.Unlock()
	p.logNote(time.Now(), "GRANT", pt.String(), 0, 0, 0, nil, "granted by 'aisan allow', "+note)
	return fmt.Sprintf("%s %s, %s", pt, said, note)
}

// Deny takes pt off the list and cuts the connections that no longer
// pass what remains; it returns how many it cut.
func (p *Proxy) Deny(pt Pattern) (int, error) {
	p.mu.Lock()
	i := p.index(pt)
	if i < 0 {
		l := p.listLocked()
		p.mu.Unlock()
		if len(l) == 0 {
			return 0, fmt.Errorf("%s: %w, which is empty", pt, ErrNotListed)
		}
		return 0, fmt.Errorf("%s: %w, which has %s", pt, ErrNotListed, strings.Join(l.Strings(), ", "))
	}
	return p.dropLocked(i, "DENY", pt.String()+" was denied by 'aisan deny'", "denied by 'aisan deny'"), nil
}

// lapse ends the grant of pt that was to lapse at until (unless granted
// anew since).
func (p *Proxy) lapse(pt Pattern, until time.Time) {
	p.mu.Lock()
	i := p.index(pt)
	if p.closed || i < 0 || !p.live[i].Until.Equal(until) {
		p.mu.Unlock()
		return
	}
	p.dropLocked(i, "LAPSE", "the grant of "+pt.String()+" lapsed", "the grant lapsed")
	if p.cfg.Lapsed != nil {
		p.cfg.Lapsed()
	}
}

// schedule sets pt's grant to lapse at until; the caller holds mu.
func (p *Proxy) schedule(pt Pattern, until time.Time) {
	p.lapses[pt] = time.AfterFunc(time.Until(until), func() { p.lapse(pt, until) })
}

// index is pt's place in the list, -1 if absent; the caller holds mu.
func (p *Proxy) index(pt Pattern) int {
	for i, e := range p.live {
		if e.Pattern == pt {
			return i
		}
	}
	return -1
}

// dropLocked takes entry i off the list, with p.mu held, which it
// releases; then it cuts the connections that what remains no longer
// allows, each saying why, and logs the change as event, with note and
// the count cut. It returns that count.
func (p *Proxy) dropLocked(i int, event, why, note string) int {
	pt := p.live[i].Pattern
	p.remove(i)
	cut := p.judgeLocked()
	p.mu.Unlock()
	for _, tn := range cut {
		tn.sever("cut: " + why)
	}
	p.logNote(time.Now(), event, pt.String(), 0, 0, 0, nil, fmt.Sprintf("%s; %d open connections cut", note, len(cut)))
	return len(cut)
}

// remove drops entry i and its lapse; the caller holds mu.
func (p *Proxy) remove(i int) {
	pt := p.live[i].Pattern
	p.live = append(p.live[:i:i], p.live[i+1:]...)
	p.changed(true)
	if t, ok := p.lapses[pt]; ok {
		t.Stop()
		delete(p.lapses, pt)
	}
}

// judgeLocked returns the open connections the list no longer allows;
// the caller holds mu.
func (p *Proxy) judgeLocked() []*tunnel {
	l := p.listLocked()
	var out []*tunnel
	for tn := range p.tunnels {
		if !p.allows(l, tn.target, tn.addr) {
			out = append(out, tn)
		}
	}
	return out
}

// allows is the whole decision again for a connection open to addr for
// t: the name on l, and the address as Check judges it.
func (p *Proxy) allows(l List, t Target, addr netip.Addr) bool {
	explicit, err := Decide(l, t)
	if err != nil {
		return false
	}
	local, err := p.local()
	if err != nil {
		return false
	}
	_, err = Check(t, []netip.Addr{addr}, explicit, local)
	return err == nil
}

// open registers a connection the box asked for t, just dialled as up
// for client c. The list is judged again under the same lock a denial
// takes, so a connection is either refused here or cut by the denial.
// A nil tunnel with a nil error is a proxy closing. gen is the list's
// generation the request was decided on: unless a pattern left the list
// since, the decision stands without a second look.
func (p *Proxy) open(t Target, gen uint64, c, up net.Conn) (*tunnel, error) {
	tn := &tunnel{target: t, client: c, up: up}
	if a, ok := up.RemoteAddr().(*net.TCPAddr); ok {
		tn.addr, _ = netip.AddrFromSlice(a.IP)
		tn.addr = tn.addr.Unmap()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		up.Close()
		return nil, nil
	}
	if p.gen != gen && !p.allows(p.listLocked(), t, tn.addr) {
		up.Close()
		return nil, &RefusedError{Target: t, Reason: fmt.Sprintf("%s left this box's host allow-list while it was being reached", t)}
	}
	p.conns[up] = struct{}{}
	p.tunnels[tn] = struct{}{}
	return tn, nil
}

// shut forgets a connection that ended.
func (p *Proxy) shut(tn *tunnel) {
	p.mu.Lock()
	delete(p.tunnels, tn)
	p.mu.Unlock()
	p.untrack(tn.up)
}

func (p *Proxy) logTunnel(tn *tunnel, start time.Time, method string, status int, up, down int64) {
	p.logNote(start, method, tn.target.String(), status, up, down, nil, tn.why())
}
