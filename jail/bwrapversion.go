package jail

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/aisan-dev/aisan/jail/shared/atomicfile"
	"github.com/aisan-dev/aisan/jail/shared/regfile"

	"golang.org/x/sys/unix"
)

// bwrapVersionFile caches bwrap's version in aisan's runtime directory
// (read-only in every jail), keyed by the binary's identity: asking costs
// a process start on every launch, and the answer changes only when bwrap
// is replaced.
const bwrapVersionFile = "bwrap-version"

// cachedBwrapVersion is bwrap's version, from the cache when it names
// this very binary (device, inode, size, mtime), else asked and cached.
// runtimeDir "" (no runtime directory) asks every time. The zero version
// means bwrap would not say.
func cachedBwrapVersion(bwrap, runtimeDir string) [3]int {
	var st unix.Stat_t
	if unix.Stat(bwrap, &st) != nil || runtimeDir == "" {
		v, _ := bwrapVersion(bwrap)
		return v
	}
	key := fmt.Sprintf("%s %d %d %d %d", bwrap, st.Dev, st.Ino, st.Size, st.Mtim.Nano())
	dir := filepath.Join(runtimeDir, "aisan")
	if data, err := regfile.Read(filepath.Join(dir, bwrapVersionFile), 4<<10); err == nil {
		if k, v, ok := strings.Cut(strings.TrimSuffix(string(data), "\n"), "\n"); ok && k == key {
			if ver, err := parseBwrapVersion(v); err == nil {
				return ver
			}
		}
	}
	ver, err := bwrapVersion(bwrap)
	if err != nil {
		return [3]int{}
	}
	if ownDir(dir) {
		// Only into a directory a launch made (nothing is created for
		// explain's sake); a cache that cannot be written is asked again
		// next time.
		_ = atomicfile.Write(filepath.Join(dir, bwrapVersionFile), []byte(key+"\n"+versionString(ver)+"\n"), atomicfile.Options{Mode: 0o600})
	}
	return ver
}

// bwrapVersion asks bwrap for its version.
func bwrapVersion(bwrap string) ([3]int, error) {
	out, err := exec.Command(bwrap, "--version").Output()
	if err != nil {
		return [3]int{}, fmt.Errorf("asking %s for its version: %w", bwrap, err)
	}
	return parseBwrapVersion(string(out))
}

var versionRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(\d+)\.(\d+)(?:\.(\d+))?`) })

func parseBwrapVersion(s string) ([3]int, error) {
	m := versionRE().FindStringSubmatch(s)
	if m == nil {
		return [3]int{}, fmt.Errorf("no version in bwrap's answer %q", strings.TrimSpace(s))
	}
	var v [3]int
	for i := range 3 {
		v[i], _ = strconv.Atoi(m[i+1])
	}
	return v, nil
}
