package boxinit

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/aisan-dev/aisan/jail/relay"
	"github.com/aisan-dev/aisan/jail/shared/regfile"
	"golang.org/x/sys/unix"
)

// maxEnvFile caps the init's environment file.
const maxEnvFile = 1 << 20

// prepareBox does, inside the jail and before the agent starts, what a
// strict box asks of its init: a session keyring of its own, the egress
// listeners (bound before it returns, so the agent never races them), and
// the environment file. It returns the agent's environment.
func prepareBox(p Payload) ([]string, error) {
	env := os.Environ()
	if p.NewSessionKeyring {
		// A NULL name makes the kernel create an anonymous keyring; a
		// name, even "", could join an existing one.
		if _, _, errno := unix.Syscall(unix.SYS_KEYCTL, unix.KEYCTL_JOIN_SESSION_KEYRING, 0, 0); errno != 0 {
			return nil, fmt.Errorf("joining a session keyring of the jail's own: %w", errno)
		}
	}
	for _, r := range p.Relays {
		l, err := relay.Listen(r.Port, r.Socket)
		if err != nil {
			return nil, err
		}
		l.Pass = r.Pass
		// Served for the init's whole life: it ends with the jail.
		l.Serve()
	}
	if p.EnvFile != "" {
		extra, err := ReadEnvFile(p.EnvFile)
		if err != nil {
			return nil, err
		}
		env = MergeEnv(env, extra)
	}
	return env, nil
}

// ReadEnvFile reads KEY=VALUE lines from a file the host wrote for this
// jail. It must be a regular file that only its owner can read; it is
// opened without following a symlink and read up to a cap.
func ReadEnvFile(path string) ([]string, error) {
	f, err := regfile.Open(path)
	var nr *regfile.NotRegularError
	if errors.As(err, &nr) {
		return nil, fmt.Errorf("the environment file %s must be a regular file of mode 0600 (it is %v)", path, nr.Mode)
	}
	if err != nil {
		return nil, fmt.Errorf("opening the environment file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("reading the environment file %s: %w", path, err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("the environment file %s must be a regular file of mode 0600 (it is %v)", path, fi.Mode())
	}
	data, err := regfile.ReadAll(f, maxEnvFile)
	if errors.Is(err, regfile.ErrTooLarge) {
		return nil, fmt.Errorf("the environment file %s is larger than %d bytes", path, maxEnvFile)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the environment file %s: %w", path, err)
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), maxEnvFile)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" {
			continue
		}
		if k, _, ok := strings.Cut(line, "="); !ok || k == "" {
			return nil, fmt.Errorf("the environment file %s, line %d, is not KEY=VALUE", path, n)
		}
		out = append(out, line)
	}
	return out, sc.Err()
}

// MergeEnv overlays KEY=VALUE lists, later lists winning, and returns the
// result sorted by key so the compiled argv is deterministic.
func MergeEnv(lists ...[]string) []string {
	var out []string
	index := map[string]int{}
	for _, l := range lists {
		for _, kv := range l {
			k, _, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				continue
			}
			if i, seen := index[k]; seen {
				out[i] = kv
				continue
			}
			index[k] = len(out)
			out = append(out, kv)
		}
	}
	slices.SortFunc(out, func(a, b string) int {
		ka, _, _ := strings.Cut(a, "=")
		kb, _, _ := strings.Cut(b, "=")
		return strings.Compare(ka, kb)
	})
	return out
}
