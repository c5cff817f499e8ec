package strictbox

import (
	"os"
	"path/filepath"
	"slices"
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

// yarnLoads reads a Yarn settings file found at launch for the files
// every yarn command in its directory and below runs: .yarnrc.yml's
// yarnPath (the release that runs as yarn itself, for Yarn 1 as for
// later ones) and the plugins it loads, or .yarnrc's yarn-path (Yarn 1).
// A box that rewrote the committed release (.yarn/releases/…) would act
// on the host at the user's next `yarn --version`. Beside what the file
// names, the directories Yarn keeps releases and plugins in are held
// whole when they exist: a setting written in YAML this reader does not
// follow still names a file there. One that is not a regular file is not
// read: its row protects it.
func yarnLoads(p string) []gitpin.Steer {
	b, err := regfile.Read(p, maxEnvrc)
	if err != nil {
		return nil
	}
	why := "Yarn: a file " + p + " makes every yarn command there run"
	var files []string
	if filepath.Base(p) == ".yarnrc" {
		files = yarnClassicPath(p, b)
	} else {
		files = yarnBerryPaths(p, b)
	}
	out := regularSteers(files, why)
	for _, d := range []string{".yarn/releases", ".yarn/plugins"} {
		d = filepath.Join(filepath.Dir(p), d)
		if st, err := os.Lstat(d); err == nil && st.IsDir() {
			out = append(out, gitpin.Steer{Path: d, Dir: true, Why: why + " (where its releases and plugins are kept)"})
		}
	}
	return out
}

// yarnBerryPaths are the yarnPath and the plugins' paths of the
// .yarnrc.yml at path, whose text is data, absolute (a relative one is
// the file's directory's). It reads the block form Yarn writes
// ("yarnPath: P", "plugins:" then "  - path: P" or "  - P" items), by
// lines: a YAML library would cost every start of aisan what the few
// strict launches in a Yarn project need, and the directories Yarn
// keeps them in are held whole besides (see yarnLoads).
func yarnBerryPaths(path string, data []byte) []string {
	var ps []string
	inPlugins := false
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimRight(line, " \t\r")
		if t := strings.TrimSpace(line); t == "" || t[0] == '#' {
			continue
		}
		top := line[0] != ' ' && line[0] != '\t' && line[0] != '-'
		if top {
			key, val, _ := strings.Cut(line, ":")
			inPlugins = key == "plugins"
			if key == "yarnPath" {
				ps = append(ps, yamlScalar(val))
			}
			continue
		}
		if !inPlugins {
			continue
		}
		item := strings.TrimSpace(line)
		if rest, ok := strings.CutPrefix(item, "-"); ok {
			item = strings.TrimSpace(rest)
			if k, v, ok := strings.Cut(item, ":"); ok && strings.TrimSpace(k) == "path" {
				ps = append(ps, yamlScalar(v))
			} else if !ok {
				ps = append(ps, yamlScalar(item))
			}
			continue
		}
		if k, v, ok := strings.Cut(item, ":"); ok && strings.TrimSpace(k) == "path" {
			ps = append(ps, yamlScalar(v))
		}
	}
	return absUnder(filepath.Dir(path), ps)
}

// yamlScalar is a plain or quoted YAML scalar's text, less a comment
// after it.
func yamlScalar(v string) string {
	v = strings.TrimSpace(v)
	if len(v) > 1 && (v[0] == '"' || v[0] == '\'') {
		if i := strings.IndexByte(v[1:], v[0]); i >= 0 {
			return v[1 : i+1]
		}
		return ""
	}
	if i := strings.Index(v, " #"); i >= 0 {
		v = v[:i]
	}
	return strings.TrimSpace(v)
}

// yarnClassicPath is the yarn-path of the .yarnrc at path (Yarn 1's
// format: a key and a value on each line, either may be quoted).
func yarnClassicPath(path string, data []byte) []string {
	var ps []string
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		key, val, ok := strings.Cut(line, " ")
		if !ok || strings.Trim(key, `"`) != "yarn-path" {
			continue
		}
		ps = append(ps, strings.Trim(strings.TrimSpace(val), `"'`))
	}
	return absUnder(filepath.Dir(path), ps)
}

// absUnder makes each non-empty p absolute (from dir) and clean, each
// once.
func absUnder(dir string, ps []string) []string {
	var out []string
	for _, p := range ps {
		if p == "" {
			continue
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if p = filepath.Clean(p); !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// venvLoads is the bin directory of the virtual environment whose
// pyvenv.cfg is p: the python an editor's Python extension starts on its
// own when the folder opens (and so every .pth file the box could plant
// runs), and the activate scripts the user's shell sources. It is held
// whole; a bin that is a link, or none, is left to its own rows.
func venvLoads(p string) []gitpin.Steer {
	if st, err := os.Lstat(p); err != nil || !st.Mode().IsRegular() {
		return nil
	}
	bin := filepath.Join(filepath.Dir(p), "bin")
	if st, err := os.Lstat(bin); err != nil || !st.IsDir() {
		return nil
	}
	return []gitpin.Steer{{Path: bin, Dir: true, Why: "Python: the virtual environment " + filepath.Dir(p) + "'s commands, its python and activate scripts"}}
}
