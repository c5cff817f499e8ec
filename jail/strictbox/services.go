package strictbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"

	"github.com/aisan-dev/aisan/egress"
	"github.com/aisan-dev/aisan/egress/hostproxy"
	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/control"
	"github.com/aisan-dev/aisan/jail/launch"
	"github.com/aisan-dev/aisan/jail/strictbox/held"
	"golang.org/x/sys/unix"
)

// services is what serves one strict box from the host: its built-in
// endpoints' egress services and, when the box ends, the collection of
// its held set (what it changed of what host tools run).
type services struct {
	egress *boxEgress
	// eps are the built-in endpoints, runs their services, one each.
	eps  []jail.Endpoint
	runs []*endpointRun
	// held is the box's set of copies of what host tools run (held),
	// collected when it ends; "" for none.
	held string
	slot string
	say  jail.Say
	// control serves the control channel on controlPath.
	control     *controlRun
	controlPath string
	// receipt is the launch's, for 'aisan report'; keeper marks a
	// keeper's services (nobody is at a terminal to be told of it).
	receipt *receiptOf
	keeper  bool
	// startReceipt waits for the launch's snapshot of the repository and
	// starts the receipt with it (nil when there is none to take).
	startReceipt func(ctx context.Context) (*receiptOf, bool)
	// finish is the command that completes the receipt out of process
	// (nil: in this one, as a keeper does: nobody waits for it).
	finish []string
	// collected is closed when the held set's collection, started by
	// Ended once the box was empty, is done; said is what it had to say.
	collected chan struct{}
	said      []saying
	// handed is the spend the keeper took over (Keep): what this one
	// counts past it, answering calls in flight, is charged to the
	// keeper once they are (Drain).
	handed *egress.MeterState
}

// saying is one message kept for later.
type saying struct {
	level jail.Level
	text  string
}

// kept is what a keeper needs to serve a box's endpoints again, besides
// their listening sockets: the launch's credential mode, the --net box's
// per-box token (a placeholder the box holds, never a credential: the
// keeper reads those from the host as the wrapper did), the endpoints in
// the sockets' order, and the held set to collect.
type kept struct {
	APIKey    bool            `json:"api_key,omitempty"`
	Token     string          `json:"token,omitempty"`
	Endpoints []jail.Endpoint `json:"endpoints,omitempty"`
	Held      string          `json:"held,omitempty"`
	Slot      string          `json:"slot,omitempty"`
	// Steer is the box's steerable state as it stands (grants, budget,
	// rate, what it spent); Control the control socket, whose listener
	// is the last of the files.
	Steer   *State `json:"steer,omitempty"`
	Control string `json:"control,omitempty"`
	// Receipt is the launch's receipt file.
	Receipt string `json:"receipt,omitempty"`
}

// Env are the endpoints' variables for the agent (addresses picked at
// start, per-box tokens, the clients' routing).
func (s *services) Env() []string {
	var env []string
	for _, run := range s.runs {
		env = append(env, run.env...)
	}
	return env
}

// Keep hands the keeper duplicates of the listening sockets, one per
// endpoint in order, and the state to serve them with. It runs with the
// host's environment: its egress services find the credentials, CA
// store and overrides where this process found them.
func (s *services) Keep() (launch.Kept, error) {
	var files []*os.File
	undo := func() {}
	if s.control != nil {
		// A change answered here after the state below is read would be
		// lost to the keeper: 'aisan deny' would say a host is denied,
		// and the keeper would serve it again.
		s.control.pause()
		undo = s.control.resume
	}
	fail := func(err error) (launch.Kept, error) {
		for _, f := range files {
			f.Close()
		}
		undo()
		return launch.Kept{}, err
	}
	for _, run := range s.runs {
		f, err := egress.ListenerFile(run.ln)
		if err != nil {
			return fail(err)
		}
		files = append(files, f)
	}
	k := kept{APIKey: s.egress.apiKey, Token: s.egress.token, Endpoints: s.eps, Held: s.held, Slot: s.slot}
	st := s.egress.steer.State()
	k.Steer = &st
	s.handed = &egress.MeterState{Budget: st.Budget, Backends: st.Backends}
	if s.receipt != nil {
		s.receipt.kept(s.slot, st)
		k.Receipt = s.receipt.path
	}
	if s.control != nil {
		f, err := s.control.file()
		if err != nil {
			return fail(err)
		}
		files = append(files, f)
		k.Control = s.controlPath
	}
	state, err := json.Marshal(k)
	if err != nil {
		return fail(err)
	}
	return launch.Kept{Mode: modeName, Files: files, State: state, Env: os.Environ(), Undo: undo}, nil
}

