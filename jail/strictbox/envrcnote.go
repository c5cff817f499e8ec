package strictbox

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/agent"
	"github.com/aisan-dev/aisan/jail/shared/regfile"
	"github.com/aisan-dev/aisan/jail/strictbox/direnv"
)

// envrcNote names the variables the .envrc that direnv loads in cwd (the
// nearest one at or above it) exports and the box is not given: a box
// starts from none of the host's variables, and a build that needs one
// fails there for a reason the user does not see. passed are the box's
// NAME or NAME=VALUE entries (--env, bind specs); PATH is the box's own.
// Only names are said, never values. "" when there is nothing to say.
func envrcNote(cwd string, passed []string) string {
	path, script := nearestEnvrc(cwd)
	if script == nil {
		return ""
	}
	ex, err := direnv.Exports(path, script)
	if err != nil {
		// The launch says why it cannot protect what the file loads.
		return ""
	}
	given := map[string]bool{"PATH": true}
	for _, e := range passed {
		name, _, _ := strings.Cut(e, "=")
		given[name] = true
	}
	var missing []string
	for _, n := range ex.Names {
		if !given[n] {
			missing = append(missing, n)
		}
	}
	if len(missing) == 0 && !ex.Dotenv {
		return ""
	}
	const most = 6
	what := ""
	switch {
	case len(missing) > most:
		what = fmt.Sprintf("%s and %d more", strings.Join(missing[:most], ", "), len(missing)-most)
	default:
		what = strings.Join(missing, ", ")
	}
	if ex.Dotenv {
		if what != "" {
			what += ", and "
		}
		what += "what its dotenv file sets"
	}
	return fmt.Sprintf("%s exports %s, which the box does not get (it starts from none of your variables): pass one with --env NAME", path, what)
}

// nearestEnvrc is the .envrc direnv would load in cwd and its text, or
// nil when there is none or it is not a regular file.
func nearestEnvrc(cwd string) (string, []byte) {
	for d := filepath.Clean(cwd); ; d = filepath.Dir(d) {
		p := filepath.Join(d, ".envrc")
		if b, err := regfile.Read(p, maxEnvrc); err == nil {
			return p, b
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", nil
		}
		if d == filepath.Dir(d) {
			return "", nil
		}
	}
}

// agentRunNote says, for `aisan run --strict -- claude …` (or another
// agent run by name), that the box runs it as any other program: it gets
// no model endpoint, no login and none of the user's rules for it, which
// `aisan AGENT --strict` brings. "" for any other launch.
func agentRunNote(kind jail.Kind, command []string) string {
	if kind != jail.KindRun || len(command) == 0 {
		return ""
	}
	base := filepath.Base(command[0])
	for _, a := range agent.All {
		if a.Binary == base {
			return fmt.Sprintf("'aisan run --strict' runs %s as it runs any program: no model endpoint, no login and none of your %s rules come with it; 'aisan %s --strict -- ARGS' brings them", base, a.Name, a.Kind)
		}
	}
	return ""
}
