package strictbox

import (
	"sort"
	"time"

	"github.com/aisan-dev/aisan/egress/audit"
	"github.com/aisan-dev/aisan/egress/hostproxy"
	"github.com/aisan-dev/aisan/jail/slot"
)

// Report is one launch summed up for 'aisan report': built by
// [BuildReport] from what the state dir keeps (the launch's record, its
// receipt, its share of the slot's egress log, its held set), never from
// the box. It names files, hosts, backends and where credentials come
// from; nothing secret is in any of them.
type Report struct {
	Slot    string    `json:"slot"`
	Kind    string    `json:"kind"`
	Mode    string    `json:"mode"`
	Command string    `json:"command,omitempty"`
	Start   time.Time `json:"start"`
	// End is zero while the launch runs.
	End             time.Time `json:"end,omitzero"`
	DurationSeconds float64   `json:"duration_seconds"`
	Running         bool      `json:"running,omitempty"`
	ExitStatus      *int      `json:"exit_status,omitempty"`
	// Receipt is false for a launch without one (a deny-list launch, or
	// one from before receipts); the fields below it are then empty.
	Receipt bool   `json:"receipt"`
	Repo    string `json:"repo,omitempty"`
	// Changes are the files the launch changed in the repository;
	// ChangesUnknown says why they are not known.
	Changes        []FileChange `json:"changes"`
	ChangesUnknown string       `json:"changes_unknown,omitempty"`
	// Held are the paths held for review ('aisan review SLOT'), and
	// HeldState the set's state (held, applied, dropped).
	Held      []string `json:"held,omitempty"`
	HeldState string   `json:"held_state,omitempty"`
	// Hosts are the hosts the box asked its host proxy for.
	Hosts []HostUse `json:"hosts"`
	// Backends are the model and other egress backends it called.
	Backends []BackendUse `json:"backends"`
	// Steering are the changes made from outside while it ran.
	Steering []string `json:"steering,omitempty"`
	Budget   int64    `json:"budget,omitempty"`
	Rate     string   `json:"rate,omitempty"`
	// Credentials says, per backend, where its credential came from.
	Credentials map[string]string `json:"credentials,omitempty"`
	// Left are the processes left in the box when its agent exited, and
	// LeftEnd how they ended.
	Left    []Process `json:"left,omitempty"`
	LeftEnd string    `json:"left_end,omitempty"`
	// PeakMemory is in bytes, CPUSeconds the box's CPU time; 0 when the
	// box had no cgroup aisan could read.
	PeakMemory int64   `json:"peak_memory_bytes,omitempty"`
	CPUSeconds float64 `json:"cpu_seconds,omitempty"`
}

// HostUse is what the box asked one host for.
type HostUse struct {
	Host    string `json:"host"`
	Reached int    `json:"reached"`
	Refused int    `json:"refused"`
	// Why is the last refusal's reason.
	Why string `json:"why,omitempty"`
}

// BackendUse is what the box asked one backend for.
type BackendUse struct {
	Backend string       `json:"backend"`
	Calls   int          `json:"calls"`
	Refused int          `json:"refused"`
	Tokens  audit.Tokens `json:"tokens"`
	// Why is the last refusal's reason.
	Why string `json:"why,omitempty"`
}

// steerBackend is the egress log's name for lines of the steering itself.
const steerBackend = "aisan"

// BuildReport sums up the launch info li of slot slotName (running when
// the launch has not ended), its receipt r (nil for none), the slot's
// egress log lines log, and the paths of its held set. Lines outside
// the launch's time are another launch's and left out.
func BuildReport(slotName string, li slot.LaunchInfo, running bool, now time.Time, r *Receipt, log []audit.Entry, held []string, heldState string) Report {
	rep := Report{Slot: slotName, Kind: li.Kind, Mode: li.Mode, Command: li.Command, Start: li.Start, End: li.End,
		Running: running, ExitStatus: li.ExitStatus, Changes: []FileChange{}, Hosts: []HostUse{}, Backends: []BackendUse{}}
	if rep.Mode == "" {
		rep.Mode = "deny-list"
	}
	end := li.End
	if running || end.IsZero() {
		end = now
	}
	rep.DurationSeconds = end.Sub(li.Start).Round(time.Second).Seconds()
	if r == nil {
		return rep
	}
	rep.Receipt, rep.Repo, rep.Credentials = true, r.Repo, r.Credentials
	rep.Left, rep.LeftEnd = r.Left, r.LeftEnd
	rep.PeakMemory, rep.CPUSeconds = r.PeakMemory, float64(r.CPUMicros)/1e6
	switch {
	case r.Compared:
		rep.Changes = append(rep.Changes, r.Changes...)
	case r.ChangesErr != "":
		rep.ChangesUnknown = r.ChangesErr
	case r.End.IsZero():
		rep.ChangesUnknown = "the box runs: its changes are compared when it ends"
	default:
		rep.ChangesUnknown = "the box has ended and its changes are being compared; ask again in a moment"
	}
	rep.Held, rep.HeldState = held, heldState
	if r.State != nil {
		rep.Budget, rep.Rate = r.State.Budget, r.State.Rate
	}
	from, to := r.Start.Add(-time.Second), end.Add(time.Second)
	if !r.End.IsZero() {
		to = r.End.Add(time.Second)
	}
	hosts, backends := map[string]*HostUse{}, map[string]*BackendUse{}
	for _, e := range log {
		if e.Time.Before(from) || e.Time.After(to) {
			continue
		}
		switch {
		case e.Note != "" && (e.Backend == steerBackend || e.Status == 0):
			what := e.Method
			if e.Path != "" {
				what += " " + e.Path
			}
			rep.Steering = append(rep.Steering, e.Time.UTC().Format(time.RFC3339)+" "+what+": "+e.Note)
		case e.Backend == hostproxy.Backend:
			h := hosts[e.Path]
			if h == nil {
				h = &HostUse{Host: e.Path}
				hosts[e.Path] = h
			}
			if e.Refused != "" {
				h.Refused++
				h.Why = e.Refused
			} else {
				h.Reached++
			}
		case e.Backend != steerBackend:
			b := backends[e.Backend]
			if b == nil {
				b = &BackendUse{Backend: e.Backend}
				backends[e.Backend] = b
			}
			if e.Refused != "" {
				b.Refused++
				b.Why = e.Refused
			} else {
				b.Calls++
			}
			if e.Tokens != nil {
				b.Tokens = b.Tokens.Add(*e.Tokens)
			}
		}
	}
	for _, h := range hosts {
		rep.Hosts = append(rep.Hosts, *h)
	}
	sort.Slice(rep.Hosts, func(i, j int) bool { return rep.Hosts[i].Host < rep.Hosts[j].Host })
	for _, b := range backends {
		rep.Backends = append(rep.Backends, *b)
	}
	sort.Slice(rep.Backends, func(i, j int) bool { return rep.Backends[i].Backend < rep.Backends[j].Backend })
	return rep
}
