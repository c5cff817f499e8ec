package strictbox

// Steering a running box from outside (jail/control's requests, as the
// box's host side applies them).
//
// Rules:
//   - What may change is the host allow-list (its proxy serves every
//     box without --net, with an empty list unless the launch named
//     hosts), the token budget and the request rate. Mounts, credentials
//     and the network mode stay as launched: nothing here reaches them.
//   - A change takes effect at once, for every new request; a host taken
//     off the list cuts what only it allowed (egress/hostproxy), a spent
//     budget never cuts a stream that runs.
//   - Each change is a line of the slot's egress log; the state after it
//     is in the slot's state file (for 'aisan list' and 'aisan report')
//     and passes to a keeper with the box.

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/aisan-dev/aisan/egress"
	"github.com/aisan-dev/aisan/egress/audit"
	"github.com/aisan-dev/aisan/egress/hostproxy"
	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/control"
	"github.com/aisan-dev/aisan/jail/shared/atomicfile"
	"github.com/aisan-dev/aisan/jail/strictbox/boxstate"
)

// State is what may be steered of a running strict box, and what it has
// used: the control channel's status, the slot's state file, and part of
// what a keeper takes over.
type State struct {
	// Start is when the box's host side started serving it.
	Start time.Time `json:"start"`
	// Updated is when the state was written.
	Updated time.Time `json:"updated,omitzero"`
	// Budget is the box's token budget, 0 for none.
	Budget int64 `json:"budget,omitempty"`
	// Rate is the box's request rate, as --rate reads it.
	Rate string `json:"rate"`
	// Net marks a --net box, which has no host allow-list.
	Net bool `json:"net,omitempty"`
	// Hosts is the host allow-list as it stands, grants included.
	Hosts []hostproxy.Entry `json:"hosts,omitempty"`
	// Backends are the model calls and tokens, per backend.
	Backends map[string]egress.Spend `json:"backends,omitempty"`
}

// Spent is every token counted, over all backends.
func (s State) Spent() int64 {
	var n int64
	for _, b := range s.Backends {
		n += b.Tokens.Total()
	}
	return n
}

// ControlSocket is the control socket of the slot the host h launched
// (its Cwd the slot's worktree).
func ControlSocket(h jail.Host, slotName string) string {
	return filepath.Join(h.SlotDir(slotName), "control.sock")
}

// steer is one box's steerable state and what applies a change to it.
type steer struct {
	slot  string
	start time.Time
	net   bool
	meter *egress.Meter
	limit *rate.Limiter

	mu    sync.Mutex
	hosts *hostproxy.Proxy // once served; nil with --net
	log   audit.Sink
	// Debounced writes of the state file: at most one every writeGap.
	path    string
	pending *time.Timer
}

// writeGap spaces the state file's writes: a call's end marks it dirty,
// and a burst of calls writes it once.
const writeGap = 300 * time.Millisecond

// newSteer is the steering of a box launched with o (or, with kept, of
// a box a keeper takes over).
func newSteer(slotName string, o Options, kept *State) *steer {
	s := &steer{slot: slotName, start: time.Now(), net: o.Net, log: audit.Discard}
	r, burst := egress.DefaultRate, egress.DefaultBurst
	if o.Rate > 0 {
		r = rate.Limit(o.Rate)
	}
	if o.Burst > 0 {
		burst = o.Burst
	}
	ms := egress.MeterState{Budget: o.Budget}
	if kept != nil {
		s.start, s.net = kept.Start, kept.Net
		if kr, kb, err := egress.ParseRate(kept.Rate); err == nil {
			r, burst = kr, kb
		}
		ms = egress.MeterState{Budget: kept.Budget, Backends: kept.Backends}
	}
	s.limit = rate.NewLimiter(r, burst)
	s.meter = egress.NewMeter(ms)
	s.meter.OnChange(s.changed)
	return s
}

// serve opens the slot's egress log for the steering's own lines and
// starts writing the state file.
func (s *steer) serve() error {
	p, err := boxstate.Path(s.slot) // read by 'aisan list'
	if err != nil {
		return err
	}
	log, err := openEgressAudit(s.slot)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.path, s.log = p, log
	s.mu.Unlock()
	s.write()
	return nil
}

// setHosts is the box's host proxy, once served.
func (s *steer) setHosts(p *hostproxy.Proxy) {
	s.mu.Lock()
	s.hosts = p
	s.mu.Unlock()
}

// State is the box's state now.
func (s *steer) State() State {
	st := State{Start: s.start, Net: s.net, Rate: egress.FormatRate(s.limit.Limit(), s.limit.Burst())}
	ms := s.meter.State()
	st.Budget, st.Backends = ms.Budget, ms.Backends
	s.mu.Lock()
	if s.hosts != nil {
		st.Hosts = s.hosts.Live()
	}
	s.mu.Unlock()
	return st
}

// changed schedules a write of the state file.
func (s *steer) changed() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.path == "" || s.pending != nil {
		return
	}
	s.pending = time.AfterFunc(writeGap, s.write)
}

// write writes the state file now.
func (s *steer) write() {
	s.mu.Lock()
	if s.pending != nil {
		s.pending.Stop()
		s.pending = nil
	}
	path := s.path
	s.mu.Unlock()
	if path == "" {
		return
	}
	st := s.State()
	st.Updated = time.Now()
	data, err := json.Marshal(st)
	if err == nil {
		atomicfile.Write(path, append(data, '\n'), atomicfile.Options{Mode: 0o600})
	}
}

