package systemd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
)

// A limit on a --user unit is only enforced when its cgroup controller is
// delegated to the user manager; otherwise systemd accepts the property and
// silently does nothing (systemd/systemd#9641). Delegation is visible as the
// controller names in the cgroup.controllers file of the manager's cgroup
// (user@UID.service).

// limitControllers maps each limit to its controller, in Limits field
// order, with the AISAN_LIMITS key that names the limit for the user.
var limitControllers = []struct {
	key, controller string
	set             func(Limits) bool
}{
	{"memory", "memory", func(l Limits) bool { return l.MemoryMax != 0 && l.MemoryMax != Unlimited }},
	{"cpu", "cpu", func(l Limits) bool { return l.CPUQuotaPerSecUSec != 0 && l.CPUQuotaPerSecUSec != Unlimited }},
	{"tasks", "pids", func(l Limits) bool { return l.TasksMax != 0 && l.TasksMax != Unlimited }},
}

// MissingControllers returns the controllers that the limits set in l need
// and delegated lacks, in Limits field order. Fields that are unset or
// [Unlimited] need no controller.
func MissingControllers(l Limits, delegated []string) []string {
	var missing []string
	for _, lc := range limitControllers {
		if lc.set(l) && !slices.Contains(delegated, lc.controller) {
			missing = append(missing, lc.controller)
		}
	}
	return missing
}

// UndelegatedError says which limits would be silent no-ops and why. A
// launcher prints it once as a warning and runs the jail anyway.
type UndelegatedError struct {
	// Limits are the AISAN_LIMITS keys of the ignored limits ("memory").
	Limits []string
	// Missing are the controllers those limits need.
	Missing []string
	// Delegated are the controllers the user manager has.
	Delegated []string
	// V1 are the missing controllers that the host mounts on a cgroup v1
	// hierarchy, where no user manager can have them.
	V1 []string
}

func (e *UndelegatedError) Error() string {
	has := strings.Join(e.Delegated, " ")
	if has == "" {
		has = "none"
	}
	return fmt.Sprintf("the %s %s would be ignored: the %s cgroup %s not delegated to the systemd user manager (it has: %s)",
		joinAnd(e.Limits), plural(len(e.Limits), "limit", "limits"),
		joinAnd(e.Missing), plural(len(e.Missing), "controller is", "controllers are"), has)
}

// Hints says how to get the controllers delegated.
func (e *UndelegatedError) Hints() []string {
	if len(e.V1) > 0 {
		return []string{
			fmt.Sprintf("this host mounts %s on cgroup v1; boot with systemd.unified_cgroup_hierarchy=1 for a pure cgroup v2 layout", joinAnd(e.V1)),
		}
	}
	return []string{
		`delegate them: run "sudo systemctl edit user@.service", add "[Service]" and "Delegate=cpu memory pids", then log out and in again`,
	}
}

// joinAnd joins words as prose: "a", "a and b", "a, b and c".
func joinAnd(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// CheckDelegation returns nil when every limit set in l can take effect
// with the delegated controllers, or an *[UndelegatedError] naming the
// ones that would be ignored. v1 lists the controllers the host mounts on
// cgroup v1 (from [V1Controllers]), only to word the hint.
func CheckDelegation(l Limits, delegated, v1 []string) error {
	missing := MissingControllers(l, delegated)
	if len(missing) == 0 {
		return nil
	}
	e := &UndelegatedError{Missing: missing, Delegated: slices.Clone(delegated)}
	for _, lc := range limitControllers {
		if lc.set(l) && slices.Contains(missing, lc.controller) {
			e.Limits = append(e.Limits, lc.key)
		}
	}
	for _, c := range missing {
		if slices.Contains(v1, c) {
			e.V1 = append(e.V1, c)
		}
	}
	return e
}

// DelegatedControllers returns the cgroup controllers available to the
// user manager's units: the contents of cgroup.controllers in the
// manager's own cgroup.
func (m *Manager) DelegatedControllers(ctx context.Context) ([]string, error) {
	v, err := m.managerProperty(ctx, "ControlGroup")
	if err != nil {
		return nil, fmt.Errorf("reading the user manager's cgroup: %w", err)
	}
	cg, _ := v.Value().(string)
	if cg == "" {
		return nil, errors.New("reading the user manager's cgroup: the manager reports none")
	}
	return ReadControllers(cg)
}

// ReadControllers returns the controllers listed in cgroup.controllers of
// the cgroup v2 group at cgroup (a path below the cgroup2 root, as in
// /proc/PID/cgroup), found through this process's cgroup2 mount.
func ReadControllers(cgroup string) ([]string, error) {
	dir, err := CgroupDir(cgroup)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path.Join(dir, "cgroup.controllers"))
	if err != nil {
		return nil, fmt.Errorf("reading the controllers of cgroup %s: %w", cgroup, err)
	}
	return strings.Fields(string(b)), nil
}

