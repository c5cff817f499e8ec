package jail

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// check is one named rule a Spec must satisfy.
type check struct {
	name string
	fn   func(Spec) error
}

// checks run in order; the first failure is reported with its name.
var checks = []check{
	{"command", checkCommand},
	{"absolute-paths", checkAbsPaths},
	{"mount-fields", checkMountFields},
	{"env", checkEnv},
	{"cwd", checkCwd},
	{"no-credential-mounted", checkForbidden},
	{"egress", checkEgress},
}

// Validate reports the first rule the Spec breaks.
func Validate(s Spec) error {
	for _, c := range checks {
		if err := c.fn(s); err != nil {
			var ce *CredentialError
			if errors.As(err, &ce) {
				return err // already says what was refused and why
			}
			return fmt.Errorf("invalid jail spec (%s): %w", c.name, err)
		}
	}
	return nil
}

func checkCommand(s Spec) error {
	if len(s.Command) == 0 || s.Command[0] == "" {
		return errors.New("no command to run")
	}
	return nil
}

func checkAbsPaths(s Spec) error {
	for i, m := range s.Mounts {
		if !filepath.IsAbs(m.Dst) {
			return fmt.Errorf("mount %d (%s): destination %q is not absolute", i, m.Kind, m.Dst)
		}
		switch m.Kind {
		case Bind, ROBind, DevBind, Overlay:
			if !filepath.IsAbs(m.Src) {
				return fmt.Errorf("mount %d (%s %s): source %q is not absolute", i, m.Kind, m.Dst, m.Src)
			}
		}
		for _, h := range m.Holes {
			if !filepath.IsAbs(h) || !within(h, m.Dst) {
				return fmt.Errorf("mount %d (seal %s): hole %q is not an absolute path inside it", i, m.Dst, h)
			}
		}
	}
	return nil
}

func checkMountFields(s Spec) error {
	for i, m := range s.Mounts {
		if m.Kind.String() == "invalid" {
			return fmt.Errorf("mount %d (%s): unknown kind %d", i, m.Dst, int(m.Kind))
		}
		if m.Kind == FileFromFD && m.FD < 0 {
			return fmt.Errorf("mount %d (file-from-fd %s): negative descriptor", i, m.Dst)
		}
		if m.Kind == Symlink && m.Src == "" {
			return fmt.Errorf("mount %d (symlink %s): no target", i, m.Dst)
		}
		if m.Kind != Seal && len(m.Holes) > 0 {
			return fmt.Errorf("mount %d (%s %s): only a seal has holes", i, m.Kind, m.Dst)
		}
	}
	return nil
}

func checkEnv(s Spec) error {
	for _, kv := range s.Env {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return fmt.Errorf("environment entry %q is not KEY=VALUE", kv)
		}
	}
	return nil
}

func checkCwd(s Spec) error {
	if s.Cwd != "" && !filepath.IsAbs(s.Cwd) {
		return fmt.Errorf("working directory %q is not absolute", s.Cwd)
	}
	return nil
}

// within reports whether p is dir or below it.
func within(p, dir string) bool {
	p, dir = filepath.Clean(p), filepath.Clean(dir)
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}