// stop writes the state file a last time and closes the log.
func (s *steer) stop() {
	s.write()
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.log.(*audit.File); ok {
		c.Close()
	}
	s.log, s.path = audit.Discard, ""
}

// detach ends this process's share once a keeper took the box over:
// the state file is the keeper's to write from now on.
func (s *steer) detach() {
	s.mu.Lock()
	if s.pending != nil {
		s.pending.Stop()
		s.pending = nil
	}
	s.path = ""
	if c, ok := s.log.(*audit.File); ok {
		c.Close()
	}
	s.log = audit.Discard
	s.mu.Unlock()
}

// note logs a change as a line of the egress log.
func (s *steer) note(method, path, note string) {
	s.mu.Lock()
	log := s.log
	s.mu.Unlock()
	log.Log(audit.Entry{Time: time.Now(), Backend: "aisan", Method: method, Path: path, Note: note})
}

// handle applies one request from the control channel.
func (s *steer) handle(req control.Request) control.Response {
	switch req.Op {
	case control.OpStatus:
		b, err := json.Marshal(s.State())
		if err != nil {
			return control.Refuse(err, "")
		}
		return control.Response{OK: true, State: b}
	case control.OpAllowHost, control.OpDenyHost:
		return s.hostsRequest(req)
	case control.OpBudget:
		return s.budget(req)
	case control.OpRate:
		return s.rate(req)
	case control.OpCharge:
		var st egress.MeterState
		if err := json.Unmarshal([]byte(req.Spent), &st); err != nil {
			return control.Refuse(fmt.Errorf("reading the charge: %w", err), "")
		}
		s.meter.Charge(st)
		s.write()
		return control.Response{OK: true, Text: "charged"}
	}
	return control.Refuse(fmt.Errorf("this box does not take %q", req.Op), "")
}

func (s *steer) hostsRequest(req control.Request) control.Response {
	s.mu.Lock()
	p := s.hosts
	s.mu.Unlock()
	if s.net {
		return control.Refuse(errors.New("this box has the host network (--net): it reaches every host already, and has no host allow-list"), "")
	}
	if p == nil {
		return control.Refuse(errors.New("this box's host allow-list proxy is not running"), "")
	}
	pt, err := hostproxy.ParsePattern(req.Host)
	if err != nil {
		return control.Refuse(err, "a pattern is a host name (example.com), one leading wildcard label (*.example.com), either with :PORT, or an exact ADDRESS:PORT")
	}
	// Written at once: 'aisan list' right after shows the change.
	defer s.write()
	if req.Op == control.OpDenyHost {
		n, err := p.Deny(pt)
		if err != nil {
			return control.Refuse(err, "'aisan report "+s.slot+"' shows the list")
		}
		return control.Response{OK: true, Text: fmt.Sprintf("%s denied; %d open connections cut", pt, n)}
	}
	var until time.Time
	if req.ForMS > 0 {
		until = time.Now().Add(time.Duration(req.ForMS) * time.Millisecond)
	}
	return control.Response{OK: true, Text: p.Grant(pt, until)}
}

func (s *steer) budget(req control.Request) control.Response {
	old, spent := s.meter.Budget()
	n := req.Tokens
	if req.Add {
		n = old + req.Tokens
		if old == 0 {
			// No budget yet: +N is N more than what is spent.
			n = spent + req.Tokens
		}
	}
	s.meter.SetBudget(n)
	s.write()
	text := fmt.Sprintf("budget %d tokens, %d spent", n, spent)
	if n == 0 {
		text = fmt.Sprintf("no budget; %d tokens spent", spent)
	}
	s.note("BUDGET", "", "set by 'aisan allow': "+text)
	return control.Response{OK: true, Text: text}
}

func (s *steer) rate(req control.Request) control.Response {
	if req.Rate > egress.MaxRate || req.Burst > egress.MaxBurst {
		return control.Refuse(fmt.Errorf("a rate of at most %d/s and a burst of at most %d", egress.MaxRate, egress.MaxBurst), "")
	}
	burst := req.Burst
	if burst == 0 {
		burst = s.limit.Burst()
	}
	s.limit.SetLimit(rate.Limit(req.Rate))
	s.limit.SetBurst(burst)
	s.write()
	text := "rate " + egress.FormatRate(rate.Limit(req.Rate), burst)
	s.note("RATE", "", "set by 'aisan allow': "+text)
	return control.Response{OK: true, Text: text}
}

// controlRun is the box's control socket being served.
type controlRun struct {
	ln  *control.Listener
	srv *control.Server
}

// startControl serves the control channel on the slot's socket at path,
// or on ln, inherited.
func startControl(s *steer, path string, ln *control.Listener) (*controlRun, error) {
	if ln == nil {
		var err error
		if ln, err = control.Listen(path); err != nil {
			return nil, err
		}
	}
	srv := control.Serve(ln, s.handle, func(err error) {
		s.note("CONTROL", "", "refused: "+err.Error())
	})
	return &controlRun{ln: ln, srv: srv}, nil
}

// file is a duplicate of the listening socket, for a keeper.
func (c *controlRun) file() (*os.File, error) { return c.ln.File() }

func (c *controlRun) stop() { c.srv.Close() }

// pause stops answering until resume (or for good, once a keeper
// answers): the state handed to a keeper is read after it.
func (c *controlRun) pause() { c.srv.Pause() }

func (c *controlRun) resume() { c.srv.Resume() }

// drain stops serving, leaving the socket file to the keeper.
func (c *controlRun) drain() {
	c.ln.Disown()
	c.srv.Close()
}