// Drain ends this process's service once the keeper serves the box:
// nothing new is accepted, requests in flight are answered until ctx is
// done, and the socket files stay for the keeper, which removes them with
// the slot's run directory.
func (s *services) Drain(ctx context.Context) {
	if s.control != nil {
		// The keeper answers from now on; its state carries what this
		// one changed.
		s.control.drain()
	}
	var wg sync.WaitGroup
	for _, run := range s.runs {
		egress.Disown(run.ln)
		wg.Go(func() { run.drain(ctx) })
	}
	wg.Wait()
	s.chargeKeeper()
	s.egress.steer.detach()
	s.sayRefusals()
	s.sayReport()
}

// chargeKeeper sends the keeper what this process counted after it
// handed the box over: the calls it answered while draining, which the
// keeper's count (and so the budget) would otherwise never have.
func (s *services) chargeKeeper() {
	if s.handed == nil || s.controlPath == "" {
		return
	}
	d := s.egress.steer.meter.Since(*s.handed)
	if len(d.Backends) == 0 {
		return
	}
	b, err := json.Marshal(d)
	if err == nil {
		var resp control.Response
		resp, err = control.Call(s.controlPath, control.Request{Op: control.OpCharge, Spent: string(b)})
		if err == nil && !resp.OK {
			err = errors.New(resp.Error)
		}
	}
	if err != nil {
		s.say(jail.Warning, fmt.Sprintf("the keeper of %s could not be told of the tokens of the calls answered while it took over (%v): its count, and so the budget, misses them", s.slot, err))
	}
}

// Stop ends the services at once, after the box, and collects its held
// set: what it changed of what host tools run is held for review.
func (s *services) Stop() {
	if s.control != nil {
		s.control.stop()
	}
	stopAll(s.runs)
	s.egress.steer.stop()
	launch.Trace("services stopped")
	s.sayRefusals()
	if s.collected != nil {
		<-s.collected
		for _, m := range s.said {
			s.say(m.level, m.text)
		}
	} else {
		s.collectHeld(s.say)
	}
	launch.Trace("held set collected")
	// After the held set: the repository is as the box leaves it.
	s.receipt.end(s.slot, s.egress.steer.State(), s.keeper, s.finish)
	launch.Trace("receipt written")
	s.sayReport()
}

// Admitting waits for the repository's snapshot and starts the receipt
// with it: the agent, admitted next, is the first of the box's that may
// change the repository. (The backends served name their credentials.)
// A launch that ends before its agent is admitted stops waiting: it
// writes no receipt, since nothing of the box's ran.
func (s *services) Admitting(ctx context.Context) {
	if s.startReceipt != nil {
		r, ok := s.startReceipt(ctx)
		s.startReceipt = nil
		if ok {
			s.receipt = r
			launch.Trace("repository snapshot taken")
		}
	}
}

// Ended collects the held set beside the box's teardown once nothing is
// left running in the box: nothing there can change it any more. Its
// messages are kept for Stop, after the box's last output.
func (s *services) Ended(empty bool) {
	if !empty || s.held == "" || s.collected != nil {
		return
	}
	s.collected = make(chan struct{})
	go func() {
		defer close(s.collected)
		s.collectHeld(func(level jail.Level, text string) {
			s.said = append(s.said, saying{level, text})
		})
	}()
}

