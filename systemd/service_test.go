package systemd

import (
	"strings"
	"testing"
	"time"
)

func validService() Service {
	return Service{
		Unit:        ServiceName("nightly"),
		Description: "aisan service nightly",
		Argv:        []string{"/usr/bin/aisan", "__stage", "3"},
		Env:         []string{"HOME=/home/u", "AISAN_JAIL=svc-nightly"},
		Dir:         "/home/u/repo",
		MaxRuntime:  DefaultMaxRuntime,
		Output:      "/home/u/.aisan/slots/svc-nightly/transcript",
	}
}

func TestServiceValidate(t *testing.T) {
	tests := []struct {
		edit func(*Service)
		err  string
	}{
		{func(*Service) {}, ""},
		{func(s *Service) { s.Unit = "aisan-x.scope" }, `service unit "aisan-x.scope": the name does not end in .service`},
		{func(s *Service) { s.Argv = nil }, "no command"},
		{func(s *Service) { s.Argv = []string{"aisan"} }, `command "aisan": not an absolute path`},
		{func(s *Service) { s.Dir = "" }, `working directory "": not an absolute path`},
		{func(s *Service) { s.MaxRuntime = 0 }, "runtime cap 0s: a headless service needs a positive cap (default 1h0m0s)"},
		{func(s *Service) { s.Output = "transcript" }, `output file "transcript": not an absolute path`},
		{func(s *Service) { s.Env = []string{"NOVALUE"} }, `environment entry "NOVALUE": want KEY=value`},
	}
	for _, tt := range tests {
		s := validService()
		tt.edit(&s)
		err := s.validate()
		if (tt.err == "") != (err == nil) || (err != nil && err.Error() != tt.err) {
			t.Errorf("validate = %v; want %q", err, tt.err)
		}
	}
}

// TestServiceProperties pins what a service unit gets, in order.
func TestServiceProperties(t *testing.T) {
	s := validService()
	s.RestartOnFailure = true
	s.Limits = Limits{TasksMax: 64}
	var got []string
	for _, p := range s.properties() {
		got = append(got, p.Name+"="+p.Value.String())
	}
	want := []string{
		`Description="aisan service nightly"`,
		`Type="exec"`,
		// false: systemd's "ignore failure" flag is off.
		`ExecStart=[("/usr/bin/aisan", ["/usr/bin/aisan", "__stage", "3"], false,)]`,
		`WorkingDirectory="/home/u/repo"`,
		`Environment=["HOME=/home/u", "AISAN_JAIL=svc-nightly"]`,
		`StandardInput="null"`,
		`StandardOutputFileToAppend="/home/u/.aisan/slots/svc-nightly/transcript"`,
		`StandardErrorFileToAppend="/home/u/.aisan/slots/svc-nightly/transcript"`,
		`RuntimeMaxUSec=@t 3600000000`,
		`TimeoutStopUSec=@t 10000000`,
		`Restart="on-failure"`,
		`TasksMax=@t 64`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("properties:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	s.RestartOnFailure = false
	s.MaxRuntime = 2 * time.Second
	for _, p := range s.properties() {
		switch p.Name {
		case "Restart":
			if p.Value.String() != `"no"` {
				t.Errorf("Restart = %s; want \"no\"", p.Value)
			}
		case "RuntimeMaxUSec":
			if p.Value.String() != "@t 2000000" {
				t.Errorf("RuntimeMaxUSec = %s; want 2000000", p.Value)
			}
		}
	}
}
