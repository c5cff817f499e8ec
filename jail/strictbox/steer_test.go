package strictbox

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/aisan-dev/aisan/egress"
	"github.com/aisan-dev/aisan/egress/audit"
	"github.com/aisan-dev/aisan/egress/hostproxy"
	"github.com/aisan-dev/aisan/jail/strictbox/boxstate"
)

// The state file the steering writes reads back through boxstate, which
// 'aisan list' uses in the front without this package: the same start,
// budget and tokens per backend, and the file's JSON unchanged.
func TestStateFileReadsAsBoxState(t *testing.T) {
	pt, err := hostproxy.ParsePattern("*.example.com:8443")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	st := State{
		Start: start, Updated: start.Add(time.Minute), Budget: 50000, Rate: "10/m", Net: false,
		Hosts: []hostproxy.Entry{{Pattern: pt, Until: start.Add(time.Hour), Granted: true}},
		Backends: map[string]egress.Spend{
			"anthropic": {Calls: 3, Counted: 2, Tokens: audit.Tokens{Input: 100, Output: 20, CacheRead: 5000, CacheCreation: 7}},
			"openai":    {Calls: 1, Counted: 1, Tokens: audit.Tokens{Input: 9, Output: 1}},
		},
	}
	data, err := json.Marshal(st) // as (*steer).write does
	if err != nil {
		t.Fatal(err)
	}
	got, err := boxstate.Parse(append(data, '\n'))
	if err != nil {
		t.Fatal(err)
	}
	if !got.Start.Equal(start) || got.Budget != st.Budget || got.Spent() != st.Spent() || len(got.Backends) != 2 {
		t.Errorf("boxstate read %+v from %s", got, data)
	}
	for name, b := range st.Backends {
		w := b.Tokens
		if g := got.Backends[name].Tokens; g != (boxstate.Tokens{Input: w.Input, Output: w.Output, CacheRead: w.CacheRead, CacheCreation: w.CacheCreation}) {
			t.Errorf("%s: boxstate read %+v, the file holds %+v", name, g, w)
		}
	}
	var raw bytes.Buffer
	if err := json.Compact(&raw, got.Raw); err != nil || !bytes.Equal(raw.Bytes(), data) {
		t.Errorf("boxstate's JSON is %s, the file's %s (%v)", raw.Bytes(), data, err)
	}
}