// collectHeld ends the box's held set: what it changed of what host
// tools run is held for review.
func (s *services) collectHeld(say jail.Say) {
	if s.held == "" {
		return
	}
	r, err := held.End(s.held)
	var done *held.CollectedError
	if errors.As(err, &done) {
		// 'aisan kill' or 'aisan review' saw the box gone first and
		// said what it held.
		say(jail.Note, fmt.Sprintf("what the box changed of what host tools run was collected by another aisan command; 'aisan review %s' shows it", s.slot))
		return
	}
	if err != nil {
		say(jail.Warning, fmt.Sprintf("collecting what the box changed of what host tools run (%s): %s; 'aisan review' lists it", s.held, held.Quote(err.Error())))
		return
	}
	// Each line on its own, names escaped: the box chose them.
	for _, l := range r.Lines(r.Repo, s.slot) {
		say(jail.Warning, l)
	}
	for _, k := range r.Kept {
		say(jail.Warning, fmt.Sprintf("%s was made empty for the box's run and the host wrote there since; it is left as it is", held.Quote(k)))
	}
}

// sayReport points a user at a terminal at the launch's receipt.
func (s *services) sayReport() {
	if s.keeper || s.receipt == nil || !onTerminal() {
		return
	}
	s.say(jail.Note, fmt.Sprintf("what the box did (files, hosts, tokens, processes): aisan report %s", s.slot))
}

// onTerminal reports whether aisan's own messages go to a terminal.
func onTerminal() bool {
	_, err := unix.IoctlGetTermios(2, unix.TCGETS)
	return err == nil
}

// sayRefusals says, once the services are done, how many requests they
// refused, the commonest reason and where the whole list is.
func (s *services) sayRefusals() {
	if line := s.egress.refusals.Summary(); line != "" {
		s.say(jail.Note, line)
	}
}

// Resume is a keeper's Serve: the box's endpoints served again on the
// sockets the wrapper served them on (k.Files, in the endpoints' order;
// they stay the caller's), with the state its Keep gave.
func (b *Box) Resume(k launch.Kept, say jail.Say) (launch.Services, error) {
	var st kept
	if err := json.Unmarshal(k.State, &st); err != nil {
		return nil, fmt.Errorf("the kept egress state: %w", err)
	}
	want := len(st.Endpoints)
	if st.Control != "" {
		want++
	}
	if len(k.Files) != want {
		return nil, fmt.Errorf("%d sockets for %d egress endpoints and the control socket", len(k.Files), want)
	}
	sr := newSteer(st.Slot, Options{}, st.Steer)
	m := newBoxEgress(st.APIKey, sr)
	m.token = st.Token
	if st.Steer != nil && !st.Steer.Net {
		m.live = st.Steer.Hosts
		if m.live == nil {
			m.live = []hostproxy.Entry{}
		}
	}
	var lns []net.Listener
	for i, f := range k.Files[:len(st.Endpoints)] {
		ln, err := egress.InheritListener(f, st.Endpoints[i].Socket)
		if err != nil {
			for _, l := range lns {
				l.Close()
			}
			return nil, err
		}
		// The socket files stay the wrapper's until the keeper has the
		// slot (if this fails, the wrapper goes on serving through them);
		// the slot directory's removal at the box's end takes them.
		egress.Disown(ln)
		lns = append(lns, ln)
	}
	closeAll := func() {
		for _, l := range lns {
			l.Close()
		}
	}
	if err := sr.serve(); err != nil {
		closeAll()
		return nil, err
	}
	runs, err := serveEgress(context.Background(), m, st.Endpoints, lns)
	if err != nil {
		closeAll()
		sr.stop()
		return nil, err
	}
	svc := &services{egress: m, eps: st.Endpoints, runs: runs, held: st.Held, slot: st.Slot, say: say, controlPath: st.Control,
		receipt: resumeReceipt(st.Receipt), keeper: true}
	if st.Control != "" {
		ln, err := control.Inherit(k.Files[len(k.Files)-1], st.Control)
		if err == nil {
			// Until the keeper has the slot, the wrapper's is the file.
			ln.Disown()
			svc.control, err = startControl(sr, st.Control, ln)
		}
		if err != nil {
			stopAll(runs)
			sr.stop()
			return nil, err
		}
	}
	return svc, nil
}