// CgroupDir returns the directory of cgroup (a path below the cgroup2
// root) in this process's mount namespace.
func CgroupDir(cgroup string) (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", fmt.Errorf("finding the cgroup2 mount: %w", err)
	}
	defer f.Close()
	mounts, err := parseMountinfo(f)
	if err != nil {
		return "", fmt.Errorf("finding the cgroup2 mount: %w", err)
	}
	dir, ok := cgroupDir(mounts, cgroup)
	if !ok {
		return "", fmt.Errorf("finding cgroup %s: no cgroup2 mount shows it", cgroup)
	}
	return dir, nil
}

// V1Controllers returns the controllers that this host mounts on cgroup v1
// hierarchies (a "hybrid" or "legacy" layout), none on a pure v2 host.
func V1Controllers() ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("reading cgroup mounts: %w", err)
	}
	defer f.Close()
	mounts, err := parseMountinfo(f)
	if err != nil {
		return nil, fmt.Errorf("reading cgroup mounts: %w", err)
	}
	return v1Controllers(mounts), nil
}

// mount is one line of /proc/self/mountinfo, the fields we use.
type mount struct {
	root, point, fstype string
	superOpts           []string
}

// parseMountinfo reads proc(5) mountinfo lines:
//
//	36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
//
// Paths are unescaped from their \ooo octal form.
func parseMountinfo(r io.Reader) ([]mount, error) {
	var mounts []mount
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		sep := slices.Index(fields, "-")
		if len(fields) < 6 || sep < 6 || len(fields) < sep+3 {
			return nil, fmt.Errorf("malformed mountinfo line %q", sc.Text())
		}
		m := mount{
			root:   unescapeOctal(fields[3]),
			point:  unescapeOctal(fields[4]),
			fstype: fields[sep+1],
		}
		if len(fields) > sep+3 {
			m.superOpts = strings.Split(fields[sep+3], ",")
		}
		mounts = append(mounts, m)
	}
	return mounts, sc.Err()
}

// unescapeOctal undoes the kernel's \ooo escaping of spaces, tabs,
// newlines and backslashes in mountinfo paths.
func unescapeOctal(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// cgroupDir finds cgroup (a path below the cgroup2 root) under a visible
// cgroup2 mount whose root contains it; a mount of the whole hierarchy wins
// over a bind mount of a subtree. A mount is hidden when a later one sits
// on the same path or above it (a test environment mounts a fresh cgroup2
// over /sys/fs/cgroup, hiding the host's /sys/fs/cgroup/unified).
func cgroupDir(mounts []mount, cgroup string) (string, bool) {
	best, bestRoot := "", ""
	found := false
	for i, m := range mounts {
		if m.fstype != "cgroup2" || hidden(mounts, i) {
			continue
		}
		rel, ok := below(m.root, cgroup)
		if !ok {
			continue
		}
		if !found || len(m.root) < len(bestRoot) {
			best, bestRoot, found = path.Join(m.point, rel), m.root, true
		}
	}
	return best, found
}

// hidden reports whether a mount after mounts[i] covers its mount point.
func hidden(mounts []mount, i int) bool {
	for _, later := range mounts[i+1:] {
		if _, ok := below(later.point, mounts[i].point); ok {
			return true
		}
	}
	return false
}

// below returns p relative to root when p is root or inside it.
func below(root, p string) (string, bool) {
	root, p = path.Clean("/"+root), path.Clean("/"+p)
	if root == "/" {
		return p, true
	}
	if p == root {
		return "/", true
	}
	if rest, ok := strings.CutPrefix(p, root+"/"); ok {
		return "/" + rest, true
	}
	return "", false
}

// v1Controllers lists the controllers named in the super options of
// cgroup (v1) mounts, in mount order, without duplicates.
func v1Controllers(mounts []mount) []string {
	known := []string{"cpu", "cpuacct", "cpuset", "memory", "devices", "freezer", "net_cls", "blkio", "perf_event", "net_prio", "hugetlb", "pids", "rdma", "misc"}
	var out []string
	for _, m := range mounts {
		if m.fstype != "cgroup" {
			continue
		}
		for _, o := range m.superOpts {
			if slices.Contains(known, o) && !slices.Contains(out, o) {
				out = append(out, o)
			}
		}
	}
	return out
}

// unifiedCgroup returns the cgroup v2 path from the contents of a
// /proc/PID/cgroup file: the "0::" line.
func unifiedCgroup(procCgroup string) (string, bool) {
	for line := range strings.Lines(procCgroup) {
		if p, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), "0::"); ok {
			return p, true
		}
	}
	return "", false
}

// ProcCgroup returns the cgroup v2 path of process pid, as in its
// /proc/PID/cgroup "0::" line.
func ProcCgroup(pid int) (string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return "", fmt.Errorf("reading the cgroup of pid %d: %w", pid, err)
	}
	p, ok := unifiedCgroup(string(b))
	if !ok {
		return "", fmt.Errorf("reading the cgroup of pid %d: no cgroup v2 entry", pid)
	}
	return p, nil
}
