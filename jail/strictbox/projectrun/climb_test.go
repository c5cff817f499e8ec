package projectrun

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestClimbs: the literal specifiers a script loads relative to its own
// directory, and a note for a path built at run time that climbs.
func TestClimbs(t *testing.T) {
	for _, tt := range []struct {
		name, lang, text string
		loads            []string // lang:path
		notes            []string
	}{
		{"node require and import", "js", "const u = require('../lib/util')\nimport x from \"../lib/y.js\"\nimport '../side'\nexport * from './own'\nconst m = await import(`../dyn.mjs`)\nrequire('fs')\n",
			[]string{"js:/r/lib/util", "js:/r/dyn.mjs", "js:/r/lib/y.js", "js:/r/side", "js:/r/tools/own"}, nil},
		{"node built at run time", "js", "require(path.join(__dirname, '../lib'))\nimport(`../${name}.js`)\nrequire(x)\n",
			nil, []string{"require(path.join(__dirname, '../lib')", "import(`../${name}.js`)"}},
		{"python relative imports", "py", "from .. import a, b as c\nfrom ..pkg.mod import y\nfrom . import z\nfrom ...top import q\nfrom os import path\n",
			[]string{"py:/r/__init__", "py:/r/a", "py:/r/b", "py:/r/pkg/mod", "py:/r/tools/__init__", "py:/r/tools/z", "py:/top"}, nil},
		{"python sys.path", "py", "import sys, os\nsys.path.insert(0, os.path.join(os.path.dirname(__file__), '..'))\nsys.path.append('x')\n",
			nil, []string{"sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..'))"}},
		{"ruby", "rb", "require_relative '../x'\nrequire_relative(\"helper\")\nrequire 'json'\n$LOAD_PATH.unshift File.expand_path('../lib', __dir__)\nrequire_relative \"../#{n}\"\n",
			[]string{"rb:/r/x", "rb:/r/tools/helper"}, []string{"$LOAD_PATH.unshift File.expand_path('../lib', __dir__)", `require_relative "../#{n}"`}},
		{"php", "php", "<?php\ninclude __DIR__ . '/../x.php';\nrequire_once(dirname(__FILE__) . \"/../y.php\");\ninclude '../z.php';\nrequire $base . '/../w.php';\n",
			[]string{"php:/r/x.php", "php:/r/y.php"}, []string{"include '../z.php'", "require $base . '/../w.php'"}},
		{"perl", "pl", "use FindBin;\nuse lib \"$FindBin::Bin/../lib\";\nuse lib \"${FindBin::RealBin}/../vendor\";\nrequire \"$FindBin::Bin/../conf.pl\";\nuse lib '../other';\nuse strict;\n",
			[]string{"dir:/r/lib", "dir:/r/vendor", "pl:/r/conf.pl"}, []string{"use lib '../other'"}},
		{"not a loader", "", "require('../x')", nil, nil},
		{"a note says no control character", "js", "require('\x1b[2J' + \"../x\")", nil, []string{"require('?[2J' + \"../x\")"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			loads, notes := climbs(tt.lang, []byte(tt.text), "/r/tools")
			var got []string
			for _, l := range loads {
				got = append(got, l.lang+":"+l.path)
			}
			if d := cmp.Diff(tt.loads, got); d != "" {
				t.Errorf("loads (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.notes, notes); d != "" {
				t.Errorf("notes (-want +got):\n%s", d)
			}
		})
	}
}

// TestClimb: a held hook's script that loads code from above its own
// directory: each file it loads is held (and what that loads, in turn),
// not the directories they lie in; the project's own directory is said.
func TestClimb(t *testing.T) {
	project := files{
		"/r/tools/hook.js":           "require('../lib/util')\n",
		"/r/lib/util.js":             "module.exports = require('./deep')\n",
		"/r/lib/deep.js":             "require('../vendor/pkg')\n",
		"/r/vendor/pkg/package.json": `{"main":"m.js"}`,
		"/r/tools/root.js":           "require('..')\n",
		"/r/tools/dyn.js":            "require(`../lib/${x}`)\n",
		"/r/src/app/sub/main.py":     "from .. import helpers\nfrom ..core import db\n",
		"/r/src/app/core.py":         "x = 1\n",
		"/r/tools/x.rb":              "require_relative '../lib/r'\n",
		"/r/tools/x.php":             "<?php include __DIR__ . '/../lib/p.php';\n",
		"/r/bin/x.pl":                "#!/usr/bin/perl\nuse lib \"$FindBin::Bin/../perl5\";\n",
	}
	for _, tt := range []struct {
		name, cmd string
		dirs      []string
		files     []string
		note      string
	}{
		{"node, followed in turn", `node tools/hook.js`, []string{"/r/tools", "/r/vendor/pkg"},
			[]string{"/r/lib/util", "/r/lib/util.js", "/r/lib/deep.js", "/r/vendor/pkg/package.json"}, ""},
		{"node, the project's own directory", `node tools/root.js`, []string{"/r/tools"}, []string{"/r/index.js", "/r/package.json"}, "loads the project's own directory"},
		{"node, built at run time", `node tools/dyn.js`, []string{"/r/tools"}, nil, "tools/dyn.js loads a path it builds as it runs (require(`../lib/${x}`))"},
		{"python -m", `cd src && python3 -m app.sub.main`, []string{"/r/src", "/r/src/app/sub"}, []string{"/r/src/app/__init__.py", "/r/src/app/helpers.py", "/r/src/app/helpers/__init__.py", "/r/src/app/core.py"}, ""},
		{"ruby, php, perl", `ruby tools/x.rb; php tools/x.php; ./bin/x.pl`, []string{"/r/tools", "/r/bin", "/r/perl5"}, []string{"/r/lib/r.rb", "/r/lib/p.php"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n := ClaudeSettings("/r/.claude/settings.json", []byte(hook(tt.cmd)), Project{Read: project.read, Home: "/home/u"})
			if d := cmp.Diff(tt.dirs, n.Dirs); d != "" {
				t.Errorf("dirs (-want +got):\n%s", d)
			}
			for _, f := range tt.files {
				if !strings.Contains(" "+strings.Join(n.Files, " ")+" ", " "+f+" ") {
					t.Errorf("files lack %s: %q", f, n.Files)
				}
			}
			for _, f := range tt.files {
				if filepath.Ext(f) != ".json" && !strings.Contains(" "+strings.Join(n.Programs, " ")+" ", " "+f+" ") {
					t.Errorf("programs lack %s: %q", f, n.Programs)
				}
			}
			all := strings.Join(n.Notes, "\n")
			if tt.note == "" && all != "" || tt.note != "" && (len(n.Notes) != 1 || !strings.Contains(all, tt.note)) {
				t.Errorf("notes, want one with %q:\n%s", tt.note, all)
			}
		})
	}
}

// FuzzClimbs: whatever a box writes into a script, climbs returns
// absolute clean paths and never panics.
func FuzzClimbs(f *testing.F) {
	f.Add([]byte("require('../a')\nimport x from '../b'\nimport(`../${c}`)\n"))
	f.Add([]byte("from ...a.b import (c, d)\nsys.path.insert(0, '..')\n"))
	f.Add([]byte("require_relative '../x'\n<?php include __DIR__ . '/../y';\nuse lib \"$FindBin::Bin/../l\";\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, lang := range []string{"js", "py", "rb", "php", "pl"} {
			loads, _ := climbs(lang, data, "/r/d")
			for _, l := range loads {
				if !filepath.IsAbs(l.path) || filepath.Clean(l.path) != l.path {
					t.Fatalf("%s: %q is not absolute and clean", lang, l.path)
				}
				files, _ := suffixes(l)
				for _, p := range files {
					if !filepath.IsAbs(p) {
						t.Fatalf("%s: %q is not absolute", lang, p)
					}
				}
			}
		}
	})
}

// TestClimbBounded: a script whose every load loads as many again is
// read only so far, and says so.
func TestClimbBounded(t *testing.T) {
	var b strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&b, "require('./m%d/x')\n", i)
	}
	text := []byte(b.String())
	read := func(p string) []byte {
		if strings.HasSuffix(p, ".js") {
			return text
		}
		return nil
	}
	n := ClaudeSettings("/r/.claude/settings.json", []byte(hook("node t/h.js")), Project{Read: read})
	if !strings.Contains(strings.Join(n.Notes, "\n"), "load more files than are followed") {
		t.Errorf("notes: %q", n.Notes)
	}
}
