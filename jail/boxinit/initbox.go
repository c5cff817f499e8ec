package boxinit

import (
	"bytes"
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/aisan-dev/aisan/jail/relay"
	"github.com/aisan-dev/aisan/jail/shared/errwrap"
	"github.com/aisan-dev/aisan/jail/shared/regfile"
)

// maxEnvFile caps the init's environment file.
const maxEnvFile = 1 << 20

// keyctlJoinSessionKeyring is keyctl's KEYCTL_JOIN_SESSION_KEYRING, which
// the syscall package does not name.
const keyctlJoinSessionKeyring = 1

// prepareBox does, inside the jail and before the agent starts, what a
// strict box asks of its init: a session keyring of its own, the egress
// listeners (bound before it returns, so the agent never races them), and
// the environment file. It returns the agent's environment.
func prepareBox(p Payload) ([]string, error) {
	env := os.Environ()
	if p.NewSessionKeyring {
		// A NULL name makes the kernel create an anonymous keyring; a
		// name, even "", could join an existing one.
		if _, _, errno := syscall.Syscall(syscall.SYS_KEYCTL, keyctlJoinSessionKeyring, 0, 0); errno != 0 {
			return nil, errwrap.Wrap("joining a session keyring of the jail's own", errno)
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
		return nil, errors.New("the environment file " + path + " must be a regular file of mode 0600 (it is " + nr.Mode.String() + ")")
	}
	if err != nil {
		return nil, errwrap.Wrap("opening the environment file", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, errwrap.Wrap("reading the environment file "+path, err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, errors.New("the environment file " + path + " must be a regular file of mode 0600 (it is " + fi.Mode().String() + ")")
	}
	data, err := regfile.ReadAll(f, maxEnvFile)
	if errors.Is(err, regfile.ErrTooLarge) {
		return nil, errors.New("the environment file " + path + " is larger than " + strconv.Itoa(maxEnvFile) + " bytes")
	}
	if err != nil {
		return nil, errwrap.Wrap("reading the environment file "+path, err)
	}
	return envLines(path, data)
}

// envLines is the environment file's KEY=VALUE lines, empty ones
// skipped. It splits them as bufio.ScanLines does: at each newline,
// without a carriage return before it, the last line with or without a
// newline.
func envLines(path string, data []byte) ([]string, error) {
	var out []string
	for n := 1; len(data) > 0; n++ {
		line, rest, _ := bytes.Cut(data, []byte{'\n'})
		data = rest
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if len(line) == 0 {
			continue
		}
		if k, _, ok := bytes.Cut(line, []byte{'='}); !ok || len(k) == 0 {
			return nil, errors.New("the environment file " + path + ", line " + strconv.Itoa(n) + ", is not KEY=VALUE")
		}
		out = append(out, string(line))
	}
	return out, nil
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
