package tests

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

var updateScripts = flag.Bool("update", false, "rewrite testscript files with the output they got")

// TestScripts runs the CLI scripts in testdata/script. The aisan under test
// is on PATH; HOME and AISAN_HOME are private to each script. Conditions:
// [jail] holds when an unprivileged bwrap jail works here.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		UpdateScripts:       *updateScripts,
		Setup: func(env *testscript.Env) error {
			bin := filepath.Dir(aisanBin)
			env.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
			env.Setenv("HOME", env.WorkDir)
			env.Setenv("AISAN_HOME", filepath.Join(env.WorkDir, ".aisan"))
			for _, k := range []string{"XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS", "AISAN_BIN", "USER", "LOGNAME"} {
				if v := os.Getenv(k); v != "" {
					env.Setenv(k, v)
				}
			}
			return nil
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "jail":
				return probeJail() == nil, nil
			case "usermanager":
				return probeUserManager() == nil, nil
			}
			return false, nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// unwork replaces $WORK in a file with the literal "$WORK", and
			// the directory of the aisan under test with "$BIN", so outputs
			// naming either can be compared with cmp.
			"unwork": func(ts *testscript.TestScript, neg bool, args []string) {
				bin, err := filepath.EvalSymlinks(filepath.Dir(aisanBin))
				ts.Check(err)
				for _, f := range args {
					p := ts.MkAbs(f)
					b, err := os.ReadFile(p)
					ts.Check(err)
					s := strings.ReplaceAll(string(b), ts.Getenv("WORK"), "$WORK")
					ts.Check(os.WriteFile(p, []byte(strings.ReplaceAll(s, bin+"/", "$BIN/")), 0o644))
				}
			},
		},
	})
}
