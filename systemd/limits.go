package systemd

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"

	sd "github.com/coreos/go-systemd/v22/dbus"
	"github.com/godbus/dbus/v5"
)

// Limits are the resource limits of one jail, passed to systemd as
// properties of its scope or service. A zero field means "no setting": the
// unit inherits the user manager's default. [Unlimited] in a field says "no
// limit" explicitly, which lets a flag lift a default from AISAN_LIMITS.
//
// Limits only take effect when the matching cgroup controller is delegated
// to the user manager; see [CheckDelegation].
type Limits struct {
	// MemoryMax is the memory.max of the unit's cgroup, in bytes
	// (systemd MemoryMax=; controller "memory").
	MemoryMax uint64
	// CPUQuotaPerSecUSec is the CPU time the unit may use per second of
	// wall-clock time, in microseconds: 1_000_000 is one whole CPU
	// (systemd CPUQuota=100%; controller "cpu").
	CPUQuotaPerSecUSec uint64
	// TasksMax caps the number of processes and threads in the unit
	// (systemd TasksMax=; controller "pids").
	TasksMax uint64
}

// Unlimited is the value of a [Limits] field that means "no limit"; it is
// systemd's "infinity" for all three properties.
const Unlimited = math.MaxUint64

// EnvLimits names the environment variable that holds default limits in
// the syntax of [ParseLimits].
const EnvLimits = "AISAN_LIMITS"

// IsZero reports whether l sets nothing.
func (l Limits) IsZero() bool { return l == Limits{} }

// Merge returns l with every field that override sets replaced by
// override's value: flags over AISAN_LIMITS defaults.
func (l Limits) Merge(override Limits) Limits {
	if override.MemoryMax != 0 {
		l.MemoryMax = override.MemoryMax
	}
	if override.CPUQuotaPerSecUSec != 0 {
		l.CPUQuotaPerSecUSec = override.CPUQuotaPerSecUSec
	}
	if override.TasksMax != 0 {
		l.TasksMax = override.TasksMax
	}
	return l
}

// String formats l in the syntax [ParseLimits] reads, fields in a fixed
// order, unset fields left out: "memory=4G cpu=200% tasks=512".
func (l Limits) String() string {
	var parts []string
	if l.MemoryMax != 0 {
		parts = append(parts, "memory="+FormatMemory(l.MemoryMax))
	}
	if l.CPUQuotaPerSecUSec != 0 {
		parts = append(parts, "cpu="+FormatCPUQuota(l.CPUQuotaPerSecUSec))
	}
	if l.TasksMax != 0 {
		parts = append(parts, "tasks="+FormatTasks(l.TasksMax))
	}
	return strings.Join(parts, " ")
}

// properties returns the unit properties that apply l, in a fixed order.
func (l Limits) properties() []sd.Property {
	var props []sd.Property
	if l.MemoryMax != 0 {
		props = append(props, sd.Property{Name: "MemoryMax", Value: dbus.MakeVariant(l.MemoryMax)})
	}
	if l.CPUQuotaPerSecUSec != 0 {
		props = append(props, sd.Property{Name: "CPUQuotaPerSecUSec", Value: dbus.MakeVariant(l.CPUQuotaPerSecUSec)})
	}
	if l.TasksMax != 0 {
		props = append(props, sd.Property{Name: "TasksMax", Value: dbus.MakeVariant(l.TasksMax)})
	}
	return props
}

// limitKeys maps each key ParseLimits accepts to the field it sets. The
// long forms are the launcher flags' names, so "--memory-max 4G" and
// "memory-max=4G" in AISAN_LIMITS mean the same.
var limitKeys = []struct {
	names []string
	parse func(string) (uint64, error)
	field func(*Limits) *uint64
}{
	{[]string{"memory", "memory-max"}, ParseMemory, func(l *Limits) *uint64 { return &l.MemoryMax }},
	{[]string{"cpu", "cpu-quota"}, ParseCPUQuota, func(l *Limits) *uint64 { return &l.CPUQuotaPerSecUSec }},
	{[]string{"tasks", "tasks-max"}, ParseTasks, func(l *Limits) *uint64 { return &l.TasksMax }},
}

