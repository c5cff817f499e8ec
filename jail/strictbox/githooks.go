package strictbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/aisan-dev/aisan/jail/strictbox/gitpin"
	"github.com/aisan-dev/aisan/jail/strictbox/projectrun"
)

// hookLoads is what the hooks in dir, a directory host git runs hooks
// from (jail/gitpin's HookDirs), run besides themselves: each is read as
// a program git starts in the repository's root. The hooks are the
// user's, held with their directory when it is the box's to write, but
// the scripts, makefiles and packages they run lie in the repository,
// and the next commit, merge, checkout or push runs them with no
// question. A directory inside .husky is husky's runner, which runs the
// scripts in .husky that huskyLoads reads.
func hookLoads(dir, repo, home string) []gitpin.Steer {
	if slices.Contains(strings.Split(dir, string(filepath.Separator)), ".husky") {
		return nil
	}
	return hooksIn(dir, repo, home, "git", func(p string) []string { return []string{p} })
}

// huskyLoads is what the hook scripts in .husky (dir) run: husky's
// runner in .husky/_, where core.hooksPath points, runs each with sh in
// the repository's root as git runs it.
func huskyLoads(dir, home string) []gitpin.Steer {
	if st, err := os.Lstat(dir); err != nil || !st.IsDir() {
		return nil
	}
	return hooksIn(dir, filepath.Dir(dir), home, "husky", func(p string) []string { return []string{"sh", "-e", p} })
}

// hooksIn is what the hooks of dir, by git's hook names, run when who
// starts each (argv gives its command) in repo.
func hooksIn(dir, repo, home, who string, argv func(hook string) []string) []gitpin.Steer {
	pr := hostProject(home)
	var out []gitpin.Steer
	for _, name := range projectrun.GitHooks {
		p := filepath.Join(dir, name)
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		why := fmt.Sprintf("%s: a file the %s hook %s runs, with no question on the next commit, merge, checkout or push", who, name, p)
		out = append(out, namedSteers(projectrun.Program(p, argv(p), repo, repo, pr), why)...)
	}
	return out
}
