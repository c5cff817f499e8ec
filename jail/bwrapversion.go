package jail

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/aisan-dev/aisan/jail/shared/atomicfile"
	"github.com/aisan-dev/aisan/jail/shared/regfile"
	"github.com/aisan-dev/aisan/jail/shared/rundir"

	"golang.org/x/sys/unix"
)

// A tool's version is cached in aisan's run directory ([RunDir],
// read-only in every jail) as "<name>-version", keyed by the binary's
// identity: asking costs a process start on every launch and every
// 'aisan version', and the answer changes only when the binary is
// replaced.
const versionFileSuffix = "-version"

// bwrapVersionFile is bwrap's cache file.
const bwrapVersionFile = "bwrap" + versionFileSuffix

// cachedBwrapVersion is bwrap's version, from the cache when it names
// this very binary, else asked and cached. The zero version means bwrap
// would not say.
func cachedBwrapVersion(bwrap, runDir string) [3]int {
	line, err := ToolVersion(bwrap, runDir)
	if err != nil {
		return [3]int{}
	}
	v, _ := parseBwrapVersion(line)
	return v
}

// ToolVersion is the first line bin prints for --version, from the cache
// in runDir (see [RunDir]) when the cache names this very binary (path,
// device, inode, size, mtime), else asked and cached. runDir "" asks
// every time; the cache is written only into a directory of this user's
// that exists, never followed through a symlink.
func ToolVersion(bin, runDir string) (string, error) {
	var st unix.Stat_t
	if unix.Stat(bin, &st) != nil || runDir == "" {
		return askVersion(bin)
	}
	key := fmt.Sprintf("%s %d %d %d %d", bin, st.Dev, st.Ino, st.Size, st.Mtim.Nano())
	file := filepath.Join(runDir, filepath.Base(bin)+versionFileSuffix)
	if data, err := regfile.Read(file, 4<<10); err == nil {
		if k, v, ok := strings.Cut(strings.TrimSuffix(string(data), "\n"), "\n"); ok && k == key && v != "" {
			return v, nil
		}
	}
	line, err := askVersion(bin)
	if err != nil {
		return "", err
	}
	if rundir.OwnDir(runDir) {
		_ = atomicfile.Write(file, []byte(key+"\n"+line+"\n"), atomicfile.Options{Mode: 0o600})
	}
	return line, nil
}

// askVersion runs bin --version and returns its first non-empty line.
func askVersion(bin string) (string, error) {
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("asking %s for its version: %w", bin, err)
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	if line = strings.TrimSpace(line); line == "" {
		return "", fmt.Errorf("%s --version printed nothing", bin)
	}
	return line, nil
}

// parseBwrapVersion finds the first MAJOR.MINOR[.PATCH] in bwrap's
// answer ("bubblewrap 0.8.0"), as the pattern (\d+)\.(\d+)(?:\.(\d+))?
// would (FuzzParseBwrapVersion holds the two together): every launch
// reads it, and compiling the pattern took about 0.1 ms of each.
func parseBwrapVersion(s string) ([3]int, error) {
	for i := 0; i < len(s); i++ {
		if v, ok := versionAt(s[i:]); ok {
			return v, nil
		}
	}
	return [3]int{}, fmt.Errorf("no version in bwrap's answer %q", strings.TrimSpace(s))
}

// versionAt reads MAJOR.MINOR[.PATCH] at the start of s.
func versionAt(s string) (v [3]int, ok bool) {
	number := func() (int, bool) {
		n := 0
		for n < len(s) && '0' <= s[n] && s[n] <= '9' {
			n++
		}
		x, _ := strconv.Atoi(s[:n])
		s = s[n:]
		return x, n > 0
	}
	if v[0], ok = number(); !ok || !strings.HasPrefix(s, ".") {
		return v, false
	}
	s = s[1:]
	if v[1], ok = number(); !ok {
		return v, false
	}
	if strings.HasPrefix(s, ".") {
		s = s[1:]
		v[2], _ = number() // none: the optional part is not there
	}
	return v, true
}