// ParseLimits parses limits written as space- or comma-separated key=value
// pairs, as in AISAN_LIMITS: "memory=4G cpu=200% tasks=512". The keys are
// memory (or memory-max), cpu (or cpu-quota) and tasks (or tasks-max); each
// may appear once, and the values are those of [ParseMemory],
// [ParseCPUQuota] and [ParseTasks]. An empty string sets nothing.
func ParseLimits(s string) (Limits, error) {
	var l Limits
	seen := map[int]string{}
	fields := strings.FieldsFunc(s, func(r rune) bool {
		return r == ',' || r == ' ' || r == '\t' || r == '\n'
	})
	for _, f := range fields {
		key, val, ok := strings.Cut(f, "=")
		if !ok {
			return Limits{}, fmt.Errorf("limit %q: want key=value, like memory=4G", f)
		}
		idx := -1
		for i, k := range limitKeys {
			for _, n := range k.names {
				if n == key {
					idx = i
				}
			}
		}
		if idx < 0 {
			return Limits{}, fmt.Errorf("limit %q: unknown key %q (known: memory, cpu, tasks)", f, key)
		}
		if prev, dup := seen[idx]; dup {
			return Limits{}, fmt.Errorf("limit %q: %s is already set by %q", f, limitKeys[idx].names[0], prev)
		}
		seen[idx] = f
		v, err := limitKeys[idx].parse(val)
		if err != nil {
			return Limits{}, fmt.Errorf("limit %q: %w", f, err)
		}
		*limitKeys[idx].field(&l) = v
	}
	return l, nil
}

// Binary size units, as systemd reads them (K is 1024).
var sizeUnits = []struct {
	suffix byte
	shift  uint
}{
	{'K', 10}, {'M', 20}, {'G', 30}, {'T', 40}, {'P', 50}, {'E', 60},
}

// ParseMemory parses a memory size as for --memory-max: a byte count
// ("1073741824"), a number with a binary unit K, M, G, T, P or E, either
// case, optionally with a decimal fraction ("4G", "512m", "1.5G"), or
// "infinity" for [Unlimited]. The result is rounded down to whole bytes and
// is at least one byte.
func ParseMemory(s string) (uint64, error) {
	if s == "infinity" {
		return Unlimited, nil
	}
	if s == "" {
		return 0, errors.New("empty memory size: write a size like 4G, 512M or 1073741824")
	}
	num, shift := s, uint(0)
	last := s[len(s)-1]
	if 'a' <= last && last <= 'z' {
		last -= 'a' - 'A'
	}
	for _, u := range sizeUnits {
		if last == u.suffix {
			num, shift = s[:len(s)-1], u.shift
		}
	}
	whole, frac, hasFrac := strings.Cut(num, ".")
	if !allDigits(whole) || (hasFrac && (!allDigits(frac) || shift == 0)) {
		return 0, fmt.Errorf("memory size %q: write a size like 4G, 512M, 1.5G or 1073741824 (bytes), or infinity", s)
	}
	w, err := strconv.ParseUint(whole, 10, 64)
	if err != nil || w > math.MaxUint64>>shift {
		return 0, fmt.Errorf("memory size %q is too large", s)
	}
	v := w << shift
	if hasFrac {
		// frac/10^len(frac) of one unit, rounded down. 19 digits keep
		// 10^len(frac) within uint64 and are more precision than any unit
		// can use.
		if len(frac) > 19 {
			frac = frac[:19]
		}
		f, _ := strconv.ParseUint(frac, 10, 64)
		den := uint64(1)
		for range len(frac) {
			den *= 10
		}
		hi, lo := bits.Mul64(f, uint64(1)<<shift)
		part, _ := bits.Div64(hi, lo, den) // f < den, so hi < den
		if v > math.MaxUint64-part {
			return 0, fmt.Errorf("memory size %q is too large", s)
		}
		v += part
	}
	if v == 0 {
		return 0, fmt.Errorf("memory size %q is zero: leave the limit out instead, or write infinity", s)
	}
	if v == Unlimited {
		return 0, fmt.Errorf("memory size %q is too large", s)
	}
	return v, nil
}

