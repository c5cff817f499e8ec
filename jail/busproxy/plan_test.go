package busproxy

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// env turns a map into a lookupEnv function.
func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

const (
	rt       = "/run/user/1000"
	rtBus    = "/run/user/1000/bus"
	slotDir  = "/run/user/1000/aisan/3f9c2a1b"
	slotBus  = "/run/user/1000/aisan/3f9c2a1b/bus"
	proxyBin = "/usr/bin/xdg-dbus-proxy"
)

var defaultTalk = []string{"org.freedesktop.secrets", "org.freedesktop.Notifications", "org.freedesktop.portal.*"}

func TestDecide(t *testing.T) {
	installed := HostFacts{ProxyPath: proxyBin, SlotDir: slotDir, Sockets: []string{rtBus}}
	tests := []struct {
		name  string
		env   map[string]string
		facts HostFacts
		want  Plan
	}{
		{
			name:  "filtered, the usual desktop",
			env:   map[string]string{EnvAddress: "unix:path=/run/user/1000/bus", envRuntimeDir: rt},
			facts: installed,
			want: Plan{
				Mode: Filtered, HostAddress: "unix:path=/run/user/1000/bus", HostSockets: []string{rtBus},
				Talk: defaultTalk, Proxy: proxyBin, ProxySocket: slotBus,
				JailSocket: rtBus, JailAddress: "unix:path=/run/user/1000/bus",
			},
		},
		{
			name:  "variable unset: fall back to XDG_RUNTIME_DIR/bus like clients",
			env:   map[string]string{envRuntimeDir: rt},
			facts: installed,
			want: Plan{
				Mode: Filtered, HostAddress: "unix:path=/run/user/1000/bus", HostSockets: []string{rtBus},
				Talk: defaultTalk, Proxy: proxyBin, ProxySocket: slotBus,
				JailSocket: rtBus, JailAddress: "unix:path=/run/user/1000/bus",
			},
		},
		{
			name:  "variable empty counts as unset",
			env:   map[string]string{EnvAddress: "", envRuntimeDir: rt},
			facts: installed,
			want: Plan{
				Mode: Filtered, HostAddress: "unix:path=/run/user/1000/bus", HostSockets: []string{rtBus},
				Talk: defaultTalk, Proxy: proxyBin, ProxySocket: slotBus,
				JailSocket: rtBus, JailAddress: "unix:path=/run/user/1000/bus",
			},
		},
		{
			name:  "no bus at all: nothing to mask, no message",
			env:   map[string]string{envRuntimeDir: rt},
			facts: HostFacts{SlotDir: slotDir},
			want:  Plan{Mode: None, Why: "no session bus"},
		},
		{
			name:  "no bus and no XDG_RUNTIME_DIR",
			env:   map[string]string{},
			facts: HostFacts{ProxyPath: proxyBin, SlotDir: slotDir, Sockets: []string{rtBus}},
			want:  Plan{Mode: None, Why: "no session bus"},
		},
		{
			name: "custom talk list, escaped socket path, second bus at the runtime dir masked",
			env: map[string]string{
				EnvAddress: "unix:path=/tmp/dbus%20x,guid=42", envRuntimeDir: rt,
				EnvTalk: "org.example.A org.example.B.*",
			},
			facts: HostFacts{ProxyPath: proxyBin, SlotDir: slotDir, Sockets: []string{"/tmp/dbus x", rtBus}},
			want: Plan{
				Mode: Filtered, HostAddress: "unix:path=/tmp/dbus%20x,guid=42", HostSockets: []string{"/tmp/dbus x", rtBus},
				Talk: []string{"org.example.A", "org.example.B.*"}, Proxy: proxyBin, ProxySocket: slotBus,
				JailSocket: "/tmp/dbus x", JailAddress: "unix:path=/tmp/dbus%20x",
			},
		},
		{
			name:  "empty talk list: the bus itself only",
			env:   map[string]string{EnvAddress: "unix:path=/run/user/1000/bus", envRuntimeDir: rt, EnvTalk: " "},
			facts: installed,
			want: Plan{
				Mode: Filtered, HostAddress: "unix:path=/run/user/1000/bus", HostSockets: []string{rtBus},
				Proxy: proxyBin, ProxySocket: slotBus, JailSocket: rtBus, JailAddress: "unix:path=/run/user/1000/bus",
			},
		},
		{
			name:  "socket path that does not exist is not mounted over",
			env:   map[string]string{EnvAddress: "unix:path=/gone/bus", envRuntimeDir: rt},
			facts: HostFacts{ProxyPath: proxyBin, SlotDir: slotDir},
			want: Plan{
				Mode: Filtered, HostAddress: "unix:path=/gone/bus",
				Talk: defaultTalk, Proxy: proxyBin, ProxySocket: slotBus,
				JailSocket: slotBus, JailAddress: "unix:path=/run/user/1000/aisan/3f9c2a1b/bus",
			},
		},
		{
			name:  "AISAN_NO_BUS_PROXY=1 masks",
			env:   map[string]string{EnvAddress: "unix:path=/run/user/1000/bus", envRuntimeDir: rt, EnvNoProxy: "1"},
			facts: installed,
			want: Plan{
				Mode: Masked, Why: "AISAN_NO_BUS_PROXY=1", HostAddress: "unix:path=/run/user/1000/bus",
				HostSockets: []string{rtBus}, JailAddress: "unix:path=/run/user/1000/bus",
			},
		},
		{
			name:  "AISAN_NO_BUS_PROXY=0 filters",
			env:   map[string]string{EnvAddress: "unix:path=/run/user/1000/bus", envRuntimeDir: rt, EnvNoProxy: "0"},
			facts: installed,
			want: Plan{
				Mode: Filtered, HostAddress: "unix:path=/run/user/1000/bus", HostSockets: []string{rtBus},
				Talk: defaultTalk, Proxy: proxyBin, ProxySocket: slotBus,
				JailSocket: rtBus, JailAddress: "unix:path=/run/user/1000/bus",
			},
		},
		{
			name:  "no proxy installed: masked, with what to install",
			env:   map[string]string{EnvAddress: "unix:path=/run/user/1000/bus", envRuntimeDir: rt},
			facts: HostFacts{SlotDir: slotDir, Sockets: []string{rtBus}},
			want: Plan{
				Mode: Masked, Why: "xdg-dbus-proxy is not installed", HostAddress: "unix:path=/run/user/1000/bus",
				HostSockets: []string{rtBus}, JailAddress: "unix:path=/run/user/1000/bus",
				Warnings: []string{"xdg-dbus-proxy is not installed, so the session bus is masked in the jail " +
					"(no keyring, notifications or portals); install it (apt-get install xdg-dbus-proxy) " +
					"to let the names in AISAN_BUS_TALK through"},
			},
		},
		{
			name:  "abstract bus: filtered, with the caveat",
			env:   map[string]string{EnvAddress: "unix:abstract=/tmp/dbus-Xy,guid=9", envRuntimeDir: rt},
			facts: HostFacts{ProxyPath: proxyBin, SlotDir: slotDir},
			want: Plan{
				Mode: Filtered, HostAddress: "unix:abstract=/tmp/dbus-Xy,guid=9", Abstract: true,
				Talk: defaultTalk, Proxy: proxyBin, ProxySocket: slotBus,
				JailSocket: slotBus, JailAddress: "unix:path=/run/user/1000/aisan/3f9c2a1b/bus",
				Warnings: []string{"the session bus is reachable at unix:abstract=/tmp/dbus-Xy,guid=9, which no mount can hide: " +
					"the jail shares the host's network namespace, so it can reach the whole bus there, bypassing the filter; " +
					"run the session bus on a socket path (unix:path=...) to close that channel"},
			},
		},
		{
			name:  "abstract bus and a runtime-dir socket: the proxy goes over the socket",
			env:   map[string]string{EnvAddress: "unix:abstract=/tmp/dbus-Xy", envRuntimeDir: rt, EnvTalk: "org.example.A"},
			facts: installed,
			want: Plan{
				Mode: Filtered, HostAddress: "unix:abstract=/tmp/dbus-Xy", Abstract: true, HostSockets: []string{rtBus},
				Talk: []string{"org.example.A"}, Proxy: proxyBin, ProxySocket: slotBus,
				JailSocket: rtBus, JailAddress: "unix:path=/run/user/1000/bus",
				Warnings: []string{"the session bus is reachable at unix:abstract=/tmp/dbus-Xy, which no mount can hide: " +
					"the jail shares the host's network namespace, so it can reach the whole bus there, bypassing the filter; " +
					"run the session bus on a socket path (unix:path=...) to close that channel"},
			},
		},
		{
			name:  "abstract bus masked, no path: the variable is unset",
			env:   map[string]string{EnvAddress: "unix:abstract=/tmp/dbus-Xy", EnvNoProxy: "1"},
			facts: HostFacts{ProxyPath: proxyBin, SlotDir: slotDir},
			want: Plan{
				Mode: Masked, Why: "AISAN_NO_BUS_PROXY=1", HostAddress: "unix:abstract=/tmp/dbus-Xy", Abstract: true,
				Warnings: []string{"the session bus is reachable at unix:abstract=/tmp/dbus-Xy, which no mount can hide: " +
					"the jail shares the host's network namespace, so it can reach the whole bus there, bypassing the mask; " +
					"run the session bus on a socket path (unix:path=...) to close that channel"},
			},
		},
		{
			name:  "tcp is as unmaskable as abstract",
			env:   map[string]string{EnvAddress: "tcp:host=127.0.0.1,port=5555", EnvTalk: ""},
			facts: HostFacts{ProxyPath: proxyBin, SlotDir: slotDir},
			want: Plan{
				Mode: Filtered, HostAddress: "tcp:host=127.0.0.1,port=5555", Abstract: true,
				Proxy: proxyBin, ProxySocket: slotBus,
				JailSocket: slotBus, JailAddress: "unix:path=/run/user/1000/aisan/3f9c2a1b/bus",
				Warnings: []string{"the session bus is reachable at tcp:host=127.0.0.1,port=5555, which no mount can hide: " +
					"the jail shares the host's network namespace, so it can reach the whole bus there, bypassing the filter; " +
					"run the session bus on a socket path (unix:path=...) to close that channel"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := clonePlanFacts(tt.facts)
			got, err := Decide(env(tt.env), tt.facts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Decide (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, tt.facts); diff != "" {
				t.Errorf("Decide changed its facts (-before +after):\n%s", diff)
			}
		})
	}
}

func clonePlanFacts(f HostFacts) HostFacts {
	f.Sockets = slices.Clone(f.Sockets)
	return f
}

func TestDecideErrors(t *testing.T) {
	facts := HostFacts{ProxyPath: proxyBin, SlotDir: slotDir, Sockets: []string{rtBus}}
	tests := []struct {
		name  string
		env   map[string]string
		facts HostFacts
		want  string
	}{
		{
			name: "bad talk name is named",
			env:  map[string]string{EnvAddress: "unix:path=/run/user/1000/bus", EnvTalk: "org.freedesktop.Notifications org.*"},
			want: `reading AISAN_BUS_TALK: "org.*" is not a D-Bus bus name or NAME.* pattern: it needs at least two elements separated by '.'; fix or unset it`,
		},
		{
			name: "bad talk name fails even when masked",
			env:  map[string]string{EnvAddress: "unix:path=/run/user/1000/bus", EnvNoProxy: "1", EnvTalk: "x"},
			want: `reading AISAN_BUS_TALK: "x" is not`,
		},
		{
			name: "bad no-proxy value",
			env:  map[string]string{EnvNoProxy: "yes"},
			want: `reading AISAN_NO_BUS_PROXY="yes": want 1 (mask the session bus) or 0 (filter it)`,
		},
		{
			name: "unparseable address",
			env:  map[string]string{EnvAddress: "unix:path=/a,path=/b"},
			want: `parsing DBUS_SESSION_BUS_ADDRESS="unix:path=/a,path=/b": address entry "unix:path=/a,path=/b": key "path" appears twice; fix or unset it`,
		},
		{
			name:  "filtered needs a slot dir",
			env:   map[string]string{EnvAddress: "unix:path=/run/user/1000/bus"},
			facts: HostFacts{ProxyPath: proxyBin, SlotDir: "relative"},
			want:  `bug: the slot runtime dir "relative"`,
		},
		{
			name:  "socket path too long for a Unix socket",
			env:   map[string]string{EnvAddress: "unix:path=/run/user/1000/bus"},
			facts: HostFacts{ProxyPath: proxyBin, SlotDir: "/" + strings.Repeat("d", 104)},
			want:  `the bus proxy's socket path "/ddd`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := facts
			if tt.facts.ProxyPath != "" {
				f = tt.facts
			}
			_, err := Decide(env(tt.env), f)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("Decide error = %v, want one starting %s", err, tt.want)
			}
		})
	}
	_, err := Decide(env(map[string]string{EnvNoProxy: "true"}), facts)
	if !errors.Is(err, errNoProxyValue) {
		t.Errorf("AISAN_NO_BUS_PROXY=true: error %v does not wrap errNoProxyValue", err)
	}
}

