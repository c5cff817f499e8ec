package slot

import (
	"os"
	"testing"
	"time"
)

// TestOver: a launch is over when its record says the slot exited, when
// a later launch has taken the name since, or when the record is gone;
// never while it runs, nor when its record cannot be read.
func TestOver(t *testing.T) {
	home, wt := newTree(t)
	reg := openReg(t, home)
	end := time.Now().Add(-time.Hour).Truncate(time.Second)
	endedSlot(t, reg, "ended-00000000-run", end, 1)
	s, err := reg.Acquire(wt, "run")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	running := s.Record()
	os.WriteFile(reg.recordPath("corrupt-00000000-run"), []byte("{"), 0o600)
	// A running launch whose record someone removed: its lock says it runs.
	other, err := reg.Acquire(wt, "claude")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Release()
	os.Remove(reg.recordPath(other.Name()))
	for _, c := range []struct {
		name  string
		slot  string
		since time.Time
		over  bool
		end   time.Time
	}{
		{"exited", "ended-00000000-run", end.Add(-time.Hour), true, end},
		{"running, this launch", running.Slot, running.Start, false, time.Time{}},
		{"running, a later launch than the set's", running.Slot, running.Start.Add(-time.Minute), true, running.Start},
		{"no record", "gone-00000000-run", end, true, time.Time{}},
		{"no record, its lock held", other.Name(), end, false, time.Time{}},
		{"not a slot's name", "../x", end, false, time.Time{}},
		{"unreadable record", "corrupt-00000000-run", end, false, time.Time{}},
	} {
		got, over := reg.Over(c.slot, c.since)
		if over != c.over || !got.Equal(c.end) {
			t.Errorf("%s: Over(%q) = %v, %v; want %v, %v", c.name, c.slot, got, over, c.end, c.over)
		}
	}
}