// FormatMemory writes n bytes the way [ParseMemory] reads them, in the
// largest binary unit that divides it exactly.
func FormatMemory(n uint64) string {
	if n == Unlimited {
		return "infinity"
	}
	for i := len(sizeUnits) - 1; i >= 0; i-- {
		u := sizeUnits[i]
		if n != 0 && n%(1<<u.shift) == 0 {
			return strconv.FormatUint(n>>u.shift, 10) + string(u.suffix)
		}
	}
	return strconv.FormatUint(n, 10)
}

// ParseCPUQuota parses a CPU quota as for --cpu-quota: a percentage of one
// CPU with up to four decimals ("50%", "150%", "12.5%"), as systemd's
// CPUQuota= reads it, or "infinity" for [Unlimited]. 100% is one whole CPU,
// so 200% allows two. The result is in microseconds per second.
func ParseCPUQuota(s string) (uint64, error) {
	if s == "infinity" {
		return Unlimited, nil
	}
	num, ok := strings.CutSuffix(s, "%")
	whole, frac, hasFrac := strings.Cut(num, ".")
	if !ok || !allDigits(whole) || (hasFrac && !allDigits(frac)) || len(frac) > 4 {
		return 0, fmt.Errorf("cpu quota %q: write a percentage of one CPU, like 50%%, 150%% or 12.5%%, or infinity", s)
	}
	w, err := strconv.ParseUint(whole, 10, 64)
	const perPercent = 10_000 // µs per second for 1% of a CPU
	if err != nil || w > math.MaxUint64/perPercent-1 {
		return 0, fmt.Errorf("cpu quota %q is too large", s)
	}
	v := w * perPercent
	if hasFrac {
		f, _ := strconv.ParseUint(frac+strings.Repeat("0", 4-len(frac)), 10, 64)
		v += f // four decimals of a percent are exactly 1 µs each
	}
	if v == 0 {
		return 0, fmt.Errorf("cpu quota %q is zero: leave the limit out instead, or write infinity", s)
	}
	return v, nil
}

// FormatCPUQuota writes a quota in microseconds per second the way
// [ParseCPUQuota] reads it.
func FormatCPUQuota(usec uint64) string {
	if usec == Unlimited {
		return "infinity"
	}
	s := strconv.FormatUint(usec/10_000, 10)
	if r := usec % 10_000; r != 0 {
		s += strings.TrimRight(fmt.Sprintf(".%04d", r), "0")
	}
	return s + "%"
}

// ParseTasks parses a task limit as for --tasks-max: a positive count of
// processes and threads ("512"), or "infinity" for [Unlimited].
func ParseTasks(s string) (uint64, error) {
	if s == "infinity" {
		return Unlimited, nil
	}
	if !allDigits(s) {
		return 0, fmt.Errorf("task limit %q: write a number of processes and threads, like 512, or infinity", s)
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil || v == Unlimited {
		return 0, fmt.Errorf("task limit %q is too large", s)
	}
	if v == 0 {
		return 0, fmt.Errorf("task limit %q is zero: leave the limit out instead, or write infinity", s)
	}
	return v, nil
}

// FormatTasks writes a task limit the way [ParseTasks] reads it.
func FormatTasks(n uint64) string {
	if n == Unlimited {
		return "infinity"
	}
	return strconv.FormatUint(n, 10)
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
