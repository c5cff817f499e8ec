package strictbox

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/aisan-dev/aisan/jail/shared/regfile"
	"github.com/aisan-dev/aisan/jail/strictbox/gitpin"

	"github.com/pelletier/go-toml/v2"
)

// toolVersionsLoads reads a .tool-versions found at launch for the
// directories its path: versions name: asdf and mise run a tool from
// such a directory, with nothing to install and no question, for every
// command in the file's directory and below. The file's row protects it;
// a box that rewrote the tool in the directory it names would act on the
// host at the user's next command there. One that is not a regular file
// is not read: its row protects it all the same.
func toolVersionsLoads(p string) []gitpin.Steer {
	b, err := regfile.Read(p, maxEnvrc)
	if err != nil {
		return nil
	}
	home, _ := os.UserHomeDir()
	var out []gitpin.Steer
	for _, d := range toolVersionPaths(p, b, home) {
		out = append(out, gitpin.Steer{Path: d, Dir: true, Why: "asdf, mise: the directory a path: version of " + p + " runs its tool from"})
	}
	return out
}

// toolVersionPaths are the directories the .tool-versions at path, whose
// text is data, names as path: versions ("nodejs path:~/src/node 20.1.0
// system"), absolute and clean, each once. A relative one is taken from
// the file's directory, ~ from home ("" for none: skipped).
func toolVersionPaths(path string, data []byte, home string) []string {
	dir := filepath.Dir(path)
	var out []string
	seen := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		line, _, _ = strings.Cut(line, "#")
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		for _, v := range fields[1:] {
			p, ok := strings.CutPrefix(v, "path:")
			if !ok || p == "" {
				continue
			}
			switch {
			case p == "~" || strings.HasPrefix(p, "~/"):
				if home == "" {
					continue
				}
				p = filepath.Join(home, p[1:])
			case !filepath.IsAbs(p):
				p = filepath.Join(dir, p)
			}
			p = filepath.Clean(p)
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out
}

// rustToolchainLoads reads a rust-toolchain.toml (or rust-toolchain,
// its older name, in TOML) found at launch for its [toolchain] path:
// rustup's proxies (cargo, rustc, rustfmt, …) then run that
// directory's binaries for every command at or below the file, with no
// question (rustup 1.29 ran a path toolchain's cargo for `cargo
// --version`). rustup takes only an absolute path. A plain channel name
// names nothing here.
func rustToolchainLoads(p string) []gitpin.Steer {
	b, err := regfile.Read(p, maxEnvrc)
	if err != nil {
		return nil
	}
	d := rustToolchainPath(b)
	if d == "" {
		return nil
	}
	return []gitpin.Steer{{Path: d, Dir: true, Why: "rustup: the toolchain directory " + p + " runs cargo and rustc from"}}
}

// rustToolchainPath is the absolute, clean [toolchain] path of a
// toolchain file's text; "" for none, a relative one, or text that is
// not TOML (a legacy file holding a channel name).
func rustToolchainPath(data []byte) string {
	var f struct {
		Toolchain struct {
			Path string `toml:"path"`
		} `toml:"toolchain"`
	}
	if toml.Unmarshal(data, &f) != nil || !filepath.IsAbs(f.Toolchain.Path) {
		return ""
	}
	return filepath.Clean(f.Toolchain.Path)
}
