package strictbox

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/aisan-dev/aisan/jail/shared/regfile"
)

// The receipt's peak memory and CPU time are the box's cgroup's (its
// systemd scope, or its unit's), read from the cgroup's own counters.
// A cgroup goes with its last process, and that is when a receipt is
// finished, so the counters are sampled while the box runs: once a
// second, two small reads, off every request's path. Both counters only
// grow, so the last sample is the launch's figure but for its last
// second.

// sampleEvery spaces the samples.
const sampleEvery = time.Second

// scopeUse samples one box's cgroup until stopped.
type scopeUse struct {
	slot string
	stop chan struct{}
	done chan struct{}

	mu   sync.Mutex
	dir  string
	peak int64 // bytes
	cpu  int64 // microseconds
}

// watchScope starts sampling slotName's box, from prev's figures (a
// keeper goes on from the wrapper's).
func watchScope(slotName string, peak, cpu int64) *scopeUse {
	u := &scopeUse{slot: slotName, stop: make(chan struct{}), done: make(chan struct{}), peak: peak, cpu: cpu}
	go u.run()
	return u
}

func (u *scopeUse) run() {
	defer close(u.done)
	t := time.NewTicker(sampleEvery)
	defer t.Stop()
	for {
		u.sample()
		select {
		case <-u.stop:
			return
		case <-t.C:
		}
	}
}

// end stops sampling, after a last sample, and returns the figures.
func (u *scopeUse) end() (peak, cpu int64) {
	select {
	case <-u.stop:
	default:
		close(u.stop)
	}
	<-u.done
	u.sample()
	return u.figures()
}

func (u *scopeUse) figures() (peak, cpu int64) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.peak, u.cpu
}

func (u *scopeUse) sample() {
	u.mu.Lock()
	dir := u.dir
	u.mu.Unlock()
	if dir == "" {
		if dir = boxCgroup(u.slot); dir == "" {
			return
		}
	}
	peak, cpu := readCgroupUse(dir)
	u.mu.Lock()
	u.dir = dir
	u.peak, u.cpu = max(u.peak, peak), max(u.cpu, cpu)
	u.mu.Unlock()
}

// boxCgroup is the cgroup directory of slotName's box, as its init's
// /proc entry names it, once the init is known and still the one the
// record names (its PID namespace); "" until then.
func boxCgroup(slotName string) string {
	_, e, ok := slotRecord(slotName)
	if !ok || e.InitPID <= 0 || e.PidNSInode == 0 {
		return ""
	}
	pid := strconv.Itoa(e.InitPID)
	if ns, err := pidNSOf(pid); err != nil || ns != e.PidNSInode {
		return ""
	}
	data, err := regfile.Read("/proc/"+pid+"/cgroup", 64<<10)
	if err != nil {
		return ""
	}
	return cgroupDir(data)
}

// cgroupDir reads the unified hierarchy's line of /proc/PID/cgroup
// ("0::/user.slice/…") as a directory under /sys/fs/cgroup.
func cgroupDir(data []byte) string {
	for line := range bytes.Lines(data) {
		p, ok := strings.CutPrefix(strings.TrimSpace(string(line)), "0::")
		if !ok || !strings.HasPrefix(p, "/") || strings.Contains(p, "/../") || strings.HasSuffix(p, "/..") {
			continue
		}
		return filepath.Join(cgroup2Root(), p)
	}
	return ""
}

// cgroup2Root is where the unified hierarchy is mounted: /sys/fs/cgroup,
// or /sys/fs/cgroup/unified on a host that keeps the v1 controllers.
func cgroup2Root() string {
	var st unix.Statfs_t
	if unix.Statfs("/sys/fs/cgroup", &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC {
		return "/sys/fs/cgroup"
	}
	return "/sys/fs/cgroup/unified"
}

// readCgroupUse reads a cgroup's peak memory (memory.peak, kernels from
// 5.19; else memory.current; where the cgroup has no memory controller,
// the resident memory of its processes now) and CPU time (usage_usec of
// cpu.stat, which every cgroup has).
func readCgroupUse(dir string) (peak, cpu int64) {
	peak = -1
	for _, f := range []string{"memory.peak", "memory.current"} {
		if b, err := os.ReadFile(filepath.Join(dir, f)); err == nil {
			if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil {
				peak = n
				break
			}
		}
	}
	if peak < 0 {
		peak = residentOf(dir)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "cpu.stat")); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "usage_usec "); ok {
				cpu, _ = strconv.ParseInt(v, 10, 64)
			}
		}
	}
	return peak, cpu
}

// pidNSOf is the PID namespace of process pid.
func pidNSOf(pid string) (uint64, error) {
	var st unix.Stat_t
	if err := unix.Stat("/proc/"+pid+"/ns/pid", &st); err != nil {
		return 0, err
	}
	return st.Ino, nil
}

// residentOf is the resident memory of the processes in cgroup dir and
// its children, from /proc/PID/statm.
func residentOf(dir string) int64 {
	var sum int64
	page := int64(os.Getpagesize())
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "cgroup.procs" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		for _, pid := range strings.Fields(string(b)) {
			statm, err := os.ReadFile("/proc/" + pid + "/statm")
			if err != nil {
				continue
			}
			if f := strings.Fields(string(statm)); len(f) > 1 {
				if n, err := strconv.ParseInt(f[1], 10, 64); err == nil {
					sum += n * page
				}
			}
		}
		return nil
	})
	return sum
}
