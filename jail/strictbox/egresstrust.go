package strictbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/aisan-dev/aisan/egress/cred"
	"github.com/aisan-dev/aisan/egress/reapi"
	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/strictbox/trust"
	"github.com/aisan-dev/aisan/jail/strictbox/truststore"
)

// loadEgressFile reads the file of an egress backend (reapi=FILE,
// grpc:NAME=FILE) if no box can write where it lies or the user approved
// its content, and then the credential source it names if that lies where
// no box can write: see package trust. It runs in the launch before the
// box starts, and in a keeper again (which then finds the box's changes,
// if the box could make any, and stops short of serving).
func loadEgressFile(name string, generic bool, path string) (*reapi.Config, error) {
	store, err := truststore.Open()
	if err != nil {
		return nil, err
	}
	// The launch has recorded what its box is given by now.
	places, err := store.Places()
	if err != nil {
		return nil, err
	}
	f, err := trust.ReadFile(path, trust.MaxFile)
	if err != nil {
		return nil, fmt.Errorf("egress %s: %w", name, err)
	}
	if err := store.Check("egress file", f, places); err != nil {
		return nil, err
	}
	cfg, err := reapi.Parse(name, generic, path, f.Data)
	if err != nil {
		return nil, err
	}
	if err := checkCredentialSource(cfg, places); err != nil {
		return nil, err
	}
	return cfg, nil
}

// checkCredentialSource refuses a token_file, or a token_command whose
// program or any path among its arguments, that lies where a box can
// write: the host reads or runs it whenever a token is due, while the
// box lives. The command runs in / (see reapi.Config.Source), so a
// relative program path names nothing the file's author could mean.
func checkCredentialSource(c *reapi.Config, places trust.Places) error {
	what := func(s string) string { return fmt.Sprintf("%s in egress file %s", s, c.File) }
	if c.TokenFile != "" {
		f, err := locateMaybeMissing(c.TokenFile)
		if err != nil {
			return fmt.Errorf("%s: token_file: %w", c.File, err)
		}
		return trust.CheckSource(what("token_file"), f, places)
	}
	cmd, err := cred.NewCommand("token_command in "+c.File, c.TokenCommand)
	if err != nil {
		return err
	}
	prog := cmd.Argv[0]
	if !filepath.IsAbs(prog) && strings.Contains(prog, "/") {
		return jail.WithHints(fmt.Errorf("%s: token_command: the program %s is a relative path", c.File, trust.Printable(prog)), "name it by its absolute path, or by a name on PATH")
	}
	path, err := exec.LookPath(prog)
	if err != nil {
		return fmt.Errorf("%s: token_command: %w", c.File, err)
	}
	f, err := trust.Locate(path)
	if err != nil {
		return fmt.Errorf("%s: token_command: %w", c.File, err)
	}
	if err := trust.CheckSource(what("the token_command program"), f, places); err != nil {
		return err
	}
	for _, a := range cmd.Argv[1:] {
		// A path may also follow an option's "=".
		for _, p := range []string{a, a[strings.IndexByte(a, '=')+1:]} {
			if !filepath.IsAbs(p) {
				continue
			}
			f, err := trust.Locate(p)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return fmt.Errorf("%s: token_command: %w", c.File, err)
			}
			if err := trust.CheckSource(what("a token_command argument"), f, places); err != nil {
				return err
			}
		}
	}
	return nil
}

// locateMaybeMissing is trust.Locate for a file that may not exist yet:
// then it is where it will be made, in its directory.
func locateMaybeMissing(path string) (trust.File, error) {
	f, err := trust.Locate(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return f, err
	}
	dir, err := trust.Locate(filepath.Dir(path))
	if err != nil {
		return trust.File{}, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return trust.File{}, err
	}
	target := filepath.Join(dir.Target, filepath.Base(path))
	return trust.File{Path: abs, Target: target, Hops: append(dir.Hops, target)}, nil
}
