package systemd

import (
	"strings"
	"testing"
)

// limitTests seed FuzzParseLimits as well.
var limitTests = []struct {
	in   string
	want Limits
	err  string // substring of the error; "" for success
}{
	{"", Limits{}, ""},
	{"   ", Limits{}, ""},
	{"memory=4G cpu=200% tasks=512", Limits{MemoryMax: 4 << 30, CPUQuotaPerSecUSec: 2_000_000, TasksMax: 512}, ""},
	{"memory=4G,cpu=200%,tasks=512", Limits{MemoryMax: 4 << 30, CPUQuotaPerSecUSec: 2_000_000, TasksMax: 512}, ""},
	{"memory-max=512M cpu-quota=50% tasks-max=64", Limits{MemoryMax: 512 << 20, CPUQuotaPerSecUSec: 500_000, TasksMax: 64}, ""},
	{"tasks=infinity", Limits{TasksMax: Unlimited}, ""},
	{"memory=infinity cpu=infinity", Limits{MemoryMax: Unlimited, CPUQuotaPerSecUSec: Unlimited}, ""},
	{"cpu=12.5%", Limits{CPUQuotaPerSecUSec: 125_000}, ""},
	{"memory=1.5G", Limits{MemoryMax: 3 << 29}, ""},
	{"memory=1073741824", Limits{MemoryMax: 1 << 30}, ""},
	{"memory=64k", Limits{MemoryMax: 64 << 10}, ""},
	{"memory", Limits{}, `limit "memory": want key=value, like memory=4G`},
	{"mem=4G", Limits{}, `limit "mem=4G": unknown key "mem" (known: memory, cpu, tasks)`},
	{"memory=4G memory-max=2G", Limits{}, `limit "memory-max=2G": memory is already set by "memory=4G"`},
	{"memory=4X", Limits{}, `memory size "4X": write a size like 4G`},
	{"memory=", Limits{}, "empty memory size"},
	{"memory=1.5", Limits{}, `memory size "1.5": write a size`},
	{"memory=-1G", Limits{}, `memory size "-1G"`},
	{"memory=0", Limits{}, `memory size "0" is zero`},
	{"memory=16E", Limits{}, `memory size "16E" is too large`},
	{"memory=99999999999999999999", Limits{}, "too large"},
	{"cpu=200", Limits{}, `cpu quota "200": write a percentage of one CPU, like 50%, 150% or 12.5%, or infinity`},
	{"cpu=0%", Limits{}, "is zero"},
	{"cpu=1.23456%", Limits{}, "write a percentage"},
	{"cpu=%", Limits{}, "write a percentage"},
	{"tasks=0", Limits{}, "is zero"},
	{"tasks=-5", Limits{}, `task limit "-5": write a number`},
	{"tasks=18446744073709551615", Limits{}, "too large"},
}

func TestParseLimits(t *testing.T) {
	for _, tt := range limitTests {
		got, err := ParseLimits(tt.in)
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("ParseLimits(%q): %v", tt.in, err)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("ParseLimits(%q) error = %v; want one containing %q", tt.in, err, tt.err)
		case got != tt.want:
			t.Errorf("ParseLimits(%q) = %+v; want %+v", tt.in, got, tt.want)
		}
	}
}

// TestParseFlagValues covers the single values the launcher flags take.
func TestParseFlagValues(t *testing.T) {
	tests := []struct {
		parse func(string) (uint64, error)
		in    string
		want  uint64
	}{
		{ParseMemory, "4G", 4 << 30},
		{ParseMemory, "4g", 4 << 30},
		{ParseMemory, "512M", 512 << 20},
		{ParseMemory, "0.5K", 512},
		{ParseMemory, "1.0000000000000000000001K", 1024},
		{ParseMemory, "1T", 1 << 40},
		{ParseMemory, "15E", 15 << 60},
		{ParseMemory, "1", 1},
		{ParseCPUQuota, "150%", 1_500_000},
		{ParseCPUQuota, "0.01%", 100},
		{ParseCPUQuota, "0.0001%", 1},
		{ParseCPUQuota, "100%", 1_000_000},
		{ParseTasks, "512", 512},
		{ParseTasks, "infinity", Unlimited},
	}
	for _, tt := range tests {
		got, err := tt.parse(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("parse(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
}

func TestLimitsString(t *testing.T) {
	tests := []struct {
		l    Limits
		want string
	}{
		{Limits{}, ""},
		{Limits{MemoryMax: 4 << 30, CPUQuotaPerSecUSec: 2_000_000, TasksMax: 512}, "memory=4G cpu=200% tasks=512"},
		{Limits{MemoryMax: 3 << 29}, "memory=1536M"},
		{Limits{MemoryMax: 1000}, "memory=1000"},
		{Limits{CPUQuotaPerSecUSec: 125_000}, "cpu=12.5%"},
		{Limits{CPUQuotaPerSecUSec: 1}, "cpu=0.0001%"},
		{Limits{MemoryMax: Unlimited, CPUQuotaPerSecUSec: Unlimited, TasksMax: Unlimited}, "memory=infinity cpu=infinity tasks=infinity"},
	}
	for _, tt := range tests {
		if got := tt.l.String(); got != tt.want {
			t.Errorf("%+v.String() = %q; want %q", tt.l, got, tt.want)
		}
	}
}

func TestLimitsMerge(t *testing.T) {
	env := Limits{MemoryMax: 4 << 30, TasksMax: 512}
	flags := Limits{TasksMax: Unlimited, CPUQuotaPerSecUSec: 500_000}
	want := Limits{MemoryMax: 4 << 30, CPUQuotaPerSecUSec: 500_000, TasksMax: Unlimited}
	if got := env.Merge(flags); got != want {
		t.Errorf("Merge = %+v; want %+v", got, want)
	}
	if got := env.Merge(Limits{}); got != env {
		t.Errorf("Merge(zero) = %+v; want %+v", got, env)
	}
}

func TestLimitsProperties(t *testing.T) {
	l := Limits{MemoryMax: 1 << 30, CPUQuotaPerSecUSec: 200_000, TasksMax: Unlimited}
	var got []string
	for _, p := range l.properties() {
		got = append(got, p.Name+"="+p.Value.String())
	}
	want := "MemoryMax=@t 1073741824 CPUQuotaPerSecUSec=@t 200000 TasksMax=@t 18446744073709551615"
	if strings.Join(got, " ") != want {
		t.Errorf("properties = %q; want %q", strings.Join(got, " "), want)
	}
	if len((Limits{}).properties()) != 0 {
		t.Error("zero Limits yields properties")
	}
}

func FuzzParseLimits(f *testing.F) {
	for _, tt := range limitTests {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := ParseLimits(s)
		if err != nil {
			return
		}
		// What parses formats back to the same limits.
		again, err := ParseLimits(l.String())
		if err != nil {
			t.Fatalf("ParseLimits(%q) = %+v, whose String %q does not parse: %v", s, l, l.String(), err)
		}
		if again != l {
			t.Fatalf("round trip of %q: %+v → %q → %+v", s, l, l.String(), again)
		}
	})
}
