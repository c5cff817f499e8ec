package strictbox

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/aisan-dev/aisan/jail"
)

func TestParseEgress(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want EgressRequest
		err  string
	}{
		{in: "stub=/run/s.sock", want: EgressRequest{Name: "stub", Socket: "/run/s.sock"}},
		{in: "my-db2=/tmp/x/../db.sock", want: EgressRequest{Name: "my-db2", Socket: "/tmp/db.sock"}},
		{in: "anthropic", want: EgressRequest{Name: "anthropic", Backend: "anthropic"}},
		{in: "openai-compatible:zai", want: EgressRequest{Name: "openai-compatible:zai", Backend: "openai-compatible", Param: "zai"}},
		{in: "reapi=/home/u/r.toml", want: EgressRequest{Name: "reapi", Backend: "reapi", Param: "/home/u/r.toml"}},
		{in: "grpc:build=/home/u/g.toml", want: EgressRequest{Name: "grpc:build", Backend: "grpc", Param: "/home/u/g.toml"}},
		{in: "anthropic=/run/s.sock", err: "built-in backends are"},
		{in: "openai-compatible", err: "built-in backends are"},
		{in: "Stub=/s", err: "must match"},
		{in: "-x=/s", err: "must match"},
		{in: "stub", err: "NAME=SOCKET"},
		{in: "stub=rel.sock", err: "absolute"},
	} {
		got, err := ParseEgress(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: %+v %v, want %+v", tc.in, got, err, tc.want)
		}
	}
}

// FuzzParseEgress: no panic; an accepted raw relay has a valid name, an
// absolute socket and a variable of its own.
func FuzzParseEgress(f *testing.F) {
	for _, s := range []string{"stub=/s", "anthropic", "openai-compatible:x", "reapi=/f", "grpc:a=/f", "a=", "=", ":", "grpc:=", "A-b=/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseEgress(s)
		if err != nil {
			return
		}
		if r.Backend == "" && (!rawEgressName().MatchString(r.Name) || !filepath.IsAbs(r.Socket)) {
			t.Fatalf("accepted %q as %+v", s, r)
		}
		if e := r.endpoint("s"); !strings.HasPrefix(e.Var, "AISAN_EGRESS_") || e.Why == "" {
			t.Fatalf("endpoint %+v", e)
		}
	})
}

// TestEndpointFromTable: the variable, the address's form and explain's
// words come from the backend table.
func TestEndpointFromTable(t *testing.T) {
	for _, tc := range []struct {
		r         EgressRequest
		addr, why string
	}{
		{EgressRequest{Name: "x", Socket: "/s"}, "127.0.0.1:1", "raw relay of /s"},
		{EgressRequest{Name: "anthropic", Backend: "anthropic"}, "http://127.0.0.1:1", "built-in backend anthropic"},
		{EgressRequest{Name: "openai-compatible:z", Backend: "openai-compatible", Param: "z"}, "http://127.0.0.1:1", "built-in backend openai-compatible z"},
		{EgressRequest{Name: "grpc:b", Backend: "grpc", Param: "/f"}, "127.0.0.1:1", "built-in backend grpc /f"},
		{EgressRequest{Name: "reapi", Backend: "reapi", Param: "/f"}, "127.0.0.1:1", "built-in backend reapi /f"},
		{EgressRequest{Name: "hosts", Backend: "hosts", Param: "a.example"}, "http://127.0.0.1:1", "HTTP proxy (CONNECT and plain HTTP) to these hosts only, resolved on the host: a.example"},
	} {
		e := tc.r.endpoint("slot")
		e.Port = 1
		if e.Address() != tc.addr || e.Why != tc.why || e.Slot != "slot" {
			t.Errorf("%+v: %q %q", tc.r, e.Address(), e.Why)
		}
		if want := "AISAN_EGRESS_" + strings.NewReplacer("-", "_", ":", "_").Replace(strings.ToUpper(tc.r.Name)); e.Var != want {
			t.Errorf("%+v: variable %s, want %s", tc.r, e.Var, want)
		}
	}
}

// TestModelCandidates: which model endpoint an agent is offered, from the
// backend table: its default ones in order, the one the user chose
// instead (--vertex), none once the user named one.
func TestModelCandidates(t *testing.T) {
	names := func(rs []EgressRequest) string {
		var out []string
		for _, r := range rs {
			out = append(out, r.Name)
		}
		return strings.Join(out, " ")
	}
	provider := func() string { return "groq" }
	for _, tc := range []struct {
		kind  jail.Kind
		model string
		named []EgressRequest
		want  string
	}{
		{jail.KindClaude, "", nil, "anthropic"},
		{jail.KindClaude, "vertex", nil, "vertex"},
		{jail.KindClaude, "", []EgressRequest{{Name: "vertex", Backend: "vertex"}}, ""},
		{jail.KindClaude, "vertex", []EgressRequest{{Name: "anthropic", Backend: "anthropic"}}, "vertex"},
		{jail.KindCodex, "", nil, "codex openai"},
		{jail.KindCodex, "", []EgressRequest{{Name: "openai", Backend: "openai"}}, ""},
		{jail.KindOpencode, "", nil, "openai-compatible:groq"},
		{jail.KindRun, "", nil, ""},
	} {
		if got := names(modelCandidates(tc.kind, tc.model, tc.named, provider)); got != tc.want {
			t.Errorf("%s %q %v: %q, want %q", tc.kind, tc.model, tc.named, got, tc.want)
		}
	}
	if got := modelCandidates(jail.KindOpencode, "", nil, func() string { return "" }); got != nil {
		t.Errorf("opencode without a provider: %v", got)
	}
}