func TestArgv(t *testing.T) {
	p, err := Decide(env(map[string]string{EnvAddress: "unix:path=/run/user/1000/bus,guid=7", envRuntimeDir: rt}),
		HostFacts{ProxyPath: proxyBin, SlotDir: slotDir, Sockets: []string{rtBus}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		proxyBin, "--fd=3", "unix:path=/run/user/1000/bus,guid=7", slotBus, "--filter",
		"--talk=org.freedesktop.secrets", "--talk=org.freedesktop.Notifications", "--talk=org.freedesktop.portal.*",
	}
	if diff := cmp.Diff(want, Argv(p)); diff != "" {
		t.Errorf("Argv (-want +got):\n%s", diff)
	}
	if got := Argv(Plan{Mode: Masked}); got != nil {
		t.Errorf("Argv(masked) = %q, want nil", got)
	}
}

func TestMounts(t *testing.T) {
	tests := []struct {
		name string
		plan Plan
		want []Mount
	}{
		{name: "none", plan: Plan{Mode: None}, want: nil},
		{
			name: "masked covers every socket",
			plan: Plan{Mode: Masked, HostSockets: []string{"/tmp/b", rtBus}},
			want: []Mount{{Dst: "/tmp/b"}, {Dst: rtBus}},
		},
		{
			name: "filtered: masks first, the proxy last",
			plan: Plan{Mode: Filtered, HostSockets: []string{"/var/run/user/1000/bus", rtBus}, ProxySocket: slotBus, JailSocket: "/var/run/user/1000/bus"},
			want: []Mount{{Dst: rtBus}, {Src: slotBus, Dst: "/var/run/user/1000/bus"}},
		},
		{
			name: "filtered without a host socket: nothing to bind",
			plan: Plan{Mode: Filtered, ProxySocket: slotBus, JailSocket: slotBus},
			want: nil,
		},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, tt.plan.Mounts()); diff != "" {
			t.Errorf("%s: Mounts (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestApplyEnv(t *testing.T) {
	in := []string{"A=1", "DBUS_SESSION_BUS_ADDRESS=unix:abstract=/x", "B=2"}
	keep := slices.Clone(in)
	tests := []struct {
		plan Plan
		want []string
	}{
		{Plan{Mode: None}, in},
		{Plan{Mode: Filtered, JailAddress: "unix:path=/run/user/1000/bus"}, []string{"A=1", "B=2", "DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus"}},
		{Plan{Mode: Masked}, []string{"A=1", "B=2"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, tt.plan.ApplyEnv(in)); diff != "" {
			t.Errorf("%s: ApplyEnv (-want +got):\n%s", tt.plan.Mode, diff)
		}
	}
	if diff := cmp.Diff(keep, in); diff != "" {
		t.Errorf("ApplyEnv changed its input:\n%s", diff)
	}
}

func TestPlanString(t *testing.T) {
	for _, tt := range []struct {
		plan Plan
		want string
	}{
		{Plan{Mode: Filtered, Talk: []string{"a.b", "c.d.*"}}, "filtered (talk: a.b c.d.*)"},
		{Plan{Mode: Filtered}, "filtered (talk: nothing but the bus itself)"},
		{Plan{Mode: Masked, Why: "AISAN_NO_BUS_PROXY=1"}, "masked (AISAN_NO_BUS_PROXY=1)"},
		{Plan{Mode: None, Why: "no session bus"}, "none (no session bus)"},
		{Plan{Mode: Mode(7)}, "Mode(7)"},
	} {
		if got := tt.plan.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

func TestCandidates(t *testing.T) {
	got := Candidates(env(map[string]string{
		EnvAddress:    "unix:abstract=/a;unix:path=/tmp/x/../bus;unix:path=relative;unix:path=/run/user/1000/bus",
		envRuntimeDir: rt,
	}))
	want := []string{"/tmp/bus", rtBus}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Candidates (-want +got):\n%s", diff)
	}
}
